#include "run/task_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace denpex::cli::run {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kSignatureBytes = 256;
constexpr std::size_t kCopyChunk = 1 << 20;

// `access`: O_WRONLY, or O_RDWR for a log that reads its tail back when it drops the middle.
Result<Fd> OpenForWriting(const fs::path& path, int access, int extra_flags) {
  const int fd = ::open(path.c_str(), access | O_CREAT | O_CLOEXEC | extra_flags, 0644);
  if (fd < 0) return Status::IoError(ErrnoText("cannot open " + path.string(), errno));
  return Fd(fd);
}

// Right-aligned in `width` columns.
std::string Padded(std::uint64_t n, std::size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads [from, to) of `fd` in chunks, calling fn(std::string_view chunk, offset); stops early
// when fn returns false.
template <typename Fn>
Status ScanRange(int fd, std::uint64_t from, std::uint64_t to, Fn&& fn) {
  std::string buf(std::min<std::uint64_t>(kCopyChunk, to > from ? to - from : 1), '\0');
  while (from < to) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), to - from));
    const ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status::IoError(n < 0 ? ErrnoText("pread", errno) : "pread: unexpected end of file");
    if (!fn(std::string_view(buf.data(), static_cast<std::size_t>(n)), from)) return Status::Ok();
    from += static_cast<std::uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace

bool LooksLikeError(std::string_view line) {
  static constexpr std::array<std::string_view, 10> kSignatures = {
      "Error",     "error:",          "Traceback",  "FAILED",        "Killed",
      "NCCL WARN", "Watchdog caught", "CUDA error", "out of memory", "Xid"};
  return std::any_of(kSignatures.begin(), kSignatures.end(),
                     [&](std::string_view s) { return line.find(s) != std::string_view::npos; });
}

std::string MaskedSignature(std::string_view line) {
  std::string out;
  out.reserve(std::min(line.size(), kSignatureBytes));
  std::size_t i = 0;
  while (i < line.size() && out.size() < kSignatureBytes) {
    const char c = line[i];
    if (c == '0' && i + 2 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X') &&
        IsHex(line[i + 2])) {
      out += "0x#";
      for (i += 2; i < line.size() && IsHex(line[i]);) ++i;
    } else if (IsDigit(c)) {
      out += '#';
      while (i < line.size() && IsDigit(line[i])) ++i;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------- CappedLog

Result<CappedLog> CappedLog::Open(const fs::path& path, std::uint64_t max_bytes,
                                  std::string errors_name) {
  auto fd = OpenForWriting(path, O_RDWR, 0);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0)
    return Status::IoError(ErrnoText("cannot stat " + path.string(), errno));
  CappedLog log;
  log.fd_ = std::move(*fd);
  log.max_ = max_bytes;
  log.end_ = static_cast<std::uint64_t>(st.st_size);  // a restarted task appends
  log.head_end_ = log.end_ + max_bytes / 2;
  log.errors_name_ = std::move(errors_name);
  return log;
}

std::string CappedLog::Marker(std::string_view stamp) const {
  // Fixed width, so that Compact() can rewrite the counts in place.
  return std::string(stamp) + " " + std::string(kNotePrefix) + "--max-bytes " +
         std::to_string(max_) + " reached: omitted " + Padded(counts_.omitted_lines, 14) +
         " lines (" + Padded(counts_.omitted_bytes, 16) +
         " bytes) here; the earliest distinct error lines are in " + errors_name_ + "\n";
}

void CappedLog::Append(std::string_view line, std::string_view stamp) {
  counts_.lines += 1;
  counts_.bytes += line.size();
  if (error_) return;
  if (max_ != 0 && !counts_.capped) {
    const std::uint64_t at = end_ + buf_.size();
    if (at + line.size() > head_end_) {
      counts_.capped = true;
      marker_at_ = at;
      marker_stamp_ = std::string(stamp);
      buf_ += Marker(marker_stamp_);
      tail_start_ = end_ + buf_.size();
    }
  }
  buf_.append(line);
}

void CappedLog::Flush() {
  if (error_ || buf_.empty()) {
    buf_.clear();
    return;
  }
  if (Status st = PWriteAll(fd_.get(), buf_, end_); !st.ok()) return Fail(std::move(st));
  end_ += buf_.size();
  buf_.clear();
  if (counts_.capped && end_ - tail_start_ > max_ / 2) Compact();
}

void CappedLog::Compact() {
  if (Status st = CompactOrError(); !st.ok()) Fail(std::move(st));
}

// Keeps the last max/4 bytes of the tail (from a line start), moves them right after the
// marker, truncates the file there, and rewrites the marker's counts.
Status CappedLog::CompactOrError() {
  const std::uint64_t from = std::max(tail_start_ + 1, end_ - max_ / 4);
  std::uint64_t cut = end_;
  DENPEX_RETURN_IF_ERROR(
      ScanRange(fd_.get(), from - 1, end_, [&](std::string_view chunk, std::uint64_t off) {
        const std::size_t nl = chunk.find('\n');
        if (nl == std::string_view::npos) return true;
        cut = off + nl + 1;
        return false;
      }));
  if (cut >= end_) return Status::Ok();  // one line fills the tail: nothing to drop yet
  std::uint64_t dropped_lines = 0;
  DENPEX_RETURN_IF_ERROR(
      ScanRange(fd_.get(), tail_start_, cut, [&](std::string_view chunk, std::uint64_t) {
        dropped_lines += static_cast<std::uint64_t>(std::count(chunk.begin(), chunk.end(), '\n'));
        return true;
      }));
  std::uint64_t to = tail_start_;
  DENPEX_RETURN_IF_ERROR(
      ScanRange(fd_.get(), cut, end_, [&](std::string_view chunk, std::uint64_t) {
        if (Status st = PWriteAll(fd_.get(), chunk, to); !st.ok()) return false;
        to += chunk.size();
        return true;
      }));
  if (to != tail_start_ + (end_ - cut))
    return Status::IoError("pwrite failed while dropping the middle of the log");
  if (::ftruncate(fd_.get(), static_cast<off_t>(to)) != 0)
    return Status::IoError(ErrnoText("ftruncate", errno));
  counts_.omitted_lines += dropped_lines;
  counts_.omitted_bytes += cut - tail_start_;
  end_ = to;
  return PWriteAll(fd_.get(), Marker(marker_stamp_), marker_at_);
}

void CappedLog::Fail(Status st) {
  error_ = std::move(st);
  buf_.clear();
}

// ---------------------------------------------------------------------------- ErrorIndex

Result<ErrorIndex> ErrorIndex::Open(const fs::path& path, ErrorIndexLimits limits) {
  auto fd = OpenForWriting(path, O_WRONLY, O_APPEND);
  if (!fd.ok()) return fd.status();
  ErrorIndex index;
  index.fd_ = std::move(*fd);
  index.limits_ = limits;
  index.ring_.resize(limits.before);
  return index;
}

void ErrorIndex::Consider(std::string_view line, std::string_view formatted) {
  Observe(line, formatted, LooksLikeError(line));
}

void ErrorIndex::Keep(std::string_view line, std::string_view formatted) {
  Observe(line, formatted, true);
}

void ErrorIndex::Pass(std::string_view formatted) { Observe({}, formatted, false); }

void ErrorIndex::Observe(std::string_view line, std::string_view formatted, bool error_like) {
  ++seq_;
  const bool kept = error_like && KeepIfNew(line, formatted);
  if (!kept && after_left_ > 0) {
    --after_left_;
    Write(formatted, seq_, /*context=*/true);
  }
  if (!ring_.empty()) {
    Remembered& r = ring_[seq_ % ring_.size()];
    r.seq = seq_;
    r.text.assign(formatted);
  }
}

bool ErrorIndex::KeepIfNew(std::string_view line, std::string_view formatted) {
  counts_.matched += 1;
  if (error_) return false;
  std::string sig = MaskedSignature(line);
  if (seen_.count(sig) != 0) return false;
  if (seen_.size() >= limits_.max_distinct || written_ + formatted.size() > limits_.max_bytes) {
    counts_.dropped += 1;
    return false;
  }
  seen_.insert(std::move(sig));
  counts_.kept += 1;
  // The lines before it that the ring still holds and the file does not, oldest first.
  const std::uint64_t n = ring_.size();
  for (std::uint64_t s = seq_ > n ? seq_ - n : 1; s < seq_; ++s) {
    const Remembered& r = ring_[s % n];
    if (r.seq == s && s > last_written_) Write(r.text, s, /*context=*/true);
  }
  Write(formatted, seq_, /*context=*/false);
  after_left_ = limits_.after;
  return true;
}

void ErrorIndex::Write(std::string_view formatted, std::uint64_t seq, bool context) {
  if (error_) return;
  if (context && context_written_ + formatted.size() > limits_.max_context_bytes) {
    counts_.context_dropped += 1;
    return;
  }
  const bool has_context = limits_.before != 0 || limits_.after != 0;
  if (has_context && last_written_ != 0 && seq > last_written_ + 1) {
    // The stamp of the line that follows the gap, so the file stays in time order.
    const std::size_t stamp = formatted.find(' ');
    std::string note =
        std::string(formatted.substr(0, stamp == std::string_view::npos ? 0 : stamp)) + " " +
        std::string(kNotePrefix) + "--- " + std::to_string(seq - last_written_ - 1) +
        (seq - last_written_ - 1 == 1 ? " line" : " lines") + " not copied here ---\n";
    context_written_ += note.size();
    buf_ += note;
  }
  (context ? context_written_ : written_) += formatted.size();
  if (context) counts_.context_lines += 1;
  buf_.append(formatted);
  last_written_ = seq;
}

void ErrorIndex::Flush() {
  if (!error_ && !buf_.empty()) {
    if (Status st = WriteAll(fd_.get(), buf_); !st.ok()) error_ = std::move(st);
  }
  buf_.clear();
}

// ---------------------------------------------------------------------------- TaskLog

Result<TaskLog> TaskLog::Open(const fs::path& log_path, const fs::path& errors_path,
                              std::uint64_t max_bytes, ErrorIndexLimits limits) {
  auto log = CappedLog::Open(log_path, max_bytes, errors_path.filename().string());
  if (!log.ok()) return log.status();
  auto errors = ErrorIndex::Open(errors_path, limits);
  if (!errors.ok()) return errors.status();
  return TaskLog(std::move(*log), std::move(*errors));
}

const std::string& TaskLog::Stamp(TimeNs t) {
  const std::int64_t sec = t / kNsPerSec;
  if (sec != stamp_sec_ || stamp_.size() != 27) {
    stamp_ = FormatStamp(sec * kNsPerSec);  // "YYYY-MM-DDThh:mm:ss.000000Z"
    stamp_sec_ = sec;
  }
  if (stamp_.size() == 27) {
    std::int64_t us = (t % kNsPerSec) / kNsPerUs;
    for (int i = 25; i >= 20; --i, us /= 10)
      stamp_[static_cast<std::size_t>(i)] = static_cast<char>('0' + us % 10);
  }
  return stamp_;
}

void TaskLog::Format(std::string_view line, TimeNs t) {
  line_.assign(Stamp(t));
  line_ += ' ';
  for (std::size_t nul = line.find('\0'); nul != std::string_view::npos; nul = line.find('\0')) {
    line_.append(line.substr(0, nul));
    line_ += "\\x00";
    line.remove_prefix(nul + 1);
  }
  line_.append(line);
  line_ += '\n';
}

void TaskLog::AddLine(std::string_view line, TimeNs t) {
  Format(line, t);
  log_.Append(line_, stamp_);
  errors_.Consider(line, line_);
}

void TaskLog::AddNote(std::string_view text, TimeNs t, bool is_error) {
  std::string line(kNotePrefix);
  line.append(text);
  Format(line, t);
  log_.Append(line_, stamp_);
  if (is_error) {
    errors_.Keep(line, line_);
  } else {
    errors_.Pass(line_);
  }
}

void TaskLog::Flush() {
  log_.Flush();
  errors_.Flush();
}

}  // namespace denpex::cli::run
