// LineSplitter: turns the bytes read from one pipe into lines, each with the wall-clock time
// its first byte was read. Owned by the wrapper's event loop, one per stream.
//
// - A line ends at '\n'; one '\r' right before it (CRLF) is dropped.
// - A line longer than `max_line` bytes is handed out in pieces of `max_line` bytes, so a
//   10 MB line costs no more memory than a short one; no byte is dropped.
// - Bytes are passed through as they are (NUL, invalid UTF-8): escaping is the writer's job.
// - Finish() hands out a last line that had no '\n' (the stream ended mid-line).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "denpex/common/time.h"

namespace denpex::cli::run {

inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line = kMaxLineBytes)
      : max_(max_line == 0 ? 1 : max_line) {}

  // Feeds `bytes` read at `now`; calls emit(std::string_view line, TimeNs first_byte_time)
  // for every line completed (or cut at max_line) by them.
  template <typename Emit>
  void Feed(std::string_view bytes, TimeNs now, Emit&& emit);

  // Emits the pending partial line, if any.
  template <typename Emit>
  void Finish(Emit&& emit);

  bool has_partial() const { return !pending_.empty(); }

 private:
  static std::string_view DropCr(std::string_view s) {
    return (!s.empty() && s.back() == '\r') ? s.substr(0, s.size() - 1) : s;
  }

  std::size_t max_;
  std::string pending_;      // the start of a line whose '\n' has not arrived
  TimeNs pending_time_ = 0;  // when its first byte was read
};

template <typename Emit>
void LineSplitter::Feed(std::string_view bytes, TimeNs now, Emit&& emit) {
  while (!bytes.empty()) {
    if (pending_.empty()) pending_time_ = now;
    const std::size_t nl = bytes.find('\n');
    const std::size_t piece = nl == std::string_view::npos ? bytes.size() : nl;
    if (pending_.size() + piece > max_) {
      // Too long for one line: hand out max_ bytes as a piece of their own.
      const std::size_t room = max_ - pending_.size();
      pending_.append(bytes.substr(0, room));
      bytes.remove_prefix(room);
      emit(std::string_view(pending_), pending_time_);
      pending_.clear();
      continue;
    }
    if (nl == std::string_view::npos) {
      pending_.append(bytes);
      return;
    }
    if (pending_.empty()) {
      emit(DropCr(bytes.substr(0, nl)), pending_time_);
    } else {
      pending_.append(bytes.substr(0, nl));
      emit(DropCr(pending_), pending_time_);
      pending_.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
}

template <typename Emit>
void LineSplitter::Finish(Emit&& emit) {
  if (pending_.empty()) return;
  emit(std::string_view(pending_), pending_time_);
  pending_.clear();
}

}  // namespace denpex::cli::run
