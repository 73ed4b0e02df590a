// `denpex run`: runs a training command as a child, tees its stdout and stderr to the console
// and, a line at a time with a wall-clock stamp, into the incident layout the engine reads:
//
//   <out>/<host>/<stem>.log          every line: `<RFC 3339 UTC µs stamp> <line>`
//   <out>/<host>/<stem>.errors.log   the earliest line of each distinct error signature
//   <out>/<host>/<stem>.task.json    who the task was, how it ended (docs/run_wrapper.md)
//   <out>/<host>/kernel.log          kernel log lines printed while it ran (shared per node)
//   <out>/<host>/nvidia-smi.log      a snapshot when it ended (local rank 0, if installed)
//
// <stem> is rank_<R>, task_<N> or pid_<pid> (TaskIdentity). Signals the wrapper
// receives are forwarded to the child; it keeps reading until the child is gone, so a line
// the child wrote is never lost, whether the child is killed or the wrapper is told to stop.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "run/task_log.h"
#include "run/task_record.h"

namespace denpex::cli::run {

struct WrapperOptions {
  std::filesystem::path out_dir;
  std::vector<std::string> command;
  std::uint64_t max_bytes = kDefaultMaxBytes;  // of <stem>.log; 0: no cap
  // Lines the error index keeps before and after each first distinct error.
  std::size_t context_before = kDefaultContextBefore;
  std::size_t context_after = kDefaultContextAfter;
  std::vector<std::string> rank_env = DefaultRankEnv();  // where the global rank may be
  std::string host;                 // empty: this machine's host name
  int console_out = STDOUT_FILENO;  // where the child's stdout is copied; -1: nowhere
  int console_err = STDERR_FILENO;
  bool kernel_log = true;
  bool nvidia_smi = true;
  // After the child exits, how long to keep reading output that its own children (which
  // inherited the pipes) still write.
  std::chrono::milliseconds drain_after_exit{2000};
};

struct WrapperResult {
  TaskRecord record;
  std::filesystem::path node_dir;
  int exit_code = 0;  // the child's exit code, 128 + its signal, or 126/127 (not started)
};

// Runs the command to its end. Fails only when the layout cannot be created (the command is
// then not started); a write error later stops the files, never the command.
Result<WrapperResult> RunWrapped(const WrapperOptions& options,
                                 const EnvLookup& env = &std::getenv);

// This machine's host name as a directory name ('/' replaced; "localhost" when empty).
std::string HostName();

}  // namespace denpex::cli::run
