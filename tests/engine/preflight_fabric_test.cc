// The fabric probes' plan (engine/src/preflight/fabric.cc) and how `--from` judges the folder
// `denpex preflight --fabric` leaves: runs directly in DIR name their hosts, which become nodes;
// a probe that did not finish says so in its file's first line, and the node whose every probe
// failed fails while a failed pair alone leaves its link untested.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "denpex/engine/preflight.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

// `n3` (appended, not `"n" + ...`: GCC 12's -Wrestrict misfires on that when inlined).
std::string Name(int i) {
  std::string s = "n";
  s += std::to_string(i);
  return s;
}

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(Name(i));
  return out;
}

TEST(PlanFabric, EachNodeMeetsBothRingNeighboursAndNoRoundUsesANodeTwice) {
  for (int n = 2; n <= 9; ++n) {
    const auto rounds = PlanFabric(Nodes(n), /*node_round=*/true);
    ASSERT_FALSE(rounds.empty());
    EXPECT_EQ(rounds.front().name, "node");
    EXPECT_EQ(rounds.front().groups.size(), static_cast<std::size_t>(n));
    std::set<std::pair<std::string, std::string>> pairs;
    for (std::size_t r = 1; r < rounds.size(); ++r) {
      std::set<std::string> seen;
      for (const auto& g : rounds[r].groups) {
        ASSERT_EQ(g.size(), 2u);
        for (const auto& node : g) EXPECT_TRUE(seen.insert(node).second) << n << " " << node;
        pairs.insert({std::min(g[0], g[1]), std::max(g[0], g[1])});
      }
    }
    const std::size_t want = n == 2 ? 1 : static_cast<std::size_t>(n);
    EXPECT_EQ(pairs.size(), want) << n;
    for (int i = 0; i < n && n > 2; ++i) {
      const std::string a = Name(i), b = Name((i + 1) % n);
      EXPECT_TRUE(pairs.count({std::min(a, b), std::max(a, b)})) << n << ": " << a << "-" << b;
    }
    EXPECT_EQ(rounds.size(), 1u + (n == 2 ? 1u : n % 2 == 0 ? 2u : 3u)) << n;
  }
  EXPECT_EQ(PlanFabric(Nodes(4), false).size(), 2u);
  EXPECT_TRUE(PlanFabric(Nodes(1), false).empty());
}

TEST(PlanFabric, EveryPairApartCostsQuadraticallyMore) {
  EXPECT_EQ(EveryPairCost(1).probes, 0);
  EXPECT_EQ(EveryPairCost(4).probes, 6);
  EXPECT_EQ(EveryPairCost(4).rounds, 3);
  EXPECT_EQ(EveryPairCost(5).rounds, 5);
  EXPECT_EQ(EveryPairCost(2048).probes, 2048 * 2047 / 2);
  EXPECT_EQ(EveryPairCost(2048).rounds, 2047);
}

TEST(FabricProbeHeader, RoundTripsAndTheStatusRunsToTheLineEnd) {
  const FabricProbeHeader h{.round = "pairs-2",
                            .nodes = {"gpu-0001", "gpu-0002"},
                            .launcher = "srun",
                            .ranks_per_node = 8,
                            .status = "on gpu-0002: failed: ssh exited with code 255",
                            .line = 0};
  const std::string line = FormatFabricProbeHeader(h);
  EXPECT_EQ(line,
            "# denpex fabric probe: round=pairs-2 nodes=gpu-0001,gpu-0002 launcher=srun "
            "ranks_per_node=8 status=on gpu-0002: failed: ssh exited with code 255");
  const auto back = ParseFabricProbeHeader("srun: warning: something\n" + line + "\nmore\n");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->line, 2);
  EXPECT_EQ(back->round, "pairs-2");
  EXPECT_EQ(back->nodes, h.nodes);
  EXPECT_EQ(back->launcher, "srun");
  EXPECT_EQ(back->ranks_per_node, 8);
  EXPECT_EQ(back->status, h.status);
  EXPECT_FALSE(ParseFabricProbeHeader("# denpex fabric probe: round=x status=ok\n"));
  EXPECT_FALSE(ParseFabricProbeHeader("a\nb\nc\nd\ne\n" + line));
}

// A probe file as `--fabric` writes it: the first line, then rank 0's all_reduce_perf table
// with the largest size's out-of-place bus bandwidth `busbw`.
std::string ProbeFile(const std::vector<std::string>& nodes, const std::string& status,
                      double busbw) {
  std::ostringstream s;
  s << FormatFabricProbeHeader({.round = "pairs-1",
                                .nodes = nodes,
                                .launcher = "torchrun",
                                .ranks_per_node = 1,
                                .status = status,
                                .line = 0})
    << "\n";
  if (status != "ok") return s.str() + "RuntimeError: Connection reset by peer\n";
  s << "# Collective test starting: all_reduce_perf\n#\n# Using devices\n";
  for (std::size_t r = 0; r < nodes.size(); ++r)
    s << "#  Rank  " << r << " Group  0 Pid  100" << r << " on " << nodes[r]
      << " device -1 [cpu] gloo\n";
  s << "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong "
       "    time   algbw   busbw #wrong\n"
       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
       "   (us)  (GB/s)  (GB/s)       \n"
    << "     1048576        262144     float     sum      -1   3000.0    0.35    " << busbw
    << "      0   3000.0    0.35    " << busbw << "      0\n"
    << "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : " << busbw << "\n#\n";
  return s.str();
}

class FabricFolder : public ::testing::Test {
 protected:
  void Probe(const std::vector<std::string>& nodes, const std::string& status, double busbw) {
    std::string name = "fabric";
    for (const auto& n : nodes) name += "-" + n;
    std::ofstream(dir_.path() / (name + ".txt")) << ProbeFile(nodes, status, busbw);
  }
  const v1::PreflightNode& Of(const v1::PreflightReport& r, const std::string& node) {
    for (const auto& n : r.nodes())
      if (n.node() == node) return n;
    ADD_FAILURE() << "no node " << node;
    return r.nodes(0);
  }
  denpex::testing::TempDir dir_;
};

TEST_F(FabricFolder, TheHostsOfRunsInTheFolderAreItsNodes) {
  // Four nodes' ring pairs, the n1-n2 link slow: named on both ends, nobody excluded.
  Probe({"n0", "n1"}, "ok", 0.40);
  Probe({"n2", "n3"}, "ok", 0.41);
  Probe({"n1", "n2"}, "ok", 0.05);
  Probe({"n3", "n0"}, "ok", 0.39);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nodes_size(), 4);
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
  for (const char* end : {"n1", "n2"}) {
    const auto& n = Of(*r, end);
    ASSERT_EQ(n.findings_size(), 1) << end;
    EXPECT_EQ(n.findings(0).code(), "BUSBW_LOW");
    EXPECT_EQ(n.findings(0).device(), "n1<->n2");
    ASSERT_EQ(n.sources_size(), 2) << end;
    EXPECT_EQ(n.sources(0).tool(), "nccl-tests");
  }
  EXPECT_TRUE(Of(*r, "n0").findings().empty());
  EXPECT_TRUE(r->problems().empty());
}

TEST_F(FabricFolder, ANodeWhoseEveryProbeFailedFailsAndALoneFailedPairIsUntested) {
  Probe({"n0", "n1"}, "ok", 0.40);
  Probe({"n2", "n3"}, "on n3: failed: ssh exited with code 255", 0);
  Probe({"n1", "n2"}, "ok", 0.41);
  Probe({"n3", "n0"}, "timed out after 330000 ms", 0);
  Probe({"n4", "n5"}, "ok", 0.40);
  Probe({"n5", "n6"}, "failed: srun exited with code 1", 0);
  Probe({"n6", "n7"}, "ok", 0.40);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_FAIL);
  EXPECT_EQ(r->exclude(), "n3");
  const auto& n3 = Of(*r, "n3");
  ASSERT_EQ(n3.findings_size(), 1);
  EXPECT_EQ(n3.findings(0).code(), "PROBE_FAILED");
  EXPECT_TRUE(n3.findings(0).fail());
  EXPECT_EQ(n3.findings(0).evidence_size(), 2);
  EXPECT_EQ(n3.findings(0).evidence(0).line(), 1);
  // n3's failures explain n2's and n0's: nothing on them.
  EXPECT_TRUE(Of(*r, "n2").findings().empty());
  EXPECT_TRUE(Of(*r, "n0").findings().empty());
  for (const char* end : {"n5", "n6"}) {
    const auto& n = Of(*r, end);
    ASSERT_EQ(n.findings_size(), 1) << end;
    EXPECT_FALSE(n.findings(0).fail());
    EXPECT_EQ(n.findings(0).device(), "n5<->n6");
    EXPECT_NE(n.findings(0).message().find("failed: srun exited with code 1"), std::string::npos);
  }
  ASSERT_EQ(r->problems_size(), 1);
  EXPECT_NE(r->problems(0).find("the link n5<->n6 is untested"), std::string::npos);
}

}  // namespace
}  // namespace denpex::engine
