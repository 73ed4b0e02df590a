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
  // Saves at steps 4 and 8, fault in step 10; accelerate's checkpoint_K counts saves from 0.
  EXPECT_EQ(want.last_written_step(), std::string(c.layout) == "ACCELERATE" ? 1 : 8);
  auto d = engine::Diagnose(tmp.path() / "incident", {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& got = d->checkpoint();
  SCOPED_TRACE(got.summary());
  EXPECT_EQ(got.decision(), want.decision());
  if (want.decision() == v1::CHECKPOINT_DECISION_RESUME) {
    // NeMo 1.x's <name>-last.ckpt is the same save again, named first at equal steps.
    const std::string want_last = want.path().substr(0, want.path().rfind('.')) + "-last.ckpt";
    if (got.path() != want_last) {
      EXPECT_EQ(got.path(), want.path());
    }
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
                      Case{"MEGATRON", "SAVE_IN_FLIGHT"}, Case{"DEEPSPEED", "SAVE_IN_FLIGHT"},
                      Case{"HF_TRAINER", "NONE"}, Case{"HF_TRAINER", "KILL_DURING_SAVE"},
                      Case{"HF_TRAINER", "MISSING_SHARD"}, Case{"HF_TRAINER", "WRITTEN_AFTER_FAULT"},
                      Case{"HF_TRAINER", "HARMLESS_LOOKALIKE"}, Case{"HF_TRAINER", "NAN_TENSOR"},
                      Case{"HF_TRAINER", "SAVE_IN_FLIGHT"}, Case{"ACCELERATE", "NONE"},
                      Case{"ACCELERATE", "KILL_DURING_SAVE"}, Case{"ACCELERATE", "MISSING_SHARD"},
                      Case{"ACCELERATE", "WRITTEN_AFTER_FAULT"}, Case{"ACCELERATE", "HARMLESS_LOOKALIKE"},
                      Case{"ACCELERATE", "NAN_TENSOR"}, Case{"ACCELERATE", "SAVE_IN_FLIGHT"},
                      Case{"LIGHTNING", "NONE"}, Case{"LIGHTNING", "KILL_DURING_SAVE"},
                      Case{"LIGHTNING", "MISSING_SHARD"}, Case{"LIGHTNING", "WRITTEN_AFTER_FAULT"},
                      Case{"LIGHTNING", "HARMLESS_LOOKALIKE"}, Case{"LIGHTNING", "NAN_TENSOR"},
                      Case{"LIGHTNING", "SAVE_IN_FLIGHT"}, Case{"NEMO", "NONE"}, Case{"NEMO", "KILL_DURING_SAVE"},
                      Case{"NEMO", "MISSING_SHARD"}, Case{"NEMO", "WRITTEN_AFTER_FAULT"},
                      Case{"NEMO", "HARMLESS_LOOKALIKE"}, Case{"NEMO", "NAN_TENSOR"},
                      Case{"NEMO", "SAVE_IN_FLIGHT"}, Case{"NEMO_CKPT", "NONE"},
                      Case{"NEMO_CKPT", "KILL_DURING_SAVE"}, Case{"NEMO_CKPT", "MISSING_SHARD"},
                      Case{"NEMO_CKPT", "WRITTEN_AFTER_FAULT"}, Case{"NEMO_CKPT", "HARMLESS_LOOKALIKE"},
                      Case{"NEMO_CKPT", "NAN_TENSOR"}, Case{"NEMO_CKPT", "SAVE_IN_FLIGHT"}),
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

// The frameworks' own folders, each file in its framework's order and format: what a complete
// save holds, and what the save the fault hit left.
TEST(SimCheckpointFiles, FrameworkLayoutsHoldWhatTheirFrameworksWrite) {
  ckpt_test::TempDir tmp;
  const auto simulate = [&](const char* layout, const char* damage) {
    const fs::path out = tmp.path() / (std::string(layout) + "_" + damage);
    auto scenario = sim::ParseScenario(Scenario({layout, damage}), "<test>");
    EXPECT_TRUE(scenario.ok());
    EXPECT_TRUE(sim::Simulate(*scenario, {.out_dir = out}).ok());
    return out;
  };
  const auto count = [](const fs::path& dir, const std::string& prefix) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind(prefix, 0) == 0;
    return n;
  };
  {  // HF Trainer: every rank's RNG state; the kill cut optimizer.pt, before trainer_state.json
    const fs::path out = simulate("HF_TRAINER", "KILL_DURING_SAVE");
    const fs::path ck = out / "incident" / "checkpoints";
    EXPECT_EQ(count(ck / "checkpoint-4", "rng_state_"), 64);
    EXPECT_NE(Slurp(ck / "checkpoint-4" / "trainer_state.json").find("\"global_step\": 4,"), std::string::npos);
    EXPECT_NE(Slurp(ck / "checkpoint-4" / "model.safetensors.index.json").find("model-00002-of-00002.safetensors"),
              std::string::npos);
    EXPECT_FALSE(fs::exists(ck / "checkpoint-8" / "trainer_state.json"));
    EXPECT_LT(fs::file_size(ck / "checkpoint-8" / "optimizer.pt"), fs::file_size(ck / "checkpoint-4" / "optimizer.pt"));
    EXPECT_NE(Slurp(out / "incident" / "gpu-0001" / "rank_0.log").find(">> Saving model checkpoint to /checkpoints/checkpoint-8\n"),
              std::string::npos);
  }
  {  // accelerate: checkpoint_K counts saves; a save in flight stopped after the optimizer
    const fs::path out = simulate("ACCELERATE", "SAVE_IN_FLIGHT");
    const fs::path ck = out / "incident" / "checkpoints";
    EXPECT_EQ(count(ck / "checkpoint_0", "random_states_"), 64);
    EXPECT_TRUE(fs::exists(ck / "checkpoint_1" / "optimizer.bin"));
    EXPECT_FALSE(fs::exists(ck / "checkpoint_1" / "random_states_0.pkl"));
    const std::string log = Slurp(out / "incident" / "gpu-0001" / "rank_0.log");
    EXPECT_NE(log.find("Random states saved in /checkpoints/checkpoint_0/random_states_0.pkl"), std::string::npos) << log;
    EXPECT_NE(log.find("Saving current state to /checkpoints/checkpoint_1\n"), std::string::npos);
    EXPECT_EQ(log.find("Random states saved in /checkpoints/checkpoint_1/"), std::string::npos);
  }
  {  // Lightning: last.ckpt is the newest complete save again
    const fs::path ck = simulate("LIGHTNING", "NONE") / "incident" / "checkpoints";
    EXPECT_EQ(Slurp(ck / "last.ckpt"), Slurp(ck / "epoch=0-step=8.ckpt"));
    const fs::path cut = simulate("LIGHTNING", "KILL_DURING_SAVE") / "incident" / "checkpoints";
    EXPECT_EQ(Slurp(cut / "last.ckpt"), Slurp(cut / "epoch=0-step=4.ckpt"));
  }
  {  // NeMo: the marker lives until the finalize writes .metadata and metadata.json
    const fs::path ck = simulate("NEMO", "SAVE_IN_FLIGHT") / "incident" / "checkpoints";
    const std::string done = "megatron_gpt--val_loss=3.96-step=4-consumed_samples=2048.0";
    const std::string flying = "megatron_gpt--val_loss=3.92-step=8-consumed_samples=4096.0";
    EXPECT_TRUE(fs::exists(ck / done / "weights" / ".metadata"));
    EXPECT_TRUE(fs::exists(ck / done / "weights" / "metadata.json"));
    EXPECT_TRUE(fs::exists(ck / done / "context" / "io.json"));
    EXPECT_FALSE(fs::exists(ck / (done + "-unfinished")));
    EXPECT_EQ(count(ck / flying / "weights", "__"), 64);
    EXPECT_FALSE(fs::exists(ck / flying / "weights" / ".metadata"));
    EXPECT_TRUE(fs::exists(ck / (flying + "-unfinished")));
  }
  {  // NeMo 1.x: the .ckpt with its marker while written, then -last.ckpt and the .nemo
    const fs::path ck = simulate("NEMO_CKPT", "KILL_DURING_SAVE") / "incident" / "checkpoints";
    const std::string done = "megatron_gpt--val_loss=3.96-step=4-consumed_samples=2048.0";
    const std::string cut = "megatron_gpt--val_loss=3.92-step=8-consumed_samples=4096.0";
    EXPECT_EQ(Slurp(ck / (done + "-last.ckpt")), Slurp(ck / (done + ".ckpt")));
    EXPECT_TRUE(fs::exists(ck / (cut + "-unfinished")));
    EXPECT_FALSE(fs::exists(ck / (done + "-unfinished")));
    const std::string nemo = Slurp(ck / "megatron_gpt.nemo");
    EXPECT_EQ(nemo.size() % 10240, 0u);
    EXPECT_EQ(nemo.compare(257, 5, "ustar"), 0);
    EXPECT_NE(nemo.find("./model_weights.ckpt"), std::string::npos);
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
  // A framework's own folders are known by their names: no custom writer's files there.
  auto known = sim::ParseScenario(Scenario({"HF_TRAINER", "UNKNOWN_FORMAT"}), "known.textproto");
  ASSERT_FALSE(known.ok());
  EXPECT_NE(known.status().message().find("UNKNOWN_FORMAT"), std::string::npos) << known.status().message();
}

}  // namespace
}  // namespace denpex
