#include "denpex/common/time.h"

#include <gtest/gtest.h>

namespace denpex {
namespace {

TEST(Time, Rfc3339RoundTripsWithNanoseconds) {
  auto t = ParseRfc3339("2026-03-02T09:17:03.123456789Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(FormatRfc3339(*t), "2026-03-02T09:17:03.123456789Z");
}

TEST(Time, Rfc3339AcceptsOffsetsAndShortFractions) {
  EXPECT_EQ(ParseRfc3339("2026-03-02T10:17:03.5+01:00"), ParseRfc3339("2026-03-02T09:17:03.500Z"));
  EXPECT_EQ(ParseRfc3339("1970-01-01 00:00:01Z"), kNsPerSec);
}

TEST(Time, Rfc3339RejectsGarbage) {
  EXPECT_FALSE(ParseRfc3339("2026-13-02T09:17:03Z").has_value());
  EXPECT_FALSE(ParseRfc3339("yesterday").has_value());
  EXPECT_FALSE(ParseRfc3339("2026-03-02T09:17:03Zjunk").has_value());
}

// Nanoseconds since 1970 in 64 bits hold the years 1678-2261: a stamp outside them is no time
// (found by json_fuzz as a signed overflow).
TEST(Time, Rfc3339RejectsYearsNanosecondsCannotHold) {
  EXPECT_FALSE(ParseRfc3339("9999-01-01T00:00:00Z").has_value());
  EXPECT_FALSE(ParseRfc3339("0001-01-01T00:00:00Z").has_value());
  EXPECT_TRUE(ParseRfc3339("2261-12-31T23:59:59Z").has_value());
  EXPECT_TRUE(ParseRfc3339("1678-01-01T00:00:00Z").has_value());
}

TEST(Time, CivilConversionHandlesLeapYears) {
  CivilTime c{.year = 2028, .month = 2, .day = 29, .hour = 23, .minute = 59, .second = 59};
  EXPECT_EQ(ToCivil(FromCivil(c)).day, 29);
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
}

}  // namespace
}  // namespace denpex
