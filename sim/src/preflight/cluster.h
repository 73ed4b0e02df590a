// A simulated cluster before a run (denpex.v1.PreflightScenario): each node's hardware as its
// health tools would show it, the faults injected into it, and the nccl-tests runs of the
// scenario's plan with the bus bandwidth each reads. Facts only; tools_text.h prints them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/preflight.pb.h"

namespace denpex::sim::preflight {

struct Gpu {
  int bus = 0;    // PCI bus number (`0000:18:00.0`)
  int minor = 0;  // /dev/nvidiaN, kept when another GPU is lost
  std::uint64_t uuid_hi = 0, uuid_lo = 0;
  std::uint64_t serial = 0;
  int numa = 0;
  int pcie_gen = 5;  // current: idle GPUs drop to gen 1 to save power
  int width_max = 16, width = 16;
  int temperature = 30;
  double power_w = 70;
  std::int64_t dram_correctable = 0;  // volatile
  std::int64_t dram_correctable_aggregate = 0;
  bool remap_pending = false;
  std::int64_t remap_correctable = 0;  // rows remapped (or pending) for correctable errors
};

struct Port {
  std::string ca;  // `mlx5_0`, `mlx5_bond_0`
  bool compute = true;
  bool ethernet = false;
  bool up = true;
  double rate = 400;
  std::string ca_type = "MT4129";
  std::string firmware = "28.39.2048";
  std::uint64_t guid = 0;
  int lid = 0;
  int numa = 0;
  int bus = 0;  // PCI bus of the HCA
};

struct Node {
  std::string host;
  std::string driver, cuda;
  std::vector<Gpu> gpus;  // the GPUs nvidia-smi sees, in bus order
  std::vector<Gpu> lost;  // GPUs that fell off the bus (the kernel saw them at boot)
  std::vector<std::vector<int>> nvlinks;  // NV# between gpus[i] and gpus[j]
  std::vector<Port> ports;
  std::vector<std::string> kernel;  // lines after boot (`NVRM: Xid ...`), without the stamp
  std::vector<double> kernel_at;    // their uptime, seconds
  double boot_noise = 0;            // per-node offset of the boot lines' times
  double own_factor = 1;            // on the node's one-node run
  double pair_factor = 1;           // on every multi-node run with it
  int fault = -1;                   // index into the scenario's faults, -1 none
};

struct Run {
  std::vector<int> nodes;   // 0-based
  std::string file;         // relative to collected/
  double busbw = 0;         // out-of-place, at the largest size
  std::uint64_t index = 0;  // its random stream
};

struct Cluster {
  v1::PreflightScenario scenario;  // defaults filled
  std::uint64_t seed = 0;
  std::vector<Node> nodes;
  std::vector<Run> runs;
  v1::PreflightTruth truth;
};

// The cluster of a validated scenario (ParsePreflightScenario's output) under `seed`.
Result<Cluster> BuildCluster(const v1::PreflightScenario& scenario, std::uint64_t seed);

// Each tool's output as it prints it.
std::string NvidiaSmiQuery(const Cluster& c, const Node& n);
std::string TopoMatrix(const Cluster& c, const Node& n);
std::string Ibstat(const Cluster& c, const Node& n);
std::string KernelLog(const Cluster& c, const Node& n);
std::string NcclTests(const Cluster& c, const Run& r);

// `PCIE_DOWNTRAINED` for PREFLIGHT_FAULT_PCIE_DOWNTRAINED.
std::string FaultName(v1::PreflightFaultKind kind);
// Driver major release, `550` of `550.54.15`.
int DriverMajor(const std::string& driver);

}  // namespace denpex::sim::preflight
