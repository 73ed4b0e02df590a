// srun --label interleaving (docs/log_formats.md §1, "srun interleaving"): srun relays a
// task's output in pieces, and another task's piece can land inside a line:
//    423:   return sel 100: [W302 09:00:02.446341992 socket.cpp:697] [c10d] The client ...
//    423: f.fget.__get__(instance, owner)()
// Task 423's line is cut after "return sel"; task 100's whole line follows on the same physical
// line, and 423's tail comes with its own label on the next one. The embedded label has the
// width of the leading one (srun pads every label to the widest task id), which is what finds
// it. The other task's line is read on its own; the head waits for the next line of its task
// and is joined to it; a head whose tail never comes is counted as malformed.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "parse/file_parser.h"
#include "parse/scan.h"
#include "parse/simd.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace denpex::engine {
namespace {

// Label colons (a colon with a digit before it and a space after it) among W bytes: bit j set
// for p[j]; reads p[-1..W+1). A digit: (c - '0') as an unsigned byte below 10, i.e. as a signed
// byte below 10 - 128.
#if defined(__SSE2__)
struct LabelColons16 {
  static constexpr std::size_t kWidth = 16;
  unsigned operator()(const char* p) const {
    const auto load = [](const char* at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)); };
    const __m128i biased = _mm_xor_si128(_mm_sub_epi8(load(p - 1), _mm_set1_epi8('0')), _mm_set1_epi8(static_cast<char>(0x80)));
    const __m128i digit_before = _mm_cmplt_epi8(biased, _mm_set1_epi8(static_cast<char>(10 - 128)));
    const __m128i colon = _mm_cmpeq_epi8(load(p), _mm_set1_epi8(':'));
    const __m128i space_after = _mm_cmpeq_epi8(load(p + 1), _mm_set1_epi8(' '));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(digit_before, _mm_and_si128(colon, space_after))));
  }
};
#endif
#ifdef DENPEX_X86
struct LabelColons32 {
  static constexpr std::size_t kWidth = 32;
  DENPEX_AVX2 unsigned operator()(const char* p) const { return LabelColonMask32(reinterpret_cast<const unsigned char*>(p)); }
};
#endif

// Blocks of Block::kWidth places, each with the byte before and after it inside the line, then
// one block ending at the line's last byte without the places already seen. Needs
// s.size() >= kWidth + 2 and i >= 1.
template <typename Block>
inline std::size_t NextLabelColonIn(std::string_view s, std::size_t i, Block block) {
  constexpr std::size_t w = Block::kWidth;
  for (; i + w + 1 <= s.size(); i += w) {
    if (const unsigned hits = block(s.data() + i)) return i + static_cast<std::size_t>(std::countr_zero(hits));
  }
  if (i + 1 >= s.size()) return std::string_view::npos;
  const std::size_t last = s.size() - w - 1;
  const unsigned hits = block(s.data() + last) >> (i - last);
  return hits ? i + static_cast<std::size_t>(std::countr_zero(hits)) : std::string_view::npos;
}

#ifdef DENPEX_X86
DENPEX_AVX2 __attribute__((flatten)) std::size_t NextLabelColonAvx2(std::string_view s, std::size_t i) {
  return NextLabelColonIn(s, i, LabelColons32{});
}
#endif

// The next `: ` at or after `from` whose colon follows a digit (npos: none): only there can a
// label end. The check runs on every srun-labelled line read whole, and most of those are
// progress lines with half a dozen `key: value` pairs and no digit before the colon; testing
// 16 or 32 bytes at a time costs a fraction of a find(": ") call per pair.
std::size_t NextLabelColon(std::string_view s, std::size_t from) {
  std::size_t i = std::max<std::size_t>(from, 1);  // a colon at 0 has no digit before it
#ifdef DENPEX_X86
  if (s.size() >= LabelColons32::kWidth + 2 && HasAvx2()) return NextLabelColonAvx2(s, i);
#endif
#if defined(__SSE2__)
  if (s.size() >= LabelColons16::kWidth + 2) return NextLabelColonIn(s, i, LabelColons16{});
#endif
  for (; i + 1 < s.size(); ++i) {
    if (s[i] == ':' && s[i + 1] == ' ' && IsDigit(s[i - 1])) return i;
  }
  return std::string_view::npos;
}

// "  12: ..." -> 4 (the label's width before ": "), and its task; 0 when the line does not
// open with an srun label.
std::size_t LeadingLabelWidth(std::string_view line, std::int32_t* task) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::int64_t v = 0;
  const std::size_t digits = i;
  while (i < line.size() && IsDigit(line[i]) && i - digits < 7) v = v * 10 + (line[i++] - '0');
  if (i == digits || i + 1 >= line.size() || line[i] != ':' || line[i + 1] != ' ') return 0;
  *task = static_cast<std::int32_t>(v);
  return i;
}

// A label of exactly `width` characters (spaces, then digits without a leading zero) right
// before text[at] == ':'; its task, or -1.
std::int32_t LabelEndingAt(std::string_view text, std::size_t at, std::size_t width) {
  if (at < width) return -1;
  const std::string_view label = text.substr(at - width, width);
  std::size_t i = 0;
  while (i < label.size() && label[i] == ' ') ++i;
  if (i == label.size() || (label[i] == '0' && i + 1 < label.size())) return -1;
  std::int64_t v = 0;
  for (; i < label.size(); ++i) {
    if (!IsDigit(label[i])) return -1;
    v = v * 10 + (label[i] - '0');
  }
  return static_cast<std::int32_t>(v);
}

// `file.py:831: UserWarning`, `Utils.hpp:133: Warning`: digits between a colon and `: ` are a
// source line, not a label (a real cut rarely ends in a colon and digits).
bool AfterColonAndDigits(std::string_view text, std::size_t label_start) {
  std::size_t i = label_start;
  while (i > 0 && IsDigit(text[i - 1])) --i;
  return i > 0 && text[i - 1] == ':';
}

// Where another task's label of the same width starts inside `line` (past its own label), and
// that task; npos when there is none. One-digit labels (jobs of 10 tasks or fewer) must be
// followed by a bracket, as `[rank3]:` and c10 headers are: `x: ` is ordinary text. The label's
// colon is at or after `from` (a caller that knows the line's start holds none).
std::size_t EmbeddedLabel(std::string_view line, std::size_t width, std::int32_t own, std::size_t from) {
  for (std::size_t colon = NextLabelColon(line, std::max(from, width + 2)); colon != std::string_view::npos;
       colon = NextLabelColon(line, colon + 1)) {
    if (colon < 2 * width + 2) continue;  // the head holds at least one byte
    const std::int32_t task = LabelEndingAt(line, colon, width);
    if (task < 0 || task == own || AfterColonAndDigits(line, colon - width)) continue;
    if (width == 1 && (colon + 2 >= line.size() || line[colon + 2] != '[')) continue;
    return colon - width;
  }
  return std::string_view::npos;
}

}  // namespace

bool LogParser::HasEmbeddedLabel(std::string_view line, std::size_t width, std::int32_t own, std::size_t from) {
  return EmbeddedLabel(line, width, own, from) != std::string_view::npos;
}

bool LogParser::SplitInterleaved(const LineRef& line) {
  if (!ctx_.prefixes.srun_labels) return false;
  std::int32_t own = -1;
  const std::size_t width = LeadingLabelWidth(line.text, &own);
  if (width == 0) return false;
  // Another task's label would end in a label colon past the line's own `<label>: `: where the
  // trigger scan found none from there on (a `[rank<G>]:` line's first trigger stands right
  // after the label), there is none to look for.
  if (line.no_label_colon_from <= width + 2) return false;
  const std::size_t at = EmbeddedLabel(line.text, width, own, 0);
  if (at == std::string_view::npos) return false;
  fragment_.assign(line.text.substr(0, at));
  fragment_line_ = line;
  fragment_task_ = own;
  fragment_width_ = width;
  has_fragment_ = true;
  Process({line.text.substr(at), line.offset + at, line.number}, static_cast<std::uint32_t>(line.text.size() - at), 0);
  return true;
}

bool LogParser::JoinFragment(const LineRef& line) {
  has_fragment_ = false;
  std::int32_t task = -1;
  const std::size_t width = LeadingLabelWidth(line.text, &task);
  if (width != fragment_width_ || task != fragment_task_) {  // its tail never came
    ++out_.malformed;
    return false;
  }
  const auto cite = static_cast<std::uint32_t>(fragment_.size());
  fragment_.append(line.text.substr(width + 2));
  ++out_.interleaved;
  Process({fragment_, fragment_line_.offset, fragment_line_.number}, cite, 1);
  return true;
}

}  // namespace denpex::engine
