// The simulator end to end on small jobs (2-4 nodes, readable output) and once at 4,096
// ranks: determinism, the SIGKILL cascade, stdout buffering, truth line numbers, clock skew.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "denpex/proto/json_io.h"
#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace testing_util;

// 2 nodes x 8 GPUs, TP4 x PP2 x DP2; rank 5 (node 1, pipeline stage 0) is killed.
constexpr const char* kTwoNodes = R"(name: "two_nodes"
seed: 11
job { nodes: 2 tp: 4 pp: 2 }
training { warmup_steps: 6 }
faults { kind: FAULT_KIND_SIGKILL rank: 5 }
)";

// 4 nodes, TP2 x PP2 x DP8, victim and instant drawn.
constexpr const char* kFourNodes = R"(name: "four_nodes"
seed: 5
job { nodes: 4 tp: 2 pp: 2 }
training { warmup_steps: 4 }
faults { kind: FAULT_KIND_SIGKILL }
)";

std::string RankFile(const fs::path& out, const std::string& host, int rank) {
  return (out / "incident" / host / ("rank_" + std::to_string(rank) + ".log")).string();
}

TEST(Simulator, SameScenarioAndSeedGiveByteIdenticalIncidentAndTruth) {
  const v1::Scenario s = MustParse(kFourNodes);
  const fs::path a = FreshDir("_a"), b = FreshDir("_b");
  MustSimulate(s, a);
  MustSimulate(s, b);
  const auto tree_a = ReadTree(a), tree_b = ReadTree(b);
  EXPECT_EQ(tree_a.size(), 4u + 32u + 1u);  // torchrun.log per node, rank files, truth.json
  EXPECT_TRUE(tree_a == tree_b);
}

TEST(Simulator, DifferentSeedGivesDifferentIncident) {
  const v1::Scenario s = MustParse(kFourNodes);
  const fs::path a = FreshDir("_a"), b = FreshDir("_b");
  MustSimulate(s, a, 1);
  MustSimulate(s, b, 2);
  EXPECT_NE(ReadAll(a / "truth.json"), ReadAll(b / "truth.json"));
  EXPECT_FALSE(ReadTree(a / "incident") == ReadTree(b / "incident"));
}

TEST(Simulator, SilentRankPrintsNothingAfterSigkill) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kTwoNodes), out);
  EXPECT_EQ(r.truth.initiator().rank(), 5);
  EXPECT_EQ(ReadAll(RankFile(out, "gpu-0001", 5)), "");  // the file exists and is empty
  EXPECT_TRUE(fs::exists(RankFile(out, "gpu-0001", 5)));
}

TEST(Simulator, EveryOtherRankTimesOutOrIsTornDownByItsAgent) {
  const fs::path out = FreshDir();
  // NCCL INFO lines give each rank's pid ("host:pid:tid"), to find its SIGTERM notice.
  const v1::Scenario s = MustParse(kFourNodes, {"format.nccl_debug_info=true"});
  const SimulateResult r = MustSimulate(s, out);
  const int initiator = r.truth.initiator().rank();
  EXPECT_EQ(r.truth.cascade().secondary_ranks_size(), 31);
  for (int rank = 0; rank < 32; ++rank) {
    const std::string host = "gpu-000" + std::to_string(rank / 8 + 1);
    const std::string log = ReadAll(RankFile(out, host, rank));
    const bool timed_out =
        log.find("Watchdog caught collective operation timeout") != std::string::npos;
    if (rank == initiator) {
      EXPECT_FALSE(timed_out);
      continue;
    }
    const std::size_t colon = log.find(':');
    const std::string pid = log.substr(colon + 1, log.find(':', colon + 1) - colon - 1);
    const std::string agent = ReadAll(out / "incident" / host / "torchrun.log");
    const bool sigtermed =
        agent.find("Sending process " + pid + " closing signal SIGTERM") != std::string::npos;
    EXPECT_TRUE(timed_out || sigtermed) << "rank " << rank << " pid " << pid;
  }
}

TEST(Simulator, InitiatorsAgentNamesTheKilledRankAsRootCause) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kTwoNodes), out);
  const auto lines = ReadLines(out / "incident/gpu-0001/torchrun.log");
  // Banner (4 lines), 7 SIGTERMs for the live workers, then the report.
  ASSERT_GT(lines.size(), 12u);
  for (int i = 4; i < 11; ++i) EXPECT_THAT(lines[i], HasSubstr("closing signal SIGTERM"));
  EXPECT_THAT(lines[11], HasSubstr("failed (exitcode: -9) local_rank: 5 (pid: "));
  EXPECT_THAT(ReadAll(out / "incident/gpu-0001/torchrun.log"),
              HasSubstr("Failures:\n  <NO_OTHER_FAILURES>\n"));
}

TEST(Simulator, TruthEvidenceLineNumbersPointAtTheExactText) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kFourNodes), out);
  ASSERT_EQ(r.truth.evidence_size(), 2);
  for (const v1::Evidence& e : r.truth.evidence()) {
    const auto lines = ReadLines(out / "incident" / e.file());
    ASSERT_GE(e.line(), 1);
    ASSERT_LE(e.line(), static_cast<int>(lines.size()));
    EXPECT_EQ(lines[static_cast<std::size_t>(e.line() - 1)], e.text());
    EXPECT_EQ(e.role(), v1::EVIDENCE_ROLE_INITIATING);
  }
  const int rank = r.truth.initiator().rank(), local = r.truth.initiator().local_rank();
  EXPECT_THAT(r.truth.evidence(0).text(),
              HasSubstr("failed (exitcode: -9) local_rank: " + std::to_string(local) + " (pid: "));
  EXPECT_EQ(r.truth.evidence(1).text(), "  rank      : " + std::to_string(rank) +
                                            " (local_rank: " + std::to_string(local) + ")");
  // The file on disk is the truth.json the result returned.
  v1::Truth on_disk;
  ASSERT_TRUE(proto::ReadJsonFile(out / "truth.json", &on_disk).ok());
  EXPECT_EQ(on_disk.SerializeAsString(), r.truth.SerializeAsString());
}

TEST(Simulator, SecondaryErrorsCountWatchdogLinesAndOtherNodesReports) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kFourNodes), out);
  int watchdog = 0, reports = 0;
  for (const auto& [path, text] : ReadTree(out / "incident")) {
    for (std::size_t p = text.find(":607] "); p != std::string::npos;
         p = text.find(":607] ", p + 1)) {
      ++watchdog;
    }
    if (path.ends_with("torchrun.log") && !path.starts_with(r.truth.initiator().node()) &&
        text.find("] failed (exitcode: ") != std::string::npos) {
      ++reports;
    }
  }
  EXPECT_GT(watchdog, 0);
  EXPECT_EQ(r.truth.cascade().secondary_errors(), watchdog + reports);
  EXPECT_EQ(r.truth.cascade().grouped_errors(), r.truth.cascade().secondary_errors());
}

TEST(Simulator, WatchdogReportsTheBlockedWorkAndItsSequenceNumbers) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kFourNodes), out);
  const std::regex first(
      R"(^\[rank(\d+)\]:\[E302 \d\d:\d\d:\d\d\.\d{9} ProcessGroupNCCL\.cpp:607\] \[PG (\d+) \(([A-Z_a-z]+)\) Rank (\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=([A-Z]+), NumelIn=\d+, NumelOut=\d+, Timeout\(ms\)=600000\) ran for (\d+) milliseconds before timing out\.$)");
  const std::regex second(
      R"(detected by watchdog at work: (\d+), last enqueued NCCL work: (\d+), last completed NCCL work: (\d+)\.$)");
  int blocks = 0;
  for (const auto& [path, text] : ReadTree(out / "incident")) {
    if (path.ends_with("torchrun.log")) continue;
    const auto lines = ReadLines(out / "incident" / path);
    if (lines.empty()) continue;
    std::smatch m1, m2;
    ASSERT_TRUE(std::regex_match(lines[0], m1, first)) << path << ": " << lines[0];
    ASSERT_TRUE(std::regex_search(lines[1], m2, second)) << lines[1];
    EXPECT_THAT(path, HasSubstr("rank_" + m1[1].str() + ".log"));
    EXPECT_EQ(m2[1], m1[5]);                            // at work = SeqNum
    EXPECT_EQ(m2[2], m1[5]);                            // last enqueued = SeqNum
    EXPECT_EQ(std::stoi(m2[3]), std::stoi(m1[5]) - 1);  // the one before completed
    EXPECT_GE(std::stoi(m1[7]), 600000);
    EXPECT_LT(std::stoi(m1[7]), 600000 + 5000);
    EXPECT_EQ(lines[14], "terminate called after throwing an instance of 'c10::DistBackendError'");
    ++blocks;
  }
  EXPECT_GT(blocks, 0);
}

TEST(Simulator, ProcessGroupUidsAndRanksFollowMegatronCreationOrder) {
  const fs::path out = FreshDir();
  // With every rank's NCCL init lines, check uid/desc and group-local rank of one rank.
  MustSimulate(MustParse(kTwoNodes, {"format.nccl_debug_info=true"}), out);
  // Keep the communicators' "Init COMPLETE" lines and the version banner.
  auto complete = [](const std::vector<std::string>& all) {
    std::vector<std::string> kept;
    for (const std::string& l : all) {
      if (l.ends_with(" - Init COMPLETE") || l.starts_with("NCCL version")) kept.push_back(l);
    }
    return kept;
  };
  const auto lines = complete(ReadLines(RankFile(out, "gpu-0002", 13)));
  // rank 13 = tp_rank 1, dp_rank 1, pp_rank 1: default (13/16), TP (1/4), PP (1/2), DP (1/2).
  ASSERT_EQ(lines.size() >= 4, true);
  EXPECT_THAT(lines[0], HasSubstr("gpu-0002:"));
  EXPECT_THAT(lines[0], HasSubstr(" [5] NCCL INFO ncclCommInitRank comm 0x"));  // NCCL 2.21.5
  EXPECT_THAT(lines[0], HasSubstr(" rank 13 nranks 16 cudaDev 5 nvmlDev 5 busId ab000 commId 0x"));
  EXPECT_THAT(lines[1], HasSubstr(" rank 1 nranks 4 "));
  EXPECT_THAT(lines[2], HasSubstr(" rank 1 nranks 2 "));
  EXPECT_THAT(lines[3], HasSubstr(" rank 1 nranks 2 "));
  // Members of one communicator share its commId: rank 12's TP comm is rank 13's.
  const auto peer = complete(ReadLines(RankFile(out, "gpu-0002", 12)));
  auto comm_id = [](const std::string& l) { return l.substr(l.find("commId")); };
  ASSERT_GE(peer.size(), 5u);
  // NCCL prints its version once, just before the first communicator the process is rank 0
  // of: rank 12 is rank 0 of its TP group.
  EXPECT_EQ(peer[1], "NCCL version 2.21.5+cuda12.4");
  EXPECT_THAT(peer[2], HasSubstr(" rank 0 nranks 4 "));
  EXPECT_EQ(comm_id(peer[0]), comm_id(lines[0]));  // default_pg
  EXPECT_EQ(comm_id(peer[2]), comm_id(lines[1]));  // their TP group
}

// What the communicator lines say before `comm 0x..` and around it, by NCCL release (init.cc of
// each tag; docs/log_formats.md §4): nothing up to 2.20, `ncclCommInitRank` in 2.21 and 2.22, the
// name of torch's call from 2.23 on, with its rank in the communicator before the call in 2.29's
// `Init START`, and the set-up's seconds after `Init COMPLETE`.
TEST(Simulator, NcclCommunicatorLinesFollowTheRelease) {
  struct Case {
    std::string_view nccl, torch, start, complete, bootstrap, rings, timings;
  };
  const Case cases[] = {
      {"2.18.5", "2.4", "NCCL INFO comm 0x", "NCCL INFO comm 0x",
       "NCCL INFO Bootstrap : Using ib0:", "NCCL INFO Connected all rings", ""},
      {"2.21.5", "2.4", "NCCL INFO ncclCommInitRank comm 0x", "NCCL INFO ncclCommInitRank comm 0x",
       "NCCL INFO Bootstrap : Using ib0:", "NCCL INFO Connected all rings", ""},
      {"2.26.2", "2.6", "NCCL INFO ncclCommInitRankConfig comm 0x",
       "NCCL INFO ncclCommInitRankConfig comm 0x",
       "NCCL INFO Bootstrap: Using ib0:", "NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
       "NCCL INFO Init timings - ncclCommInitRankConfig: rank 13 nranks 16 total "},
      {"2.29.2", "1.13", "NCCL INFO [Rank 13] ncclCommInitRank comm 0x",
       "NCCL INFO ncclCommInitRank comm 0x",
       "NCCL INFO Bootstrap: Using ib0:", "NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
       "NCCL INFO Init timings - ncclCommInitRank: rank 13 nranks 16 total "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.nccl);
    const fs::path out = FreshDir();
    MustSimulate(
        MustParse(kTwoNodes, {"format.nccl_debug_info=true", "format.nccl=" + std::string(c.nccl),
                              "format.torch=" + std::string(c.torch)}),
        out);
    const auto lines = ReadLines(RankFile(out, "gpu-0002", 13));
    std::vector<std::string> start, complete, bootstrap, rings, timings;
    for (const std::string& l : lines) {
      if (l.ends_with(" - Init START")) start.push_back(l);
      if (l.ends_with(" - Init COMPLETE")) complete.push_back(l);
      if (l.find(" Bootstrap") != std::string::npos) bootstrap.push_back(l);
      if (l.find(" Connected all rings") != std::string::npos) rings.push_back(l);
      if (l.find(" Init timings") != std::string::npos) timings.push_back(l);
    }
    ASSERT_EQ(start.size(), 4u);  // default_pg, TP, PP, DP
    ASSERT_EQ(complete.size(), 4u);
    EXPECT_THAT(start[0], HasSubstr(std::string(c.start)));
    EXPECT_THAT(start[0],
                HasSubstr(" rank 13 nranks 16 cudaDev 5 nvmlDev 5 busId ab000 commId 0x"));
    EXPECT_THAT(complete[0], HasSubstr(std::string(c.complete)));
    ASSERT_EQ(bootstrap.size(), 1u);
    EXPECT_THAT(bootstrap[0], HasSubstr(std::string(c.bootstrap)));
    ASSERT_EQ(rings.size(), 4u);
    EXPECT_TRUE(rings[0].ends_with(c.rings)) << rings[0];
    if (c.timings.empty()) {
      EXPECT_TRUE(timings.empty());
      continue;
    }
    ASSERT_EQ(timings.size(), 4u);
    EXPECT_THAT(timings[0], HasSubstr(std::string(c.timings)));
    // `total <s> (kernels <s>, alloc <s>, ...)`, two decimals each; only the first communicator
    // loads the kernels.
    const std::regex shape(
        R"(total \d+\.\d\d \(kernels (\d+\.\d\d), alloc \d+\.\d\d, bootstrap \d+\.\d\d, allgathers \d+\.\d\d, topo )"
        R"(\d+\.\d\d, graphs \d+\.\d\d, connections \d+\.\d\d, rest \d+\.\d\d\)$)");
    std::smatch m0, m1;
    ASSERT_TRUE(std::regex_search(timings[0], m0, shape)) << timings[0];
    ASSERT_TRUE(std::regex_search(timings[1], m1, shape)) << timings[1];
    EXPECT_NE(m0[1], "0.00");
    EXPECT_EQ(m1[1], "0.00");
  }
}

// The contract (docs/log_formats.md §6), line by line, on the initiator's node of a 2-node job.
TEST(Simulator, InitiatorsTorchrunLogHasTheDocumentedShape) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kTwoNodes), out);
  const std::string glog = R"([WE]0302 09:\d\d:\d\d\.\d{3}000 \d+ torch/distributed/)";
  const std::string py = R"(  File "/usr/local/lib/python3\.10/dist-packages/torch/distributed/)";
  std::vector<std::string> want = {
      glog + R"(run\.py:779\] $)", glog + R"(run\.py:779\] \*{41}$)",
      glog +
          R"(run\.py:779\] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, .* as needed\. $)",
      glog + R"(run\.py:779\] \*{41}$)"};
  for (int i = 0; i < 7; ++i) {
    want.push_back(
        glog +
        R"(elastic/multiprocessing/api\.py:858\] Sending process \d+ closing signal SIGTERM$)");
  }
  for (
      const char* line : {
          R"(elastic/multiprocessing/api\.py:833\] failed \(exitcode: -9\) local_rank: 5 \(pid: (\d+)\) of binary: /usr/bin/python3$)",
      }) {
    want.push_back(glog + line);
  }
  for (std::string line : std::vector<std::string>{
           R"(Traceback \(most recent call last\):$)",
           R"(  File "/usr/local/bin/torchrun", line 8, in <module>$)",
           R"(    sys\.exit\(main\(\)\)$)",
           py + R"(elastic/multiprocessing/errors/__init__\.py", line 348, in wrapper$)",
           R"(    return f\(\*args, \*\*kwargs\)$)",
           py + R"(run\.py", line 901, in main$)",
           R"(    run\(args\)$)",
           py + R"(run\.py", line 892, in run$)",
           R"(    elastic_launch\($)",
           py + R"(launcher/api\.py", line 133, in __call__$)",
           R"(    return launch_agent\(self\._config, self\._entrypoint, list\(args\)\)$)",
           py + R"(launcher/api\.py", line 264, in launch_agent$)",
           R"(    raise ChildFailedError\($)",
           R"(torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError: $)",
           R"(={50,60}$)",
           R"(train\.py FAILED$)",
           R"(-{50,60}$)",
           R"(Failures:$)",
           R"(  <NO_OTHER_FAILURES>$)",
           R"(-{50,60}$)",
           R"(Root Cause \(first observed failure\):$)",
           R"(\[0\]:$)",
           R"(  time      : 2026-03-02_09:\d\d:\d\d$)",
           R"(  host      : gpu-0001$)",
           R"(  rank      : 5 \(local_rank: 5\)$)",
           R"(  exitcode  : -9 \(pid: \d+\)$)",
           R"(  error_file: <N/A>$)",
           R"(  traceback : Signal 9 \(SIGKILL\) received by PID \d+$)",
           R"(={50,60}$)"}) {
    want.push_back(line);
  }
  const auto lines = ReadLines(out / "incident/gpu-0001/torchrun.log");
  ASSERT_EQ(lines.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(std::regex_match(lines[i], std::regex("^" + want[i])))
        << "line " << i + 1 << ": " << lines[i];
  }
  // The rules are as wide as the widest table line, here "  traceback : Signal 9 ..."
  // (torch caps them at 60).
  const std::string& widest = lines[lines.size() - 2];
  EXPECT_EQ(lines[26].size(), widest.size());
  EXPECT_EQ(lines.back().size(), widest.size());
}

// The contract (docs/log_formats.md §3) for one rank's watchdog block, line by line.
TEST(Simulator, WatchdogBlockHasTheDocumentedShape) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kTwoNodes), out);
  const auto lines = ReadLines(RankFile(out, "gpu-0002", 8));
  const std::string c10 = R"(\[rank8\]:\[E302 09:\d\d:\d\d\.\d{9} ProcessGroupNCCL\.cpp:)";
  const std::string pg = R"(\[PG \d+ \((TENSOR|PIPELINE|DATA)_[A-Z_]+\) Rank \d\])";
  const std::string work =
      R"(WorkNCCL\(SeqNum=\d+, OpType=(ALLREDUCE|SEND|RECV), NumelIn=\d+, NumelOut=\d+, Timeout\(ms\)=600000\))";
  const std::string timeout = pg + " Watchdog caught collective operation timeout: " + work +
                              R"( ran for \d+ milliseconds before timing out\.)";
  const std::string frame = R"(frame #\d: .* \(0x[0-9a-f]+ in /.*\.so(\.6)?\)$)";
  std::vector<std::string> want = {
      c10 + "607\\] " + timeout + "$",
      c10 + "1664\\] " + pg +
          R"( Exception \(either an error or timeout\) detected by watchdog at work: \d+, last enqueued NCCL work: \d+, last completed NCCL work: \d+\.$)",
      c10 + "621\\] " + pg +
          R"( Some NCCL operations have failed or timed out\. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data\.$)",
      c10 + "627\\] " + pg +
          R"( To avoid data inconsistency, we are taking the entire process down\.$)",
      c10 + "1515\\] " + pg +
          " Process group watchdog thread terminated with exception: " + timeout + "$",
      R"(\[rank8\]:Exception raised from checkTimeout at \.\./torch/csrc/distributed/c10d/ProcessGroupNCCL\.cpp:609 \(most recent call first\):$)"};
  for (int i = 0; i < 7; ++i) want.push_back(R"(\[rank8\]:)" + frame);
  want.push_back(R"(\[rank8\]:$)");
  want.push_back(R"(terminate called after throwing an instance of 'c10::DistBackendError'$)");
  want.push_back("  what\\(\\):  " + pg +
                 " Process group watchdog thread terminated with exception: " + timeout + "$");
  want.push_back(
      R"(Exception raised from checkTimeout at \.\./torch/csrc/distributed/c10d/ProcessGroupNCCL\.cpp:609 \(most recent call first\):$)");
  for (int i = 0; i < 7; ++i) want.push_back(frame);
  ASSERT_EQ(lines.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(std::regex_match(lines[i], std::regex("^" + want[i])))
        << "line " << i + 1 << ": " << lines[i];
  }
}

TEST(Simulator, LastRanksUnflushedStdoutIsLostWhenKilled) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kTwoNodes, {"faults[0].rank=15", "training.warmup_steps=30"}), out);
  const std::string log = ReadAll(RankFile(out, "gpu-0002", 15));
  const auto lines = ReadLines(RankFile(out, "gpu-0002", 15));
  // 30 iteration lines were printed; only whole 4 KiB buffers reached the file.
  ASSERT_FALSE(lines.empty());
  EXPECT_LT(lines.size(), 30u);
  EXPECT_LE(log.size() % 4096, 4096u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], StartsWith(" [2026-03-02 09:00:"));
    EXPECT_THAT(lines[i],
                HasSubstr("] iteration " + std::string(8 - std::to_string(i + 1).size(), ' ') +
                          std::to_string(i + 1) + "/  100000 | consumed samples:"));
  }
}

TEST(Simulator, ClockSkewStaysWithinFourSigmaAndZeroDisablesIt) {
  // Agents start 200-900 ms after the job (true time); the banner shows the node's clock.
  const std::regex banner(
      R"(^W0302 09:00:(\d\d)\.(\d{3})000 \d+ torch/distributed/run\.py:779\] $)");
  auto banner_offsets_ms = [&](const fs::path& out, int nodes) {
    std::vector<int> ms;
    for (int n = 1; n <= nodes; ++n) {
      const auto lines =
          ReadLines(out / "incident" / ("gpu-000" + std::to_string(n)) / "torchrun.log");
      std::smatch m;
      EXPECT_TRUE(std::regex_match(lines.at(0), m, banner)) << lines.at(0);
      ms.push_back(std::stoi(m[1]) * 1000 + std::stoi(m[2]));
    }
    return ms;
  };
  const fs::path a = FreshDir("_skewed");
  MustSimulate(MustParse(kFourNodes, {"clocks.skew_sigma_ms=25", "job.nodes=8"}), a);
  for (int ms : banner_offsets_ms(a, 8)) {
    EXPECT_GE(ms, 200 - 4 * 25);
    EXPECT_LE(ms, 900 + 4 * 25);
  }
  const fs::path b = FreshDir("_unskewed");
  MustSimulate(MustParse(kFourNodes, {"clocks.skew_sigma_ms=0", "job.nodes=8"}), b);
  const auto unskewed = banner_offsets_ms(b, 8);
  for (int ms : unskewed) {
    EXPECT_GE(ms, 200);
    EXPECT_LE(ms, 900);
  }
  EXPECT_NE(banner_offsets_ms(a, 8), unskewed);  // skew moved at least one node's clock
}

TEST(Simulator, RerunReplacesTheIncidentDirectory) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kTwoNodes), out);
  { std::ofstream(out / "incident" / "stray.log") << "old"; }
  MustSimulate(MustParse(kTwoNodes), out);
  EXPECT_FALSE(fs::exists(out / "incident" / "stray.log"));
}

TEST(Simulator, RefusesAnOutDirThatIsAFile) {
  const fs::path out = FreshDir();
  fs::create_directories(out.parent_path());
  { std::ofstream(out) << "not a directory"; }
  auto r = Simulate(MustParse(kTwoNodes), {.out_dir = out});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  fs::remove(out);
}

TEST(Simulator, RejectsAScenarioThatWasNotValidated) {
  v1::Scenario s;
  s.set_name("empty");
  auto r = Simulate(s, {.out_dir = FreshDir()});
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("the scenario has no job block"));
}

TEST(Simulator, DefaultScenarioCascadesAcross4096Ranks) {
  const fs::path out = FreshDir();
  auto s = ParseScenario(DefaultScenarioText(), "default");
  ASSERT_TRUE(s.ok());
  const SimulateResult r = MustSimulate(*s, out);
  EXPECT_EQ(r.truth.job().world_size(), 4096);
  EXPECT_EQ(r.truth.cascade().secondary_ranks_size(), 4095);
  EXPECT_EQ(r.stats.files, 4096u + 512u + 512u);  // rank files, torchrun.log, kern.log
  EXPECT_GT(r.stats.events, 100'000u);
  EXPECT_GT(r.truth.cascade().secondary_errors(), 1000);
  const auto lines = ReadLines(out / "incident" / r.truth.evidence(0).file());
  EXPECT_EQ(lines.at(static_cast<std::size_t>(r.truth.evidence(0).line() - 1)),
            r.truth.evidence(0).text());
  fs::remove_all(out);
}

}  // namespace
}  // namespace denpex::sim
