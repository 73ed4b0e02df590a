// The engine on small srun incidents (slurm-<jobid>.out + slurmctld.log, written here in the
// shapes of docs/log_formats.md §10-12b): a node Slurm declared failed while the job kept
// training is the scheduler's doing; a node whose loss stopped the job is the host's; a
// requeued job is diagnosed on the run that failed and says it was requeued.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "diagnose_ok.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

struct SrunJob {
  int last_iteration_second = 340;  // seconds after 09:00:00 of the last iteration line of the run
  bool requeue = false;
};

// "  [2026-03-02 09:MM:SS] iteration ..." for second `s` after 09:00:00 (Megatron, rank 23).
std::string Iteration(int s, int iteration) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "23:  [2026-03-02 09:%02d:%02d] iteration %8d/  100000 | consumed samples: %12d | elapsed time per "
                "iteration (ms): 2000.0 | learning rate: 1.500000E-06 | global batch size:    32 | lm loss: "
                "9.000000E+00 | loss scale: 1.0 | grad norm: 2.000 | number of skipped iterations:   0 | number of "
                "nan iterations:   0 |\n",
                s / 60, s % 60, iteration, iteration * 32);
  return buf;
}

// 3 nodes x 8 ranks; gpu-0002 is found not responding at 09:02:28 and set DOWN at 09:05:59.
void WriteSrunIncident(const fs::path& dir, const SrunJob& job) {
  fs::create_directories(dir);
  std::ofstream out(dir / "slurm-4242001.out");
  if (job.requeue) out << "SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=0 SLURM_JOB_NODELIST=gpu-[0001-0003]\n";
  int iteration = 0;
  for (int s = 10; s <= job.last_iteration_second; s += 2) out << Iteration(s, ++iteration);
  out << "srun: error: Node failure on gpu-0002\n"
         "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
         "slurmstepd: error: *** JOB 4242001 ON gpu-0001 CANCELLED AT 2026-03-02T09:05:59 DUE TO NODE FAILURE, SEE "
         "SLURMCTLD LOG FOR DETAILS ***\n"
         "slurmstepd: error: *** STEP 4242001.0 ON gpu-0001 CANCELLED AT 2026-03-02T09:05:59 DUE TO NODE FAILURE, SEE "
         "SLURMCTLD LOG FOR DETAILS ***\n"
         "slurmstepd: error: *** STEP 4242001.0 ON gpu-0003 CANCELLED AT 2026-03-02T09:05:59 DUE TO NODE FAILURE, SEE "
         "SLURMCTLD LOG FOR DETAILS ***\n"
         "srun: error: gpu-0001: tasks 0-7: Terminated\n"
         "srun: error: gpu-0003: tasks 16-23: Terminated\n";
  if (job.requeue) {  // the next run appends: banner, checkpoint load, a few iterations
    out << "SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=1 SLURM_JOB_NODELIST=gpu-[0001,0003-0004]\n"
           " 0:  successfully loaded checkpoint from /checkpoints/4242001 at iteration 10\n";
    for (int s = 560; s <= 570; s += 2) out << Iteration(s, ++iteration);
  }
  std::ofstream ctld(dir / "slurmctld.log");
  ctld << "[2026-03-02T09:00:00.014] sched: Allocate JobId=4242001 NodeList=gpu-[0001-0003] #CPUs=336 Partition=gpu\n"
          "[2026-03-02T09:02:28.428] error: Nodes gpu-0002 not responding\n"
          "[2026-03-02T09:05:59.834] error: Nodes gpu-0002 not responding, setting DOWN\n";
  if (job.requeue) {
    ctld << "[2026-03-02T09:05:59.834] requeue JobId=4242001 due to failure of node gpu-0002\n"
            "[2026-03-02T09:08:36.814] sched: Allocate JobId=4242001 NodeList=gpu-[0001,0003-0004] #CPUs=336 "
            "Partition=gpu\n";
  } else {
    ctld << "[2026-03-02T09:05:59.834] Killing JobId=4242001 on failed node gpu-0002\n"
            "[2026-03-02T09:06:00.581] _job_complete: JobId=4242001 WTERMSIG 15\n"
            "[2026-03-02T09:06:00.581] _job_complete: JobId=4242001 done\n"
            "[2026-03-02T09:09:39.834] Node gpu-0002 now responding\n";
  }
}

using testing::DiagnoseOk;

bool Cites(const v1::Diagnosis& d, const std::string& needle, v1::EvidenceRole role) {
  return std::any_of(d.evidence().begin(), d.evidence().end(), [&](const v1::Evidence& e) {
    return e.role() == role && e.text().find(needle) != std::string::npos;
  });
}

bool HasAction(const v1::Diagnosis& d, const std::string& action) {
  const auto& p = d.recovery().preconditions();
  return std::any_of(p.begin(), p.end(), [&](const v1::Precondition& c) { return c.action() == action; });
}

TEST(SchedulerNodeFailure, TrainingPastNotRespondingMeansTheSchedulerEndedTheJob) {
  TempDir tmp;
  WriteSrunIncident(tmp.path(), {.last_iteration_second = 340});
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().node(), "gpu-0002");
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_TRUE(Cites(d, "error: Nodes gpu-0002 not responding, setting DOWN", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(Cites(d, "Killing JobId=4242001 on failed node gpu-0002", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_TRUE(Cites(d, "] iteration      166/", v1::EVIDENCE_ROLE_CORROBORATING));  // the last one, at 09:05:40
  EXPECT_TRUE(Cites(d, "Node gpu-0002 now responding", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_TRUE(HasAction(d, "resume_node"));
  EXPECT_FALSE(HasAction(d, "drain_node"));
}

TEST(SchedulerNodeFailure, ProgressStoppingWithTheNodeIsANodeLoss) {
  TempDir tmp;
  WriteSrunIncident(tmp.path(), {.last_iteration_second = 40});
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().node(), "gpu-0002");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  EXPECT_TRUE(Cites(d, "error: Nodes gpu-0002 not responding, setting DOWN", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(HasAction(d, "drain_node"));
  EXPECT_EQ(d.initiator().time().substr(0, 19), "2026-03-02T09:00:40");  // when progress stopped
}

// The next run's iterations (after SLURM_RESTART_COUNT=1) are not progress of the failed run.
TEST(SchedulerNodeFailure, RequeuedJobIsDiagnosedOnTheRunThatFailed) {
  TempDir tmp;
  WriteSrunIncident(tmp.path(), {.last_iteration_second = 40, .requeue = true});
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().node(), "gpu-0002");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  EXPECT_TRUE(Cites(d, "requeue JobId=4242001 due to failure of node gpu-0002", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_NE(d.reason().find("Slurm requeued the job"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("SLURM_RESTART_COUNT=1"), std::string::npos) << d.reason();
  EXPECT_TRUE(HasAction(d, "verify_requeued_run"));
  EXPECT_FALSE(HasAction(d, "restart_job"));
}

TEST(SchedulerNodeFailure, RequeuedAfterASilentSlurmdIsStillTheSchedulers) {
  TempDir tmp;
  WriteSrunIncident(tmp.path(), {.last_iteration_second = 340, .requeue = true});
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_TRUE(HasAction(d, "verify_requeued_run"));
}

// `sbatch --requeue` + `srun --label python3 train.py`, then an administrator's `scontrol requeue
// 5550` (corpora/real2 `sl_requeue`, Slurm 22.05's lines): slurmstepd's banner is the run's end,
// the scheduler's own decision, not a note beside a failure.
void WriteAdminRequeue(const fs::path& dir, bool node_failed) {
  testing::Write(dir / "slurm-5550.out",
                 "slurmstepd-sn01: error: *** JOB 5550 ON sn01 CANCELLED AT 2026-12-02T10:26:51 DUE TO JOB REQUEUE ***\n"
                 "0: slurmstepd-sn01: error: *** STEP 5550.0 ON sn01 CANCELLED AT 2026-12-02T10:26:51 DUE TO JOB REQUEUE ***\n");
  std::string ctld =
      "[2026-12-02T10:26:42.543] _slurm_rpc_submit_batch_job: JobId=5550 InitPrio=4294901759 usec=329\n"
      "[2026-12-02T10:26:44.059] sched: Allocate JobId=5550 NodeList=sn01 #CPUs=2 Partition=batch\n";
  if (node_failed) ctld += "[2026-12-02T10:26:51.100] requeue job JobId=5550 due to failure of node sn01\n";
  ctld += "[2026-12-02T10:26:54.299] Requeuing JobId=5550\n";
  testing::Write(dir / "slurmctld.log", ctld);
  testing::Write(dir / "slurmd.log",
                 "[2026-12-02T10:26:44.061] Launching batch job 5550 for UID 0\n"
                 "[2026-12-02T10:26:44.189] launch task StepId=5550.0 request from UID:0 GID:0 HOST:127.0.0.1 PORT:35416\n"
                 "[2026-12-02T10:26:51.615] [5550.batch] error: *** JOB 5550 ON sn01 CANCELLED AT 2026-12-02T10:26:51 DUE TO JOB "
                 "REQUEUE ***\n"
                 "[2026-12-02T10:26:51.615] [5550.0] error: *** STEP 5550.0 ON sn01 CANCELLED AT 2026-12-02T10:26:51 DUE TO JOB "
                 "REQUEUE ***\n"
                 "[2026-12-02T10:26:52.628] [5550.batch] done with job\n"
                 "[2026-12-02T10:26:54.119] [5550.0] error: Failed to send MESSAGE_TASK_EXIT: Connection refused\n"
                 "[2026-12-02T10:26:54.130] [5550.0] done with job\n");
}

TEST(SchedulerRequeue, AnAdministratorsRequeueIsTheSchedulerEndingTheRun) {
  TempDir tmp;
  WriteAdminRequeue(tmp.path(), false);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), "");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_CANCEL);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_TRUE(Cites(d, "*** JOB 5550 ON sn01 CANCELLED AT 2026-12-02T10:26:51 DUE TO JOB REQUEUE ***", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(Cites(d, "Requeuing JobId=5550", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_NE(d.reason().find("requeuing the job"), std::string::npos) << d.reason();
  EXPECT_TRUE(HasAction(d, "verify_requeued_run"));
}

// The same banner after Slurm's requeue of a job whose node failed is not the scheduler's own end.
TEST(SchedulerRequeue, ARequeueAfterANodeFailureIsNotACancel) {
  TempDir tmp;
  WriteAdminRequeue(tmp.path(), true);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_CANCEL) << d.reason();
}

// Only the job's output in hand: a preemption under PreemptMode=REQUEUE prints the same banner,
// so the scheduler ended the run but the class is left open.
TEST(SchedulerRequeue, TheBannerAloneLeavesTheClassOpen) {
  TempDir tmp;
  WriteAdminRequeue(tmp.path(), false);
  fs::remove(tmp.path() / "slurmctld.log");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_UNSPECIFIED) << d.reason();
  EXPECT_NE(d.reason().find("PreemptMode=REQUEUE"), std::string::npos) << d.reason();
}

// slurmctld's preemption line (PreemptMode=REQUEUE) before the same banner: a preemption.
TEST(SchedulerRequeue, AControllersPreemptionLineMakesTheRequeueAPreemption) {
  TempDir tmp;
  WriteAdminRequeue(tmp.path(), false);
  testing::Write(tmp.path() / "slurmctld.log",
                 "[2026-12-02T10:26:42.543] _slurm_rpc_submit_batch_job: JobId=5550 InitPrio=4294901759 usec=329\n"
                 "[2026-12-02T10:26:44.059] sched: Allocate JobId=5550 NodeList=sn01 #CPUs=2 Partition=batch\n"
                 "[2026-12-02T10:26:51.010] preempted JobId=5550 has been requeued to reclaim resources for JobId=5551\n"
                 "[2026-12-02T10:26:54.299] Requeuing JobId=5550\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_PREEMPTION) << d.reason();
}

}  // namespace
}  // namespace denpex::engine
