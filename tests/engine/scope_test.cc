// Scope and order on small srun incidents in the shapes of real Slurm 22.05 jobs (corpora/real/
// sl_*: torch 1.13 on gloo, `srun --label`, docs/log_formats.md §10-§12, §14, §16, §18):
// slurmctld.log and slurmd.log hold every job of the cluster and a shared node's kern.log every
// process's OOM kills and every GPU's Xids, and only this job's lines are evidence; an untimed
// line is ordered only by the stamped lines around it, so a scheduler's later word is not
// taken to have come before the ranks' failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "diagnose_ok.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;
using testing::Write;

enum class Ending {
  kSigkill,    // task 1 is SIGKILLed at 16:39:36; the others lose their gloo pairs and exit 1
  kException,  // task 3 raises at 16:39:36; the others lose their gloo pairs and exit 1
  kHang,       // task 2 stops at 16:39:36; the others time out in gloo 20 s later and exit 1
  kTimeLimit,  // the job runs to its time limit (16:42:42), all tasks alive
};

struct SrunJob {
  Ending ending = Ending::kSigkill;
  bool name_job = true;     // srun's `Force Terminated StepId=4250.0` (the job's id in its output)
  bool nccl = false;        // NCCL INFO init lines (pids and busIds of the tasks)
  int last_second = 36;     // the ranks' last step line: 16:39:<s> (kTimeLimit: 16:42:36)
};

// `R: 2026-11-29 16:MM:SS.mmm rank=R step=S/400 ...` (the capture's key=value step line)
std::string Step(int rank, int minute, int second, int ms, int step) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d: 2026-11-29 16:%02d:%02d.%03d rank=%d step=%d/400 loss=0.51234 data_ms=0.1 step_ms=259.5\n",
                rank, minute, second, ms, rank, step);
  return buf;
}

std::string Traceback(int rank, const std::string& error) {
  const std::string p = std::to_string(rank) + ": ";
  return p + "Traceback (most recent call last):\n" + p + "  File \"/tmp/denpex-capture/bin/train.py\", line 220, in <module>\n" + p +
         "    main()\n" + p + "  File \"/tmp/denpex-capture/bin/train.py\", line 203, in main\n" + p +
         "    loss.backward()  # DDP all-reduces the gradients here\n" + p + error + "\n";
}

// 4 tasks on sn01 (pids 4125-4128, GPUs 0000:1b:00 .. 0000:1e:00 when NCCL prints them).
void WriteJobOutput(const fs::path& dir, const SrunJob& job) {
  std::string out;
  for (int r = 0; r < 4; ++r) {
    out += std::to_string(r) + ": 2026-11-29 16:39:33,404 INFO [rank" + std::to_string(r) + "] train: process group ready: backend=gloo rank=" +
           std::to_string(r) + " local_rank=" + std::to_string(r) + " world_size=4 host=sn01 pid=" + std::to_string(4125 + r) +
           " torch=1.13.0a0\n";
    if (job.nccl) {
      out += std::to_string(r) + ": sn01:" + std::to_string(4125 + r) + ":" + std::to_string(4125 + r) + " [" + std::to_string(r) +
             "] NCCL INFO comm 0x55d0c0a0 rank " + std::to_string(r) + " nranks 4 cudaDev " + std::to_string(r) + " nvmlDev " +
             std::to_string(r) + " busId 1" + std::string(1, static_cast<char>('b' + r)) + "000 commId 0x5c2e7a1f0b3d4e21 - Init COMPLETE\n";
    }
  }
  const int minute = job.ending == Ending::kTimeLimit ? 42 : 39;
  for (int s = 34; s <= job.last_second; ++s) {
    for (int r = 0; r < 4; ++r) out += Step(r, minute, s, 100 + 10 * r, s - 33);
  }
  const std::string closed = "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:50601";
  const std::string timed_out =
      "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete";
  switch (job.ending) {
    case Ending::kSigkill:
      out += Traceback(2, closed) + "srun: error: sn01: task 1: Killed\n" + Traceback(0, closed) + Traceback(3, closed) +
             "srun: error: sn01: tasks 0,2: Exited with exit code 1\nsrun: error: sn01: task 3: Exited with exit code 1\n";
      break;
    case Ending::kException:
      out += Traceback(3, "RuntimeError: batch 12 from shard 3 has 17 non-finite values") +
             "srun: error: sn01: task 3: Exited with exit code 1\n" + Traceback(0, closed) + Traceback(1, closed) + Traceback(2, closed) +
             "srun: error: sn01: tasks 0-2: Exited with exit code 1\n";
      break;
    case Ending::kHang:
      out += Traceback(0, timed_out) + Traceback(1, timed_out) + Traceback(3, timed_out) +
             "srun: error: sn01: tasks 0-1,3: Exited with exit code 1\n"
             "slurmstepd-sn01: error: *** JOB 4250 ON sn01 CANCELLED AT 2026-11-29T16:44:42 DUE TO TIME LIMIT ***\n"
             "2: slurmstepd-sn01: error: *** STEP 4250.0 ON sn01 CANCELLED AT 2026-11-29T16:44:42 DUE TO TIME LIMIT ***\n"
             "srun: Job step aborted: Waiting up to 12 seconds for job step to finish.\n";
      break;
    case Ending::kTimeLimit:
      out += "slurmstepd-sn01: error: *** JOB 4250 ON sn01 CANCELLED AT 2026-11-29T16:42:42 DUE TO TIME LIMIT ***\n"
             "0: slurmstepd-sn01: error: *** STEP 4250.0 ON sn01 CANCELLED AT 2026-11-29T16:42:42 DUE TO TIME LIMIT ***\n"
             "srun: Job step aborted: Waiting up to 12 seconds for job step to finish.\n";
      break;
  }
  if (job.name_job && job.ending != Ending::kTimeLimit && job.ending != Ending::kHang) out += "srun: Force Terminated StepId=4250.0\n";
  Write(dir / "slurm-4250.out", out);
}

// The cluster's controller: this job (4250 on sn01) and jobs 4248, 4249, 4251, 4252 on sn01-sn04;
// 4251 reaches its time limit a second after this job's task fails.
void WriteSharedDaemons(const fs::path& dir, Ending ending, bool allocate_this = true) {
  std::string ctld =
      "[2026-11-29T16:20:02.113] sched: Allocate JobId=4248 NodeList=sn01 #CPUs=4 Partition=batch\n"
      "[2026-11-29T16:29:11.402] sched: Allocate JobId=4249 NodeList=sn02 #CPUs=4 Partition=batch\n"
      "[2026-11-29T16:36:14.831] Time limit exhausted for JobId=4248\n"
      "[2026-11-29T16:36:16.004] _job_complete: JobId=4248 WTERMSIG 15\n"
      "[2026-11-29T16:36:16.004] _job_complete: JobId=4248 done\n"
      "[2026-11-29T16:37:37.501] sched: Allocate JobId=4251 NodeList=sn03 #CPUs=4 Partition=batch\n"
      "[2026-11-29T16:39:25.917] sched: Allocate JobId=4252 NodeList=sn04 #CPUs=4 Partition=batch\n"
      "[2026-11-29T16:39:37.012] Time limit exhausted for JobId=4251\n"
      "[2026-11-29T16:39:38.117] _job_complete: JobId=4251 WTERMSIG 15\n"
      "[2026-11-29T16:39:38.117] _job_complete: JobId=4251 done\n"
      "[2026-11-29T16:40:02.561] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=4249 uid 1003\n"
      "[2026-11-29T16:40:03.070] error: Nodes sn04 not responding\n";
  if (allocate_this) {
    ctld.insert(ctld.find("[2026-11-29T16:39:25.917]"),
                "[2026-11-29T16:39:23.287] sched: Allocate JobId=4250 NodeList=sn01 #CPUs=4 Partition=batch\n");
  }
  std::string slurmd =
      "[2026-11-29T16:20:02.120] Launching batch job 4248 for UID 1001\n"
      "[2026-11-29T16:36:14.840] [4248.batch] error: *** JOB 4248 ON sn01 CANCELLED AT 2026-11-29T16:36:14 DUE TO TIME LIMIT ***\n"
      "[2026-11-29T16:36:14.843] [4248.0] error: *** STEP 4248.0 ON sn01 CANCELLED AT 2026-11-29T16:36:14 DUE TO TIME LIMIT ***\n"
      "[2026-11-29T16:36:16.001] [4248.batch] done with job\n"
      "[2026-11-29T16:39:23.291] Launching batch job 4250 for UID 0\n"
      "[2026-11-29T16:39:23.415] launch task StepId=4250.0 request from UID:0 GID:0 HOST:127.0.0.1 PORT:32970\n";
  if (ending == Ending::kTimeLimit) {
    ctld += "[2026-11-29T16:42:41.996] Time limit exhausted for JobId=4250\n";
    slurmd += "[2026-11-29T16:42:42.003] [4250.batch] error: *** JOB 4250 ON sn01 CANCELLED AT 2026-11-29T16:42:42 DUE TO TIME LIMIT ***\n";
  } else if (ending == Ending::kHang) {
    ctld += "[2026-11-29T16:44:41.996] Time limit exhausted for JobId=4250\n";
  } else {
    ctld += "[2026-11-29T16:39:38.921] _job_complete: JobId=4250 WEXITSTATUS " + std::string(ending == Ending::kSigkill ? "137" : "1") + "\n";
    slurmd += "[2026-11-29T16:39:38.917] [4250.0] get_exit_code task 1 died by signal: 9\n";
  }
  Write(dir / "slurmctld.log", ctld);
  Write(dir / "sn01" / "slurmd.log", slurmd);
}

using testing::DiagnoseOk;

// The problem line that contains `needle` ("" when none).
std::string Problem(const v1::Diagnosis& d, const std::string& needle) {
  for (const std::string& p : d.input().problems()) {
    if (p.find(needle) != std::string::npos) return p;
  }
  return "";
}

bool Cites(const v1::Diagnosis& d, const std::string& needle) {
  return std::any_of(d.evidence().begin(), d.evidence().end(),
                     [&](const v1::Evidence& e) { return e.text().find(needle) != std::string::npos; });
}

TEST(Scope, AnotherJobsTimeLimitInSharedDaemonLogsDoesNotEndThisJob) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kSigkill});
  WriteSharedDaemons(tmp.path(), Ending::kSigkill);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_FALSE(Cites(d, "JobId=4251")) << d.reason();
  // slurmctld: 4248's and 4251's time limits and completions, 4249's kill, the four allocations,
  // sn04's silence (outside the job's allocation); slurmd: 4248's two banners.
  EXPECT_EQ(d.input().out_of_scope_lines(), 14);
  const std::string ctld = Problem(d, "slurmctld.log: ");
  EXPECT_NE(ctld.find("12 lines about 4 other jobs (JobId 4248, 4249, 4251, 4252) and nodes outside the job's allocation (sn04) left out"),
            std::string::npos)
      << ctld;
  EXPECT_NE(Problem(d, "sn01/slurmd.log: 2 lines about 1 other job (JobId 4248) left out"), "");
}

TEST(Scope, AnotherJobsTimeLimitDoesNotHideThisJobsException) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kException});
  WriteSharedDaemons(tmp.path(), Ending::kException);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  EXPECT_GT(d.input().out_of_scope_lines(), 0);
}

TEST(Scope, ThisJobsOwnTimeLimitIsStillTheSchedulers) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kTimeLimit});
  WriteSharedDaemons(tmp.path(), Ending::kTimeLimit);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT);
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER);
  EXPECT_TRUE(Cites(d, "JobId=4250") || Cites(d, "JOB 4250 ON sn01")) << d.reason();
  EXPECT_FALSE(Cites(d, "4248"));
  EXPECT_FALSE(Cites(d, "4251"));
  EXPECT_GT(d.input().out_of_scope_lines(), 0);
  EXPECT_NE(Problem(d, "other jobs (JobId 4248, 4249, 4251, 4252)"), "");
}

// No line of the job's output names its id: slurmctld's allocation of the job's host by the
// job's first line does (4250 on sn01 at 16:39:23; 4248's earlier one ended before).
TEST(Scope, WithoutItsIdTheJobIsTheAllocationOfItsHostsByItsFirstLine) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kSigkill, .name_job = false});
  WriteSharedDaemons(tmp.path(), Ending::kSigkill);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_NE(Problem(d, "JobId 4250 is taken as the job's, the allocation slurmctld made of its hosts (sn01)"), "");
}

// Neither the job's output nor an allocation of its host by its first line names its id (4248's
// allocation of sn01 ended before it), and the controller speaks of several jobs: none of their
// lines is the job's, 4251's time limit included.
TEST(Scope, WithoutItsIdAndAllocationNoJobsLinesAreTaken) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kSigkill, .name_job = false});
  WriteSharedDaemons(tmp.path(), Ending::kSigkill, /*allocate_this=*/false);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_NE(Problem(d, "the daemon logs speak of 5 jobs (JobId 4248, 4249, 4250, 4251, 4252): none of their lines is taken as the job's"), "")
      << d.input().DebugString();
}

// Several jobs' outputs in one directory, as sbatch leaves them by default: the training job's
// (`srun --label`, a plain `step N loss X` print: no line names a job) and, beside it, another
// job's whose only line is slurmstepd's cancellation banner. The banner's job is one of the jobs
// side by side, not the incident's: its cancellation is no answer (corpora/real2/mj_* while the
// training job still runs); alone in the directory it is.
TEST(Scope, ABannerBesideAnotherJobsWorkersOutputIsNotTheIncidentsEnding) {
  const std::string ctld =
      "[2026-11-29T16:39:20.100] sched: Allocate JobId=4249 NodeList=sn01 #CPUs=1 Partition=batch\n"
      "[2026-11-29T16:39:23.287] sched: Allocate JobId=4250 NodeList=sn01 #CPUs=4 Partition=batch\n"
      "[2026-11-29T16:40:02.561] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=4249 uid 1003\n";
  const std::string banner =
      "slurmstepd-sn01: error: *** JOB 4249 ON sn01 CANCELLED AT 2026-11-29T16:40:02 ***\n";
  std::string training;
  for (int step = 1; step <= 6; ++step)
    training += "0: step " + std::to_string(step) + " loss 3.25\n";
  for (const bool beside : {true, false}) {
    TempDir tmp;
    Write(tmp.path() / "slurmctld.log", ctld);
    Write(tmp.path() / "slurm-4249.out", banner);
    if (beside) Write(tmp.path() / "slurm-4250.out", training);
    const v1::Diagnosis d = DiagnoseOk(tmp.path());
    if (beside) {
      EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
    } else {
      EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_CANCEL) << d.reason();
    }
  }
}

// A job whose collected logs hold no line of its own (its nodes' kernel logs and nothing else,
// as for a slow port no rank reported): the hosts its files are by their lines (sn02, sn04) stand
// in for the hosts its lines name, and the one allocation that covers them is the job's (4249).
TEST(Scope, WithoutLinesOfItsOwnTheJobIsTheAllocationOfTheNodesItsFilesAre) {
  TempDir tmp;
  for (const char* host : {"sn02", "sn04"}) {
    Write(tmp.path() / (std::string("k-") + host + ".log"),
          std::string("Nov 29 16:10:02 ") + host +
              " kernel: [    4.120000] mlx5_core 0000:0c:00.0: firmware version: 28.39.1002\n" +
              "Nov 29 16:10:03 " + host +
              " kernel: [    5.004000] mlx5_core 0000:0c:00.0: Port module event: module 0, Cable "
              "plugged\n");
  }
  Write(
      tmp.path() / "slurmctld.log",
      "[2026-11-29T16:29:11.402] sched: Allocate JobId=4249 NodeList=sn[02,04] #CPUs=8 "
      "Partition=batch\n"
      "[2026-11-29T16:37:37.501] sched: Allocate JobId=4251 NodeList=sn03 #CPUs=4 Partition=batch\n"
      "[2026-11-29T16:39:37.012] Time limit exhausted for JobId=4251\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT) << d.reason();
  EXPECT_NE(Problem(d,
                    "JobId 4249 is taken as the job's, the allocation slurmctld made of its hosts "
                    "(sn02, sn04)"),
            "")
      << d.input().DebugString();
}

// A shared node: the kernel OOM-killed another user's process and another GPU fell off the bus
// while task 1 was SIGKILLed. The job's NCCL lines name its pids and GPUs: neither is its.
TEST(Scope, SharedKernelLogsOtherProcessesAndGpusAreNotEvidence) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kSigkill, .nccl = true});
  Write(tmp.path() / "sn01" / "kern.log",
        "Nov 29 16:39:35 sn01 kernel: [ 3391.204113] java invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
        "oom_score_adj=0\n"
        "Nov 29 16:39:35 sn01 kernel: [ 3391.204530] Out of memory: Killed process 31337 (java) total-vm:48963166kB, anon-rss:22559720kB, "
        "file-rss:1234kB, shmem-rss:0kB, UID:1002 pgtables:51234kB oom_score_adj:0\n"
        "Nov 29 16:39:36 sn01 kernel: [ 3392.001877] NVRM: Xid (PCI:0000:3d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
        "the bus.\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_FALSE(Cites(d, "Killed process 31337"));
  EXPECT_FALSE(Cites(d, "Xid"));
  EXPECT_EQ(d.input().out_of_scope_lines(), 2);
  EXPECT_NE(Problem(d, "sn01/kern.log: 2 lines about processes that are not the job's (pid 31337) and GPUs the job did not use (0000:3d:00)"),
            "");
}

// With no pid of the job known, an OOM kill of some process is of an unknown owner: it does not
// make the SIGKILL a host OOM on its own.
TEST(Scope, OomKillOfAnUnknownProcessIsNotTheRanksDeathAlone) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kSigkill});
  Write(tmp.path() / "sn01" / "kern.log",
        "Nov 29 16:39:35 sn01 kernel: [ 3391.204530] Out of memory: Killed process 31337 (java) total-vm:48963166kB, anon-rss:22559720kB, "
        "file-rss:1234kB, shmem-rss:0kB, UID:1002 pgtables:51234kB oom_score_adj:0\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM);
  EXPECT_NE(Problem(d, "OOM-killed pid 31337 (java), a process of unknown owner"), "");
}

// srun --label: the ranks' gloo timeouts (untimed tracebacks) and srun's `Exited with exit code 1`
// came minutes before slurmctld's time limit; nothing stamped after them bounds them before it,
// so the engine does not say the scheduler ended the job first.
TEST(Order, UntimedFailuresBeforeALaterTimeLimitAreNotClaimedToFollowIt) {
  TempDir tmp;
  WriteJobOutput(tmp.path(), {.ending = Ending::kHang});
  WriteSharedDaemons(tmp.path(), Ending::kHang);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT) << d.reason();
  EXPECT_EQ(d.reason().find("before any rank failed"), std::string::npos) << d.reason();
  EXPECT_NE(Problem(d, "cannot be ordered against rank 0's failure"), "");
}

}  // namespace
}  // namespace denpex::engine
