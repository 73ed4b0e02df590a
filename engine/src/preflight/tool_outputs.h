// The outputs of the node health and fabric tools `denpex preflight` judges, read from their
// text as the tools print it (docs/preflight.md): `ibstat`, `nvidia-smi topo -m`, `dcgmi diag
// -j` and the nccl-tests tables. Each parser takes one file's text and returns what it found,
// with the 1-based line of each fact so a finding can cite it; a text that is not the tool's
// output gives nothing (the caller tries every parser on every file: files are recognised by
// their lines, never by their names). `nvidia-smi -q` is analyze/gpu_health.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine::preflight {

// `ibstat` (infiniband-diags): one entry per port of each channel adapter.
struct IbPort {
  std::string ca;              // `CA 'mlx5_0'`
  std::int32_t port = 0;       // `Port 1:`
  std::string state;           // `State: Active` (Down, Initializing, Armed, Active)
  std::string physical_state;  // `Physical state: LinkUp` (Polling, Disabled, ...)
  double rate_gbps = 0;        // `Rate: 400`
  std::string link_layer;      // `Link layer: InfiniBand` or `Ethernet`
  std::int32_t line = 0;       // the port's `State:` line
  std::int32_t rate_line = 0;  // its `Rate:` line
};
// Empty when the text holds no `CA '...'` block with a port.
std::vector<IbPort> ParseIbstat(std::string_view text);
// `ibv_devinfo` (rdma-core): `hca_id:` blocks with `port:` sub-blocks, its words made ibstat's
// (`PORT_ACTIVE` -> `Active`, `LINK_UP` -> `LinkUp`). Only `-v` prints `phys_state`,
// `active_width` and `active_speed` (the rate is width x a lane's speed); without it the
// physical state is empty and the rate 0. Empty when the text holds no `hca_id:` with a port.
std::vector<IbPort> ParseIbvDevinfo(std::string_view text);

// `nvidia-smi topo -m`: the matrix of how each GPU reaches each other device.
struct TopoMatrix {
  // The header's device names in order (`GPU0`, ..., `NIC0`, ... or `mlx5_0` on older drivers),
  // without the affinity columns.
  std::vector<std::string> columns;
  struct Row {
    std::string device;  // the row's first cell (`GPU0`, `NIC1`)
    // One per column: `X`, `NV18`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`.
    std::vector<std::string> cells;
    std::string cpu_affinity;   // `0-55,112-167`; empty when not printed
    std::string numa_affinity;  // `0`; empty when not printed
    std::int32_t line = 0;
  };
  std::vector<Row> rows;
  // The legend's `NIC0: mlx5_0` names, in order; empty when not printed.
  std::vector<std::pair<std::string, std::string>> nic_names;

  // NVLinks between GPU row `gpu` and every other GPU: the sum of its `NV#` cells.
  std::int32_t NvLinks(const Row& gpu) const;
};
std::optional<TopoMatrix> ParseTopoMatrix(std::string_view text);
// The NVLinks of one cell (`NV18`: 18); 0 for any other connection or a count past 255.
std::int32_t NvLinkCount(std::string_view cell);

// `dcgmi diag -r N -j`: each test's result per GPU.
struct DcgmTest {
  // As the version names it: `GPU Memory`, `PCIe`, `Diagnostic`, `Persistence Mode` (2.x, 3.x);
  // `memory`, `pcie`, `diagnostic`, `software` (4.x).
  std::string name;
  // -1: a test of the whole node (3.x deployment checks list every GPU) or of a non-GPU entity.
  std::int32_t gpu = -1;
  std::string result;  // `Pass`, `Fail`, `Warn`, `Skip` (other words as written)
  // The warnings' words, each with its DCGM_FR number where given (`... (DCGM_FR 29)`), joined
  // by ` | `; the info messages when there is no warning.
  std::string info;
};
struct DcgmDiag {
  std::string driver_version;  // where the document carries it
  std::string dcgm_version;    // `version`: in the diagnostic object (3.x) or `metadata` (4.x)
  // `runtime_error` (4.x): the diagnostic could not run (nvvs failed, GPUs busy); no tests then.
  std::string runtime_error;
  std::vector<DcgmTest> tests;
};
// nullopt when the text is not a JSON document of `dcgmi diag`.
std::optional<DcgmDiag> ParseDcgmDiagJson(std::string_view text);

// nccl-tests (`all_reduce_perf`, `all_gather_perf`, ...): one run's table.
struct NcclTestsRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::string type;                                      // `float`
  double oop_time_us = 0, oop_algbw = 0, oop_busbw = 0;  // out-of-place
  double ip_time_us = 0, ip_algbw = 0, ip_busbw = 0;     // in-place
  std::int64_t wrong = 0;  // the larger of the two `#wrong` columns; -1: `N/A`
  std::int32_t line = 0;
};
struct NcclTestsRun {
  // `all_reduce`: from `# Collective test starting: all_reduce_perf` (newer versions), else from
  // a command line naming `.../all_reduce_perf` before the table; empty when neither is there.
  // The table's columns cannot tell the collectives apart.
  std::string test;
  // `#  Rank  0 Group  0 Pid ... on <host> device ...` (older: no `Group`), indexed by rank.
  std::vector<std::string> hosts;
  std::vector<NcclTestsRow> rows;
  double avg_busbw = -1;  // `# Avg bus bandwidth    : 12.34`; -1: not printed (cut run)
  std::int32_t avg_line = 0;
  bool out_of_bounds = false;  // `# Out of bounds values : N FAILED` with N > 0
};
// Every run in the text (a file may hold several, one after the other).
std::vector<NcclTestsRun> ParseNcclTests(std::string_view text);

}  // namespace denpex::engine::preflight
