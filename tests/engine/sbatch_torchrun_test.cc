// sbatch + srun + torchrun, as teams run it (corpora/real2 `sb_`, `sbt_`): the agent's console is
// inside the batch output (`slurm-<jobid>.out`) or a per-task `--output=%x-%j-%t.out`; torchrun's
// table says `host : localhost` while Slurm names the node `sn01`, and srun's `task N` is the
// agent, not rank N. The lines are real torch 1.13 / Slurm 22.05 ones; the file names opaque.
#include <gtest/gtest.h>

#include <string>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "diagnose_ok.h"

namespace denpex::engine {
namespace {
using testing::TempDir;
using testing::Write;

using testing::DiagnoseOk;

const char kController[] =
    "[2026-12-02T06:41:42.169] _slurm_rpc_submit_batch_job: JobId=5300 InitPrio=4294901759 usec=345\n"
    "[2026-12-02T06:41:43.729] sched: Allocate JobId=5300 NodeList=sn01 #CPUs=2 Partition=batch\n"
    "[2026-12-02T06:42:12.605] _job_complete: JobId=5300 WEXITSTATUS 1\n"
    "[2026-12-02T06:42:12.605] _job_complete: JobId=5300 done\n";

// One ChildFailedError table with one entry (torch 1.13's layout).
std::string Table(int rank, int local_rank, int exitcode, int pid) {
  const std::string traceback = exitcode == -9 ? "Signal 9 (SIGKILL) received by PID " + std::to_string(pid)
                                               : "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html";
  return "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: " + std::to_string(exitcode) +
         ") local_rank: " + std::to_string(local_rank) + " (pid: " + std::to_string(pid) +
         ") of binary: /usr/bin/python3\n"
         "Traceback (most recent call last):\n"
         "  File \"/opt/job/bin/torchrun\", line 25, in <module>\n"
         "    sys.exit(main())\n"
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
         "============================================================\n"
         "/opt/job/train.py FAILED\n"
         "------------------------------------------------------------\n"
         "Failures:\n  <NO_OTHER_FAILURES>\n"
         "------------------------------------------------------------\n"
         "Root Cause (first observed failure):\n[0]:\n"
         "  time      : 2026-12-02_06:42:09\n  host      : localhost\n"
         "  rank      : " + std::to_string(rank) + " (local_rank: " + std::to_string(local_rank) + ")\n"
         "  exitcode  : " + std::to_string(exitcode) + " (pid: " + std::to_string(pid) + ")\n"
         "  error_file: <N/A>\n  traceback : " + traceback + "\n"
         "============================================================\n";
}

// `sbatch` running `srun torchrun --nproc_per_node 2`: one agent, its console in the batch output
// with srun's word on its task. Rank 1 was SIGKILLed; the agent SIGTERMed rank 0.
TEST(SbatchTorchrun, AgentConsoleInsideTheBatchOutputNamesTheSigkilledRank) {
  TempDir tmp;
  Write(tmp.path() / "slurm-5300.out",
        "step 7 loss 22.0784\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 12695 closing signal SIGTERM\n" +
            Table(1, 1, -9, 12696) + "srun: error: sn01: task 0: Exited with exit code 1\n");
  Write(tmp.path() / "slurmctld.log", kController);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN);
  EXPECT_EQ(d.initiator().node(), "sn01") << "a job Slurm ran on one node: its console is that node's";
}

// `srun --ntasks=2 --output=%x-%j-%t.out torchrun --nnodes 2 --nproc_per_node 1`: an agent per
// task, both tables saying `host : localhost`, srun's `tasks 0-1` in the batch output. Rank 0
// raised; rank 1 lost its connection to it.
TEST(SbatchTorchrun, PerTaskAgentConsolesOnOneHostNameTheRankThatRaised) {
  TempDir tmp;
  Write(tmp.path() / "train-5310-0.out",
        "step 7 loss 22.0784\n"
        "Traceback (most recent call last):\n"
        "  File \"/opt/job/train.py\", line 87, in main\n"
        "    raise ValueError(f\"could not decode sample {64 * step + 17}: unexpected end of data\")\n"
        "ValueError: could not decode sample 529: unexpected end of data\n" +
            Table(0, 0, 1, 23801));
  Write(tmp.path() / "train-5310-1.out",
        "Traceback (most recent call last):\n"
        "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
        "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
        "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:61364\n" +
            Table(1, 0, 1, 23802));
  Write(tmp.path() / "slurm-5310.out", "srun: error: sn01: tasks 0-1: Exited with exit code 1\n");
  Write(tmp.path() / "slurmctld.log", kController);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 0) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_EQ(d.initiator().node(), "sn01") << "two agents on the one node Slurm names";
}

// As above, and srun task 1's agent is SIGKILLed with its worker (corpora/real2
// `sbt_node_loss_task1`): task 1's console stays empty, srun says `task 1: Killed`, task 0's
// worker loses its peer and its agent reports it. The killed agent's task is the node's loss.
void WriteKilledAgentTask(const std::filesystem::path& dir, const std::string& task_lines) {
  Write(dir / "train-5540-0.out",
        "step 7 loss 22.0784\n"
        "Traceback (most recent call last):\n"
        "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
        "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
        "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:33973\n"
        "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'localhost_2068_0' has failed to send a "
        "keep-alive heartbeat to the rendezvous '5540' due to an error of type RendezvousConnectionError.\n" +
            Table(0, 0, 1, 2095));
  Write(dir / "train-5540-1.out", "");
  Write(dir / "slurm-5540.out", task_lines + "srun: Force Terminated StepId=5540.0\n");
  Write(dir / "slurmctld.log",
        "[2026-12-02T10:26:22.275] sched: Allocate JobId=5540 NodeList=sn01 #CPUs=2 Partition=batch\n"
        "[2026-12-02T10:26:38.250] _job_complete: JobId=5540 WEXITSTATUS 137\n"
        "[2026-12-02T10:26:38.251] _job_complete: JobId=5540 done\n");
}

TEST(SbatchTorchrun, AnAgentTaskKilledWithItsWorkersIsItsNodesLoss) {
  TempDir tmp;
  WriteKilledAgentTask(tmp.path(), "srun: error: sn01: task 1: Killed\nsrun: error: sn01: task 0: Exited with exit code 1\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), "sn01");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  ASSERT_GE(d.evidence_size(), 1);
  EXPECT_EQ(d.evidence(0).text(), "srun: error: sn01: task 1: Killed");
  EXPECT_EQ(d.evidence(0).role(), v1::EVIDENCE_ROLE_INITIATING);
  ASSERT_EQ(d.cascade().secondary_ranks_size(), 1);
  EXPECT_EQ(d.cascade().secondary_ranks(0), 0);
}

// Both agents' tasks killed (a scancel or an operator's kill of the step): no one agent was lost.
TEST(SbatchTorchrun, TwoKilledAgentTasksAreNoNodeLoss) {
  TempDir tmp;
  WriteKilledAgentTask(tmp.path(), "srun: error: sn01: tasks 0-1: Killed\nsrun: error: sn01: task 1: Killed\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
}

}  // namespace
}  // namespace denpex::engine
