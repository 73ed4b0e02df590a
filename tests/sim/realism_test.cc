// Realism options (scenario `realism`): benign warnings on every rank, the loud rank, kernel
// logs with the old ECC red herring, and missing or truncated node files with an honest truth.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_util;

constexpr const char* kNoisy = R"(name: "noisy"
seed: 5
job { nodes: 4 tp: 4 pp: 2 }
training { warmup_steps: 4 }
realism { }
faults { kind: FAULT_KIND_SIGKILL rank: 5 }
)";

std::string Log(const fs::path& out, const std::string& rel) {
  return ReadAll(out / "incident" / rel);
}

void ExpectEvidenceIntact(const fs::path& out, const v1::Truth& truth) {
  for (const v1::Evidence& e : truth.evidence()) {
    const auto lines = ReadLines(out / "incident" / e.file());
    ASSERT_LE(static_cast<std::size_t>(e.line()), lines.size()) << e.file();
    EXPECT_EQ(lines[static_cast<std::size_t>(e.line() - 1)], e.text());
  }
}

TEST(Realism, EveryRankPrintsTheBenignStartupWarnings) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kNoisy), out);
  for (int rank : {0, 5, 31}) {
    const std::string host = "gpu-000" + std::to_string(rank / 8 + 1);
    const std::string log = Log(out, host + "/rank_" + std::to_string(rank) + ".log");
    EXPECT_THAT(log, HasSubstr(" socket.cpp:697] [c10d] The client socket cannot be initialized "
                               "to connect to [gpu-0001]:29500 (errno: 97 - Address family"));
    EXPECT_THAT(log, HasSubstr("/torch/_utils.py:831: UserWarning: TypedStorage is deprecated."));
    EXPECT_THAT(log, HasSubstr("\n  return self.fget.__get__(instance, owner)()\n"));
    EXPECT_THAT(log, HasSubstr("[rank" + std::to_string(rank) + "]:[W302 "));
    EXPECT_THAT(log, HasSubstr("Rank " + std::to_string(rank) + "]  using GPU " +
                               std::to_string(rank % 8) + " to perform barrier"));
  }
}

TEST(Realism, TheLoudRankIsNotOnTheInitiatorsNodeAndWarnsEveryStep) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kNoisy), out);
  int loud = -1;
  for (int rank = 0; rank < 32; ++rank) {
    const std::string host = "gpu-000" + std::to_string(rank / 8 + 1);
    const std::string log = Log(out, host + "/rank_" + std::to_string(rank) + ".log");
    if (log.find("c10d::allreduce_: an autograd kernel was not registered") == std::string::npos)
      continue;
    EXPECT_EQ(loud, -1) << "two loud ranks";
    loud = rank;
    std::size_t count = 0;
    for (std::size_t at = 0;
         (at = log.find("/torch/autograd/graph.py:768: UserWarning: c10d::allreduce_", at)) != std::string::npos;
         ++at) {
      ++count;
    }
    EXPECT_GE(count, 4u);  // warmup steps and the fault step
  }
  ASSERT_GE(loud, 0);
  EXPECT_NE(loud / 8, r.truth.initiator().rank() / 8);
}

// The autograd fallback warns since torch 2.1, from autograd/__init__.py's backward (2.1, 2.2) and
// graph.py's _engine_run_backward (2.3+); torch 1.13 has no such warning, so its loud rank is
// silent.
TEST(Realism, TheLoudRanksWarningIsItsReleasesOwn) {
  struct Era {
    const char* torch;
    const char* site;    // "" for none
    const char* source;  // the echoed source line
    const char* cpp;     // the "Triggered internally at" site
  };
  const Era eras[] = {
      {"1.13", "", "", ""},
      {"2.1", "/torch/autograd/__init__.py:251: UserWarning: c10d::allreduce_: an autograd kernel",
       "\n  Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n",
       "(Triggered internally at ../torch/csrc/autograd/autograd_not_implemented_fallback.cpp:63.)\n"},
      {"2.4", "/torch/autograd/graph.py:768: UserWarning: c10d::allreduce_: an autograd kernel",
       "\n  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n",
       "(Triggered internally at ../torch/csrc/autograd/autograd_not_implemented_fallback.cpp:63.)\n"},
      {"2.6", "/torch/autograd/graph.py:823: UserWarning: c10d::allreduce_: an autograd kernel",
       "\n  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n",
       "(Triggered internally at /pytorch/torch/csrc/autograd/autograd_not_implemented_fallback.cpp:62.)\n"},
  };
  for (const Era& e : eras) {
    SCOPED_TRACE(e.torch);
    const fs::path out = FreshDir();
    MustSimulate(MustParse(kNoisy, {std::string("format.torch=") + e.torch}), out);
    std::string all;
    for (int rank = 0; rank < 32; ++rank) {
      all += Log(out, "gpu-000" + std::to_string(rank / 8 + 1) + "/rank_" + std::to_string(rank) + ".log");
    }
    if (std::string(e.site).empty()) {
      EXPECT_THAT(all, Not(HasSubstr("an autograd kernel was not registered")));
      continue;
    }
    EXPECT_THAT(all, HasSubstr(e.site));
    EXPECT_THAT(all, HasSubstr(e.source));
    EXPECT_THAT(all, HasSubstr(e.cpp));
  }
}

TEST(Realism, KernelLogsHaveSyslogShapeAndTheEccEventIsOnAnotherNode) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kNoisy), out);
  const std::regex shape(
      R"([A-Z][a-z]{2} [ 1-3][0-9] \d\d:\d\d:\d\d gpu-000\d kernel: \[ *\d+\.\d{6}\] .+)");
  int ecc_nodes = 0;
  for (int node = 1; node <= 4; ++node) {
    const std::string host = "gpu-000" + std::to_string(node);
    const auto lines = ReadLines(out / "incident" / host / "kern.log");
    ASSERT_GE(lines.size(), 7u);
    EXPECT_THAT(lines[0], HasSubstr("kernel: [    0.000000] Linux version 5.15.0-105-generic"));
    for (const std::string& line : lines) EXPECT_TRUE(std::regex_match(line, shape)) << line;
    const std::string all = Log(out, host + "/kern.log");
    if (all.find(": 63, pid='<unknown>', name=<unknown>, Row Remapper:") != std::string::npos) {
      ++ecc_nodes;
      EXPECT_NE(host, r.truth.initiator().node());
      EXPECT_THAT(all, HasSubstr("NVRM: GPU at PCI:0000:"));
    }
  }
  EXPECT_EQ(ecc_nodes, 1);
}

TEST(Realism, MissingAndTruncatedNodesSpareTheInitiatorByDefault) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kNoisy, {"realism.missing_node_fraction=0.5",
                                                           "realism.truncated_node_fraction=0.5"}),
                                        out);
  int missing = 0, truncated = 0;
  for (int node = 1; node <= 4; ++node) {
    const fs::path dir = out / "incident" / ("gpu-000" + std::to_string(node));
    if (node == 1) {
      EXPECT_TRUE(fs::exists(dir / "torchrun.log"));  // the initiator's (rank 5) node
      continue;
    }
    if (!fs::exists(dir)) {
      ++missing;
      continue;
    }
    ++truncated;
    const std::string log = ReadAll(dir / "torchrun.log");
    ASSERT_FALSE(log.empty());
    EXPECT_NE(log.back(), '\n') << dir;  // cut mid-line
  }
  EXPECT_EQ(missing + truncated, 3);
  EXPECT_GT(missing, 0);
  EXPECT_GT(truncated, 0);
  EXPECT_EQ(r.truth.evidence_size(), 2);
  ExpectEvidenceIntact(out, r.truth);
}

TEST(Realism, WhenTheInitiatorsNodeIsMissingItsEvidenceLeavesTheTruth) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kNoisy, {"realism.missing_node_fraction=1", "realism.damage_initiator_node=true"}),
      out);
  EXPECT_FALSE(fs::exists(out / "incident/gpu-0001"));
  EXPECT_EQ(r.truth.evidence_size(), 0);
  EXPECT_EQ(r.truth.initiator().rank(), 5);  // what happened does not change
}

TEST(Realism, MissingInitiatorNodeRemovesOnlyThatNode) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kNoisy, {"realism.missing_initiator_node=true"}), out);
  EXPECT_FALSE(fs::exists(out / "incident/gpu-0001"));  // rank 5's node
  EXPECT_TRUE(fs::exists(out / "incident/gpu-0002/torchrun.log"));
  EXPECT_EQ(r.truth.initiator().rank(), 5);
  ExpectEvidenceIntact(out, r.truth);
}

TEST(Realism, HangEvidenceFallsBackToASurvivingPeer) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kNoisy, {"faults[0].kind=FAULT_KIND_HANG", "realism.truncated_node_fraction=1",
                         "realism.damage_initiator_node=true"}),
      out);
  ExpectEvidenceIntact(out, r.truth);
}

TEST(Realism, FractionsAreValidated) {
  std::vector<std::string> bad = {"realism.missing_node_fraction=1.5"};
  auto s = ParseScenario(kNoisy, "t", bad);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("realism.missing_node_fraction must be in [0, 1]"));
  bad = {"realism.kernel_logs=false", "realism.old_ecc_event=true"};
  s = ParseScenario(kNoisy, "t", bad);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("old_ecc_event needs kernel_logs"));
}

}  // namespace
}  // namespace denpex::sim
