// The preflight simulator (denpex/sim/preflight.h): scenarios parsed and checked, output
// byte-identical for a seed, each fault visible in the tool output where a health check would
// see it, and the round trip: `denpex preflight --from` on the collected outputs fails exactly
// the nodes the truth names, and names a slow link on both of its ends without failing them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "denpex/engine/preflight.h"
#include "denpex/sim/preflight.h"
#include "preflight_round_trip.h"
#include "support/temp_dir.h"

namespace denpex::sim {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file under `dir`, by relative path.
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).generic_string()] = Slurp(e.path());
  }
  return files;
}

v1::PreflightScenario Parse(const std::string& text) {
  auto s = ParsePreflightScenario(text, "test.textproto");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : v1::PreflightScenario{};
}

std::string ErrorOf(const std::string& text) {
  auto s = ParsePreflightScenario(text, "test.textproto");
  EXPECT_FALSE(s.ok());
  return s.ok() ? std::string() : s.status().message();
}

v1::PreflightScenario WithFault(int nodes, v1::PreflightFaultKind kind, int node = 0) {
  v1::PreflightScenario s;
  s.set_name(v1::PreflightFaultKind_Name(kind));
  s.set_nodes(nodes);
  v1::PreflightFault* f = s.add_faults();
  f->set_kind(kind);
  f->set_node(node);
  return s;
}

const std::vector<v1::PreflightFaultKind> kKinds = {
    v1::PREFLIGHT_FAULT_HEALTHY,           v1::PREFLIGHT_FAULT_PCIE_DOWNTRAINED,
    v1::PREFLIGHT_FAULT_IB_PORT_HALF_RATE, v1::PREFLIGHT_FAULT_IB_PORT_DOWN,
    v1::PREFLIGHT_FAULT_NVLINK_DOWN,       v1::PREFLIGHT_FAULT_ROW_REMAP_PENDING,
    v1::PREFLIGHT_FAULT_OTHER_DRIVER,      v1::PREFLIGHT_FAULT_GPU_LOST,
    v1::PREFLIGHT_FAULT_SLOW_NODE,         v1::PREFLIGHT_FAULT_SLOW_LINK};

TEST(PreflightScenario, DefaultsFilled) {
  const auto s = Parse("name: \"x\"\nnodes: 16\nfaults { kind: PREFLIGHT_FAULT_SLOW_NODE }\n");
  EXPECT_EQ(s.host_prefix(), "gpu-");
  EXPECT_EQ(s.gpus_per_node(), 8);
  EXPECT_EQ(s.gpu_model(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.driver(), "550.54.15");
  EXPECT_EQ(s.cuda(), "12.4");
  EXPECT_EQ(s.nvlinks_per_pair(), 18);
  EXPECT_EQ(s.ib_ports(), 8);
  EXPECT_EQ(s.ib_rate_gbps(), 400);
  EXPECT_EQ(s.node_busbw_gbps(), 480);
  EXPECT_EQ(s.pair_busbw_gbps(), 370);
  EXPECT_DOUBLE_EQ(s.busbw_jitter(), 0.02);
  EXPECT_EQ(s.plan(), v1::PREFLIGHT_PLAN_NODES_AND_RING);
  EXPECT_DOUBLE_EQ(s.faults(0).fraction(), 0.5);
}

TEST(PreflightScenario, ErrorsNameTheLineAndWhatToDo) {
  EXPECT_EQ(ErrorOf("nodes: 16\nnode_count: 3\n").rfind("test.textproto:2:1: ", 0), 0u)
      << ErrorOf("nodes: 16\nnode_count: 3\n");
  EXPECT_NE(ErrorOf("nodes: 16\nnode_count: 3\n").find("hint: "), std::string::npos);
  EXPECT_NE(ErrorOf("nodez: 16\n").find("did you mean 'nodes'?"), std::string::npos)
      << ErrorOf("nodez: 16\n");
  EXPECT_NE(ErrorOf("nodes: 16\nfaults { kind: PREFLIGHT_FAULT_SLOW_NOD }\n")
                .find("PREFLIGHT_FAULT_SLOW_NODE"),
            std::string::npos);
  const std::string few = ErrorOf("name: \"x\"\nnodes: 2\n");
  EXPECT_EQ(few.rfind("test.textproto:2:1: nodes is 2", 0), 0u) << few;
  EXPECT_NE(ErrorOf("nodes: 5000\n").find("3 to 4096"), std::string::npos);
  EXPECT_NE(ErrorOf("nodes: 8\ngpus_per_node: 17\n").find("1 to 16"), std::string::npos);
  const std::string frac =
      ErrorOf("nodes: 8\nfaults {\n  kind: PREFLIGHT_FAULT_SLOW_NODE\n  fraction: 1.5\n}\n");
  EXPECT_EQ(frac.rfind("test.textproto:4:3: faults[0].fraction is 1.5", 0), 0u) << frac;
  const std::string range =
      ErrorOf("nodes: 8\nfaults { kind: PREFLIGHT_FAULT_GPU_LOST node: 9 }\n");
  EXPECT_NE(range.find("faults[0].node is 9; it must be 1 to 8"), std::string::npos) << range;
  const std::string twice = ErrorOf(
      "nodes: 8\nfaults { kind: PREFLIGHT_FAULT_GPU_LOST node: 3 }\nfaults { kind: "
      "PREFLIGHT_FAULT_SLOW_LINK node: 2 }\n");
  EXPECT_NE(twice.find("another fault already hits"), std::string::npos) << twice;
  const std::string beside = ErrorOf(
      "nodes: 16\nfaults { kind: PREFLIGHT_FAULT_SLOW_LINK node: 4 }\nfaults { kind: "
      "PREFLIGHT_FAULT_SLOW_NODE node: 6 }\n");
  EXPECT_NE(beside.find("slow link 4->5 has a faulty neighbour, node 6"), std::string::npos)
      << beside;
  EXPECT_NE(ErrorOf("nodes: 16\nfaults { kind: PREFLIGHT_FAULT_SLOW_NODE node: 3 }\nfaults { kind: "
                    "PREFLIGHT_FAULT_SLOW_LINK node: 4 }\n")
                .find("faulty neighbour, node 3"),
            std::string::npos);
  Parse(
      "nodes: 16\nfaults { kind: PREFLIGHT_FAULT_SLOW_LINK node: 16 }\nfaults { kind: "
      "PREFLIGHT_FAULT_SLOW_NODE node: 3 }\n");
  const std::string ring =
      ErrorOf("nodes: 8\nplan: PREFLIGHT_PLAN_NODES\nfaults { kind: PREFLIGHT_FAULT_SLOW_LINK }\n");
  EXPECT_NE(ring.find("PREFLIGHT_PLAN_NODES_AND_RING"), std::string::npos) << ring;
  EXPECT_NE(ErrorOf("nodes: 8\nfaults { node: 3 }\n").find("has no kind"), std::string::npos);
}

TEST(PreflightScenario, EveryScenarioFileLoads) {
  const fs::path dir = fs::path(DENPEX_SOURCE_DIR) / "scenarios/preflight";
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".textproto") continue;
    ++files;
    auto s = LoadPreflightScenario(e.path());
    EXPECT_TRUE(s.ok()) << e.path() << ": " << s.status().message();
  }
  EXPECT_GE(files, 10);  // one per fault kind and a healthy cluster
}

TEST(PreflightSimulate, SameSeedSameBytesOtherSeedOtherBytes) {
  testing::TempDir a, b, c;
  v1::PreflightScenario s = WithFault(12, v1::PREFLIGHT_FAULT_SLOW_LINK);
  s.add_faults()->set_kind(v1::PREFLIGHT_FAULT_GPU_LOST);
  s.set_seed(7);
  ASSERT_TRUE(SimulatePreflight(s, {.out_dir = a.path()}).ok());
  ASSERT_TRUE(SimulatePreflight(s, {.out_dir = b.path()}).ok());
  ASSERT_TRUE(SimulatePreflight(s, {.out_dir = c.path(), .seed = 8}).ok());
  const auto ta = Tree(a.path()), tb = Tree(b.path()), tc = Tree(c.path());
  EXPECT_EQ(ta.size(),
            12u * 5 + 12 + 1);  // 4 tools + a run per node, a run per ring pair, the truth
  EXPECT_TRUE(ta == tb);
  EXPECT_FALSE(ta == tc);
  EXPECT_TRUE(ta.count("preflight_truth.json"));
  // Never over an earlier cluster's outputs.
  const auto again = SimulatePreflight(s, {.out_dir = a.path()});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already holds files"), std::string::npos)
      << again.status().message();
  for (const auto& [path, text] : ta) {
    if (path.starts_with("collected/")) {
      EXPECT_EQ(path.find("truth"), std::string::npos) << path;
    }
  }
}

// The one node a fault hit (node 3 of 8), and its files.
struct Hit {
  testing::TempDir dir;
  v1::PreflightTruth truth;
  std::string Node(const std::string& file) const {
    return Slurp(dir.path() / "collected/gpu-0003" / file);
  }
  std::string Other(const std::string& file) const {
    return Slurp(dir.path() / "collected/gpu-0005" / file);
  }
  std::string Run(const std::string& file) const { return Slurp(dir.path() / "collected" / file); }
};
std::unique_ptr<Hit> Inject(v1::PreflightFaultKind kind) {
  auto h = std::make_unique<Hit>();
  auto t = SimulatePreflight(WithFault(8, kind, 3), {.out_dir = h->dir.path()});
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (t.ok()) h->truth = *t;
  return h;
}

// The out-of-place bus bandwidth at the largest size of a nccl-tests output.
double LargestBusbw(const std::string& text) {
  const std::size_t at = text.find("\n  8589934592 ");
  if (at == std::string::npos) return -1;
  std::istringstream row(text.substr(at + 1, text.find('\n', at + 1) - at - 1));
  std::string w[8];
  for (auto& x : w) row >> x;
  return std::stod(w[7]);
}

TEST(PreflightSimulate, HealthyNodesLookAlikeButNotIdentical) {
  auto h = Inject(v1::PREFLIGHT_FAULT_HEALTHY);
  EXPECT_EQ(h->truth.bad_nodes_size(), 0);
  const std::string q = h->Other("nvidia-smi-q.txt");
  EXPECT_NE(q.find("Driver Version                            : 550.54.15\nCUDA Version            "
                   "                  : 12.4\n"),
            std::string::npos);
  EXPECT_NE(q.find("Attached GPUs                             : 8\nGPU 00000000:18:00.0\n"),
            std::string::npos);
  EXPECT_NE(q.find("    Clocks Event Reasons\n"), std::string::npos);
  EXPECT_NE(q.find("                Current                   : 1\n"),
            std::string::npos);  // an idle link at gen 1
  EXPECT_EQ(q.find("Pending                           : Yes"), std::string::npos);
  const std::string topo = h->Other("topo.txt");
  EXPECT_EQ(topo.rfind("\tGPU0\tGPU1\t", 0), 0u);
  EXPECT_NE(topo.find("GPU0\t X \tNV18\tNV18\t"), std::string::npos);
  EXPECT_NE(topo.find("  NIC8: mlx5_bond_0\n"), std::string::npos);
  const std::string ib = h->Other("ibstat.txt");
  EXPECT_NE(ib.find("CA 'mlx5_0'\n\tCA type: MT4129\n"), std::string::npos);
  EXPECT_NE(ib.find("\t\tRate: 100\n"), std::string::npos);  // the Ethernet bond, on every node
  EXPECT_NE(
      h->Other("nccl-tests.txt").find("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : "),
      std::string::npos);
  EXPECT_NEAR(LargestBusbw(h->Other("nccl-tests.txt")), 480, 480 * 0.08 + 0.01);
  EXPECT_NEAR(LargestBusbw(h->Run("gpu-0008_gpu-0001.nccl-tests.txt")), 370, 370 * 0.08 + 0.01);
  EXPECT_NE(h->Run("gpu-0008_gpu-0001.nccl-tests.txt").find("Pid"), std::string::npos);
  EXPECT_NE(h->Node("nvidia-smi-q.txt"), q);  // serials, UUIDs, temperatures differ
  EXPECT_EQ(h->truth.probe_runs(), 16);
  EXPECT_EQ(h->truth.all_pair_runs(), 8 * 7 / 2 + 8);
}

TEST(PreflightSimulate, EachFaultShowsWhereAHealthCheckLooks) {
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_PCIE_DOWNTRAINED);
    EXPECT_NE(h->Node("nvidia-smi-q.txt")
                  .find("                Max                       : 16x\n                Current  "
                        "                 : 8x\n"),
              std::string::npos);
    EXPECT_EQ(h->Other("nvidia-smi-q.txt").find("Current                   : 8x"),
              std::string::npos);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_IB_PORT_HALF_RATE);
    EXPECT_NE(h->Node("ibstat.txt").find("\t\tRate: 200\n"), std::string::npos);
    EXPECT_EQ(h->Other("ibstat.txt").find("\t\tRate: 200\n"), std::string::npos);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_IB_PORT_DOWN);
    EXPECT_NE(
        h->Node("ibstat.txt").find("\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 40\n"),
        std::string::npos);
    EXPECT_EQ(h->Other("ibstat.txt").find("State: Down"), std::string::npos);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_NVLINK_DOWN);
    const std::string topo = h->Node("topo.txt");
    int halved = 0;
    for (std::size_t at = topo.find("\tNV9\t"); at != std::string::npos;
         at = topo.find("\tNV9\t", at + 1))
      ++halved;
    EXPECT_EQ(halved, 2) << topo;  // both cells of the pair
    EXPECT_EQ(h->Other("topo.txt").find("\tNV9\t"), std::string::npos);
    EXPECT_LT(LargestBusbw(h->Node("nccl-tests.txt")), 480 * 0.7);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_ROW_REMAP_PENDING);
    EXPECT_NE(h->Node("nvidia-smi-q.txt")
                  .find("        Pending                           : Yes\n        Remapping "
                        "Failure Occurred        : No\n"),
              std::string::npos);
    EXPECT_NE(h->Node("dmesg.txt")
                  .find("): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x"),
              std::string::npos);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_OTHER_DRIVER);
    EXPECT_NE(h->Node("nvidia-smi-q.txt")
                  .find("Driver Version                            : 535.161.08\nCUDA Version      "
                        "                        : 12.2"),
              std::string::npos);
    EXPECT_NE(h->Node("dmesg.txt").find("Kernel Module  535.161.08"), std::string::npos);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_GPU_LOST);
    const std::string q = h->Node("nvidia-smi-q.txt");
    EXPECT_NE(q.find("Attached GPUs                             : 7\n"), std::string::npos);
    const std::string healthy = h->Other("nvidia-smi-q.txt");
    EXPECT_LT(std::count(q.begin(), q.end(), '\n'),
              std::count(healthy.begin(), healthy.end(), '\n'));
    EXPECT_EQ(std::count(q.begin(), q.end(), '\n') * 8,
              std::count(healthy.begin(), healthy.end(), '\n') * 7 + 8)
        << "one block of eight gone";
    EXPECT_NE(h->Node("dmesg.txt")
                  .find("): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"),
              std::string::npos);
    EXPECT_EQ(h->Node("topo.txt").find("GPU7"), std::string::npos);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_SLOW_NODE);
    EXPECT_LT(LargestBusbw(h->Node("nccl-tests.txt")), 480 * 0.6);
    EXPECT_LT(LargestBusbw(h->Run("gpu-0002_gpu-0003.nccl-tests.txt")), 370 * 0.6);
    EXPECT_LT(LargestBusbw(h->Run("gpu-0003_gpu-0004.nccl-tests.txt")), 370 * 0.6);
    EXPECT_GT(LargestBusbw(h->Run("gpu-0004_gpu-0005.nccl-tests.txt")), 370 * 0.9);
  }
  {
    auto h = Inject(v1::PREFLIGHT_FAULT_SLOW_LINK);
    EXPECT_EQ(h->truth.bad_nodes_size(), 0);
    ASSERT_EQ(h->truth.bad_links_size(), 1);
    EXPECT_EQ(h->truth.bad_links(0), "gpu-0003<->gpu-0004");
    EXPECT_LT(LargestBusbw(h->Run("gpu-0003_gpu-0004.nccl-tests.txt")), 370 * 0.6);
    EXPECT_GT(LargestBusbw(h->Run("gpu-0002_gpu-0003.nccl-tests.txt")), 370 * 0.9);
    EXPECT_GT(LargestBusbw(h->Node("nccl-tests.txt")), 480 * 0.9);
  }
}

// Several faults at once, each on its own node: none explains another's runs.
TEST(PreflightRoundTrip, EveryFaultAtOnce) {
  v1::PreflightScenario s;
  s.set_nodes(64);
  for (const v1::PreflightFaultKind kind : kKinds) s.add_faults()->set_kind(kind);
  s.add_faults()->set_kind(v1::PREFLIGHT_FAULT_SLOW_LINK);
  for (const std::uint64_t seed : {11u, 12u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::TempDir dir;
    auto truth = SimulatePreflight(s, {.out_dir = dir.path(), .seed = seed});
    ASSERT_TRUE(truth.ok()) << truth.status().message();
    EXPECT_EQ(truth->bad_nodes_size(), 8);
    EXPECT_EQ(truth->bad_links_size(), 2);
    EXPECT_EQ(truth->faults_size(), 11);
    ExpectEngineAgrees(dir.path(), *truth, 64);
  }
}

// The round trip: every fault kind at 64 nodes over a few seeds, judged by the engine.
TEST(PreflightRoundTrip, EngineFailsExactlyTheTruthsNodes) {
  for (const v1::PreflightFaultKind kind : kKinds) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(v1::PreflightFaultKind_Name(kind) + " seed " + std::to_string(seed));
      testing::TempDir dir;
      auto truth = SimulatePreflight(WithFault(64, kind), {.out_dir = dir.path(), .seed = seed});
      ASSERT_TRUE(truth.ok()) << truth.status().message();
      ExpectEngineAgrees(dir.path(), *truth, 64);
    }
  }
}

// Other boards, older drivers, small clusters and the one-node plan: each fault still judged
// as the truth says.
TEST(PreflightRoundTrip, OtherShapes) {
  const char* kShapes[] = {
      // An A100 cluster on a 525 driver ("Clocks Throttle Reasons", no GPU NUMA ID).
      "nodes: 24\ngpu_model: \"NVIDIA A100-SXM4-80GB\"\ndriver: \"525.105.17\"\ncuda: "
      "\"12.0\"\nnvlinks_per_pair: 12\n"
      "ib_ports: 4\nib_rate_gbps: 200\nnode_busbw_gbps: 230\npair_busbw_gbps: 185\n",
      // Four GPUs and four ports a node.
      "nodes: 16\ngpus_per_node: 4\nib_ports: 4\n",
      // Each node alone: no pair runs.
      "nodes: 16\nplan: PREFLIGHT_PLAN_NODES\n",
      // The smallest cluster preflight judges.
      "nodes: 3\n",
  };
  for (const char* shape : kShapes) {
    for (const v1::PreflightFaultKind kind : kKinds) {
      const bool ring = std::string(shape).find("PLAN_NODES\n") == std::string::npos;
      if (kind == v1::PREFLIGHT_FAULT_SLOW_LINK && !ring) continue;
      SCOPED_TRACE(std::string(shape) + v1::PreflightFaultKind_Name(kind));
      v1::PreflightScenario s = Parse(
          std::string(shape) + "faults { kind: " + v1::PreflightFaultKind_Name(kind) + " }\n");
      testing::TempDir dir;
      auto truth = SimulatePreflight(s, {.out_dir = dir.path(), .seed = 21});
      ASSERT_TRUE(truth.ok()) << truth.status().message();
      EXPECT_EQ(truth->probe_runs(), s.nodes() * (ring ? 2 : 1));
      ExpectEngineAgrees(dir.path(), *truth, s.nodes(), s.gpus_per_node(), s.nvlinks_per_pair());
    }
  }
}

}  // namespace
}  // namespace denpex::sim
