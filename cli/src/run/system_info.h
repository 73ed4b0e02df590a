// What the wrapper collects beside the task's output, where the machine lets it:
//   - the kernel log lines printed while the task ran (/dev/kmsg), merged per node into
//     <node>/kernel.log in dmesg's shape `[<uptime s>.<µs>] <message>`;
//   - an `nvidia-smi` snapshot when the task ends, in <node>/nvidia-smi.log.
// Neither is required: when /dev/kmsg cannot be read or nvidia-smi is not installed, the
// reason goes into task.json and the task runs as usual.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "run/posix_io.h"
#include "run/task_record.h"

namespace denpex::cli::run {

// One /dev/kmsg record (`<prio>,<seq>,<µs>,<flags>[,...];<message>` plus optional
// ` KEY=value` continuation lines) as dmesg prints it: `[ 2686.172733] <message>`.
// nullopt for a record that does not parse.
std::optional<std::string> FormatKmsgRecord(std::string_view record);

// Reads the kernel log records that appear after Open(), without blocking.
class KernelLogReader {
 public:
  static constexpr std::uint64_t kMaxBytes =
      8u << 20;  // beyond this, later lines are counted, not kept

  // `path` is /dev/kmsg but for tests. Never fails: status() says why nothing is read.
  static KernelLogReader Open(const char* path = "/dev/kmsg");

  int fd() const { return fd_.get(); }  // -1 when unavailable
  const std::string& status() const { return status_; }
  void ReadAvailable();
  const std::vector<std::string>& lines() const { return lines_; }
  std::uint64_t lost() const { return lost_; }  // overwritten before read, or past kMaxBytes

 private:
  Fd fd_;
  std::string status_;
  std::vector<std::string> lines_;
  std::uint64_t bytes_ = 0;
  std::uint64_t lost_ = 0;
};

// Merges `lines` into <node_dir>/kernel.log under an exclusive lock on node_dir: the tasks
// of one node share the file; a line already there is not repeated, and the file stays in
// uptime order. Creates an empty file when there is nothing to add.
Status MergeKernelLog(const std::filesystem::path& node_dir, const std::vector<std::string>& lines);

// The uptime in µs of a `[ 2686.172733] ...` line; nullopt when it has no such stamp.
std::optional<std::uint64_t> KernelLineMicros(std::string_view line);

// An executable `name` in $PATH, or nullopt.
std::optional<std::string> FindInPath(std::string_view name);

struct ToolRun {
  bool started = false;
  std::string status;  // "ok", "not found", "failed: <tool> exited with code 1", "timed out ..."
  std::string output;  // stdout and stderr as it printed them
};
// Runs `argv` (its program from $PATH) with a time limit, keeping what it printed.
ToolRun RunTool(const std::vector<std::string>& argv, const sigset_t& child_mask,
                std::chrono::milliseconds limit);

// Runs `argv` (its program from $PATH) with a time limit and writes what it printed (stdout and
// stderr) to dir/file, replacing an older one; the status says whether it was found, finished,
// and how it exited. `child_mask`: the signal mask it runs with.
SideFile RunToolInto(const std::filesystem::path& dir, const std::string& file,
                     const std::vector<std::string>& argv, const sigset_t& child_mask,
                     std::chrono::milliseconds limit);

// Runs `nvidia-smi` (from $PATH) with a time limit and writes what it printed to
// <node_dir>/nvidia-smi.log (replacing an older snapshot). `child_mask`: the signal mask it
// runs with.
SideFile SnapshotNvidiaSmi(const std::filesystem::path& node_dir, const sigset_t& child_mask,
                           std::chrono::milliseconds limit = std::chrono::seconds(10));

}  // namespace denpex::cli::run
