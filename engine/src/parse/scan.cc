#include "parse/scan.h"

#include "parse/event.h"

namespace denpex::engine {

bool ScanTimeOfDay(Scanner* s, TimeNs* ns_of_day) {
  Scanner t = *s;
  std::int64_t h, m, sec, frac = 0;
  if (!t.Digits(2, 2, &h) || !t.Char(':') || !t.Digits(2, 2, &m) || !t.Char(':') || !t.Digits(2, 2, &sec) ||
      h > 23 || m > 59 || sec > 60) {
    return false;
  }
  if ((t.Peek() == '.' || t.Peek() == ',') && IsDigit(t.Peek(1))) {
    t.Skip(1);
    int n = 0;
    while (n < 9 && IsDigit(t.Peek())) {
      frac = frac * 10 + (t.Peek() - '0');
      t.Skip(1);
      ++n;
    }
    while (IsDigit(t.Peek())) t.Skip(1);  // finer than nanoseconds
    for (int i = n; i < 9; ++i) frac *= 10;
  }
  *ns_of_day = ((h * 60 + m) * 60 + sec) * kNsPerSec + frac;
  *s = t;
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
