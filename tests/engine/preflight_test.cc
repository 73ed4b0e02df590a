// `denpex preflight --from DIR` (engine/src/preflight/preflight.cc) on an allocation built from a
// real `nvidia-smi -q` block (tests/data/preflight/nvidia-smi-q/): the norm is what most nodes
// show, a node that differs or is broken is named with the line that shows it, and the failed
// nodes come out in Slurm's host list syntax.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analyze/gpu_health.h"
#include "denpex/engine/preflight.h"
#include "preflight/host_split.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(DENPEX_SOURCE_DIR) / "tests/data/preflight";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// `from`'s first occurrence after `anchor` (or from the start) replaced by `to`.
std::string Replace(std::string s, const std::string& from, const std::string& to,
                    const std::string& anchor = "") {
  const std::size_t at = s.find(from, anchor.empty() ? 0 : s.find(anchor));
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// The real block is GPU 0 of eight (`nvidia-smi -q -i 0`); the other seven are the same block at
// the bus ids of an 8-GPU HGX board, each with its minor number.
std::string EightGpus(const std::string& one) {
  const std::size_t block = one.find("GPU 00000000:18:00.0");
  std::string out = one;
  const char* buses[] = {"2A", "3A", "5D", "9A", "AB", "BA", "DB"};
  for (int i = 0; i < 7; ++i) {
    std::string b = one.substr(block);
    b = Replace(b, "GPU 00000000:18:00.0", std::string("GPU 00000000:") + buses[i] + ":00.0");
    b = Replace(b, "Minor Number                          : 0",
                "Minor Number                          : " + std::to_string(i + 1));
    b = Replace(b, "GPU-34bf77d1", "GPU-34bf77d" + std::to_string(i + 2));
    out += b;
  }
  return out;
}

class Allocation : public ::testing::Test {
 protected:
  void SetUp() override { query_ = EightGpus(Slurp(kData / "nvidia-smi-q/h800_one_gpu.txt")); }
  // Node `name` with its `nvidia-smi -q` under a name no reader looks at.
  void Node(const std::string& name, const std::string& query) {
    Put(dir_.path() / name / "health" / "q-output", query);
  }
  const v1::PreflightNode& Of(const v1::PreflightReport& r, const std::string& name) {
    for (const auto& n : r.nodes()) {
      if (n.node() == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    return r.nodes(0);
  }

  testing::TempDir dir_;
  std::string query_;
};

TEST_F(Allocation, SameNodesPassWithTheirInventory) {
  for (const char* n : {"gpu-0001", "gpu-0002", "gpu-0003"}) Node(n, query_);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
  EXPECT_EQ(r->exclude(), "");
  ASSERT_EQ(r->nodes_size(), 3);
  const auto& inv = r->nodes(0).inventory();
  EXPECT_EQ(inv.gpus(), 8);
  EXPECT_EQ(inv.gpu_model(), "NVIDIA H800");
  EXPECT_EQ(inv.driver(), "525.105.17");
  EXPECT_EQ(inv.cuda(), "12.0");
  EXPECT_EQ(r->majority().driver(), "525.105.17");
  ASSERT_EQ(r->nodes(0).sources_size(), 1);
  EXPECT_EQ(r->nodes(0).sources(0).tool(), "nvidia-smi -q");
  EXPECT_EQ(r->nodes(0).sources(0).file(), "gpu-0001/health/q-output");
  for (const auto& n : r->nodes()) EXPECT_TRUE(n.findings().empty()) << n.node();
}

TEST_F(Allocation, EachBrokenOrOddNodeIsNamedWithItsLine) {
  Node("gpu-0001", query_);
  Node("gpu-0002", query_);
  // A GPU whose link trained at x8, and a pending row remap on the same GPU.
  const std::string gpu2 = "GPU 00000000:3A:00.0";
  std::string narrow =
      Replace(query_, "Current                   : 16x", "Current                   : 8x", gpu2);
  narrow = Replace(narrow, "Pending                           : No\n        Remapping",
                   "Pending                           : Yes\n        Remapping", gpu2);
  Node("gpu-0003", narrow);
  Node("gpu-0004", Replace(query_, "Driver Version                            : 525.105.17",
                           "Driver Version                            : 535.129.03"));
  Node("gpu-0005", Replace(query_, "Attached GPUs                             : 8",
                           "Attached GPUs                             : 7"));
  Node("gpu-0006", query_);

  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_FAIL);
  EXPECT_EQ(r->exclude(), "gpu-[0003-0005]");

  const auto& narrow_node = Of(*r, "gpu-0003");
  EXPECT_FALSE(narrow_node.pass());
  ASSERT_EQ(narrow_node.findings_size(), 2);
  EXPECT_EQ(narrow_node.findings(0).code(), "ROW_REMAP_PENDING");
  EXPECT_EQ(narrow_node.findings(1).code(), "PCIE_WIDTH_DEGRADED");
  EXPECT_EQ(narrow_node.findings(1).gpu(), 2);
  EXPECT_EQ(narrow_node.findings(1).device(), "0000:3a:00");
  ASSERT_EQ(narrow_node.findings(1).evidence_size(), 1);
  EXPECT_EQ(narrow_node.findings(1).evidence(0).file(), "gpu-0003/health/q-output");
  EXPECT_EQ(narrow_node.findings(1).evidence(0).text(),
            "                Current                   : 8x");

  const auto& driver = Of(*r, "gpu-0004");
  ASSERT_EQ(driver.findings_size(), 1);
  EXPECT_EQ(driver.findings(0).code(), "ODD_DRIVER");
  EXPECT_EQ(driver.findings(0).message(), "driver 535.129.03 where most nodes run 525.105.17");
  EXPECT_EQ(driver.findings(0).evidence(0).line(), 5);

  const auto& lost = Of(*r, "gpu-0005");
  ASSERT_EQ(lost.findings_size(), 1);
  EXPECT_EQ(lost.findings(0).code(), "ODD_GPU_COUNT");
  EXPECT_EQ(lost.findings(0).evidence(0).text(), "Attached GPUs                             : 7");

  for (const char* ok : {"gpu-0001", "gpu-0002", "gpu-0006"}) EXPECT_TRUE(Of(*r, ok).pass()) << ok;
  const std::string text = RenderPreflightText(*r);
  EXPECT_NE(text.find("PREFLIGHT FAIL: 6 nodes, 3 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("exclude: gpu-[0003-0005]"), std::string::npos) << text;
}

// Half the nodes on another driver (a rollout under way): no side is the fault's, both warn.
TEST_F(Allocation, ASplitAllocationWarnsInsteadOfFailingEitherHalf) {
  const std::string newer =
      Replace(query_, "Driver Version                            : 525.105.17",
              "Driver Version                            : 535.129.03");
  Node("gpu-0001", query_);
  Node("gpu-0002", query_);
  Node("gpu-0003", newer);
  Node("gpu-0004", newer);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
  int warned = 0;
  for (const auto& n : r->nodes()) {
    for (const auto& f : n.findings()) {
      EXPECT_EQ(f.code(), "ODD_DRIVER");
      EXPECT_FALSE(f.fail());
      EXPECT_NE(f.message().find("the allocation is split"), std::string::npos) << f.message();
      ++warned;
    }
  }
  EXPECT_EQ(warned, 2);
}

// A board wired at x8 shows `Max 16x, Current 8x` on every node: the norm, no fault.
TEST_F(Allocation, ALinkWidthEveryNodeSharesIsNoFault) {
  std::string x8 = query_;
  const std::string full = "Current                   : 16x";
  for (std::size_t at = 0; (at = x8.find(full, at)) != std::string::npos;)
    x8.replace(at, full.size(), "Current                   : 8x");
  for (const char* n : {"a1", "a2", "a3"}) Node(n, x8);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
}

// The kernel log's Xids, read by the engine's own recognisers: a double-bit ECC error fails the
// node (on the GPU at that bus id); an application's MMU fault (31) and a secondary code (45) warn.
TEST_F(Allocation, AGpusXidInTheKernelLogFailsItsNodeAndAnApplicationsOnlyWarns) {
  Node("gpu-0001", query_);
  Node("gpu-0002", query_);
  Node("gpu-0003", query_);
  // Real lines (tests/data/real_lines), the first's bus id set to one of the node's GPUs.
  Put(dir_.path() / "gpu-0002" / "dmesg",
      "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:5d:00): 48, "
      "pid='<unknown>', name=<unknown>, An uncorrectable "
      "double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 "
      "partition 7, subpartition 1.\n");
  Put(dir_.path() / "gpu-0003" / "kern.txt",
      "[22859.081860] NVRM: Xid (PCI:0000:18:00): 31, pid=14292, name=python, Ch 00000030, intr "
      "00000000. MMU Fault: ENGINE HOST0 "
      "HUBCLIENT_ESC faulted @ 0x10_00200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n"
      "[23203.142515] NVRM: Xid (PCI:0000:18:00): 31, pid=14566, name=python, Ch 00000030, intr "
      "00000000. MMU Fault: ENGINE HOST0 "
      "HUBCLIENT_ESC faulted @ 0x10_00200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n");
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exclude(), "gpu-0002");
  const auto& dbe = Of(*r, "gpu-0002");
  ASSERT_EQ(dbe.findings_size(), 1);
  EXPECT_EQ(dbe.findings(0).code(), "XID");
  EXPECT_TRUE(dbe.findings(0).fail());
  EXPECT_EQ(dbe.findings(0).gpu(), 3);
  EXPECT_EQ(dbe.findings(0).message(),
            "Xid 48 on GPU 3 (0000:5d:00): an uncorrectable double-bit ECC error");
  EXPECT_EQ(dbe.findings(0).evidence(0).file(), "gpu-0002/dmesg");
  EXPECT_EQ(dbe.findings(0).evidence(0).line(), 1);
  const auto& app = Of(*r, "gpu-0003");
  EXPECT_TRUE(app.pass());
  ASSERT_EQ(app.findings_size(), 1);
  EXPECT_FALSE(app.findings(0).fail());
  EXPECT_EQ(app.findings(0).gpu(), 0);
  EXPECT_NE(app.findings(0).message().find("(2 lines)"), std::string::npos)
      << app.findings(0).message();
}

// ibstat (a real H100 node's eight NDR ports, tests/data/preflight/ibstat): a port down where
// every other node has it up, and one at a lower rate, each named with its line.
TEST_F(Allocation, APortDownOrSlowerThanOnTheOtherNodesFailsItsNode) {
  const std::string ibstat = Slurp(kData / "ibstat/h100_ndr_all_active.txt");
  for (const char* n : {"gpu-0001", "gpu-0002", "gpu-0003"})
    Put(dir_.path() / n / "ib.txt", ibstat);
  // Derived: mlx5_1's port trained at 200 Gb/s; mlx5_4's down, as a ConnectX-7 port without a
  // partner reads (the roce sample's `Down` / `Polling` / `40`).
  Put(dir_.path() / "gpu-0004" / "ib.txt",
      Replace(ibstat, "Rate: 400", "Rate: 200", "CA 'mlx5_1'"));
  std::string down = Replace(ibstat, "State: Active", "State: Down", "CA 'mlx5_4'");
  down = Replace(down, "Physical state: LinkUp", "Physical state: Polling", "CA 'mlx5_4'");
  Put(dir_.path() / "gpu-0005" / "ib.txt", Replace(down, "Rate: 400", "Rate: 40", "CA 'mlx5_4'"));
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exclude(), "gpu-[0004-0005]");
  EXPECT_EQ(r->majority().ib_ports_active(), Of(*r, "gpu-0001").inventory().ib_ports_active());
  EXPECT_EQ(r->majority().ib_rate_gbps(), 400);
  const auto& slow = Of(*r, "gpu-0004");
  ASSERT_EQ(slow.findings_size(), 1);
  EXPECT_EQ(slow.findings(0).code(), "IB_PORT_SLOW");
  EXPECT_EQ(slow.findings(0).device(), "mlx5_1/1");
  EXPECT_EQ(slow.findings(0).message(),
            "port mlx5_1/1 runs at 200 Gb/s where most nodes' run at 400");
  EXPECT_NE(slow.findings(0).evidence(0).text().find("Rate: 200"), std::string::npos);
  const auto& down_node = Of(*r, "gpu-0005");
  ASSERT_EQ(down_node.findings_size(), 1);
  EXPECT_EQ(down_node.findings(0).code(), "IB_PORT_DOWN");
  EXPECT_EQ(down_node.findings(0).message(),
            "port mlx5_4/1 is Down (Polling) where it is Active on 4 of 5 nodes");
  EXPECT_NE(down_node.findings(0).evidence(0).text().find("State: Down"), std::string::npos);
}

// ibv_devinfo where ibstat is not installed (a real mlx4 node, tests/data/preflight/ibv_devinfo):
// a port down on one node while it is active on the others fails it, as with ibstat.
TEST_F(Allocation, IbvDevinfosPortsAreJudgedAsIbstats) {
  const std::string verbs = Slurp(kData / "ibv_devinfo/mlx4_two_hcas.txt");
  for (const char* n : {"n1", "n2", "n3"}) Put(dir_.path() / n / "verbs", verbs);
  Put(dir_.path() / "n4" / "verbs",
      Replace(verbs, "PORT_ACTIVE (4)", "PORT_DOWN (1)", "hca_id:\tmlx4_0"));
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exclude(), "n4");
  EXPECT_EQ(Of(*r, "n1").sources(0).tool(), "ibv_devinfo");
  const auto& down = Of(*r, "n4");
  ASSERT_EQ(down.findings_size(), 1);
  EXPECT_EQ(down.findings(0).code(), "IB_PORT_DOWN");
  EXPECT_EQ(down.findings(0).device(), "mlx4_0/1");
  EXPECT_NE(down.findings(0).evidence(0).text().find("PORT_DOWN (1)"), std::string::npos);
}

// A port down on every node is one the fabric does not use: no finding.
TEST_F(Allocation, APortDownEverywhereIsNotAFault) {
  const std::string roce = Slurp(kData / "ibstat/h100_roce_ports_down.txt");
  for (const char* n : {"a", "b", "c"}) Put(dir_.path() / n / "ibstat", roce);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
}

// nvidia-smi topo -m (a real A100 SXM4 node: NV12 between every pair): a pair of GPUs with
// fewer NVLinks (one of the two cells is enough: a pasted matrix may not be symmetric).
TEST_F(Allocation, AGpuWithFewerNvLinksThanOnTheOtherNodesFailsItsNode) {
  const std::string topo = Slurp(kData / "topo/a100_sxm4_nv12_nic_legend.txt");
  for (const char* n : {"gpu-0001", "gpu-0002", "gpu-0003"}) Put(dir_.path() / n / "topo", topo);
  // Derived: GPU5 lost half its links to GPU6 (NV12 -> NV6 in its row).
  Put(dir_.path() / "gpu-0004" / "topo", Replace(topo, "NV12\t X ", "NV6\t X ", "\nGPU6\t"));
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->majority().nvlinks_per_pair(), 12);
  EXPECT_EQ(r->exclude(), "gpu-0004");
  const auto& odd = Of(*r, "gpu-0004");
  ASSERT_EQ(odd.findings_size(), 1);
  EXPECT_EQ(odd.findings(0).code(), "ODD_NVLINKS");
  EXPECT_EQ(odd.findings(0).device(), "GPU5<->GPU6");
  EXPECT_EQ(odd.findings(0).message(),
            "GPU5 and GPU6 have 6 NVLinks between them where most nodes' have 12");
  EXPECT_EQ(odd.findings(0).evidence(0).line(), 7);
}

// A GPU whose nearest NIC sits across the CPUs' interconnect on one node only: a warning.
TEST_F(Allocation, AGpuFartherFromItsNicThanOnTheOtherNodesWarns) {
  const std::string topo = Slurp(kData / "topo/a100_sxm4_nv12_nic_legend.txt");
  for (const char* n : {"gpu-0001", "gpu-0002", "gpu-0003"}) Put(dir_.path() / n / "topo", topo);
  // Derived: GPU0's two PXB NICs (NIC0, NIC1) behind the SMP interconnect.
  Put(dir_.path() / "gpu-0004" / "topo", Replace(topo, "\tPXB\tPXB\t", "\tSYS\tSYS\t", "\nGPU0\t"));
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
  const auto& odd = Of(*r, "gpu-0004");
  ASSERT_EQ(odd.findings_size(), 1);
  EXPECT_EQ(odd.findings(0).code(), "ODD_GPU_NIC_AFFINITY");
  EXPECT_FALSE(odd.findings(0).fail());
  EXPECT_EQ(odd.findings(0).message(),
            "GPU0's nearest NIC is SYS away where most nodes' GPU0 reaches one through PXB");
}

// nccl-tests between pairs of nodes (a real 2 x 8 H100 all_reduce run, its hosts renamed): the
// node slow in all of its runs fails; a slow pair that neither node explains is the link's.
class Pairs : public Allocation {
 protected:
  void Run(const std::string& a, const std::string& b, const std::string& busbw) {
    std::string run = Slurp(kData / "nccl_tests/all_reduce_h100_2nodes_mpirun.txt");
    for (std::size_t at = 0; (at = run.find("ztan-mig-235z", at)) != std::string::npos;)
      run.replace(at, 13, a);
    for (std::size_t at = 0; (at = run.find("ztan-mig-gq73", at)) != std::string::npos;)
      run.replace(at, 13, b);
    run = Replace(run, "180.71  338.82", "180.71  " + busbw);
    run = Replace(run, "179.92  337.35", "179.92  " + busbw);  // in place as slow
    Put(dir_.path() / ("pair-" + a + "-" + b + ".txt"), run);
  }
};

TEST_F(Pairs, TheNodeSlowInAllItsRunsFailsAndASlowLinkIsNamedOnBothEnds) {
  for (const char* n : {"n1", "n2", "n3", "n4", "n5", "n6"}) Node(n, query_);
  // n3 slow in every pair it is in; the n5-n6 link slow while n5 and n6 are fine elsewhere.
  Run("n1", "n2", "338.82");
  Run("n1", "n3", "150.10");
  Run("n2", "n3", "149.80");
  Run("n3", "n4", "151.00");
  Run("n4", "n5", "337.00");
  Run("n5", "n6", "120.00");
  Run("n6", "n1", "339.50");
  Run("n2", "n4", "336.40");
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exclude(), "n3");
  const auto& n3 = Of(*r, "n3");
  ASSERT_EQ(n3.findings_size(), 1);
  EXPECT_EQ(n3.findings(0).code(), "BUSBW_LOW");
  EXPECT_EQ(n3.findings(0).message(),
            "nccl-tests all_reduce: slow in all 3 of its runs, bus bandwidth 150.1, 149.8, 151 "
            "GB/s at the largest size, below 80% of the "
            "median 336.4 GB/s of 8 runs of its shape");
  EXPECT_EQ(n3.findings(0).evidence_size(), 3);
  EXPECT_EQ(n3.findings(0).evidence(0).file(), "pair-n1-n3.txt");
  for (const char* end : {"n5", "n6"}) {
    const auto& n = Of(*r, end);
    EXPECT_TRUE(n.pass()) << end;
    ASSERT_EQ(n.findings_size(), 1) << end;
    EXPECT_FALSE(n.findings(0).fail());
    EXPECT_EQ(n.findings(0).device(), "n5<->n6");
  }
  for (const char* fine : {"n1", "n2", "n4"}) EXPECT_TRUE(Of(*r, fine).findings().empty()) << fine;
}

// `nvidia-smi -q -x` (a real A10G's XML, tests/data/gpu_health/smi_xml) read like the text: the
// node whose link runs at x8 where the others' run at x16 fails, under any file name.
TEST_F(Allocation, TheXmlFormIsJudgedLikeTheText) {
  const std::string xml =
      Slurp(fs::path(DENPEX_SOURCE_DIR) / "tests/data/gpu_health/smi_xml/a10g.xml");
  const std::string x16 = Replace(xml, "<current_link_width>8x</current_link_width>",
                                  "<current_link_width>16x</current_link_width>");
  for (const char* n : {"g1", "g2", "g3"}) Put(dir_.path() / n / "smi", x16);
  Put(dir_.path() / "g4" / "smi", xml);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exclude(), "g4");
  EXPECT_EQ(Of(*r, "g1").sources(0).tool(), "nvidia-smi -q -x");
  const auto& g4 = Of(*r, "g4");
  ASSERT_EQ(g4.findings_size(), 1);
  EXPECT_EQ(g4.findings(0).code(), "PCIE_WIDTH_DEGRADED");
  EXPECT_NE(g4.findings(0).evidence(0).text().find("<current_link_width>8x</current_link_width>"),
            std::string::npos);
}

// The history store: two earlier hardware incidents make a repeat offender (fails, as `denpex
// diagnose --history` drains it), one warns, an application's does not count.
TEST_F(Allocation, ANodeWithTwoEarlierHardwareIncidentsFailsAsARepeatOffender) {
  for (const char* n : {"gpu-0001", "gpu-0002", "gpu-0003"}) Node(n, query_);
  const fs::path store =
      dir_.path().parent_path() / (dir_.path().filename().string() + "-history.jsonl");
  auto entry = [](const char* node, const char* owner, const char* klass) {
    return std::string("{\"time\": \"2026-11-02T10:00:00Z\", \"node\": \"") + node +
           "\", \"gpu\": \"0000:5d:00\", \"failure_class\": \"" + klass + "\", \"owner\": \"" +
           owner + "\", \"incident\": \"/incidents/a\", \"action\": \"ACTION_DRAIN_NODE\"}\n";
  };
  Put(store, entry("gpu-0002", "OWNER_GPU_HARDWARE", "FAILURE_CLASS_GPU_ECC") +
                 entry("gpu-0002", "OWNER_HOST", "FAILURE_CLASS_HOST_OOM") +
                 entry("gpu-0003", "OWNER_GPU_HARDWARE", "FAILURE_CLASS_GPU_ECC") +
                 entry("gpu-0001", "OWNER_APPLICATION", "FAILURE_CLASS_CUDA_ERROR"));
  auto r = PreflightFrom(dir_.path(), {.history = store});
  fs::remove(store);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& p : r->problems()) ADD_FAILURE() << p;
  EXPECT_EQ(r->exclude(), "gpu-0002");
  const auto& twice = Of(*r, "gpu-0002");
  ASSERT_EQ(twice.findings_size(), 1);
  EXPECT_EQ(twice.findings(0).code(), "REPEAT_OFFENDER");
  EXPECT_EQ(twice.findings(0).message(),
            "2 earlier hardware incident(s) in the history store (2026-11-02 GPU_ECC on GPU "
            "0000:5d:00, 2026-11-02 HOST_OOM on GPU 0000:5d:00): drain it");
  ASSERT_EQ(Of(*r, "gpu-0003").findings_size(), 1);
  EXPECT_FALSE(Of(*r, "gpu-0003").findings(0).fail());
  EXPECT_TRUE(Of(*r, "gpu-0001").findings().empty());
}

TEST_F(Allocation, NothingRecognisedIsAnErrorThatSaysWhatIsRead) {
  Put(dir_.path() / "gpu-0001" / "notes.txt", "nothing here\n");
  auto r = PreflightFrom(dir_.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no tool output recognised"), std::string::npos);
  EXPECT_FALSE(PreflightFrom(dir_.path() / "absent").ok());
}

TEST_F(Allocation, ANodeWithoutOutputsAndABinaryFileAreProblemsNotFailures) {
  Node("gpu-0001", query_);
  Node("gpu-0002", query_);
  Put(dir_.path() / "gpu-0003" / "empty.log", "");
  Put(dir_.path() / "gpu-0001" / "core", std::string("\x7f"
                                                     "ELF\0\0\0",
                                                     7));
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict(), v1::PREFLIGHT_PASS);
  ASSERT_EQ(r->problems_size(), 2);
  EXPECT_EQ(r->problems(0), "gpu-0001/core: a binary file, skipped");
  EXPECT_NE(r->problems(1).find("gpu-0003: no tool output recognised"), std::string::npos);
}

// One file of every node's output, as `pdsh -w gpu-[0001-0004] ibstat > all.txt` leaves it (each
// line `host: `): judged as one folder per node, the finding citing the line in that file.
TEST_F(Allocation, APdshCollectionInOneFileIsJudgedPerHostAndCitesItsLines) {
  const std::string ibstat = Slurp(kData / "ibstat/h100_ndr_all_active.txt");
  const std::string slow = Replace(ibstat, "Rate: 400", "Rate: 200", "CA 'mlx5_1'");
  std::string all;
  for (const char* host : {"gpu-0001", "gpu-0002", "gpu-0003", "gpu-0004"}) {
    std::istringstream in(std::string(host) == "gpu-0003" ? slow : ibstat);
    for (std::string line; std::getline(in, line);) all += std::string(host) + ": " + line + "\n";
  }
  Put(dir_.path() / "collected" / "ibstat-all.txt", all);  // in a folder: the lines say whose
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nodes_size(), 4);  // no node `collected`
  EXPECT_EQ(r->exclude(), "gpu-0003");
  const auto& odd = Of(*r, "gpu-0003");
  ASSERT_EQ(odd.findings_size(), 1);
  ASSERT_EQ(odd.findings(0).evidence_size(), 1);
  const auto& e = odd.findings(0).evidence(0);
  EXPECT_EQ(e.file(), "collected/ibstat-all.txt");
  EXPECT_NE(e.text().find("gpu-0003: "), std::string::npos) << e.text();
  EXPECT_NE(e.text().find("Rate: 200"), std::string::npos) << e.text();
  EXPECT_EQ(odd.sources(0).file(), "collected/ibstat-all.txt");
}

// dshbak -c / clush -b: identical outputs printed once under their hosts' list.
TEST_F(Allocation, ADshbakCollectionGivesEachListedHostItsBlock) {
  const std::string ibstat = Slurp(kData / "ibstat/h100_ndr_all_active.txt");
  const std::string slow = Replace(ibstat, "Rate: 400", "Rate: 200", "CA 'mlx5_1'");
  Put(dir_.path() / "clush.txt", "---------------\nn[01-03,05] (4)\n---------------\n" + ibstat +
                                     "---------------\nn04\n---------------\n" + slow);
  auto r = PreflightFrom(dir_.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->nodes_size(), 5);
  EXPECT_EQ(r->exclude(), "n04");
}

TEST(HostSplit, PdshLinesAndHostListsAndWhatIsNeither) {
  auto parts = preflight::SplitByHost("a1: x\nb2: y\na1: z\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].host, "a1");
  EXPECT_EQ(parts[0].text, "x\nz\n");
  EXPECT_EQ(parts[0].lines, (std::vector<std::int32_t>{1, 3}));
  // srun's task labels, syslog tags and a tool's own `key: value` lines are not hosts.
  EXPECT_TRUE(preflight::SplitByHost("0: # nThread 1\n1: # nThread 1\n").empty());
  EXPECT_TRUE(
      preflight::SplitByHost("kernel: NVRM: Xid (PCI:0000:18:00): 79\nkernel: x\n").empty());
  EXPECT_TRUE(preflight::SplitByHost(Slurp(kData / "ibstat/h100_ndr_all_active.txt")).empty());
  EXPECT_TRUE(preflight::SplitByHost(Slurp(kData / "nvidia-smi-q/h800_one_gpu.txt")).empty());
  EXPECT_EQ(preflight::ExpandHostList("gpu-[0009-0011,0020],login1"),
            (std::vector<std::string>{"gpu-0009", "gpu-0010", "gpu-0011", "gpu-0020", "login1"}));
  EXPECT_TRUE(preflight::ExpandHostList("gpu-[3-1]").empty());
  EXPECT_TRUE(preflight::ExpandHostList("gpu-[1-99999999]").empty());
  EXPECT_TRUE(preflight::ExpandHostList("a b").empty());
}

TEST(SlurmHostList, RangesKeepTheirPaddingAndOtherNamesStandAlone) {
  EXPECT_EQ(SlurmHostList({}), "");
  EXPECT_EQ(SlurmHostList({"gpu-0041"}), "gpu-0041");
  EXPECT_EQ(SlurmHostList({"gpu-0045", "gpu-0041", "gpu-0043", "gpu-0044", "login1", "gpu-0041"}),
            "gpu-[0041,0043-0045],login1");
  // Numbers of other widths are other groups: still a valid list of the same hosts.
  EXPECT_EQ(SlurmHostList({"n9", "n10", "n11"}), "n[10-11],n9");
  EXPECT_EQ(SlurmHostList({"n10", "n11"}), "n[10-11]");
  EXPECT_EQ(SlurmHostList({"node", "gpu-a"}), "gpu-a,node");
}

}  // namespace
}  // namespace denpex::engine
