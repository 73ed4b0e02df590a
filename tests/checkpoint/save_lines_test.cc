// The save that was running when the fault hit (issue 23): the frameworks' save lines on their
// real shapes (Megatron-LM, DeepSpeed, HF Trainer, torchtitan, accelerate, Lightning, NeMo 2.0),
// the verifier never choosing a
// step whose save was in flight (even when its files look complete) and citing the line, a
// logged finish shown as evidence, and `denpex diagnose` on a small DeepSpeed incident whose
// rank 0 logged `is about to be saved!` for global_step20 and never `is ready now!`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "denpex/common/time.h"
#include "denpex/engine/checkpoint.h"
#include "denpex/engine/engine.h"
#include "parse/families.h"
#include "parse/parse_log.h"
#include "parse/triggers.h"
#include "writers.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

void SetTime(const fs::path& p, TimeNs t) {
  const timespec ts{static_cast<time_t>(t / kNsPerSec), static_cast<long>(t % kNsPerSec)};
  const timespec both[2] = {ts, ts};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), both, AT_SYMLINK_NOFOLLOW), 0) << p;
}

struct SaveCase {
  const char* line;
  Kind kind;
  std::int64_t step;
  const char* path;  // as the event keeps it; "" for none
  std::int32_t rank = -1;
};

// Each line through the whole parser (pre-filter, prefixes, headers, dispatch).
void ExpectSaves(const std::vector<SaveCase>& cases) {
  for (const SaveCase& c : cases) {
    const std::string text = std::string(c.line) + "\n";
    const ParsedLog log = ParseLog(text, FileContext{});
    ASSERT_EQ(log.events.size(), 1u) << c.line;
    const Event& e = log.events[0];
    EXPECT_EQ(KindName(e.kind), KindName(c.kind)) << c.line;
    const auto* d = std::get_if<CheckpointSave>(&e.detail);
    ASSERT_NE(d, nullptr) << c.line;
    EXPECT_EQ(d->step, c.step) << c.line;
    EXPECT_EQ(log.strings.Get(d->path), c.path) << c.line;
    if (c.rank >= 0) {
      EXPECT_EQ(e.rank, c.rank) << c.line;
    }
    EXPECT_EQ(LineFilter::Default().Classify(c.line), TriggerLevel::kRecord) << c.line;
  }
}

TEST(SaveLines, MegatronStartAndFinishOfEachRelease) {
  ExpectSaves({
      // checkpointing.py save_checkpoint, print_rank_0 (core_v0.8+: the format named)
      {"saving checkpoint at iteration     100 to /lustre/ckpt/gpt in torch_dist format", Kind::kSaveStarted, 100,
       "/lustre/ckpt/gpt"},
      {"[rank0]: saving checkpoint at iteration    2000 to /ckpt in torch format", Kind::kSaveStarted, 2000, "/ckpt"},
      // older releases: no format
      {"saving checkpoint at iteration    1000 to checkpoints/gpt2_345m", Kind::kSaveStarted, 1000,
       "checkpoints/gpt2_345m"},
      // iter_finalize_fn, after every rank's barrier (async saves log it when finalised)
      {"  successfully saved checkpoint from iteration     100 to /lustre/ckpt/gpt [ t 1/2, p 1/1 ]",
       Kind::kSaveFinished, 100, "/lustre/ckpt/gpt"},
      {"  successfully saved checkpoint from iteration    1000 to checkpoints/gpt2_345m", Kind::kSaveFinished, 1000,
       "checkpoints/gpt2_345m"},
  });
}

TEST(SaveLines, DeepSpeedCheckpointEngineAndModelStates) {
  ExpectSaves({
      {"[2023-07-24 13:21:33,261] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step10 is about "
       "to be saved!",
       Kind::kSaveStarted, 10, "global_step10", 0},
      {"[2023-07-24 13:21:33,263] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: "
       "experiments/bert_pretrain/global_step10/mp_rank_00_model_states.pt",
       Kind::kSaveStarted, 10, "experiments/bert_pretrain/global_step10/mp_rank_00_model_states.pt", 0},
      {"[2023-07-24 13:21:36,907] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step10 is "
       "ready now!",
       Kind::kSaveFinished, 10, "global_step10"},
      // a user's own tag: no step in it
      {"[2024-05-02 10:00:01,000] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint epoch_19_whole is about "
       "to be saved!",
       Kind::kSaveStarted, -1, "epoch_19_whole", 0},
  });
}

TEST(SaveLines, HfTrainerAndTorchtitan) {
  ExpectSaves({
      // transformers' explicit format (enable_explicit_format) and the example scripts' basicConfig
      {"[INFO|trainer.py:3984] 2024-10-01 10:00:00,123 >> Saving model checkpoint to /out/run1/checkpoint-500",
       Kind::kSaveStarted, 500, "/out/run1/checkpoint-500"},
      {"10/01/2024 10:00:00 - INFO - transformers.trainer - Saving model checkpoint to out/tmp-checkpoint-49",
       Kind::kSaveStarted, 49, "out/tmp-checkpoint-49"},
      // torchtitan's checkpoint.py: neither line names the step
      {"[rank0]:[titan] 2025-04-01 00:25:54,090 - root - INFO - Saving the checkpoint (or staging if async is "
       "enabled).",
       Kind::kSaveStarted, -1, ""},
      {"[rank0]:2025-04-01 00:25:59,616 - root - INFO - Finished saving the checkpoint (or staging if async is "
       "enabled)in 5.53 seconds.",
       Kind::kSaveFinished, -1, ""},
  });
}

TEST(SaveLines, AccelerateLightningAndNeMo) {
  ExpectSaves({
      // accelerate's save_state (its examples' basicConfig); checkpoint_3 counts saves, not steps
      {"12/02/2026 09:00:20 - INFO - accelerate.accelerator - Saving current state to /out/checkpoints/checkpoint_3",
       Kind::kSaveStarted, -1, "/out/checkpoints/checkpoint_3"},
      {"12/02/2026 09:00:21 - INFO - accelerate.checkpointing - Random states saved in "
       "/out/checkpoints/checkpoint_3/random_states_0.pkl",
       Kind::kSaveFinished, -1, "/out/checkpoints/checkpoint_3"},
      // Lightning ModelCheckpoint(verbose=True), rank_zero_info, before it writes the file
      {"Epoch 0, global step 20: 'step' reached 20.00000 (best 20.00000), saving model to "
       "'/ck/epoch=0-step=20.ckpt' as top 3",
       Kind::kSaveStarted, 20, "/ck/epoch=0-step=20.ckpt"},
      // NeMo 2.0's async save: the finalize names the next step; the step is the path's
      {"[NeMo I 2025-05-22 20:08:53 model_checkpoint:497] Scheduled async checkpoint save for "
       "/mnt/ck/model_name=0--val_loss=0.00-step=18-consumed_samples=9728.0-last.ckpt",
       Kind::kSaveStarted, 18, "/mnt/ck/model_name=0--val_loss=0.00-step=18-consumed_samples=9728.0-last.ckpt"},
      {"[NeMo I 2026-02-17 17:58:50 nemo_logging:393] Async checkpoint save for step 25 (/ckpt/step=24.ckpt) "
       "finalized successfully.",
       Kind::kSaveFinished, 24, "/ckpt/step=24.ckpt"},
      {"[NeMo I 2026-02-17 17:58:50 nemo_logging:393] Successfully saved checkpoint from iteration 24 to "
       "/ckpt/step=24.ckpt",
       Kind::kSaveFinished, 24, "/ckpt/step=24.ckpt"},
  });
}

TEST(SaveLines, OtherLinesThatMentionCheckpointsAreNotSaves) {
  for (const char* line : {
           "[2023-07-24 13:21:33,263] [INFO] [torch_checkpoint_engine.py:21:load] [Torch] Loading checkpoint from "
           "/ckpt/global_step10/mp_rank_00_model_states.pt...",
           " loading checkpoint from /ckpt at iteration 1000",
           "Saving model checkpoint",  // no path
       }) {
    const ParsedLog log = ParseLog(std::string(line) + "\n", FileContext{});
    for (const Event& e : log.events) {
      EXPECT_NE(e.kind, Kind::kSaveStarted) << line;
      EXPECT_NE(e.kind, Kind::kSaveFinished) << line;
    }
  }
}

// Two complete DeepSpeed tags; the logs say global_step20's save never finished.
class InFlightSave : public ::testing::Test {
 protected:
  void SetUp() override {
    ckpt_test::WriteDeepSpeed(tmp_.path() / "global_step10", 2, 1, 10);
    ckpt_test::WriteDeepSpeed(tmp_.path() / "global_step20", 2, 1, 20);
    ckpt_test::Put(tmp_.path() / "latest", "global_step20");
  }
  ckpt_test::TempDir tmp_;
};

TEST_F(InFlightSave, TheStepItNamesIsNeverChosenAndTheRejectionCitesTheLine) {
  CheckpointOptions opts{.world_size = 2};
  opts.saves.push_back({.step = 10, .path = "global_step10", .finished = true, .cite = "rank0.log:3 (saved step 10)"});
  opts.saves.push_back({.step = 20, .path = "global_step20", .cite = "rank0.log:9 (saving step 20)"});
  auto r = VerifyCheckpointDir(tmp_.path(), opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->outcome.decision(), v1::CHECKPOINT_DECISION_RESUME) << r->summary;
  EXPECT_EQ(r->outcome.path(), "global_step10");
  ASSERT_EQ(r->outcome.rejected_size(), 1);
  EXPECT_EQ(r->outcome.rejected(0).path(), "global_step20");
  EXPECT_NE(r->outcome.rejected(0).reason().find("in flight when the job failed: rank0.log:9 (saving step 20)"),
            std::string::npos)
      << r->outcome.rejected(0).reason();
  // Its files were still checked, and passed: the log alone rejects it.
  const CheckpointCandidate& newest = r->candidates[0];
  EXPECT_EQ(newest.verdict, CheckpointVerdict::kIncomplete);
  EXPECT_EQ(newest.checks.front().kind, CheckKind::kSaveLog);
  EXPECT_GT(newest.checks.size(), 2u);
  // The finished save is evidence for the chosen step.
  bool evidence = false;
  for (const CheckpointCheck& k : r->candidates[1].checks)
    evidence |= k.kind == CheckKind::kSaveLog && k.result == CheckpointVerdict::kValid &&
                k.detail.find("rank0.log:3") != std::string::npos;
  EXPECT_TRUE(evidence);
  EXPECT_NE(RenderCheckpointText(*r).find("save_log"), std::string::npos);
}

TEST_F(InFlightSave, ASaveWhoseLinesNameNoStepIsTheCandidateModifiedSinceItBegan) {
  // torchtitan: `Saving the checkpoint` with no finish, begun after global_step10 was written.
  const TimeNs t0 = *ParseRfc3339("2026-03-02T09:00:00Z");
  for (const auto& e : fs::recursive_directory_iterator(tmp_.path())) {
    const bool newer = e.path().string().find("global_step20") != std::string::npos;
    SetTime(e.path(), newer ? t0 + 60 * kNsPerSec : t0);
  }
  CheckpointOptions opts{.world_size = 2};
  opts.saves.push_back({.began = t0 + 30 * kNsPerSec, .cite = "rank0.log:7 (saving a checkpoint)"});
  auto r = VerifyCheckpointDir(tmp_.path(), opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->outcome.path(), "global_step10") << r->summary;
}

TEST_F(InFlightSave, WithoutSaveLinesTheNewestCompleteStepIsChosen) {
  auto r = VerifyCheckpointDir(tmp_.path(), {.world_size = 2});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->outcome.path(), "global_step20") << r->summary;
}

// A small DeepSpeed job: rank 0 saved global_step10 (logged ready), began global_step20, and
// rank 1 then died of a CUDA error before `is ready now!`. global_step20's files are complete:
// only the log says that its save never finished.
TEST(InFlightSaveDiagnosis, TheDiagnosisResumesFromTheLastFinishedSaveAndCitesTheLine) {
  ckpt_test::TempDir tmp;
  const fs::path inc = tmp.path() / "incident";
  ckpt_test::WriteDeepSpeed(inc / "checkpoints" / "global_step10", 2, 1, 10);
  ckpt_test::WriteDeepSpeed(inc / "checkpoints" / "global_step20", 2, 1, 20);
  ckpt_test::Put(inc / "checkpoints" / "latest", "global_step20");
  const std::string h = "[INFO] [logging.py:96:log_dist] [Rank 0] ";
  ckpt_test::Put(inc / "rank_0.log",
                 "[2026-03-02 09:00:00,100] " + h + "step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n" +
                     "[2026-03-02 09:00:00,200] " + h + "[Torch] Checkpoint global_step10 is about to be saved!\n" +
                     "[2026-03-02 09:00:00,210] " + h +
                     "Saving model checkpoint: /ckpt/global_step10/mp_rank_00_model_states.pt\n" +
                     "[2026-03-02 09:00:01,900] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint "
                     "global_step10 is ready now!\n" +
                     "[2026-03-02 09:00:20,100] " + h + "step=20, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n" +
                     "[2026-03-02 09:00:20,200] " + h + "[Torch] Checkpoint global_step20 is about to be saved!\n" +
                     "[2026-03-02 09:00:20,210] " + h +
                     "Saving model checkpoint: /ckpt/global_step20/mp_rank_00_model_states.pt\n");
  ckpt_test::Put(inc / "rank_1.log",
                 "[rank1]: Traceback (most recent call last):\n"
                 "[rank1]:   File \"train.py\", line 80, in <module>\n"
                 "[rank1]:     engine.save_checkpoint(args.save)\n"
                 "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n");
  auto d = Diagnose(inc, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& c = d->checkpoint();
  EXPECT_EQ(c.decision(), v1::CHECKPOINT_DECISION_RESUME) << c.summary();
  EXPECT_EQ(c.path(), "global_step10") << c.summary();
  ASSERT_GE(c.rejected_size(), 1);
  EXPECT_EQ(c.rejected(0).path(), "global_step20");
  EXPECT_NE(c.rejected(0).reason().find("rank_0.log:6"), std::string::npos) << c.rejected(0).reason();
  EXPECT_NE(c.rejected(0).reason().find("in flight"), std::string::npos) << c.rejected(0).reason();
  bool cited = false;
  for (const auto& p : d->recovery().preconditions())
    cited |= p.action() == "resume_from_checkpoint" && p.text().find("in flight") != std::string::npos;
  EXPECT_TRUE(cited);
}

// The HF Trainer logs no finish: a save is finished when the next one starts; the last one,
// followed by nothing, may have finished before the fault (the Trainer logs its next step only
// at logging_steps) or not. The log cannot tell, so the files decide: trainer_state.json is the
// Trainer's last file.
std::string TrainerLog() {
  return "[INFO|trainer.py:3984] 2026-03-02 09:00:00,100 >> Saving model checkpoint to /out/checkpoint-10\n"
         "[INFO|trainer.py:3984] 2026-03-02 09:00:20,100 >> Saving model checkpoint to /out/checkpoint-20\n"
         "[rank0]: Traceback (most recent call last):\n"
         "[rank0]:   File \"train.py\", line 80, in <module>\n"
         "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n";
}

TEST(InFlightSaveDiagnosis, TheTrainersLastSaveWithNothingAfterItIsJudgedByItsFiles) {
  ckpt_test::TempDir tmp;
  const fs::path inc = tmp.path() / "incident";
  ckpt_test::WriteHf(inc / "checkpoints" / "checkpoint-10", 10);
  ckpt_test::WriteHf(inc / "checkpoints" / "checkpoint-20", 20);
  ckpt_test::Put(inc / "rank_0.log", TrainerLog());
  auto d = Diagnose(inc, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& c = d->checkpoint();
  EXPECT_EQ(c.decision(), v1::CHECKPOINT_DECISION_RESUME) << c.summary();
  EXPECT_EQ(c.path(), "checkpoint-20") << c.summary();
  EXPECT_EQ(c.rejected_size(), 0) << c.summary();
}

TEST(InFlightSaveDiagnosis, TheTrainersLastSaveWithoutItsStateFileIsRejectedByItsFiles) {
  ckpt_test::TempDir tmp;
  const fs::path inc = tmp.path() / "incident";
  ckpt_test::WriteHf(inc / "checkpoints" / "checkpoint-10", 10);
  ckpt_test::WriteHf(inc / "checkpoints" / "checkpoint-20", 20);
  fs::remove(inc / "checkpoints" / "checkpoint-20" / "trainer_state.json");
  ckpt_test::Put(inc / "rank_0.log", TrainerLog());
  auto d = Diagnose(inc, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& c = d->checkpoint();
  EXPECT_EQ(c.path(), "checkpoint-10") << c.summary();
  ASSERT_GE(c.rejected_size(), 1);
  EXPECT_EQ(c.rejected(0).path(), "checkpoint-20");
  EXPECT_NE(c.rejected(0).reason().find("trainer_state.json"), std::string::npos) << c.rejected(0).reason();
}

// The real corpus job (rank 0 SIGKILLed while writing step 15), with a save line for step 15
// added to rank 0's log: ranks 2 and 3 then logged iteration 15, the saved step's own line, as
// other ranks do while rank 0 saves. That is no sign the save returned: it stays in flight, and
// the rejection of step_15.pt cites the line, not only its truncated file.
TEST(InFlightSaveDiagnosis, OtherRanksLineOfTheSavedStepIsNoSignTheSaveReturned) {
  const fs::path src = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real" / "tr_kill_in_save_rank0" / "incident";
  if (!fs::exists(src)) GTEST_SKIP() << "no corpus under " << src;
  ckpt_test::TempDir tmp;
  const fs::path inc = tmp.path() / "incident";
  fs::copy(src, inc, fs::copy_options::recursive);
  ckpt_test::Put(inc / "node-a" / "rank_0.log",
                 ckpt_test::Slurp(inc / "node-a" / "rank_0.log") +
                     "2026-11-29 16:28:29,001 INFO [rank0] [Torch] Checkpoint step_15 is about to be saved!\n");
  auto d = Diagnose(inc, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& c = d->checkpoint();
  EXPECT_EQ(c.path(), "step_10.pt") << c.summary();
  ASSERT_GE(c.rejected_size(), 1);
  EXPECT_EQ(c.rejected(0).path(), "step_15.pt");
  EXPECT_NE(c.rejected(0).reason().find("in flight"), std::string::npos) << c.rejected(0).reason();
}

}  // namespace
}  // namespace denpex::engine
