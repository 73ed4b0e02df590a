// A rank whose only error is a timeout or a lost connection waiting on a peer is a victim, never
// the answer: on a `torchrun --nproc_per_node N > console 2>&1` console (workers' tracebacks
// unprefixed, torch 1.13 on gloo) and on a `--tee 3` console (`[default<L>]:` lines). The
// lines are real torch 1.13 ones (docs/log_formats.md); the file names are opaque.
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

const char kGlooTimeoutTraceback[] =
    "Traceback (most recent call last):\n"
    "  File \"/opt/job/train.py\", line 105, in main\n"
    "    loss.backward()\n"
    "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
    "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete\n";

const char kTableHead[] =
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "/opt/job/train.py FAILED\n"
    "------------------------------------------------------------\n";

// A world of two on one console: `victim` timed out in gloo waiting on the other rank, which
// printed nothing; the agent SIGTERMs the other (and, when `stopped`, has to SIGKILL it).
std::string SharedConsole(int victim, bool stopped) {
  std::string s = "step 6 loss 24.7755\nstep 7 loss 22.0784\n";
  s += kGlooTimeoutTraceback;
  s += "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 22422 closing signal SIGTERM\n";
  if (stopped) {
    s += "WARNING:torch.distributed.elastic.multiprocessing.api:Unable to shutdown process 22422 via 15, forcefully "
         "exitting via 9\n";
  }
  s += "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: " + std::to_string(victim) +
       " (pid: 22421) of binary: /usr/bin/python3\n";
  s += kTableHead;
  s += "Failures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\n"
       "Root Cause (first observed failure):\n[" + std::to_string(victim) + "]:\n"
       "  time      : 2026-12-02_06:23:16\n  host      : localhost\n"
       "  rank      : " + std::to_string(victim) + " (local_rank: " + std::to_string(victim) + ")\n"
       "  exitcode  : 1 (pid: 22421)\n  error_file: <N/A>\n"
       "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
       "============================================================\n";
  return s;
}

bool Cites(const v1::Diagnosis& d, const std::string& text) {
  for (const auto& e : d.evidence()) {
    if (e.text().find(text) != std::string::npos) return true;
  }
  return false;
}

// The agent ran two workers (its table's one, and the one it SIGTERMed): the one that printed
// nothing on the console both share is the silent member the victim waited on. It outlived
// SIGTERM (stopped): a hang, owner unknown.
TEST(Victims, SharedConsoleStoppedWorkerTheAgentHadToSigkillIsTheSilentMember) {
  TempDir tmp;
  Write(tmp.path() / "console.txt", SharedConsole(0, /*stopped=*/true));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN);
  EXPECT_TRUE(d.initiator().node().empty()) << "`host : localhost` names no machine";
}

// Hung in the script and ended by SIGTERM: a hang of the application's.
TEST(Victims, SharedConsoleHungPeerThatTookSigtermIsTheSilentMember) {
  TempDir tmp;
  Write(tmp.path() / "console.txt", SharedConsole(1, /*stopped=*/false));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 0) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
}

// The table's local rank 2 does not fit under the two workers its lines show (one exited, one
// SIGTERMed): a worker is unaccounted for, so none is placed and the victim is still not named.
TEST(Victims, SharedConsoleWhoseWorkerCountDoesNotFitNamesNoSilentMember) {
  TempDir tmp;
  const std::string s = SharedConsole(2, /*stopped=*/false);
  Write(tmp.path() / "console.txt", s);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_TRUE(Cites(d, "Timed out waiting 20000ms")) << d.reason();
}

// torchrun's table for two workers of one console that both exited with exit code 1 in the same
// second: its Root Cause names the lowest rank on that tie, whichever failed first.
std::string BothExitedTable() {
  std::string s =
      "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 24727) of "
      "binary: /usr/bin/python3\n";
  s += kTableHead;
  s += "Failures:\n[1]:\n  time      : 2026-12-02_06:25:06\n  host      : localhost\n  rank      : 1 (local_rank: 1)\n"
       "  exitcode  : 1 (pid: 24728)\n  error_file: <N/A>\n"
       "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
       "------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n"
       "  time      : 2026-12-02_06:25:06\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
       "  exitcode  : 1 (pid: 24727)\n  error_file: <N/A>\n"
       "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
       "============================================================\n";
  return s;
}

const char kClosedByPeerTraceback[] =
    "Traceback (most recent call last):\n"
    "  File \"/opt/job/train.py\", line 105, in main\n"
    "    loss.backward()\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:36750\n";

// Both workers of one console exited with exit code 1: one raised ValueError, the other lost
// its connection to it; the lines carry no rank, so which one raised is not known. One host
// holds the job: the answer is the class and owner of the ValueError, with no rank (and no node:
// `host : localhost` names no machine).
TEST(Victims, SharedConsoleOwnErrorAndPeerErrorOfTwoFailedWorkersAnswerTheClassNotTheRank) {
  TempDir tmp;
  std::string s = "step 7 loss 22.0784\n"
                  "Traceback (most recent call last):\n"
                  "  File \"/opt/job/train.py\", line 87, in main\n"
                  "    raise ValueError(f\"could not decode sample {64 * step + 17}: unexpected end of data\")\n"
                  "ValueError: could not decode sample 529: unexpected end of data\n";
  s += kClosedByPeerTraceback;
  s += BothExitedTable();
  Write(tmp.path() / "console.txt", s);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_TRUE(d.initiator().node().empty()) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_NE(d.reason().find("Which rank it was is not known"), std::string::npos) << d.reason();
  EXPECT_TRUE(Cites(d, "ValueError: could not decode sample 529")) << d.reason();
}

// One worker printed a plain `error:` line and called sys.exit(1); the other's one traceback is a
// peer error. Two exits with code 1, one peer error: the other exit was the worker's own.
TEST(Victims, SharedConsoleExitWithoutTracebackBesideOnePeerErrorIsTheApplications) {
  TempDir tmp;
  std::string s = "step 7 loss 22.0784\nerror: input shard is unreadable, giving up\n";
  s += kClosedByPeerTraceback;
  s += BothExitedTable();
  Write(tmp.path() / "console.txt", s);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
}

// Both workers printed a peer error: each may be a victim of something no line shows, so nothing
// is answered.
TEST(Victims, SharedConsoleWhereEveryFailedWorkerMayHaveLostAPeerAnswersNothing) {
  TempDir tmp;
  std::string s = "step 7 loss 22.0784\n";
  s += kClosedByPeerTraceback;
  s += kGlooTimeoutTraceback;
  s += BothExitedTable();
  Write(tmp.path() / "console.txt", s);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
}

// The same console rotated (`console.txt.1` the older piece, holding the victim's traceback):
// one stream, one agent, the same answer.
TEST(Victims, RotatedSharedConsoleIsOneStreamOfOneAgent) {
  TempDir tmp;
  const std::string s = SharedConsole(0, /*stopped=*/true);
  const std::size_t cut = s.find("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process");
  Write(tmp.path() / "console.txt.1", s.substr(0, cut));
  Write(tmp.path() / "console.txt", s.substr(cut));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
}

// More unprefixed errors than workers that exited (rank 2 raised, and the worker its agent then
// SIGTERMed had printed a peer error first: corpora/real's tr_exception_rank2 with a node's
// files concatenated): the SIGTERMed worker was not silent, so it is not named.
TEST(Victims, SigtermedWorkerWhoseConsoleHoldsMoreErrorsThanExitsIsNotTheSilentMember) {
  TempDir tmp;
  std::string s =
      "Traceback (most recent call last):\n"
      "  File \"/opt/job/train.py\", line 173, in main\n"
      "    raise RuntimeError(f\"batch {step} from shard 3 has 17 non-finite values\")\n"
      "RuntimeError: batch 12 from shard 3 has 17 non-finite values\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/job/train.py\", line 203, in main\n"
      "    loss.backward()  # DDP all-reduces the gradients here\n"
      "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:42407\n"
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 27090 closing signal SIGTERM\n"
      "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 27089) of binary: "
      "/usr/bin/python3\n";
  s += kTableHead;
  s += "Failures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\n"
       "Root Cause (first observed failure):\n[0]:\n"
       "  time      : 2026-11-29_16:27:25\n  host      : node-b\n  rank      : 2 (local_rank: 0)\n"
       "  exitcode  : 1 (pid: 27089)\n  error_file: <N/A>\n"
       "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
       "============================================================\n";
  Write(tmp.path() / "node-b.txt", s);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.initiator().rank(), 3) << d.reason();
}

TEST(Victims, TeeConsoleWorkerWithOnlyAGlooTimeoutIsNotNamedByItsAgentsWord) {
  TempDir tmp;
  std::string s;
  for (const char* p = kGlooTimeoutTraceback; *p != '\0';) {
    const char* end = p;
    while (*end != '\n') ++end;
    s += "[default0]:" + std::string(p, end + 1);
    p = end + 1;
  }
  s += "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 8547) of binary: "
       "/usr/bin/python3\n"
       "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n";
  Write(tmp.path() / "b.out", s);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_NE(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  EXPECT_TRUE(Cites(d, "Timed out waiting 20000ms")) << d.reason();
}

TEST(Victims, HostlessDmesgOfAOneNodeJobExplainsTheSigkilledRankByPid) {
  TempDir tmp;
  std::string s = "step 7 loss 22.0784\n";
  s += "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:16034\n";
  s += "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 27148) of binary: "
       "/usr/bin/python3\n";
  s += kTableHead;
  s += "Failures:\n[1]:\n  time      : 2026-12-02_06:26:18\n  host      : localhost\n  rank      : 1 (local_rank: 1)\n"
       "  exitcode  : -9 (pid: 27149)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 27149\n"
       "------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n"
       "  time      : 2026-12-02_06:26:18\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
       "  exitcode  : 1 (pid: 27148)\n  error_file: <N/A>\n"
       "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
       "============================================================\n";
  Write(tmp.path() / "console.txt", s);
  Write(tmp.path() / "kernel.txt",
        "[14793.461694] Memory cgroup out of memory: Killed process 27149 (python3) total-vm:1784396kB, "
        "anon-rss:921088kB, file-rss:126416kB, shmem-rss:0kB, UID:0 pgtables:2604kB oom_score_adj:0\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
}

}  // namespace
}  // namespace denpex::engine
