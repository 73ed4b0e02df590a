// Each framework layout through the public API, with the failures users actually meet
// (checkpoints.md §4): missing shards, zero-byte files, a missing DCP .metadata, a
// legitimate zero-byte .distcp, ZeRO DP-size changes, stale temporaries, NeMo markers.
#include <gtest/gtest.h>

#include <chrono>

#include "denpex/engine/checkpoint.h"
#include "writers.h"

namespace denpex::engine {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

// Verifies `root` and returns the candidate at `path` (it must be there).
CheckpointCandidate Verify(const fs::path& root, const std::string& path,
                           const CheckpointOptions& o = {}) {
  auto r = VerifyCheckpointDir(root, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  for (const auto& c : r->candidates) {
    if (c.path == path) return c;
  }
  ADD_FAILURE() << "no candidate " << path << "\n" << RenderCheckpointText(*r);
  return {};
}

bool Mentions(const CheckpointCandidate& c, const std::string& needle) {
  return c.Reason().find(needle) != std::string::npos;
}

bool Warns(const CheckpointCandidate& c, const std::string& needle) {
  for (const auto& w : c.warnings) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(Dcp, ACompleteDistributedCheckpointIsValid) {
  TempDir t;
  WriteDcp(t.path() / "step_100", 4);
  const auto c = Verify(t.path(), "step_100", {.world_size = 4});
  EXPECT_EQ(c.format, CheckpointFormat::kDcp);
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
  EXPECT_EQ(c.checks.size(), 5u);
}

TEST(Dcp, MissingMetadataIsIncompleteAndMetadataTmpSaysTheCoordinatorDied) {
  TempDir t;
  WriteDcp(t.path() / "step_100", 2);
  fs::remove(t.path() / "step_100" / ".metadata");
  auto c = Verify(t.path(), "step_100");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "no .metadata")) << c.Reason();
  Put(t.path() / "step_100" / ".metadata.tmp", "partial");
  c = Verify(t.path(), "step_100");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "coordinator died")) << c.Reason();
}

TEST(Dcp, ALegitimateZeroByteDistcpIsNotFlagged) {
  TempDir t;
  WriteDcp(t.path() / "step_100", 4, 2, {2});
  ASSERT_EQ(fs::file_size(t.path() / "step_100" / "__2_0.distcp"), 0u);
  const auto c = Verify(t.path(), "step_100", {.world_size = 4});
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
}

TEST(Dcp, AShardMetadataReferencesButNobodyWroteIsIncomplete) {
  TempDir t;
  WriteDcp(t.path() / "step_100", 4);
  fs::remove(t.path() / "step_100" / "__3_0.distcp");
  const auto c = Verify(t.path(), "step_100");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "__3_0.distcp")) << c.Reason();
}

TEST(Dcp, StaleMetadataAfterAnInterruptedResaveIsCorrupt) {
  TempDir t;
  const fs::path d = t.path() / "step_100";
  WriteDcp(d, 2);
  fs::resize_file(d / "__1_0.distcp", fs::file_size(d / "__1_0.distcp") / 2);  // re-save cut short
  auto c = Verify(t.path(), "step_100");
  EXPECT_EQ(c.verdict, V::kCorrupt);
  EXPECT_TRUE(Mentions(c, "stale .metadata")) << c.Reason();

  WriteDcp(d, 2);  // rewritten in full, but after .metadata: the new .metadata never came
  fs::last_write_time(d / ".metadata",
                      fs::last_write_time(d / "__0_0.distcp") - std::chrono::minutes(10));
  c = Verify(t.path(), "step_100");
  EXPECT_EQ(c.verdict, V::kCorrupt);
  EXPECT_TRUE(Mentions(c, "changed after .metadata")) << c.Reason();
}

TEST(Dcp, AnItemThatIsNotACompleteArchiveIsCorrupt) {
  TempDir t;
  const fs::path d = t.path() / "step_100";
  WriteDcp(d, 2);
  std::string bytes = Slurp(d / "__0_0.distcp");
  bytes[bytes.size() - 22] = 'X';  // the last archive's end-of-central-directory signature
  Put(d / "__0_0.distcp", bytes);
  fs::last_write_time(d / ".metadata", fs::last_write_time(d / "__0_0.distcp"));
  const auto c = Verify(t.path(), "step_100");
  EXPECT_EQ(c.verdict, V::kCorrupt) << c.Reason();
}

TEST(DeepSpeed, ACompleteTagWithDpReadFromTheModelStatesIsValid) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step200", 4, 2, 200);
  const auto c = Verify(t.path(), "global_step200");
  EXPECT_EQ(c.format, CheckpointFormat::kDeepSpeed);
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
}

TEST(DeepSpeed, AMissingOrEmptyOptimizerShardIsIncomplete) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step200", 4, 2, 200);
  fs::remove(t.path() / "global_step200" / "zero_pp_rank_3_mp_rank_01_optim_states.pt");
  auto c = Verify(t.path(), "global_step200");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "zero_pp_rank_3_mp_rank_01_optim_states.pt")) << c.Reason();

  WriteDeepSpeed(t.path() / "global_step200", 4, 2, 200);
  Put(t.path() / "global_step200" / "zero_pp_rank_2_mp_rank_00_optim_states.pt", "");
  c = Verify(t.path(), "global_step200");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "empty (0 bytes)")) << c.Reason();

  WriteDeepSpeed(t.path() / "global_step200", 4, 2, 200);
  const fs::path shard = t.path() / "global_step200" / "zero_pp_rank_1_mp_rank_00_optim_states.pt";
  fs::resize_file(shard, fs::file_size(shard) - 30);
  c = Verify(t.path(), "global_step200");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "truncated")) << c.Reason();
}

TEST(DeepSpeed, ADifferentDataParallelSizeIsIncompatible) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step200", 4, 2, 200);
  auto c = Verify(t.path(), "global_step200", {.dims = {.dp = 8}});
  EXPECT_EQ(c.verdict, V::kIncompatible);
  EXPECT_TRUE(Mentions(c, "DP world size 4")) << c.Reason();
  c = Verify(t.path(), "global_step200", {.world_size = 16});  // 16 ranks / MP 2 = DP 8
  EXPECT_EQ(c.verdict, V::kIncompatible);
  c = Verify(t.path(), "global_step200", {.world_size = 8});
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
}

TEST(DeepSpeed, WithoutAnyDpSizeTheShardCountIsInconclusive) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step200", 4, 1, 200, /*record_dp=*/false);
  auto c = Verify(t.path(), "global_step200");
  EXPECT_EQ(c.verdict, V::kInconclusive);
  EXPECT_TRUE(Mentions(c, "DP size is unknown")) << c.Reason();
  c = Verify(t.path(), "global_step200", {.world_size = 4});
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
  fs::remove(t.path() / "global_step200" / "zero_pp_rank_3_mp_rank_00_optim_states.pt");
  c = Verify(t.path(), "global_step200", {.world_size = 4});
  EXPECT_EQ(c.verdict, V::kIncomplete);
}

TEST(DeepSpeed, Bf16AndTheOldNamingWithoutUnderscoreAreRecognised) {
  TempDir t;
  const fs::path d = t.path() / "global_step10";
  WriteDeepSpeed(d, 2, 1, 10);
  fs::rename(d / "zero_pp_rank_0_mp_rank_00_optim_states.pt",
             d / "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt");
  fs::rename(d / "zero_pp_rank_1_mp_rank_00_optim_states.pt",
             d / "zero_pp_rank_1_mp_rank_00optim_states.pt");
  EXPECT_EQ(Verify(t.path(), "global_step10").verdict, V::kValid);
}

TEST(Megatron, ACompleteTpPpGridIsValidAndAMissingRankIsIncomplete) {
  TempDir t;
  WriteMegatron(t.path() / "iter_0000500", 2, 2, 500);
  auto c = Verify(t.path(), "iter_0000500");
  EXPECT_EQ(c.format, CheckpointFormat::kMegatron);
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
  fs::remove_all(t.path() / "iter_0000500" / "mp_rank_01_001");
  c = Verify(t.path(), "iter_0000500");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "TP 1 PP 1")) << c.Reason();
  WriteMegatron(t.path() / "iter_0000500", 2, 2, 500);
  fs::remove(t.path() / "iter_0000500" / "mp_rank_00_001" / "model_optim_rng.pt");
  c = Verify(t.path(), "iter_0000500");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "mp_rank_00_001/model_optim_rng.pt")) << c.Reason();
}

TEST(Megatron, ADifferentTensorParallelSizeIsIncompatible) {
  TempDir t;
  WriteMegatron(t.path() / "iter_0000500", 2, 1, 500);
  EXPECT_EQ(Verify(t.path(), "iter_0000500", {.dims = {.tp = 4}}).verdict, V::kIncompatible);
}

TEST(Megatron, UnknownTpPpIsInconclusiveUnlessTheTrackerNamesTheIteration) {
  TempDir t;
  WriteMegatron(t.path() / "iter_0000500", 2, 1, 500, /*record_args=*/false);
  EXPECT_EQ(Verify(t.path(), "iter_0000500").verdict, V::kInconclusive);
  Put(t.path() / "latest_checkpointed_iteration.txt", "500");
  EXPECT_EQ(Verify(t.path(), "iter_0000500").verdict, V::kValid);
}

TEST(MegatronDist, MetadataJsonIsWrittenLastSoItsAbsenceIsIncomplete) {
  TempDir t;
  WriteMegatronDist(t.path() / "iter_0000700", 4);
  EXPECT_EQ(Verify(t.path(), "iter_0000700").verdict, V::kValid);
  fs::remove(t.path() / "iter_0000700" / "metadata.json");
  const auto c = Verify(t.path(), "iter_0000700");
  EXPECT_EQ(c.format, CheckpointFormat::kMegatronDist);
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "not a distributed checkpoint")) << c.Reason();
}

TEST(HfTrainer, ACompleteCheckpointIsValid) {
  TempDir t;
  WriteHf(t.path() / "checkpoint-500", 500, 2);
  const auto c = Verify(t.path(), "checkpoint-500", {.world_size = 2});
  EXPECT_EQ(c.format, CheckpointFormat::kHfTrainer);
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
}

TEST(HfTrainer, MissingTrainerStateOrOptimizerIsIncomplete) {
  TempDir t;
  WriteHf(t.path() / "checkpoint-500", 500);
  fs::remove(t.path() / "checkpoint-500" / "trainer_state.json");
  auto c = Verify(t.path(), "checkpoint-500");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "trainer_state.json")) << c.Reason();
  WriteHf(t.path() / "checkpoint-500", 500);
  fs::remove(t.path() / "checkpoint-500" / "optimizer.pt");
  c = Verify(t.path(), "checkpoint-500");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "optimizer.pt")) << c.Reason();
}

TEST(HfTrainer, ATruncatedSafetensorsOrAMissingIndexShardIsIncomplete) {
  TempDir t;
  const fs::path d = t.path() / "checkpoint-500";
  WriteHf(d, 500);
  fs::resize_file(d / "model.safetensors", fs::file_size(d / "model.safetensors") - 1);
  auto c = Verify(t.path(), "checkpoint-500");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "MetadataIncompleteBuffer")) << c.Reason();

  WriteHf(d, 500);
  fs::remove(d / "model.safetensors");
  Put(d / "model-00001-of-00002.safetensors", Safetensors({{"a", "F32", {2}}}));
  Put(d / "model.safetensors.index.json", R"({"metadata": {"total_size": 16}, "weight_map":
      {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})");
  c = Verify(t.path(), "checkpoint-500");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "model-00002-of-00002.safetensors")) << c.Reason();
}

TEST(HfTrainer, StepDisagreementIsInconclusiveAndMissingRngStatesOnlyWarn) {
  TempDir t;
  WriteHf(t.path() / "checkpoint-500", 400, 2);
  EXPECT_EQ(Verify(t.path(), "checkpoint-500").verdict, V::kInconclusive);
  WriteHf(t.path() / "checkpoint-500", 500, 2);
  fs::remove(t.path() / "checkpoint-500" / "rng_state_1.pth");
  const auto c = Verify(t.path(), "checkpoint-500", {.world_size = 2});
  EXPECT_EQ(c.verdict, V::kValid);
  EXPECT_TRUE(Warns(c, "RNG state for process 1"));
}

TEST(HfTrainer, ADeepSpeedTagInsideIsVerifiedAndAnOffByOneTagOnlyWarns) {
  TempDir t;
  const fs::path d = t.path() / "checkpoint-800";
  WriteHf(d, 800);
  fs::remove(d / "optimizer.pt");
  fs::remove(d / "scheduler.pt");
  WriteDeepSpeed(d / "global_step799", 2, 1, 799);
  auto c = Verify(t.path(), "checkpoint-800");
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
  EXPECT_TRUE(Warns(c, "global_step799"));
  fs::remove(d / "global_step799" / "zero_pp_rank_1_mp_rank_00_optim_states.pt");
  EXPECT_EQ(Verify(t.path(), "checkpoint-800").verdict, V::kIncomplete);
}

TEST(HfTrainer, ALeftoverStagingDirectoryIsIncomplete) {
  TempDir t;
  WriteHf(t.path() / "tmp-checkpoint-49", 49);
  const auto c = Verify(t.path(), "tmp-checkpoint-49");
  EXPECT_EQ(c.format, CheckpointFormat::kTemporary);
  EXPECT_EQ(c.verdict, V::kIncomplete);
}

TEST(Orbax, ACommittedStepIsValidAndATmpDirectoryIsIncomplete) {
  TempDir t;
  WriteOrbax(t.path() / "1000");
  WriteOrbax(t.path() / "1100.orbax-checkpoint-tmp-1703334121930256");
  auto r = VerifyCheckpointDir(t.path(), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->candidates.size(), 2u);
  EXPECT_EQ(r->candidates[0].verdict, V::kIncomplete);
  EXPECT_EQ(r->candidates[1].format, CheckpointFormat::kOrbax);
  EXPECT_EQ(r->candidates[1].verdict, V::kValid) << r->candidates[1].Reason();
  EXPECT_EQ(r->outcome.path(), "1000");
}

TEST(Orbax, WithoutCommitFileOnlyACommitTimestampCounts) {
  TempDir t;
  WriteOrbax(t.path() / "1000");
  fs::remove(t.path() / "1000" / "commit_success.txt");
  auto c = Verify(t.path(), "1000");
  EXPECT_EQ(c.verdict, V::kValid);
  EXPECT_TRUE(Warns(c, "no commit_success.txt"));
  Put(t.path() / "1000" / "_CHECKPOINT_METADATA",
      R"({"init_timestamp_nsecs": 1700000000000000000})");
  c = Verify(t.path(), "1000");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "never committed")) << c.Reason();
}

TEST(Orbax, AMissingProcessDirectoryIsIncomplete) {
  TempDir t;
  WriteOrbax(t.path() / "1000", 3);
  fs::remove_all(t.path() / "1000" / "default" / "ocdbt.process_1");
  EXPECT_EQ(Verify(t.path(), "1000").verdict, V::kIncomplete);
}

TEST(Nemo, AnUnfinishedMarkerMakesTheCheckpointIncomplete) {
  TempDir t;
  const std::string name = "megatron_gpt--val_loss=2.34-step=1000-consumed_samples=64000.0";
  Put(t.path() / (name + ".ckpt"), TorchState("x", {{"global_step", 1000}}));
  EXPECT_EQ(Verify(t.path(), name + ".ckpt").verdict, V::kValid);
  Put(t.path() / (name + "-unfinished"), "");
  const auto c = Verify(t.path(), name + ".ckpt");
  EXPECT_EQ(c.verdict, V::kIncomplete);
  EXPECT_TRUE(Mentions(c, "-unfinished")) << c.Reason();
}

TEST(Nemo, ANemo2DirectoryIsCheckedThroughItsWeights) {
  TempDir t;
  const fs::path d = t.path() / "llama--val_loss=1.90-step=300-consumed_samples=9600.0";
  WriteMegatronDist(d / "weights", 2);
  Put(d / "context" / "io.json", R"({"root": {}})");
  auto c = Verify(t.path(), d.filename().string());
  EXPECT_EQ(c.format, CheckpointFormat::kNemo);
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
  EXPECT_EQ(c.step, 300);
  fs::remove(d / "weights" / "metadata.json");
  EXPECT_EQ(Verify(t.path(), d.filename().string()).verdict, V::kIncomplete);
}

TEST(Temporary, AStaleTmpFileMarksItsStepIncomplete) {
  TempDir t;
  Put(t.path() / "step_30.pt.tmp", TorchState("step_30", {}));
  const auto c = Verify(t.path(), "step_30.pt.tmp");
  EXPECT_EQ(c.step, 30);
  EXPECT_EQ(c.verdict, V::kIncomplete);
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// A .nemo as NeMo's save_to writes it (tarfile "w:"): model_config.yaml and
// model_weights.ckpt, a torch.save file, inside an uncompressed tar.
std::string Nemo() {
  return Tar({{"model_config.yaml", "target: nemo.collections.asr.models.EncDecCTCModel\n"},
              {"model_weights.ckpt", TorchState("model_weights", {}, 1024)}});
}

// Beside a stepped save the archive is a candidate of its own (after it); alone in its folder
// it is read as that folder's one file (the folder is the candidate, as for a flat model.pt).
TEST(NemoArchive, ACompleteArchiveIsValidAndItsWeightsAreRead) {
  TempDir t;
  const std::string step = TorchState("archive", {{"step", 5}});
  Put(t.path() / "step_5.pt", step.substr(0, step.size() / 2));  // cut: the archive is read next
  Put(t.path() / "megatron_gpt.nemo", Nemo());
  auto c = Verify(t.path(), "megatron_gpt.nemo");
  EXPECT_EQ(c.format, CheckpointFormat::kNemoArchive);
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
  TempDir alone;
  Put(alone.path() / "megatron_gpt.nemo", Nemo());
  c = Verify(alone.path(), ".");
  EXPECT_EQ(c.verdict, V::kValid) << c.Reason();
}

// NeMo 1.x with always_save_nemo rewrites its .nemo after each .ckpt save: the archive is the
// newest file, but it holds weights only, so the newest training save is the resume point.
TEST(NemoArchive, ANewerArchiveNeverPassesAStepOfTraining) {
  TempDir t;
  Put(t.path() / "megatron_gpt--val_loss=2.10-step=100.ckpt", TorchState("archive", {{"global_step", 100}}));
  Put(t.path() / "megatron_gpt.nemo", Nemo());
  const auto old = std::chrono::file_clock::now() - std::chrono::hours(1);
  fs::last_write_time(t.path() / "megatron_gpt--val_loss=2.10-step=100.ckpt", old);
  auto r = VerifyCheckpointDir(t.path(), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->outcome.path(), "megatron_gpt--val_loss=2.10-step=100.ckpt") << RenderCheckpointText(*r);
  EXPECT_EQ(r->outcome.step(), 100);
}

TEST(NemoArchive, ACutArchiveIsIncompleteAndABadHeaderCorrupt) {
  TempDir t;
  const std::string full = Nemo();
  Put(t.path() / "cut.nemo", full.substr(0, full.size() / 3));
  auto c = Verify(t.path(), ".");
  EXPECT_EQ(c.verdict, V::kIncomplete) << c.Reason();
  EXPECT_TRUE(Mentions(c, "truncated")) << c.Reason();
  std::string bad = full;
  bad[512 + 10] ^= 0x01;  // the first file's name: its header checksum no longer agrees
  Put(t.path() / "cut.nemo", bad);
  c = Verify(t.path(), ".");
  EXPECT_EQ(c.verdict, V::kCorrupt) << c.Reason();
  EXPECT_TRUE(Mentions(c, "checksum")) << c.Reason();
}

TEST(NemoArchive, WeightsThatAreNotACompleteTorchSaveAreRejected) {
  TempDir t;
  std::string weights = TorchState("model_weights", {}, 1024);
  weights.resize(weights.size() - 30);  // the zip's end record cut off inside the tar
  Put(t.path() / "m.nemo", Tar({{"model_config.yaml", "x: 1\n"}, {"model_weights.ckpt", weights}}));
  const auto c = Verify(t.path(), ".");
  EXPECT_NE(c.verdict, V::kValid);
  EXPECT_TRUE(Mentions(c, "model_weights.ckpt")) << c.Reason();
}

TEST(NemoArchive, AGzipArchiveIsNotJudged) {
  TempDir t;
  Put(t.path() / "old.nemo", std::string("\x1f\x8b\x08\x00", 4) + std::string(200, 'z'));
  const auto c = Verify(t.path(), ".");
  EXPECT_EQ(c.verdict, V::kInconclusive) << c.Reason();
}

// accelerate's per-rank files carry ranks, not steps: random_states_3.pkl in checkpoint_3 is
// rank 3's. A file the previous save holds and this one lacks is still found.
TEST(Accelerate, AFileThePreviousSaveHoldsIsMissingEvenWhereARankEqualsTheStep) {
  TempDir t;
  for (int k : {2, 3}) {
    const fs::path dir = t.path() / ("checkpoint_" + std::to_string(k));
    Put(dir / "model.safetensors", Safetensors({{"w", "F32", {4, 4}}}));
    if (k == 2) Put(dir / "optimizer.bin", TorchState("optimizer", {{"step", k}}));
    Put(dir / "scheduler.bin", TorchState("scheduler", {{"last_epoch", k}}));
    for (int r = 0; r < 4; ++r)
      Put(dir / ("random_states_" + std::to_string(r) + ".pkl"), TorchState("random_states", {{"rank", r}}));
  }
  const auto c = Verify(t.path(), "checkpoint_3", {.world_size = 4});
  EXPECT_EQ(c.format, CheckpointFormat::kAccelerate);
  EXPECT_EQ(c.verdict, V::kIncomplete) << c.Reason();
  EXPECT_TRUE(Mentions(c, "optimizer.bin")) << c.Reason();
}

}  // namespace
}  // namespace denpex::engine
