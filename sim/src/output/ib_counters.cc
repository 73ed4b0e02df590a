// The nodes' IB port files (see ib_counters.h).
#include "ib_counters.h"

#include <fstream>
#include <string>

#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kSys = "/sys/class/infiniband/mlx5_";
constexpr std::string_view kNdr = "400 Gb/sec (4X NDR)";
constexpr std::string_view kHdr = "200 Gb/sec (4X HDR)";

struct Port {
  std::int64_t symbol_error = 0, link_downed = 0, xmit_wait = 0;
  bool half_rate = false;
};

// The counters of one port. Healthy ones wait a little (congestion); about 3% carry a few symbol
// errors from an old event (red herrings). The slow port errs, flaps and waits.
Port PortOf(const Job& job, const FaultPlan& fault, int node, int gpu) {
  Rng rng(job.seed, StreamId::kNoise, (0x1bULL << 40) + static_cast<std::uint64_t>(node) * 64 + static_cast<std::uint64_t>(gpu));
  Port p;
  p.xmit_wait = rng.UniformInt(2'000'000, 9'000'000);
  if (rng.Uniform() < 0.03) p.symbol_error = rng.UniformInt(1, 20);
  const bool at_fault = job.NodeOf(fault.rank) == node && job.LocalRank(fault.rank) == gpu;
  if (LinkCountersCollected(fault) && at_fault) {  // the failed link's port: errors and a flap, no slowdown
    p.symbol_error = rng.UniformInt(500, 40'000);
    p.link_downed = rng.UniformInt(1, 3);
    return p;
  }
  const bool slow = fault.kind() == v1::FAULT_KIND_SLOW_NIC && fault.slowdown > 1 && at_fault;
  if (!slow) return p;
  p.symbol_error = rng.UniformInt(1'000, 60'000);
  p.link_downed = rng.UniformInt(1, 3);
  p.xmit_wait = static_cast<std::int64_t>(static_cast<double>(p.xmit_wait) * 40 * fault.slowdown);
  p.half_rate = fault.slowdown >= 1.75;
  return p;
}

}  // namespace

bool LinkCountersCollected(const FaultPlan& fault) {
  return fault.kind() == v1::FAULT_KIND_LINK_FAILURE && fault.variant % 2 == 1;
}

Result<CitedLine> WriteIbCounters(const Job& job, const FaultPlan& fault, const std::filesystem::path& incident) {
  CitedLine cited;
  for (int node = 0; node < job.nodes; ++node) {
    // The node's directory (Kubernetes: by node name, beside its kernel log); under the other
    // launchers a node without one is a node whose files are missing.
    const std::string& name = job.NodeName(node);
    const std::filesystem::path dir = incident / name;
    if (job.launcher == v1::LAUNCHER_KUBERNETES) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
    }
    if (!std::filesystem::is_directory(dir)) continue;
    std::vector<Port> ports;
    for (int gpu = 0; gpu < job.gpus_per_node; ++gpu) ports.push_back(PortOf(job, fault, node, gpu));
    std::string text;
    std::int64_t line = 0, cited_line = 0;
    int cited_gpu = -1;
    auto add = [&](int gpu, std::string_view what, const std::string& value) {
      text.append(kSys).append(std::to_string(gpu)).append("/ports/1/").append(what).append(":").append(value).append("\n");
      ++line;
      if (what == "counters/symbol_error" && ports[gpu].link_downed > 0) {
        cited_line = line;
        cited_gpu = gpu;
      }
    };
    // `grep -H . .../ports/1/{rate,state} .../ports/1/counters/{symbol_error,link_downed,port_xmit_wait}`:
    // each pattern's files in device order.
    for (int g = 0; g < job.gpus_per_node; ++g) add(g, "rate", std::string(ports[g].half_rate ? kHdr : kNdr));
    for (int g = 0; g < job.gpus_per_node; ++g) add(g, "state", "4: ACTIVE");
    for (int g = 0; g < job.gpus_per_node; ++g) add(g, "counters/symbol_error", std::to_string(ports[g].symbol_error));
    for (int g = 0; g < job.gpus_per_node; ++g) add(g, "counters/link_downed", std::to_string(ports[g].link_downed));
    for (int g = 0; g < job.gpus_per_node; ++g) add(g, "counters/port_xmit_wait", std::to_string(ports[g].xmit_wait));
    const std::string rel = name + "/ib_counters.log";
    std::ofstream out(incident / rel, std::ios::binary);
    out << text;
    if (!out) return Status::IoError((incident / rel).string() + ": cannot write");
    if (cited_gpu >= 0) {
      const std::size_t at = text.find(std::string(kSys) + std::to_string(cited_gpu) + "/ports/1/counters/symbol_error:");
      cited = {rel, cited_line, text.substr(at, text.find('\n', at) - at)};
    }
  }
  return cited;
}

}  // namespace denpex::sim
