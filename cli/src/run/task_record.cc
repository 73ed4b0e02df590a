#include "run/task_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <span>

#include "denpex/common/output_file.h"
#include "run/posix_io.h"

namespace denpex::cli::run {
namespace fs = std::filesystem;
namespace {

std::optional<std::int64_t> NonNegativeInt(const char* v) {
  if (v == nullptr || *v == '\0') return std::nullopt;
  std::int64_t n = 0;
  int digits = 0;
  for (const char* p = v; *p; ++p, ++digits) {
    if (*p < '0' || *p > '9' || digits >= 9) return std::nullopt;
    n = n * 10 + (*p - '0');
  }
  return n;
}

// Fields of one JSON object, rendered in insertion order. Values are already JSON.
class Object {
 public:
  Object& Add(std::string_view key, std::string value) {
    fields_.emplace_back(std::string(key), std::move(value));
    return *this;
  }
  Object& Str(std::string_view key, std::string_view v) { return Add(key, JsonString(v)); }
  Object& Int(std::string_view key, std::int64_t v) { return Add(key, std::to_string(v)); }
  Object& Bool(std::string_view key, bool v) { return Add(key, v ? "true" : "false"); }
  Object& OptInt(std::string_view key, const std::optional<std::int64_t>& v) {
    return Add(key, v ? std::to_string(*v) : "null");
  }

  std::string Render(int indent) const {
    if (fields_.empty()) return "{}";
    const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    std::string s = "{\n";
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      s += pad + JsonString(fields_[i].first) + ": " + fields_[i].second +
           (i + 1 < fields_.size() ? ",\n" : "\n");
    }
    return s + std::string(static_cast<std::size_t>(indent), ' ') + "}";
  }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

std::string ExitState(ExitInfo::Kind k) {
  switch (k) {
    case ExitInfo::Kind::kRunning:
      return "running";
    case ExitInfo::Kind::kExited:
      return "exited";
    case ExitInfo::Kind::kSignaled:
      return "signaled";
    case ExitInfo::Kind::kNotStarted:
      return "not_started";
  }
  return "unknown";
}

std::string RenderExit(const TaskRecord& r) {
  Object o;
  o.Str("state", ExitState(r.exit.kind)).Str("description", DescribeExit(r.exit));
  if (r.exit.kind == ExitInfo::Kind::kExited) o.Int("code", r.exit.code);
  if (r.exit.kind == ExitInfo::Kind::kSignaled) {
    o.Int("signal", r.exit.signal)
        .Str("signal_name", SignalName(r.exit.signal))
        .Bool("core_dumped", r.exit.core_dumped);
  }
  if (r.exit.kind != ExitInfo::Kind::kRunning) o.Int("wrapper_exit_code", ShellExitCode(r.exit));
  return o.Render(2);
}

std::string RenderSignals(const std::vector<SignalNote>& signals) {
  if (signals.empty()) return "[]";
  std::string s = "[";
  for (std::size_t i = 0; i < signals.size(); ++i) {
    const SignalNote& n = signals[i];
    s += (i ? ",\n    " : "\n    ") + Object()
                                          .Str("signal", SignalName(n.signal))
                                          .Int("number", n.signal)
                                          .Int("from_pid", n.sender)
                                          .Str("time", FormatStamp(n.time))
                                          .Bool("forwarded", n.forwarded)
                                          .Render(4);
  }
  return s + "\n  ]";
}

std::string RenderLog(const TaskRecord& r) {
  Object o;
  o.Str("file", r.log_file)
      .Str("errors_file", r.errors_file)
      .Int("max_bytes", static_cast<std::int64_t>(r.max_bytes));
  o.Int("lines", static_cast<std::int64_t>(r.log.lines))
      .Int("bytes", static_cast<std::int64_t>(r.log.bytes));
  o.Bool("capped", r.log.capped)
      .Int("omitted_lines", static_cast<std::int64_t>(r.log.omitted_lines));
  o.Int("omitted_bytes", static_cast<std::int64_t>(r.log.omitted_bytes));
  o.Int("error_lines", static_cast<std::int64_t>(r.errors.matched));
  o.Int("error_lines_kept", static_cast<std::int64_t>(r.errors.kept));
  o.Int("error_lines_dropped", static_cast<std::int64_t>(r.errors.dropped));
  o.Int("error_context_before", static_cast<std::int64_t>(r.context_before))
      .Int("error_context_after", static_cast<std::int64_t>(r.context_after));
  o.Int("error_context_lines", static_cast<std::int64_t>(r.errors.context_lines))
      .Int("error_context_dropped", static_cast<std::int64_t>(r.errors.context_dropped));
  if (!r.log_error.empty()) o.Str("write_error", r.log_error);
  return o.Render(2);
}

std::string RenderSide(const SideFile& f) {
  Object o;
  o.Str("status", f.status);
  if (!f.file.empty()) o.Str("file", f.file).Int("lines", static_cast<std::int64_t>(f.lines));
  return o.Render(2);
}

std::string RenderStrings(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + JsonString(v[i]);
  return s + "]";
}

}  // namespace

const std::vector<std::string>& RecordedEnvNames() {
  static const std::vector<std::string> kNames = {
      // torchrun / torchelastic (and Ray Train, Kubeflow's PyTorchJob: the same names)
      "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK",
      "ROLE_RANK", "ROLE_NAME", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
      "TORCHELASTIC_MAX_RESTARTS", "MASTER_ADDR", "MASTER_PORT",
      // Slurm
      "SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID",
      "SLURM_NODEID", "SLURM_NTASKS", "SLURM_JOB_NODELIST", "SLURMD_NODENAME",
      "SLURM_RESTART_COUNT",
      // MPI launchers: Open MPI, PMIx, MPICH / Intel MPI (Hydra), MVAPICH2
      "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_NODE_RANK",
      "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
      "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
      "MV2_COMM_WORLD_SIZE",
      // Kubernetes (the downward API names in common use; KubeRay's MY_POD_*)
      "POD_NAME", "MY_POD_NAME", "POD_NAMESPACE", "MY_POD_NAMESPACE", "POD_IP", "MY_POD_IP",
      "NODE_NAME", "MY_NODE_NAME", "KUBERNETES_NODE_NAME", "JOB_COMPLETION_INDEX",
      // Ray: the raylet's, the autoscaler's own instance, KubeRay's head address (recorded,
      // never used as this task's host)
      "RAY_JOB_ID", "RAY_RAYLET_PID", "RAY_NODE_ID", "RAY_CLOUD_INSTANCE_ID", "RAY_NODE_TYPE_NAME",
      "RAY_IP",
      // GPUs
      "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"};
  return kNames;
}

namespace {

// The first column entry, in the table's order, that holds a non-negative integer.
Sourced FirstOf(std::string_view LauncherVars::*column, const EnvLookup& env) {
  for (const LauncherVars& l : LauncherTable()) {
    const std::string_view name = l.*column;
    if (name.empty()) continue;
    if (auto v = NonNegativeInt(env(std::string(name).c_str())))
      return {.value = v, .source = std::string(name)};
  }
  return {};
}

std::string FirstSet(std::span<const std::string_view> names, const EnvLookup& env) {
  for (std::string_view n : names) {
    const char* v = env(std::string(n).c_str());
    if (v != nullptr && *v != '\0') return v;
  }
  return {};
}

// SLURMD_NODENAME when it is this machine (inherited from another node it would not be).
void ChooseHost(const TaskContext& c, const EnvLookup& env, TaskIdentity* id) {
  if (!c.host_flag.empty()) {
    id->host = c.host_flag;
    id->host_source = "--host";
    return;
  }
  const char* slurm = env("SLURMD_NODENAME");
  const std::string_view local = c.local_host;
  if (slurm != nullptr && *slurm != '\0' &&
      std::string_view(slurm).find('/') == std::string_view::npos) {
    const std::string_view s(slurm);
    if (local == s ||
        (local.size() > s.size() && local.substr(0, s.size()) == s && local[s.size()] == '.')) {
      id->host = s;
      id->host_source = "SLURMD_NODENAME";
      return;
    }
  }
  id->host = c.local_host;
  id->host_source = "hostname";
}

}  // namespace

TaskIdentity DescribeTask(const TaskContext& c, const EnvLookup& env) {
  TaskIdentity id;
  ChooseHost(c, env, &id);
  for (const std::string& name : RecordedEnvNames()) {
    if (const char* v = env(name.c_str())) id.env.emplace_back(name, v);
  }
  for (const LauncherVars& l : LauncherTable()) {
    const char* v = env(std::string(l.marker).c_str());
    if (v != nullptr &&
        std::find(id.launchers.begin(), id.launchers.end(), l.launcher) == id.launchers.end())
      id.launchers.emplace_back(l.launcher);
  }
  Sourced first;  // the first rank variable set, whatever the command is
  for (const std::string& name : c.rank_env) {
    if (auto r = NonNegativeInt(env(name.c_str()))) {
      first = {.value = r, .source = name};
      break;
    }
  }
  id.wraps_launcher = CommandIsLauncher(c.command);
  if (!id.wraps_launcher) id.rank = first;
  id.local_rank = FirstOf(&LauncherVars::local_rank, env);
  id.node_rank = FirstOf(&LauncherVars::node_rank, env);
  id.world_size = FirstOf(&LauncherVars::world_size, env);
  if (id.wraps_launcher) id.local_rank = id.world_size = {};  // the launcher's, not a rank's
  id.pod = FirstSet(PodNameVars(), env);
  id.node_name = FirstSet(NodeNameVars(), env);
  if (id.rank.value) {
    id.stem = "rank_" + std::to_string(*id.rank.value);
  } else if (id.wraps_launcher && first.value) {
    id.stem = "task_" + std::to_string(*first.value);
  } else if (auto task = NonNegativeInt(env("SLURM_PROCID"))) {
    id.stem = "task_" + std::to_string(*task);
  } else {
    id.stem = "pid_" + std::to_string(c.wrapper_pid);
  }
  return id;
}

std::string RenderTaskJson(const TaskRecord& r) {
  Object env;
  for (const auto& [k, v] : r.id.env) env.Str(k, v);
  Object o;
  o.Str("format", "denpex.run.task.v1").Str("host", r.id.host).Str("host_source", r.id.host_source);
  o.OptInt("rank", r.id.rank.value).Str("rank_source", r.id.rank.source);
  o.OptInt("local_rank", r.id.local_rank.value).Str("local_rank_source", r.id.local_rank.source);
  o.OptInt("node_rank", r.id.node_rank.value).Str("node_rank_source", r.id.node_rank.source);
  o.OptInt("world_size", r.id.world_size.value).Str("world_size_source", r.id.world_size.source);
  o.Add("launchers", RenderStrings(r.id.launchers)).Bool("wraps_launcher", r.id.wraps_launcher);
  o.Add("pod", r.id.pod.empty() ? "null" : JsonString(r.id.pod));
  o.Add("node_name", r.id.node_name.empty() ? "null" : JsonString(r.id.node_name));
  o.Str("stem", r.id.stem);
  o.Add("command", RenderStrings(r.command)).Str("cwd", r.cwd);
  o.Int("wrapper_pid", r.wrapper_pid).Int("pid", r.child_pid).Int("pgid", r.child_pgid);
  o.Str("start_time", FormatStamp(r.start))
      .Add("end_time", r.end ? JsonString(FormatStamp(r.end)) : "null");
  o.Add("exit", RenderExit(r));
  if (!r.start_error.empty()) o.Str("start_error", r.start_error);
  o.Add("signals_received", RenderSignals(r.signals));
  o.Add("env", env.Render(2)).Add("log", RenderLog(r));
  o.Add("kernel_log", RenderSide(r.kernel)).Add("nvidia_smi", RenderSide(r.nvidia_smi));
  return o.Render(0) + "\n";
}

Status WriteFileAtomically(const fs::path& path, std::string_view contents) {
  return WriteOutputFile(path, contents);
}

std::string JsonString(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    const std::size_t len = c >= 0xF0 && c <= 0xF4  ? 4
                            : c >= 0xE0 && c < 0xF0 ? 3
                            : c >= 0xC2 && c < 0xE0 ? 2
                                                    : 0;
    bool valid = len != 0 && i + len <= s.size();
    for (std::size_t k = 1; valid && k < len; ++k)
      valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (valid) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out + "\"";
}

}  // namespace denpex::cli::run
