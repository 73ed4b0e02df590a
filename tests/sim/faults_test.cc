// Each fault family on a small job (2 nodes x 8 GPUs, TP4 x PP2 x DP2): what the logs show,
// and that the truth names the right initiator, owner and class and cites lines that exist.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace testing_util;

constexpr const char* kSmall = R"(name: "small"
seed: 3
job { nodes: 2 tp: 4 pp: 2 }
training { warmup_steps: 3 }
faults { kind: FAULT_KIND_SIGKILL rank: 5 }
)";

SimulateResult RunFault(const fs::path& out, const std::string& kind,
                        std::vector<std::string> more = {}) {
  more.push_back("faults[0].kind=" + kind);
  return MustSimulate(MustParse(kSmall, more), out);
}

std::string Log(const fs::path& out, const std::string& rel) {
  return ReadAll(out / "incident" / rel);
}

void ExpectEvidenceMatchesFiles(const fs::path& out, const v1::Truth& truth) {
  for (const v1::Evidence& e : truth.evidence()) {
    const auto lines = ReadLines(out / "incident" / e.file());
    ASSERT_GE(e.line(), 1);
    ASSERT_LE(static_cast<std::size_t>(e.line()), lines.size()) << e.file();
    EXPECT_EQ(lines[static_cast<std::size_t>(e.line() - 1)], e.text());
  }
}

TEST(Faults, SegfaultDumpsFaulthandlerAndItsAgentReportsSignal11) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunFault(out, "FAULT_KIND_SIGSEGV");
  EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"),
              StartsWith("Fatal Python error: Segmentation fault\n\nThread 0x00007f"));
  EXPECT_THAT(Log(out, "gpu-0001/torchrun.log"), HasSubstr("failed (exitcode: -11) local_rank: 5"));
  EXPECT_THAT(Log(out, "gpu-0001/torchrun.log"), HasSubstr("Signal 11 (SIGSEGV) received by PID"));
  EXPECT_EQ(r.truth.owner(), v1::OWNER_APPLICATION);
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_SEGFAULT);
  ASSERT_EQ(r.truth.evidence_size(), 2);
  EXPECT_EQ(r.truth.evidence(0).text(), "Fatal Python error: Segmentation fault");
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// NCCL >= 2.19 ends an IB completion WARN with the GIDs only on RoCE (link layer Ethernet); on
// InfiniBand (the default fabric) it stops at the direction. The INFO line names the link layer,
// and the watchdog's "Last error:" repeats the WARN text in the same shape.
TEST(Faults, IbCompletionWarnPrintsGidsOnlyOnRoce) {
  const fs::path ib = FreshDir("ib"), roce = FreshDir("roce");
  RunFault(ib, "FAULT_KIND_NIC_FAILURE", {"format.nccl_debug_info=true"});
  RunFault(roce, "FAULT_KIND_NIC_FAILURE", {"format.nccl_debug_info=true", "format.fabric=FABRIC_ROCE"});
  const std::string ib_log = Log(ib, "gpu-0001/rank_5.log"), roce_log = Log(roce, "gpu-0001/rank_5.log");
  EXPECT_THAT(ib_log, HasSubstr("NCCL WARN NET/IB : Got completion from peer 10.64.0.2<"));
  EXPECT_THAT(ib_log, HasSubstr(" with status=12 opcode=0 len=0 vendor err 129 (Send)\n"));
  EXPECT_THAT(ib_log, Not(HasSubstr("localGid")));
  EXPECT_THAT(ib_log, HasSubstr("]mlx5_0:1/IB "));
  EXPECT_THAT(roce_log, HasSubstr(" vendor err 129 (Send) localGid ::ffff:10.64.0.1 remoteGids::ffff:10.64.0.2\n"));
  EXPECT_THAT(roce_log, HasSubstr("]mlx5_0:1/RoCE "));
  EXPECT_THAT(roce_log, HasSubstr("OOB eth0:10.64.0.1<0>"));
  EXPECT_THAT(roce_log, HasSubstr("Last error:\nNET/IB : Got completion from peer 10.64.0.2<"));
}

// "Last error:" is ncclGetLastError(): the text of the last WARN the process printed (NCCL's
// debug.cc keeps it). Every rank whose watchdog aborts on NCCL's error repeats its own last
// WARN: a failed NIC's last status-5 flush, a failed link end's flush after its status 12, a
// peer's status 12, a socket reset or close, or the socket helper thread's progress error.
void ExpectLastErrorIsTheLastWarn(const fs::path& out, const std::string& what) {
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out / "incident")) {
    if (entry.path().filename().string().rfind("rank_", 0) != 0) continue;
    const auto lines = ReadLines(entry.path());
    std::string last_warn;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::size_t at = lines[i].find(" NCCL WARN ");
      if (at != std::string::npos) last_warn = lines[i].substr(at + 11);
      if (lines[i] != "Last error:" || i + 1 == lines.size()) continue;
      EXPECT_EQ(lines[i + 1], last_warn) << what << " " << entry.path();
      ++checked;
    }
  }
  EXPECT_GE(checked, 2) << what;  // the failed end and at least one peer
}

TEST(Faults, LastErrorRepeatsTheRanksLastWarnForEveryNetworkFailure) {
  for (const char* nccl : {"2.18.5", "2.21.5"}) {
    for (const char* kind : {"FAULT_KIND_NIC_FAILURE", "FAULT_KIND_LINK_FAILURE", "FAULT_KIND_SOCKET_RESET",
                             "FAULT_KIND_SOCKET_LINK_FAILURE"}) {
      for (const char* variant : {"0", "1"}) {
        const std::string what = std::string(nccl) + " " + kind + " " + variant;
        const fs::path out = FreshDir(std::string(nccl) + kind + variant);
        RunFault(out, kind, {"format.nccl=" + std::string(nccl), "faults[0].variant=" + std::string(variant)});
        ExpectLastErrorIsTheLastWarn(out, what);
      }
    }
  }
}

// NET/Socket's helper threads exist only with NCCL_SOCKET_NTHREADS (auto-detected on AWS and
// GCP NICs only); one whose data socket fails adds persistentSocketThread's WARN, at
// net_socket.cc:214 in 2.16-2.18 and :217 in 2.19-2.21, after the socket WARN on the same tid.
TEST(Faults, SocketProgressErrorOnlyFromHelperThreadsAtEachReleasesLine) {
  const fs::path plain = FreshDir("plain");
  RunFault(plain, "FAULT_KIND_SOCKET_RESET");
  EXPECT_THAT(Log(plain, "gpu-0001/rank_5.log"), HasSubstr("NCCL WARN socketProgressOpt: Call to recv from "));
  EXPECT_THAT(Log(plain, "gpu-0001/rank_5.log"), Not(HasSubstr("socket progress error")));
  for (const auto& [nccl, line] : {std::pair{"2.18.5", ":214 "}, std::pair{"2.21.5", ":217 "}}) {
    const fs::path out = FreshDir(nccl);
    RunFault(out, "FAULT_KIND_SOCKET_RESET",
             {"format.nccl=" + std::string(nccl), "format.nccl_socket_nthreads=2", "format.nccl_debug_info=true"});
    const auto lines = ReadLines(out / "incident/gpu-0001/rank_5.log");
    bool found = false;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (lines[i].find("NCCL WARN NET/Socket : socket progress error") == std::string::npos) continue;
      found = true;
      EXPECT_THAT(lines[i], HasSubstr(std::string("] transport/net_socket.cc") + line)) << nccl;
      const std::string tid = lines[i].substr(0, lines[i].find(" ["));
      EXPECT_THAT(lines[i - 1], StartsWith(tid + " [")) << "the socket WARN precedes it on the same thread";
      EXPECT_THAT(lines[i - 1], HasSubstr("NCCL WARN socketProgressOpt: "));
    }
    EXPECT_TRUE(found) << nccl;
    EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"), HasSubstr("NCCL INFO NET/Socket: Using 2 threads and 1 sockets per thread\n"));
    EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"), HasSubstr("Last error:\nNET/Socket : socket progress error\n"));
  }
}

TEST(Faults, SocketThreadsAreRejectedOutOfRangeOrWithoutASocketFault) {
  auto ib = ParseScenario("job { nodes: 2 }\nformat { nccl_socket_nthreads: 2 }\nfaults { kind: FAULT_KIND_NIC_FAILURE }\n",
                          "s.textproto");
  ASSERT_FALSE(ib.ok());
  EXPECT_THAT(ib.status().message(), StartsWith("s.textproto:2:"));
  EXPECT_THAT(ib.status().message(), HasSubstr("only the socket faults use"));
  auto big = ParseScenario("job { nodes: 2 }\nformat { nccl_socket_nthreads: 17 }\nfaults { kind: FAULT_KIND_SOCKET_RESET }\n",
                           "s.textproto");
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("0 to 16"));
}

TEST(Faults, ExceptionPrintsARankPrefixedTracebackAndExitsOne) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunFault(out, "FAULT_KIND_EXCEPTION");
  const auto lines = ReadLines(out / "incident/gpu-0001/rank_5.log");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "[rank5]: Traceback (most recent call last):");
  for (const std::string& l : lines) EXPECT_THAT(l, StartsWith("[rank5]: "));
  EXPECT_THAT(Log(out, "gpu-0001/torchrun.log"), HasSubstr("failed (exitcode: 1) local_rank: 5"));
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  ASSERT_GE(r.truth.evidence_size(), 1);
  EXPECT_EQ(r.truth.evidence(0).text(), lines.back());
  EXPECT_EQ(r.truth.evidence(0).role(), v1::EVIDENCE_ROLE_INITIATING);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Faults, ExceptionOnTheLoggingRankKeepsItsStdoutBecauseItExitsNormally) {
  const fs::path out = FreshDir();
  RunFault(out, "FAULT_KIND_EXCEPTION", {"faults[0].rank=15"});
  EXPECT_THAT(Log(out, "gpu-0002/rank_15.log"), HasSubstr("] iteration        3/"));
}

TEST(Faults, HungRankPrintsNoWatchdogAndIsTornDownWhileItsPeersTimeOut) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunFault(out, "FAULT_KIND_HANG");
  EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"), Not(HasSubstr("Watchdog caught")));
  for (int peer : {4, 6, 7}) {
    EXPECT_THAT(Log(out, "gpu-0001/rank_" + std::to_string(peer) + ".log"),
                HasSubstr("Watchdog caught collective operation timeout"));
  }
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  ASSERT_EQ(r.truth.evidence_size(), 2);
  EXPECT_THAT(r.truth.evidence(0).text(), HasSubstr("Watchdog caught collective operation"));
  EXPECT_THAT(r.truth.evidence(1).text(), HasSubstr("closing signal SIGTERM"));
  EXPECT_EQ(r.truth.cascade().secondary_ranks_size(), 15);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Faults, MismatchedRankTimesOutOnTheSameSeqWithADifferentOpOrSize) {
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    const fs::path out = FreshDir(std::to_string(seed));
    const SimulateResult r =
        RunFault(out, "FAULT_KIND_COLLECTIVE_MISMATCH", {"seed=" + std::to_string(seed)});
    ASSERT_EQ(r.truth.evidence_size(), 2);
    const std::string odd = r.truth.evidence(0).text(), peer = r.truth.evidence(1).text();
    auto work = [](const std::string& l) { return l.substr(l.find("WorkNCCL(")); };
    auto seq = [&](const std::string& l) { return work(l).substr(0, work(l).find(',')); };
    EXPECT_THAT(odd, StartsWith("[rank5]:"));
    EXPECT_EQ(seq(odd), seq(peer));
    EXPECT_NE(work(odd).substr(0, work(odd).find(", Timeout")),
              work(peer).substr(0, work(peer).find(", Timeout")));
    EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_COLLECTIVE_MISMATCH);
    ExpectEvidenceMatchesFiles(out, r.truth);
  }
}

// The rank skips ZeRO's gradient reduce-scatter and issues the parameter all-gather: PyTorch
// numbers collectives per rank, so its line and its peers' name the same SeqNum, theirs the
// reduce-scatter of the bucket, its own the all-gather of its shard into the bucket.
TEST(Faults, SkippingRankTimesOutOnItsPeersSeqWithTheGroupsNextCollective) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const fs::path out = FreshDir(std::to_string(seed));
    const SimulateResult r = RunFault(out, "FAULT_KIND_SKIPPED_COLLECTIVE",
                                      {"seed=" + std::to_string(seed), "job.nodes=4",
                                       "training.data_parallel=DATA_PARALLEL_ZERO"});
    ASSERT_EQ(r.truth.evidence_size(), 2);
    const std::string odd = r.truth.evidence(0).text(), peer = r.truth.evidence(1).text();
    auto work = [](const std::string& l) { return l.substr(l.find("WorkNCCL(")); };
    auto seq = [&](const std::string& l) { return work(l).substr(0, work(l).find(',')); };
    auto field = [](const std::string& l, const std::string& name) {
      const std::size_t at = l.find(name + "=") + name.size() + 1;
      return l.substr(at, l.find(',', at) - at);
    };
    EXPECT_THAT(odd, StartsWith("[rank5]:"));
    EXPECT_THAT(odd, HasSubstr("Watchdog caught collective operation timeout: WorkNCCL(SeqNum="));
    EXPECT_EQ(seq(odd), seq(peer));
    EXPECT_EQ(field(odd, "OpType"), "_ALLGATHER_BASE");
    EXPECT_EQ(field(peer, "OpType"), "_REDUCE_SCATTER_BASE");
    EXPECT_EQ(field(odd, "NumelOut"), field(peer, "NumelIn"));  // the bucket
    EXPECT_EQ(field(odd, "NumelIn"), field(peer, "NumelOut"));  // the shard
    EXPECT_EQ(r.truth.initiator().rank(), 5);
    EXPECT_EQ(r.truth.owner(), v1::OWNER_APPLICATION);
    EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_COLLECTIVE_MISMATCH);
    ExpectEvidenceMatchesFiles(out, r.truth);
  }
}

TEST(Faults, SkippedCollectiveNeedsZeroAndADataParallelGroupOfThree) {
  auto ddp = ParseScenario(
      kSmall, "s.textproto",
      std::vector<std::string>{"faults[0].kind=FAULT_KIND_SKIPPED_COLLECTIVE", "job.nodes=4"});
  ASSERT_FALSE(ddp.ok());
  EXPECT_THAT(ddp.status().message(), HasSubstr("needs training.data_parallel DATA_PARALLEL_ZERO"));
  auto pair = ParseScenario(kSmall, "s.textproto",
                            std::vector<std::string>{"faults[0].kind=FAULT_KIND_SKIPPED_COLLECTIVE",
                                                     "training.data_parallel=DATA_PARALLEL_ZERO"});
  ASSERT_FALSE(pair.ok());  // 2 nodes x 8 GPUs over TP4 x PP2: dp = 2
  EXPECT_THAT(pair.status().message(), HasSubstr("(job.dp 2)"));
}

TEST(Faults, LostNodeLogsStopWithoutAReportAndTruthNamesTheNodeNotARank) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunFault(out, "FAULT_KIND_NODE_LOSS", {"faults[0].node=1"});
  const std::string agent = Log(out, "gpu-0002/torchrun.log");
  EXPECT_THAT(agent, Not(HasSubstr("failed (exitcode")));
  EXPECT_THAT(agent, Not(HasSubstr("closing signal")));
  EXPECT_EQ(r.truth.initiator().rank(), -1);
  EXPECT_EQ(r.truth.initiator().node(), "gpu-0002");
  EXPECT_EQ(r.truth.owner(), v1::OWNER_HOST);
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS);
  for (int rank : r.truth.cascade().secondary_ranks()) EXPECT_LT(rank, 8);
  EXPECT_EQ(r.truth.cascade().secondary_ranks_size(), 8);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Faults, SchedulerFaultsNeedTheSrunLauncher) {
  auto s = ParseScenario(kSmall, "s.textproto",
                         std::vector<std::string>{"faults[0].kind=FAULT_KIND_TIME_LIMIT"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("needs a scheduler"));
  EXPECT_THAT(s.status().message(), HasSubstr("hint: set launcher: LAUNCHER_SRUN"));
}

TEST(Faults, NodeOutOfRangeAndNodeOnARankFaultAreRejectedWithLocation) {
  const std::string lost = "job { nodes: 2 }\nfaults { kind: FAULT_KIND_NODE_LOSS node: 2 }\n";
  auto a = ParseScenario(lost, "s.textproto");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), StartsWith("s.textproto:2:"));
  EXPECT_THAT(a.status().message(), HasSubstr("outside the job's nodes [0, 2)"));
  const std::string kill = "job { nodes: 2 }\nfaults { kind: FAULT_KIND_SIGKILL node: 1 }\n";
  auto b = ParseScenario(kill, "s.textproto");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("applies to node faults only"));
}

// The bootstrap root (rank 0's node) cannot time out connecting to itself: node 0, a rank on
// it, or a one-node job is rejected at its line; node 1 is fine.
TEST(Faults, BootstrapTimeoutOnTheRootNodeIsRejectedWithLocation) {
  for (const char* fault : {"node: 0", "rank: 3"}) {
    const std::string text = std::string("job { nodes: 2 }\nfaults { kind: FAULT_KIND_BOOTSTRAP_TIMEOUT ") + fault + " }\n";
    auto a = ParseScenario(text, "s.textproto");
    ASSERT_FALSE(a.ok()) << fault;
    EXPECT_THAT(a.status().message(), StartsWith("s.textproto:2:")) << fault;
    EXPECT_THAT(a.status().message(), HasSubstr("bootstrap root")) << fault;
  }
  auto one = ParseScenario("job { nodes: 1 }\nfaults { kind: FAULT_KIND_BOOTSTRAP_TIMEOUT }\n", "s.textproto");
  EXPECT_FALSE(one.ok());
  EXPECT_TRUE(ParseScenario("job { nodes: 2 }\nfaults { kind: FAULT_KIND_BOOTSTRAP_TIMEOUT node: 1 }\n", "s.textproto").ok());
}

}  // namespace
}  // namespace denpex::sim
