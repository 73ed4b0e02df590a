// The JSON pull reader (denpex/common/json_reader.h): JSON read exactly, errors that say where,
// nesting bounded without recursion.
#include "denpex/common/json_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace denpex {
namespace {

TEST(JsonReader, ReadsKeysStringsCountsAndSkipsTheRest) {
  JsonReader r(R"( {"a\u00e9\"b": "x\\y\n", "n": [0, 9007199254740992], "o": {"k": [true, null, -1.5e3, "s"]}, "z": {}} )");
  ASSERT_TRUE(r.BeginObject());
  EXPECT_EQ(r.NextKey().value_or(""), "a\xc3\xa9\"b");
  EXPECT_EQ(r.String().value_or(""), "x\\y\n");
  EXPECT_EQ(r.NextKey().value_or(""), "n");
  ASSERT_TRUE(r.BeginArray());
  ASSERT_TRUE(r.NextElement());
  EXPECT_EQ(r.Count().value_or(1), 0u);
  ASSERT_TRUE(r.NextElement());
  EXPECT_EQ(r.Count().value_or(0), 9007199254740992u);
  EXPECT_FALSE(r.NextElement());
  EXPECT_EQ(r.NextKey().value_or(""), "o");
  EXPECT_TRUE(r.Skip());
  EXPECT_EQ(r.NextKey().value_or(""), "z");
  EXPECT_TRUE(r.Skip());
  EXPECT_FALSE(r.NextKey().has_value());
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r.AtEnd());
}

TEST(JsonReader, TokenReadsNumbersAndLiteralsAsWritten) {
  JsonReader r(R"([-12, 1.5e3, 1754000000123456789, true, null, "s"])");
  ASSERT_TRUE(r.BeginArray());
  for (std::string_view want : {"-12", "1.5e3", "1754000000123456789", "true", "null"}) {
    ASSERT_TRUE(r.NextElement());
    EXPECT_EQ(r.Token().value_or(""), want);
  }
  ASSERT_TRUE(r.NextElement());
  EXPECT_FALSE(r.Token().has_value());  // a string is no token
  EXPECT_FALSE(r.ok());
}

TEST(JsonReader, SurrogatePairsDecodeToOneCodePoint) {
  JsonReader r(R"("\ud83d\ude00")");
  EXPECT_EQ(r.String().value_or(""), "\xf0\x9f\x98\x80");
}

TEST(JsonReader, ErrorsSayWhatAndWhereAndStopTheReader) {
  for (const char* bad : {R"({"a" 1})", R"({"a": 1 "b": 2})", R"({"a": "unterminated)",
                          R"({"a": "\q"})", R"({"a": [1,})"}) {
    JsonReader r(bad);
    r.BeginObject();
    while (r.NextKey()) r.Skip();
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().find(" at byte "), std::string::npos) << r.error();
    EXPECT_FALSE(r.NextKey().has_value());
  }
  JsonReader fraction("1.5");
  EXPECT_FALSE(fraction.Count().has_value());
  JsonReader huge("9007199254740993");
  EXPECT_FALSE(huge.Count().has_value());
}

TEST(JsonReader, SkipBoundsNestingWithoutRecursion) {
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  JsonReader r(deep);
  EXPECT_FALSE(r.Skip());
  EXPECT_NE(r.error().find("nested deeper than 128"), std::string::npos) << r.error();
  const std::string ok = std::string(JsonReader::kMaxDepth, '[') + std::string(JsonReader::kMaxDepth, ']');
  JsonReader fits(ok);
  EXPECT_TRUE(fits.Skip()) << fits.error();
}

}  // namespace
}  // namespace denpex
