// The fail-slow detector against the simulator: healthy runs with normal jitter flag nothing
// (50 seeds), a straggler is found from its timers alone, also against a healthy control run
// of the same job, and a straggler that later stalls is the initiator of the timeout wave.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "denpex/engine/engine.h"
#include "denpex/sim/simulator.h"

namespace denpex {
namespace {

namespace fs = std::filesystem;

// How many healthy seeds: 50 in the slow build of this test (fixture FailSlow50, the healthy
// test only), a few in the unit one.
#ifdef DENPEX_HEALTHY_SEEDS
#define FailSlow FailSlow50
#define DENPEX_ONLY_HEALTHY 1
#else
#define DENPEX_HEALTHY_SEEDS 6
#define DENPEX_ONLY_HEALTHY 0
#endif

class FailSlow : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("denpex_fail_slow_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Simulates `text` (with overrides) under dir_/name and returns the incident directory.
  fs::path Simulate(const std::string& name, const std::string& text, std::vector<std::string> sets, std::uint64_t seed) {
    auto scenario = sim::ParseScenario(text, name, sets);
    EXPECT_TRUE(scenario.ok()) << scenario.status().message();
    const fs::path out = dir_ / name;
    fs::remove_all(out);
    auto result = sim::Simulate(*scenario, {.out_dir = out, .seed = seed});
    EXPECT_TRUE(result.ok()) << result.status().message();
    return out / "incident";
  }

  v1::Diagnosis Diagnose(const fs::path& incident, const fs::path& control = {}) {
    auto d = engine::Diagnose(incident, {.threads = 2, .control = control});
    EXPECT_TRUE(d.ok()) << d.status().message();
    return d.ok() ? *d : v1::Diagnosis();
  }

  fs::path dir_;
};

// A small job: 256 ranks (32 nodes, TP4 x PP2 x DP32), 8 healthy steps, then 12 more.
constexpr char kJob[] = R"pb(
  name: "fail_slow_test"
  job { nodes: 32 tp: 4 pp: 2 }
  training { warmup_steps: 8 step_time_ms: 400 }
  realism { kernel_logs: false }
  faults { kind: FAULT_KIND_STRAGGLER rank: 77 }
)pb";


// slowdown 1 runs the job healthy: jitter of 2% (the default) and 5% per compute slice.
TEST_F(FailSlow, HealthyRunsWithNormalJitterFlagNothing) {
  for (std::uint64_t seed = 1; seed <= DENPEX_HEALTHY_SEEDS; ++seed) {
    const std::string jitter = seed % 2 == 0 ? "training.compute_jitter=0.05" : "training.compute_jitter=0.02";
    const fs::path incident = Simulate("healthy", kJob, {"faults[0].slowdown=1", jitter}, seed);
    const v1::Diagnosis d = Diagnose(incident);
    EXPECT_NE(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER) << "seed " << seed << ": " << d.reason();
    EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << "seed " << seed << ": " << d.reason();
  }
}

#if !DENPEX_ONLY_HEALTHY
TEST_F(FailSlow, StragglerFoundFromTimersAloneAndAgainstAControlRun) {
  const fs::path slow = Simulate("slow", kJob, {"faults[0].slowdown=1.3"}, 5);
  const fs::path control = Simulate("control", kJob, {"faults[0].slowdown=1"}, 6);
  for (const fs::path& c : {fs::path(), control}) {
    const v1::Diagnosis d = Diagnose(slow, c);
    EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
    EXPECT_EQ(d.initiator().rank(), 77) << d.reason();
    EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
    EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
    EXPECT_EQ(d.cascade().secondary_ranks_size(), 0);
    ASSERT_GE(d.evidence_size(), 1);
    EXPECT_EQ(d.evidence(0).role(), v1::EVIDENCE_ROLE_INITIATING);
    EXPECT_NE(d.evidence(0).text().find("[Rank 77] time (ms) |"), std::string::npos);
    EXPECT_EQ(d.reason().find("control") != std::string::npos, !c.empty()) << d.reason();
  }
  // A control run that is not an incident directory is refused with a hint.
  auto bad = engine::Diagnose(slow, {.threads = 2, .control = dir_ / "missing"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--control"), std::string::npos);
}

TEST_F(FailSlow, StragglerThatStallsIsTheInitiatorOfTheTimeoutWave) {
  const fs::path incident =
      Simulate("stall", kJob, {"faults[0].slowdown=1.5", "faults[0].slow_steps=5", "faults[0].stall=true", "timeouts.nccl_timeout_ms=60000"}, 9);
  const v1::Diagnosis d = Diagnose(incident);
  EXPECT_EQ(d.initiator().rank(), 77) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER) << d.reason();
  EXPECT_GT(d.cascade().secondary_ranks_size(), 0);
}

// A PCIe link downgrade (straggler variant 2) sets no clock reason; dcgmi diag -r 2's PCIe test
// fails on the GPU ("running at PCI link width 4X"), and the finding cites that row. A throttled
// GPU (variant 0) is confirmed by its clocks, not by a PCIe row.
TEST_F(FailSlow, PcieLinkDowngradeIsConfirmedByDcgmDiagsPcieRow) {
  const fs::path pcie = Simulate("pcie", kJob, {"faults[0].slowdown=1.4", "faults[0].variant=2", "realism.dcgm_diag_level=2"}, 5);
  v1::Diagnosis d = Diagnose(pcie);
  EXPECT_EQ(d.initiator().rank(), 77) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
  EXPECT_NE(d.reason().find("failed dcgmi diag's PCIe test"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("link downgrade"), std::string::npos) << d.reason();
  bool cited = false;
  for (const auto& e : d.evidence()) {
    cited |= e.role() == v1::EVIDENCE_ROLE_CORROBORATING && e.text().find("| Fail - GPU: 5 ") != std::string::npos;
  }
  EXPECT_TRUE(cited) << "the PCIe row of GPU 5 (rank 77's local rank) is not cited";
  const fs::path hot = Simulate("hot", kJob, {"faults[0].slowdown=1.4", "faults[0].variant=0", "realism.dcgm_diag_level=2"}, 5);
  d = Diagnose(hot);
  EXPECT_EQ(d.initiator().rank(), 77) << d.reason();
  EXPECT_EQ(d.reason().find("PCIe test"), std::string::npos) << d.reason();
}

// A terminal copy of one healthy rank's log whose timer lines lost their bwd_inner/bwd_allreduce
// tail (a hard wrap not put back): its whole backward, the wait included, would read as compute.
// Its lines are not compared, so the straggler is still the rank that computes longest.
TEST_F(FailSlow, TimerLinesCutBeforeTheirSplitAreNotCompared) {
  const fs::path incident = Simulate("cut", kJob, {"faults[0].slowdown=1.3"}, 5);
  int cut = 0;
  for (const auto& entry : fs::recursive_directory_iterator(incident)) {
    if (entry.path().filename() != "rank_130.log") continue;
    std::ifstream in(entry.path());
    std::string text, line;
    for (int k = 0; std::getline(in, line); ++k) {
      const std::size_t at = line.find(" | bwd_inner:");
      if (at != std::string::npos) line = line.substr(0, at + (k % 2 == 0 ? 1 : 2)), ++cut;  // `... ` or `... |`
      text += line + "\n";
    }
    in.close();
    std::ofstream(entry.path()) << text;
  }
  ASSERT_GT(cut, 8);
  const v1::Diagnosis d = Diagnose(incident);
  EXPECT_EQ(d.initiator().rank(), 77) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
}

TEST_F(FailSlow, SlowNodeIsNamedAsANodeOwnedByTheHost) {
  const fs::path incident = Simulate("node", kJob, {"faults[0].kind=FAULT_KIND_SLOW_NODE", "faults[0].slowdown=1.4"}, 3);
  const v1::Diagnosis d = Diagnose(incident);
  EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0010") << d.reason();  // rank 77 is on the tenth node
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
}
#endif

}  // namespace
}  // namespace denpex
