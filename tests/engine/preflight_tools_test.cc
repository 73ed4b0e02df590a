// The preflight tool parsers read real captures (tests/data/preflight/, sources in SOURCES.md):
// each gives the facts its tool printed, nothing for the other tools' files, and never crashes
// on cut or garbled text.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "preflight/tool_outputs.h"

namespace denpex::engine::preflight {
namespace {

std::string Sample(const std::string& relative) {
  const std::string path = std::string(DENPEX_SOURCE_DIR) + "/tests/data/preflight/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every line of `text` with `prefix` in front, as a launcher that labels output writes it.
std::string Prefixed(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

const TopoMatrix::Row* RowOf(const TopoMatrix& m, const std::string& device) {
  for (const TopoMatrix::Row& r : m.rows) {
    if (r.device == device) return &r;
  }
  return nullptr;
}

const std::vector<std::string> kIbstat = {"ibstat/h100_ndr_all_active.txt",
                                          "ibstat/h100_roce_ports_down.txt"};
const std::vector<std::string> kTopo = {
    "topo/v100_power9_mlx5_columns.txt", "topo/a100_sxm4_nv12_nic_legend.txt",
    "topo/rtx6000ada_pcie_gpu_numa_id.txt", "topo/h100_nv18_9nics_truncated.txt"};
const std::vector<std::string> kDcgm = {"dcgm/dcgm4_gb10_software_fail.json",
                                        "dcgm/dcgm4_8gpu_diagnostic_pass_issue215.json",
                                        "dcgm/dcgm3_t400_skip_issue139.json"};
const std::vector<std::string> kNccl = {"nccl_tests/all_reduce_h100_2nodes_mpirun.txt",
                                        "nccl_tests/sendrecv_a100_8gpu.txt",
                                        "nccl_tests/broadcast_v100_old_format_truncated.txt"};

// ---- ibstat ----

TEST(PreflightIbstat, ReadsEveryPortOfAnNdrNode) {
  const std::vector<IbPort> ports = ParseIbstat(Sample(kIbstat[0]));
  ASSERT_EQ(ports.size(), 9u);
  EXPECT_EQ(ports[0].ca, "mlx5_0");
  EXPECT_EQ(ports[0].port, 1);
  EXPECT_EQ(ports[0].state, "Active");
  EXPECT_EQ(ports[0].physical_state, "LinkUp");
  EXPECT_EQ(ports[0].rate_gbps, 400);
  EXPECT_EQ(ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(ports[0].line, 9);
  EXPECT_EQ(ports[0].rate_line, 11);
  for (const IbPort& p : ports) EXPECT_EQ(p.state, "Active") << p.ca;
  EXPECT_EQ(ports.back().ca, "mlx5_bond_0");
  EXPECT_EQ(ports.back().rate_gbps, 200);
  EXPECT_EQ(ports.back().link_layer, "Ethernet");
}

TEST(PreflightIbstat, ReportsDownPortsPollingAndDisabled) {
  const std::vector<IbPort> ports = ParseIbstat(Sample(kIbstat[1]));
  ASSERT_EQ(ports.size(), 12u);
  const auto down =
      std::count_if(ports.begin(), ports.end(), [](const IbPort& p) { return p.state == "Down"; });
  EXPECT_EQ(down, 2);
  const auto polling =
      std::find_if(ports.begin(), ports.end(), [](const IbPort& p) { return p.ca == "mlx5_11"; });
  ASSERT_NE(polling, ports.end());
  EXPECT_EQ(polling->state, "Down");
  EXPECT_EQ(polling->physical_state, "Polling");
  EXPECT_EQ(polling->rate_gbps, 40);  // a down port's rate is a default, not a link speed
  EXPECT_EQ(polling->line, 60);
  EXPECT_EQ(polling->rate_line, 62);
  const auto disabled =
      std::find_if(ports.begin(), ports.end(), [](const IbPort& p) { return p.ca == "mlx5_5"; });
  ASSERT_NE(disabled, ports.end());
  EXPECT_EQ(disabled->physical_state, "Disabled");
  EXPECT_EQ(disabled->line, 128);
  const auto at100 =
      std::count_if(ports.begin(), ports.end(), [](const IbPort& p) { return p.rate_gbps == 100; });
  EXPECT_EQ(at100, 4);  // the ConnectX-6 Dx ports
}

// ---- nvidia-smi topo -m ----

// ibv_devinfo (a real node with two ConnectX-3 HCAs, port 2 of each down), its words made
// ibstat's; without -v it prints no physical state and no rate.
TEST(PreflightIbvDevinfo, ReadsEachHcasPortsInIbstatsWords) {
  const std::string text = Sample("ibv_devinfo/mlx4_two_hcas.txt");
  const std::vector<IbPort> ports = ParseIbvDevinfo(text);
  ASSERT_EQ(ports.size(), 4u);
  EXPECT_EQ(ports[0].ca, "mlx4_1");
  EXPECT_EQ(ports[0].port, 1);
  EXPECT_EQ(ports[0].state, "Active");
  EXPECT_EQ(ports[0].physical_state, "");
  EXPECT_EQ(ports[0].rate_gbps, 0);
  EXPECT_EQ(ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(ports[0].line, 13);
  EXPECT_EQ(ports[1].state, "Down");
  EXPECT_EQ(ports[3].ca, "mlx4_0");
  EXPECT_EQ(ports[3].port, 2);
  EXPECT_TRUE(ParseIbstat(text).empty());
  EXPECT_TRUE(ParseIbvDevinfo(Sample("ibstat/h100_ndr_all_active.txt")).empty());
}

// With -v (the port lines rdma-core's devinfo.c prints, added to the real sample): the physical
// state and the rate, the active width times a lane's speed.
TEST(PreflightIbvDevinfo, ReadsTheRateAndPhysicalStateOfVerbose) {
  std::string text = Sample("ibv_devinfo/mlx4_two_hcas.txt");
  const std::string active = "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n";
  text.replace(text.find(active), active.size(),
               active +
                   "\t\t\tphys_state:\t\tLINK_UP (5)\n\t\t\tactive_width:\t\t4X "
                   "(2)\n\t\t\tactive_speed:\t\t100.0 Gbps (128)\n");
  const std::vector<IbPort> ports = ParseIbvDevinfo(text);
  ASSERT_EQ(ports.size(), 4u);
  EXPECT_EQ(ports[0].physical_state, "LinkUp");
  EXPECT_EQ(ports[0].rate_gbps, 400);
  EXPECT_EQ(ports[0].rate_line, 16);
  EXPECT_EQ(ports[2].rate_gbps, 0);  // the other HCA's port 1 printed no -v lines
}

TEST(PreflightTopo, ReadsAnOlderDriversMlx5Columns) {
  const std::optional<TopoMatrix> m = ParseTopoMatrix(Sample(kTopo[0]));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->columns, (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "mlx5_0",
                                                  "mlx5_1", "mlx5_2", "mlx5_3"}));
  ASSERT_EQ(m->rows.size(), 8u);
  const TopoMatrix::Row* gpu2 = RowOf(*m, "GPU2");
  ASSERT_TRUE(gpu2);
  EXPECT_EQ(gpu2->cells[3], "NV3");
  EXPECT_EQ(gpu2->cpu_affinity, "64-127");
  EXPECT_EQ(gpu2->numa_affinity, "8");
  EXPECT_EQ(gpu2->line, 4);
  for (int g = 0; g < 4; ++g) EXPECT_EQ(m->NvLinks(m->rows[g]), 3) << g;
  const TopoMatrix::Row* nic = RowOf(*m, "mlx5_1");
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->cells[4], "PIX");
  EXPECT_EQ(nic->cpu_affinity, "");
  EXPECT_TRUE(m->nic_names.empty());
}

TEST(PreflightTopo, ReadsATabSeparatedA100MatrixAndItsNicLegend) {
  const std::optional<TopoMatrix> m = ParseTopoMatrix(Sample(kTopo[1]));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->columns.size(), 18u);
  EXPECT_EQ(m->columns[8], "NIC0");
  ASSERT_EQ(m->rows.size(), 18u);
  for (int g = 0; g < 8; ++g) EXPECT_EQ(m->NvLinks(m->rows[g]), 7 * 12) << g;
  const TopoMatrix::Row* gpu4 = RowOf(*m, "GPU4");
  ASSERT_TRUE(gpu4);
  EXPECT_EQ(gpu4->cpu_affinity, "112-127,240-255");
  EXPECT_EQ(gpu4->numa_affinity, "7");
  EXPECT_EQ(gpu4->cells[4], "X");
  EXPECT_EQ(gpu4->cells[12], "PXB");
  ASSERT_EQ(m->nic_names.size(), 10u);
  EXPECT_EQ(m->nic_names[0], (std::pair<std::string, std::string>{"NIC0", "mlx5_0"}));
  EXPECT_EQ(m->nic_names[9], (std::pair<std::string, std::string>{"NIC9", "mlx5_9"}));
  EXPECT_EQ(m->NvLinks(*RowOf(*m, "NIC0")), 0);
}

TEST(PreflightTopo, LeavesTheGpuNumaIdColumnOutOfTheDevices) {
  const std::optional<TopoMatrix> m = ParseTopoMatrix(Sample(kTopo[2]));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->columns.size(), 8u);
  ASSERT_EQ(m->rows.size(), 8u);
  EXPECT_EQ(m->rows[2].numa_affinity, "1");
  EXPECT_EQ(m->rows[2].cpu_affinity, "32-63");
  for (const TopoMatrix::Row& r : m->rows) EXPECT_EQ(m->NvLinks(r), 0) << r.device;
  ASSERT_EQ(m->nic_names.size(), 4u);
  EXPECT_EQ(m->nic_names[3].second, "mlx5_3");
}

TEST(PreflightTopo, KeepsTheWholeRowsOfACutH100Matrix) {
  const std::optional<TopoMatrix> m = ParseTopoMatrix(Sample(kTopo[3]));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->columns.size(), 17u);
  ASSERT_EQ(m->rows.size(), 6u);  // GPU6's row is cut after its own cell: dropped
  for (const TopoMatrix::Row& r : m->rows) EXPECT_EQ(m->NvLinks(r), 7 * 18) << r.device;
  EXPECT_EQ(m->rows[3].cpu_affinity, "24-47,120-143");
  EXPECT_EQ(m->rows[3].numa_affinity, "1");
  EXPECT_EQ(m->rows[4].cells[13], "PIX");
  EXPECT_TRUE(m->nic_names.empty());
}

// Found by preflight_tools_fuzz: a cell `NV-119` once summed to a negative count.
TEST(PreflightTopo, CountsOnlyCellsThatAreLinkCounts) {
  const std::optional<TopoMatrix> m =
      ParseTopoMatrix("GPU0 GPU1 GPU2 GPU3\nGPU0 X NV-119 NV99999 NV4\n");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->rows.size(), 1u);
  EXPECT_EQ(m->NvLinks(m->rows[0]), 4);
}

// Derived: the header underlined with ANSI escapes, as nvidia-smi writes it to a terminal.
TEST(PreflightTopo, ReadsAHeaderUnderlinedWithAnsiEscapes) {
  std::string text = Sample(kTopo[0]);
  text = "\x1b[4m" + text.substr(0, text.find('\n')) + "\x1b[0m" + text.substr(text.find('\n'));
  const std::optional<TopoMatrix> m = ParseTopoMatrix(text);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->columns.size(), 8u);
  EXPECT_EQ(m->rows.size(), 8u);
}

// ---- dcgmi diag -j ----

TEST(PreflightDcgm, ReadsADcgm4FailureWithItsWarningAndDriver) {
  const std::optional<DcgmDiag> d = ParseDcgmDiagJson(Sample(kDcgm[0]));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->driver_version, "580.82.09");
  EXPECT_EQ(d->dcgm_version, "4.2.3");
  EXPECT_EQ(d->runtime_error, "");
  ASSERT_EQ(d->tests.size(), 1u);
  EXPECT_EQ(d->tests[0].name, "software");
  EXPECT_EQ(d->tests[0].gpu, 0);
  EXPECT_EQ(d->tests[0].result, "Fail");
  EXPECT_NE(d->tests[0].info.find("Persistence mode for GPU 0 is disabled"), std::string::npos);
  EXPECT_NE(d->tests[0].info.find("DCGM_FR 29"), std::string::npos);
}

TEST(PreflightDcgm, ReadsOneResultPerGpuOfADcgm4Test) {
  const std::optional<DcgmDiag> d = ParseDcgmDiagJson(Sample(kDcgm[1]));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->driver_version, "");
  ASSERT_EQ(d->tests.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(d->tests[g].name, "diagnostic");
    EXPECT_EQ(d->tests[g].gpu, g);
    EXPECT_EQ(d->tests[g].result, "Pass");
  }
  EXPECT_NE(d->tests[0].info.find("859.08 gigaflops"), std::string::npos);
}

TEST(PreflightDcgm, ReadsADcgm3DocumentWithGpuIdKeys) {
  const std::optional<DcgmDiag> d = ParseDcgmDiagJson(Sample(kDcgm[2]));
  ASSERT_TRUE(d);
  ASSERT_EQ(d->tests.size(), 5u);
  EXPECT_EQ(d->tests[0].name, "PCIe");
  EXPECT_EQ(d->tests[1].name, "GPU Memory");
  EXPECT_EQ(d->tests[4].name, "Targeted Stress");
  for (const DcgmTest& t : d->tests) {
    EXPECT_EQ(t.gpu, 0) << t.name;
    EXPECT_EQ(t.result, "Skip") << t.name;
  }
}

// The 2.x/3.x shapes DCGM's JsonOutput.cpp writes (derived, not a capture): a deployment test's
// CSV `gpu_ids` is the whole node, a hardware test's numeric one is its GPU, warnings may be
// plain strings, statuses may be upper case, and a banner may precede the document.
TEST(PreflightDcgm, ReadsTheDcgm3ShapesItsWriterAllows) {
  const std::string text = R"(Successfully ran diagnostic for group.
{"DCGM GPU Diagnostic": {"test_categories": [
  {"category": "Deployment", "tests": [
    {"name": "Persistence Mode", "results": [{"gpu_ids": "0,1,2,3", "status": "PASS"}]}]},
  {"category": "Hardware", "tests": [
    {"name": "GPU Memory", "results": [
      {"gpu_ids": 2, "status": "FAIL", "warnings": ["GPU 2 Error using CUDA API cuCtxCreate"],
       "info": "GPU 2 bandwidth"}]}]}],
  "Driver Version Detected": "535.129.03", "version": "3.3.1"}})";
  const std::optional<DcgmDiag> d = ParseDcgmDiagJson(text);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->driver_version, "535.129.03");
  EXPECT_EQ(d->dcgm_version, "3.3.1");
  ASSERT_EQ(d->tests.size(), 2u);
  EXPECT_EQ(d->tests[0].gpu, -1);
  EXPECT_EQ(d->tests[0].result, "Pass");
  EXPECT_EQ(d->tests[1].gpu, 2);
  EXPECT_EQ(d->tests[1].result, "Fail");
  EXPECT_EQ(d->tests[1].info, "GPU 2 Error using CUDA API cuCtxCreate");
}

// DCGM 4's schema (testing/python3/dcgm_diag_schema.json) allows a run that failed as a whole:
// `runtime_error` and no tests (derived, not a capture). Keys in another order than jsoncpp's
// still name their results.
TEST(PreflightDcgm, ReadsARunThatCouldNotRun) {
  const std::optional<DcgmDiag> d = ParseDcgmDiagJson(
      R"({"DCGM Diagnostic": {"runtime_error": "Unable to run diagnostic: GPUs are busy"},
          "metadata": {"version": "4.2.3"}})");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->tests.empty());
  EXPECT_EQ(d->runtime_error, "Unable to run diagnostic: GPUs are busy");
  EXPECT_EQ(d->dcgm_version, "4.2.3");

  const std::optional<DcgmDiag> late = ParseDcgmDiagJson(
      R"({"DCGM Diagnostic": {"test_categories": [{"tests": [
          {"results": [{"entity_group": "GPU", "entity_id": 3, "status": "Warn"}],
           "name": "pcie"}]}]}})");
  ASSERT_TRUE(late);
  ASSERT_EQ(late->tests.size(), 1u);
  EXPECT_EQ(late->tests[0].name, "pcie");
  EXPECT_EQ(late->tests[0].gpu, 3);
  EXPECT_EQ(late->tests[0].result, "Warn");
}

TEST(PreflightDcgm, KeepsWhatACutDocumentHeldBeforeTheCut) {
  const std::string text = Sample(kDcgm[1]);
  const std::optional<DcgmDiag> d = ParseDcgmDiagJson(text.substr(0, text.size() / 2));
  ASSERT_TRUE(d);
  EXPECT_GT(d->tests.size(), 0u);
  EXPECT_LT(d->tests.size(), 8u);
}

// ---- nccl-tests ----

void ExpectAllReduceRun(const NcclTestsRun& run) {
  EXPECT_EQ(run.test, "all_reduce");
  ASSERT_EQ(run.hosts.size(), 16u);
  EXPECT_EQ(run.hosts[0], "ztan-mig-235z");
  EXPECT_EQ(run.hosts[7], "ztan-mig-235z");
  EXPECT_EQ(run.hosts[8], "ztan-mig-gq73");
  ASSERT_EQ(run.rows.size(), 31u);
  EXPECT_EQ(run.rows[0].bytes, 8u);
  EXPECT_EQ(run.rows[0].count, 2u);
  EXPECT_EQ(run.rows[0].type, "float");
  EXPECT_DOUBLE_EQ(run.rows[0].oop_time_us, 135.8);
  EXPECT_EQ(run.rows[0].line, 32);
  const NcclTestsRow& last = run.rows.back();
  EXPECT_EQ(last.bytes, 8589934592u);
  EXPECT_EQ(last.count, 2147483648u);
  EXPECT_DOUBLE_EQ(last.oop_time_us, 47535);
  EXPECT_DOUBLE_EQ(last.oop_algbw, 180.71);
  EXPECT_DOUBLE_EQ(last.oop_busbw, 338.82);
  EXPECT_DOUBLE_EQ(last.ip_busbw, 337.35);
  EXPECT_EQ(last.wrong, 0);
  EXPECT_EQ(last.line, 62);
  EXPECT_DOUBLE_EQ(run.avg_busbw, 70.742);
  EXPECT_EQ(run.avg_line, 64);
  EXPECT_FALSE(run.out_of_bounds);
}

TEST(PreflightNcclTests, ReadsATwoNodeAllReduce) {
  const std::vector<NcclTestsRun> runs = ParseNcclTests(Sample(kNccl[0]));
  ASSERT_EQ(runs.size(), 1u);
  ExpectAllReduceRun(runs[0]);
}

// Derived: the same output as `srun --label` and `mpirun --tag-output` write it.
TEST(PreflightNcclTests, PeelsLauncherLabels) {
  for (const std::string prefix : {"0: ", " 0: ", "[1,0]<stdout>:"}) {
    const std::vector<NcclTestsRun> runs = ParseNcclTests(Prefixed(Sample(kNccl[0]), prefix));
    ASSERT_EQ(runs.size(), 1u) << prefix;
    ExpectAllReduceRun(runs[0]);
  }
}

TEST(PreflightNcclTests, ReadsACutSendrecvTableWithNaErrors) {
  const std::vector<NcclTestsRun> runs = ParseNcclTests(Sample(kNccl[1]));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "sendrecv");
  EXPECT_TRUE(runs[0].hosts.empty());
  ASSERT_EQ(runs[0].rows.size(), 4u);
  EXPECT_EQ(runs[0].rows[3].bytes, 1073741824u);
  EXPECT_DOUBLE_EQ(runs[0].rows[3].ip_busbw, 195.56);
  EXPECT_EQ(runs[0].rows[3].wrong, 0);  // out-of-place 0, in-place N/A
  EXPECT_EQ(runs[0].avg_busbw, -1);
}

TEST(PreflightNcclTests, ReadsAnOldBroadcastTableByItsColumnNames) {
  const std::vector<NcclTestsRun> runs = ParseNcclTests(Sample(kNccl[2]));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "broadcast");
  EXPECT_EQ(runs[0].hosts, (std::vector<std::string>{"v100-gpu-1", "v100-gpu-5"}));
  ASSERT_EQ(runs[0].rows.size(), 1u);
  EXPECT_EQ(runs[0].rows[0].type, "float");  // no redop column before root
  EXPECT_DOUBLE_EQ(runs[0].rows[0].oop_time_us, 45.82);
  EXPECT_DOUBLE_EQ(runs[0].rows[0].ip_time_us, 38.17);
  EXPECT_EQ(runs[0].rows[0].wrong, -1);  // `error` N/A in both halves
  EXPECT_EQ(runs[0].avg_busbw, -1);
}

TEST(PreflightNcclTests, SplitsRunsOneAfterTheOther) {
  const std::string text = Sample(kNccl[0]) + Sample(kNccl[2]);
  const std::vector<NcclTestsRun> runs = ParseNcclTests(text);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].rows.size(), 31u);
  EXPECT_EQ(runs[1].test, "broadcast");
  EXPECT_EQ(runs[1].hosts.size(), 2u);
}

TEST(PreflightNcclTests, FlagsOutOfBoundsValues) {
  std::string text = Sample(kNccl[0]);
  const std::string ok = "# Out of bounds values : 0 OK";
  text.replace(text.find(ok), ok.size(), "# Out of bounds values : 50 FAILED");
  const std::vector<NcclTestsRun> runs = ParseNcclTests(text);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].out_of_bounds);
}

TEST(PreflightNcclTests, NamesTheTestFromTheCollectiveLine) {
  const std::string text = "# Collective test starting: all_gather_perf\n" + Sample(kNccl[1]);
  const std::vector<NcclTestsRun> runs = ParseNcclTests(text);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "all_gather");  // the binary's own line outranks a command line
}

// ---- recognition by content ----

TEST(PreflightRecognition, EachParserIgnoresTheOtherToolsFiles) {
  for (const std::string& f : kTopo) EXPECT_TRUE(ParseIbstat(Sample(f)).empty()) << f;
  for (const std::string& f : kDcgm) EXPECT_TRUE(ParseIbstat(Sample(f)).empty()) << f;
  for (const std::string& f : kNccl) EXPECT_TRUE(ParseIbstat(Sample(f)).empty()) << f;

  for (const std::string& f : kIbstat) EXPECT_FALSE(ParseTopoMatrix(Sample(f))) << f;
  for (const std::string& f : kDcgm) EXPECT_FALSE(ParseTopoMatrix(Sample(f))) << f;
  for (const std::string& f : kNccl) EXPECT_FALSE(ParseTopoMatrix(Sample(f))) << f;

  for (const std::string& f : kIbstat) EXPECT_FALSE(ParseDcgmDiagJson(Sample(f))) << f;
  for (const std::string& f : kTopo) EXPECT_FALSE(ParseDcgmDiagJson(Sample(f))) << f;
  for (const std::string& f : kNccl) EXPECT_FALSE(ParseDcgmDiagJson(Sample(f))) << f;

  for (const std::string& f : kIbstat) EXPECT_TRUE(ParseNcclTests(Sample(f)).empty()) << f;
  for (const std::string& f : kTopo) EXPECT_TRUE(ParseNcclTests(Sample(f)).empty()) << f;
  for (const std::string& f : kDcgm) EXPECT_TRUE(ParseNcclTests(Sample(f)).empty()) << f;
}

// ---- bad input ----

void ParseAll(std::string_view text) {
  (void)ParseIbstat(text);
  (void)ParseTopoMatrix(text);
  (void)ParseDcgmDiagJson(text);
  (void)ParseNcclTests(text);
}

TEST(PreflightBadInput, CutSamplesGiveNothingOrPartsNeverACrash) {
  std::vector<std::string> all;
  for (const auto* set : {&kIbstat, &kTopo, &kDcgm, &kNccl}) {
    for (const std::string& f : *set) all.push_back(Sample(f));
  }
  for (const std::string& text : all) {
    for (std::size_t n = 0; n <= text.size(); n += 3) ParseAll(std::string_view(text).substr(0, n));
  }
  const std::string ib = Sample(kIbstat[1]);
  EXPECT_LE(ParseIbstat(ib.substr(0, ib.size() / 2)).size(), 12u);
  const std::string nccl = Sample(kNccl[0]);
  const std::vector<NcclTestsRun> cut = ParseNcclTests(nccl.substr(0, nccl.find("# Out of")));
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].avg_busbw, -1);
  EXPECT_EQ(cut[0].rows.size(), 31u);
}

TEST(PreflightBadInput, GarbageGivesNothing) {
  std::mt19937 rng(20261204);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 200; ++round) {
    std::string junk(1 + rng() % 2000, '\0');
    for (char& c : junk) c = static_cast<char>(byte(rng));
    EXPECT_TRUE(ParseIbstat(junk).empty());
    EXPECT_FALSE(ParseTopoMatrix(junk));
    EXPECT_FALSE(ParseDcgmDiagJson(junk));
    EXPECT_TRUE(ParseNcclTests(junk).empty());
  }
  // Fragments of each format out of their context.
  for (const char* s :
       {"CA 'mlx5_0'\nPort x:\n", "Port 1:\n\tState: Active\n", "GPU0\tGPU1\n",
        "{\"DCGM Diagnostic\": [1, 2",
        "{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"tests\": [{\"results\": [7]}]}]}}",
        "#  Rank  99999999999 Group 0 Pid 1 on h device 0\n", "0:\n:\n[\n"}) {
    ParseAll(s);
  }
}

// Every sample byte-flipped in turn at a stride: still no crash.
TEST(PreflightBadInput, FlippedBytesNeverCrash) {
  for (const auto* set : {&kIbstat, &kTopo, &kDcgm, &kNccl}) {
    for (const std::string& f : *set) {
      std::string text = Sample(f);
      for (std::size_t i = 0; i < text.size(); i += 11) {
        const char was = text[i];
        text[i] = static_cast<char>(was ^ 0x5a);
        ParseAll(text);
        text[i] = was;
      }
    }
  }
}

}  // namespace
}  // namespace denpex::engine::preflight
