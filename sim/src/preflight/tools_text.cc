// Each health tool's output as it prints it, from the cluster's facts: `nvidia-smi -q` (laid out
// as the real H800 block in tests/data/preflight/nvidia-smi-q/), `nvidia-smi topo -m`
// (tab-separated, NIC legend), `ibstat` (tab-indented), dmesg, and nccl-tests' all_reduce_perf
// (its table shaped like the real two-node H100 run in tests/data/preflight/nccl_tests/).
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "cluster.h"
#include "model/rng.h"

namespace denpex::sim::preflight {
namespace {

void Add(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Add(std::string& out, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n > 0) out.append(buf, static_cast<std::size_t>(std::min<int>(n, sizeof buf - 1)));
}

// `    Key<pad> : value`: nvidia-smi -q aligns every colon at column 43.
void Kv(std::string& out, int indent, const std::string& key, const std::string& value) {
  out.append(static_cast<std::size_t>(indent), ' ');
  out += key;
  const int pad = 42 - indent - static_cast<int>(key.size());
  out.append(static_cast<std::size_t>(std::max(pad, 1)), ' ');
  out += ": ";
  out += value;
  out += '\n';
}
void Section(std::string& out, int indent, const std::string& name) {
  out.append(static_cast<std::size_t>(indent), ' ');
  out += name;
  out += '\n';
}

std::string Uuid(const Gpu& g) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(g.uuid_hi >> 32),
                static_cast<unsigned long long>((g.uuid_hi >> 16) & 0xffff),
                static_cast<unsigned long long>(g.uuid_hi & 0xffff),
                static_cast<unsigned long long>(g.uuid_lo >> 48),
                static_cast<unsigned long long>(g.uuid_lo & 0xffffffffffffULL));
  return buf;
}

std::string Architecture(const std::string& model) {
  if (model.find("A100") != std::string::npos || model.find("A800") != std::string::npos)
    return "Ampere";
  if (model.find("B200") != std::string::npos || model.find("GB200") != std::string::npos)
    return "Blackwell";
  return "Hopper";
}

std::string Num(std::int64_t v) { return std::to_string(v); }

void GpuBlock(std::string& out, const Cluster& c, const Node& n, const Gpu& g) {
  const v1::PreflightScenario& s = c.scenario;
  const int major = DriverMajor(n.driver);
  char bus[32];
  std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", g.bus);
  out += "GPU ";
  out += bus;
  out += '\n';
  Kv(out, 4, "Product Name", s.gpu_model());
  Kv(out, 4, "Product Brand", "NVIDIA");
  Kv(out, 4, "Product Architecture", Architecture(s.gpu_model()));
  Kv(out, 4, "Display Mode", "Disabled");
  Kv(out, 4, "Display Active", "Disabled");
  Kv(out, 4, "Persistence Mode", "Enabled");
  Section(out, 4, "MIG Mode");
  Kv(out, 8, "Current", "Disabled");
  Kv(out, 8, "Pending", "Disabled");
  Kv(out, 4, "Accounting Mode", "Disabled");
  Kv(out, 4, "Accounting Mode Buffer Size", "4000");
  Section(out, 4, "Driver Model");
  Kv(out, 8, "Current", "N/A");
  Kv(out, 8, "Pending", "N/A");
  Kv(out, 4, "Serial Number", Num(static_cast<std::int64_t>(g.serial)));
  Kv(out, 4, "GPU UUID", Uuid(g));
  Kv(out, 4, "Minor Number", Num(g.minor));
  Kv(out, 4, "VBIOS Version", "96.00.89.00.01");
  Kv(out, 4, "MultiGPU Board", "No");
  char board[16];
  std::snprintf(board, sizeof board, "0x%x", g.bus << 8);
  Kv(out, 4, "Board ID", board);
  Kv(out, 4, "Board Part Number", "692-2G520-0200-000");
  Kv(out, 4, "GPU Part Number", "2330-885-A1");
  Kv(out, 4, "Module ID", Num(1 + (g.minor * 5 + 3) % 8));
  Section(out, 4, "Inforom Version");
  Kv(out, 8, "Image Version", "G520.0200.00.05");
  Kv(out, 8, "OEM Object", "2.1");
  Kv(out, 8, "ECC Object", "7.16");
  Kv(out, 8, "Power Management Object", "N/A");
  Section(out, 4, "GPU Operation Mode");
  Kv(out, 8, "Current", "N/A");
  Kv(out, 8, "Pending", "N/A");
  Kv(out, 4, "GSP Firmware Version", n.driver);
  Section(out, 4, "GPU Virtualization Mode");
  Kv(out, 8, "Virtualization Mode", "None");
  Kv(out, 8, "Host VGPU Mode", "N/A");
  Section(out, 4, "IBMNPU");
  Kv(out, 8, "Relaxed Ordering Mode", "N/A");
  Section(out, 4, "PCI");
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02X", g.bus);
  Kv(out, 8, "Bus", hex);
  Kv(out, 8, "Device", "0x00");
  Kv(out, 8, "Domain", "0x0000");
  Kv(out, 8, "Device Id", "0x233010DE");
  Kv(out, 8, "Bus Id", bus);
  Kv(out, 8, "Sub System Id", "0x16C110DE");
  Section(out, 8, "GPU Link Info");
  Section(out, 12, "PCIe Generation");
  Kv(out, 16, "Max", "5");
  Kv(out, 16, "Current", Num(g.pcie_gen));
  Kv(out, 16, "Device Current", Num(g.pcie_gen));
  Kv(out, 16, "Device Max", "5");
  Kv(out, 16, "Host Max", "5");
  Section(out, 12, "Link Width");
  Kv(out, 16, "Max", Num(g.width_max) + "x");
  Kv(out, 16, "Current", Num(g.width) + "x");
  Section(out, 8, "Bridge Chip");
  Kv(out, 12, "Type", "N/A");
  Kv(out, 12, "Firmware", "N/A");
  Kv(out, 8, "Replays Since Reset", "0");
  Kv(out, 8, "Replay Number Rollovers", "0");
  Kv(out, 8, "Tx Throughput", "0 KB/s");
  Kv(out, 8, "Rx Throughput", "0 KB/s");
  Kv(out, 8, "Atomic Caps Inbound", "N/A");
  Kv(out, 8, "Atomic Caps Outbound", "N/A");
  Kv(out, 4, "Fan Speed", "N/A");
  Kv(out, 4, "Performance State", "P0");
  Section(out, 4, major >= 535 ? "Clocks Event Reasons" : "Clocks Throttle Reasons");
  Kv(out, 8, "Idle", "Active");
  Kv(out, 8, "Applications Clocks Setting", "Not Active");
  Kv(out, 8, "SW Power Cap", "Not Active");
  Kv(out, 8, "HW Slowdown", "Not Active");
  Kv(out, 12, "HW Thermal Slowdown", "Not Active");
  Kv(out, 12, "HW Power Brake Slowdown", "Not Active");
  Kv(out, 8, "Sync Boost", "Not Active");
  Kv(out, 8, "SW Thermal Slowdown", "Not Active");
  Kv(out, 8, "Display Clock Setting", "Not Active");
  Section(out, 4, "FB Memory Usage");
  Kv(out, 8, "Total", "81559 MiB");
  Kv(out, 8, "Reserved", "328 MiB");
  Kv(out, 8, "Used", "0 MiB");
  Kv(out, 8, "Free", "81230 MiB");
  Section(out, 4, "BAR1 Memory Usage");
  Kv(out, 8, "Total", "131072 MiB");
  Kv(out, 8, "Used", "1 MiB");
  Kv(out, 8, "Free", "131071 MiB");
  Kv(out, 4, "Compute Mode", "Default");
  Section(out, 4, "Utilization");
  Kv(out, 8, "Gpu", "0 %");
  Kv(out, 8, "Memory", "0 %");
  Kv(out, 8, "Encoder", "0 %");
  Kv(out, 8, "Decoder", "0 %");
  Section(out, 4, "Ecc Mode");
  Kv(out, 8, "Current", "Enabled");
  Kv(out, 8, "Pending", "Enabled");
  // 550 split SRAM's uncorrectable errors into parity and SEC-DED and added the sources.
  Section(out, 4, "ECC Errors");
  for (const bool aggregate : {false, true}) {
    Section(out, 8, aggregate ? "Aggregate" : "Volatile");
    Kv(out, 12, "SRAM Correctable", "0");
    if (major >= 550) {
      Kv(out, 12, "SRAM Uncorrectable Parity", "0");
      Kv(out, 12, "SRAM Uncorrectable SEC-DED", "0");
    } else {
      Kv(out, 12, "SRAM Uncorrectable", "0");
    }
    Kv(out, 12, "DRAM Correctable",
       Num(aggregate ? g.dram_correctable_aggregate : g.dram_correctable));
    Kv(out, 12, "DRAM Uncorrectable", "0");
    if (aggregate && major >= 550) Kv(out, 12, "SRAM Threshold Exceeded", "No");
  }
  if (major >= 550) {
    Section(out, 8, "Aggregate Uncorrectable SRAM Sources");
    for (const char* src :
         {"SRAM L2", "SRAM SM", "SRAM Microcontroller", "SRAM PCIE", "SRAM Other"})
      Kv(out, 12, src, "0");
  }
  Section(out, 4, "Retired Pages");
  Kv(out, 8, "Single Bit ECC", "N/A");
  Kv(out, 8, "Double Bit ECC", "N/A");
  Kv(out, 8, "Pending Page Blacklist", "N/A");
  Section(out, 4, "Remapped Rows");
  Kv(out, 8, "Correctable Error", Num(g.remap_correctable));
  Kv(out, 8, "Uncorrectable Error", "0");
  Kv(out, 8, "Pending", g.remap_pending ? "Yes" : "No");
  Kv(out, 8, "Remapping Failure Occurred", "No");
  Section(out, 8, "Bank Remap Availability Histogram");
  Kv(out, 12, "Max", Num(2560 - g.remap_correctable) + " bank(s)");
  Kv(out, 12, "High", Num(g.remap_correctable) + " bank(s)");
  Kv(out, 12, "Partial", "0 bank(s)");
  Kv(out, 12, "Low", "0 bank(s)");
  Kv(out, 12, "None", "0 bank(s)");
  Section(out, 4, "Temperature");
  Kv(out, 8, "GPU Current Temp", Num(g.temperature) + " C");
  Kv(out, 8, "GPU T.Limit Temp", Num(87 - g.temperature - 1) + " C");
  Kv(out, 8, "GPU Shutdown Temp", "92 C");
  Kv(out, 8, "GPU Slowdown Temp", "89 C");
  Kv(out, 8, "GPU Max Operating Temp", "87 C");
  Kv(out, 8, "GPU Target Temperature", "N/A");
  Kv(out, 8, "Memory Current Temp", Num(g.temperature + 8) + " C");
  Kv(out, 8, "Memory Max Operating Temp", "95 C");
  Section(out, 4, "Power Readings");
  char power[32];
  std::snprintf(power, sizeof power, "%.2f W", g.power_w);
  Kv(out, 8, "Power Management", "Supported");
  Kv(out, 8, "Power Draw", power);
  Kv(out, 8, "Power Limit", "700.00 W");
  Kv(out, 8, "Default Power Limit", "700.00 W");
  Kv(out, 8, "Enforced Power Limit", "700.00 W");
  Kv(out, 8, "Min Power Limit", "200.00 W");
  Kv(out, 8, "Max Power Limit", "700.00 W");
  Section(out, 4, "Clocks");
  Kv(out, 8, "Graphics", "345 MHz");
  Kv(out, 8, "SM", "345 MHz");
  Kv(out, 8, "Memory", "2619 MHz");
  Kv(out, 8, "Video", "765 MHz");
  Section(out, 4, "Applications Clocks");
  Kv(out, 8, "Graphics", "1980 MHz");
  Kv(out, 8, "Memory", "2619 MHz");
  Section(out, 4, "Default Applications Clocks");
  Kv(out, 8, "Graphics", "1980 MHz");
  Kv(out, 8, "Memory", "2619 MHz");
  Section(out, 4, "Deferred Clocks");
  Kv(out, 8, "Memory", "N/A");
  Section(out, 4, "Max Clocks");
  Kv(out, 8, "Graphics", "1980 MHz");
  Kv(out, 8, "SM", "1980 MHz");
  Kv(out, 8, "Memory", "2619 MHz");
  Kv(out, 8, "Video", "1545 MHz");
  Section(out, 4, "Max Customer Boost Clocks");
  Kv(out, 8, "Graphics", "1980 MHz");
  Section(out, 4, "Clock Policy");
  Kv(out, 8, "Auto Boost", "N/A");
  Kv(out, 8, "Auto Boost Default", "N/A");
  Section(out, 4, "Voltage");
  Kv(out, 8, "Graphics", "670.000 mV");
  Section(out, 4, "Fabric");
  Kv(out, 8, "State", "Completed");
  Kv(out, 8, "Status", "Success");
  Kv(out, 4, "Processes", "None");
  out += '\n';
}

// `NV18`, ` X `: a topo -m cell.
std::string GpuCell(const Node& n, std::size_t a, std::size_t b) {
  if (a == b) return " X ";
  const int links = n.nvlinks[a][b];
  return links > 0 ? "NV" + std::to_string(links)
                   : (n.gpus[a].numa == n.gpus[b].numa ? "NODE" : "SYS");
}

std::string CpuAffinity(int numa) { return numa == 0 ? "0-55,112-167" : "56-111,168-223"; }

// nvidia-smi's ibstat order: CA names as strings sort.
std::vector<const Port*> SortedPorts(const Node& n) {
  std::vector<const Port*> ports;
  for (const Port& p : n.ports) ports.push_back(&p);
  std::sort(ports.begin(), ports.end(), [](const Port* a, const Port* b) { return a->ca < b->ca; });
  return ports;
}

// nccl-tests' time column: %7.0f past 10 ms, %7.1f past 100 us, else %7.2f.
std::string TimeText(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
  return buf;
}

// The real two-node H100 run's out-of-place times (us), 8 B to 8 GiB: the curve's shape.
constexpr double kSampleTimeUs[] = {135.8,  123.2,  123.3,  123.4,  123.0, 123.6, 126.6,  147.1,
                                    125.8,  126.9,  131.6,  138.6,  155.2, 159.4, 159.3,  167.1,
                                    174.2,  203.2,  254.0,  364.6,  571.9, 977.6, 1059.9, 1261.6,
                                    1652.2, 2360.9, 3817.5, 6759.0, 12646, 24361, 47535};
constexpr int kSizes = sizeof kSampleTimeUs / sizeof kSampleTimeUs[0];

}  // namespace

std::string NvidiaSmiQuery(const Cluster& c, const Node& n) {
  std::string out;
  const auto index = static_cast<std::uint64_t>(&n - c.nodes.data());
  out += "\n==============NVSMI LOG==============\n\n";
  Add(out, "Timestamp                                 : Mon Mar  3 09:%02d:%02d 2025\n",
      static_cast<int>(14 + index / 60 % 40), static_cast<int>(index % 60));
  Kv(out, 0, "Driver Version", n.driver);
  Kv(out, 0, "CUDA Version", n.cuda);
  out += '\n';
  Kv(out, 0, "Attached GPUs", std::to_string(n.gpus.size()));
  for (const Gpu& g : n.gpus) GpuBlock(out, c, n, g);
  return out;
}

std::string TopoMatrix(const Cluster& c, const Node& n) {
  (void)c;
  const bool gpu_numa_id = DriverMajor(n.driver) >= 535;
  std::string out;
  const std::size_t gpus = n.gpus.size();
  for (std::size_t g = 0; g < gpus; ++g) Add(out, "\tGPU%zu", g);
  for (std::size_t p = 0; p < n.ports.size(); ++p) Add(out, "\tNIC%zu", p);
  out += "\tCPU Affinity\tNUMA Affinity";
  if (gpu_numa_id) out += "\tGPU NUMA ID";
  out += '\n';
  // A GPU and the HCA beside it share a PCIe switch (PIX); the rest go through the host bridge
  // of their socket (NODE) or across sockets (SYS).
  auto gpu_nic = [&](const Gpu& g, const Port& p) {
    if (p.bus == g.bus - 1) return "PIX";
    return g.numa == p.numa ? "NODE" : "SYS";
  };
  for (std::size_t a = 0; a < gpus; ++a) {
    Add(out, "GPU%zu", a);
    for (std::size_t b = 0; b < gpus; ++b) Add(out, "\t%s", GpuCell(n, a, b).c_str());
    for (const Port& p : n.ports) Add(out, "\t%s", gpu_nic(n.gpus[a], p));
    Add(out, "\t%s\t%d", CpuAffinity(n.gpus[a].numa).c_str(), n.gpus[a].numa);
    if (gpu_numa_id) out += "\t\tN/A";
    out += '\n';
  }
  for (std::size_t p = 0; p < n.ports.size(); ++p) {
    const Port& port = n.ports[p];
    Add(out, "NIC%zu", p);
    for (std::size_t g = 0; g < gpus; ++g) Add(out, "\t%s", gpu_nic(n.gpus[g], port));
    for (std::size_t q = 0; q < n.ports.size(); ++q) {
      Add(out, "\t%s", p == q ? " X " : port.numa == n.ports[q].numa ? "NODE" : "SYS");
    }
    out += gpu_numa_id ? "\t\t\t\n" : "\t\t\n";
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
      "(e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
      "within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n"
      "\nNIC Legend:\n\n";
  for (std::size_t p = 0; p < n.ports.size(); ++p)
    Add(out, "  NIC%zu: %s\n", p, n.ports[p].ca.c_str());
  return out;
}

std::string Ibstat(const Cluster& c, const Node& n) {
  (void)c;
  std::string out;
  for (const Port* p : SortedPorts(n)) {
    const unsigned long long guid = p->guid;
    Add(out, "CA '%s'\n", p->ca.c_str());
    Add(out, "\tCA type: %s\n\tNumber of ports: 1\n\tFirmware version: %s\n\tHardware version: 0\n",
        p->ca_type.c_str(), p->firmware.c_str());
    Add(out, "\tNode GUID: 0x%016llx\n\tSystem image GUID: 0x%016llx\n\tPort 1:\n", guid, guid);
    Add(out, "\t\tState: %s\n\t\tPhysical state: %s\n\t\tRate: %g\n", p->up ? "Active" : "Down",
        p->up ? "LinkUp" : "Polling", p->rate);
    if (p->ethernet) {
      Add(out, "\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00010000\n");
      Add(out, "\t\tPort GUID: 0x%016llx\n\t\tLink layer: Ethernet\n",
          (guid & 0xffffff) | 0xba3fd2fffe000000ULL);
    } else {
      Add(out, "\t\tBase lid: %d\n\t\tLMC: 0\n\t\tSM lid: %d\n\t\tCapability mask: 0xa751e848\n",
          p->up ? p->lid : 65535, p->up ? 1 : 0);
      Add(out, "\t\tPort GUID: 0x%016llx\n\t\tLink layer: InfiniBand\n", guid);
    }
  }
  return out;
}

std::string KernelLog(const Cluster& c, const Node& n) {
  Rng rng(c.seed, StreamId::kPreflightNode,
          1'000'000 + static_cast<std::uint64_t>(&n - c.nodes.data()));
  std::vector<std::pair<double, std::string>> lines;
  auto at = [&](double base, double spread) {
    return base + n.boot_noise * spread + rng.Uniform() * spread * 0.1;
  };
  lines.emplace_back(0,
                     "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu "
                     "11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for "
                     "Ubuntu) 2.38) #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 (Ubuntu "
                     "5.15.0-105.115-generic 5.15.148)");
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Command line: BOOT_IMAGE=/boot/vmlinuz-5.15.0-105-generic "
                "root=UUID=%08llx-%04llx-4%03llx-a%03llx-%012llx ro console=tty0 "
                "console=ttyS0,115200n8 iommu=pt",
                static_cast<unsigned long long>(rng.Next() & 0xffffffff),
                static_cast<unsigned long long>(rng.Next() & 0xffff),
                static_cast<unsigned long long>(rng.Next() & 0xfff),
                static_cast<unsigned long long>(rng.Next() & 0xfff),
                static_cast<unsigned long long>(rng.Next() & 0xffffffffffffULL));
  lines.emplace_back(0, buf);
  double t = at(3.1, 0.8);
  for (const Port& p : n.ports) {
    std::snprintf(buf, sizeof buf, "mlx5_core 0000:%02x:00.0: firmware version: %s", p.bus,
                  p.firmware.c_str());
    lines.emplace_back(t, buf);
    t += 0.35 + rng.Uniform() * 0.2;
  }
  t = at(9.5, 1.5);
  lines.emplace_back(t, "nvidia: loading out-of-tree module taints kernel.");
  lines.emplace_back(t + 0.0004, "nvidia: module license 'NVIDIA' taints kernel.");
  lines.emplace_back(t + 0.021,
                     "nvidia-nvlink: Nvlink Core is being initialized, major device number 508");
  lines.emplace_back(t + 0.19, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  " + n.driver +
                                   "  " +
                                   (DriverMajor(n.driver) >= 550 ? "Tue Feb 27 19:10:47 UTC 2024"
                                                                 : "Wed Feb 28 01:35:51 UTC 2024"));
  std::vector<Gpu> all = n.gpus;
  all.insert(all.end(), n.lost.begin(), n.lost.end());
  std::sort(all.begin(), all.end(), [](const Gpu& a, const Gpu& b) { return a.bus < b.bus; });
  t += 4 + rng.Uniform();
  for (const Port& p : n.ports) {
    if (!p.up) continue;
    std::snprintf(buf, sizeof buf,
                  "mlx5_core 0000:%02x:00.0: Port module event: module 0, Cable plugged", p.bus);
    lines.emplace_back(t, buf);
    t += 0.01 + rng.Uniform() * 0.05;
  }
  t = at(52, 6);
  for (const Gpu& g : all) {
    std::snprintf(buf, sizeof buf,
                  "NVRM: GPU at PCI:0000:%02x:00: GPU-%08llx-%04llx-%04llx-%04llx-%012llx", g.bus,
                  static_cast<unsigned long long>(g.uuid_hi >> 32),
                  static_cast<unsigned long long>((g.uuid_hi >> 16) & 0xffff),
                  static_cast<unsigned long long>(g.uuid_hi & 0xffff),
                  static_cast<unsigned long long>(g.uuid_lo >> 48),
                  static_cast<unsigned long long>(g.uuid_lo & 0xffffffffffffULL));
    lines.emplace_back(t, buf);
    std::snprintf(buf, sizeof buf, "NVRM: GPU Board Serial Number: %llu",
                  static_cast<unsigned long long>(g.serial));
    lines.emplace_back(t + 0.000002, buf);
    t += 0.4 + rng.Uniform() * 0.3;
  }
  for (std::size_t i = 0; i < n.kernel.size(); ++i) lines.emplace_back(n.kernel_at[i], n.kernel[i]);
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [time, text] : lines) {
    const auto micros = static_cast<long long>(std::llround(time * 1e6));
    Add(out, "[%5lld.%06lld] ", micros / 1000000, micros % 1000000);
    out += text;
    out += '\n';
  }
  return out;
}

std::string NcclTests(const Cluster& c, const Run& r) {
  Rng rng(c.seed, StreamId::kPreflightRun, 1'000'000 + r.index);
  std::string out;
  out += "# Collective test starting: all_reduce_perf\n";
  out +=
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: "
      "20 agg iters: 1 validation: 1 graph: 0\n";
  out += "#\n# Using devices\n";
  int rank = 0;
  for (const int i : r.nodes) {
    const Node& n = c.nodes[static_cast<std::size_t>(i)];
    int pid = static_cast<int>(rng.UniformInt(3000, 900000));
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      Add(out, "#  Rank %2d Group  0 Pid %6d on %10s device %2zu [0000:%02x:00] %s\n", rank++,
          pid++, n.host.c_str(), g, n.gpus[g].bus, c.scenario.gpu_model().c_str());
    }
  }
  const double factor =
      2.0 * (rank - 1) / rank;  // all_reduce's bus bandwidth per algorithm bandwidth
  const std::uint64_t largest = std::uint64_t{8} << 30;
  // The sample's times scaled so the largest size's out-of-place bus bandwidth reads busbw.
  const double sample_algbw = static_cast<double>(largest) / kSampleTimeUs[kSizes - 1] / 1e3;
  const double scale = sample_algbw / (r.busbw / factor);
  out += "#\n";
  out +=
      "#                                                              out-of-place                 "
      "      in-place          \n";
  out +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  out +=
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)       \n";
  double sum = 0;
  for (int k = 0; k < kSizes; ++k) {
    const std::uint64_t bytes = std::uint64_t{8} << k;
    const double noise = k == kSizes - 1 ? 1.0 : 1.0 + 0.01 * std::clamp(rng.Normal(), -3.0, 3.0);
    const double oop = kSampleTimeUs[k] * scale * noise;
    const double ip =
        kSampleTimeUs[k] * scale * (1.0 + 0.006 * std::clamp(rng.Normal(), -3.0, 3.0));
    Add(out, "%12llu  %12llu  %8s  %6s  %6i", static_cast<unsigned long long>(bytes),
        static_cast<unsigned long long>(bytes / 4), "float", "sum", -1);
    for (const double us : {oop, ip}) {
      const double algbw = static_cast<double>(bytes) / us / 1e3;
      sum += algbw * factor;
      Add(out, "  %7s  %6.2f  %6.2f  %5s", TimeText(us).c_str(), algbw, algbw * factor, "0");
    }
    out += '\n';
  }
  out += "# Out of bounds values : 0 OK\n";
  Add(out, "# Avg bus bandwidth    : %g \n", sum / (2 * kSizes));
  out += "#\n# Collective test concluded: all_reduce_perf\n\n";
  return out;
}

}  // namespace denpex::sim::preflight
