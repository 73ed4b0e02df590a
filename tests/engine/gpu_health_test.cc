// The GPU health recognisers (analyze/gpu_health.cc) on real shapes: `nvidia-smi -q` blocks of
// each driver era (ECC, retired pages, remapped rows, "Clocks Throttle Reasons" before 535 and
// "Clocks Event Reasons" after, 560's SRAM Parity / SEC-DED split), `nvidia-smi -L`, `dcgmi
// health -c` with its wrapped message, `dcgmi diag -r 1`'s "Fail - GPU: N" row, dcgm-exporter
// samples under both field spellings, the launch's CUDA_VISIBLE_DEVICES line, and `nvidia-smi -q
// -x` (real samples of drivers 418 to 595, their faulty variants, truncated and garbled XML).
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

// `nvidia-smi -q -x`: the real outputs of tests/data/gpu_health/smi_xml (its README names them),
// and faulty variants of them made here by changing values in memory.
const std::filesystem::path kSmiXml =
    std::filesystem::path(DENPEX_SOURCE_DIR) / "tests/data/gpu_health/smi_xml";

std::string ReadSample(const std::string& name) {
  std::ifstream in(kSmiXml / name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `text` with the first `from` after `after` replaced by `to`; the test fails when there is none.
std::string Changed(std::string text, const std::string& from, const std::string& to,
                    const std::string& after = "") {
  const std::size_t start = after.empty() ? 0 : text.find(after);
  const std::size_t at = start == std::string::npos ? start : text.find(from, start);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Every fact both readers fill, line numbers aside (the two forms put them on other lines).
void ExpectSameFacts(const NodeGpuHealth& text, const NodeGpuHealth& xml) {
  EXPECT_EQ(text.driver, xml.driver);
  EXPECT_EQ(text.cuda, xml.cuda);
  EXPECT_EQ(text.attached, xml.attached);
  ASSERT_EQ(text.gpus.size(), xml.gpus.size());
  for (std::size_t i = 0; i < text.gpus.size(); ++i) {
    const GpuHealth &t = text.gpus[i], &x = xml.gpus[i];
    EXPECT_EQ(t.pci, x.pci);
    EXPECT_EQ(t.uuid, x.uuid);
    EXPECT_EQ(t.index, x.index);
    EXPECT_EQ(t.name, x.name);
    EXPECT_EQ(t.pcie_width, x.pcie_width);
    EXPECT_EQ(t.pcie_width_max, x.pcie_width_max);
    EXPECT_EQ(t.volatile_uncorrectable, x.volatile_uncorrectable);
    EXPECT_EQ(t.aggregate_correctable, x.aggregate_correctable);
    EXPECT_EQ(t.remap_pending, x.remap_pending);
    EXPECT_EQ(t.remap_failed, x.remap_failed);
    EXPECT_EQ(t.retire_pending, x.retire_pending);
    EXPECT_EQ(t.retired_dbe, x.retired_dbe);
    EXPECT_EQ(t.hw_slowdown, x.hw_slowdown);
    EXPECT_EQ(t.hw_thermal, x.hw_thermal);
    EXPECT_EQ(t.hw_power_brake, x.hw_power_brake);
    EXPECT_EQ(t.sw_thermal, x.sw_thermal);
    EXPECT_EQ(t.temperature, x.temperature);
    EXPECT_EQ(t.memory_line.file < 0, x.memory_line.file < 0);
    EXPECT_EQ(t.throttle_line.file < 0, x.throttle_line.file < 0);
    EXPECT_EQ(t.pcie_line.file < 0, x.pcie_line.file < 0);
  }
}

// kQuery470's A100 as `-q -x` prints those facts (written here after the 470-era DTD's element
// names, not captured from a machine): the same facts, and the most specific clock reason and
// the pending remap cited the same way.
TEST(GpuHealth, XmlOfThe470BlockGivesTheTextsFacts) {
  constexpr const char* kXml470 = R"(<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
	<timestamp>Mon Mar  2 09:28:02 2026</timestamp>
	<driver_version>470.223.02</driver_version>
	<attached_gpus>8</attached_gpus>
	<gpu id="00000000:5D:00.0">
		<product_name>NVIDIA A100-SXM4-80GB</product_name>
		<uuid>GPU-6fb75e7b-b3ce-ded9-59c5-ef768292bb4f</uuid>
		<minor_number>3</minor_number>
		<clocks_throttle_reasons>
			<clocks_throttle_reason_gpu_idle>Not Active</clocks_throttle_reason_gpu_idle>
			<clocks_throttle_reason_sw_power_cap>Not Active</clocks_throttle_reason_sw_power_cap>
			<clocks_throttle_reason_hw_slowdown>Active</clocks_throttle_reason_hw_slowdown>
			<clocks_throttle_reason_hw_thermal_slowdown>Active</clocks_throttle_reason_hw_thermal_slowdown>
			<clocks_throttle_reason_hw_power_brake_slowdown>Not Active</clocks_throttle_reason_hw_power_brake_slowdown>
			<clocks_throttle_reason_sw_thermal_slowdown>Active</clocks_throttle_reason_sw_thermal_slowdown>
		</clocks_throttle_reasons>
		<ecc_errors>
			<volatile>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>177</dram_correctable>
				<dram_uncorrectable>0</dram_uncorrectable>
			</volatile>
			<aggregate>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>177</dram_correctable>
				<dram_uncorrectable>0</dram_uncorrectable>
			</aggregate>
		</ecc_errors>
		<retired_pages>
			<multiple_single_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</multiple_single_bit_retirement>
			<double_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</double_bit_retirement>
			<pending_blacklist>N/A</pending_blacklist>
			<pending_retirement>N/A</pending_retirement>
		</retired_pages>
		<remapped_rows>
			<remapped_row_corr>1</remapped_row_corr>
			<remapped_row_unc>0</remapped_row_unc>
			<remapped_row_pending>Yes</remapped_row_pending>
			<remapped_row_failure>No</remapped_row_failure>
		</remapped_rows>
		<temperature>
			<gpu_temp>91 C</gpu_temp>
		</temperature>
	</gpu>
</nvidia_smi_log>
)";
  NodeGpuHealth text, xml;
  ParseGpuHealthText(kQuery470, 0, &text);
  ParseGpuHealthText(kXml470, 0, &xml);
  ExpectSameFacts(text, xml);
  ASSERT_EQ(xml.gpus.size(), 1u);
  EXPECT_EQ(xml.gpus[0].pci, "0000:5d:00");
  EXPECT_TRUE(xml.gpus[0].remap_pending);
  EXPECT_EQ(xml.gpus[0].throttle_line.span.line, 15u);  // HW Thermal Slowdown, as the text's
  EXPECT_EQ(xml.driver_line.span.line, 5u);
  EXPECT_EQ(xml.attached_line.span.line, 6u);
}

// The 560 block of QueryBlockOf560EraCountsUncorrectableAndFailure, as XML: SRAM's parity and
// SEC-DED counts summed with DRAM's, and the remapping failure is the cited line.
TEST(GpuHealth, XmlOfThe560BlockGivesTheTextsFacts) {
  const std::string text_block =
      "GPU 00000000:DB:00.0\n"
      "    Clocks Event Reasons\n"
      "        HW Slowdown                       : Active\n"
      "            HW Power Brake Slowdown       : Active\n"
      "    ECC Errors\n"
      "        Volatile\n"
      "            SRAM Correctable              : 0\n"
      "            SRAM Uncorrectable Parity     : 1\n"
      "            SRAM Uncorrectable SEC-DED    : 0\n"
      "            DRAM Correctable              : 0\n"
      "            DRAM Uncorrectable            : 2\n"
      "    Remapped Rows\n"
      "        Pending                           : No\n"
      "        Remapping Failure Occurred        : Yes\n";
  const std::string xml_block =
      "<nvidia_smi_log>\n"
      "    <gpu id=\"00000000:DB:00.0\">\n"
      "        <clocks_event_reasons>\n"
      "            <clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>\n"
      "            "
      "<clocks_event_reason_hw_power_brake_slowdown>Active</"
      "clocks_event_reason_hw_power_brake_slowdown>\n"
      "        </clocks_event_reasons>\n"
      "        <ecc_errors>\n"
      "            <volatile>\n"
      "                <sram_correctable>0</sram_correctable>\n"
      "                <sram_uncorrectable_parity>1</sram_uncorrectable_parity>\n"
      "                <sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n"
      "                <dram_correctable>0</dram_correctable>\n"
      "                <dram_uncorrectable>2</dram_uncorrectable>\n"
      "            </volatile>\n"
      "        </ecc_errors>\n"
      "        <remapped_rows>\n"
      "            <remapped_row_pending>No</remapped_row_pending>\n"
      "            <remapped_row_failure>Yes</remapped_row_failure>\n"
      "        </remapped_rows>\n"
      "    </gpu>\n"
      "</nvidia_smi_log>\n";
  NodeGpuHealth text, xml;
  ParseGpuHealthText(text_block, 4, &text);
  ParseGpuHealthText(xml_block, 4, &xml);
  ExpectSameFacts(text, xml);
  ASSERT_EQ(xml.gpus.size(), 1u);
  EXPECT_EQ(xml.gpus[0].volatile_uncorrectable, 3);
  EXPECT_TRUE(xml.gpus[0].remap_failed && xml.gpus[0].hw_power_brake);
  EXPECT_EQ(xml.gpus[0].memory_line.file, 4);
  EXPECT_EQ(xml.gpus[0].memory_line.span.line, 18u);  // the failure decides the action
  EXPECT_EQ(xml.gpus[0].throttle_line.span.line, 5u);
}

// A10G, driver 515 (nvsmi_device_v11): clocks_throttle_reasons and a remapped_rows block; its
// link really runs 8x of 16x. Healthy as captured; with a pending remap, two volatile DRAM
// uncorrectable errors and HW Slowdown + HW Thermal set here, faulty.
TEST(GpuHealth, XmlA10gOf515WithThrottleReasonsAndRemappedRows) {
  const std::string xml = ReadSample("a10g.xml");
  ASSERT_FALSE(xml.empty());
  NodeGpuHealth h;
  ParseGpuHealthText(xml, 2, &h);
  EXPECT_EQ(h.driver, "515.105.01");
  EXPECT_EQ(h.cuda, "11.7");
  EXPECT_EQ(h.attached, 1);
  EXPECT_EQ(h.driver_line.span.line, 5u);
  EXPECT_EQ(h.attached_line.span.line, 7u);
  ASSERT_EQ(h.gpus.size(), 1u);
  const GpuHealth& g = h.gpus[0];
  EXPECT_EQ(g.pci, "0000:00:1e");
  EXPECT_EQ(g.uuid, "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94");
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA A10G");
  EXPECT_EQ(g.pcie_width, 8);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.pcie_line.file, 2);
  EXPECT_EQ(g.pcie_line.span.line, 68u);
  EXPECT_EQ(g.temperature, 17);
  EXPECT_FALSE(g.MemoryFault() || g.Throttled() || g.remap_pending || g.retire_pending);
  EXPECT_EQ(g.memory_line.file, -1);

  std::string bad = Changed(xml, "<remapped_row_pending>No", "<remapped_row_pending>Yes");
  bad = Changed(bad, "<dram_uncorrectable>0", "<dram_uncorrectable>2", "<volatile>");
  bad = Changed(bad, "<clocks_throttle_reason_hw_slowdown>Not Active",
                "<clocks_throttle_reason_hw_slowdown>Active");
  bad = Changed(bad, "<clocks_throttle_reason_hw_thermal_slowdown>Not Active",
                "<clocks_throttle_reason_hw_thermal_slowdown>Active");
  NodeGpuHealth f;
  ParseGpuHealthText(bad, 2, &f);
  ASSERT_EQ(f.gpus.size(), 1u);
  EXPECT_TRUE(f.gpus[0].remap_pending);
  EXPECT_EQ(f.gpus[0].volatile_uncorrectable, 2);  // the aggregate's 0 is not added
  EXPECT_TRUE(f.gpus[0].MemoryFault());
  EXPECT_EQ(f.gpus[0].memory_line.span.line, 130u);
  EXPECT_TRUE(f.gpus[0].hw_slowdown && f.gpus[0].hw_thermal && !f.gpus[0].sw_thermal);
  EXPECT_EQ(f.gpus[0].throttle_line.span.line, 87u);  // HW Thermal, the most specific
}

// Tesla T4, driver 515: page retirement in use (retired_count 0, pending_blacklist No). With one
// double-bit retired page and a pending retirement set here, a memory fault.
TEST(GpuHealth, XmlTeslaT4RetiredPages) {
  const std::string xml = ReadSample("tesla-t4.xml");
  NodeGpuHealth h;
  ParseGpuHealthText(xml, 0, &h);
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].name, "Tesla T4");
  EXPECT_EQ(h.gpus[0].retired_dbe, 0);
  EXPECT_FALSE(h.gpus[0].retire_pending || h.gpus[0].MemoryFault());
  EXPECT_EQ(h.gpus[0].temperature, 40);

  std::string bad = Changed(xml, "<retired_count>0", "<retired_count>1", "<double_bit_retirement>");
  bad = Changed(bad, "<pending_blacklist>No", "<pending_blacklist>Yes");
  NodeGpuHealth f;
  ParseGpuHealthText(bad, 0, &f);
  ASSERT_EQ(f.gpus.size(), 1u);
  EXPECT_EQ(f.gpus[0].retired_dbe, 1);
  EXPECT_TRUE(f.gpus[0].retire_pending && f.gpus[0].MemoryFault());
}

// A100-SXM4-80GB, driver 535 (v12): clocks_event_reasons, MIG on. A MIG device's own
// <ecc_error_count> is not the GPU's ECC count: an error there (set here) is not added.
TEST(GpuHealth, XmlA100Of535WithEventReasonsAndMig) {
  const std::string xml = ReadSample("a100-sxm4-v12.xml");
  NodeGpuHealth h;
  ParseGpuHealthText(xml, 0, &h);
  EXPECT_EQ(h.driver, "535.54.03");
  EXPECT_EQ(h.cuda, "12.2");
  EXPECT_EQ(h.attached, 4);  // the sample keeps one of the four
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].pci, "0000:01:00");
  EXPECT_EQ(h.gpus[0].index, 1);
  EXPECT_EQ(h.gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(h.gpus[0].pcie_width, 16);
  EXPECT_EQ(h.gpus[0].temperature, 27);
  EXPECT_FALSE(h.gpus[0].Throttled() || h.gpus[0].MemoryFault() || h.gpus[0].remap_pending);

  std::string bad = Changed(xml, "<sram_uncorrectable>0", "<sram_uncorrectable>5", "<mig_device>");
  bad = Changed(bad, "<clocks_event_reason_hw_power_brake_slowdown>Not Active",
                "<clocks_event_reason_hw_power_brake_slowdown>Active");
  NodeGpuHealth f;
  ParseGpuHealthText(bad, 0, &f);
  ASSERT_EQ(f.gpus.size(), 1u);
  EXPECT_EQ(f.gpus[0].volatile_uncorrectable, 0);
  EXPECT_TRUE(f.gpus[0].hw_power_brake);
  EXPECT_EQ(f.gpus[0].throttle_line.span.line, 223u);
}

// RTX 4000 SFF Ada, driver 595 (v13): tab indents, SRAM uncorrectable split into parity and
// SEC-DED (`N/A` as captured). Counts set here are summed; a remapping failure is cited.
TEST(GpuHealth, XmlOf595WithTheSramSplit) {
  const std::string xml = ReadSample("rtx-4000-sff-ada-v13.xml");
  NodeGpuHealth h;
  ParseGpuHealthText(xml, 0, &h);
  EXPECT_EQ(h.driver, "595.84");
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].pci, "0000:06:00");
  EXPECT_EQ(h.gpus[0].uuid, "GPU-37037c3f-65c8-ec4d-24a9-420204ad8026");
  EXPECT_EQ(h.gpus[0].name, "NVIDIA RTX 4000 SFF Ada Generation");
  EXPECT_EQ(h.gpus[0].pcie_line.span.line, 93u);
  EXPECT_EQ(h.gpus[0].temperature, 38);
  EXPECT_FALSE(h.gpus[0].MemoryFault());

  std::string bad =
      Changed(xml, "<sram_uncorrectable_parity>N/A", "<sram_uncorrectable_parity>1", "<volatile>");
  bad =
      Changed(bad, "<sram_uncorrectable_secded>N/A", "<sram_uncorrectable_secded>2", "<volatile>");
  bad = Changed(bad, "<remapped_row_failure>No", "<remapped_row_failure>Yes");
  NodeGpuHealth f;
  ParseGpuHealthText(bad, 0, &f);
  ASSERT_EQ(f.gpus.size(), 1u);
  EXPECT_EQ(f.gpus[0].volatile_uncorrectable, 3);
  EXPECT_TRUE(f.gpus[0].remap_failed);
  EXPECT_EQ(f.gpus[0].memory_line.span.line, 216u);  // the failure, not the first count
}

// Quadro P400, driver 418, no DOCTYPE: the old ECC form, <single_bit>/<double_bit> with <total>
// (`N/A` on this card). With a volatile double-bit total of 2, an aggregate single-bit total of
// 7 and a pending retirement set here, those are read as the newer form's counts.
TEST(GpuHealth, XmlOf418WithTheOldEccForm) {
  const std::string xml = ReadSample("quadro-p400.xml");
  NodeGpuHealth h;
  ParseGpuHealthText(xml, 0, &h);
  EXPECT_EQ(h.driver, "418.43");
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].pci, "0000:43:00");
  EXPECT_EQ(h.gpus[0].name, "Quadro P400");
  EXPECT_EQ(h.gpus[0].temperature, 33);
  EXPECT_EQ(h.gpus[0].volatile_uncorrectable, 0);

  std::string bad = Changed(xml, "<total>N/A", "<total>2", "<double_bit>");
  bad = Changed(bad, "<total>N/A", "<total>7", "<aggregate>");
  bad = Changed(bad, "<pending_retirement>N/A", "<pending_retirement>Yes");
  NodeGpuHealth f;
  ParseGpuHealthText(bad, 0, &f);
  ASSERT_EQ(f.gpus.size(), 1u);
  EXPECT_EQ(f.gpus[0].volatile_uncorrectable, 2);
  EXPECT_EQ(f.gpus[0].memory_line.span.line, 132u);
  EXPECT_EQ(f.gpus[0].aggregate_correctable, 7);
  EXPECT_TRUE(f.gpus[0].retire_pending);
}

// An epilogue file with the table, then -q -x, then -L: the XML is read where it stands, the
// text around it as before, and the three join on the bus id and index.
TEST(GpuHealth, XmlBetweenTextOutputsInOneFile) {
  const std::string xml = ReadSample("a10g.xml");
  // The sample ends without a newline; the epilogue puts one between outputs.
  const std::string before =
      "|   0  NVIDIA A10G                    On  | 00000000:00:1E.0 Off |                    0 "
      "|\n" +
      xml + "\n";
  const std::string file = before +
                           "GPU 0: NVIDIA A10G (UUID: GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94)\n"
                           "Driver Version                            : 515.105.01\n";
  NodeGpuHealth h;
  ParseGpuHealthText(file, 0, &h);
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].index, 0);
  EXPECT_EQ(h.gpus[0].pcie_line.span.line, 69u);  // one line below the sample's own
  EXPECT_FALSE(h.several_machines);
  const auto lines_before =
      static_cast<std::uint32_t>(std::count(before.begin(), before.end(), '\n'));
  EXPECT_EQ(h.driver_line.span.line,
            lines_before + 2);  // the text line after the XML, read as text
}

// Truncated, cut or garbled XML is read as far as it goes and never crashes: every cut at a line
// end and at random bytes of each sample, random bytes replaced by XML's own punctuation, deep
// nesting, stray closes, and tags that never close.
TEST(GpuHealth, TruncatedOrGarbledXmlNeverCrashes) {
  std::mt19937 rng(20261204);
  for (const char* name : {"a10g.xml", "tesla-t4.xml", "a100-sxm4-v12.xml",
                           "rtx-4000-sff-ada-v13.xml", "quadro-p400.xml"}) {
    const std::string xml = ReadSample(name);
    ASSERT_FALSE(xml.empty()) << name;
    for (std::size_t cut = xml.find('\n'); cut != std::string::npos;
         cut = xml.find('\n', cut + 1)) {
      NodeGpuHealth h;
      ParseGpuHealthText(std::string_view(xml).substr(0, cut), 0, &h);
      ASSERT_LE(h.gpus.size(), 1u) << name << " cut at " << cut;
    }
    for (int i = 0; i < 200; ++i) {
      NodeGpuHealth h;
      ParseGpuHealthText(std::string_view(xml).substr(0, rng() % xml.size()), 0, &h);
      ASSERT_LE(h.gpus.size(), 1u);
    }
    static constexpr char kPunct[] = "<>/\"= \t\nx!?";
    for (int i = 0; i < 200; ++i) {
      std::string g = xml;
      for (int k = 0; k < 20; ++k) g[rng() % g.size()] = kPunct[rng() % (sizeof(kPunct) - 1)];
      NodeGpuHealth h;
      ParseGpuHealthText(g, 0, &h);
      ASSERT_LE(h.gpus.size(), 20u);
    }
  }
  // The facts before a cut are kept: cut after the temperature, the A10G's 17 C is read.
  const std::string a10g = ReadSample("a10g.xml");
  NodeGpuHealth cut;
  ParseGpuHealthText(std::string_view(a10g).substr(0, a10g.find("</temperature>")), 0, &cut);
  ASSERT_EQ(cut.gpus.size(), 1u);
  EXPECT_EQ(cut.gpus[0].temperature, 17);

  std::string deep = "<nvidia_smi_log>\n<gpu id=\"00000000:18:00.0\">\n";
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  deep += "\n<temperature><gpu_temp>50 C</gpu_temp></temperature>\n";
  for (int i = 0; i < 100000; ++i) deep += "</a>";
  deep += "\n<temperature><gpu_temp>35 C</gpu_temp></temperature>\n</gpu>\n";
  deep +=
      "</b></gpu></nvidia_smi_log></x>\n<gpu id=\"\"><gpu "
      "id=\"00000000:zz\">\n<nvidia_smi_log><gpu id=\"0000:3b:00.0\n";
  deep += std::string(1 << 20, '<') + "\n" + std::string(1 << 16, '>') + "\n<nvidia_smi_log\n";
  NodeGpuHealth h;
  ParseGpuHealthText(deep, 0, &h);
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].pci, "0000:18:00");
  EXPECT_EQ(h.gpus[0].temperature, 35);  // the deep one is past the kept depth
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

// Two machines' `nvidia-smi -L` tables and driver UUID lines under one host name: each UUID keeps
// its own GPU, index and bus (the second machine's GPU 0 is not the first's, though both are
// index 0 on bus 18), and the node is known to be several machines. Many machines' files (16 k
// GPUs) are read by the same rules, each line's GPU found in the bus, UUID and index keys.
TEST(GpuHealth, TwoMachinesTablesUnderOneNameKeepEachUuidsGpu) {
  NodeGpuHealth h;
  const auto machine = [&](const std::string& a, const std::string& b, std::int32_t file) {
    ParseGpuHealthText("GPU 0: NVIDIA H100 80GB HBM3 (UUID: " + a + ")\n" +
                           "GPU 1: NVIDIA H100 80GB HBM3 (UUID: " + b + ")\n",
                       file, &h);
    ParseVisibleDevices(
        "Mar  2 09:00:15 host-0 kernel: [16.9] NVRM: GPU at PCI:0000:18:00: " + a + "\n" +
            "Mar  2 09:00:15 host-0 kernel: [16.9] NVRM: GPU at PCI:0000:2a:00: " + b + "\n",
        file + 1, &h);
  };
  machine("GPU-aaaa0000-0000-0000-0000-000000000000", "GPU-aaaa1111-0000-0000-0000-000000000000",
          0);
  EXPECT_FALSE(h.several_machines);
  machine("GPU-bbbb0000-0000-0000-0000-000000000000", "GPU-bbbb1111-0000-0000-0000-000000000000",
          2);
  EXPECT_TRUE(h.several_machines);
  ASSERT_EQ(h.gpus.size(), 4u);
  for (const char* uuid :
       {"GPU-aaaa0000-0000-0000-0000-000000000000", "GPU-bbbb0000-0000-0000-0000-000000000000"}) {
    ASSERT_NE(h.ByUuid(uuid), nullptr);
    EXPECT_EQ(h.ByUuid(uuid)->pci, "0000:18:00");
    EXPECT_EQ(h.ByUuid(uuid)->index, 0);
  }
  ASSERT_NE(h.ByUuid("GPU-bbbb1111-0000-0000-0000-000000000000"), nullptr);
  EXPECT_EQ(h.ByUuid("GPU-bbbb1111-0000-0000-0000-000000000000")->pci, "0000:2a:00");
  EXPECT_EQ(h.ByPci("0000:18:00")->uuid, "GPU-aaaa0000-0000-0000-0000-000000000000");  // the first
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

// The initiator's node's files are searched piece by piece, never held whole in memory (a 1 GB
// syslog would cost its size). A 64 MB syslog with a hole in the middle: the device lines on both
// sides of the hole are found, at their line numbers, and the process's peak resident set grows
// by a piece, not by the file.
TEST(GpuHealth, ABigSparseSyslogIsSearchedPieceByPieceNotHeldWhole) {
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
  EXPECT_LT(secs, testing::CpuBound(1.0));
}

// A node's console is searched by the line filter in pieces of whole lines up to 1 MiB, each cut
// after its last newline: a key 40 bytes before to 33 after each MiB (where a cut falls), and
// one in the file's last bytes, are each found; a list of visible devices that runs on past 12
// MiB is read whole, at its line's number (every newline before it counted). The filler has an
// `N` with a `:` 16 bytes on (the driver key's two ends) everywhere.
TEST(GpuHealth, DeviceLinesAreFoundWhereverAPieceOfTheSearchEnds) {
  namespace fs = std::filesystem;
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("denpex-gpu-pieces-" + std::to_string(rd()));
  fs::create_directories(dir / "gpu-0001");
  std::ofstream(dir / "gpu-0001" / "rank_0.log")
      << "[rank0]:[I302 09:17:01.000000000 ProcessGroupNCCL.cpp:900] hello\n";
  constexpr std::string_view kHead =
      "Mar  2 09:00:01 gpu-0001 kernel: [   12.100000] ";  // before the key
  std::string text;
  std::uint32_t lines = 0;
  std::vector<std::pair<std::string, std::string>> placed;  // pci, uuid
  const auto fill_to = [&](std::size_t line_start) {        // filler lines up to a line's start
    while (text.size() < line_start) {
      const std::size_t n = std::min<std::size_t>(line_start - text.size(), 200);
      std::string filler(n - 1, 'x');
      for (std::size_t i = 0; i + 17 <= filler.size(); i += 17)
        filler.replace(i, 17, "N123456789012345:");
      text += filler + "\n";
      ++lines;
    }
  };
  const int shifts[] = {-40, -21, -17, -16, -1, 0, 1, 31, 32, 33};
  int gpu = 0;
  for (const int shift : shifts) {  // one a piece: 1 MiB + shift, 2 MiB + the next, ...
    const std::size_t key_at = (static_cast<std::size_t>(gpu + 1) << 20) + shift;
    fill_to(key_at - kHead.size());
    ASSERT_EQ(text.size(), key_at - kHead.size());
    char pci[32];
    std::snprintf(pci, sizeof pci, "0000:%02x:00", gpu);
    const std::string uuid = "GPU-" + std::to_string(1000 + gpu);
    text += std::string(kHead) + "NVRM: GPU at PCI:" + pci + ": " + uuid + "\n";
    placed.emplace_back(pci, uuid);
    ++lines;
    ++gpu;
  }
  const std::size_t visible_at = (12u << 20) - 10;  // CUDA_VISIBLE_DEVICES= runs on past 12 MiB
  fill_to(visible_at - 6);
  text += "+ env CUDA_VISIBLE_DEVICES=4,5,6,7\n";
  const std::uint32_t visible_line = ++lines;
  fill_to(text.size() + 3000);
  text += "NVRM: GPU at PCI:0000:ff:00: GPU-last\n";  // in the file's last 32 + 21 bytes
  placed.emplace_back("0000:ff:00", "GPU-last");
  std::ofstream(dir / "gpu-0001" / "console.log", std::ios::binary) << text;
  auto inc = LoadIncident(dir, 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const auto node =
      std::find(inc->nodes.begin(), inc->nodes.end(), "gpu-0001") - inc->nodes.begin();
  ASSERT_LT(static_cast<std::size_t>(node), inc->nodes.size());
  const NodeGpuHealth h = ReadNodeGpuHealth(*inc, static_cast<std::int32_t>(node));
  fs::remove_all(dir);
  EXPECT_EQ(h.gpus.size(), placed.size());
  for (const auto& [pci, uuid] : placed) {
    const GpuHealth* g = h.ByPci(pci);
    ASSERT_NE(g, nullptr) << pci;
    EXPECT_EQ(g->uuid, uuid);
  }
  ASSERT_EQ(h.visible.size(), 4u);
  EXPECT_EQ(h.visible[0], "4");
  EXPECT_EQ(h.visible_line.span.line, visible_line);
}

}  // namespace
}  // namespace denpex::engine
