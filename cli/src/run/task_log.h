// The files one wrapped task writes its output to (docs/run_wrapper.md "Layout"):
//
//   CappedLog   <stem>.log: every line as `<stamp> <line>`, written with write(2) as it is
//               read. With --max-bytes M it keeps the first M/2 bytes (the head), then one
//               marker line, then the most recent M/4..M/2 bytes (the tail): the middle is
//               dropped on disk, a line at a time, and the marker counts what was dropped.
//   ErrorIndex  <stem>.errors.log: the earliest line of each distinct error signature
//               (digits and hex masked) with the lines before and after it (its context: the
//               shard being loaded, the step, the batch), in the same `<stamp> <line>` shape,
//               kept whatever the cap does to the main log.
//   TaskLog     both of the above behind one AddLine(), plus the stamp formatting.
//
// A write error (disk full) never stops the job: the file stops growing, and the error is
// reported once through error().
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "run/posix_io.h"

namespace denpex::cli::run {

inline constexpr std::uint64_t kDefaultMaxBytes = 256ull << 20;
inline constexpr std::size_t kDefaultContextBefore = 50;
inline constexpr std::size_t kDefaultContextAfter = 20;
inline constexpr std::size_t kMaxContextLines = 10'000;  // the most either may be
inline constexpr std::string_view kNotePrefix = "[denpex-run] ";

// True for a line that holds one of the error signatures the index keeps ("Error", "error:",
// "Traceback", "FAILED", "Killed", "NCCL WARN", "Watchdog caught", "CUDA error",
// "out of memory", "Xid").
bool LooksLikeError(std::string_view line);
// The line with every run of digits replaced by '#' and every 0x-hex number by "0x#", cut to
// 256 bytes: lines that differ only in ranks, pids, ports, addresses or times share it.
std::string MaskedSignature(std::string_view line);

struct LogCounts {
  std::uint64_t lines = 0;          // lines handed to the log (including dropped ones)
  std::uint64_t bytes = 0;          // bytes handed to the log, stamps included
  std::uint64_t omitted_lines = 0;  // dropped from the middle by the cap
  std::uint64_t omitted_bytes = 0;
  bool capped = false;  // the head filled up and the marker was written
};

class CappedLog {
 public:
  // Opens (creates, or appends to) `path`. max_bytes == 0: no cap. `errors_name` is named in
  // the marker line.
  static Result<CappedLog> Open(const std::filesystem::path& path, std::uint64_t max_bytes,
                                std::string errors_name);

  // Buffers one formatted line (ending in '\n'); `stamp` is used if it opens the marker.
  void Append(std::string_view line, std::string_view stamp);
  // Writes what Append buffered; compacts the tail when it outgrew its share.
  void Flush();

  const LogCounts& counts() const { return counts_; }
  const std::optional<Status>& error() const { return error_; }

 private:
  CappedLog() = default;
  std::string Marker(std::string_view stamp) const;
  void Compact();
  Status CompactOrError();
  void Fail(Status st);

  Fd fd_;
  std::uint64_t max_ = 0;
  std::uint64_t end_ = 0;         // file size as this writer left it
  std::uint64_t head_end_ = 0;    // where the head may end (absolute offset)
  std::uint64_t marker_at_ = 0;   // offset of the marker line
  std::uint64_t tail_start_ = 0;  // first byte after the marker
  std::string marker_stamp_;
  std::string errors_name_;
  std::string buf_;
  LogCounts counts_;
  std::optional<Status> error_;
};

struct ErrorCounts {
  std::uint64_t matched = 0;          // lines that looked like errors
  std::uint64_t kept = 0;             // distinct signatures written
  std::uint64_t dropped = 0;          // distinct signatures past the limits
  std::uint64_t context_lines = 0;    // lines written before or after a kept one
  std::uint64_t context_dropped = 0;  // context lines past max_context_bytes
};

struct ErrorIndexLimits {
  std::size_t max_distinct = 2000;              // distinct signatures kept
  std::uint64_t max_bytes = 2u << 20;           // of the kept error lines themselves
  std::size_t before = kDefaultContextBefore;   // lines kept before each kept error line
  std::size_t after = kDefaultContextAfter;     // and after it
  std::uint64_t max_context_bytes = 16u << 20;  // of the context lines
};

// Every line of the task passes through Consider (or Note), so that the index can hold the
// last `before` lines in a ring and copy them, the error line and the `after` lines that follow
// to the file when an error's signature is new. A line is written once, however many errors'
// windows hold it; where the index skips lines, one line says how many:
// `<stamp> [denpex-run] --- <n> lines not copied here ---` (with context only).
class ErrorIndex {
 public:
  static Result<ErrorIndex> Open(const std::filesystem::path& path, ErrorIndexLimits limits = {});
  // `line` as the program printed it; `formatted` as written to the log. Keeps it (with its
  // context) when it looks like an error and its signature is new.
  void Consider(std::string_view line, std::string_view formatted);
  // Keeps it when its signature is new, whatever it looks like.
  void Keep(std::string_view line, std::string_view formatted);
  // A line that is only context (the wrapper's own notes).
  void Pass(std::string_view formatted);
  void Flush();

  const ErrorCounts& counts() const { return counts_; }
  const ErrorIndexLimits& limits() const { return limits_; }
  const std::optional<Status>& error() const { return error_; }

 private:
  struct Remembered {
    std::uint64_t seq = 0;
    std::string text;
  };
  ErrorIndex() = default;
  void Observe(std::string_view line, std::string_view formatted, bool error_like);
  bool KeepIfNew(std::string_view line, std::string_view formatted);
  void Write(std::string_view formatted, std::uint64_t seq, bool context);

  Fd fd_;
  ErrorIndexLimits limits_;
  std::uint64_t written_ = 0;          // bytes of error lines
  std::uint64_t context_written_ = 0;  // bytes of context lines and gap notes
  std::unordered_set<std::string> seen_;
  std::vector<Remembered> ring_;  // the last `before` lines, ring_[seq % before]
  std::uint64_t seq_ = 0;         // lines observed
  std::uint64_t last_written_ = 0;
  std::size_t after_left_ = 0;
  std::string buf_;
  ErrorCounts counts_;
  std::optional<Status> error_;
};

// Formats lines as `<stamp> <line>\n` (NUL bytes written as the four characters `\x00`, so
// the file stays text) and feeds both files.
class TaskLog {
 public:
  static Result<TaskLog> Open(const std::filesystem::path& log_path,
                              const std::filesystem::path& errors_path, std::uint64_t max_bytes,
                              ErrorIndexLimits limits = {});

  void AddLine(std::string_view line, TimeNs t);
  // A line of the wrapper's own: `<stamp> [denpex-run] <text>`. It goes to the error index
  // only when `is_error` (an abnormal exit), never by its text (a command line can hold
  // anything).
  void AddNote(std::string_view text, TimeNs t, bool is_error = false);
  void Flush();

  const CappedLog& log() const { return log_; }
  const ErrorIndex& errors() const { return errors_; }

 private:
  TaskLog(CappedLog log, ErrorIndex errors) : log_(std::move(log)), errors_(std::move(errors)) {}
  const std::string& Stamp(TimeNs t);
  void Format(std::string_view line, TimeNs t);

  CappedLog log_;
  ErrorIndex errors_;
  std::string line_;  // scratch: the formatted line
  std::int64_t stamp_sec_ = -1;
  std::string stamp_;  // "YYYY-MM-DDThh:mm:ss.uuuuuuZ" of the last line
};

}  // namespace denpex::cli::run
