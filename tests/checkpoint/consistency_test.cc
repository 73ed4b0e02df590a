// Tensors compared between files (engine/src/checkpoint/consistency.cc): the rank files of one
// step must agree where the layout splits evenly (DeepSpeed ZeRO partitions, Megatron tensor
// parallelism); a folder of per-rank torch.save files that disagrees is undecided; a change of
// tensors since the previous step is reported.
#include <gtest/gtest.h>

#include "denpex/engine/checkpoint.h"
#include "writers.h"

namespace denpex::engine {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

const fs::path kFixtures = fs::path(DENPEX_SOURCE_DIR) / "tests/checkpoint/fixtures/torch";

CheckpointReport VerifyDir(const fs::path& dir, const CheckpointOptions& o = {}) {
  auto r = VerifyCheckpointDir(dir, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : CheckpointReport{};
}

TEST(RankShapes, ADeepSpeedShardOfAnotherSizeIsCorruptAndTheOlderTagIsChosen) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step100", 4, 2, 100);
  WriteDeepSpeed(t.path() / "global_step200", 4, 2, 200);
  // DP rank 2 of MP rank 1 holds a partition of another size (a file from another run).
  const std::string name = "zero_pp_rank_2_mp_rank_01_optim_states";
  Put(t.path() / "global_step200" / (name + ".pt"), TorchState(name, {{"partition_count", 4}}, 384));
  Put(t.path() / "latest", "global_step200");
  const auto r = VerifyDir(t.path(), {.world_size = 8});
  const std::string text = RenderCheckpointText(r);
  EXPECT_EQ(r.outcome.path(), "global_step100") << text;
  EXPECT_EQ(r.candidates[0].verdict, V::kCorrupt) << text;
  EXPECT_NE(text.find("rank files disagree: tensor 'model.w' is [128] in "
                      "zero_pp_rank_0_mp_rank_01_optim_states.pt and [96] in "
                      "zero_pp_rank_2_mp_rank_01_optim_states.pt"),
            std::string::npos)
      << text;
  // The complete tag says what it compared.
  EXPECT_NE(text.find("10 rank files hold the same tensors and shapes as their peers"),
            std::string::npos)
      << text;
}

TEST(RankShapes, AMegatronTensorParallelRankOfAnotherShapeIsCorrupt) {
  TempDir t;
  WriteMegatron(t.path() / "iter_0000100", 2, 2, 100);
  WriteMegatron(t.path() / "iter_0000200", 2, 2, 200);
  // TP rank 1 of stage 1 saved with another hidden size.
  const auto args = Object("argparse.Namespace", Dict({{Str("tensor_model_parallel_size"), Int(2)},
                                                       {Str("pipeline_model_parallel_size"), Int(2)}}));
  Put(t.path() / "iter_0000200/mp_rank_01_001/model_optim_rng.pt",
      TorchZip("model_optim_rng",
               Dict({{Str("iteration"), Int(200)},
                     {Str("args"), args},
                     {Str("model"), Dict({{Str("w"), Tensor("0", 6)}})}}),
               {std::string(24, '\1')}));
  Put(t.path() / "latest_checkpointed_iteration.txt", "200");
  const auto r = VerifyDir(t.path());
  const std::string text = RenderCheckpointText(r);
  EXPECT_EQ(r.candidates[0].verdict, V::kCorrupt) << text;
  EXPECT_NE(text.find("rank files disagree"), std::string::npos) << text;
  EXPECT_NE(text.find("mp_rank_01_001/model_optim_rng.pt"), std::string::npos) << text;
  EXPECT_EQ(r.outcome.path(), "iter_0000100") << text;
}

TEST(RankShapes, PerRankTorchSaveFilesThatDisagreeAreUndecidedNotRejected) {
  TempDir t;
  const fs::path step = t.path() / "step_10";
  Put(step / "model_rank0.pt", TorchState("model_rank0", {{"step", 10}}, 256));
  Put(step / "model_rank1.pt", TorchState("model_rank1", {{"step", 10}}, 256));
  EXPECT_EQ(VerifyDir(t.path()).candidates[0].verdict, V::kValid);
  Put(step / "model_rank1.pt", TorchState("model_rank1", {{"step", 10}}, 192));
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.candidates[0].verdict, V::kInconclusive) << RenderCheckpointText(r);
  EXPECT_NE(RenderCheckpointText(r).find("uneven sharding"), std::string::npos);
}

TEST(RankShapes, ShardsOfASavedBinIndexHoldDifferentTensorsAndThatIsFine) {
  TempDir t;
  // pytorch_model-0000K-of-00002.bin: torch.save files holding disjoint tensors.
  Put(t.path() / "step_5/pytorch_model-00001-of-00002.bin", Slurp(kFixtures / "model.pt"));
  Put(t.path() / "step_5/pytorch_model-00002-of-00002.bin", Slurp(kFixtures / "mixed.pt"));
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.candidates[0].verdict, V::kValid) << RenderCheckpointText(r);
}

TEST(RankShapes, ShardsOfASafetensorsIndexHoldDifferentTensorsAndThatIsFine) {
  TempDir t;
  for (const char* f : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                        "model.safetensors.index.json", "optimizer.pt"})
    Put(t.path() / "step_5" / f, Slurp(kFixtures / f));
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.candidates[0].verdict, V::kValid) << RenderCheckpointText(r);
}

TEST(StepChanges, ATensorThatChangedSinceThePreviousStepIsReported) {
  TempDir t;
  Put(t.path() / "step_100/model.pt", Slurp(kFixtures / "model.pt"));
  Put(t.path() / "step_200/model.pt", Slurp(kFixtures / "mixed.pt"));  // another model
  const auto r = VerifyDir(t.path());
  const std::string text = RenderCheckpointText(r);
  EXPECT_EQ(r.outcome.path(), "step_200") << text;  // reported, not rejected
  ASSERT_FALSE(r.candidates[0].warnings.empty()) << text;
  EXPECT_NE(r.candidates[0].warnings[0].find("the model changed since step_100: model.pt holds "
                                             "tensor 'emb', step_100/model.pt does not"),
            std::string::npos)
      << r.candidates[0].warnings[0];
  // The same model at both steps: nothing to say.
  TempDir same;
  Put(same.path() / "step_100/model.pt", Slurp(kFixtures / "model.pt"));
  Put(same.path() / "step_200/model.pt", Slurp(kFixtures / "model.pt"));
  EXPECT_TRUE(VerifyDir(same.path()).candidates[0].warnings.empty());
}

}  // namespace
}  // namespace denpex::engine
