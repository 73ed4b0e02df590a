// `denpex simulate --replay SPEED`: an incident written out in time, as the job printed it, for
// measuring `denpex watch` (issue #25). The simulator writes the incident into a staging
// directory; the replay appends each file's lines to the same path under the incident directory
// at their simulated time, scaled by SPEED (simulated seconds per wall second), so a reader
// following the incident directory sees files appear and grow as a running job's do.
//
// A line's time is its own stamp as a collector reads it (shapes' `LineTime`); a line without
// one takes the time of the nearest stamped line before it in its file (the lines before a
// file's first stamp, that stamp's), so it is never due after the next stamped line, and a
// file's lines never go back in time (file order is kept). A text file with no stamped line at
// all was still written as its process ran (a job's `print`s in slurm-<id>.out or mpirun's
// output, the rank logs of releases whose c10 lines carry no time), but nothing in it says
// when: its n lines are spread evenly over the replay's span, the k-th due at
// start + k/n of (end - start), its last line when the replay ends (PaceUntimed). What is
// written whole once, not by a process as it runs (WrittenWhole: the checkpoint tree,
// nvidia-smi's table without its stamped header, the IB port counters, kubectl's describe and
// events), and a file that is not text (a NUL byte: checkpoints' tensors, moved whole), are
// written when the replay ends, as they are collected after the fact.
// An empty file (a worker's stdout.log under torchrun --log-dir) is created when the replay
// starts, as its launcher opened it.
// The clock starts at the job's start: lines stamped before it (a node's boot lines in its
// kernel log) are there at once, as a watcher started with the job finds them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"

namespace denpex::cli {

struct ReplayOptions {
  double speed = 1;                 // simulated seconds per wall second (> 0)
  std::optional<double> max_gap_s;  // the longest idle wall gap, in seconds; none: uncapped
  // A text file with no stamped line that is not written whole: its lines paced over the span
  // (false: written whole when the replay ends, the latest they can come; `eval --watch`
  // measures that bound by default, `--watch-pace-untimed` this one).
  bool pace_untimed = true;
  // Called after each batch a replay writes: the wall time since it started and its whole
  // span, in nanoseconds (`denpex simulate --replay`'s progress). Empty: none.
  std::function<void(std::int64_t done_ns, std::int64_t total_ns)> on_batch;
};

// One step of a replay: file `file`'s bytes up to `end` (a line's end) are due `wall_ns` after
// the replay starts; the step before it of the same file ended where this one begins.
struct ReplayStep {
  std::int64_t wall_ns = 0;
  TimeNs time = 0;  // the lines' simulated time
  std::uint32_t file = 0;
  std::size_t end = 0;
};

struct ReplayPlan {
  // By wall_ns, then file; a file's steps in file order. A file's last step ends at its size
  // (an empty file has one step with end 0 at wall time 0: it is created then).
  std::vector<ReplayStep> steps;
  TimeNs start = 0;          // simulated time at wall time 0
  TimeNs end = 0;            // the last line's simulated time
  std::int64_t wall_ns = 0;  // the replay's wall length (the last step's wall_ns)
  std::vector<bool> timed;   // per file: a line of it has a time of its own
  std::vector<bool> paced;   // per file: none has, and its lines are spread over the span
};

// Whether the file at `path` (relative to the incident directory) is written whole, once, and
// not line by line as a process runs: below a `checkpoints/` or kubectl's `describe/` folder,
// `nvidia-smi*`, `ib_counters*`, kubectl's `events.txt`.
bool WrittenWhole(std::string_view path);

// Plans the replay of the files' texts; `paths` (parallel to `texts`) says which are written
// whole (WrittenWhole). `year` completes year-less stamps (c10, syslog); `start` is the job's
// start (none: the earliest stamp). Deterministic, no clock read.
ReplayPlan PlanReplay(std::span<const std::string_view> texts, std::span<const std::string> paths,
                      int year, std::optional<TimeNs> start, const ReplayOptions& options);

// One write of a batch: file `file`'s bytes [begin, end).
struct ReplayWrite {
  std::uint32_t file = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The batch due by `now_ns`: plan.steps from *next on with wall_ns <= now_ns, one write per
// file (by file number) from `written[file]` to its last due end; advances *next and written.
std::vector<ReplayWrite> TakeDue(const ReplayPlan& plan, std::size_t* next, std::int64_t now_ns,
                                 std::vector<std::size_t>* written);

// What an incident directory holds, by path relative to it (each list sorted).
struct Staged {
  std::vector<std::string> dirs;
  std::vector<std::string> texts;      // replayed line by line
  std::vector<std::string> moved;      // not text (a NUL byte), links: moved whole at the end
  std::vector<std::string> contents;   // the texts' bytes, by the index in `texts`
  std::vector<struct timespec> mtime;  // the texts' modification times
};

// Reads the incident directory `from` (the texts into memory).
Result<Staged> ReadStaged(const std::filesystem::path& from);

// Where a replay writes: each write of a batch (TakeDue) appended to its file under `to`, the
// folders made on first use, the files kept open while descriptors last (the soft limit raised
// to the hard one). `denpex simulate --replay` and `denpex eval --watch` write through it.
class ReplayFiles {
 public:
  ReplayFiles(const Staged& staged, std::filesystem::path to);
  ~ReplayFiles();
  ReplayFiles(const ReplayFiles&) = delete;
  ReplayFiles& operator=(const ReplayFiles&) = delete;

  Status Write(const ReplayWrite& w);

 private:
  static constexpr std::size_t kSpareFds = 128;  // descriptors left to the rest of the process
  const Staged& staged_;
  std::filesystem::path to_;
  std::vector<int> fds_;
  std::size_t open_ = 0, cap_ = 0;
  // Descriptors every ReplayFiles of the process keeps open (`eval --watch` replays several
  // incidents at once; each may keep them only while the process's cap is not reached).
  static std::atomic<std::size_t> kept_;
  std::vector<bool> made_;  // per file: its folder was made
};

// Replays the incident staged in `from` into `to` (created; empty if it exists) and removes
// `from`.
// Prints one line to `out` when it starts. Each file ends with the bytes and modification time
// it had in `from`, so the finished incident is the one the simulator wrote.
Status Replay(const std::filesystem::path& from, const std::filesystem::path& to, int year,
              std::optional<TimeNs> start, const ReplayOptions& options, std::ostream& out);

}  // namespace denpex::cli
