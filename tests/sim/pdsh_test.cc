// DeepSpeed's launcher over pdsh (LAUNCHER_PDSH, deepspeed.log) and the static TCPStore's
// client-join timeout (FAULT_KIND_STORE_JOIN_TIMEOUT), on small jobs.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace testing_util;

constexpr const char* kPdsh = R"(name: "pdsh_small"
seed: 3
job { nodes: 4 gpus_per_node: 4 tp: 4 pp: 2 }
launcher: LAUNCHER_PDSH
training { warmup_steps: 3 }
faults { kind: FAULT_KIND_EXCEPTION rank: 13 }
)";

void ExpectEvidenceMatchesFiles(const fs::path& out, const v1::Truth& truth) {
  ASSERT_GT(truth.evidence_size(), 0);
  for (const v1::Evidence& e : truth.evidence()) {
    const auto lines = ReadLines(out / "incident" / e.file());
    ASSERT_LE(static_cast<std::size_t>(e.line()), lines.size()) << e.file();
    EXPECT_EQ(lines[static_cast<std::size_t>(e.line() - 1)], e.text());
  }
}

// One file, deepspeed.log: the runner's pdsh command, each node's launch.py behind `<host>: `.
TEST(Pdsh, RunnerFansOutAndEveryNodeLineCarriesItsHost) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kPdsh), out);
  const std::string text = ReadAll(out / "incident/deepspeed.log");
  EXPECT_FALSE(fs::exists(out / "incident/deepspeed-unused.log"));
  EXPECT_THAT(text, StartsWith("[2026-03-0"));
  EXPECT_THAT(text, HasSubstr("[INFO] [multinode_runner.py:81:get_cmd] Running on the following workers: "
                              "gpu-0001,gpu-0002,gpu-0003,gpu-0004\n"));
  EXPECT_THAT(text, HasSubstr("[INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w gpu-0001,gpu-0002,gpu-0003,gpu-0004 export "));
  // --world_info is base64.urlsafe_b64encode(json.dumps({"gpu-0001": [0, 1, 2, 3], ...})).
  EXPECT_THAT(text, HasSubstr("-m deepspeed.launcher.launch --world_info=eyJncHUtMDAwMSI6IFswLCAxLCAyLCAzXSwg"));
  EXPECT_THAT(text, HasSubstr(" --node_rank=%n --master_addr="));
  EXPECT_THAT(text, ContainsRegex("\ngpu-0003: \\[[-0-9 :,]+\\] \\[INFO\\] \\[launch.py:151:main\\] nnodes=4, num_local_procs=4, node_rank=2\n"));
  EXPECT_THAT(text, HasSubstr("] [INFO] [launch.py:145:main] WORLD INFO DICT: {'gpu-0001': [0, 1, 2, 3], 'gpu-0002': [0, 1, 2, 3]"));
  EXPECT_THAT(text, HasSubstr("global_rank_mapping=defaultdict(<class 'list'>, {'gpu-0001': [0, 1, 2, 3], 'gpu-0002': [4, 5, 6, 7]"));
  EXPECT_THAT(text, ContainsRegex("\ngpu-0004: \\[[-0-9 :,]+\\] \\[INFO\\] \\[launch.py:256:main\\] process [0-9]+ spawned with command: "
                                  "\\['/usr/bin/python3', '-u', 'train.py', '--local_rank=3', "));
  // The rank's own traceback behind its host's prefix.
  EXPECT_THAT(text, HasSubstr("\ngpu-0004: [rank13]: Traceback (most recent call last):\n"));
  EXPECT_EQ(r.truth.job().launcher(), "pdsh");
}

// The failed rank's node: its launcher kills every child, names its *last* command and the
// failed child's return code, exits with it; pdsh relays ssh's status. Nothing stops the other
// nodes: their ranks end by their own watchdogs (-6: exit status 250).
TEST(Pdsh, FailedRanksNodeKillsItsChildrenAndOthersEndByTheirWatchdogs) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kPdsh), out);
  const std::string text = ReadAll(out / "incident/deepspeed.log");
  EXPECT_THAT(text, ContainsRegex("\ngpu-0004: \\[[-0-9 :,]+\\] \\[INFO\\] \\[launch.py:315:sigkill_handler\\] Killing subprocess [0-9]+\n"));
  EXPECT_THAT(text, ContainsRegex("\ngpu-0004: \\[[-0-9 :,]+\\] \\[ERROR\\] \\[launch.py:321:sigkill_handler\\] "
                                  "\\['/usr/bin/python3', '-u', 'train.py', '--local_rank=3', '--deepspeed', "
                                  "'--deepspeed_config', 'ds_config.json'\\] exits with return code = 1\n"
                                  "pdsh@login-01: gpu-0004: ssh exited with exit code 1\n"));
  EXPECT_THAT(text, HasSubstr("Watchdog caught collective operation timeout"));
  EXPECT_THAT(text, HasSubstr("] exits with return code = -6\n"));
  EXPECT_THAT(text, HasSubstr("\npdsh@login-01: gpu-0001: ssh exited with exit code 250\n"));
  ASSERT_EQ(r.truth.evidence_size(), 2);
  EXPECT_THAT(r.truth.evidence(0).text(), HasSubstr("[rank13]: "));
  EXPECT_THAT(r.truth.evidence(1).text(), HasSubstr("exits with return code = 1"));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// A node lost under its session: ssh's keepalive gives up (ServerAliveInterval x CountMax) and
// exits 255, which pdsh prints.
TEST(Pdsh, LostNodeIsSshsKeepaliveTimeout) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kPdsh, {"faults[0].kind=FAULT_KIND_NODE_LOSS", "faults[0].node=1", "pdsh.server_alive_interval_s=10",
                        "pdsh.server_alive_count_max=2"}),
      out);
  const std::string text = ReadAll(out / "incident/deepspeed.log");
  EXPECT_THAT(text, HasSubstr("\ngpu-0002: Timeout, server gpu-0002 not responding.\npdsh@login-01: gpu-0002: ssh exited with exit code 255\n"));
  ASSERT_EQ(r.truth.evidence_size(), 2);
  EXPECT_EQ(r.truth.evidence(0).text(), "gpu-0002: Timeout, server gpu-0002 not responding.");
  EXPECT_EQ(r.truth.evidence(1).text(), "pdsh@login-01: gpu-0002: ssh exited with exit code 255");
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Pdsh, MoreNodesThanPdshsFanOutAreRejected) {
  const std::vector<std::string> set = {"job.nodes=1026"};
  const Result<v1::Scenario> s = ParseScenario(kPdsh, "big.textproto", set);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("pdsh -f 1024"));
  EXPECT_THAT(s.status().message(), HasSubstr("job.nodes"));
}

// One node never launches: it prints nothing; rank 0's TCPStore server times out counting the
// clients, and every rank that joined fails its store->get on the dead server.
TEST(StoreJoinTimeout, SilentNodeLeavesRankZerosServerCountingTheClients) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kPdsh, {"faults[0].kind=FAULT_KIND_STORE_JOIN_TIMEOUT", "faults[0].node=2", "timeouts.nccl_timeout_ms=60000"}),
      out);
  const std::string text = ReadAll(out / "incident/deepspeed.log");
  EXPECT_THAT(text, Not(HasSubstr("gpu-0003: ")));  // the silent node: not a line
  EXPECT_THAT(text, Not(HasSubstr("pdsh@login-01: gpu-0003")));
  EXPECT_THAT(text, HasSubstr("\ngpu-0001: [rank0]: torch.distributed.DistStoreError: Timed out after 61 seconds waiting for "
                              "clients. 12/16 clients joined.\n"));
  EXPECT_THAT(text, HasSubstr("\ngpu-0004: [rank13]: torch.distributed.DistBackendError: [13] is setting up NCCL communicator and "
                              "retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got "
                              "error: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown "
                              "or crash?. This may indicate a possible application crash on rank 0 or a network set up issue.\n"));
  EXPECT_THAT(text, Not(HasSubstr("Watchdog caught")));  // nothing ever trained
  EXPECT_EQ(r.truth.initiator().rank(), -1);
  EXPECT_EQ(r.truth.initiator().node(), "gpu-0003");
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_NCCL_SETUP);
  EXPECT_EQ(r.truth.owner(), v1::OWNER_HOST);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(StoreJoinTimeout, OlderTorchResetsTheConnectionAndWordsItsOwnWay) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kPdsh, {"faults[0].kind=FAULT_KIND_STORE_JOIN_TIMEOUT", "faults[0].node=2", "format.torch=1.13"}), out);
  const std::string text = ReadAll(out / "incident/deepspeed.log");
  EXPECT_THAT(text, HasSubstr("gpu-0001: RuntimeError: Timed out after 601 seconds waiting for clients. 12/16 clients joined.\n"));
  EXPECT_THAT(text, HasSubstr("gpu-0004: RuntimeError: [13] is setting up NCCL communicator and retreiving ncclUniqueId from [0] "
                              "via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer\n"));
}

TEST(StoreJoinTimeout, OnlyUnderLaunchersOfAStaticStore) {
  const std::vector<std::string> set = {"launcher=LAUNCHER_TORCHRUN", "faults[0].kind=FAULT_KIND_STORE_JOIN_TIMEOUT"};
  const Result<v1::Scenario> s = ParseScenario(kPdsh, "t.textproto", set);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("LAUNCHER_PDSH, LAUNCHER_SRUN or LAUNCHER_MPIRUN"));
}

// `deepspeed --launcher openmpi`: the runner resolves the master address and logs its mpirun
// command; every rank's (unbuffered) comm lines come through mpirun's tags, MPI discovery naming
// its rank and local rank; the first failure's block is mpirun's.
TEST(DeepSpeedRunner, OpenMpiLogsItsMpirunCommandAndEachRanksMpiDiscovery) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kPdsh, {"launcher=LAUNCHER_MPIRUN", "deepspeed_runner=true", "faults[0].kind=FAULT_KIND_SIGKILL"}), out);
  EXPECT_FALSE(fs::exists(out / "incident/mpirun.out"));
  const std::string text = ReadAll(out / "incident/deepspeed.log");
  EXPECT_THAT(text, ContainsRegex("^\\[2026-03-02 09:00:00,[0-9]{3}\\] \\[INFO\\] \\[runner.py:463:main\\] Using IP address of "
                                  "10.10.0.2 for node gpu-0001\n"));
  EXPECT_THAT(text, HasSubstr("] [INFO] [runner.py:568:main] cmd = mpirun -n 16 -hostfile hostfile --mca btl ^openib --mca "
                              "btl_tcp_if_include eth0 --tag-output --report-bindings --bind-to none -x UCX_TLS=\"tcp\" "
                              "-x PYTHONPATH=\"/workspace\" -x NCCL_IB_HCA=\"mlx5\" -x NCCL_SOCKET_IFNAME=\"eth0\" "
                              "/usr/bin/python3 -u train.py --deepspeed --deepspeed_config ds_config.json\n"));
  EXPECT_THAT(text, ContainsRegex("\n\\[1,6\\]<stdout>:\\[[-0-9 :,]+\\] \\[INFO\\] \\[comm.py:702:mpi_discovery\\] Discovered MPI "
                                  "settings of world_rank=6, local_rank=2, world_size=16, master_addr=10.10.0.2, "
                                  "master_port=29500\n"));
  EXPECT_THAT(text, ContainsRegex("\n\\[1,0\\]<stdout>:\\[[-0-9 :,]+\\] \\[INFO\\] \\[comm.py:668:init_distributed\\] "
                                  "Initializing TorchBackend in DeepSpeed with backend nccl\n"));
  EXPECT_THAT(text, HasSubstr("mpirun noticed that process rank 13 with PID "));
  EXPECT_THAT(text, HasSubstr(" on node gpu-0004 exited on signal 9 (Killed).\n"));
  EXPECT_EQ(r.truth.initiator().rank(), 13);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// `deepspeed --launcher slurm --launcher_args "-l --kill-on-bad-exit=1"` in an sbatch script: the
// runner's srun command heads slurm-<jobid>.out, the ranks' comm lines are labelled (no MPI
// discovery: the script exported MASTER_ADDR and RANK), and srun's teardown follows the exit.
TEST(DeepSpeedRunner, SlurmLogsItsSrunCommandAndLabelledCommLines) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kPdsh, {"launcher=LAUNCHER_SRUN", "deepspeed_runner=true", "slurm.kill_on_bad_exit=true"}), out);
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  EXPECT_THAT(text, ContainsRegex("^\\[2026-03-02 09:00:00,[0-9]{3}\\] \\[INFO\\] \\[runner.py:568:main\\] cmd = srun -n 16 -l "
                                  "--kill-on-bad-exit=1 --export=ALL,PYTHONPATH=\"/workspace\",NCCL_IB_HCA=\"mlx5\","
                                  "NCCL_SOCKET_IFNAME=\"eth0\" /usr/bin/python3 -u train.py --deepspeed --deepspeed_config "
                                  "ds_config.json\n"));
  EXPECT_THAT(text, ContainsRegex("\n 9: \\[[-0-9 :,]+\\] \\[INFO\\] \\[comm.py:637:init_distributed\\] cdb=None\n"));
  EXPECT_THAT(text, Not(HasSubstr("mpi_discovery")));
  EXPECT_THAT(text, HasSubstr("\nsrun: error: gpu-0004: task 13: Exited with exit code 1\n"));
  EXPECT_THAT(text, HasSubstr("\nsrun: launch/slurm: _step_signal: Terminating StepId=4242001.0\n"));
  EXPECT_EQ(r.truth.initiator().rank(), 13);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(DeepSpeedRunner, OnlyThroughMpirunOrSrun) {
  const std::vector<std::string> set = {"deepspeed_runner=true"};
  const Result<v1::Scenario> s = ParseScenario(kPdsh, "t.textproto", set);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("set launcher: LAUNCHER_MPIRUN or LAUNCHER_SRUN"));
}

// Under srun (KillOnBadExit) and mpirun the silent node's tasks started but hang before
// init_process_group: none of their lines, only the launcher's words about them (srun's
// teardown, slurmstepd's CANCELLED line; mpirun's --report-bindings).
TEST(StoreJoinTimeout, UnderSrunTheHungNodeIsNamedOnlyBySrunsTeardown) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kPdsh, {"launcher=LAUNCHER_SRUN", "deepspeed_runner=true", "slurm.kill_on_bad_exit=true",
                        "faults[0].kind=FAULT_KIND_STORE_JOIN_TIMEOUT", "faults[0].node=2", "timeouts.nccl_timeout_ms=60000",
                        "realism.kernel_logs=true"}),
      out);
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  EXPECT_THAT(text, HasSubstr("\n 0: [rank0]: torch.distributed.DistStoreError: Timed out after 61 seconds waiting for clients. 12/16 "
                              "clients joined.\n"));
  for (int rank = 8; rank < 12; ++rank) {
    EXPECT_THAT(text, Not(ContainsRegex("\n *" + std::to_string(rank) + ": "))) << rank;  // not a line of theirs
  }
  EXPECT_THAT(text, HasSubstr("cdb=None"));  // the joined ranks' comm lines
  EXPECT_THAT(text, HasSubstr("\nslurmstepd: error: *** STEP 4242001.0 ON gpu-0003 CANCELLED AT "));
  EXPECT_THAT(text, ContainsRegex("\nsrun: error: gpu-0003: tasks 8-11: (Terminated|Killed)\n"));
  // The hung mount in its kernel log; rank 0 gave up (61 s) before khungtaskd's 120 s report.
  const std::string kern = ReadAll(out / "incident/gpu-0003/kern.log");
  EXPECT_THAT(kern, HasSubstr("] nfs: server nfs-01 not responding, still trying\n"));
  EXPECT_THAT(kern, Not(HasSubstr("blocked for more than")));
  EXPECT_EQ(r.truth.initiator().node(), "gpu-0003");
  EXPECT_EQ(r.truth.initiator().rank(), -1);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(StoreJoinTimeout, UnderMpirunTheHungNodesDaemonStillReportsItsBindings) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kPdsh, {"launcher=LAUNCHER_MPIRUN", "faults[0].kind=FAULT_KIND_STORE_JOIN_TIMEOUT", "faults[0].node=1",
                        "timeouts.nccl_timeout_ms=300000", "realism.kernel_logs=true"}),
      out);
  const std::string text = ReadAll(out / "incident/mpirun.out");
  EXPECT_THAT(text, ContainsRegex("\n\\[gpu-0002:[0-9]{5}\\] MCW rank 5 is not bound"));
  EXPECT_THAT(text, HasSubstr("[1,0]<stderr>:[rank0]: torch.distributed.DistStoreError: Timed out after 301 seconds waiting for "
                              "clients. 12/16 clients joined.\n"));
  // khungtaskd reports each of the node's 4 blocked ranks (kernel/hung_task.c), by their pids.
  const std::string kern = ReadAll(out / "incident/gpu-0002/kern.log");
  EXPECT_THAT(kern, ContainsRegex("\\] INFO: task python3:[0-9]+ blocked for more than 120 seconds.\n"));
  EXPECT_THAT(kern, HasSubstr("]       Tainted: P           OE     5.15.0-105-generic #115-Ubuntu\n"));
  EXPECT_THAT(kern, ContainsRegex("\\] task:python3         state:D stack:    0 pid:[0-9]+ ppid:[0-9]+ flags:0x00000002\n"));
  std::size_t reports = 0;
  for (std::size_t at = kern.find("INFO: task python3:"); at != std::string::npos; at = kern.find("INFO: task python3:", at + 1)) ++reports;
  EXPECT_EQ(reports, 4u);
  EXPECT_TRUE(std::any_of(r.truth.evidence().begin(), r.truth.evidence().end(), [](const v1::Evidence& e) {
    return e.file() == "gpu-0002/kern.log" && e.role() == v1::EVIDENCE_ROLE_INITIATING;
  }));
  for (int rank = 4; rank < 8; ++rank) EXPECT_THAT(text, Not(HasSubstr("[1," + std::to_string(rank) + "]<"))) << rank;
  EXPECT_THAT(text, HasSubstr("Primary job  terminated normally, but 1 process returned\n"));
  EXPECT_EQ(r.truth.initiator().node(), "gpu-0002");
  ExpectEvidenceMatchesFiles(out, r.truth);
}

}  // namespace
}  // namespace denpex::sim
