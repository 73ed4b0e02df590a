#include "run/task_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

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
      // torchrun / torchelastic
      "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
      "ROLE_NAME", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
      "MASTER_ADDR", "MASTER_PORT",
      // Slurm
      "SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID",
      "SLURM_NODEID", "SLURM_NTASKS", "SLURM_JOB_NODELIST", "SLURMD_NODENAME",
      "SLURM_RESTART_COUNT",
      // MPI launchers
      "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK",
      // Kubernetes (the downward API names in common use) and Ray
      "POD_NAME", "POD_NAMESPACE", "NODE_NAME", "JOB_COMPLETION_INDEX", "RAY_JOB_ID", "RAY_NODE_ID",
      // GPUs
      "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"};
  return kNames;
}

TaskIdentity DescribeTask(std::string host, const std::vector<std::string>& rank_env,
                          pid_t wrapper_pid, const EnvLookup& env) {
  TaskIdentity id;
  id.host = std::move(host);
  for (const std::string& name : RecordedEnvNames()) {
    if (const char* v = env(name.c_str())) id.env.emplace_back(name, v);
  }
  for (const std::string& name : rank_env) {
    if (auto r = NonNegativeInt(env(name.c_str()))) {
      id.rank = r;
      id.rank_source = name;
      break;
    }
  }
  id.local_rank = NonNegativeInt(env("LOCAL_RANK"));
  if (!id.local_rank) id.local_rank = NonNegativeInt(env("SLURM_LOCALID"));
  if (id.rank) {
    id.stem = "rank_" + std::to_string(*id.rank);
  } else if (auto task = NonNegativeInt(env("SLURM_PROCID"))) {
    id.stem = "task_" + std::to_string(*task);
  } else {
    id.stem = "pid_" + std::to_string(wrapper_pid);
  }
  return id;
}

std::string RenderTaskJson(const TaskRecord& r) {
  Object env;
  for (const auto& [k, v] : r.id.env) env.Str(k, v);
  Object o;
  o.Str("format", "denpex.run.task.v1").Str("host", r.id.host).OptInt("rank", r.id.rank);
  o.Str("rank_source", r.id.rank_source)
      .OptInt("local_rank", r.id.local_rank)
      .Str("stem", r.id.stem);
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
