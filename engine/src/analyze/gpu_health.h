// One node's GPU health snapshot, read from the files a health epilogue leaves beside the job's
// logs (docs/log_formats.md "gpu_health"): the nvidia-smi table, `nvidia-smi -L`, `nvidia-smi
// -q` (ECC, retired pages, remapped rows, clocks event / throttle reasons, temperature) and its
// XML form `nvidia-smi -q -x`, `dcgmi health -c`, `dcgmi diag -r N` and dcgm-exporter metrics
// text; and the launch's `CUDA_VISIBLE_DEVICES=` line (numbers or `GPU-<uuid>`s) from the node's
// other non-rank logs. Read for the one or two nodes a diagnosis names, never for the whole
// incident: the files are opened again here (they are small), outside the line parser's hot path.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "incident/incident.h"

namespace denpex::engine {

// A line of a file of the incident, for citations.
struct HealthLine {
  std::int32_t file = -1;  // -1: none
  LineSpan span;
};

struct GpuHealth {
  std::string pci;   // normalised `dddd:bb:dd`; empty when no source named it
  std::string uuid;  // `GPU-...`
  std::int32_t index = -1;  // nvidia-smi index (table, -L, Minor Number, DCGM's gpu id)
  std::string name;         // -q's Product Name (`NVIDIA H100 80GB HBM3`)
  // -q's PCI > GPU Link Info > Link Width, lanes (`16x`); -1 not given. The generation is not
  // kept: it drops at idle to save power, so a lower current one says nothing.
  std::int32_t pcie_width = -1, pcie_width_max = -1;
  HealthLine pcie_line;                     // the Current width's line
  std::int64_t volatile_uncorrectable = 0;  // SRAM + DRAM volatile uncorrectable, DCGM DBE_VOL
  std::int64_t aggregate_correctable = 0;
  bool remap_pending = false;    // Remapped Rows Pending: Yes, ROW_REMAP_PENDING 1
  bool remap_failed = false;     // Remapping Failure Occurred: Yes, ROW_REMAP_FAILURE 1
  bool retire_pending = false;   // Pending Page Blacklist: Yes (pre-Ampere)
  std::int64_t retired_dbe = 0;  // Retired Pages Double Bit ECC
  bool hw_slowdown = false, hw_thermal = false, hw_power_brake = false, sw_thermal = false;
  std::int32_t temperature = -1;  // GPU Current Temp, C
  std::int32_t last_xid = 0;      // DCGM_FI_DEV_XID_ERRORS
  std::string dcgm;               // DCGM's word on it (health or diag message)
  HealthLine memory_line;         // the line that shows its memory fault
  HealthLine pending_line;        // the line that shows a row remap or page retirement pending
  HealthLine retired_line;        // the line that counts pages retired for double-bit errors
  HealthLine throttle_line;       // the line that shows its clocks held down
  // A hardware test of `dcgmi diag -r 2/3` (not a deployment check) failed on it: GPU Memory,
  // PCIe (NVLink, link width/generation), Diagnostic, the stress tests, Memtest.
  std::string diag_failed;        // the first failed test's name; empty: none
  bool diag_memory = false;       // a memory test failed (GPU Memory, Memory Bandwidth, Memtest)
  HealthLine diag_line;           // its `Fail - GPU: N` row

  bool MemoryFault() const { return volatile_uncorrectable > 0 || remap_failed || retired_dbe > 0 || diag_memory; }
  bool Throttled() const { return hw_slowdown || hw_thermal || hw_power_brake || sw_thermal; }
};

struct NodeGpuHealth {
  std::vector<GpuHealth> gpus;
  // `nvidia-smi -q`'s header: Driver Version, CUDA Version, Attached GPUs (-1: not given).
  std::string driver, cuda;
  std::int32_t attached = -1;
  HealthLine driver_line, attached_line;
  std::vector<std::string> visible;  // CUDA_VISIBLE_DEVICES entries, local rank order
  HealthLine visible_line;
  // The node's files describe more than one machine (two different CUDA_VISIBLE_DEVICES lists,
  // a GPU UUID on two buses or two UUIDs on one): hosts under one name. Which GPU a local rank
  // ran on, and which GPU an Xid hit, cannot then be told apart.
  bool several_machines = false;
  // Some of the node's files are relayed streams (ingest/streams.h), not read here: a
  // CUDA_VISIBLE_DEVICES list among their lines would be unknown.
  bool streams_unread = false;
  // The GPUs each bus id, UUID and index names (indices into `gpus`, ascending): what the reader
  // looks a line's GPU up in (gpu_health.cc `At`), not every GPU per line (2,048 machines'
  // snapshots under one host name hold 16 k GPUs).
  struct Keys {
    std::unordered_map<std::string, std::set<std::int32_t>> pci, uuid;
    std::unordered_map<std::int32_t, std::set<std::int32_t>> index;
    // Of those, the GPUs with no UUID yet (any line's GPU they may be).
    std::unordered_map<std::string, std::set<std::int32_t>> pci_bare;
    std::unordered_map<std::int32_t, std::set<std::int32_t>> index_bare;
  } keys;

  const GpuHealth* ByPci(std::string_view pci) const;
  const GpuHealth* ByIndex(std::int32_t index) const;
  const GpuHealth* ByUuid(std::string_view uuid) const;
};

// What the files of `node` that are not one rank's log say: its nvidia-smi / DCGM snapshots
// (by name; read to kMaxHealthFileBytes), CUDA_VISIBLE_DEVICES and the driver's UUID lines (the
// other files are searched for those two keys, mapped and released as searched, never copied).
// Files are opened as the ingest opens them (no link followed, regular files, binary skipped).
inline constexpr std::size_t kMaxHealthFileBytes = 16 << 20;
NodeGpuHealth ReadNodeGpuHealth(const Incident& inc, std::int32_t node);

// Parses one file's text into `out` (exposed for the recogniser tests). An `nvidia-smi -q -x`
// document in it (known by `<nvidia_smi_log>`) is read as XML, the lines around it as text.
void ParseGpuHealthText(std::string_view text, std::int32_t file, NodeGpuHealth* out);
// Finds a `CUDA_VISIBLE_DEVICES=...` line in a launch log's text, and the driver's `NVRM: GPU
// at PCI:<bus>: GPU-<uuid>` lines in a kernel log (a UUID's bus id).
void ParseVisibleDevices(std::string_view text, std::int32_t file, NodeGpuHealth* out);

// "gpu-0001/nvidia-smi.log:123".
std::string HealthWhere(const Incident& inc, const HealthLine& l);

}  // namespace denpex::engine
