// `denpex diagnose` with checkpoints: discovery of incident/checkpoints/, --checkpoint-dir,
// the fault time as `not_after` (only when the files kept their times), the Diagnosis's
// checkpoint outcome and recovery precondition, and the newest-checkpoint baseline. Built on
// the real corpus incident whose rank 0 was SIGKILLed while torch.save was writing step 15.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <fcntl.h>

#include <filesystem>

#include "denpex/common/time.h"
#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "denpex/v1/truth.pb.h"
#include "writers.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

const fs::path kCase = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real" / "tr_kill_in_save_rank0";

void SetTime(const fs::path& p, const std::string& rfc3339) {
  const TimeNs t = *ParseRfc3339(rfc3339);
  const timespec ts{static_cast<time_t>(t / kNsPerSec), static_cast<long>(t % kNsPerSec)};
  const timespec both[2] = {ts, ts};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), both, 0), 0) << p;
}

// A copy of the incident in a temporary directory (file times: now).
fs::path CopyIncident(const ckpt_test::TempDir& tmp) {
  const fs::path dst = tmp.path() / "incident";
  fs::copy(kCase / "incident", dst, fs::copy_options::recursive);
  return dst;
}

class DiagnoseCheckpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kCase)) GTEST_SKIP() << "no real corpus under " << kCase;
    ASSERT_TRUE(proto::ReadJsonFile(kCase / "expected.json", &expected_).ok());
  }
  v1::Truth expected_;
};

TEST_F(DiagnoseCheckpoints, FindsTheIncidentsCheckpointsAndRejectsTheTruncatedSave) {
  auto d = Diagnose(kCase / "incident", {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const v1::CheckpointOutcome& c = d->checkpoint();
  EXPECT_EQ(c.decision(), expected_.checkpoint().decision());
  EXPECT_EQ(c.path(), expected_.checkpoint().path());
  EXPECT_EQ(c.step(), expected_.checkpoint().step());
  EXPECT_EQ(c.dir(), "checkpoints");
  EXPECT_EQ(c.last_written_step(), 15);
  EXPECT_EQ(c.steps_lost(), 5);
  ASSERT_EQ(c.rejected_size(), 1);
  EXPECT_EQ(c.rejected(0).path(), "step_15.pt");
  EXPECT_NE(c.rejected(0).reason().find("end-of-central-directory"), std::string::npos);
  // The checkout lost the file times: the summary says they were not compared.
  EXPECT_NE(c.summary().find("file times not compared"), std::string::npos) << c.summary();
  bool resume = false;
  for (const auto& p : d->recovery().preconditions()) {
    if (p.action() != "resume_from_checkpoint") continue;
    resume = true;
    EXPECT_EQ(p.target(), "checkpoints/step_10.pt");
    EXPECT_NE(p.text().find("Resume from step 10"), std::string::npos) << p.text();
  }
  EXPECT_TRUE(resume);
  // The checkpoint files are not logs: six log files, nothing about checkpoints/ in problems.
  EXPECT_EQ(d->input().files(), 6);
  for (const auto& p : d->input().problems()) EXPECT_EQ(p.find("checkpoints/"), std::string::npos) << p;
  EXPECT_NE(RenderText(*d).find("RESUME from step_10.pt"), std::string::npos);
}

TEST_F(DiagnoseCheckpoints, ACheckpointWrittenAfterTheFaultIsNotTrustedWhenFileTimesAreKept) {
  ckpt_test::TempDir tmp;
  const fs::path inc = CopyIncident(tmp);
  // As the job left them: logs end at the job's end; step_10.pt was finished by an async
  // writer after torchrun's failure table (stamped 16:28:34, whole seconds) was written.
  for (const auto& e : fs::recursive_directory_iterator(inc)) {
    if (e.is_regular_file()) SetTime(e.path(), expected_.job().end_time());
  }
  SetTime(inc / "checkpoints" / "step_5.pt", "2026-11-29T16:28:26Z");
  SetTime(inc / "checkpoints" / "step_10.pt", "2026-11-29T16:28:35.5Z");
  SetTime(inc / "checkpoints" / "step_15.pt", expected_.job().fault_time());
  auto d = Diagnose(inc, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->checkpoint().decision(), v1::CHECKPOINT_DECISION_RESUME) << d->checkpoint().summary();
  EXPECT_EQ(d->checkpoint().path(), "step_5.pt");
  bool after = false;
  for (const auto& r : d->checkpoint().rejected())
    after |= r.path() == "step_10.pt" && r.reason().find("after the initiating fault") != std::string::npos;
  EXPECT_TRUE(after);
}

// corpora/real2/sl_time_limit with the file times the run left: slurmctld's `Time limit
// exhausted` at 06:47:31.531, and rank 0 finished step_155.pt 0.3 s later, before slurmstepd
// signalled the step. No rank had failed: a save finished after the scheduler's decision is
// judged by its contents, so the newest one that verifies is resumed.
TEST(DiagnoseCheckpointsTimeLimit, ASaveFinishedAfterTheSchedulersDecisionIsJudgedByItsContents) {
  const fs::path src = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real2" / "sl_time_limit" / "incident";
  if (!fs::exists(src)) GTEST_SKIP() << "no corpus under " << src;
  ckpt_test::TempDir tmp;
  const fs::path inc = tmp.path() / "incident";
  fs::copy(src, inc, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(inc)) {
    if (e.is_regular_file()) SetTime(e.path(), "2026-12-02T06:47:45Z");
  }
  SetTime(inc / "checkpoints" / "step_150.pt", "2026-12-02T06:47:29.33Z");
  SetTime(inc / "checkpoints" / "step_155.pt", "2026-12-02T06:47:31.83Z");
  for (const auto& e : fs::directory_iterator(inc / "checkpoints")) {
    const std::string name = e.path().filename().string();
    if (name != "step_150.pt" && name != "step_155.pt") SetTime(e.path(), "2026-12-02T06:46:00Z");
  }
  auto d = Diagnose(inc, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT) << d->reason();
  EXPECT_EQ(d->checkpoint().decision(), v1::CHECKPOINT_DECISION_RESUME) << d->checkpoint().summary();
  EXPECT_EQ(d->checkpoint().path(), "step_155.pt") << d->checkpoint().summary();
}

TEST_F(DiagnoseCheckpoints, AnExplicitDirectoryOutsideTheIncidentIsVerified) {
  ckpt_test::TempDir tmp;
  const fs::path inc = CopyIncident(tmp);
  const fs::path ckpt = tmp.path() / "elsewhere";
  fs::rename(inc / "checkpoints", ckpt);
  auto none = Diagnose(inc, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->checkpoint().decision(), v1::CHECKPOINT_DECISION_NOT_EVALUATED);
  auto d = Diagnose(inc, {.checkpoint_dir = ckpt});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->checkpoint().path(), "step_10.pt");
  EXPECT_EQ(d->checkpoint().dir(), ckpt.string());
  auto missing = Diagnose(inc, {.checkpoint_dir = tmp.path() / "nope"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--checkpoint-dir"), std::string::npos);
}

TEST_F(DiagnoseCheckpoints, TheNewestCheckpointBaselineTrustsThePointerOrTheHighestStep) {
  ckpt_test::TempDir tmp;
  const fs::path inc = CopyIncident(tmp);
  auto by_pointer = Diagnose(inc, {.strategy = Strategy::kNewestCheckpoint});
  ASSERT_TRUE(by_pointer.ok());
  EXPECT_EQ(by_pointer->strategy(), "newest-checkpoint");
  EXPECT_EQ(by_pointer->checkpoint().path(), "step_10.pt");  // `latest` names it
  fs::remove(inc / "checkpoints" / "latest");
  auto by_name = Diagnose(inc, {.strategy = Strategy::kNewestCheckpoint});
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->checkpoint().decision(), v1::CHECKPOINT_DECISION_RESUME);
  EXPECT_EQ(by_name->checkpoint().path(), "step_15.pt");  // truncated, and trusted blindly
  auto log_baseline = Diagnose(inc, {.strategy = Strategy::kFirstError});
  ASSERT_TRUE(log_baseline.ok());
  EXPECT_EQ(log_baseline->checkpoint().decision(), v1::CHECKPOINT_DECISION_NOT_EVALUATED);
}

}  // namespace
}  // namespace denpex::engine
