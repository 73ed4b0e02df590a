// Whole-job findings on small hand-written incidents: the scheduler ended the job, a node was
// lost, a rank issued a mismatched collective, srun's own words about its tasks.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "denpex/engine/engine.h"
#include "diagnose_dir.h"
#include "fixture.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::DiagnoseDir;
using testing::TempDir;
using testing::Write;

// torch 2.1 c10 lines (no time, `[Rank r]` only) as srun --label prints them.
std::string Timeout(int rank, int group_rank, int seq, const char* op, long numel) {
  return std::to_string(rank) + ": [E ProcessGroupNCCL.cpp:475] [Rank " + std::to_string(group_rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) + ", OpType=" + op +
         ", NumelIn=" + std::to_string(numel) + ", NumelOut=" + std::to_string(numel) +
         ", Timeout(ms)=600000) ran for 600089 milliseconds before timing out.\n";
}

TEST(Analysis, OddCollectiveAmongPeersIsAMismatchEvenWithoutGroupIds) {
  TempDir dir;
  std::string out;
  for (int r = 0; r < 8; ++r) out += Timeout(r, r % 4, 35, r == 6 ? "_ALLGATHER_BASE" : "ALLREDUCE", r == 6 ? 2097152 : 16777216);
  Write(dir.path() / "slurm-1.out", out);
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 6);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_COLLECTIVE_MISMATCH);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_TRUE(d.initiator().time().empty());  // torch 2.1 lines carry no time: none is made up
}

TEST(Analysis, SchedulerTimeLimitBeforeAnyFailureNamesTheScheduler) {
  TempDir dir;
  Write(dir.path() / "slurm-4242.out",
        "slurmstepd: error: *** JOB 4242 ON gpu-0001 CANCELLED AT 2026-03-02T13:00:00 DUE TO TIME LIMIT ***\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "srun: error: gpu-0001: tasks 0-7: Terminated\n"
        "srun: error: gpu-0002: tasks 8-15: Killed\n");
  Write(dir.path() / "slurmctld.log", "[2026-03-02T13:00:00.120] Time limit exhausted for JobId=4242\n");
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT);
}

TEST(Analysis, RankKilledBeforeTheCancellationIsNotTheSchedulers) {
  TempDir dir;
  Write(dir.path() / "slurm-4242.out",
        "srun: error: gpu-0001: task 3: Killed\n"
        "srun: launch/slurm: _step_signal: Terminating StepId=4242.0\n"
        "slurmstepd: error: *** STEP 4242.0 ON gpu-0001 CANCELLED AT 2026-03-02T09:00:01 ***\n"
        "srun: error: gpu-0001: tasks 0-2,4-7: Terminated\n");
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().node(), "gpu-0001");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
}

// The scheduler ended the job (preemption, a user's scancel: no rank is the cause) against a
// rank that failed and Slurm cleaning up after it (KillOnBadExit: srun's termination, whose
// slurmstepd lines carry no reason, is a consequence; the rank is the cause). The same srun
// words follow in both; what comes first, and the controller's word, decide.
constexpr char kTerminatedTasks[] =
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
    "srun: error: gpu-0001: tasks 0-7: Terminated\n"
    "srun: error: gpu-0002: tasks 8-15: Terminated\n";

TEST(Analysis, PreemptionBeforeAnyFailureNamesTheScheduler) {
  TempDir dir;
  Write(dir.path() / "slurm-4242.out",
        std::string("slurmstepd: error: *** JOB 4242 ON gpu-0001 CANCELLED AT 2026-03-02T13:00:00 DUE TO PREEMPTION ***\n") +
            kTerminatedTasks);
  Write(dir.path() / "slurmctld.log",
        "[2026-03-02T13:00:00.120] preempted JobId=4242 has been killed to reclaim resources for JobId=4300\n");
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_PREEMPTION);
}

TEST(Analysis, UserScancelIsTheSchedulersCancelNotARank) {
  TempDir dir;
  Write(dir.path() / "slurm-4242.out",
        std::string("slurmstepd: error: *** JOB 4242 ON gpu-0001 CANCELLED AT 2026-03-02T11:17:03 ***\n") + kTerminatedTasks);
  Write(dir.path() / "slurmctld.log", "[2026-03-02T11:17:03.052] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=4242 uid 1000\n");
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_CANCEL);
}

TEST(Analysis, KillOnBadExitAfterARankRaisedIsTheRanksNotTheSchedulers) {
  TempDir dir;
  Write(dir.path() / "slurm-4242.out",
        " 9: Traceback (most recent call last):\n"
        " 9:   File \"/workspace/train.py\", line 12, in <module>\n"
        " 9:     main()\n"
        " 9: ValueError: loss is NaN at step 41\n"
        "srun: error: gpu-0002: task 9: Exited with exit code 1\n"
        "srun: launch/slurm: _step_signal: Terminating StepId=4242.0\n"
        "slurmstepd: error: *** STEP 4242.0 ON gpu-0001 CANCELLED AT 2026-03-02T09:41:07 ***\n"
        "slurmstepd: error: *** STEP 4242.0 ON gpu-0002 CANCELLED AT 2026-03-02T09:41:07 ***\n"
        "srun: error: gpu-0001: tasks 0-7: Terminated\n"
        "srun: error: gpu-0002: tasks 8,10-15: Terminated\n");
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 9);
  EXPECT_EQ(d.initiator().node(), "gpu-0002");
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
}

TEST(Analysis, NodeWhoseAgentLogStopsWhileItsRanksAreSilentIsLost) {
  TempDir dir;
  testing::Job job{.nodes = 4, .gpus = 8, .tp = 8, .pp = 2, .dp = 2};
  // Node 1's ranks hang silently; its torchrun log stops without a report: as a lost node.
  testing::WriteIncident(dir.path(), {.job = job, .fault = testing::Fault::kHang, .initiator = 8});
  const fs::path agent = dir.path() / job.Host(1) / "torchrun.log";
  const std::string text = testing::Slurp(agent);
  Write(agent, text.substr(0, text.find('\n') + 1));  // its first line only
  for (int r = 8; r < 16; ++r) Write(dir.path() / job.Host(1) / ("rank_" + std::to_string(r) + ".log"), "");
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), job.Host(1));
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

TEST(Analysis, EveryStrategyCopesWithLabelledSlurmLinesOnly) {
  TempDir dir;
  Write(dir.path() / "slurm-9.out",
        "7: slurmstepd: error: *** STEP 9.0 ON sn01 CANCELLED AT 2026-03-02T13:00:00 DUE TO PREEMPTION ***\n"
        "srun: error: sn01: tasks 0-7: Terminated\n");
  for (Strategy s : {Strategy::kEngine, Strategy::kFirstError, Strategy::kLoudest, Strategy::kElasticRootCause}) {
    auto d = Diagnose(dir.path(), {.strategy = s, .threads = 1});
    ASSERT_TRUE(d.ok()) << StrategyName(s);
  }
}

}  // namespace
}  // namespace denpex::engine
