// Frozen incidents (corpora/real2: torch 1.13 on gloo, Slurm 22.05, one host) as operators
// collect them: each test is the shape of one incident's lines after a collector, a merge or a
// journal had them, and checks the engine commits no wrong answer where the collection took away
// what decided it (docs/evaluation.md, "Collection shapes").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "diagnose_ok.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;
using testing::Write;

using testing::DiagnoseOk;

bool HasProblem(const v1::Diagnosis& d, const std::string& needle) {
  return std::any_of(d.input().problems().begin(), d.input().problems().end(),
                     [&](const std::string& p) { return p.find(needle) != std::string::npos; });
}

// Every line behind a CRI prefix stamped `stamp` (containerd's `<RFC 3339 nano> stdout F `).
std::string Cri(const std::string& stamp, const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += stamp + " stdout F " + l + "\n";
  return out;
}

const std::vector<std::string> kSteps = {"0: step 1 loss 32.5656", "0: step 2 loss 32.7589", "0: step 3 loss 26.6847",
                                         "0: step 4 loss 27.0064", "0: step 5 loss 16.3862", "0: step 6 loss 24.7755"};

std::vector<std::string> GlooTraceback(const std::string& task, const std::string& error) {
  return {task + ": Traceback (most recent call last):",
          task + ":   File \"/tmp/denpex-capture2/bin/train2.py\", line 105, in main",
          task + ":     loss.backward()",
          task + ": " + error};
}

// A frozen incident's files (corpora/real2/<id>/incident) in `dir`, slurmctld.log and slurmd.log
// with other jobs' lines after their own, as the daemons of a cluster log every job.
void CopyWithOtherJobs(const std::string& id, const fs::path& dir) {
  const fs::path from = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real2" / id / "incident";
  fs::copy(from, dir, fs::copy_options::recursive);
  const std::string ctld = testing::Slurp(dir / "slurmctld.log");
  Write(dir / "slurmctld.log",
        ctld +
            "[2026-12-02T06:37:40.136] sched: Allocate JobId=5252 NodeList=cn-[0410-0413] "
            "#CPUs=256 Partition=batch\n"
            "[2026-12-02T06:37:41.136] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=5252 uid 1003\n"
            "[2026-12-02T06:37:41.820] preempted JobId=5258 has been killed to reclaim resources "
            "for JobId=5262\n"
            "[2026-12-02T06:37:56.181] error: Nodes cn-0417 not responding\n"
            "[2026-12-02T06:37:56.181] Killing JobId=5262 on failed node cn-0417\n");
  const std::string slurmd = testing::Slurp(dir / "slurmd.log");
  Write(dir / "slurmd.log",
        slurmd +
            "[2026-12-02T06:37:42.000] [5271.0] error: *** STEP 5271.0 ON sn01 CANCELLED AT "
            "2026-12-02T06:37:42 DUE TO TIME LIMIT ***\n");
}

// sb_sigkill_rank1 beside other jobs' daemon lines: torchrun's table says `host : localhost`, and
// the job's own `srun: error: sn01: task 0: ...` and its allocation name sn01. Other jobs'
// allocations and another node's failure do not make the job's node unknown.
TEST(FrozenShapes, OtherJobsNodesLeaveTheJobsOneNodeKnown) {
  TempDir tmp;
  CopyWithOtherJobs("sb_sigkill_rank1", tmp.path() / "incident");
  const v1::Diagnosis d = DiagnoseOk(tmp.path() / "incident");
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().node(), "sn01") << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL) << d.reason();
}

// sb_scancel beside other jobs' daemon lines: the job's output holds its step lines and only one
// line Slurm wrote, slurmstepd's `*** JOB 5260 ON sn01 CANCELLED AT ... ***` (no slurmd `[N.s]`
// tag): that names the job, so slurmctld's kill RPC of JobId 5260 is its end, and the other jobs'
// kills and preemptions are left out.
TEST(FrozenShapes, SlurmstepdsBannerInTheJobsOutputNamesTheJob) {
  TempDir tmp;
  CopyWithOtherJobs("sb_scancel", tmp.path() / "incident");
  const v1::Diagnosis d = DiagnoseOk(tmp.path() / "incident");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_CANCEL) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_SCHEDULER) << d.reason();
  EXPECT_TRUE(HasProblem(d, "other jobs")) << d.input().DebugString();
}

// sl_sigstop_task1 under a container runtime that read slurm-5440.out once the job had ended: task
// 1 stopped, task 0 timed out in gloo and exited long before the time limit, but the file's lines
// state no time, and the collector stamped them all with the time limit's second. A collector's
// stamp says when a line was read: it does not put task 0's failure after slurmctld's word.
TEST(FrozenShapes, CollectorsStampDoesNotOrderAFailureAfterTheSchedulersWord) {
  TempDir tmp;
  std::vector<std::string> out = kSteps;
  for (const std::string& l : GlooTraceback(
           "0", "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete")) {
    out.push_back(l);
  }
  out.push_back("srun: error: sn01: task 0: Exited with exit code 1");
  out.push_back("slurmstepd-sn01: error: *** JOB 5440 ON sn01 CANCELLED AT 2026-12-02T06:51:28 DUE TO TIME LIMIT ***");
  out.push_back("srun: Job step aborted: Waiting up to 12 seconds for job step to finish.");
  Write(tmp.path() / "slurm-5440.out", Cri("2026-12-02T06:51:28.000000000Z", out));
  Write(tmp.path() / "slurmctld.log",
        Cri("2026-12-02T06:49:01.152000000Z", {"[2026-12-02T06:49:01.152] sched: Allocate JobId=5440 NodeList=sn01 #CPUs=2 Partition=batch"}) +
            Cri("2026-12-02T06:51:28.077000000Z", {"[2026-12-02T06:51:28.077] Time limit exhausted for JobId=5440"}));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT) << d.reason();
  EXPECT_NE(d.owner(), v1::OWNER_SCHEDULER) << d.reason();
  EXPECT_TRUE(HasProblem(d, "cannot be ordered against rank 0's failure")) << d.input().DebugString();
}

// The same stamps prove the other order: a line read before the scheduler's word was written
// before it, so the failure came first and the scheduler did not end the job.
TEST(FrozenShapes, CollectorsEarlierStampPutsAFailureBeforeTheSchedulersWord) {
  TempDir tmp;
  std::vector<std::string> out = kSteps;
  for (const std::string& l : GlooTraceback("0", "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:20870")) {
    out.push_back(l);
  }
  out.push_back("srun: error: sn01: task 0: Exited with exit code 1");
  Write(tmp.path() / "slurm-5440.out", Cri("2026-12-02T06:49:40.000000000Z", out));
  Write(tmp.path() / "slurmctld.log",
        Cri("2026-12-02T06:49:01.152000000Z", {"[2026-12-02T06:49:01.152] sched: Allocate JobId=5440 NodeList=sn01 #CPUs=2 Partition=batch"}) +
            Cri("2026-12-02T06:51:28.077000000Z", {"[2026-12-02T06:51:28.077] Time limit exhausted for JobId=5440"}));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT) << d.reason();
  EXPECT_FALSE(HasProblem(d, "cannot be ordered")) << d.input().DebugString();
}

// mj_exception_task0 under a container runtime: the training job (5430) and two other jobs of the
// same user (5431, 5432) were allocated sn01 in the same millisecond; the job's output names no
// job id, and 5432 was cancelled while task 0 raised. Which allocation is the job's no line says,
// so 5432's cancellation is not taken as this job's end.
TEST(FrozenShapes, SeveralJobsAllocatedTheHostAtOnceNameNoJob) {
  TempDir tmp;
  std::vector<std::string> out = kSteps;
  out.push_back("0: Traceback (most recent call last):");
  out.push_back("0:   File \"/tmp/denpex-capture2/bin/train2.py\", line 87, in main");
  out.push_back("0:     raise ValueError(f\"could not decode sample {64 * step + 17}: unexpected end of data\")");
  out.push_back("0: ValueError: could not decode sample 529: unexpected end of data");
  for (const std::string& l : GlooTraceback("1", "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:20870")) {
    out.push_back(l);
  }
  out.push_back("srun: error: sn01: task 0: Exited with exit code 1");
  out.push_back("srun: error: sn01: task 1: Exited with exit code 1");
  Write(tmp.path() / "slurm-5430.out", Cri("2026-12-02T06:48:41.148807000Z", out));
  Write(tmp.path() / "slurm-5431.out", Cri("2026-12-02T06:48:42.800000000Z", {"prepared"}));
  Write(tmp.path() / "slurm-5432.out",
        Cri("2026-12-02T06:48:51.000000000Z", {"slurmstepd-sn01: error: *** JOB 5432 ON sn01 CANCELLED AT 2026-12-02T06:48:51 ***"}));
  Write(tmp.path() / "slurmctld.log", "[2026-12-02T06:48:40.704] sched: Allocate JobId=5430 NodeList=sn01 #CPUs=2 Partition=batch\n"
                                      "[2026-12-02T06:48:40.705] sched: Allocate JobId=5431 NodeList=sn01 #CPUs=1 Partition=batch\n"
                                      "[2026-12-02T06:48:40.705] sched: Allocate JobId=5432 NodeList=sn01 #CPUs=1 Partition=batch\n"
                                      "[2026-12-02T06:48:42.822] _job_complete: JobId=5431 WEXITSTATUS 0\n"
                                      "[2026-12-02T06:48:42.822] _job_complete: JobId=5431 done\n"
                                      "[2026-12-02T06:48:51.528] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=5432 uid 0\n"
                                      "[2026-12-02T06:48:55.417] _job_complete: JobId=5430 WEXITSTATUS 1\n"
                                      "[2026-12-02T06:48:55.418] _job_complete: JobId=5430 done\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_CANCEL) << d.reason();
  EXPECT_NE(d.owner(), v1::OWNER_SCHEDULER) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 0) << d.reason();
  EXPECT_TRUE(HasProblem(d, "none of their lines is taken as the job's")) << d.input().DebugString();
}

// A runtime read slurm-5440.out after the job had ended (06:51:29) and a later job (5441) was
// allocated sn01: the stamps say only when the lines were read, not that the job began after
// 5440 ended, so 5441 is not taken for the job (nor its cancellation for the job's end).
TEST(FrozenShapes, CollectorsStampDoesNotEndTheJobsOwnAllocationBeforeItBegan) {
  TempDir tmp;
  std::vector<std::string> out = kSteps;
  out.push_back("0: Traceback (most recent call last):");
  out.push_back("0:   File \"/tmp/denpex-capture2/bin/train2.py\", line 87, in main");
  out.push_back("0: ValueError: could not decode sample 529: unexpected end of data");
  out.push_back("srun: error: sn01: task 0: Exited with exit code 1");
  Write(tmp.path() / "slurm-5440.out", Cri("2026-12-02T06:52:10.000000000Z", out));
  Write(tmp.path() / "slurmctld.log", "[2026-12-02T06:49:01.152] sched: Allocate JobId=5440 NodeList=sn01 #CPUs=2 Partition=batch\n"
                                      "[2026-12-02T06:51:29.417] _job_complete: JobId=5440 WEXITSTATUS 1\n"
                                      "[2026-12-02T06:51:29.418] _job_complete: JobId=5440 done\n"
                                      "[2026-12-02T06:51:50.704] sched: Allocate JobId=5441 NodeList=sn01 #CPUs=2 Partition=batch\n"
                                      "[2026-12-02T06:52:05.528] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=5441 uid 0\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.owner(), v1::OWNER_SCHEDULER) << d.reason();
  EXPECT_FALSE(HasProblem(d, "JobId 5441 is taken as the job's")) << d.input().DebugString();
}

// sl_slow_task1 with a shared controller's log: the job's output (`srun --label` step lines) names
// no host and no job id, and slurmctld speaks of other jobs and of another node gone silent. That
// node may be any job's: the job is not taken to have lost it.
TEST(FrozenShapes, AnotherNodesSilenceIsNotTheJobsWhenNothingPlacesTheJob) {
  TempDir tmp;
  Write(tmp.path() / "slurm-5510.out", "0: step 1 loss 32.5656\n0: step 2 loss 32.7589\n1: step 2 loss 32.7589\n");
  Write(tmp.path() / "slurmctld.log", "[2026-12-02T10:23:01.152] sched: Allocate JobId=5510 NodeList=sn01 #CPUs=2 Partition=batch\n"
                                      "[2026-12-02T10:23:40.112] sched: Allocate JobId=5514 NodeList=cn-[0410-0413] #CPUs=256 Partition=batch\n"
                                      "[2026-12-02T10:24:01.026] error: Nodes cn-0417 not responding\n"
                                      "[2026-12-02T10:26:12.417] _job_complete: JobId=5510 WEXITSTATUS 0\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
  EXPECT_NE(d.initiator().node(), "cn-0417") << d.reason();
}

// tr1_oom_rank1 read from a journal: the torchrun console names no host (its table says `host :
// localhost`), the kernel's lines are the journal host's. The kernel OOM-killed pid 27149, the pid
// the agent's table gives rank 1, killed by SIGKILL: that is rank 1's death, a host OOM.
TEST(FrozenShapes, KernelOomKillOfARanksPidExplainsItWhenTheConsoleNamesNoHost) {
  TempDir tmp;
  const std::string j = "Dec 02 06:26:18 login-01 python3[25904]: ";
  Write(tmp.path() / "train.log",
        j + "step 7 loss 22.0784\n" + j + "Traceback (most recent call last):\n" + j +
            "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:16034\n" + j +
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 27148) of binary: /usr/bin/python3\n" +
            j + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + j +
            "============================================================\n" + j + "/tmp/denpex-capture2/bin/train2.py FAILED\n" + j +
            "------------------------------------------------------------\n" + j + "Failures:\n" + j + "[1]:\n" + j +
            "  time      : 2026-12-02_06:26:18\n" + j + "  host      : localhost\n" + j + "  rank      : 1 (local_rank: 1)\n" + j +
            "  exitcode  : -9 (pid: 27149)\n" + j + "  error_file: <N/A>\n" + j + "  traceback : Signal 9 (SIGKILL) received by PID 27149\n" + j +
            "------------------------------------------------------------\n" + j + "Root Cause (first observed failure):\n" + j + "[0]:\n" +
            j + "  time      : 2026-12-02_06:26:18\n" + j + "  host      : localhost\n" + j + "  rank      : 0 (local_rank: 0)\n" + j +
            "  exitcode  : 1 (pid: 27148)\n" + j + "  error_file: <N/A>\n" + j +
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n" + j +
            "============================================================\n");
  const std::string k = "Dec 02 06:25:52 login-01 kernel: ";
  Write(tmp.path() / "dmesg.log",
        k + "[14793.460614] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n" + k +
            "[14793.461669] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/denpex-capture2-tr1_oom_rank1,"
            "task_memcg=/denpex-capture2-tr1_oom_rank1,task=python3,pid=27149,uid=0\n" +
            k +
            "[14793.461694] Memory cgroup out of memory: Killed process 27149 (python3) total-vm:1784396kB, anon-rss:921088kB, "
            "file-rss:126416kB, shmem-rss:0kB, UID:0 pgtables:2604kB oom_score_adj:0\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_HOST) << d.reason();
}

// One torchrun agent's console (`--tee 3`): its table and the `failed` line around the worker's
// traceback. `time` is the table's `time :` value.
std::string AgentConsole(int rank, int pid, const std::string& error, const std::string& time) {
  return "[default0]:Traceback (most recent call last):\n"
         "[default0]:  File \"/tmp/denpex-capture2/bin/train2.py\", line 119, in <module>\n"
         "[default0]:    main()\n"
         "[default0]:" + error + "\n"
         "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: " + std::to_string(pid) +
         ") of binary: /usr/bin/python3\n"
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
         "============================================================\n"
         "/tmp/denpex-capture2/bin/train2.py FAILED\n"
         "------------------------------------------------------------\n"
         "Failures:\n"
         "  <NO_OTHER_FAILURES>\n"
         "------------------------------------------------------------\n"
         "Root Cause (first observed failure):\n"
         "[0]:\n"
         "  time      : " + time + "\n"
         "  host      : localhost\n"
         "  rank      : " + std::to_string(rank) + " (local_rank: 0)\n"
         "  exitcode  : 1 (pid: " + std::to_string(pid) + ")\n"
         "  error_file: <N/A>\n"
         "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
         "============================================================\n";
}

// tr2_exception_rank1 merged into one file (path order: the log dir's two `0/stderr.log` and a
// `0/stdout.log`, then `node0.log`, `node1.log`): two agents on one host, one worker each, both
// local rank 0 (ranks 0 and 1). Rank 1 raised ValueError; rank 0 lost its gloo pair. In one file
// a `[default0]:` line may be either agent's worker: it is given to neither rank, so rank 0 is
// not named for rank 1's exception.
TEST(FrozenShapes, LocalRankOfTwoAgentsInOneFileNamesNeitherRank) {
  TempDir tmp;
  Write(tmp.path() / "incident.log",
        "Traceback (most recent call last):\n"
        "  File \"/tmp/denpex-capture2/bin/train2.py\", line 87, in main\n"
        "    raise ValueError(f\"could not decode sample {64 * step + 17}: unexpected end of data\")\n"
        "ValueError: could not decode sample 529: unexpected end of data\n"
        "Traceback (most recent call last):\n"
        "  File \"/tmp/denpex-capture2/bin/train2.py\", line 105, in main\n"
        "    loss.backward()\n"
        "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:18350\n"
        "step 6 loss 24.7755\n"
        "step 7 loss 22.0784\n" +
            AgentConsole(0, 31201, "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:18350",
                     "2026-12-02_06:28:01") +
            AgentConsole(1, 31202, "ValueError: could not decode sample 529: unexpected end of data", "2026-12-02_06:27:56"));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().rank(), 0) << d.reason();
  if (d.verdict() == v1::VERDICT_DIAGNOSED && d.initiator().rank() >= 0) {
    EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  }
}

}  // namespace
}  // namespace denpex::engine
