// The GPU health recognisers (analyze/gpu_health.cc) on real shapes: `nvidia-smi -q` blocks of
// each driver era (ECC, retired pages, remapped rows, "Clocks Throttle Reasons" before 535 and
// "Clocks Event Reasons" after, 560's SRAM Parity / SEC-DED split), `nvidia-smi -L`, `dcgmi
// health -c` with its wrapped message, `dcgmi diag -r 1`'s "Fail - GPU: N" row, dcgm-exporter
// samples under both field spellings, and the launch's CUDA_VISIBLE_DEVICES line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "analyze/gpu_health.h"
#include "ingest/load.h"
#include "support/cpu_time.h"

namespace denpex::engine {
namespace {

// An A100 after an Xid 63 (a row remap pending), 470-era headings.
constexpr const char* kQuery470 = R"(==============NVSMI LOG==============

Timestamp                                 : Mon Mar  2 09:28:02 2026
Driver Version                            : 470.223.02
Attached GPUs                             : 8
GPU 00000000:5D:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    GPU UUID                              : GPU-6fb75e7b-b3ce-ded9-59c5-ef768292bb4f
    Minor Number                          : 3
    Clocks Throttle Reasons
        Idle                              : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Active
            HW Power Brake Slowdown       : Not Active
        SW Thermal Slowdown               : Active
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 177
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 177
            DRAM Uncorrectable            : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 0
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 1 bank(s)
    Temperature
        GPU Current Temp                  : 91 C
)";

TEST(GpuHealth, QueryBlockOf470EraWithThrottleAndPendingRemap) {
  NodeGpuHealth h;
  ParseGpuHealthText(kQuery470, 0, &h);
  ASSERT_EQ(h.gpus.size(), 1u);
  const GpuHealth& g = h.gpus[0];
  EXPECT_EQ(g.pci, "0000:5d:00");
  EXPECT_EQ(g.uuid, "GPU-6fb75e7b-b3ce-ded9-59c5-ef768292bb4f");
  EXPECT_EQ(g.index, 3);
  EXPECT_EQ(g.aggregate_correctable, 177);
  EXPECT_EQ(g.volatile_uncorrectable, 0);
  EXPECT_TRUE(g.remap_pending);
  EXPECT_FALSE(g.remap_failed);
  EXPECT_FALSE(g.MemoryFault());  // corrected errors and a pending remap alone are no fault
  EXPECT_TRUE(g.hw_thermal && g.hw_slowdown && g.sw_thermal && !g.hw_power_brake);
  EXPECT_EQ(g.throttle_line.span.line, 14u);  // HW Thermal Slowdown, the most specific reason
  EXPECT_EQ(g.temperature, 91);
}

TEST(GpuHealth, QueryBlockOf560EraCountsUncorrectableAndFailure) {
  NodeGpuHealth h;
  ParseGpuHealthText(
      "GPU 00000000:DB:00.0\n"
      "    Clocks Event Reasons\n"
      "        HW Slowdown                       : Active\n"
      "            HW Power Brake Slowdown       : Active\n"
      "    ECC Errors\n"
      "        Volatile\n"
      "            SRAM Correctable              : 0\n"
      "            SRAM Uncorrectable Parity     : 0\n"
      "            SRAM Uncorrectable SEC-DED    : 0\n"
      "            DRAM Correctable              : 0\n"
      "            DRAM Uncorrectable            : 2\n"
      "    Remapped Rows\n"
      "        Pending                           : No\n"
      "        Remapping Failure Occurred        : Yes\n",
      4, &h);
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].pci, "0000:db:00");
  EXPECT_EQ(h.gpus[0].volatile_uncorrectable, 2);
  EXPECT_TRUE(h.gpus[0].remap_failed);
  EXPECT_TRUE(h.gpus[0].MemoryFault());
  EXPECT_TRUE(h.gpus[0].hw_power_brake);
  EXPECT_EQ(h.gpus[0].memory_line.file, 4);
  EXPECT_EQ(h.gpus[0].memory_line.span.line, 14u);  // the failure decides the action
}

TEST(GpuHealth, PrePascalRetiredPagesAndTheTableAndListJoinOnIndex) {
  NodeGpuHealth h;
  ParseGpuHealthText(
      "|   2  Tesla V100-SXM2-32GB           On  | 00000000:3A:00.0 Off |                    1 |\n"
      "GPU 2: Tesla V100-SXM2-32GB (UUID: GPU-0aa1b2c3-d4e5-f607-1829-3a4b5c6d7e8f)\n"
      "GPU 00000000:3A:00.0\n"
      "    Retired Pages\n"
      "        Single Bit ECC                    : 0\n"
      "        Double Bit ECC                    : 1\n"
      "        Pending Page Blacklist            : Yes\n"
      "    Remapped Rows                         : N/A\n",
      0, &h);
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].index, 2);
  EXPECT_EQ(h.gpus[0].uuid, "GPU-0aa1b2c3-d4e5-f607-1829-3a4b5c6d7e8f");
  EXPECT_EQ(h.gpus[0].retired_dbe, 1);
  EXPECT_TRUE(h.gpus[0].retire_pending);
  EXPECT_TRUE(h.gpus[0].MemoryFault());
}

TEST(GpuHealth, DcgmiHealthDiagAndExporterSamples) {
  NodeGpuHealth h;
  ParseGpuHealthText(
      "| Overall Health            | Failure                                                  |\n"
      "| GPU                       |                                                          |\n"
      "| -> 3                      | Failure                                                  |\n"
      "|    -> Errors              |                                                          |\n"
      "|       -> Memory system    | Failure                                                  |\n"
      "|                           | GPU 3 had uncorrectable memory errors and row remapping  |\n"
      "|                           | failed.                                                  |\n"
      "| Page Retirement/Row Remap | Pass - GPUs: 0, 1, 2, 4, 5, 6, 7                 |\n"
      "|                           | Fail - GPU: 3                                    |\n"
      "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"3\",UUID=\"GPU-6fb7\",pci_bus_id=\"00000000:5D:00.0\",device=\"nvidia3\",Hostname=\"n1\"} 48\n"
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"3\",UUID=\"GPU-6fb7\",pci_bus_id=\"00000000:5D:00.0\"} 1\n"
      "DCGM_FI_DEV_ROW_REMAP_PENDING{gpu=\"3\",UUID=\"GPU-6fb7\",pci_bus_id=\"00000000:5D:00.0\"} 1\n"
      "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"5\",UUID=\"GPU-aaaa\",pci_bus_id=\"00000000:AB:00.0\"} 104\n"
      "DCGM_FI_DEV_CLOCKS_EVENT_REASONS{gpu=\"6\",UUID=\"GPU-bbbb\",pci_bus_id=\"00000000:BA:00.0\"} 140\n",
      0, &h);
  const GpuHealth* g = h.ByIndex(3);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pci, "0000:5d:00");  // DCGM's gpu id joined with the exporter's bus id
  EXPECT_EQ(g->last_xid, 48);
  EXPECT_EQ(g->volatile_uncorrectable, 1);
  EXPECT_TRUE(g->remap_pending);
  EXPECT_NE(g->dcgm.find("row remapping failed"), std::string::npos) << g->dcgm;
  ASSERT_NE(h.ByPci("0000:ab:00"), nullptr);
  EXPECT_TRUE(h.ByPci("0000:ab:00")->hw_thermal);      // 0x68: HW slowdown, SW and HW thermal
  EXPECT_TRUE(h.ByPci("0000:ba:00")->hw_power_brake);  // 0x8c: power cap, HW slowdown, brake
}

// One node's files that give two different launch lists, or one bus two UUIDs, are two
// machines' (hosts under one name); the same list twice, or a task's own one GPU, is not.
TEST(GpuHealth, TwoDifferentLaunchListsOrOneBusWithTwoUuidsAreSeveralMachines) {
  NodeGpuHealth same;
  ParseVisibleDevices("CUDA_VISIBLE_DEVICES=0,1,2,3\nCUDA_VISIBLE_DEVICES=0,1,2,3\n", 0, &same);
  EXPECT_FALSE(same.several_machines);
  NodeGpuHealth tasks;
  ParseVisibleDevices("CUDA_VISIBLE_DEVICES=3\nCUDA_VISIBLE_DEVICES=5\n", 0, &tasks);
  EXPECT_FALSE(tasks.several_machines);
  NodeGpuHealth lists;
  ParseVisibleDevices("CUDA_VISIBLE_DEVICES=4,5,6,7,0,1,2,3\n", 0, &lists);
  ParseVisibleDevices("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n", 1, &lists);
  EXPECT_TRUE(lists.several_machines);
  EXPECT_EQ(lists.visible.front(), "4");  // the first list stays the node's
  NodeGpuHealth uuids;
  ParseVisibleDevices("Mar  2 09:00:15 host-0 kernel: [1634348.905759] NVRM: GPU at PCI:0000:2a:00: "
                      "GPU-f0c0af39-c33a-f06b-d30b-359fe55b5109\n"
                      "Mar  2 09:00:15 host-0 kernel: [1634348.905759] NVRM: GPU at PCI:0000:2a:00: "
                      "GPU-18556e61-5e34-2e91-ec53-df6d8e9a7a5d\n",
                      0, &uuids);
  EXPECT_TRUE(uuids.several_machines);
}

TEST(GpuHealth, CudaVisibleDevicesByIndexOrUuidAndTheDriversUuidLines) {
  NodeGpuHealth h;
  ParseVisibleDevices("+ torchrun --nnodes 128\nCUDA_VISIBLE_DEVICES=4,5,6,7,0,1,2,3\n", 2, &h);
  ASSERT_EQ(h.visible.size(), 8u);
  EXPECT_EQ(h.visible[0], "4");
  EXPECT_EQ(h.visible_line.span.line, 2u);
  NodeGpuHealth u;
  ParseVisibleDevices("export CUDA_VISIBLE_DEVICES=GPU-1527f224-1553-c68c-f1c2-7aaf6ecf173c,GPU-0aa1\n"
                      "Mar  2 09:17:03 gpu-0001 kernel: [2726584.934322] NVRM: GPU at PCI:0000:db:00: "
                      "GPU-1527f224-1553-c68c-f1c2-7aaf6ecf173c\n",
                      0, &u);
  ASSERT_EQ(u.visible.size(), 2u);
  ASSERT_NE(u.ByUuid(u.visible[0]), nullptr);
  EXPECT_EQ(u.ByUuid(u.visible[0])->pci, "0000:db:00");
  NodeGpuHealth none;
  ParseVisibleDevices("MY_CUDA_VISIBLE_DEVICES=1\n", 0, &none);  // another variable
  EXPECT_TRUE(none.visible.empty());
}

// Resident-set peak (VmHWM) of this process in KiB, after `reset` cleared it to the current RSS.
long PeakKib(bool reset) {
  if (reset) std::ofstream("/proc/self/clear_refs") << "5";
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

long RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// The initiator's node's files are searched mapped, never copied whole into memory (a 1 GB syslog
// would cost seconds and its size in memory). A 64 MB syslog with a hole in the middle is searched
// mapped and released as it is passed: the device lines on both sides of the hole are found, at
// their line numbers, and the process's peak resident set grows by a window, not by the file.
TEST(GpuHealth, ABigSparseSyslogIsSearchedMappedNotCopied) {
  namespace fs = std::filesystem;
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("denpex-gpu-health-" + std::to_string(rd()));
  fs::create_directories(dir / "gpu-0001");
  std::ofstream(dir / "gpu-0001" / "rank_0.log") << "[rank0]:[I302 09:17:01.000000000 ProcessGroupNCCL.cpp:900] hello\n";
  const fs::path syslog = dir / "gpu-0001" / "syslog";
  {
    std::ofstream out(syslog, std::ios::binary);
    out << "Mar  2 09:00:01 gpu-0001 kernel: [   12.100000] NVRM: GPU at PCI:0000:db:00: "
           "GPU-1527f224-1553-c68c-f1c2-7aaf6ecf173c\n";
    for (int i = 0; i < 200; ++i) out << "Mar  2 09:00:02 gpu-0001 systemd[1]: Started Session " << i << ".\n";
  }
  fs::resize_file(syslog, 64 << 20);  // a hole of NUL bytes, as a truncated log leaves
  {
    std::ofstream out(syslog, std::ios::binary | std::ios::app);
    out << "\nMar  2 09:16:00 gpu-0001 torchrun[77]: CUDA_VISIBLE_DEVICES=GPU-1527f224-1553-c68c-f1c2-7aaf6ecf173c\n";
  }
  auto inc = LoadIncident(dir, 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const auto node = std::find(inc->nodes.begin(), inc->nodes.end(), "gpu-0001") - inc->nodes.begin();
  ASSERT_LT(static_cast<std::size_t>(node), inc->nodes.size());
  const long rss = RssKib();
  PeakKib(/*reset=*/true);
  const double t0 = testing::CpuSeconds();
  const NodeGpuHealth h = ReadNodeGpuHealth(*inc, static_cast<std::int32_t>(node));
  const double secs = testing::CpuSeconds() - t0;
  const long peak = PeakKib(/*reset=*/false);
  fs::remove_all(dir);
  ASSERT_EQ(h.visible.size(), 1u);
  ASSERT_NE(h.ByUuid(h.visible[0]), nullptr);
  EXPECT_EQ(h.ByUuid(h.visible[0])->pci, "0000:db:00");
  EXPECT_EQ(h.visible_line.span.line, 203u);  // after the hole: 201 lines, the NULs' line, this
  EXPECT_LT(peak - rss, 24 << 10) << "KiB over the RSS before";  // the whole file would be 64 MiB, twice
  EXPECT_LT(secs, 1.0);
}

}  // namespace
}  // namespace denpex::engine
