// Scanner: a cursor over one line, shared by the recognisers. Every method consumes only on
// success, so a failed alternative leaves the cursor where it was. No allocation.
#pragma once

#include <cstdint>
#include <string_view>

#include "denpex/common/time.h"
#include "parse/simd.h"

namespace denpex::engine {

// What a recogniser says of a line: not its shape, parsed, or its shape with a field that does
// not parse (counted as malformed by the caller, which moves on).
enum class Match { kNo, kYes, kMalformed };

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Where `key` first occurs in `s` at or after `from` (npos: nowhere), as s.find(key, from).
// string_view::find runs memchr for the key's first byte and compares the key at each hit: a key
// that opens with a space (` rank `, ` commId `, ` store`) stops at every space of the line, ~120
// ns on a 150-byte line against ~10. Such a key is searched from its first byte that is not a
// space, and the spaces before that are checked.
inline std::size_t Find(std::string_view s, std::string_view key, std::size_t from = 0) {
  std::size_t lead = 0;
  while (lead < key.size() && key[lead] == ' ') ++lead;
  if (lead == 0 || lead == key.size()) return s.find(key, from);
  const std::string_view rest = key.substr(lead);
  for (std::size_t at = s.find(rest, from + lead); at != std::string_view::npos;
       at = s.find(rest, at + 1)) {
    if (s.substr(at - lead, lead) == key.substr(0, lead)) return at - lead;
  }
  return std::string_view::npos;
}
inline bool Has(std::string_view s, std::string_view key) {
  return Find(s, key) != std::string_view::npos;
}

inline bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsSeverity(char c) { return c == 'I' || c == 'W' || c == 'E' || c == 'F'; }

// 1-12 for an English month abbreviation (`Jan` .. `Dec`, as syslog, journald and `dmesg -T`
// print it), 0 for anything else.
inline int MonthOf(std::string_view abbrev) {
  constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (abbrev == kMonths[i]) return i + 1;
  }
  return 0;
}

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::string_view Rest() const { return s_.substr(pos_); }
  std::size_t pos() const { return pos_; }
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek(std::size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }

  bool Char(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool Lit(std::string_view lit) {
    if (!Rest().starts_with(lit)) return false;
    pos_ += lit.size();
    return true;
  }
  void SkipSpaces() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  void Skip(std::size_t n) { pos_ = n > s_.size() - pos_ ? s_.size() : pos_ + n; }
  // An unsigned decimal of min..max digits, not followed by another digit.
  bool Digits(int min, int max, std::int64_t* v) {
    std::int64_t x = 0;
    int n = 0;
    while (n < max && pos_ + n < s_.size() && IsDigit(s_[pos_ + n])) {
      x = x * 10 + (s_[pos_ + n] - '0');
      ++n;
    }
    if (n < min || (pos_ + n < s_.size() && IsDigit(s_[pos_ + n]))) return false;
    pos_ += n;
    *v = x;
    return true;
  }
  // A signed decimal (at most 18 digits).
  bool Int(std::int64_t* v) {
    const std::size_t start = pos_;
    const bool neg = Char('-');
    if (!Digits(1, 18, v)) {
      pos_ = start;
      return false;
    }
    if (neg) *v = -*v;
    return true;
  }
  // The text up to (not including) the first character of `stops`, or to the end.
  std::string_view Token(std::string_view stops) {
    const std::size_t start = pos_;
#ifdef DENPEX_X86
    // 16 bytes a step (SSE2, which every x86-64 has) while 16 are left in the line: a host, a
    // role or a number is read in one or two steps, not a byte and a compare per stop at a time.
    if (stops.size() <= 8) {
      for (; pos_ + 16 <= s_.size(); pos_ += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s_.data() + pos_));
        __m128i hit = _mm_setzero_si128();
        for (char x : stops) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8(x)));
        if (const int mask = _mm_movemask_epi8(hit); mask != 0) {
          pos_ += static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
          return s_.substr(start, pos_ - start);
        }
      }
    }
#endif
    if (stops.size() == 1) {  // most callers stop at a space: one compare a byte
      while (pos_ < s_.size() && s_[pos_] != stops[0]) ++pos_;
      return s_.substr(start, pos_ - start);
    }
    for (; pos_ < s_.size(); ++pos_) {
      const char c = s_[pos_];
      bool stop = false;
      for (char x : stops) stop |= c == x;  // a few stops: a loop beats a memchr per byte
      if (stop) break;
    }
    return s_.substr(start, pos_ - start);
  }
  // Moves past the first occurrence of `lit`.
  bool SkipPast(std::string_view lit) {
    const std::size_t at = Find(s_, lit, pos_);
    if (at == std::string_view::npos) return false;
    pos_ = at + lit.size();
    return true;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

// `hh:mm:ss[.f]` with 1..9 fraction digits (a `,` before them too: Python logging), as
// nanoseconds of the day.
bool ScanTimeOfDay(Scanner* s, TimeNs* ns_of_day);
// `YYYY-MM-DD` then `T`, `_` or ` `, then a time of day; as UTC (no zone is read).
bool ScanDateTime(Scanner* s, TimeNs* out);
// A yearless month/day plus time of day, placed in kPlaceholderYear.
bool YearlessTime(std::int64_t month, std::int64_t day, TimeNs ns_of_day, TimeNs* out);
// The integer after the first occurrence of `key` in `s`.
bool IntAfter(std::string_view s, std::string_view key, std::int64_t* v);
// The text after the first `key` in `s` up to one of `stops` (empty when `key` is absent).
std::string_view TokenAfter(std::string_view s, std::string_view key, std::string_view stops);

}  // namespace denpex::engine
