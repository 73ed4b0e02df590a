#include "denpex/common/time.h"

#include <cstdio>

namespace denpex {

std::int64_t DaysFromCivil(int y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

CivilTime ToCivil(TimeNs t) {
  std::int64_t secs = t / kNsPerSec;
  std::int64_t nanos = t % kNsPerSec;
  if (nanos < 0) { nanos += kNsPerSec; --secs; }
  std::int64_t days = secs / 86400;
  std::int64_t rem = secs % 86400;
  if (rem < 0) { rem += 86400; --days; }
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  CivilTime c;
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (c.month <= 2));
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>(rem / 60 % 60);
  c.second = static_cast<int>(rem % 60);
  c.nanos = nanos;
  return c;
}

TimeNs FromCivil(const CivilTime& c) {
  const std::int64_t days = DaysFromCivil(c.year, c.month, c.day);
  return ((days * 86400) + c.hour * 3600 + c.minute * 60 + c.second) * kNsPerSec + c.nanos;
}

namespace {
bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}
}  // namespace

std::optional<TimeNs> ParseRfc3339(std::string_view s) {
  CivilTime c;
  if (!Digits(s, 0, 4, &c.year) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &c.month) ||
      s[7] != '-' || !Digits(s, 8, 2, &c.day) || (s[10] != 'T' && s[10] != ' ') ||
      !Digits(s, 11, 2, &c.hour) || s[13] != ':' || !Digits(s, 14, 2, &c.minute) ||
      s[16] != ':' || !Digits(s, 17, 2, &c.second)) {
    return std::nullopt;
  }
  if (c.month < 1 || c.month > 12 || c.day < 1 || c.day > 31 || c.hour > 23 || c.minute > 59 ||
      c.second > 60 || c.year < kMinYear || c.year > kMaxYear) {
    return std::nullopt;
  }
  size_t pos = 19;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    ++pos;
    std::int64_t frac = 0;
    int ndig = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (ndig < 9) { frac = frac * 10 + (s[pos] - '0'); ++ndig; }
      ++pos;
    }
    if (ndig == 0) return std::nullopt;
    for (int i = ndig; i < 9; ++i) frac *= 10;
    c.nanos = frac;
  }
  std::int64_t offset_s = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' || s[pos] == 'z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int hh = 0, mm = 0;
      if (!Digits(s, pos + 1, 2, &hh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
          !Digits(s, pos + 4, 2, &mm)) {
        return std::nullopt;
      }
      offset_s = (hh * 3600 + mm * 60) * (s[pos] == '+' ? 1 : -1);
      pos += 6;
    } else {
      return std::nullopt;
    }
  }
  if (pos != s.size()) return std::nullopt;
  return FromCivil(c) - offset_s * kNsPerSec;
}

std::string FormatRfc3339(TimeNs t) {
  const CivilTime c = ToCivil(t);
  // Room for any int in each field (30 bytes are written): GCC cannot bound them where a
  // profile-guided build inlines this, and warns.
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", c.year, c.month, c.day,
                c.hour, c.minute, c.second, static_cast<long long>(c.nanos));
  return buf;
}

}  // namespace denpex
