// The layouts people save, assembled from files real torch.save wrote (torch 1.13;
// fixtures/torch/make.py): step folders of torch.save files with a latest/last pointer,
// flat files, Lightning, HF Trainer, accelerate, Megatron and DeepSpeed, and folders in no
// known layout; each complete, then damaged as a killed or broken save leaves it.
#include <gtest/gtest.h>

#include <chrono>

#include "denpex/engine/checkpoint.h"
#include "writers.h"

namespace denpex::engine {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

const fs::path kFixtures = fs::path(DENPEX_SOURCE_DIR) / "tests/checkpoint/fixtures/torch";

// Copies fixture `name` to `to` (parents created).
void Copy(const std::string& name, const fs::path& to) {
  Put(to, Slurp(kFixtures / name));
  ASSERT_GT(fs::file_size(to), 0u) << name;
}

void Truncate(const fs::path& p, std::uintmax_t keep_fraction_of_8 = 4) {
  fs::resize_file(p, fs::file_size(p) * keep_fraction_of_8 / 8);
}

// Makes `p` `minutes` newer than now, so the tests do not depend on write order.
void Age(const fs::path& p, int minutes) {
  fs::last_write_time(p, fs::file_time_type::clock::now() + std::chrono::minutes(minutes));
}

CheckpointReport VerifyDir(const fs::path& dir, const CheckpointOptions& o = {}) {
  auto r = VerifyCheckpointDir(dir, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : CheckpointReport{};
}

const CheckpointCandidate* Find(const CheckpointReport& r, const std::string& path) {
  for (const auto& c : r.candidates) {
    if (c.path == path) return &c;
  }
  ADD_FAILURE() << "no candidate " << path << "\n" << RenderCheckpointText(r);
  return nullptr;
}

// ckpt/step_<N>/{model.pt, optimizer.pt} for each step.
void WriteSteps(const fs::path& root, const std::string& prefix, std::vector<int> steps) {
  for (int s : steps) {
    Copy("model.pt", root / (prefix + std::to_string(s)) / "model.pt");
    Copy("optimizer.pt", root / (prefix + std::to_string(s)) / "optimizer.pt");
  }
}

TEST(RealFiles, EveryFixtureVerifiesOnItsOwn) {
  for (const char* name : {"model.pt", "optimizer.pt", "scheduler.pt", "mixed.pt", "rng_state.pth",
                           "lightning.ckpt", "model_optim_rng.pt", "mp_rank_00_model_states.pt",
                           "zero_pp_rank_0_mp_rank_00_optim_states.pt", "model.safetensors",
                           "megatron_gpt.nemo"}) {
    TempDir t;
    Copy(name, t.path() / ("step_1-" + std::string(name)));
    const auto r = VerifyDir(t.path());
    ASSERT_EQ(r.candidates.size(), 1u) << name;
    EXPECT_EQ(r.candidates[0].verdict, V::kValid) << name << "\n" << RenderCheckpointText(r);
  }
}

TEST(RealFiles, StepFoldersOfTorchSaveFilesWithALatestFileAreAnOrdinaryLayout) {
  TempDir t;
  WriteSteps(t.path(), "step_", {100, 200});
  Put(t.path() / "latest", "step_200\n");
  const auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_RESUME);
  EXPECT_EQ(r.outcome.path(), "step_200");
  EXPECT_EQ(r.outcome.step(), 200);
  EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kTorchDir);
  EXPECT_TRUE(r.notes.empty());
}

TEST(RealFiles, StepNumbersComeFromEveryCommonFolderName) {
  for (const std::string prefix :
       {"step_", "step-", "iter_", "iter-", "checkpoint-", "checkpoint_", "ckpt_", "ckpt-"}) {
    TempDir t;
    WriteSteps(t.path(), prefix, {9, 10});
    const auto r = VerifyDir(t.path());
    EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_RESUME) << prefix;
    EXPECT_EQ(r.outcome.step(), 10) << prefix << "\n" << RenderCheckpointText(r);
    EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kTorchDir) << prefix;
  }
}

TEST(RealFiles, ATruncatedFileInTheNewestStepFallsBackAndSaysWhatLatestNames) {
  TempDir t;
  WriteSteps(t.path(), "step_", {100, 200});
  Put(t.path() / "latest", "step_200");
  Truncate(t.path() / "step_200" / "optimizer.pt");
  const auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "step_100");
  EXPECT_EQ(r.candidates[0].verdict, V::kIncomplete);
  EXPECT_NE(r.candidates[0].Reason().find("step_200/optimizer.pt"), std::string::npos);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("latest names step_200 (INCOMPLETE"), std::string::npos);
}

TEST(RealFiles, AStepMissingAFileThePreviousStepHeldIsIncomplete) {
  TempDir t;
  WriteSteps(t.path(), "step_", {100, 200});
  fs::remove(t.path() / "step_200" / "optimizer.pt");
  const auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "step_100");
  EXPECT_EQ(r.candidates[0].verdict, V::kIncomplete);
  EXPECT_NE(r.candidates[0].Reason().find("step_100 holds optimizer.pt"), std::string::npos);
  // Names carrying the step compare equal across steps (model_100.pt, model_200.pt).
  TempDir u;
  Copy("model.pt", u.path() / "step_100" / "model_100.pt");
  Copy("model.pt", u.path() / "step_200" / "model_200.pt");
  EXPECT_EQ(VerifyDir(u.path()).outcome.path(), "step_200");
}

TEST(RealFiles, AnEmptyStepFolderAndATemporaryFileInOneAreIncomplete) {
  TempDir t;
  WriteSteps(t.path(), "step_", {100});
  fs::create_directories(t.path() / "step_300");
  Copy("model.pt", t.path() / "step_200" / "model.pt.tmp");
  const auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "step_100");
  EXPECT_NE(r.candidates[0].Reason().find("empty directory"), std::string::npos);
  EXPECT_NE(r.candidates[1].Reason().find("model.pt.tmp"), std::string::npos);
}

TEST(RealFiles, PointersNameAFolderOrFileInManyForms) {
  TempDir t;
  WriteSteps(t.path(), "step_", {100, 200});
  Truncate(t.path() / "step_200" / "model.pt");
  const std::string abs = (fs::canonical(t.path()) / "step_200").string();
  const std::vector<std::string> targets = {"step_200", "./step_200/", "step_200/model.pt", abs,
                                            "/elsewhere/mount/step_200", "200"};
  for (const std::string& target : targets) {
    fs::remove(t.path() / "latest");
    Put(t.path() / "latest", target);
    const auto r = VerifyDir(t.path());
    ASSERT_EQ(r.notes.size(), 1u) << target << "\n" << RenderCheckpointText(r);
    EXPECT_NE(r.notes[0].find("latest names step_200 (INCOMPLETE"), std::string::npos)
        << target << ": " << r.notes[0];
    auto blind = NewestCheckpointBlindly(t.path());
    ASSERT_TRUE(blind.ok());
    EXPECT_EQ(blind->path(), "step_200") << target;
  }
  // `last`, and a symbolic link named latest.
  fs::remove(t.path() / "latest");
  Put(t.path() / "last", "step_200");
  auto r = VerifyDir(t.path());
  ASSERT_TRUE(r.pointer.has_value());
  EXPECT_EQ(r.pointer->file, "last");
  ASSERT_EQ(r.notes.size(), 1u) << RenderCheckpointText(r);
  fs::remove(t.path() / "last");
  fs::create_directory_symlink("step_200", t.path() / "latest");
  r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  ASSERT_TRUE(r.pointer.has_value());
  EXPECT_EQ(r.pointer->target, "step_200");
  EXPECT_EQ(r.candidates.size(), 2u);  // the link is a pointer, not a third candidate
  EXPECT_EQ(r.outcome.path(), "step_100");
  // A pointer to a step that is not there is reported.
  fs::remove(t.path() / "latest");
  Put(t.path() / "latest", "step_300");
  r = VerifyDir(t.path());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("not in the directory"), std::string::npos) << r.notes[0];
}

TEST(RealFiles, AFolderNamedLastIsACheckpointNotAPointer) {
  TempDir t;
  WriteSteps(t.path(), "step_", {100});
  Copy("model.pt", t.path() / "last" / "model.pt");
  Copy("optimizer.pt", t.path() / "last" / "optimizer.pt");
  Age(t.path() / "last", 60);
  const auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_FALSE(r.pointer.has_value());
  EXPECT_EQ(r.outcome.path(), "last");  // newer by file time than step_100
  EXPECT_EQ(r.summary.find("step -1"), std::string::npos) << r.summary;
  EXPECT_EQ(r.candidates[0].step_source, StepSource::kNone);
}

TEST(RealFiles, FlatFilesWithStepsInAnyExtensionAndAFlatCheckpointWithout) {
  TempDir t;
  Copy("model.pt", t.path() / "step_100.pth");
  Copy("model.pt", t.path() / "step_200.bin");
  Copy("model.pt", t.path() / "ckpt_300.pt");
  Truncate(t.path() / "ckpt_300.pt");
  auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "step_200.bin") << RenderCheckpointText(r);
  TempDir u;  // no steps at all: one checkpoint of several files, a pointer to one of them
  Copy("model.pt", u.path() / "model.pt");
  Copy("optimizer.pt", u.path() / "optim.pth");
  Put(u.path() / "latest", "model.pt");
  r = VerifyDir(u.path());
  EXPECT_EQ(r.outcome.path(), ".") << RenderCheckpointText(r);
  EXPECT_TRUE(r.notes.empty()) << r.notes[0];
  EXPECT_TRUE(r.candidates[0].warnings.empty()) << r.candidates[0].warnings[0];
  Truncate(u.path() / "optim.pth");
  EXPECT_EQ(VerifyDir(u.path()).outcome.decision(), v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
}

TEST(RealFiles, LightningLastCkptIsOrderedByTheStepRecordedInside) {
  TempDir t;
  Copy("lightning.ckpt", t.path() / "epoch=0-step=300.ckpt");  // the fixture records 300
  Copy("lightning.ckpt", t.path() / "last.ckpt");
  Copy("model.pt", t.path() / "best.pt");  // no step anywhere: placed by file time
  Age(t.path() / "best.pt", -60);
  auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_EQ(r.candidates[0].path, "epoch=0-step=300.ckpt");
  EXPECT_EQ(r.candidates[1].path, "last.ckpt");
  EXPECT_EQ(r.candidates[1].step, 300);
  EXPECT_EQ(r.candidates[1].step_source, StepSource::kContents);
  EXPECT_EQ(r.candidates[2].path, "best.pt");
  EXPECT_EQ(r.candidates[2].step_source, StepSource::kNone);
  // A broken newest file falls back; a newer step-less file comes first.
  Truncate(t.path() / "epoch=0-step=300.ckpt");
  Age(t.path() / "best.pt", 60);
  r = VerifyDir(t.path());
  EXPECT_EQ(r.candidates[0].path, "best.pt");
  Age(t.path() / "best.pt", -60);
  r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "last.ckpt") << RenderCheckpointText(r);
}

TEST(RealFiles, HfTrainerCheckpointWithShardedSafetensors) {
  TempDir t;
  const fs::path d = t.path() / "checkpoint-500";
  Put(d / "trainer_state.json", "{\"global_step\": 500, \"log_history\": []}");
  for (const char* f : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                        "model.safetensors.index.json", "optimizer.pt", "scheduler.pt"}) {
    Copy(f, d / f);
  }
  Copy("rng_state.pth", d / "rng_state_0.pth");
  Copy("rng_state.pth", d / "rng_state_1.pth");
  Copy("scheduler.pt", d / "training_args.bin");
  auto r = VerifyDir(t.path(), {.world_size = 2});
  const auto* c = Find(r, "checkpoint-500");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->format, CheckpointFormat::kHfTrainer);
  EXPECT_EQ(c->verdict, V::kValid) << c->Reason();
  EXPECT_TRUE(c->warnings.empty());
  fs::remove(d / "model-00002-of-00002.safetensors");
  c = Find(r = VerifyDir(t.path()), "checkpoint-500");
  EXPECT_EQ(c->verdict, V::kIncomplete);
  EXPECT_NE(c->Reason().find("model-00002-of-00002.safetensors"), std::string::npos);
  // A user's own checkpoint-N/model.pt is not a broken Trainer save.
  Copy("model.pt", t.path() / "checkpoint-400" / "model.pt");
  EXPECT_EQ(VerifyDir(t.path()).outcome.path(), "checkpoint-400");
}

TEST(RealFiles, AccelerateSaveStateFolders) {
  TempDir t;
  for (int n : {0, 1}) {
    const fs::path d = t.path() / "checkpoints" / ("checkpoint_" + std::to_string(n));
    Copy("model.safetensors", d / "model.safetensors");
    Copy("optimizer.pt", d / "optimizer.bin");
    Copy("scheduler.pt", d / "scheduler.bin");
    Copy("random_states.pkl", d / "random_states_0.pkl");
    Copy("random_states.pkl", d / "random_states_1.pkl");
  }
  const fs::path root = t.path() / "checkpoints";
  auto r = VerifyDir(root, {.world_size = 2});
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "checkpoint_1");
  EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kAccelerate);
  EXPECT_EQ(r.candidates[0].verdict, V::kValid) << r.candidates[0].Reason();
  fs::remove(root / "checkpoint_1" / "random_states_0.pkl");
  fs::remove(root / "checkpoint_1" / "random_states_1.pkl");
  r = VerifyDir(root);
  EXPECT_EQ(r.outcome.path(), "checkpoint_0");
  EXPECT_NE(r.candidates[0].Reason().find("random_states_0.pkl"), std::string::npos);
  Copy("random_states.pkl", root / "checkpoint_1" / "random_states_0.pkl");
  Truncate(root / "checkpoint_1" / "optimizer.bin");
  r = VerifyDir(root);
  EXPECT_EQ(r.candidates[0].verdict, V::kIncomplete) << r.candidates[0].Reason();
}

TEST(RealFiles, MegatronIterationsWithTheirTracker) {
  TempDir t;
  Copy("model_optim_rng.pt", t.path() / "iter_0001000" / "mp_rank_00" / "model_optim_rng.pt");
  Copy("model_optim_rng.pt", t.path() / "iter_0002000" / "mp_rank_00" / "model_optim_rng.pt");
  Put(t.path() / "latest_checkpointed_iteration.txt", "2000");
  auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "iter_0002000");
  EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kMegatron);
  EXPECT_EQ(r.candidates[0].verdict, V::kValid) << r.candidates[0].Reason();
  Truncate(t.path() / "iter_0002000" / "mp_rank_00" / "model_optim_rng.pt");
  r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "iter_0001000");
}

TEST(RealFiles, DeepSpeedTagsWithLatest) {
  TempDir t;
  for (const char* tag : {"global_step100", "global_step200"}) {
    Copy("mp_rank_00_model_states.pt", t.path() / tag / "mp_rank_00_model_states.pt");
    for (int d : {0, 1}) {  // the model states record dp_world_size 2
      Copy("zero_pp_rank_0_mp_rank_00_optim_states.pt",
           t.path() / tag / ("zero_pp_rank_" + std::to_string(d) + "_mp_rank_00_optim_states.pt"));
    }
  }
  Put(t.path() / "latest", "global_step200");
  auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "global_step200");
  EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kDeepSpeed);
  fs::remove(t.path() / "global_step200" / "zero_pp_rank_1_mp_rank_00_optim_states.pt");
  r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "global_step100");
  EXPECT_EQ(r.candidates[0].verdict, V::kIncomplete);
}

TEST(RealFiles, TorchtitanStepFoldersAreDcp) {
  TempDir t;
  WriteDcp(t.path() / "step-100", 2);
  WriteDcp(t.path() / "step-200", 2);
  fs::remove(t.path() / "step-200" / ".metadata");
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "step-100") << RenderCheckpointText(r);
  EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kDcp);
}

TEST(RealFiles, AShardedIndexInAStepFolderNamesFilesThatMustExist) {
  TempDir t;
  for (const char* s : {"step_1", "step_2"}) {
    for (const char* f : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                          "model.safetensors.index.json"}) {
      Copy(f, t.path() / s / "weights" / f);
    }
  }
  fs::remove(t.path() / "step_2" / "weights" / "model-00001-of-00002.safetensors");
  const auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "step_1");
  EXPECT_EQ(r.candidates[0].verdict, V::kIncomplete);
  EXPECT_NE(r.candidates[0].Reason().find("model-00001-of-00002.safetensors (named by"),
            std::string::npos);
}

TEST(RealFiles, AnUnknownLayoutStillHasEveryReadableFileChecked) {
  TempDir t;
  Copy("model.pt", t.path() / "step_100" / "nested" / "weights.pt");
  Copy("model.pt", t.path() / "step_200" / "nested" / "weights.pt");
  Put(t.path() / "step_200" / "nested" / "config.yaml", "lr: 0.1\n");
  auto r = VerifyDir(t.path());
  SCOPED_TRACE(RenderCheckpointText(r));
  EXPECT_EQ(r.outcome.path(), "step_200");
  EXPECT_EQ(r.candidates[0].verdict, V::kValid);
  ASSERT_EQ(r.candidates[0].warnings.size(), 1u);
  EXPECT_NE(r.candidates[0].warnings[0].find("config.yaml"), std::string::npos);
  // A damaged readable file rejects the step whatever the layout.
  Truncate(t.path() / "step_200" / "nested" / "weights.pt");
  EXPECT_EQ(VerifyDir(t.path()).outcome.path(), "step_100");
  // A file that may hold weights and has no reader leaves the step undecided, named.
  Copy("model.pt", t.path() / "step_200" / "nested" / "weights.pt");
  Put(t.path() / "step_200" / "embeddings.npy", std::string(2 << 20, '\1'));
  r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_INCONCLUSIVE);
  EXPECT_NE(r.summary.find("embeddings.npy"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("step_100 (step 100) verifies"), std::string::npos) << r.summary;
}

}  // namespace
}  // namespace denpex::engine
