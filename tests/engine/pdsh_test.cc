// The engine on DeepSpeed-over-pdsh incidents (deepspeed.log, docs/log_formats.md §26b/§26c),
// written by hand: the static TCPStore's client-join timeout and a rank's error beside its
// node's launcher exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "denpex/engine/engine.h"
#include "diagnose_ok.h"
#include "fixture.h"
#include "ingest/load.h"
#include "parse/world_info.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

using testing::DiagnoseOk;

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

bool Cites(const v1::Diagnosis& d, const std::string& needle, v1::EvidenceRole role) {
  return std::any_of(d.evidence().begin(), d.evidence().end(), [&](const v1::Evidence& e) {
    return e.role() == role && e.text().find(needle) != std::string::npos;
  });
}

constexpr const char* kStamp = "[2026-03-02 09:00:05,120] [INFO] ";

// Three nodes of 2 ranks; gpu-0003 never launched: no line of it in deepspeed.log, only its
// (empty) kernel log. Rank 0's server error comes first; every joined rank's error is the same.
std::string JoinTimeoutLog(bool with_silent_kernel_log, const fs::path& dir) {
  std::string log = std::string(kStamp) + "[runner.py:568:main] cmd = pdsh -S -f 1024 -w gpu-0001,gpu-0002,gpu-0003 export\n";
  for (const char* host : {"gpu-0001", "gpu-0002"}) {
    log += std::string(host) + ": " + kStamp + "[launch.py:151:main] nnodes=3, num_local_procs=2, node_rank=0\n";
  }
  log += "gpu-0001: [rank0]: Traceback (most recent call last):\n";
  log += "gpu-0001: [rank0]:   File \"/workspace/train.py\", line 88, in <module>\n";
  log += "gpu-0001: [rank0]:     deepspeed.init_distributed(dist_backend=\"nccl\")\n";
  log += "gpu-0001: [rank0]: torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 4/6 clients joined.\n";
  for (int rank = 1; rank < 4; ++rank) {
    const std::string host = rank < 2 ? "gpu-0001" : "gpu-0002";
    const std::string p = host + ": [rank" + std::to_string(rank) + "]: ";
    log += p + "Traceback (most recent call last):\n";
    log += p + "  File \"/workspace/train.py\", line 90, in <module>\n";
    log += p + "    torch.distributed.barrier()\n";
    log += p + "torch.distributed.DistBackendError: [" + std::to_string(rank) +
           "] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', "
           "but store->get('0') got error: Connection reset by peer. This may indicate a possible application crash on "
           "rank 0 or a network set up issue.\n";
  }
  log += "pdsh@login-01: gpu-0001: ssh exited with exit code 1\npdsh@login-01: gpu-0002: ssh exited with exit code 1\n";
  Write(dir / "deepspeed.log", log);
  Write(dir / "gpu-0001/kern.log", "");
  Write(dir / "gpu-0002/kern.log", "");
  if (with_silent_kernel_log) Write(dir / "gpu-0003/kern.log", "");
  return log;
}

TEST(StoreJoinGap, NamesTheSilentNodeNotRankZero) {
  TempDir tmp;
  JoinTimeoutLog(true, tmp.path());
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), "gpu-0003");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NCCL_SETUP);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  EXPECT_NE(d.reason().find("4/6 clients joined"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("2 ranks never joined and printed nothing"), std::string::npos) << d.reason();
  EXPECT_TRUE(Cites(d, "DistStoreError: Timed out after 601 seconds", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_TRUE(Cites(d, "store->get('0') got error", v1::EVIDENCE_ROLE_CONSEQUENCE));
  ASSERT_GE(d.recovery().preconditions_size(), 1);
  EXPECT_EQ(d.recovery().preconditions(0).target(), "gpu-0003");
}

// The missing ranks' node is named nowhere: the engine says so rather than blame rank 0.
TEST(StoreJoinGap, InconclusiveWhenNoKnownNodeIsSilent) {
  TempDir tmp;
  JoinTimeoutLog(false, tmp.path());
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_NE(d.reason().find("2 ranks never joined"), std::string::npos) << d.reason();
  EXPECT_NE(d.initiator().rank(), 0);
}

// gpu-0003 and gpu-0004 are both silent (only their empty kernel logs) and nothing sets one
// apart: the first in the node list is no answer, the node is left open.
TEST(StoreJoinGap, InconclusiveWhenSeveralNodesAreSilentAlike) {
  TempDir tmp;
  JoinTimeoutLog(true, tmp.path());
  Write(tmp.path() / "gpu-0004/kern.log", "");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_EQ(d.initiator().node(), "") << d.reason();
  EXPECT_NE(d.reason().find("2 nodes of the logs have no line of their ranks"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("2 ranks never joined"), std::string::npos) << d.reason();
}

// A watchdog's error is a collective's timeout or its teardown, never a store client's error,
// whatever its text quotes: the first client error cited is a rank's own, and the diagnosis is
// the same whether the parse kept the watchdog's text or left it out (as a diagnosis's does).
TEST(StoreJoinGap, AWatchdogsErrorIsNoStoreClientsErrorWhateverItQuotes) {
  TempDir tmp;
  const std::string log = JoinTimeoutLog(true, tmp.path());
  const std::string quoted =
      "gpu-0002: [rank2]:   what():  [PG 0 Rank 2] Process group watchdog thread terminated with "
      "exception: "
      "[2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
      "store by key "
      "'0', but store->get('0') got error: Connection reset by peer.\n";
  const std::size_t first_client = log.find("gpu-0001: [rank1]: Traceback");
  ASSERT_NE(first_client, std::string::npos);
  Write(tmp.path() / "deepspeed.log",
        log.substr(0, first_client) + quoted + log.substr(first_client));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().node(), "gpu-0003") << d.reason();
  EXPECT_TRUE(Cites(d, "DistBackendError: [1] is setting up NCCL communicator",
                    v1::EVIDENCE_ROLE_CONSEQUENCE));
  EXPECT_FALSE(Cites(d, "watchdog thread terminated", v1::EVIDENCE_ROLE_CONSEQUENCE));
  auto shown = Diagnose(tmp.path(), {.shown_texts = true});
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown->DebugString(), d.DebugString());
}

// DeepSpeed's launch.py names no rank (its last command, whichever failed): its node's exit line
// is cited beside the rank's own error, not as the initiator.
TEST(PdshLauncher, NodesLauncherExitCorroboratesTheRanksOwnError) {
  TempDir tmp;
  std::string log;
  for (int k = 0; k < 2; ++k) {
    log += "gpu-000" + std::to_string(k + 1) + ": " + kStamp + "[launch.py:151:main] nnodes=2, num_local_procs=2, node_rank=" +
           std::to_string(k) + "\n";
  }
  log += "gpu-0002: [rank3]: Traceback (most recent call last):\n";
  log += "gpu-0002: [rank3]:   File \"/workspace/train.py\", line 120, in <module>\n";
  log += "gpu-0002: [rank3]:     loss = model(batch)\n";
  log += "gpu-0002: [rank3]: ValueError: bad batch\n";
  log += "gpu-0002: [2026-03-02 09:00:06,310] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 4121\n";
  log += "gpu-0002: [2026-03-02 09:00:06,520] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
         "'--local_rank=1'] exits with return code = 1\n";
  log += "pdsh@login-01: gpu-0002: ssh exited with exit code 1\n";
  Write(tmp.path() / "deepspeed.log", log);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 3) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0002");
  EXPECT_EQ(d.initiator().local_rank(), 1);
  EXPECT_TRUE(Cites(d, "ValueError: bad batch", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(Cites(d, "exits with return code = 1", v1::EVIDENCE_ROLE_CORROBORATING));
}

// launch.py's `nnodes=N, num_local_procs=P, node_rank=K` gives a rank's local rank even when
// no other rank of its node printed: rank 669 on node_rank 83 with 8 GPUs is local rank 5.
TEST(PdshLauncher, LocalRankFromTheLaunchersNodeRank) {
  TempDir tmp;
  std::string log;
  for (const char* host : {"gpu-0083", "gpu-0084"}) {
    const int k = host == std::string("gpu-0083") ? 82 : 83;
    log += std::string(host) + ": " + kStamp + "[launch.py:151:main] nnodes=84, num_local_procs=8, node_rank=" +
           std::to_string(k) + "\n";
  }
  log += "gpu-0084: [rank669]: Traceback (most recent call last):\n";
  log += "gpu-0084: [rank669]:   File \"/workspace/train.py\", line 120, in <module>\n";
  log += "gpu-0084: [rank669]:     loss = model(batch)\n";
  log += "gpu-0084: [rank669]: ValueError: bad batch\n";
  log += "gpu-0084: [2026-03-02 09:00:06,520] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
         "'--local_rank=7'] exits with return code = 1\n";
  log += "pdsh@login-01: gpu-0084: ssh exited with exit code 1\n";
  Write(tmp.path() / "deepspeed.log", log);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 669) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0084");
  EXPECT_EQ(d.initiator().local_rank(), 5);
}

// runner.py's --world_info, as DeepSpeed writes it: base64.urlsafe_b64encode(json.dumps(
// {"worker-0": [0, 1, 2, 3], "worker-1": [0, 1, 2, 3]})); hosts get consecutive ranks in order.
TEST(WorldInfo, DecodesTheRunnersHostsAndRanks) {
  const auto hosts = DecodeWorldInfo("eyJ3b3JrZXItMCI6IFswLCAxLCAyLCAzXSwgIndvcmtlci0xIjogWzAsIDEsIDIsIDNdfQ==");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host, "worker-0");
  EXPECT_EQ(hosts[0].first_rank, 0);
  EXPECT_EQ(hosts[0].procs, 4);
  EXPECT_EQ(hosts[1].host, "worker-1");
  EXPECT_EQ(hosts[1].first_rank, 4);
  // --include worker-0:0,2,3@worker-1:1: slots, not GPU ids, count.
  const auto include = DecodeWorldInfo("eyJhIjogWzAsIDIsIDNdLCAiYiI6IFsxXX0=");
  ASSERT_EQ(include.size(), 2u);
  EXPECT_EQ(include[0].procs, 3);
  EXPECT_EQ(include[1].first_rank, 3);
  EXPECT_EQ(include[1].procs, 1);
  EXPECT_TRUE(DecodeWorldInfo("not base64!").empty());
  EXPECT_TRUE(DecodeWorldInfo("eyJhIjogMX0=").empty());  // {"a": 1}
  EXPECT_EQ(WorldInfoArgument("cmd = pdsh -w a,b python -u -m deepspeed.launcher.launch --world_info=eyJhIjogWzBdfQ== --node_rank=%n"),
            "eyJhIjogWzBdfQ==");
}

// Four nodes of 4 ranks; only rank 13 (gpu-0004, local rank 1) printed. Every node's launcher
// reports its exit, and gpu-0001's launcher names no rank: the runner's --world_info says the
// console holds 16 ranks, so those lines keep no rank (not rank 13, the file's only
// `[rank<G>]:`), and rank 13's local rank comes from gpu-0004's place in the world info.
TEST(WorldInfo, LauncherLinesKeepTheirNodeNotTheOnlyPrintingRank) {
  TempDir tmp;
  std::string log = std::string(kStamp) +
                    "[runner.py:568:main] cmd = pdsh -S -f 1024 -w gpu-0001,gpu-0002,gpu-0003,gpu-0004 export "
                    "PYTHONPATH=\"/workspace\"; cd /workspace; /usr/bin/python3 -u -m deepspeed.launcher.launch "
                    "--world_info=eyJncHUtMDAwMSI6IFswLCAxLCAyLCAzXSwgImdwdS0wMDAyIjogWzAsIDEsIDIsIDNdLCAiZ3B1LTAwMDMiOiBbMCwgMSwg"
                    "MiwgM10sICJncHUtMDAwNCI6IFswLCAxLCAyLCAzXX0= --node_rank=%n --master_addr=10.10.0.2 --master_port=29500 "
                    "train.py --deepspeed --deepspeed_config ds_config.json\n";
  for (const char* host : {"gpu-0001", "gpu-0002", "gpu-0003", "gpu-0004"}) {  // launch.py's start-up, no layout line
    log += std::string(host) + ": " + kStamp + "[launch.py:163:main] dist_world_size=16\n";
    log += std::string(host) + ": " + kStamp + "[launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3\n";
  }
  log += "gpu-0004: [rank13]: Traceback (most recent call last):\n";
  log += "gpu-0004: [rank13]:   File \"/workspace/train.py\", line 120, in <module>\n";
  log += "gpu-0004: [rank13]:     loss = model(batch)\n";
  log += "gpu-0004: [rank13]: ValueError: bad batch\n";
  log += "gpu-0004: [2026-03-02 09:00:06,520] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
         "'--local_rank=3'] exits with return code = 1\n";
  log += "gpu-0001: [2026-03-02 09:10:07,020] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 4121\n";
  log += "gpu-0001: [2026-03-02 09:10:07,520] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
         "'--local_rank=3'] exits with return code = -6\n";
  log += "pdsh@login-01: gpu-0001: ssh exited with exit code 250\npdsh@login-01: gpu-0004: ssh exited with exit code 1\n";
  Write(tmp.path() / "deepspeed.log", log);
  auto inc = LoadIncident(tmp.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_EQ(inc->world.size(), 4u);
  EXPECT_EQ(inc->nodes.size(), 4u);  // gpu-0002 and gpu-0003 only in the world info
  int launcher_lines = 0;
  for (const Event& e : inc->events) {
    if (e.kind != Kind::kLauncherExit && e.kind != Kind::kKillingSubprocess) continue;
    ++launcher_lines;
    EXPECT_EQ(e.rank, -1) << inc->str(e.host);
    EXPECT_GE(e.node, 0);
  }
  EXPECT_EQ(launcher_lines, 3);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 13) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0004");
  EXPECT_EQ(d.initiator().local_rank(), 1);
}

// The joined ranks' traceback under a launcher's prefix (`<P>` before each line).
std::string JoinedRankErrors(int rank, const std::string& p) {
  return p + "[rank" + std::to_string(rank) + "]: Traceback (most recent call last):\n" + p + "[rank" + std::to_string(rank) +
         "]:   File \"/workspace/train.py\", line 90, in <module>\n" + p + "[rank" + std::to_string(rank) +
         "]: torch.distributed.DistBackendError: [" + std::to_string(rank) +
         "] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but "
         "store->get('0') got error: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server "
         "shutdown or crash?. This may indicate a possible application crash on rank 0 or a network set up issue.\n";
}

// srun -l --kill-on-bad-exit=1: gpu-0003's tasks 4-5 hung before init_process_group. srun's
// teardown and slurmstepd name the node (it was part of the step), but none of its tasks spoke.
TEST(StoreJoinGap, UnderSrunTheNodeOnlySrunsTeardownNamesIsSilent) {
  TempDir tmp;
  std::string log = "[2026-03-02 09:00:00,053] [INFO] [runner.py:568:main] cmd = srun -n 6 -l --kill-on-bad-exit=1 "
                    "--export=ALL /usr/bin/python3 -u train.py\n";
  for (int rank = 0; rank < 4; ++rank) {
    log += std::to_string(rank) + ": [2026-03-02 09:00:03,187] [INFO] [comm.py:637:init_distributed] cdb=None\n";
  }
  log += "0: [rank0]: Traceback (most recent call last):\n";
  log += "0: [rank0]: torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 4/6 clients joined.\n";
  for (int rank = 1; rank < 4; ++rank) log += JoinedRankErrors(rank, std::to_string(rank) + ": ");
  log += "srun: error: gpu-0001: task 0: Exited with exit code 1\n";
  log += "srun: launch/slurm: _step_signal: Terminating StepId=4242001.0\n";
  for (const char* host : {"gpu-0001", "gpu-0002", "gpu-0003"}) {
    log += std::string("slurmstepd: error: *** STEP 4242001.0 ON ") + host + " CANCELLED AT 2026-03-02T09:10:06 ***\n";
  }
  log += "srun: error: gpu-0001: task 1: Exited with exit code 1\n";
  log += "srun: error: gpu-0002: tasks 2-3: Exited with exit code 1\n";
  log += "srun: error: gpu-0003: tasks 4-5: Terminated\n";
  Write(tmp.path() / "slurm-4242001.out", log);
  Write(tmp.path() / "slurmctld.log",
        "[2026-03-02T09:00:00.019] sched: Allocate JobId=4242001 NodeList=gpu-[0001-0003] #CPUs=336 Partition=gpu\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0003") << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NCCL_SETUP);
  EXPECT_NE(d.reason().find("4/6 clients joined"), std::string::npos) << d.reason();
}

// mpirun --tag-output --report-bindings: gpu-0002's daemon started ranks 2-3 (its binding lines
// name them), but they never printed; mpirun's abort names a joined rank.
TEST(StoreJoinGap, UnderMpirunANodeWithOnlyItsBindingLinesIsSilent) {
  TempDir tmp;
  std::string log;
  for (int rank = 0; rank < 6; ++rank) {
    log += "[gpu-000" + std::to_string(rank / 2 + 1) + ":0712" + std::to_string(rank / 2) + "] MCW rank " +
           std::to_string(rank) + " is not bound (or bound to all available processors)\n";
  }
  log += "[1,0]<stderr>:[rank0]: Traceback (most recent call last):\n";
  log += "[1,0]<stderr>:[rank0]: torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 4/6 clients "
         "joined.\n";
  for (int rank : {1, 4, 5}) log += JoinedRankErrors(rank, "[1," + std::to_string(rank) + "]<stderr>:");
  log += "--------------------------------------------------------------------------\n"
         "Primary job  terminated normally, but 1 process returned\n"
         "a non-zero exit code. Per user-direction, the job has been aborted.\n"
         "--------------------------------------------------------------------------\n"
         "--------------------------------------------------------------------------\n"
         "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
         "the job to be terminated. The first process to do so was:\n\n"
         "  Process name: [[43025,1],4]\n"
         "  Exit code:    1\n"
         "--------------------------------------------------------------------------\n";
  Write(tmp.path() / "mpirun.out", log);
  // gpu-0003's ranks spoke; gpu-0002's kernel saw its python3 processes hang (khungtaskd).
  Write(tmp.path() / "gpu-0002/kern.log",
        "Mar  2 09:00:03 gpu-0002 kernel: [3030380.291268] nfs: server nfs-01 not responding, still trying\n"
        "Mar  2 09:02:04 gpu-0002 kernel: [3030501.103268] INFO: task python3:19970 blocked for more than 120 seconds.\n"
        "Mar  2 09:02:04 gpu-0002 kernel: [3030501.103268]       Tainted: P           OE     5.15.0-105-generic #115-Ubuntu\n"
        "Mar  2 09:02:04 gpu-0002 kernel: [3030501.103277] INFO: task python3:19971 blocked for more than 120 seconds.\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_TRUE(Cites(d, "INFO: task python3:19970 blocked for more than 120 seconds.", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_NE(d.reason().find("2 hung tasks"), std::string::npos) << d.reason();
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0002") << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
}

// torch 2.1 under pdsh: the watchdog timeouts name only `[Rank N]` within their group and carry no
// local-rank tag, so none is tied to a global rank. The reason says so (not "no timeout"), and
// names the one node whose ranks logged fewer timeouts than every other node.
TEST(Pdsh, TimeoutsWithoutAGlobalRankAreNamedNotIgnored) {
  TempDir tmp;
  std::string log;
  const char* timeout = "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=33, "
                        "OpType=ALLREDUCE, NumelIn=16777216, NumelOut=16777216, Timeout(ms)=600000) ran for 600019 milliseconds "
                        "before timing out.\n";
  for (int n = 1; n <= 3; ++n) {
    const std::string host = "gpu-000" + std::to_string(n) + ": ";
    log += host + kStamp + "[launch.py:151:main] nnodes=3, num_local_procs=2, node_rank=" + std::to_string(n - 1) + "\n";
  }
  for (int n = 1; n <= 3; ++n) {
    for (int k = 0; k < (n == 2 ? 1 : 2); ++k) log += "gpu-000" + std::to_string(n) + ": " + timeout;
  }
  Write(tmp.path() / "deepspeed.log", log);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE);
  EXPECT_NE(d.reason().find("5 watchdog timeouts were logged, but none can be tied to a global rank"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("gpu-0002 is the one node whose ranks logged fewer timeouts (1, where 2 other nodes logged 2)"),
            std::string::npos)
      << d.reason();
}

}  // namespace
}  // namespace denpex::engine
