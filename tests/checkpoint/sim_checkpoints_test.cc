// The simulator's checkpoint writers against the verifier: every layout with every damage
// at 64 ranks. The engine's decision through `Diagnose` must be the truth's (the same save,
// never a newer one), and the files must be what the format says (pointer files, shard sets).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "denpex/engine/engine.h"
#include "denpex/sim/simulator.h"
#include "writers.h"

namespace denpex {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* layout;
  const char* damage;
};

std::string Scenario(const Case& c) {
  return std::string(R"(name: "ckpt_test" seed: 3
job { nodes: 8 tp: 4 pp: 2 }
training { warmup_steps: 10 step_time_ms: 1500 }
faults { kind: FAULT_KIND_SIGKILL step: 10 at_fraction: 0.5 }
checkpointing { layout: CHECKPOINT_LAYOUT_)") +
         c.layout + " every_steps: 4 keep: 2 damage: CHECKPOINT_DAMAGE_" + c.damage + " }\n";
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SimCheckpoints : public ::testing::TestWithParam<Case> {};

TEST_P(SimCheckpoints, TheEngineDecidesWhatTheTruthSays) {
  const Case c = GetParam();
  ckpt_test::TempDir tmp;
  auto scenario = sim::ParseScenario(Scenario(c), "<test>");
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  auto run = sim::Simulate(*scenario, {.out_dir = tmp.path()});
  ASSERT_TRUE(run.ok()) << run.status().message();
  const v1::CheckpointOutcome& want = run->truth.checkpoint();
  ASSERT_NE(want.decision(), v1::CHECKPOINT_DECISION_NOT_EVALUATED);
  EXPECT_EQ(want.dir(), "checkpoints");
  EXPECT_EQ(want.last_written_step(), 8);  // saves at steps 4 and 8, fault in step 10
  auto d = engine::Diagnose(tmp.path() / "incident", {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& got = d->checkpoint();
  SCOPED_TRACE(got.summary());
  EXPECT_EQ(got.decision(), want.decision());
  if (want.decision() == v1::CHECKPOINT_DECISION_RESUME) {
    EXPECT_EQ(got.path(), want.path());
    EXPECT_EQ(got.step(), want.step());
  }
  for (const auto& r : want.rejected()) {
    bool found = false;
    for (const auto& mine : got.rejected()) found |= mine.path() == r.path();
    EXPECT_TRUE(found) << r.path() << " must be rejected";
  }
  // The checkpoint files are not read as logs.
  for (const auto& p : d->input().problems()) EXPECT_EQ(p.find("checkpoints/"), std::string::npos) << p;
}

INSTANTIATE_TEST_SUITE_P(
    LayoutsAndDamage, SimCheckpoints,
    ::testing::Values(Case{"TORCH_SAVE", "NONE"}, Case{"TORCH_SAVE", "KILL_DURING_SAVE"},
                      Case{"TORCH_SAVE", "MISSING_SHARD"}, Case{"TORCH_SAVE", "WRITTEN_AFTER_FAULT"},
                      Case{"TORCH_SAVE", "UNKNOWN_FORMAT"}, Case{"TORCH_SAVE", "HARMLESS_LOOKALIKE"},
                      Case{"DCP", "NONE"}, Case{"DCP", "KILL_DURING_SAVE"}, Case{"DCP", "MISSING_SHARD"},
                      Case{"DCP", "WORLD_SIZE_MISMATCH"}, Case{"DCP", "HARMLESS_LOOKALIKE"},
                      Case{"DEEPSPEED", "KILL_DURING_SAVE"}, Case{"DEEPSPEED", "MISSING_SHARD"},
                      Case{"DEEPSPEED", "WORLD_SIZE_MISMATCH"}, Case{"DEEPSPEED", "WRITTEN_AFTER_FAULT"},
                      Case{"MEGATRON", "NONE"}, Case{"MEGATRON", "KILL_DURING_SAVE"},
                      Case{"MEGATRON", "MISSING_SHARD"}, Case{"MEGATRON", "UNKNOWN_FORMAT"},
                      Case{"TORCH_DIR", "NONE"}, Case{"TORCH_DIR", "KILL_DURING_SAVE"},
                      Case{"TORCH_DIR", "MISSING_SHARD"}, Case{"TORCH_DIR", "WRITTEN_AFTER_FAULT"},
                      Case{"TORCH_DIR", "UNKNOWN_FORMAT"}, Case{"TORCH_DIR", "HARMLESS_LOOKALIKE"},
                      Case{"TORCH_SAVE", "NAN_TENSOR"}, Case{"TORCH_DIR", "NAN_TENSOR"},
                      Case{"DCP", "NAN_TENSOR"}, Case{"DEEPSPEED", "NAN_TENSOR"},
                      Case{"MEGATRON", "NAN_TENSOR"}, Case{"DEEPSPEED", "RANK_SIZE_MISMATCH"},
                      Case{"MEGATRON", "RANK_SIZE_MISMATCH"}, Case{"DCP", "RANK_SIZE_MISMATCH"},
                      Case{"DEEPSPEED", "NONE"}, Case{"DEEPSPEED", "UNKNOWN_FORMAT"},
                      Case{"DCP", "WRITTEN_AFTER_FAULT"}, Case{"MEGATRON", "WRITTEN_AFTER_FAULT"},
                      Case{"MEGATRON", "HARMLESS_LOOKALIKE"}, Case{"MEGATRON", "WORLD_SIZE_MISMATCH"},
                      Case{"MEGATRON", "SAVE_IN_FLIGHT"}, Case{"DEEPSPEED", "SAVE_IN_FLIGHT"}),
    [](const auto& p) { return std::string(p.param.layout) + "_" + p.param.damage; });

TEST(SimCheckpointFiles, PointersFollowEachFrameworksWriteOrder) {
  ckpt_test::TempDir tmp;
  for (const char* layout : {"DEEPSPEED", "MEGATRON", "TORCH_SAVE"}) {
    const fs::path out = tmp.path() / layout;
    auto scenario = sim::ParseScenario(Scenario({layout, "KILL_DURING_SAVE"}), "<test>");
    ASSERT_TRUE(scenario.ok());
    ASSERT_TRUE(sim::Simulate(*scenario, {.out_dir = out}).ok());
    const fs::path ck = out / "incident" / "checkpoints";
    if (std::string(layout) == "DEEPSPEED") {
      // Rank 0 writes `latest` before the barrier: it names the broken tag.
      EXPECT_EQ(Slurp(ck / "latest"), "global_step8");
      // MP = 4 x 2 model-states files, DP 8 x MP 8 optimizer shards.
      int files = 0;
      for (const auto& e : fs::directory_iterator(ck / "global_step4")) files += e.is_regular_file();
      EXPECT_EQ(files, 8 + 64);
    } else if (std::string(layout) == "MEGATRON") {
      EXPECT_EQ(Slurp(ck / "latest_checkpointed_iteration.txt"), "4");  // after the barrier
      EXPECT_TRUE(fs::exists(ck / "iter_0000004" / "mp_rank_03_001" / "model_optim_rng.pt"));
    } else {
      EXPECT_EQ(Slurp(ck / "latest"), "step_4.pt");
    }
  }
}

// Rank 0 logs each save's start and finish in its framework's words; a save in flight at the
// fault has complete files, no pointer naming it, and a start without a finish in the log.
TEST(SimCheckpointFiles, SaveInFlightShowsOnlyInRankZerosLog) {
  ckpt_test::TempDir tmp;
  for (const char* layout : {"DEEPSPEED", "MEGATRON"}) {
    const fs::path out = tmp.path() / layout;
    auto scenario = sim::ParseScenario(Scenario({layout, "SAVE_IN_FLIGHT"}), "<test>");
    ASSERT_TRUE(scenario.ok());
    ASSERT_TRUE(sim::Simulate(*scenario, {.out_dir = out}).ok());
    const fs::path ck = out / "incident" / "checkpoints";
    const std::string log = Slurp(out / "incident" / "gpu-0001" / "rank_0.log");
    if (std::string(layout) == "DEEPSPEED") {
      EXPECT_EQ(Slurp(ck / "latest"), "global_step4");
      EXPECT_TRUE(fs::exists(ck / "global_step8" / "zero_pp_rank_7_mp_rank_07_optim_states.pt"));
      EXPECT_NE(log.find("[Rank 0] [Torch] Checkpoint global_step8 is about to be saved!"), std::string::npos) << log;
      EXPECT_NE(log.find("[Rank 0] Saving model checkpoint: /checkpoints/global_step8/mp_rank_00_model_states.pt"),
                std::string::npos);
      EXPECT_NE(log.find("[Torch] Checkpoint global_step4 is ready now!"), std::string::npos);
      EXPECT_EQ(log.find("[Torch] Checkpoint global_step8 is ready now!"), std::string::npos);
    } else {
      EXPECT_EQ(Slurp(ck / "latest_checkpointed_iteration.txt"), "4");
      EXPECT_TRUE(fs::exists(ck / "iter_0000008" / "mp_rank_03_001" / "model_optim_rng.pt"));
      EXPECT_NE(log.find("saving checkpoint at iteration       8 to /checkpoints in torch format\n"), std::string::npos)
          << log;
      EXPECT_NE(log.find("  successfully saved checkpoint from iteration       4 to /checkpoints [ t 1/4, p 1/2 ]\n"),
                std::string::npos);
      EXPECT_EQ(log.find("successfully saved checkpoint from iteration       8"), std::string::npos);
    }
  }
}

TEST(SimCheckpointFiles, ScenarioErrorsNameTheField) {
  auto bad = sim::ParseScenario(
      "name: \"x\" job { nodes: 2 tp: 4 } faults { kind: FAULT_KIND_SIGKILL }\n"
      "checkpointing { saved_world_size: 6 }\n",
      "bad.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.textproto:2"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("saved_world_size"), std::string::npos);
  // A save in flight shows only in save lines, which a torch.save job does not log.
  auto silent = sim::ParseScenario(Scenario({"TORCH_SAVE", "SAVE_IN_FLIGHT"}), "silent.textproto");
  ASSERT_FALSE(silent.ok());
  EXPECT_NE(silent.status().message().find("checkpointing.damage"), std::string::npos) << silent.status().message();
}

}  // namespace
}  // namespace denpex
