// DeepSpeed's launcher over pdsh (LAUNCHER_PDSH, deepspeed.log) and the static TCPStore's
// client-join timeout (FAULT_KIND_STORE_JOIN_TIMEOUT), on small jobs.
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

TEST(StoreJoinTimeout, OnlyUnderPdsh) {
  const std::vector<std::string> set = {"launcher=LAUNCHER_TORCHRUN", "faults[0].kind=FAULT_KIND_STORE_JOIN_TIMEOUT"};
  const Result<v1::Scenario> s = ParseScenario(kPdsh, "t.textproto", set);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("LAUNCHER_PDSH"));
}

}  // namespace
}  // namespace denpex::sim
