// Choosing the checkpoint: newest first by name (never by the pointer), the first VALID one
// wins, older ones are not read; pointers that disagree, suspect checkpoints written after
// the fault, unknown formats (INCONCLUSIVE, never a guess), read-only and bounded I/O.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <map>

#include "denpex/engine/checkpoint.h"
#include "denpex/proto/json_io.h"
#include "support/cpu_time.h"
#include "writers.h"

namespace denpex::engine {
namespace {

using namespace denpex::ckpt_test;
using V = CheckpointVerdict;

CheckpointReport VerifyDir(const fs::path& dir, const CheckpointOptions& o = {}) {
  auto r = VerifyCheckpointDir(dir, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : CheckpointReport{};
}

bool Has(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

TimeNs MtimeNs(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return static_cast<TimeNs>(st.st_mtim.tv_sec) * kNsPerSec + st.st_mtim.tv_nsec;
}

// Three flat torch.save files as the real corpus has them: step_15 truncated by a kill.
void WriteFlat(const fs::path& dir) {
  for (int step : {5, 10, 15}) {
    Put(dir / ("step_" + std::to_string(step) + ".pt"),
        TorchState("step_" + std::to_string(step), {{"step", step}}));
  }
  fs::resize_file(dir / "step_15.pt", fs::file_size(dir / "step_15.pt") / 2);
  Put(dir / "latest", "step_10.pt");
}

TEST(Selection, TheNewestValidCheckpointIsChosenAndOlderOnesAreNotRead) {
  TempDir t;
  WriteFlat(t.path());
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_RESUME);
  EXPECT_EQ(r.outcome.path(), "step_10.pt");
  EXPECT_EQ(r.outcome.step(), 10);
  ASSERT_EQ(r.outcome.rejected_size(), 1);
  EXPECT_EQ(r.outcome.rejected(0).path(), "step_15.pt");
  EXPECT_NE(r.outcome.rejected(0).reason().find("truncated"), std::string::npos);
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_FALSE(r.candidates[2].evaluated);
  EXPECT_EQ(r.last_written_step, 15);
  EXPECT_EQ(r.steps_lost, 5);
  EXPECT_TRUE(r.notes.empty());  // the pointer agrees with the choice
}

TEST(Selection, LatestNamingATagWithMissingShardsFallsBackAndSaysHowToForceIt) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step100", 2, 1, 100);
  WriteDeepSpeed(t.path() / "global_step200", 2, 1, 200);
  WriteDeepSpeed(t.path() / "global_step300", 2, 1, 300);
  fs::remove(t.path() / "global_step300" / "zero_pp_rank_1_mp_rank_00_optim_states.pt");
  Put(t.path() / "latest", "global_step300");
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "global_step200");
  EXPECT_EQ(r.steps_lost, 100);
  EXPECT_TRUE(Has(r.notes, "latest names global_step300 (INCOMPLETE")) << RenderCheckpointText(r);
  EXPECT_TRUE(Has(r.notes, "tag=\"global_step200\""));
}

TEST(Selection, APointerToAMissingStepOrAnEmptyTrackerIsReportedAndIgnored) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step100", 2, 1, 100);
  Put(t.path() / "latest", "global_step400");
  auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.path(), "global_step100");
  EXPECT_NE(r.pointer->problem.find("not in the directory"), std::string::npos);

  TempDir m;
  WriteMegatron(m.path() / "iter_0000100", 1, 1, 100);
  Put(m.path() / "latest_checkpointed_iteration.txt", "");
  r = VerifyDir(m.path());
  EXPECT_EQ(r.outcome.path(), "iter_0000100");
  EXPECT_TRUE(Has(r.notes, "latest_checkpointed_iteration.txt is empty"))
      << RenderCheckpointText(r);
}

TEST(Selection, NoDeepSpeedLatestFileIsWorthANote) {
  TempDir t;
  WriteDeepSpeed(t.path() / "global_step100", 2, 1, 100);
  EXPECT_TRUE(Has(VerifyDir(t.path()).notes, "silently start from scratch"));
}

TEST(Selection, WhenEveryCandidateFailsThereIsNoSafeCheckpoint) {
  TempDir t;
  WriteFlat(t.path());
  Put(t.path() / "step_10.pt", "");
  Put(t.path() / "step_5.pt", "garbage, not a zip");
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  EXPECT_EQ(r.outcome.rejected_size(), 3);
  EXPECT_EQ(r.steps_lost, -1);
}

TEST(Selection, AnUnknownFormatIsInconclusiveNeverAGuess) {
  TempDir t;
  Put(t.path() / "step_200.pt", TorchState("step_200", {{"step", 200}}));
  Put(t.path() / "step_300" / "weights.npz", "PK\x03\x04 numpy things");
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_INCONCLUSIVE);
  EXPECT_EQ(r.candidates[0].verdict, V::kInconclusive);
  EXPECT_NE(r.summary.find("step_200.pt (step 200) verifies"), std::string::npos) << r.summary;
}

TEST(Selection, EmptyDirectoriesAndAFlatCheckpointWithoutSteps) {
  TempDir t;
  EXPECT_EQ(VerifyDir(t.path()).outcome.decision(), v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  Put(t.path() / "notes.txt", "hello");
  EXPECT_EQ(VerifyDir(t.path()).outcome.decision(), v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  // model.pt beside optimizer.pt with no step anywhere: the directory is one checkpoint.
  Put(t.path() / "model.pt", TorchState("model", {}));
  Put(t.path() / "optimizer.pt", TorchState("optimizer", {}));
  auto r = VerifyDir(t.path());
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_RESUME) << r.summary;
  EXPECT_EQ(r.outcome.path(), ".");
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].format, CheckpointFormat::kTorchDir);
  // A directory without a step and without checkpoint files at its top level says nothing.
  TempDir u;
  Put(u.path() / "logs" / "events.out", "x");
  EXPECT_EQ(VerifyDir(u.path()).outcome.decision(), v1::CHECKPOINT_DECISION_INCONCLUSIVE);
}

TEST(Selection, ACheckpointWrittenAfterTheFaultIsSuspectAndNotChosen) {
  TempDir t;
  WriteFlat(t.path());
  Put(t.path() / "step_15.pt", TorchState("step_15", {{"step", 15}}));
  fs::last_write_time(t.path() / "step_15.pt",
                      fs::last_write_time(t.path() / "step_10.pt") + std::chrono::minutes(1));
  const TimeNs fault_ns = MtimeNs(t.path() / "step_10.pt") + 30 * kNsPerSec;
  auto r = VerifyDir(t.path(), {.not_after = fault_ns});
  EXPECT_TRUE(r.candidates[0].suspect);
  EXPECT_EQ(r.candidates[0].verdict, V::kValid);
  EXPECT_EQ(r.outcome.path(), "step_10.pt");
  EXPECT_NE(r.outcome.rejected(0).reason().find("after the initiating fault"), std::string::npos);

  fs::remove(t.path() / "step_10.pt");
  fs::remove(t.path() / "step_5.pt");
  r = VerifyDir(t.path(), {.not_after = fault_ns});
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_INCONCLUSIVE);
}

TEST(Selection, SymbolicLinksOutOfTheDirectoryAreNotFollowed) {
  TempDir outside, t;
  Put(outside.path() / "real.pt", TorchState("real", {}));
  Put(t.path() / "step_5.pt", TorchState("step_5", {}));
  fs::create_symlink(outside.path() / "real.pt", t.path() / "step_20.pt");
  fs::create_symlink(t.path() / "step_5.pt", t.path() / "step_10.pt");  // inside: followed
  const auto r = VerifyDir(t.path());
  EXPECT_EQ(r.candidates[0].verdict, V::kInconclusive);
  EXPECT_NE(r.candidates[0].Reason().find("not followed"), std::string::npos);
  EXPECT_EQ(r.candidates[1].verdict, V::kValid);
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_INCONCLUSIVE);
}

TEST(Selection, TheDirectoryItselfCanBeTheCheckpoint) {
  TempDir t;
  WriteDcp(t.path() / "step_700", 2);
  const auto r = VerifyDir(t.path() / "step_700");
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].path, ".");
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_RESUME);
  EXPECT_EQ(r.outcome.step(), 700);
}

TEST(Selection, MissingDirectoryIsNotFoundAndAFileIsInvalidInput) {
  EXPECT_EQ(VerifyCheckpointDir("/nonexistent/denpex/ckpt", {}).status().code(),
            StatusCode::kNotFound);
  TempDir t;
  Put(t.path() / "f", "x");
  EXPECT_EQ(VerifyCheckpointDir(t.path() / "f", {}).status().code(), StatusCode::kInvalidInput);
  auto outcome = VerifyCheckpoints(t.path(), {});
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->decision(), v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
}

TEST(Selection, TheDirectoryIsNeverModified) {
  TempDir t;
  WriteFlat(t.path());
  WriteDcp(t.path() / "step_20", 2);
  WriteHf(t.path() / "checkpoint-30", 30);
  auto snapshot = [&] {
    std::map<std::string, std::pair<std::string, fs::file_time_type>> s;
    for (const auto& e : fs::recursive_directory_iterator(t.path())) {
      s[e.path().string()] = {e.is_regular_file() ? Slurp(e.path()) : "",
                              fs::last_write_time(e.path())};
    }
    return s;
  };
  const auto before = snapshot();
  (void)VerifyDir(t.path(), {.deep = true});
  EXPECT_EQ(before, snapshot());
}

TEST(Selection, AMultiGigabyteFileIsVerifiedFromItsHeader) {
  TempDir t;
  // A sparse 3 GiB safetensors file: only its header and size are read.
  const std::uint64_t n = 3ull << 30;
  const std::string head = Safetensors({{"w", "U8", {n}}}, /*data=*/false);
  Put(t.path() / "step_1.safetensors", head);
  fs::resize_file(t.path() / "step_1.safetensors", head.size() + n);
  const double start = testing::CpuSeconds();
  const auto r = VerifyDir(t.path());
  EXPECT_LT(testing::CpuSeconds() - start, testing::CpuBound(2.0));
  EXPECT_EQ(r.outcome.decision(), v1::CHECKPOINT_DECISION_RESUME);
}

TEST(Report, TextAndJsonCarryEveryCandidateWithItsChecks) {
  TempDir t;
  WriteFlat(t.path());
  const auto r = VerifyDir(t.path());
  const std::string text = RenderCheckpointText(r);
  EXPECT_NE(text.find("RESUME from step_10.pt"), std::string::npos) << text;
  EXPECT_NE(text.find("INCOMPLETE   format"), std::string::npos) << text;
  EXPECT_NE(text.find("not read (older than the choice)"), std::string::npos) << text;
  const std::string json = proto::ToJson(ToProto(r));
  EXPECT_NE(json.find("\"verdict\": \"CHECKPOINT_VERDICT_INCOMPLETE\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"steps_lost\": \"5\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"check\": \"format\""), std::string::npos) << json;
}

}  // namespace
}  // namespace denpex::engine
