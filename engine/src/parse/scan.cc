#include "parse/scan.h"

#include <bit>
#include <cstring>

#include "parse/event.h"

namespace denpex::engine {

namespace {

// The 8 bytes at p, the first in the lowest byte.
std::uint64_t Word(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native != std::endian::little) w = __builtin_bswap64(w);
  return w;
}

// Whether the bytes of w that `mask` keeps (whole bytes) are ASCII digits: each is 0x3_, and
// still is with 6 added (0x30..0x3f plus 6 stays under 0x100, so no sum carries into the next).
bool DigitBytes(std::uint64_t w, std::uint64_t mask) {
  constexpr std::uint64_t kHigh = 0xf0f0f0f0f0f0f0f0ull, kThrees = 0x3030303030303030ull;
  w &= mask;
  return (w & kHigh) == (kThrees & mask) &&
         ((w + (0x0606060606060606ull & mask)) & kHigh) == (kThrees & mask);
}

// `hh:mm:ss` from the 8 bytes at p, as one word, not three Digits reads and two Char ones:
// every c10, glog and syslog header holds one (~100 k in a 16k-rank abort). False where the
// word is not two digits, `:`, two digits, `:`, two digits.
bool ClockWord(const char* p, std::int64_t* h, std::int64_t* m, std::int64_t* sec) {
  constexpr std::uint64_t kDigits = 0xffff00ffff00ffffull;  // bytes 0, 1, 3, 4, 6, 7
  constexpr std::uint64_t kColons = 0x00003a00003a0000ull;  // bytes 2 and 5
  const std::uint64_t w = Word(p);
  if ((w & ~kDigits) != kColons || !DigitBytes(w, kDigits)) return false;
  const auto digit = [&](int k) { return static_cast<std::int64_t>(w >> (8 * k) & 0x0f); };
  *h = digit(0) * 10 + digit(1);
  *m = digit(3) * 10 + digit(4);
  *sec = digit(6) * 10 + digit(7);
  return true;
}

// The 8 ASCII digits at p as a number (the first the most significant); -1 where one is no digit.
// c10 prints nanoseconds (`08:52:02.123456789`): 8 of the 9 fraction digits in a few steps.
std::int64_t EightDigits(const char* p) {
  const std::uint64_t w = Word(p);
  if (!DigitBytes(w, ~std::uint64_t{0})) return -1;
  std::uint64_t v = w & 0x0f0f0f0f0f0f0f0full;              // a digit a byte
  v = (v * (10 << 8 | 1)) >> 8 & 0x00ff00ff00ff00ffull;     // two a 16-bit lane
  v = (v * (100 << 16 | 1)) >> 16 & 0x0000ffff0000ffffull;  // four a 32-bit lane
  return static_cast<std::int64_t>((v * (10000ull << 32 | 1)) >> 32);
}

}  // namespace

bool ScanTimeOfDay(Scanner* s, TimeNs* ns_of_day) {
  const std::string_view r = s->Rest();
  std::int64_t h, m, sec, frac = 0;
  // `hh:mm:ss` is 8 bytes: a shorter rest holds none.
  if (r.size() < 8 || !ClockWord(r.data(), &h, &m, &sec) || (r.size() > 8 && IsDigit(r[8])) ||
      h > 23 || m > 59 || sec > 60) {
    return false;
  }
  std::size_t i = 8;
  if (i + 1 < r.size() && (r[i] == '.' || r[i] == ',') && IsDigit(r[i + 1])) {
    ++i;
    int n = 0;
    if (i + 8 <= r.size()) {
      if (const std::int64_t eight = EightDigits(r.data() + i); eight >= 0)
        frac = eight, n = 8, i += 8;
    }
    for (; n < 9 && i < r.size() && IsDigit(r[i]); ++n, ++i) frac = frac * 10 + (r[i] - '0');
    while (i < r.size() && IsDigit(r[i])) ++i;  // finer than nanoseconds
    for (; n < 9; ++n) frac *= 10;
  }
  *ns_of_day = ((h * 60 + m) * 60 + sec) * kNsPerSec + frac;
  s->Skip(i);
  return true;
}

bool ScanDateTime(Scanner* s, TimeNs* out) {
  Scanner t = *s;
  std::int64_t y, mo, d;
  TimeNs tod;
  if (!t.Digits(4, 4, &y) || !t.Char('-') || !t.Digits(2, 2, &mo) || !t.Char('-') || !t.Digits(2, 2, &d)) {
    return false;
  }
  if (!(t.Char('T') || t.Char('_') || t.Char(' ')) || !ScanTimeOfDay(&t, &tod)) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970 || y > kMaxYear) return false;
  TimeNs zone = 0;
  if (t.Char('Z')) {
  } else if ((t.Peek() == '+' || t.Peek() == '-') && IsDigit(t.Peek(1))) {
    const bool plus = t.Peek() == '+';
    t.Skip(1);
    std::int64_t hh, mm = 0;
    if (t.Digits(4, 4, &hh)) {  // `+0000` (journalctl -o short-iso before systemd 250)
      mm = hh % 100;
      hh /= 100;
    } else {
      if (!t.Digits(2, 2, &hh)) return false;
      t.Char(':');
      t.Digits(2, 2, &mm);
    }
    zone = (hh * 3600 + mm * 60) * kNsPerSec * (plus ? 1 : -1);
  }
  *out = DaysFromCivil(static_cast<int>(y), static_cast<int>(mo), static_cast<int>(d)) * 86400 * kNsPerSec + tod - zone;
  *s = t;
  return true;
}

bool YearlessTime(std::int64_t month, std::int64_t day, TimeNs ns_of_day, TimeNs* out) {
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  *out = DaysFromCivil(kPlaceholderYear, static_cast<int>(month), static_cast<int>(day)) * 86400 * kNsPerSec +
         ns_of_day;
  return true;
}

bool IntAfter(std::string_view s, std::string_view key, std::int64_t* v) {
  Scanner sc(s);
  return sc.SkipPast(key) && sc.Int(v);
}

std::string_view TokenAfter(std::string_view s, std::string_view key, std::string_view stops) {
  Scanner sc(s);
  return sc.SkipPast(key) ? sc.Token(stops) : std::string_view();
}

}  // namespace denpex::engine
