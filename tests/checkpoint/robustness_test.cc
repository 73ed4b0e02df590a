// Garbage and fuzzed files never crash the verifier and are never VALID by accident: random
// bytes, absurd declared lengths, offsets outside the file, and a deterministic randomized
// loop of mutations (truncation, bit flips, overwritten and inserted spans) over valid files.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "checkpoint/byte_file.h"
#include "checkpoint/pickle.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/torch_file.h"
#include "checkpoint/zip.h"
#include "denpex/engine/checkpoint.h"
#include "support/cpu_time.h"
#include "writers.h"

namespace denpex::engine::ckpt {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

// Every reader over the same bytes; returns the torch.save and safetensors verdicts.
std::pair<V, V> ReadAll(const std::string& bytes) {
  const ByteFile f = ByteFile::FromBytes(bytes);
  DeepReader deep;
  const V torch = CheckTorchFile(f, &deep).verdict;
  const V safe = CheckSafetensorsFile(f).verdict;
  (void)ReadZip(f, f.size(), std::nullopt);
  (void)ReadTorchObject(f);
  (void)RunPickle(bytes);
  return {torch, safe};
}

std::string Random(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::string Mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  switch (rng() % 5) {
    case 0:  // flip a few bits
      for (int k = 0, n = 1 + pick(8); k < n && !s.empty(); ++k)
        s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
      break;
    case 1: {  // overwrite a span with random bytes or 0xFF (saturated fields)
      const std::size_t at = pick(s.size()),
                        len = std::min<std::size_t>(1 + pick(16), s.size() - at);
      for (std::size_t k = 0; k < len; ++k)
        s[at + k] = (rng() & 1) ? '\xff' : static_cast<char>(rng());
      break;
    }
    case 2:  // insert random bytes
      s.insert(pick(s.size() + 1), Random(rng, 1 + pick(32)));
      break;
    case 3:  // zero a span (holes left by a crash)
      if (!s.empty()) {
        const std::size_t at = pick(s.size());
        std::fill(s.begin() + static_cast<std::ptrdiff_t>(at),
                  s.begin() + static_cast<std::ptrdiff_t>(std::min(s.size(), at + 1 + pick(512))),
                  '\0');
      }
      break;
    default:  // duplicate a chunk
      if (!s.empty()) {
        const std::size_t at = pick(s.size());
        s.insert(pick(s.size()), s.substr(at, 1 + pick(64)));
      }
  }
  return s;
}

TEST(Robustness, RandomBytesAreNeverValid) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 2000; ++k) {
    const std::string bytes = Random(rng, rng() % 300);
    auto [torch, safe] = ReadAll(bytes);
    ASSERT_NE(torch, V::kValid) << k;
    ASSERT_NE(safe, V::kValid) << k;
  }
}

TEST(Robustness, AbsurdDeclaredLengthsAreRejectedWithoutAllocating) {
  std::string st = "\xff\xff\xff\xff\xff\xff\xff\x7f{}";  // safetensors header of 2^63 bytes
  EXPECT_EQ(CheckSafetensorsFile(ByteFile::FromBytes(st)).verdict, V::kCorrupt);
  EXPECT_EQ(RunPickle("\x80\x02X\xff\xff\xff\xff").error, PickleError::kTruncated);
  EXPECT_EQ(RunPickle(std::string("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xff", 11)).error,
            PickleError::kTruncated);
  EXPECT_EQ(RunPickle("\x80\x02\x8b\xff\xff\xff\x7f").error, PickleError::kTruncated);
  std::string nested = "\x80\x02" + std::string(100000, ']') + std::string(99999, 'a') + ".";
  EXPECT_TRUE(RunPickle(nested).ok());
  std::string deep_json = Safetensors({{"a", "F32", {1}}});
  const std::string bomb = "{\"x\":" + std::string(5000, '[') + std::string(5000, ']') + "}";
  std::string len(8, '\0');
  for (int k = 0; k < 8; ++k) len[k] = static_cast<char>((bomb.size() >> (8 * k)) & 0xFF);
  EXPECT_NE(CheckSafetensorsFile(ByteFile::FromBytes(len + bomb)).verdict, V::kValid);
}

std::string SafetensorsWithHeader(const std::string& header) {
  std::string len(8, '\0');
  for (int k = 0; k < 8; ++k) len[k] = static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return len + header;
}

double SecondsOf(const std::function<void()>& f) {
  const double t0 = testing::CpuSeconds();
  f();
  return testing::CpuSeconds() - t0;
}

// A 200 KB header of 100,000 levels, or an unterminated one, is refused in one linear pass
// (protobuf's JSON parser is quadratic in depth and would hang `diagnose`, which verifies an
// incident's checkpoints/).
TEST(Robustness, DeeplyNestedOrUnterminatedJsonIsCorruptInLinearTime) {
  const std::string deep = "{\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string open = "{\"x\":" + std::string(200000, '[');
  for (const std::string* header : {&deep, &open}) {
    Finding f;
    const double secs = SecondsOf([&] { f = CheckSafetensorsFile(ByteFile::FromBytes(SafetensorsWithHeader(*header))); });
    EXPECT_EQ(f.verdict, V::kCorrupt) << f.detail;
    EXPECT_LT(secs, testing::CpuBound(0.5));
  }
  EXPECT_NE(CheckSafetensorsFile(ByteFile::FromBytes(SafetensorsWithHeader(deep))).detail.find("nested deeper than 128"),
            std::string::npos);
  // Strings hide brackets; a real header of modest depth still parses.
  const std::string ok = "{\"__metadata__\":{\"note\":\"[[[{{{\\\"\"},\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
                         "\"data_offsets\":[0,4]}}";
  EXPECT_EQ(CheckSafetensorsFile(ByteFile::FromBytes(SafetensorsWithHeader(ok) + "abcd")).verdict, V::kValid);
  // Orbax's metadata goes through the same reader, in a directory as `diagnose` verifies it.
  TempDir t;
  Put(t.path() / "3" / "_CHECKPOINT_METADATA", "{\"commit_timestamp_nsecs\":" + std::string(100000, '[') + "1" +
                                                   std::string(100000, ']') + "}");
  const double secs = SecondsOf([&] { ASSERT_TRUE(VerifyCheckpointDir(t.path(), {}).ok()); });
  EXPECT_LT(secs, testing::CpuBound(0.5));
}

TEST(Robustness, PickleNestingIsCapped) {
  const Pickle marks = RunPickle("\x80\x02" + std::string(kMaxPickleDepth + 5, '(') + ".");
  EXPECT_EQ(marks.error, PickleError::kUnsupported);
  EXPECT_NE(marks.error_detail.find("nested deeper"), std::string::npos) << marks.error_detail;
}

// A byte per empty list, or a memoized string joined again and again by STACK_GLOBAL (a 2 MB
// `.metadata` could reach 20 GB unbounded): the machine stops at twice the input and the slack.
TEST(Robustness, PickleMemoryIsBoundedByItsInput) {
  const Pickle lists = RunPickle("\x80\x02" + std::string(4'000'000, ']') + "N.");
  EXPECT_EQ(lists.error, PickleError::kUnsupported);
  EXPECT_NE(lists.error_detail.find("MiB of memory"), std::string::npos) << lists.error_detail;

  using namespace std::string_literals;
  std::string amp = "\x80\x02X\x40\x42\x0f\0"s + std::string(1'000'000, 'A') + "q\0" "0"s;
  for (int k = 0; k < 200'000; ++k) amp += "h\0h\0\x93" "0"s;
  amp += "N.";
  Pickle joined;
  const double secs = SecondsOf([&] { joined = RunPickle(amp); });
  EXPECT_EQ(joined.error, PickleError::kUnsupported);
  EXPECT_NE(joined.error_detail.find("MiB of memory"), std::string::npos) << joined.error_detail;
  EXPECT_LT(secs, testing::CpuBound(1.0));
}

TEST(Robustness, ZipOffsetsOutsideTheFileAreCorrupt) {
  ZipOptions plain;
  plain.zip64 = false;
  std::string z = TorchZip("a", Dict({}), {"x"}, plain);
  z[z.size() - 6 + 3] = '\x7f';  // EOCD cd_offset
  EXPECT_EQ(CheckTorchFile(ByteFile::FromBytes(z)).verdict, V::kCorrupt);
  std::string entries = TorchZip("a", Dict({}), {"x"}, plain);
  entries[entries.size() - 12] = '\xff';  // EOCD entry count 0xFFFF without ZIP64
  entries[entries.size() - 11] = '\xff';
  EXPECT_EQ(CheckTorchFile(ByteFile::FromBytes(entries)).verdict, V::kCorrupt);
}

TEST(Robustness, MutatedValidFilesNeverCrashAndTruncationsAreNeverValid) {
  const std::vector<std::string> seeds = {
      TorchState("step_1", {{"step", 1}, {"dp_world_size", 8}}),
      [] {
        ZipOptions o;
        o.saturate = true;
        return TorchZip("big", Dict({{Str("k"), Int(1)}}), {"abc", "defg"}, o);
      }(),
      LegacyTorch(8),
      Safetensors({{"a", "F32", {3, 2}}, {"b", "I64", {2}}}),
      DcpMetadata({{"__0_0.distcp", 0, 700}, {"__1_0.distcp", 0, 0}}),
      PickleBytes(Dict({{Str("args"), Object("argparse.Namespace", Dict({{Str("tp"), Int(2)}}))}})),
  };
  std::mt19937_64 rng(20260302);
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    for (int k = 0; k < 1500; ++k) {
      std::string bytes = seeds[s];
      for (int m = 0, n = 1 + static_cast<int>(rng() % 3); m < n; ++m)
        bytes = Mutate(std::move(bytes), rng);
      (void)ReadAll(bytes);
      const std::string cut = seeds[s].substr(0, rng() % seeds[s].size());
      auto [torch, safe] = ReadAll(cut);
      ASSERT_NE(torch, V::kValid) << "seed " << s << " cut at " << cut.size();
      ASSERT_NE(safe, V::kValid) << "seed " << s << " cut at " << cut.size();
    }
  }
}

TEST(Robustness, GarbageInEveryLayoutIsNeverChosen) {
  TempDir t;
  std::mt19937_64 rng(3);
  const fs::path root = t.path();
  Put(root / "step_9.pt", Random(rng, 5000));
  Put(root / "step_8.safetensors", Random(rng, 5000));
  Put(root / "step_7" / ".metadata", Random(rng, 300));
  Put(root / "step_7" / "__0_0.distcp", Random(rng, 300));
  Put(root / "global_step6" / "mp_rank_00_model_states.pt", Random(rng, 300));
  Put(root / "global_step6" / "zero_pp_rank_0_mp_rank_00_optim_states.pt",
      "PK\x03\x04" + Random(rng, 300));
  Put(root / "iter_0000005" / "mp_rank_00" / "model_optim_rng.pt", Random(rng, 300));
  Put(root / "checkpoint-4" / "trainer_state.json", "{\"global_step\": ");
  Put(root / "3" / "commit_success.txt", Random(rng, 10));
  Put(root / "3" / "_CHECKPOINT_METADATA", Random(rng, 10));
  Put(root / "iter_0000002" / "metadata.json", Random(rng, 40));
  Put(root / "latest", Random(rng, 50));
  Put(root / "latest_checkpointed_iteration.txt", Random(rng, 5));
  auto r = VerifyCheckpointDir(root, {.world_size = 1, .deep = true});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->outcome.decision(), v1::CHECKPOINT_DECISION_RESUME) << RenderCheckpointText(*r);
  for (const auto& c : r->candidates) EXPECT_NE(c.verdict, V::kValid) << c.path;
}

}  // namespace
}  // namespace denpex::engine::ckpt
