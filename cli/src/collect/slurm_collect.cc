#include "collect/slurm_collect.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "denpex/common/output_file.h"
#include "run/system_info.h"
#include "run/wrapper.h"

namespace denpex::cli::collect {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

sigset_t CurrentMask() {
  sigset_t mask;
  sigemptyset(&mask);
  ::sigprocmask(SIG_BLOCK, nullptr, &mask);
  return mask;
}

run::ToolOutput Tool(const std::vector<std::string>& argv, seconds limit = seconds(60)) {
  return run::RunTool(argv, CurrentMask(), limit);
}

// The value of `key` (`StartTime=`) in a `Key=Value Key=Value` line, up to the next space.
std::string ValueOf(std::string_view line, std::string_view key) {
  for (std::size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at != 0 && line[at - 1] != ' ') continue;
    const std::string_view rest = line.substr(at + key.size());
    return std::string(rest.substr(0, rest.find_first_of(" \n")));
  }
  return {};
}

// `2026-12-04T11:38:31` in local time; nullopt for `Unknown`, `None` and the like.
std::optional<std::int64_t> LocalTime(const std::string& s) {
  std::tm tm{};
  const char* end = ::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(t);
}

// Slurm's host list (`sn[01-04,07]`) expanded by `scontrol show hostnames`.
std::vector<std::string> ExpandNodes(const std::string& list) {
  std::vector<std::string> nodes;
  if (list.empty() || list == "(null)" || list == "None") return nodes;
  const run::ToolOutput r = Tool({"scontrol", "show", "hostnames", list});
  if (r.status == "ok") {
    std::istringstream in(r.output);
    for (std::string n; std::getline(in, n);) {
      if (!n.empty()) nodes.push_back(n);
    }
  } else if (list.find_first_of("[,") == std::string::npos) {
    nodes.push_back(list);
  }
  return nodes;
}

// The job's nodes and times as the controller still knows them.
bool ScopeFromScontrol(const std::string& text, JobScope* scope) {
  const std::string nodes = ValueOf(text, "NodeList=");
  scope->nodes = ExpandNodes(nodes);
  scope->start = LocalTime(ValueOf(text, "StartTime="));
  scope->end = LocalTime(ValueOf(text, "EndTime="));
  if (ValueOf(text, "JobState=") == "RUNNING") scope->end.reset();  // EndTime is its limit
  return !scope->nodes.empty() && scope->start.has_value();
}

// `sacct -X -n -P -o Start,End,NodeList`: one line `start|end|nodes`.
bool ScopeFromSacct(const std::string& job_id, JobScope* scope) {
  const run::ToolOutput r =
      Tool({"sacct", "-j", job_id, "-X", "-n", "-P", "-o", "Start,End,NodeList"});
  if (r.status != "ok") return false;
  const std::string line = r.output.substr(0, r.output.find('\n'));
  const std::size_t a = line.find('|');
  const std::size_t b = a == std::string::npos ? a : line.find('|', a + 1);
  if (b == std::string::npos) return false;
  scope->start = LocalTime(line.substr(0, a));
  scope->end = LocalTime(line.substr(a + 1, b - a - 1));
  scope->nodes = ExpandNodes(line.substr(b + 1));
  return !scope->nodes.empty() && scope->start.has_value();
}

// The controller's own lines: its allocation line's NodeList, its first and last line's times.
bool ScopeFromControllerLog(const fs::path& log, JobScope* scope) {
  std::ifstream in(log);
  std::string nodes;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> ids = JobIdsNamed(line);
    if (std::find(ids.begin(), ids.end(), scope->job_id) == ids.end()) continue;
    const auto t = DaemonLineTime(line);
    if (t && !scope->start) scope->start = t;
    if (t) scope->end = t;
    if (nodes.empty()) nodes = ValueOf(line, "NodeList=");
  }
  scope->nodes = ExpandNodes(nodes);
  return !scope->nodes.empty() && scope->start.has_value();
}

// `scontrol show config`'s `Key = value` for the daemons' log files.
std::string ConfigValue(const std::string& config, std::string_view key) {
  std::istringstream in(config);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0 || line.size() <= key.size() || line[key.size()] != ' ') continue;
    const std::size_t eq = line.find("= ");
    if (eq != std::string::npos) return line.substr(eq + 2);
  }
  return {};
}

std::string ForNode(std::string path, const std::string& node) {
  for (const std::string token : {"%n", "%h"}) {
    for (std::size_t at = path.find(token); at != std::string::npos; at = path.find(token))
      path.replace(at, token.size(), node);
  }
  return path;
}

std::string CountText(const FilterCounts& c) {
  return std::to_string(c.job_lines) + " lines of the job, " + std::to_string(c.node_lines) +
         " of its nodes while it ran, " + std::to_string(c.other_job_lines) +
         " of other jobs left out, of " + std::to_string(c.lines);
}

Collected FilterInto(const fs::path& from, const fs::path& out_dir, const std::string& file,
                     std::string what, const JobScope& scope, const std::string& node) {
  Collected c{.what = std::move(what)};
  std::ifstream in(from);
  if (!in) {
    c.status = "not readable here: " + from.string() +
               " (copy it from where the daemon runs, or pass its path)";
    return c;
  }
  std::ostringstream kept;
  const FilterCounts counts = FilterDaemonLog(in, scope, node, kept);
  std::error_code ec;
  fs::create_directories((out_dir / file).parent_path(), ec);
  if (Status st = WriteOutputFile(out_dir / file, kept.str()); !st.ok()) {
    c.status = "failed: " + st.message();
    return c;
  }
  c.status = "ok";
  c.file = file;
  c.lines = counts.job_lines + counts.node_lines;
  c.detail = CountText(counts) + " (" + from.string() + ")";
  return c;
}

// The node's kernel log lines from `from` to `to` (local seconds), by `dmesg -T`.
Collected KernelWindow(const SlurmCollectOptions& o, const JobScope& scope,
                       const std::string& node) {
  Collected c{.what = "kernel log of " + node};
  const fs::path dir = o.out / node;
  if (fs::exists(dir / "kernel.log")) {
    c.status = "skipped: " + node + "/kernel.log from denpex run is there";
    return c;
  }
  std::vector<std::string> argv = {"dmesg", "-T"};
  if (o.kernel == KernelFrom::kNone) {
    c.status = "skipped: --kernel none";
    return c;
  }
  if (o.kernel == KernelFrom::kLocal) {
    if (run::HostName().substr(0, run::HostName().find('.')) != node) {
      c.status = "skipped: " + node + " is not this machine (--kernel srun reads it there)";
      return c;
    }
  } else {
    argv = {"srun",
            "--nodelist=" + node,
            "--nodes=1",
            "--ntasks=1",
            "--job-name=denpex-collect",
            "--quiet",
            "dmesg",
            "-T"};
  }
  const run::ToolOutput r = Tool(argv, seconds(120));
  if (r.status != "ok") {
    c.status = r.status + (r.output.empty() ? "" : ": " + r.output.substr(0, r.output.find('\n')));
    return c;
  }
  const std::int64_t from = *scope.start - o.kernel_margin_s;
  const std::int64_t to = scope.end ? *scope.end + o.kernel_margin_s
                                    : std::numeric_limits<std::int64_t>::max();  // still running
  std::string kept;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    const auto t = DmesgLineTime(line);
    if (t && *t >= from && *t <= to) {
      kept += line;
      kept += '\n';
      ++c.lines;
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (Status st = WriteOutputFile(dir / "dmesg.log", kept); !st.ok()) {
    c.status = "failed: " + st.message();
    return c;
  }
  c.status = "ok";
  c.file = node + "/dmesg.log";
  c.detail = "dmesg -T from " + std::to_string(o.kernel_margin_s) +
             " s before the job's start to as long after its end";
  return c;
}

// A tool's output as a record beside the logs, or why there is none.
Collected Record(const SlurmCollectOptions& o, std::string what, const std::string& file,
                 const std::vector<std::string>& argv, std::string* output) {
  Collected c{.what = std::move(what)};
  const run::ToolOutput r = Tool(argv);
  c.status = r.status;
  if (r.status != "ok") {
    const std::string said = r.output.substr(0, r.output.find('\n'));
    if (!said.empty()) c.status += ": " + said;
    return c;
  }
  if (Status st = WriteOutputFile(o.out / file, r.output); !st.ok()) {
    c.status = "failed: " + st.message();
    return c;
  }
  c.file = file;
  c.lines = static_cast<std::uint64_t>(std::count(r.output.begin(), r.output.end(), '\n'));
  if (output != nullptr) *output = r.output;
  return c;
}

}  // namespace

Result<SlurmCollectReport> CollectSlurmJob(const SlurmCollectOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec)
    return Status::IoError("cannot create " + o.out.string() + ": " + ec.message() +
                           "; choose a writable --out");
  // A step of this job, or a job's environment, must not make srun run inside it.
  for (const char* v : {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID"})
    ::unsetenv(v);
  SlurmCollectReport rep;
  rep.scope.job_id = o.job_id;
  const std::string stem = "slurm-job-" + o.job_id;

  std::string scontrol;
  rep.items.push_back(Record(o, "scontrol show job", stem + ".scontrol.txt",
                             {"scontrol", "show", "job", "-o", o.job_id}, &scontrol));
  rep.items.push_back(Record(o, "sacct", stem + ".sacct.txt",
                             {"sacct", "-j", o.job_id, "--long", "--parsable2"}, nullptr));

  std::string config;
  if (o.slurmctld_log.empty() || o.slurmd_log.empty()) {
    const run::ToolOutput r = Tool({"scontrol", "show", "config"});
    if (r.status == "ok") config = r.output;
  }
  const fs::path ctld =
      o.slurmctld_log.empty() ? fs::path(ConfigValue(config, "SlurmctldLogFile")) : o.slurmctld_log;
  const std::string slurmd =
      o.slurmd_log.empty() ? ConfigValue(config, "SlurmdLogFile") : o.slurmd_log.string();

  if (!scontrol.empty() && ScopeFromScontrol(scontrol, &rep.scope)) {
    rep.scope_source = "scontrol show job";
  } else if (ScopeFromSacct(o.job_id, &rep.scope)) {
    rep.scope_source = "sacct";
  } else if (!ctld.empty() && ScopeFromControllerLog(ctld, &rep.scope)) {
    rep.scope_source = ctld.string();
  } else {
    return Status::NotFound(
        "job " + o.job_id +
        ": neither scontrol (it forgets a job MinJobAge after its end), sacct nor the "
        "controller's log (" +
        (ctld.empty() ? std::string("SlurmctldLogFile unknown: pass --slurmctld-log")
                      : ctld.string()) +
        ") tells its nodes and start; check the id, or pass --slurmctld-log");
  }

  if (ctld.empty()) {
    rep.items.push_back({.what = "slurmctld.log",
                         .status = "not found: scontrol show config names no SlurmctldLogFile; "
                                   "pass --slurmctld-log"});
  } else {
    rep.items.push_back(FilterInto(ctld, o.out, "slurmctld.log", "slurmctld.log", rep.scope, ""));
  }
  const bool per_node = slurmd.find("%n") != std::string::npos ||
                        slurmd.find("%h") != std::string::npos || rep.scope.nodes.size() == 1;
  if (slurmd.empty()) {
    rep.items.push_back({.what = "slurmd.log",
                         .status = "not found: scontrol show config names no SlurmdLogFile; "
                                   "pass --slurmd-log"});
  } else if (per_node) {
    for (const std::string& node : rep.scope.nodes) {
      rep.items.push_back(FilterInto(ForNode(slurmd, node), o.out, node + "/slurmd.log",
                                     "slurmd.log of " + node, rep.scope, node));
    }
  } else {
    // One file for several nodes (a shared path without %n): its lines are the job's by id or
    // by naming one of its nodes.
    rep.items.push_back(FilterInto(slurmd, o.out, "slurmd.log", "slurmd.log", rep.scope, ""));
  }
  for (const std::string& node : rep.scope.nodes)
    rep.items.push_back(KernelWindow(o, rep.scope, node));
  return rep;
}

}  // namespace denpex::cli::collect
