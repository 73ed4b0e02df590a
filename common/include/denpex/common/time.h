// Time vocabulary: every timestamp inside Denpex is integer nanoseconds since the Unix
// epoch (UTC); durations are std::chrono::nanoseconds. Civil-time conversion is done with
// Howard Hinnant's days-from-civil algorithm, so nothing depends on the process time zone.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace denpex {

using Nanos = std::chrono::nanoseconds;
using TimeNs = std::int64_t;  // ns since 1970-01-01T00:00:00Z

inline constexpr TimeNs kNsPerUs = 1'000;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerSec = 1'000'000'000;

struct CivilTime {
  int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  std::int64_t nanos = 0;  // 0..999'999'999
};

std::int64_t DaysFromCivil(int y, int m, int d);
// The years a TimeNs (signed 64-bit nanoseconds since 1970) can hold whole: a stamp outside them
// is no time (its nanoseconds would overflow).
inline constexpr int kMinYear = 1678;
inline constexpr int kMaxYear = 2261;
CivilTime ToCivil(TimeNs t);
TimeNs FromCivil(const CivilTime& c);

// "2026-03-02T09:00:00.123456789Z" (fraction digits as needed, 0..9). Accepts a trailing
// "Z" or "+HH:MM"/"-HH:MM" offset, and a space instead of "T".
std::optional<TimeNs> ParseRfc3339(std::string_view s);
// Always 9 fraction digits and a trailing Z: sorts as text in time order.
std::string FormatRfc3339(TimeNs t);

}  // namespace denpex
