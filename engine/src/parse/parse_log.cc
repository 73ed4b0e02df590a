#include "parse/parse_log.h"

#include <algorithm>
#include <cstring>

#include "parse/file_parser.h"
#include "parse/triggers.h"

namespace denpex::engine {
namespace {

// A mapped file's pages are released 2 MiB at a time, 256 KiB behind the line being read, rather
// than a whole 32 MiB chunk once parsed: the kernel's records of each page (its struct page, the
// page table) are then still in the cache when it is unmapped. On the 2 GB benchmark file in
// tmpfs (4 KiB pages) that took 0.02-0.03 of the ~0.2 CPU-s spent mapping and unmapping it (one
// thread: 0.03-0.04 s of system time); on ext4 (large folios, cheap to unmap) it changed nothing
// measurable; steps of 1, 4 and 8 MiB were no better. The lag keeps mapped what a stamp search
// looks back through (reading a released page again is correct: it faults it in again).
constexpr std::size_t kReleaseStep = std::size_t{2} << 20;
constexpr std::size_t kReleaseLag = std::size_t{256} << 10;
// The text is mapped ahead of the line being read in kReleaseStep pieces, at least this far ahead
// (ReadBehind::Fetch).
constexpr std::size_t kFetchAhead = std::size_t{1} << 20;

// Walks one text: lines with a trigger (and every line while a record is open) go to the
// parser whole; the others are counted, and handed over as gaps only for their stamps.
class Driver {
 public:
  Driver(std::string_view text, const FileContext& ctx, std::uint32_t first_line, std::uint64_t base_offset)
      : text_(text), ctx_(ctx), parser_(ctx, text, base_offset), number_(first_line - 1), first_(first_line), base_(base_offset) {}

  ParsedLog Run(bool place) {
    while (pos_ < text_.size()) {
      if (ctx_.every_line || parser_.NeedsEveryLine() || (Opening() && !parser_.HasFirstDated())) {
        OneLine();
      } else {
        Jump();
      }
      if (ctx_.read_behind != nullptr) {
        if (pos_ - released_ >= kReleaseStep + kReleaseLag) ReleaseBehind();
        if (fetched_ < text_.size() && fetched_ < pos_ + kFetchAhead) FetchAhead();
      }
    }
    NoteLastLine();
    if (read_end_ < text_.size()) parser_.Gap(text_.substr(read_end_));  // for the text's last stamp
    return parser_.Finish(place);
  }

 private:
  // The next line is among the first kOpeningLines of the file (a later chunk has none: what
  // a whole-file parse reads must not depend on where the chunks begin).
  bool Opening() const { return base_ == 0 && number_ + 1 - first_ < kOpeningLines; }
  std::size_t EndOf(std::size_t begin) const {
    const void* nl = std::memchr(text_.data() + begin, '\n', text_.size() - begin);
    return nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) : text_.size();
  }
  LineRef Ref(std::size_t begin, std::size_t end) {
    std::string_view line = text_.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return {line, base_ + begin, ++number_};
  }
  // The line at pos_, read whole (or, an opening line without a trigger, for its stamp);
  // `no_label_colon_from`: a place of the text, as LineFilter::Found has it.
  void Whole(std::size_t end, TriggerLevel level, bool opening, std::size_t no_label_colon_from = std::string_view::npos) {
    if (pos_ > read_end_) parser_.Gap(text_.substr(read_end_, pos_ - read_end_));
    LineRef ref = Ref(pos_, end);
    if (no_label_colon_from != std::string_view::npos && no_label_colon_from - pos_ < ref.no_label_colon_from) {
      ref.no_label_colon_from = static_cast<std::uint32_t>(no_label_colon_from - pos_);
    }
    parser_.Line(ref, level, opening);
    read_end_ = pos_ = end + 1;
  }

  void OneLine() {
    const std::size_t end = EndOf(pos_);
    const TriggerLevel level = filter_.Classify(text_.substr(pos_, end - pos_));
    const bool opening = Opening();
    if (ctx_.every_line || parser_.NeedsEveryLine() || level == TriggerLevel::kRecord) {
      Whole(end, level, opening);
      return;
    }
    const LineRef ref = Ref(pos_, end);
    if (level == TriggerLevel::kPrefix) {
      parser_.PrefixLine(ref);
    } else {
      parser_.Skip(1, ref.text.size() > kMaxLineBytes ? 1 : 0);
    }
    parser_.DateLine(ref);
    pos_ = end + 1;
  }

  // Past the lines without a trigger, to the next line with one.
  void Jump() {
    // Only an srun-labelled file's progress lines are searched for another task's label.
    const LineFilter::Found f = filter_.Next(text_, pos_, kMaxLineBytes, ctx_.prefixes.srun_labels);
    const std::int64_t unterminated = !f.found && f.begin < text_.size() ? 1 : 0;
    parser_.Skip(f.newlines + unterminated, f.long_lines);
    parser_.FalseCandidates(f.false_candidates);
    number_ += static_cast<std::uint32_t>(f.newlines + unterminated);
    if (!f.found) {
      pos_ = text_.size();
      return;
    }
    pos_ = f.begin;
    if (f.level == TriggerLevel::kPrefix) {
      parser_.PrefixLine(Ref(f.begin, f.end));
      pos_ = f.end + 1;
    } else {
      Whole(f.end, f.level, false, f.no_label_colon_from);
    }
  }

  // The next kReleaseStep of text, mapped before the parse reaches it.
  void FetchAhead() {
    const std::size_t from = std::max(fetched_, pos_);
    const std::size_t to = std::min(text_.size(), from + kReleaseStep);
    ctx_.read_behind->Fetch(base_ + from, to - from);
    fetched_ = to;
  }
  void ReleaseBehind() {
    const std::size_t upto = pos_ - kReleaseLag;
    ctx_.read_behind->Release(base_ + released_, upto - released_);
    released_ = upto;
  }

  // The last non-empty line, when no line read whole comes after it (those set it themselves).
  void NoteLastLine() {
    std::size_t end = text_.size();
    while (end > read_end_) {
      std::size_t begin = end;
      // memrchr, not a byte loop: a chunk's unread tail may be long and hold no newline (a file
      // zero-filled past the point where it shrank while read: ~1-2 CPU-s a GB byte by byte).
      const void* nl = begin > read_end_ ? ::memrchr(text_.data() + read_end_, '\n', begin - read_end_) : nullptr;
      begin = nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) + 1 : read_end_;
      std::size_t len = end - begin;
      if (len > 0 && text_[end - 1] == '\r') --len;
      if (len > 0 && len <= kMaxLineBytes) {
        const auto number = static_cast<std::uint32_t>(number_ - LinesAfter(end));
        parser_.LastLine({number, base_ + begin, static_cast<std::uint32_t>(len)});
        return;
      }
      if (begin == read_end_) return;
      end = begin - 1;
    }
  }
  // Lines after the one that ends at `end` (its '\n' or the text's end).
  std::int64_t LinesAfter(std::size_t end) const {
    std::int64_t n = 0;
    if (end < text_.size()) n = std::count(text_.begin() + static_cast<std::ptrdiff_t>(end), text_.end(), '\n');
    if (n > 0 && text_.back() == '\n') --n;  // the text's own last newline ends a line, not one after
    return n;
  }

  std::string_view text_;
  const FileContext& ctx_;
  const LineFilter& filter_ = LineFilter::Default();  // looked up once, not at every line found
  LogParser parser_;
  std::size_t pos_ = 0;        // the next line's start
  std::size_t read_end_ = 0;   // just past the last line read whole
  std::size_t released_ = 0;   // ctx_.read_behind has been given the text before this
  std::size_t fetched_ = 0;    // ... and asked to map the text before this
  std::uint32_t number_;       // the last line's number so far
  std::uint32_t first_;        // the text's first line number
  std::uint64_t base_;
};

}  // namespace

ParsedLog ParseLog(std::string_view text, const FileContext& ctx, std::uint32_t first_line,
                   std::uint64_t base_offset) {
  return Driver(text, ctx, first_line, base_offset).Run(true);
}

ParsedLog ParseLogPart(std::string_view text, const FileContext& ctx, std::uint32_t first_line,
                       std::uint64_t base_offset) {
  return Driver(text, ctx, first_line, base_offset).Run(false);
}

}  // namespace denpex::engine
