// The cluster's model: nodes as an HGX board and its HCAs look, benign noise, the scenario's
// faults and what each does to the nccl-tests runs, and the truth about them.
#include "cluster.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "model/rng.h"

namespace denpex::sim::preflight {
namespace {

// An 8-GPU HGX H100 board's GPU buses (nvidia-smi lists them in bus order), and more for
// larger boards.
constexpr int kGpuBus[16] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb,
                             0x1b, 0x2d, 0x3d, 0x60, 0x9d, 0xae, 0xbd, 0xde};

// What each fault does to the nccl-tests runs: a rail at half rate or missing slows every
// multi-node run of the node a little (NCCL spreads its channels over the other rails); halved
// NVLinks slow the node's own run, which is all NVLink.
constexpr double kHalfRatePairFactor = 0.85;
constexpr double kPortDownPairFactor = 0.875;
constexpr double kPcieDownPairFactor = 0.85;
constexpr double kNvlinkDownOwnFactor = 0.6;

std::string Host(const v1::PreflightScenario& s, int i) {
  const std::size_t width = std::max<std::size_t>(4, std::to_string(s.nodes()).size());
  std::string number = std::to_string(i + 1);
  if (number.size() < width) number.insert(0, width - number.size(), '0');
  return s.host_prefix() + number;
}

// A relative jitter of sd `sd`, clamped to 4 sd.
double Jitter(Rng& rng, double sd) {
  const double z = std::clamp(rng.Normal(), -4.0, 4.0);
  return 1.0 + sd * z;
}

std::string Cuda(const std::string& driver) {
  const int major = DriverMajor(driver);
  if (major >= 560) return "12.6";
  if (major >= 550) return "12.4";
  if (major >= 545) return "12.3";
  if (major >= 535) return "12.2";
  if (major >= 530) return "12.1";
  return "12.0";
}

// Another release than `driver`, as a node left behind (or updated ahead) would run.
std::string OtherDriver(const std::string& driver) {
  return DriverMajor(driver) >= 550 ? "535.161.08" : "550.54.15";
}

void Build(Cluster& c) {
  const v1::PreflightScenario& s = c.scenario;
  const int gpus = s.gpus_per_node();
  std::vector<int> buses(kGpuBus, kGpuBus + gpus);
  std::sort(buses.begin(), buses.end());
  c.nodes.resize(static_cast<std::size_t>(s.nodes()));
  for (int i = 0; i < s.nodes(); ++i) {
    Node& n = c.nodes[static_cast<std::size_t>(i)];
    Rng rng(c.seed, StreamId::kPreflightNode, static_cast<std::uint64_t>(i));
    n.host = Host(s, i);
    n.driver = s.driver();
    n.cuda = s.cuda();
    n.boot_noise = rng.Uniform();
    for (int g = 0; g < gpus; ++g) {
      Gpu gpu;
      gpu.bus = buses[static_cast<std::size_t>(g)];
      gpu.minor = g;
      gpu.numa = gpu.bus >= 0x80 ? 1 : 0;
      gpu.uuid_hi = rng.Next();
      gpu.uuid_lo = rng.Next();
      gpu.serial = 1652823000000ULL + rng.Next() % 100000000ULL;
      // Idle: most links at gen 1, some still at their max after a recent job.
      const double u = rng.Uniform();
      gpu.pcie_gen = u < 0.7 ? 1 : u < 0.8 ? 3 : 5;
      gpu.temperature = 27 + static_cast<int>(rng.UniformInt(0, 12));
      gpu.power_w = 66 + rng.Uniform() * 14;
      // A few GPUs carry correctable DRAM errors: benign, nothing judges them.
      if (rng.Uniform() < 0.06) {
        gpu.dram_correctable_aggregate = rng.UniformInt(1, 14);
        gpu.dram_correctable =
            rng.Uniform() < 0.5 ? rng.UniformInt(0, gpu.dram_correctable_aggregate + 1) : 0;
      }
      n.gpus.push_back(gpu);
    }
    n.nvlinks.assign(static_cast<std::size_t>(gpus),
                     std::vector<int>(static_cast<std::size_t>(gpus), s.nvlinks_per_pair()));
    int lid = 1 + i * (s.ib_ports() + 1);
    for (int p = 0; p < s.ib_ports(); ++p) {
      Port port;
      port.ca = "mlx5_" + std::to_string(p);
      port.rate = s.ib_rate_gbps();
      port.guid = 0xa088c20300000000ULL | (rng.Next() & 0xffffffULL);
      port.lid = lid++;
      port.bus = p < gpus ? buses[static_cast<std::size_t>(p)] - 1 : 0xc0 + p;
      port.numa = port.bus >= 0x80 ? 1 : 0;
      n.ports.push_back(port);
    }
    // The management/storage bond every node has: Ethernet, slower, the same everywhere.
    Port bond;
    bond.ca = "mlx5_bond_0";
    bond.compute = false;
    bond.ethernet = true;
    bond.rate = 100;
    bond.ca_type = "MT4125";
    bond.firmware = "22.39.1002";
    bond.guid = 0xb83fd20300000000ULL | (rng.Next() & 0xffffffULL);
    bond.bus = 0x0c;
    n.ports.push_back(bond);
  }
}

// An application's Xid (31: an MMU fault, 43: a channel reset after one) on a few nodes: the
// engine only warns on them.
void ApplicationXids(Cluster& c) {
  Rng rng(c.seed, StreamId::kPreflightNoise, 0);
  const int count = std::max(1, c.scenario.nodes() / 40);
  std::set<int> chosen;
  while (static_cast<int>(chosen.size()) < count)
    chosen.insert(static_cast<int>(rng.UniformInt(0, c.scenario.nodes())));
  for (const int i : chosen) {
    Node& n = c.nodes[static_cast<std::size_t>(i)];
    const Gpu& g = n.gpus[static_cast<std::size_t>(
        rng.UniformInt(0, static_cast<std::int64_t>(n.gpus.size())))];
    const bool new_words = DriverMajor(n.driver) >= 535;
    const int pid = static_cast<int>(rng.UniformInt(20000, 4000000));
    const double at = 20000 + rng.Uniform() * 500000;
    char buf[320];
    const std::string who = new_words ? "pid=" + std::to_string(pid) + ", name=python3, "
                                      : "pid=" + std::to_string(pid) + ", ";
    if (rng.Uniform() < 0.5) {
      std::snprintf(buf, sizeof buf,
                    "NVRM: Xid (PCI:0000:%02x:00): 31, %schannel 0x00000002, intr 00000000. MMU "
                    "Fault: ENGINE GRAPHICS GPC%d GPCCLIENT_T1_%d faulted @ "
                    "0x7f%02x_%08x. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
                    g.bus, who.c_str(), static_cast<int>(rng.UniformInt(0, 8)),
                    static_cast<int>(rng.UniformInt(0, 16)),
                    static_cast<unsigned>(rng.UniformInt(0, 256)),
                    static_cast<unsigned>(rng.Next() & 0xfffff000U));
      n.kernel.push_back(buf);
      n.kernel_at.push_back(at);
    }
    std::snprintf(buf, sizeof buf, "NVRM: Xid (PCI:0000:%02x:00): 43, %sCh 00000008", g.bus,
                  who.c_str());
    n.kernel.push_back(buf);
    n.kernel_at.push_back(at + 0.002 + rng.Uniform() * 0.01);
  }
}

// A fault's draws depend on its kind too, so that two scenarios that differ only in the kind
// do not hit the same node and the same device.
std::uint64_t DrawIndex(int fault, v1::PreflightFaultKind kind) {
  return (static_cast<std::uint64_t>(fault) << 8) | static_cast<std::uint64_t>(kind);
}

std::string XidWho(const Node& n) {
  return DriverMajor(n.driver) >= 535 ? "pid='<unknown>', name=<unknown>, " : "pid='<unknown>', ";
}

// The node each fault without one lands on: a node without a fault whose ring neighbours have
// none either (so one fault's runs never explain another's), else any node without one.
Status Place(Cluster& c, std::vector<int>& node_of) {
  const v1::PreflightScenario& s = c.scenario;
  const int nodes = s.nodes();
  std::vector<bool> taken(static_cast<std::size_t>(nodes), false);
  auto take = [&](int f, int i) {
    node_of[static_cast<std::size_t>(f)] = i;
    if (s.faults(f).kind() == v1::PREFLIGHT_FAULT_HEALTHY) return;
    taken[static_cast<std::size_t>(i)] = true;
    if (s.faults(f).kind() == v1::PREFLIGHT_FAULT_SLOW_LINK)
      taken[static_cast<std::size_t>((i + 1) % nodes)] = true;
  };
  for (int f = 0; f < s.faults_size(); ++f) {
    if (s.faults(f).node() > 0) take(f, s.faults(f).node() - 1);
  }
  for (int f = 0; f < s.faults_size(); ++f) {
    if (s.faults(f).node() > 0) continue;
    if (s.faults(f).kind() == v1::PREFLIGHT_FAULT_HEALTHY) {
      take(f, 0);
      continue;
    }
    const bool link = s.faults(f).kind() == v1::PREFLIGHT_FAULT_SLOW_LINK;
    auto free_at = [&](int i) {
      return !taken[static_cast<std::size_t>((i % nodes + nodes) % nodes)];
    };
    std::vector<int> apart, any;
    for (int i = 0; i < nodes; ++i) {
      const int last = link ? i + 1 : i;
      if (!free_at(i) || !free_at(last)) continue;
      any.push_back(i);
      if (free_at(i - 1) && free_at(last + 1)) apart.push_back(i);
    }
    const std::vector<int>& from = apart.empty() ? any : apart;
    if (from.empty()) {
      return Status::InvalidInput("faults[" + std::to_string(f) +
                                  "]: no node left without a fault among the " +
                                  std::to_string(nodes) + "; hint: fewer faults, or more nodes");
    }
    Rng rng(c.seed, StreamId::kPreflightPlace, DrawIndex(f, s.faults(f).kind()));
    take(f,
         from[static_cast<std::size_t>(rng.UniformInt(0, static_cast<std::int64_t>(from.size())))]);
  }
  return Status::Ok();
}

}  // namespace

int DriverMajor(const std::string& driver) {
  int major = 0;
  for (const char ch : driver) {
    if (ch < '0' || ch > '9') break;
    major = major * 10 + (ch - '0');
  }
  return major;
}

std::string FaultName(v1::PreflightFaultKind kind) {
  std::string name = v1::PreflightFaultKind_Name(kind);
  constexpr std::string_view kPrefix = "PREFLIGHT_FAULT_";
  if (name.starts_with(kPrefix)) name.erase(0, kPrefix.size());
  return name;
}

Result<Cluster> BuildCluster(const v1::PreflightScenario& scenario, std::uint64_t seed) {
  Cluster c;
  c.scenario = scenario;
  c.seed = seed;
  const v1::PreflightScenario& s = c.scenario;
  Build(c);
  ApplicationXids(c);
  std::vector<int> node_of(static_cast<std::size_t>(s.faults_size()), -1);
  if (Status st = Place(c, node_of); !st.ok()) return st;

  std::map<int, double> link_factor;  // node i -> the factor on its run with node i+1
  std::vector<std::string> bad;
  for (int f = 0; f < s.faults_size(); ++f) {
    const v1::PreflightFault& fault = s.faults(f);
    const int i = node_of[static_cast<std::size_t>(f)];
    Node& n = c.nodes[static_cast<std::size_t>(i)];
    Rng rng(seed, StreamId::kPreflightPlace, (std::uint64_t{1} << 32) + DrawIndex(f, fault.kind()));
    const auto gpu_count = static_cast<std::int64_t>(n.gpus.size());
    const std::string name = FaultName(fault.kind());
    switch (fault.kind()) {
      case v1::PREFLIGHT_FAULT_HEALTHY:
        c.truth.add_faults(name);
        continue;
      case v1::PREFLIGHT_FAULT_SLOW_LINK: {
        const std::string& a = n.host;
        const std::string& b = c.nodes[static_cast<std::size_t>((i + 1) % s.nodes())].host;
        link_factor[i] = fault.fraction();
        const std::string link = std::min(a, b) + "<->" + std::max(a, b);
        c.truth.add_bad_links(link);
        c.truth.add_faults(name + " " + link);
        continue;
      }
      case v1::PREFLIGHT_FAULT_PCIE_DOWNTRAINED:
        n.gpus[static_cast<std::size_t>(rng.UniformInt(0, gpu_count))].width = 8;
        n.pair_factor *= kPcieDownPairFactor;
        break;
      case v1::PREFLIGHT_FAULT_IB_PORT_HALF_RATE: {
        Port& p = n.ports[static_cast<std::size_t>(rng.UniformInt(0, s.ib_ports()))];
        p.rate /= 2;
        n.pair_factor *= kHalfRatePairFactor;
        break;
      }
      case v1::PREFLIGHT_FAULT_IB_PORT_DOWN: {
        Port& p = n.ports[static_cast<std::size_t>(rng.UniformInt(0, s.ib_ports()))];
        p.up = false;
        p.rate = 40;  // ConnectX-7's meaningless default for a port without a link
        n.pair_factor *= kPortDownPairFactor;
        break;
      }
      case v1::PREFLIGHT_FAULT_NVLINK_DOWN: {
        const auto a = static_cast<std::size_t>(rng.UniformInt(0, gpu_count));
        auto b = static_cast<std::size_t>(rng.UniformInt(0, gpu_count - 1));
        if (b >= a) ++b;
        n.nvlinks[a][b] = n.nvlinks[b][a] = s.nvlinks_per_pair() / 2;
        n.own_factor *= kNvlinkDownOwnFactor;
        break;
      }
      case v1::PREFLIGHT_FAULT_ROW_REMAP_PENDING: {
        Gpu& g = n.gpus[static_cast<std::size_t>(rng.UniformInt(0, gpu_count))];
        g.remap_pending = true;
        g.remap_correctable = 1;
        g.dram_correctable = std::max<std::int64_t>(g.dram_correctable, 1 + rng.UniformInt(0, 6));
        g.dram_correctable_aggregate = std::max(g.dram_correctable_aggregate, g.dram_correctable);
        char buf[256];
        std::snprintf(
            buf, sizeof buf,
            "NVRM: Xid (PCI:0000:%02x:00): 63, %sRow Remapper: New row (0x%012llx) marked for "
            "remapping, reset gpu to activate.",
            g.bus, XidWho(n).c_str(),
            static_cast<unsigned long long>(0x100000000ULL + (rng.Next() & 0xfffffffULL)));
        n.kernel.push_back(buf);
        n.kernel_at.push_back(30000 + rng.Uniform() * 400000);
        break;
      }
      case v1::PREFLIGHT_FAULT_OTHER_DRIVER:
        n.driver = OtherDriver(s.driver());
        n.cuda = Cuda(n.driver);
        break;
      case v1::PREFLIGHT_FAULT_GPU_LOST: {
        const auto g = static_cast<std::size_t>(rng.UniformInt(0, gpu_count));
        const int bus = n.gpus[g].bus;
        const double at = 30000 + rng.Uniform() * 400000;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "NVRM: Xid (PCI:0000:%02x:00): 79, %sGPU has fallen off the bus.", bus,
                      XidWho(n).c_str());
        n.kernel.push_back(buf);
        n.kernel_at.push_back(at);
        std::snprintf(buf, sizeof buf, "NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus.",
                      bus);
        n.kernel.push_back(buf);
        n.kernel_at.push_back(at + 0.000004);
        n.lost.push_back(n.gpus[g]);
        n.gpus.erase(n.gpus.begin() + static_cast<std::ptrdiff_t>(g));
        n.nvlinks.erase(n.nvlinks.begin() + static_cast<std::ptrdiff_t>(g));
        for (auto& row : n.nvlinks) row.erase(row.begin() + static_cast<std::ptrdiff_t>(g));
        break;
      }
      case v1::PREFLIGHT_FAULT_SLOW_NODE:
        n.own_factor *= fault.fraction();
        n.pair_factor *= fault.fraction();
        break;
      default:
        return Status::InvalidInput(
            "faults[" + std::to_string(f) +
            "]: no kind; hint: set kind to one of PreflightFaultKind's values");
    }
    n.fault = f;
    bad.push_back(n.host);
    c.truth.add_faults(name + " " + n.host);
  }
  std::sort(bad.begin(), bad.end());
  bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
  for (const std::string& b : bad) c.truth.add_bad_nodes(b);

  // The runs: each node alone, then (with the ring) each node with the next.
  const int nodes = s.nodes();
  for (int i = 0; i < nodes; ++i) {
    const Node& n = c.nodes[static_cast<std::size_t>(i)];
    Run r{.nodes = {i}, .file = n.host + "/nccl-tests.txt", .index = static_cast<std::uint64_t>(i)};
    Rng rng(seed, StreamId::kPreflightRun, r.index);
    r.busbw = s.node_busbw_gbps() * Jitter(rng, s.busbw_jitter()) * n.own_factor;
    c.runs.push_back(std::move(r));
  }
  if (s.plan() == v1::PREFLIGHT_PLAN_NODES_AND_RING) {
    for (int i = 0; i < nodes; ++i) {
      const int j = (i + 1) % nodes;
      const Node& a = c.nodes[static_cast<std::size_t>(i)];
      const Node& b = c.nodes[static_cast<std::size_t>(j)];
      Run r{.nodes = {i, j},
            .file = a.host + "_" + b.host + ".nccl-tests.txt",
            .index = static_cast<std::uint64_t>(nodes + i)};
      Rng rng(seed, StreamId::kPreflightRun, r.index);
      const auto link = link_factor.find(i);
      r.busbw = s.pair_busbw_gbps() * Jitter(rng, s.busbw_jitter()) * a.pair_factor *
                b.pair_factor * (link == link_factor.end() ? 1.0 : link->second);
      c.runs.push_back(std::move(r));
    }
  }
  c.truth.set_scenario(s.name());
  c.truth.set_seed(seed);
  c.truth.set_probe_runs(static_cast<std::int32_t>(c.runs.size()));
  c.truth.set_all_pair_runs(static_cast<std::int64_t>(nodes) * (nodes - 1) / 2 + nodes);
  return c;
}

}  // namespace denpex::sim::preflight
