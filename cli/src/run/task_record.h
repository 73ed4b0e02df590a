// What identifies a wrapped task (host, rank, the launcher's environment), the names of its
// files in the layout, and its machine-readable record `<stem>.task.json`
// (docs/run_wrapper.md "task.json").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "run/child.h"
#include "run/launcher_env.h"
#include "run/task_log.h"

namespace denpex::cli::run {

// The environment variables recorded in task.json when set (launcher and scheduler identity).
const std::vector<std::string>& RecordedEnvNames();

// Looks up an environment variable; nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// A value and the variable (or flag) it came from.
struct Sourced {
  std::optional<std::int64_t> value;
  std::string source;  // "" when unknown
};

struct TaskIdentity {
  std::string host;                    // the node directory's name
  std::string host_source;             // "--host", "SLURMD_NODENAME" or "hostname"
  Sourced rank;                        // global rank: the first variable of rank_env that holds one
  Sourced local_rank;                  // LauncherTable()'s local_rank column, first set
  Sourced node_rank;                   // its node_rank column
  Sourced world_size;                  // its world_size column
  std::vector<std::string> launchers;  // the table's rows whose marker is set, in its order
  bool wraps_launcher = false;         // the command is itself a launcher (CommandIsLauncher)
  std::string pod;                     // the Kubernetes pod (PodNameVars), "" when not set
  std::string node_name;               // the machine the pod runs on (NodeNameVars)
  std::string stem;  // rank_<R>, else task_<N> (a launcher's index), else pid_<pid>
  std::vector<std::pair<std::string, std::string>> env;  // RecordedEnvNames() that are set
};

struct TaskContext {
  std::string host_flag;   // --host; empty: SLURMD_NODENAME or this machine's host name
  std::string local_host;  // this machine's host name (HostName())
  std::vector<std::string> rank_env = DefaultRankEnv();  // where the global rank may be
  std::vector<std::string> command;
  pid_t wrapper_pid = 0;
};

// Who the task is (docs/run_wrapper.md "Identity"). A value that is not a non-negative
// integer is ignored. The host is --host, else SLURMD_NODENAME when it names this machine
// (the host name or its first label: Slurm's name, as its daemons' logs write it), else the
// host name; never a variable that names another node (MASTER_ADDR, RAY_IP, ...). When the
// command is itself a launcher, the rank variables around it give `task_<N>`, not a rank.
TaskIdentity DescribeTask(const TaskContext& context, const EnvLookup& env);

struct SignalNote {
  int signal = 0;
  pid_t sender = 0;
  TimeNs time = 0;
  bool forwarded = false;
};

// Something collected beside the log (kernel log, nvidia-smi): where it went and how it went.
struct SideFile {
  std::string status;  // "ok", "unavailable: ...", "disabled", "not found", "failed: ..."
  std::string file;    // relative to the node directory; empty when nothing was written
  std::uint64_t lines = 0;
};

struct TaskRecord {
  TaskIdentity id;
  std::vector<std::string> command;
  std::string cwd;
  pid_t wrapper_pid = 0;
  pid_t child_pid = 0;
  pid_t child_pgid = 0;
  TimeNs start = 0;
  TimeNs end = 0;  // 0 while running
  ExitInfo exit;
  std::string start_error;  // why the command could not be started
  std::vector<SignalNote> signals;
  std::string log_file, errors_file;
  std::uint64_t max_bytes = 0;
  std::size_t context_before = 0, context_after = 0;  // the error index's context
  LogCounts log;
  ErrorCounts errors;
  std::string log_error;  // a write error that stopped the log files
  SideFile kernel, nvidia_smi;
};

std::string RenderTaskJson(const TaskRecord& r);

// Writes `contents` to a temporary file beside `path` and renames it over `path`: a reader
// sees the old record or the new one, never half of one (WriteOutputFile,
// denpex/common/output_file.h).
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view contents);

// `s` as a JSON string literal (quotes included); bytes that are not UTF-8 become U+FFFD.
std::string JsonString(std::string_view s);

}  // namespace denpex::cli::run
