// The byte-level readers on real layouts: torch.save zip (ZIP64, padding, data descriptors),
// legacy torch.save, safetensors, and the pickle machine.
#include <gtest/gtest.h>

#include "checkpoint/byte_file.h"
#include "checkpoint/pickle.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/torch_file.h"
#include "checkpoint/zip.h"
#include "writers.h"

namespace denpex::engine::ckpt {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

Finding Torch(std::string bytes, bool deep = false) {
  DeepReader reader;
  return CheckTorchFile(ByteFile::FromBytes(std::move(bytes)), deep ? &reader : nullptr);
}
Finding Safe(std::string bytes) {
  return CheckSafetensorsFile(ByteFile::FromBytes(std::move(bytes)));
}

// Position of the n-th (0-based) occurrence of `needle`.
std::size_t Nth(const std::string& hay, std::string_view needle, int n) {
  std::size_t at = hay.find(needle);
  while (n-- > 0 && at != std::string::npos) at = hay.find(needle, at + 1);
  return at;
}

TEST(TorchZip, ATorchSaveFileVerifiesFromItsEndRecordsAndCentralDirectory) {
  const Finding f = Torch(TorchState("step_10", {{"step", 10}}));
  EXPECT_EQ(f.verdict, V::kValid) << f.detail;
  EXPECT_EQ(f.detail, "zip64, 7 records under step_10/, 1 storage of 256 bytes as data.pkl sizes them");
}

// The records of a real torch.save file (torch 1.13), in archive order.
std::vector<std::pair<std::string, std::string>> RealRecords(const std::string& fixture) {
  const auto f = ByteFile::FromBytes(
      Slurp(fs::path(DENPEX_SOURCE_DIR) / "tests/checkpoint/fixtures/torch" / fixture));
  const ZipRead z = ReadZip(f, f.size(), 0);
  EXPECT_TRUE(z.finding.ok()) << z.finding.detail;
  std::vector<std::pair<std::string, std::string>> out;
  for (const ZipEntry& e : z.archive.entries) out.push_back({e.name, *f.Read(e.data_offset, e.size)});
  return out;
}

TEST(TorchZip, EveryStorageOfARealFileHasTheSizeDataPklGivesIt) {
  auto records = RealRecords("mixed.pt");  // bf16, int64 and a view sharing a storage
  const Finding ok = Torch(Zip(records));
  EXPECT_EQ(ok.verdict, V::kValid) << ok.detail;
  EXPECT_NE(ok.detail.find("2 storages of 108 bytes"), std::string::npos) << ok.detail;
  // A storage record four bytes short, in an archive whose end records are intact.
  for (auto& [name, bytes] : records) {
    if (name == "mixed/data/1") bytes.resize(bytes.size() - 4);
  }
  Finding f = Torch(Zip(records));
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("mixed/data/1 holds 92 bytes; data.pkl says 12 x torch.LongStorage"),
            std::string::npos)
      << f.detail;
  // A storage record missing altogether.
  records = RealRecords("model.pt");
  std::erase_if(records, [](const auto& r) { return r.first == "model/data/2"; });
  f = Torch(Zip(records));
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("references storage 2"), std::string::npos) << f.detail;
  // data.pkl cut short inside an intact archive.
  records = RealRecords("model.pt");
  records[0].second.resize(records[0].second.size() / 2);
  f = Torch(Zip(records));
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("data.pkl does not parse"), std::string::npos) << f.detail;
}

TEST(Safetensors, ARealFileCoversItsBytesExactly) {
  const std::string bytes =
      Slurp(fs::path(DENPEX_SOURCE_DIR) / "tests/checkpoint/fixtures/torch/model.safetensors");
  EXPECT_EQ(Safe(bytes).verdict, V::kValid) << Safe(bytes).detail;
  EXPECT_EQ(Safe(bytes + std::string(4, '\0')).verdict, V::kCorrupt);
  EXPECT_EQ(Safe(bytes.substr(0, bytes.size() - 4)).verdict, V::kIncomplete);
}

TEST(TorchZip, PlainZipAndSaturatedZip64ExtraFieldsAreBothRead) {
  ZipOptions plain;
  plain.zip64 = false;
  EXPECT_EQ(Torch(TorchZip("a", Dict({}), {"xyz"}, plain)).verdict, V::kValid);
  ZipOptions big;  // what torch writes for records and offsets past 4 GiB
  big.saturate = true;
  const Finding f = Torch(TorchZip("a", Dict({}), {"xyz"}, big), /*deep=*/true);
  EXPECT_EQ(f.verdict, V::kValid) << f.detail;
}

TEST(TorchZip, KillDuringSaveTruncatesAtAnyOffsetAndIsNeverValid) {
  const std::string full = TorchState("step_15", {{"step", 15}}, 1024);
  for (std::size_t n = 0; n < full.size(); ++n) {
    const Finding f = Torch(full.substr(0, n));
    ASSERT_TRUE(f.verdict == V::kIncomplete || f.verdict == V::kCorrupt) << n << ": " << f.detail;
  }
  const Finding half = Torch(full.substr(0, full.size() / 2));
  EXPECT_EQ(half.verdict, V::kIncomplete);
  EXPECT_NE(half.detail.find("failed finding central directory"), std::string::npos) << half.detail;
  EXPECT_EQ(Torch("").verdict, V::kIncomplete);
  EXPECT_NE(Torch("").detail.find("Ran out of input"), std::string::npos);
}

TEST(TorchZip, AZeroFilledTailIsCorruptNotIncomplete) {
  std::string bytes = TorchState("x", {});
  std::fill(bytes.end() - 100, bytes.end(), '\0');
  const Finding f = Torch(bytes);
  EXPECT_EQ(f.verdict, V::kCorrupt) << f.detail;
  EXPECT_NE(f.detail.find("zeros"), std::string::npos);
}

TEST(TorchZip, CentralDirectoryOffsetsOutsideTheFileAreCorrupt) {
  std::string bytes = TorchState("x", {});
  const std::size_t z64 = bytes.rfind(std::string("PK\x06\x06", 4));
  bytes[z64 + 48 + 5] = '\x7f';  // cd_offset far beyond the end
  EXPECT_EQ(Torch(bytes).verdict, V::kCorrupt);
  std::string count = TorchState("x", {});
  count[count.rfind(std::string("PK\x06\x06", 4)) + 32 + 4] = '\x10';  // 2^32 more entries
  EXPECT_EQ(Torch(count).verdict, V::kCorrupt);
}

TEST(TorchZip, ADamagedLocalHeaderIsCorrupt) {
  std::string bytes = TorchState("x", {});
  bytes[Nth(bytes, std::string("PK\x03\x04", 4), 2)] = 'Q';
  const Finding f = Torch(bytes);
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("no local header"), std::string::npos) << f.detail;
}

TEST(TorchZip, BitRotPassesTheShallowCheckAndFailsTheDeepCrc) {
  std::string bytes = TorchState("x", {}, 4096);
  bytes[bytes.find("x/data/0") + 200] ^= 0x40;  // inside the storage record's data
  EXPECT_EQ(Torch(bytes).verdict, V::kValid);
  const Finding deep = Torch(bytes, true);
  EXPECT_EQ(deep.verdict, V::kCorrupt);
  EXPECT_NE(deep.detail.find("CRC-32"), std::string::npos);
}

TEST(TorchZip, RecordsWrittenWithCrcDisabledAreNotAFailure) {
  ZipOptions no_crc;
  no_crc.crc = false;
  const Finding f = Torch(TorchZip("a", Dict({}), {"data"}, no_crc), true);
  EXPECT_EQ(f.verdict, V::kValid);
  EXPECT_NE(f.detail.find("carry no CRC"), std::string::npos) << f.detail;
}

TEST(TorchZip, ArchivesTorchDidNotWriteAreCorrupt) {
  EXPECT_NE(Torch(Zip({{"leads.npy", "x"}})).detail.find("not in a subdirectory: leads.npy"),
            std::string::npos);
  EXPECT_EQ(Torch(Zip({{"a/data.pkl", "x"}, {"b/version", "3"}})).verdict, V::kCorrupt);
  EXPECT_EQ(Torch(Zip({{"a/version", "3"}})).verdict, V::kCorrupt);  // no data.pkl
  ZipOptions misaligned;
  misaligned.align = 24;
  const Finding f = Torch(TorchZip("a", Dict({}), {"s"}, misaligned));
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("storage alignment 64"), std::string::npos) << f.detail;
}

TEST(TorchZip, WrongMagicIsCorruptAndThePreviewFormatInconclusive) {
  EXPECT_NE(Torch("GIF89a....").detail.find("Invalid magic number"), std::string::npos);
  EXPECT_EQ(Torch("PYTORCH1 whatever").verdict, V::kInconclusive);
  EXPECT_EQ(Torch("PK\x03").verdict, V::kIncomplete);
}

TEST(TorchZip, ReadTorchObjectGivesTheFieldsOfDataPkl) {
  auto obj = ReadTorchObject(
      ByteFile::FromBytes(TorchState("m", {{"dp_world_size", 64}, {"global_steps", 123456}})));
  ASSERT_TRUE(obj.has_value());
  EXPECT_EQ(obj->GetInt(obj->root, "dp_world_size"), 64);
  EXPECT_EQ(obj->GetInt(obj->root, "global_steps"), 123456);
  EXPECT_FALSE(obj->GetInt(obj->root, "missing").has_value());
}

TEST(LegacyTorch, StorageBlocksAreWalkedWithSizesFromThePersistentIds) {
  const std::string full = LegacyTorch(16);
  EXPECT_EQ(Torch(full).verdict, V::kValid) << Torch(full).detail;
  const Finding cut = Torch(full.substr(0, full.size() - 3));
  EXPECT_EQ(cut.verdict, V::kIncomplete);
  EXPECT_NE(cut.detail.find("unexpected EOF"), std::string::npos) << cut.detail;
  for (std::size_t n = 1; n < full.size(); ++n) {
    ASSERT_EQ(Torch(full.substr(0, n)).verdict, V::kIncomplete) << n;
  }
  auto obj = ReadTorchObject(ByteFile::FromBytes(full));
  ASSERT_TRUE(obj.has_value());
  EXPECT_EQ(obj->GetInt(obj->root, "step"), 3);
}

TEST(LegacyTorch, AStorageSizeThatDisagreesWithThePickleIsCorrupt) {
  std::string bytes = LegacyTorch(16);
  const std::size_t blocks = bytes.size() - (8 + 64 + 8 + 8);
  bytes[blocks] = 17;
  EXPECT_EQ(Torch(bytes).verdict, V::kCorrupt);
}

TEST(LegacyTorch, AnotherProtocolVersionIsCorrupt) {
  std::string bytes = LegacyTorch(4);
  ASSERT_EQ(bytes.substr(15, 6), std::string("\x80\x02M\xe9\x03.", 6));  // pickle(1001)
  bytes[18] = '\xe8';
  const Finding f = Torch(bytes);
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("Invalid protocol version"), std::string::npos) << f.detail;
}

TEST(Safetensors, HeaderOffsetsAndExactSizeVerify) {
  const std::string full =
      Safetensors({{"a", "F32", {4, 4}}, {"b", "BF16", {3}}, {"c", "I64", {2, 2}}});
  EXPECT_EQ(Safe(full).verdict, V::kValid) << Safe(full).detail;
  for (std::size_t n = 0; n < full.size(); ++n)
    ASSERT_EQ(Safe(full.substr(0, n)).verdict, V::kIncomplete) << n;
  EXPECT_NE(Safe(full.substr(0, full.size() - 1)).detail.find("MetadataIncompleteBuffer"),
            std::string::npos);
  EXPECT_EQ(Safe(full + "tail").verdict, V::kCorrupt);
}

TEST(Safetensors, BadHeadersAreCorruptAndUnknownDtypesInconclusive) {
  std::string huge = Safetensors({{"a", "F32", {1}}});
  huge[5] = '\x01';  // a header length near 2^40
  EXPECT_NE(Safe(huge).detail.find("HeaderTooLarge"), std::string::npos);
  std::string not_json = Safetensors({{"a", "F32", {1}}});
  not_json[9] = '#';
  EXPECT_EQ(Safe(not_json).verdict, V::kCorrupt);
  std::string shape = Safetensors({{"a", "F32", {2, 2}}});
  shape.replace(shape.find("[2,2]"), 5, "[2,3]");
  EXPECT_NE(Safe(shape).detail.find("TensorInvalidInfo"), std::string::npos);
  std::string gap = Safetensors({{"a", "F32", {2}}, {"b", "F32", {2}}});
  gap.replace(gap.find("[8,16]"), 6, "[9,17]");
  EXPECT_NE(Safe(gap).detail.find("InvalidOffset"), std::string::npos);
  EXPECT_EQ(Safe(Safetensors({{"a", "F4", {2}}})).verdict, V::kInconclusive);
}

TEST(Pickle, DictsTuplesMemoAndDataclassesAreRead) {
  const std::string p2 =
      PickleBytes(Dict({{Str("k"), Int(-5)},
                        {Str("big"), Int(1LL << 40)},
                        {Str("again"), Str("k")},
                        {Str("args"), Object("argparse.Namespace", Dict({{Str("tp"), Int(8)}}))}}));
  Pickle p = RunPickle(p2);
  ASSERT_TRUE(p.ok()) << p.error_detail;
  EXPECT_EQ(p.end, p2.size());
  EXPECT_EQ(p.GetInt(p.root, "k"), -5);
  EXPECT_EQ(p.GetInt(p.root, "big"), 1LL << 40);
  EXPECT_EQ(p.Str(*p.Get(p.root, "again")), "k");  // recalled from the memo
  EXPECT_EQ(p.GetInt(*p.Get(p.root, "args"), "tp"), 8);

  const std::string p4 = DcpMetadata({{"__0_0.distcp", 0, 100}, {"__1_0.distcp", 100, 5}});
  Pickle q = RunPickle(p4);
  ASSERT_TRUE(q.ok()) << q.error_detail;
  int storage_infos = 0;
  for (auto d : q.dicts)
    storage_infos += q.Get({PyValue::Kind::kDict, 0, d}, "relative_path") != nullptr;
  EXPECT_EQ(storage_infos, 2);
}

TEST(Pickle, TruncatedUnsupportedAndMalformedInputsSayWhich) {
  const std::string p = PickleBytes(Dict({{Str("a"), Int(1)}}));
  for (std::size_t n = 0; n < p.size(); ++n)
    EXPECT_EQ(RunPickle(p.substr(0, n)).error, PickleError::kTruncated) << n;
  EXPECT_EQ(RunPickle("\x80\x02I1\n.").error, PickleError::kUnsupported);
  EXPECT_EQ(RunPickle("\x80\x02s.").error, PickleError::kMalformed);  // SETITEM on an empty stack
  EXPECT_EQ(RunPickle("\x80\x02h\x05.").error, PickleError::kMalformed);  // GET of nothing stored
}

}  // namespace
}  // namespace denpex::engine::ckpt
