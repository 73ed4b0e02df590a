// The checkpoint verifier's JSON pull reader (engine/src/checkpoint/json.h), and the safetensors
// header it streams: JSON read exactly, nesting bounded without recursion, a large header in
// time and memory linear in its size.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "checkpoint/byte_file.h"
#include "checkpoint/json.h"
#include "checkpoint/safetensors.h"

namespace denpex::engine::ckpt {
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
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  JsonReader fits(ok);
  EXPECT_TRUE(fits.Skip()) << fits.error();
}

std::string SafetensorsOf(int tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  for (int k = 0; k < tensors; ++k) {
    header += ",\"model.layers." + std::to_string(k) +
              ".self_attn.q_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[2,1],\"data_offsets\":[" +
              std::to_string(4 * k) + "," + std::to_string(4 * k + 4) + "]}";
  }
  header += "}";
  std::string len(8, '\0');
  for (int k = 0; k < 8; ++k) len[k] = static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return len + header + std::string(4 * static_cast<std::size_t>(tensors), '\0');
}

// A 14 MB header of 150,000 tensors. (Parsed into a JSON tree, a 40 MB header of 400,000 took
// 21.6 s and 547 MB; streamed, 0.3 s of CPU and 67 MB.)
TEST(JsonReader, ALargeSafetensorsHeaderIsReadInLinearTime) {
  const std::string file = SafetensorsOf(150'000);
  const auto t0 = std::chrono::steady_clock::now();
  const Finding f = CheckSafetensorsFile(ByteFile::FromBytes(file));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(f.verdict, CheckpointVerdict::kValid) << f.detail;
  EXPECT_NE(f.detail.find("150000 tensors"), std::string::npos) << f.detail;
  EXPECT_LT(secs, 2.0);
}

TEST(JsonReader, AGapInTheSafetensorsDataNamesItsTensor) {
  std::string file = SafetensorsOf(3);
  const std::string from = "\"data_offsets\":[4,8]", to = "\"data_offsets\":[5,9]";
  file.replace(file.find(from), from.size(), to);
  const Finding f = CheckSafetensorsFile(ByteFile::FromBytes(file));
  EXPECT_EQ(f.verdict, CheckpointVerdict::kCorrupt);
  EXPECT_NE(f.detail.find("tensor 'model.layers.1.self_attn.q_proj.weight' starts at 5"),
            std::string::npos)
      << f.detail;
}

}  // namespace
}  // namespace denpex::engine::ckpt
