// --deep (engine/src/checkpoint/deep.cc): NaN/Inf in every floating-point element type, and
// on real files torch.save wrote after a divergence (fixtures/torch/make.py: model_nan.pt,
// optimizer_nan.pt, bf16_inf.pt, model_nan.safetensors), named by the tensor that holds it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "checkpoint/byte_file.h"
#include "checkpoint/deep.h"
#include "checkpoint/layouts.h"
#include "checkpoint/pickle.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/torch_file.h"
#include "denpex/engine/checkpoint.h"
#include "support/cpu_time.h"
#include "writers.h"

namespace denpex::engine::ckpt {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

const fs::path kFixtures = fs::path(DENPEX_SOURCE_DIR) / "tests/checkpoint/fixtures/torch";

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  std::string out(v.size() * sizeof(T), '\0');
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::optional<NonFinite> Find(const std::string& b, FloatKind k) {
  return FindNonFinite(b.data(), b.size() / FloatKindSize(k), k);
}

Finding DeepTorch(const std::string& bytes, const DeepReader::Progress* progress = nullptr) {
  DeepReader deep(progress);
  return CheckTorchFile(ByteFile::FromBytes(bytes), &deep);
}

TEST(Deep, FloatNaNAndInfAreFoundAtTheirIndexAndFiniteExtremesAreNot) {
  std::vector<float> f(5000, 1.0f);
  f[0] = std::numeric_limits<float>::max();
  f[1] = std::numeric_limits<float>::denorm_min();
  f[2] = -0.0f;
  EXPECT_FALSE(Find(Bytes(f), FloatKind::kF32));
  f[4097] = -std::numeric_limits<float>::infinity();
  auto hit = Find(Bytes(f), FloatKind::kF32);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->element, 4097u);
  EXPECT_FALSE(hit->nan);
  f[300] = std::nanf("");
  hit = Find(Bytes(f), FloatKind::kF32);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->element, 300u);
  EXPECT_TRUE(hit->nan);

  std::vector<double> d(10, 1e308);
  EXPECT_FALSE(Find(Bytes(d), FloatKind::kF64));
  d[7] = std::nan("");
  ASSERT_TRUE(Find(Bytes(d), FloatKind::kF64));
  EXPECT_EQ(Find(Bytes(d), FloatKind::kF64)->element, 7u);
}

TEST(Deep, HalfBfloatAndFloat8SpellNonFiniteTheirOwnWay) {
  // f16: 0x7bff is 65504 (finite), 0x7c00 Inf, 0x7e00 NaN; bf16: 0x7f7f finite, 0x7f80 Inf.
  std::vector<std::uint16_t> h = {0x3c00, 0x7bff, 0xfbff, 0x0001};
  EXPECT_FALSE(Find(Bytes(h), FloatKind::kF16));
  h.push_back(0xfc00);
  EXPECT_EQ(Find(Bytes(h), FloatKind::kF16)->element, 4u);
  EXPECT_FALSE(Find(Bytes(h), FloatKind::kF16)->nan);
  std::vector<std::uint16_t> b = {0x3f80, 0x7f7f, 0xff7f};
  EXPECT_FALSE(Find(Bytes(b), FloatKind::kBF16));
  b.push_back(0x7fc0);
  EXPECT_TRUE(Find(Bytes(b), FloatKind::kBF16)->nan);
  // e4m3fn: 0x7e is 448 (finite), 0x7f NaN; e5m2: 0x7b finite, 0x7c Inf; fnuz: 0x80 NaN.
  EXPECT_FALSE(Find(std::string("\x7e\xfe\x01", 3), FloatKind::kF8E4M3FN));
  EXPECT_EQ(Find(std::string("\x7e\xff", 2), FloatKind::kF8E4M3FN)->element, 1u);
  EXPECT_FALSE(Find(std::string("\x7b\xfb", 2), FloatKind::kF8E5M2));
  EXPECT_EQ(Find(std::string("\x7b\x7c", 2), FloatKind::kF8E5M2)->element, 1u);
  EXPECT_FALSE(Find(std::string("\x7f\xff", 2), FloatKind::kF8Fnuz));
  EXPECT_TRUE(Find(std::string("\x00\x80", 2), FloatKind::kF8Fnuz));
  // Integers are never scanned.
  EXPECT_EQ(FloatKindOfStorage("torch.LongStorage"), FloatKind::kNotFloat);
  EXPECT_EQ(FloatKindOfStorage("torch.BFloat16Storage"), FloatKind::kBF16);
  EXPECT_EQ(FloatKindOfDtype("I64"), FloatKind::kNotFloat);
  EXPECT_EQ(FloatKindOfDtype("F16"), FloatKind::kF16);
}

TEST(Deep, RealFilesSavedAfterADivergenceAreCorruptAndNameTheTensor) {
  struct Case {
    const char* file;
    const char* tensor;
    const char* value;
  };
  for (const Case& c : {Case{"model_nan.pt", "'0.weight'", "NaN at element 6"},
                        Case{"optimizer_nan.pt", "'state.0.exp_avg_sq'", "NaN at element 5"},
                        Case{"bf16_inf.pt", "'emb'", "Inf at element 1"}}) {
    const std::string bytes = Slurp(kFixtures / c.file);
    EXPECT_EQ(CheckTorchFile(ByteFile::FromBytes(bytes)).verdict, V::kValid) << c.file;
    const Finding deep = DeepTorch(bytes);
    EXPECT_EQ(deep.verdict, V::kCorrupt) << c.file;
    EXPECT_NE(deep.detail.find(std::string("tensor ") + c.tensor), std::string::npos) << deep.detail;
    EXPECT_NE(deep.detail.find(c.value), std::string::npos) << deep.detail;
  }
  const ByteFile st = ByteFile::FromBytes(Slurp(kFixtures / "model_nan.safetensors"));
  EXPECT_EQ(CheckSafetensorsFile(st).verdict, V::kValid);
  DeepReader deep;
  const Finding f = deep.Safetensors(st);
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("tensor '0.weight' holds NaN at element 6"), std::string::npos)
      << f.detail;
}

TEST(Deep, CleanRealFilesPassAndEveryByteIsReportedToProgress) {
  for (const char* name : {"model.pt", "optimizer.pt", "mixed.pt", "lightning.ckpt",
                           "model_optim_rng.pt", "zero_pp_rank_0_mp_rank_00_optim_states.pt"}) {
    std::uint64_t seen = 0;
    const DeepReader::Progress progress = [&seen](std::uint64_t n) { seen += n; };
    const Finding f = DeepTorch(Slurp(kFixtures / name), &progress);
    EXPECT_EQ(f.verdict, V::kValid) << name << ": " << f.detail;
    EXPECT_NE(f.detail.find("hold no NaN/Inf"), std::string::npos) << f.detail;
    EXPECT_GT(seen, 0u) << name;
  }
  DeepReader deep;
  const Finding st = deep.Safetensors(ByteFile::FromBytes(Slurp(kFixtures / "model.safetensors")));
  EXPECT_EQ(st.verdict, V::kValid) << st.detail;
}

TEST(Deep, ANaNPastTheFirstChunkIsFoundWithItsIndexInTheStorage) {
  const std::uint64_t numel = 3 * kDeepChunk / 4 + 17;  // three chunks' worth of floats
  std::vector<float> w(numel, 0.5f);
  w[numel - 3] = std::nanf("");
  const std::string bytes = TorchZip(
      "big", Dict({{Str("model"), Dict({{Str("layer.weight"), Tensor("0", numel)}})}}),
      {Bytes(w)});
  const Finding f = DeepTorch(bytes);
  EXPECT_EQ(f.verdict, V::kCorrupt);
  EXPECT_NE(f.detail.find("tensor 'model.layer.weight' holds NaN at element " +
                          Thousands(numel - 3)),
            std::string::npos)
      << f.detail;
}

TEST(Deep, PastItsBudgetTheReaderSkipsWholeRecordsAndSaysSo) {
  std::vector<float> a(1 << 18, 1.0f), b(1 << 18, 2.0f);
  b[7] = std::nanf("");
  const std::string bytes =
      TorchZip("m", Dict({{Str("a"), Tensor("0", 1 << 18)}, {Str("b"), Tensor("1", 1 << 18)}}),
               {Bytes(a), Bytes(b)});
  DeepReader capped(nullptr, 1'200'000);  // room for the small records and `a`, not `b`
  const Finding f = CheckTorchFile(ByteFile::FromBytes(bytes), &capped);
  EXPECT_EQ(f.verdict, V::kValid) << f.detail;
  EXPECT_NE(f.detail.find("1,048,576 bytes not read (past the 1,200,000-byte budget"),
            std::string::npos)
      << f.detail;
  EXPECT_EQ(capped.skipped_bytes(), 1u << 20);
  EXPECT_EQ(DeepTorch(bytes).verdict, V::kCorrupt);  // no budget: the NaN is found
}

// 50,000 dicts nested by memo ({"a": {"a": ... {"a": <storage>}}}): the walk is linear and the
// name keeps its last 64 parts.
TEST(Deep, ADeeplyNestedPickleIsWalkedInLinearTimeAndItsNameIsCapped) {
  auto le32 = [](std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
  const std::string key = "\x8c\x01" "a";
  std::string b = "\x80\x02}r" + le32(0);
  constexpr std::uint32_t kDepth = 50'000;
  for (std::uint32_t i = 1; i <= kDepth; ++i) b += key + "}r" + le32(i) + "s0j" + le32(i);
  b += key + "(\x8c\x07storage" "ctorch\nFloatStorage\n\x8c\x01" "0\x8c\x03" "cpuK\x04tQs0j" + le32(0) + ".";
  const Pickle p = RunPickle(b);
  ASSERT_TRUE(p.ok()) << p.error_detail;
  const double t0 = testing::CpuSeconds();
  const std::vector<PickledTensor> tensors = PickledTensors(p);
  const double secs = testing::CpuSeconds() - t0;
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(tensors[0].storage_key, "0");
  std::string name = "...a";  // the last 64 of 50,001 parts
  for (int k = 1; k < 64; ++k) name += ".a";
  EXPECT_EQ(tensors[0].name, name);
  EXPECT_LT(secs, testing::CpuBound(1.0));
}

TEST(Deep, ADcpItemIsNamedByItsFqn) {
  TempDir t;
  std::vector<float> w(64, 1.0f);
  w[9] = std::numeric_limits<float>::infinity();
  const std::string item = TorchZip("0", Tensor("0", 64), {Bytes(w)});
  Put(t.path() / "__0_0.distcp", item);
  Put(t.path() / ".metadata", DcpMetadata({{"__0_0.distcp", 0, item.size()}}));
  auto shallow = VerifyCheckpointDir(t.path(), {});
  ASSERT_TRUE(shallow.ok());
  EXPECT_EQ(shallow->outcome.decision(), v1::CHECKPOINT_DECISION_RESUME);
  auto deep = VerifyCheckpointDir(t.path(), {.deep = true});
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(deep->outcome.decision(), v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT)
      << RenderCheckpointText(*deep);
  EXPECT_NE(RenderCheckpointText(*deep).find("tensor '0' holds Inf at element 9"),
            std::string::npos)
      << RenderCheckpointText(*deep);
}

TEST(Deep, AStepSavedAfterADivergenceIsPassedOverForTheOlderOne) {
  TempDir t;
  Put(t.path() / "step_100/model.pt", Slurp(kFixtures / "model.pt"));
  Put(t.path() / "step_100/optimizer.pt", Slurp(kFixtures / "optimizer.pt"));
  Put(t.path() / "step_200/model.pt", Slurp(kFixtures / "model.pt"));
  Put(t.path() / "step_200/optimizer.pt", Slurp(kFixtures / "optimizer_nan.pt"));
  Put(t.path() / "step_300/model.safetensors", Slurp(kFixtures / "model_nan.safetensors"));
  Put(t.path() / "latest", "step_300\n");
  auto shallow = VerifyCheckpointDir(t.path(), {});
  ASSERT_TRUE(shallow.ok());
  EXPECT_EQ(shallow->outcome.path(), "step_300");
  auto deep = VerifyCheckpointDir(t.path(), {.deep = true});
  ASSERT_TRUE(deep.ok());
  const std::string text = RenderCheckpointText(*deep);
  EXPECT_EQ(deep->outcome.decision(), v1::CHECKPOINT_DECISION_RESUME) << text;
  EXPECT_EQ(deep->outcome.path(), "step_100") << text;
  EXPECT_NE(text.find("step_200/optimizer.pt: tensor 'state.0.exp_avg_sq' holds NaN"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("step_300/model.safetensors: tensor '0.weight' holds NaN"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace denpex::engine::ckpt
