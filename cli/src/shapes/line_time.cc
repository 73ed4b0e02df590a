// A line's own time, as a log collector would read it, for the shapes that order or stamp
// lines (interleaved, cri, journald, kubectl-ts, shared-daemons).
#include <array>
#include <cctype>

#include "shapes_internal.h"

namespace denpex::cli::shapes {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool Num(std::string_view s, size_t p, int n, int* v) {
  if (p + static_cast<size_t>(n) > s.size()) return false;
  int x = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[p + static_cast<size_t>(i)];
    if (c < '0' || c > '9') return false;
    x = x * 10 + (c - '0');
  }
  *v = x;
  return true;
}

// "hh:mm:ss" at p, then an optional [.,]fraction; sets *end past it.
bool Clock(std::string_view s, size_t p, CivilTime* c, size_t* end) {
  if (!Num(s, p, 2, &c->hour) || p + 8 > s.size() || s[p + 2] != ':' ||
      !Num(s, p + 3, 2, &c->minute) || s[p + 5] != ':' || !Num(s, p + 6, 2, &c->second)) {
    return false;
  }
  if (c->hour > 23 || c->minute > 59 || c->second > 60) return false;
  size_t q = p + 8;
  if (q < s.size() && (s[q] == '.' || s[q] == ',')) {
    std::int64_t ns = 0;
    int digits = 0;
    for (++q; q < s.size() && std::isdigit(static_cast<unsigned char>(s[q])); ++q) {
      if (digits++ < 9) ns = ns * 10 + (s[q] - '0');
    }
    for (; digits < 9; ++digits) ns *= 10;
    c->nanos = ns;
  }
  *end = q;
  return true;
}

bool ValidDate(const CivilTime& c) { return c.month >= 1 && c.month <= 12 && c.day >= 1 && c.day <= 31; }

// 2026-03-02T09:00:21.97Z, 2026-03-02 09:00:21,972, 2024-03-05_07:01:51, with an offset.
std::optional<TimeNs> Iso(std::string_view s, size_t p) {
  CivilTime c;
  if (!Num(s, p, 4, &c.year) || p + 19 > s.size() || s[p + 4] != '-' ||
      !Num(s, p + 5, 2, &c.month) || s[p + 7] != '-' || !Num(s, p + 8, 2, &c.day)) {
    return std::nullopt;
  }
  const char sep = s[p + 10];
  size_t end = 0;
  if ((sep != 'T' && sep != ' ' && sep != '_') || !ValidDate(c) || !Clock(s, p + 11, &c, &end)) {
    return std::nullopt;
  }
  TimeNs t = FromCivil(c);
  if (end + 6 <= s.size() && (s[end] == '+' || s[end] == '-') && s[end + 3] == ':') {
    int h = 0, m = 0;
    if (Num(s, end + 1, 2, &h) && Num(s, end + 4, 2, &m)) {
      const TimeNs off = (h * 60 + m) * 60 * kNsPerSec;
      t += s[end] == '+' ? -off : off;
    }
  }
  return t;
}

// c10 / glog: E1206 18:44:12.715298746 (month unpadded in c10: E626 is June 26), and glog
// with its year, W20261129 16:25:31.487046.
std::optional<TimeNs> Glog(std::string_view s, size_t p, int year) {
  const char l = s[p];
  if (l != 'I' && l != 'W' && l != 'E' && l != 'F') return std::nullopt;
  size_t q = p + 1;
  while (q < s.size() && q < p + 10 && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
  const size_t n = q - p - 1;
  if ((n != 3 && n != 4 && n != 8) || q >= s.size() || s[q] != ' ') return std::nullopt;
  CivilTime c{.year = year};
  int md = 0;
  if (n == 8) {
    Num(s, p + 1, 4, &c.year);
    Num(s, p + 5, 4, &md);
  } else {
    Num(s, p + 1, static_cast<int>(n), &md);
  }
  c.month = md / 100;
  c.day = md % 100;
  size_t end = 0;
  if (!ValidDate(c) || !Clock(s, q + 1, &c, &end)) return std::nullopt;
  return FromCivil(c);
}

// syslog "Mar  2 09:00:03" / journalctl "Mar 02 09:00:03"; dmesg -T "Wed Sep 29 07:12:20 2021".
std::optional<TimeNs> Syslog(std::string_view s, size_t p, int year) {
  if (p + 15 > s.size()) return std::nullopt;
  const bool weekday = p + 24 <= s.size() && s[p + 3] == ' ' &&
                       std::isupper(static_cast<unsigned char>(s[p + 4])) &&
                       std::isalpha(static_cast<unsigned char>(s[p + 1]));
  size_t m = p;
  if (weekday) {
    bool known = false;
    for (auto mon : kMonths) known = known || s.substr(p + 4, 3) == mon;
    if (known) m = p + 4;
  }
  CivilTime c{.year = year, .month = 0};
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (s.substr(m, 3) == kMonths[i]) c.month = static_cast<int>(i) + 1;
  }
  if (c.month == 0) return std::nullopt;
  if (m + 15 > s.size() || s[m + 3] != ' ') return std::nullopt;
  size_t d = m + 4;
  if (s[d] == ' ') ++d;
  int day = 0;
  if (Num(s, d, 2, &day)) {
    d += 2;
  } else if (Num(s, d, 1, &day)) {
    d += 1;
  } else {
    return std::nullopt;
  }
  c.day = day;
  size_t end = 0;
  if (d >= s.size() || s[d] != ' ' || !ValidDate(c) || !Clock(s, d + 1, &c, &end)) {
    return std::nullopt;
  }
  if (m != p && end + 5 <= s.size() && s[end] == ' ') {  // dmesg -T carries its year
    int y = 0;
    if (Num(s, end + 1, 4, &y)) c.year = y;
  }
  return FromCivil(c);
}

}  // namespace

std::optional<TimeNs> LineTime(std::string_view line, int year) {
  const size_t limit = std::min<size_t>(line.size(), 96);
  for (size_t p = 0; p < limit; ++p) {
    if (p > 0 && std::isalnum(static_cast<unsigned char>(line[p - 1]))) continue;
    const unsigned char c = static_cast<unsigned char>(line[p]);
    std::optional<TimeNs> t;
    if (std::isdigit(c)) {
      t = Iso(line, p);
    } else if (std::isupper(c)) {
      t = Glog(line, p, year);
      if (!t) t = Syslog(line, p, year);
    }
    if (t) return t;
  }
  return std::nullopt;
}

std::vector<TimeNs> ArrivalTimes(const std::vector<std::string_view>& lines, const Source& src) {
  std::vector<TimeNs> out(lines.size(), src.start_ns);
  std::optional<TimeNs> cur;
  size_t first = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (auto t = LineTime(lines[i], src.year)) {
      if (!cur) first = i;
      cur = t;
    }
    if (cur) out[i] = *cur;
  }
  if (first < lines.size()) {
    for (size_t i = 0; i < first; ++i) out[i] = out[first];
  }
  return out;
}

}  // namespace denpex::cli::shapes
