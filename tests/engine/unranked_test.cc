// Failures whose rank no line gives, answered at the level the lines support (analyze/unranked.h):
// a worker its torchrun agent had to SIGKILL while another agent's worker timed out in gloo
// (two `--tee 3` agents sharing one host name), and a gloo timeout under `srun --label` on the
// one node Slurm allocated. The lines are real torch 1.13 / Slurm 22.05 ones (corpora/real2);
// the file names are opaque.
#include <gtest/gtest.h>

#include <string>

#include "denpex/engine/engine.h"
#include "diagnose_ok.h"
#include "fixture.h"

namespace denpex::engine {
namespace {
using testing::DiagnoseOk;
using testing::TempDir;
using testing::Write;

bool Cites(const v1::Diagnosis& d, const std::string& text) {
  for (const auto& e : d.evidence()) {
    if (e.text().find(text) != std::string::npos) return true;
  }
  return false;
}

// Each line of `text` behind torchrun's `--tee 3` tag of local rank 0.
std::string Tagged(const std::string& text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    out += "[default0]:" + text.substr(at, end - at + 1);
    at = end + 1;
  }
  return out;
}

std::string GlooError(const std::string& error) {
  return "Traceback (most recent call last):\n"
         "  File \"/opt/job/train2.py\", line 105, in main\n"
         "    loss.backward()\n"
         "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
         "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
         "RuntimeError: " + error + "\n";
}

const char kTimedOut[] = "[./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete";
const char kClosed[] = "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:21155";

// The agent whose worker was stopped: an operator's SIGTERM, and the worker outlived its own.
const char kStoppedAgent[] =
    "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n"
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 8544 closing signal SIGTERM\n"
    "WARNING:torch.distributed.elastic.multiprocessing.api:Unable to shutdown process 8544 via 15, forcefully exitting via 9\n"
    "[default0]:step 5 loss 16.3862\n"
    "[default0]:step 6 loss 24.7755\n"
    "Traceback (most recent call last):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py\", line 62, in "
    "_terminate_process_handler\n"
    "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)\n"
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 7563 got signal: 15\n";

// The other agent: its worker's gloo error, then its report of the worker's exit.
std::string OtherAgent(const std::string& error) {
  return "W20261202 06:33:32.566895  7564 socket.cpp:426] [c10d] The server socket has failed to bind to [::]:42253 "
         "(errno: 98 - Address already in use).\n" +
         Tagged(GlooError(error)) +
         "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 8547) of binary: "
         "/usr/bin/python3\n"
         "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n";
}

// The worker that outlived SIGTERM is the silent one the other agent's worker timed out on: a
// hang, owner unknown, at the level the lines give (both agents print `host : localhost`, and no
// line gives a global rank).
TEST(Unranked, WorkerItsAgentHadToSigkillIsTheHangTheOtherAgentsWorkerTimedOutOn) {
  TempDir tmp;
  Write(tmp.path() / "a.out", kStoppedAgent);
  Write(tmp.path() / "b.out", OtherAgent(kTimedOut));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN) << d.reason();
  EXPECT_TRUE(Cites(d, "Unable to shutdown process 8544 via 15")) << d.reason();
}

// The same with the stopped agent's log rotated right after its SIGTERM lines: its own
// SignalException, in the live piece, is still the teardown's (the teardown began in the older
// piece of the same stream), so the answer is the same.
TEST(Unranked, TeardownInAnOlderPieceOfARotatedLogStillMakesTheAgentsErrorTheTeardowns) {
  TempDir tmp;
  const std::string stopped = kStoppedAgent;
  const std::size_t cut = stopped.find("[default0]:step 5");
  Write(tmp.path() / "a.out.1", stopped.substr(0, cut));
  Write(tmp.path() / "a.out", stopped.substr(cut));
  Write(tmp.path() / "b.out", OtherAgent(kTimedOut));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG) << d.reason();
  EXPECT_TRUE(Cites(d, "Unable to shutdown process 8544 via 15")) << d.reason();
}

// The other agent's worker lost its peer to a closed connection: that peer was gone, not silent,
// so the stopped worker is not shown to be it and no hang is answered.
TEST(Unranked, WorkerItsAgentHadToSigkillIsNoHangWhenThePeerWasGone) {
  TempDir tmp;
  Write(tmp.path() / "a.out", kStoppedAgent);
  Write(tmp.path() / "b.out", OtherAgent(kClosed));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG) << d.reason();
}

// `srun --label`, sbatch's output: task 0 timed out waiting on a peer that printed nothing, then
// the time limit. slurmctld allocated `nodes`.
void WriteSrunLabelJob(const std::filesystem::path& dir, const std::string& nodes) {
  std::string out = "0: step 5 loss 16.3862\n0: step 6 loss 24.7755\n";
  const std::string tb = GlooError(kTimedOut);
  for (std::size_t at = 0; at < tb.size();) {
    const std::size_t end = tb.find('\n', at);
    out += "0: " + tb.substr(at, end - at + 1);
    at = end + 1;
  }
  out += "srun: error: sn01: task 0: Exited with exit code 1\n"
         "slurmstepd-sn01: error: *** JOB 5440 ON sn01 CANCELLED AT 2026-12-02T06:51:28 DUE TO TIME LIMIT ***\n"
         "0: slurmstepd-sn01: error: *** STEP 5440.0 ON sn01 CANCELLED AT 2026-12-02T06:51:28 DUE TO TIME LIMIT ***\n"
         "srun: Job step aborted: Waiting up to 12 seconds for job step to finish.\n";
  Write(dir / "slurm-5440.out", out);
  Write(dir / "slurmctld.log",
        "[2026-12-02T06:48:59.562] _slurm_rpc_submit_batch_job: JobId=5440 InitPrio=4294901759 usec=323\n"
        "[2026-12-02T06:49:01.152] sched: Allocate JobId=5440 NodeList=" + nodes + " #CPUs=2 Partition=batch\n"
        "[2026-12-02T06:51:28.077] Time limit exhausted for JobId=5440\n");
}

// One node allocated: the silent peer ran there. A hang on sn01, rank not determined (no line
// states the world size or names task 1), owner unknown.
TEST(Unranked, GlooTimeoutUnderSrunLabelOnTheOneAllocatedNodeIsAHangThere) {
  TempDir tmp;
  WriteSrunLabelJob(tmp.path(), "sn01");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_EQ(d.initiator().node(), "sn01") << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN) << d.reason();
}

// Two nodes allocated: the silent peer may have run on either; nothing is answered.
TEST(Unranked, GlooTimeoutUnderSrunLabelOnTwoAllocatedNodesNamesNoNode) {
  TempDir tmp;
  WriteSrunLabelJob(tmp.path(), "sn[01-02]");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
}

// `srun --label` starting the ranks themselves (one task per rank, no torchrun): tasks 0-2 timed
// out in gloo waiting on a peer, task 3 printed its steps and then nothing, and srun has not ended
// it yet (a stopped or hung task: srun waits for it). Every task's output goes to this one file, so
// task 3's silence is its own: it is where the others' waits end (the lines are a real capture's:
// train.py under sbatch + srun, gloo, a 20 s timeout, task 3 SIGSTOPped).
TEST(Unranked, TheOneLabelledTaskThatReportedNothingWhileTheOthersTimedOutIsTheHang) {
  TempDir tmp;
  std::string out;
  for (int rank = 0; rank < 4; ++rank) {
    out += std::to_string(rank) + ": 2026-12-03 23:55:45.9" + std::to_string(70 + rank) +
           " rank=" + std::to_string(rank) + " step=5/40 loss=11.69675 data_ms=0.1 step_ms=209.1\n";
  }
  for (int rank = 0; rank < 3; ++rank) {
    const std::string tb = GlooError(kTimedOut);
    for (std::size_t at = 0; at < tb.size();) {
      const std::size_t end = tb.find('\n', at);
      out += std::to_string(rank) + ": " + tb.substr(at, end - at + 1);
      at = end + 1;
    }
  }
  out +=
      "srun: error: sn01: task 2: Exited with exit code 1\n"
      "srun: error: sn01: tasks 0-1: Exited with exit code 1\n";
  Write(tmp.path() / "x7.out", out);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG) << d.reason();
}

// The survivor of two agents (corpora/real2's tr2_node_loss_agent1, node0.log): its worker lost
// its peer, then its agent lost the store the other agent hosted (it had failed to bind the
// store's port itself), reported its worker and waited in vain at the exit barrier. The other
// agent's console is empty.
std::string SurvivorOfAStoreHostsLoss(const std::string& error) {
  std::string s =
      "WARNING: Logging before InitGoogleLogging() is written to STDERR\n"
      "W20261202 10:24:08.113222 30545 socket.cpp:426] [c10d] The server socket has failed to bind to [::]:40123 (errno: 98 - "
      "Address already in use).\n"
      "E20261202 10:24:08.126828 30545 socket.cpp:462] [c10d] The server socket has failed to listen on any local network "
      "address.\n";
  s += Tagged(GlooError(error));
  s += "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'localhost_30545_0' has failed to send a "
       "keep-alive heartbeat to the rendezvous 'job1' due to an error of type RendezvousConnectionError.\n"
       "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 30655) of binary: "
       "/usr/bin/python3\n"
       "ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 0.00016880035400390625 seconds\n"
       "Traceback (most recent call last):\n"
       "  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/utils/store.py\", line 63, in synchronize\n"
       "    store.set(f\"{key_prefix}{rank}\", data)\n"
       "RuntimeError: Broken pipe\n"
       "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'localhost_30545_0' has failed to shutdown the "
       "rendezvous 'job1' due to an error of type RendezvousConnectionError.\n"
       "[default0]:step 7 loss 22.0784\n"
       "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
       "============================================================\n"
       "/opt/job/train2.py FAILED\n"
       "------------------------------------------------------------\n"
       "Failures:\n  <NO_OTHER_FAILURES>\n"
       "------------------------------------------------------------\n"
       "Root Cause (first observed failure):\n[0]:\n"
       "  time      : 2026-12-02_10:24:19\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
       "  exitcode  : 1 (pid: 30655)\n  error_file: <N/A>\n"
       "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
       "============================================================\n";
  return s;
}

// The store's host and its worker vanished together: node loss, owner host, at the level the
// lines give (no line names that host).
TEST(Unranked, LoneAgentThatLostTheStoreAndItsPeerSeesTheOtherAgentsNodeLost) {
  TempDir tmp;
  Write(tmp.path() / "a.out", SurvivorOfAStoreHostsLoss(kClosed));
  Write(tmp.path() / "b.out", "");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_TRUE(d.initiator().node().empty()) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_HOST) << d.reason();
  EXPECT_TRUE(Cites(d, "RendezvousConnectionError")) << d.reason();
}

// Its worker timed out instead: the peer was alive, so its host was not lost with the store.
TEST(Unranked, LoneAgentThatLostTheStoreWhileItsWorkerTimedOutSeesNoNodeLoss) {
  TempDir tmp;
  Write(tmp.path() / "a.out", SurvivorOfAStoreHostsLoss(kTimedOut));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
}

// The console of the agent that could not host the store (corpora/real2's tr2_node_loss_agent0,
// node0.log): c10d's glog lines at its start, and nothing after.
const char kClientAgentStart[] =
    "WARNING: Logging before InitGoogleLogging() is written to STDERR\n"
    "W20261202 10:24:24.594870 30733 socket.cpp:426] [c10d] The server socket has failed to bind to [::]:54733 (errno: 98 - "
    "Address already in use).\n"
    "W20261202 10:24:24.598786 30733 socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:54733 (errno: 98 - "
    "Address already in use).\n"
    "E20261202 10:24:24.598819 30733 socket.cpp:462] [c10d] The server socket has failed to listen on any local network "
    "address.\n";

// The store host's agent: its worker's gloo error and its report (node1.log).
std::string StoreHostAgent(const std::string& error) {
  return Tagged(GlooError(error)) +
         "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 30855) of binary: "
         "/usr/bin/python3\n";
}

// One agent's worker lost its peer to a closed connection; the other agent's console stops after
// its start: that agent vanished with its worker. Node loss, owner host; no host named.
TEST(Unranked, AgentWhoseConsoleStopsAfterItsStartWhileTheOthersWorkersPeerWasGoneIsItsNodesLoss) {
  TempDir tmp;
  Write(tmp.path() / "a.out", kClientAgentStart);
  Write(tmp.path() / "b.out", StoreHostAgent(kClosed));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_TRUE(d.initiator().node().empty()) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_HOST) << d.reason();
}

// The silent agent reported its worker's SIGKILL: its worker died alone; no node was lost.
TEST(Unranked, AgentThatReportedItsWorkerIsNotLost) {
  TempDir tmp;
  Write(tmp.path() / "a.out", std::string(kClientAgentStart) +
                                  "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 "
                                  "(pid: 30788) of binary: /usr/bin/python3\n");
  Write(tmp.path() / "b.out", StoreHostAgent(kClosed));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
}

// The other agent's worker timed out: its peer was alive, not gone with its node.
TEST(Unranked, AgentWhoseConsoleStopsWhileTheOthersWorkerTimedOutIsNotLost) {
  TempDir tmp;
  Write(tmp.path() / "a.out", kClientAgentStart);
  Write(tmp.path() / "b.out", StoreHostAgent(kTimedOut));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
}

}  // namespace
}  // namespace denpex::engine
