// `denpex preflight --from DIR` (docs/preflight.md): read every node's tool outputs, take what
// most nodes show as the norm, and name each node that is broken or differs from it.
#include "denpex/engine/preflight.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>

#include "analyze/gpu_health.h"
#include "analyze/hardware.h"
#include "denpex/common/input_file.h"
#include "denpex/engine/history_store.h"
#include "parse/parse_log.h"
#include "preflight/host_split.h"
#include "preflight/tool_outputs.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;
using preflight::DcgmDiag;
using preflight::IbPort;
using preflight::NcclTestsRun;
using preflight::TopoMatrix;

// One file read, kept whole for the evidence's line texts (tool outputs are small).
struct ReadFile {
  std::string rel;  // relative to DIR, '/'-separated
  fs::path path;
  std::string text;
  std::string problem;  // why it was not read; empty when it was
  // One host's part of a file that holds many (host_split.h): the file it came from, and the
  // line there of each of its lines. -1: a file as read.
  std::int32_t origin = -1;
  std::vector<std::int32_t> lines;
};

struct Node {
  std::string name;
  std::vector<std::int32_t> files;  // into Allocation::files
  NodeGpuHealth gpu;
  std::optional<TopoMatrix> topo;
  std::int32_t topo_file = -1;
  std::vector<std::pair<IbPort, std::int32_t>> ports;  // with its file
  std::vector<std::pair<DcgmDiag, std::int32_t>> dcgm;
  struct XidLine {
    std::int32_t code;  // -1: the "fallen off the bus" form without one
    std::string pci;    // `dddd:bb:dd`; empty when the line names none
    std::int32_t file, line;
  };
  std::vector<XidLine> xids;            // the kernel log's, in file and line order
  std::vector<NcclTestsRun> runs_read;  // with runs_file: its files' nccl-tests runs
  std::vector<std::int32_t> runs_file;
  std::string problem;  // nothing recognised among its files
  v1::PreflightNode out;
};

// A nccl-tests run with the file it came from and the nodes it ran on.
struct TestRun {
  NcclTestsRun run;
  std::int32_t file = -1;
  std::vector<std::string> nodes;  // distinct, sorted
};

// A probe `denpex preflight --fabric` ran, from its output file's first line.
struct Probe {
  FabricProbeHeader header;
  std::int32_t file = -1;
};

struct Allocation {
  std::vector<ReadFile> files;
  std::vector<Node> nodes;  // sorted by name
  std::vector<TestRun> runs;
  std::vector<Probe> probes;
  std::vector<std::string> problems;
};

bool LooksBinary(std::string_view text) {
  return text.substr(0, 4096).find('\0') != std::string_view::npos;
}

std::string_view LineOf(std::string_view text, std::int32_t line) {
  std::size_t at = 0;
  for (std::int32_t n = 1; n < line && at != std::string_view::npos; ++n) {
    at = text.find('\n', at);
    if (at != std::string_view::npos) ++at;
  }
  if (at == std::string_view::npos || at >= text.size()) return {};
  std::string_view l = text.substr(at, text.find('\n', at) - at);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

// Lists DIR: its folders are the nodes, every regular file under one is that node's; the files
// directly in DIR are the allocation's. No link is followed.
// A file that holds many nodes' outputs (pdsh's `host: ` lines, dshbak's blocks): each host's
// part becomes a file of that host's node, whatever folder it lies in (the lines say whose they
// are); a folder left with nothing else in it was only where the collection was saved.
void SplitFanOutFiles(Allocation* a, std::vector<std::int32_t>* loose) {
  std::map<std::string, std::size_t> node_of;
  for (std::size_t i = 0; i < a->nodes.size(); ++i) node_of[a->nodes[i].name] = i;
  std::vector<std::int32_t> split;
  const std::size_t files = a->files.size();
  for (std::size_t f = 0; f < files; ++f) {
    if (!a->files[f].problem.empty()) continue;
    std::vector<preflight::HostText> parts = preflight::SplitByHost(a->files[f].text);
    if (parts.empty()) continue;
    split.push_back(static_cast<std::int32_t>(f));
    for (preflight::HostText& part : parts) {
      a->files.push_back({a->files[f].rel,
                          {},
                          std::move(part.text),
                          {},
                          static_cast<std::int32_t>(f),
                          std::move(part.lines)});
      auto [it, added] = node_of.emplace(part.host, a->nodes.size());
      if (added) a->nodes.push_back(Node{.name = part.host});
      a->nodes[it->second].files.push_back(static_cast<std::int32_t>(a->files.size() - 1));
    }
  }
  if (split.empty()) return;
  auto was_split = [&](std::int32_t f) {
    return std::find(split.begin(), split.end(), f) != split.end();
  };
  std::erase_if(*loose, was_split);
  std::set<std::string> emptied;
  for (Node& n : a->nodes) {
    const bool had = !n.files.empty();
    std::erase_if(n.files, was_split);
    if (had && n.files.empty()) emptied.insert(n.name);
  }
  std::erase_if(a->nodes, [&](const Node& n) { return emptied.count(n.name) > 0; });
  std::sort(a->nodes.begin(), a->nodes.end(),
            [](const Node& x, const Node& y) { return x.name < y.name; });
}

Status ReadAllocation(const fs::path& dir, const PreflightOptions& options, Allocation* a) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return Status::NotFound(dir.string() + ": no such directory");
  if (!fs::is_directory(st)) {
    return Status::InvalidInput(
        dir.string() +
        ": not a directory; preflight --from reads a folder holding one folder per node");
  }
  auto add = [&](const fs::path& path, std::string rel) {
    a->files.push_back({std::move(rel), path, {}, {}});
    return static_cast<std::int32_t>(a->files.size() - 1);
  };
  std::vector<fs::directory_entry> top;
  for (const auto& e : fs::directory_iterator(dir, ec)) top.push_back(e);
  if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  std::sort(top.begin(), top.end());
  std::vector<std::int32_t> loose;  // the files directly in DIR
  for (const auto& e : top) {
    const std::string name = e.path().filename().string();
    if (e.is_symlink()) {
      a->problems.push_back(name + ": a symbolic link, not followed");
    } else if (e.is_directory()) {
      Node node{.name = name};
      std::vector<fs::path> paths;
      for (auto it = fs::recursive_directory_iterator(e.path(), ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file() && !it->is_symlink()) paths.push_back(it->path());
      }
      std::sort(paths.begin(), paths.end());
      for (const fs::path& p : paths)
        node.files.push_back(add(p, name + "/" + p.lexically_relative(e.path()).generic_string()));
      a->nodes.push_back(std::move(node));
    } else if (e.is_regular_file()) {
      loose.push_back(add(e.path(), name));
    }
  }
  // Read every file, in parallel (tool outputs of thousands of nodes); what could not be read is
  // a problem, in file order.
  tbb::parallel_for(std::size_t{0}, a->files.size(), [&](std::size_t i) {
    ReadFile& f = a->files[i];
    auto text = ReadInputFile(f.path, options.max_file_bytes, "a tool's output");
    if (!text.ok()) {
      f.problem = text.status().message();
    } else if (LooksBinary(*text)) {
      f.problem = "a binary file, skipped";
    } else {
      f.text = std::move(*text);
    }
  });
  for (const ReadFile& f : a->files) {
    if (!f.problem.empty()) a->problems.push_back(f.rel + ": " + f.problem);
  }
  for (Node& n : a->nodes) {
    std::erase_if(n.files, [&](std::int32_t f) {
      return !a->files[static_cast<std::size_t>(f)].problem.empty();
    });
  }
  SplitFanOutFiles(a, &loose);
  // The allocation's own files take part only through the nccl-tests runs they hold.
  for (const std::int32_t f : loose) {
    const std::string& text = a->files[static_cast<std::size_t>(f)].text;
    for (NcclTestsRun& r : preflight::ParseNcclTests(text))
      a->runs.push_back({std::move(r), f, {}});
    if (auto h = ParseFabricProbeHeader(text)) a->probes.push_back({std::move(*h), f});
  }
  return Status::Ok();
}

void AddSource(Node& n, std::string tool, const std::string& rel) {
  v1::PreflightSource* s = n.out.add_sources();
  s->set_tool(std::move(tool));
  s->set_file(rel);
}

// A host that a run or a probe directly in DIR names and no folder holds (fabric probes written by
// `denpex preflight --fabric`, nccl-tests runs of hosts whose tools were not collected) is a
// node too: its runs are all that is known of it.
void AddNodesOfRuns(Allocation* a) {
  std::set<std::string> known;
  for (const Node& n : a->nodes) known.insert(n.name);
  std::map<std::string, std::set<std::int32_t>> files_of;
  for (const TestRun& r : a->runs) {
    for (const std::string& host : r.run.hosts) {
      if (!host.empty() && known.count(host) == 0) files_of[host].insert(r.file);
    }
  }
  for (const Probe& p : a->probes) {
    for (const std::string& host : p.header.nodes) {
      if (known.count(host) == 0) files_of[host].insert(p.file);
    }
  }
  if (files_of.empty()) return;
  for (const auto& [host, files] : files_of) {
    Node n{.name = host};
    for (const std::int32_t f : files)
      AddSource(n, "nccl-tests", a->files[static_cast<std::size_t>(f)].rel);
    a->nodes.push_back(std::move(n));
  }
  std::sort(a->nodes.begin(), a->nodes.end(),
            [](const Node& x, const Node& y) { return x.name < y.name; });
}

// Tries every reader on every file of `n`.
void ReadNode(const Allocation& a, Node& n) {
  for (const std::int32_t f : n.files) {
    const ReadFile& file = a.files[static_cast<std::size_t>(f)];
    const std::size_t gpus = n.gpu.gpus.size();
    const std::string driver = n.gpu.driver;
    ParseGpuHealthText(file.text, f, &n.gpu);
    if (n.gpu.gpus.size() != gpus || n.gpu.driver != driver) {
      const bool xml = file.text.find("<nvidia_smi_log") != std::string::npos;
      const bool query = file.text.find("NVSMI LOG") != std::string::npos;
      AddSource(n, xml ? "nvidia-smi -q -x" : query ? "nvidia-smi -q" : "nvidia-smi", file.rel);
    }
    if (auto topo = preflight::ParseTopoMatrix(file.text); topo && !topo->rows.empty()) {
      n.topo = std::move(topo);
      n.topo_file = f;
      AddSource(n, "nvidia-smi topo -m", file.rel);
    }
    if (auto ports = preflight::ParseIbstat(file.text); !ports.empty()) {
      for (IbPort& p : ports) n.ports.emplace_back(std::move(p), f);
      AddSource(n, "ibstat", file.rel);
    } else if (auto verbs = preflight::ParseIbvDevinfo(file.text); !verbs.empty()) {
      for (IbPort& p : verbs) n.ports.emplace_back(std::move(p), f);
      AddSource(n, "ibv_devinfo", file.rel);
    }
    if (auto diag = preflight::ParseDcgmDiagJson(file.text)) {
      n.dcgm.emplace_back(std::move(*diag), f);
      AddSource(n, "dcgmi diag -j", file.rel);
    }
    if (file.text.find("NVRM: Xid") != std::string::npos ||
        file.text.find("fallen off the bus") != std::string::npos) {
      // The engine's own kernel-line recognisers, as `denpex diagnose` reads a kernel log.
      const ParsedLog log = ParseLog(
          file.text, FileContext{.file = 0, .kernel = true, .prefixes = SniffPrefixes(file.text)});
      const std::size_t before = n.xids.size();
      for (const Event& e : log.events) {
        if (e.kind != Kind::kXid && e.kind != Kind::kFallenOffBus) continue;
        const Xid* x = std::get_if<Xid>(&e.detail);
        n.xids.push_back(
            {x != nullptr ? x->code : -1,
             x != nullptr && x->pci != kNoStr ? std::string(log.strings.Get(x->pci)) : "", f,
             static_cast<std::int32_t>(e.line)});
      }
      if (n.xids.size() != before) AddSource(n, "kernel log", file.rel);
    }
    auto runs = preflight::ParseNcclTests(file.text);
    if (!runs.empty()) AddSource(n, "nccl-tests", file.rel);
    for (NcclTestsRun& r : runs) n.runs_read.push_back(std::move(r)), n.runs_file.push_back(f);
  }
  if (n.out.sources().empty()) {
    n.problem = n.name + ": no tool output recognised among its " + std::to_string(n.files.size()) +
                " files";
  }
}

// ---------------------------------------------------------------------------------------------
// The norm: what most nodes that report a value show.

template <typename T>
std::optional<T> Majority(const std::vector<std::optional<T>>& values) {
  std::map<T, int> count;
  for (const auto& v : values) {
    if (v) ++count[*v];
  }
  std::optional<T> best;
  int most = 0;
  for (const auto& [v, c] : count) {
    if (c > most) best = v, most = c;
  }
  return best;
}

// True when `norm` is what more than half of the nodes that report a value show: then a node
// that differs is the odd one. Else the allocation is split (a driver rolled out to half of
// it) and no side is the fault's: the difference is a warning.
template <typename T>
bool Clear(const std::vector<std::optional<T>>& values, const T& norm) {
  int reporting = 0, same = 0;
  for (const auto& v : values) reporting += v.has_value(), same += v.has_value() && *v == norm;
  return same * 2 > reporting;
}

std::optional<std::int32_t> GpuCount(const Node& n) {
  if (n.gpu.attached >= 0) return n.gpu.attached;
  if (n.gpu.gpus.empty()) return std::nullopt;
  return static_cast<std::int32_t>(n.gpu.gpus.size());
}
std::optional<std::string> GpuModel(const Node& n) {
  for (const GpuHealth& g : n.gpu.gpus) {
    if (!g.name.empty()) return g.name;
  }
  return std::nullopt;
}
std::optional<std::string> Driver(const Node& n) {
  return n.gpu.driver.empty() ? std::nullopt : std::optional(n.gpu.driver);
}

// Calls f(row, column, links) for each pair of GPUs once (the row before the column), the links
// the fewer of the pair's two cells show (the matrix is symmetric as printed; a pasted copy may
// not be).
template <typename F>
void ForEachGpuPair(const TopoMatrix& t, F&& f) {
  auto cell = [&](const TopoMatrix::Row& r, std::size_t c) {
    return c < r.cells.size() ? preflight::NvLinkCount(r.cells[c]) : 0;
  };
  for (const TopoMatrix::Row& r : t.rows) {
    if (!r.device.starts_with("GPU")) continue;
    const auto self = std::find(t.columns.begin(), t.columns.end(), r.device);
    if (self == t.columns.end()) continue;
    const auto mine = static_cast<std::size_t>(self - t.columns.begin());
    for (std::size_t c = mine + 1; c < t.columns.size(); ++c) {
      if (!t.columns[c].starts_with("GPU")) continue;
      const auto other = std::find_if(t.rows.begin(), t.rows.end(),
                                      [&](const auto& o) { return o.device == t.columns[c]; });
      const std::int32_t links =
          other == t.rows.end() ? cell(r, c) : std::min(cell(r, c), cell(*other, mine));
      f(r, t.columns[c], links);
    }
  }
}

// The fewest NVLinks between two GPUs of the node; nullopt without topo -m.
std::optional<std::int32_t> NvLinks(const Node& n) {
  if (!n.topo) return std::nullopt;
  std::optional<std::int32_t> fewest;
  ForEachGpuPair(*n.topo, [&](const TopoMatrix::Row&, const std::string&, std::int32_t links) {
    fewest = std::min(fewest.value_or(INT32_MAX), links);
  });
  return fewest.value_or(0);
}
// How close a GPU's nearest NIC is, from its topo -m row: 1 PIX (one PCIe switch) to 5 SYS
// (across the CPUs' interconnect); 0 when the row names no NIC.
int NearestNic(const TopoMatrix& t, const TopoMatrix::Row& gpu) {
  static constexpr std::string_view kClasses[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  int best = 0;
  for (std::size_t c = 0; c < t.columns.size() && c < gpu.cells.size(); ++c) {
    if (!t.columns[c].starts_with("NIC") && !t.columns[c].starts_with("mlx")) continue;
    for (int k = 0; k < 5; ++k) {
      if (gpu.cells[c] == kClasses[k] && (best == 0 || k + 1 < best)) best = k + 1;
    }
  }
  return best;
}
constexpr std::string_view kNicClass[] = {"", "PIX", "PXB", "PHB", "NODE", "SYS"};

// Active, and linked up where the tool says (ibv_devinfo without -v prints no physical state).
bool Up(const IbPort& p) {
  return p.state == "Active" && (p.physical_state.empty() || p.physical_state == "LinkUp");
}
std::string PortName(const IbPort& p) { return p.ca + "/" + std::to_string(p.port); }

// What a difference from a norm that half of the nodes or fewer hold adds to its message.
std::string Split(bool clear) {
  return clear ? ""
               : " (no value on more than half of the nodes: the allocation is split, judge which "
                 "side is right)";
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Findings

class Judge {
 public:
  Judge(Allocation& a, const PreflightOptions& o) : a_(a), o_(o) {}
  v1::PreflightReport Report();

 private:
  v1::PreflightFinding& Add(Node& n, std::string code, bool fail, std::string message) {
    v1::PreflightFinding* f = n.out.add_findings();
    f->set_code(std::move(code));
    f->set_fail(fail);
    f->set_gpu(-1);
    f->set_message(std::move(message));
    return *f;
  }
  void Cite(v1::PreflightFinding& f, std::int32_t file, std::int32_t line) {
    if (file < 0 || line <= 0) return;
    const ReadFile* rf = &a_.files[static_cast<std::size_t>(file)];
    if (rf->origin >= 0) {  // cite the line where it is in the file as collected
      if (static_cast<std::size_t>(line) > rf->lines.size()) return;
      line = rf->lines[static_cast<std::size_t>(line) - 1];
      rf = &a_.files[static_cast<std::size_t>(rf->origin)];
    }
    v1::Evidence* e = f.add_evidence();
    e->set_file(rf->rel);
    e->set_line(line);
    e->set_text(std::string(LineOf(rf->text, line)));
  }
  void Cite(v1::PreflightFinding& f, const HealthLine& l) {
    Cite(f, l.file, static_cast<std::int32_t>(l.span.line));
  }

  void Inventory();
  void Odd(Node& n);
  void Gpus(Node& n);
  void Ports(Node& n);
  void Dcgm(Node& n);
  void Xids(Node& n);
  void History(Node& n, const engine::History& history);
  void Fabric();
  void Probes();

  Allocation& a_;
  const PreflightOptions& o_;
  v1::PreflightInventory norm_;
  // Per port (`mlx5_0/1`): how many nodes have it up, and at which rate most do.
  std::map<std::string, std::map<double, int>> port_rates_;
  std::map<std::string, int> port_up_, port_seen_;
  std::map<std::string, std::map<std::int32_t, int>> pcie_widths_;  // per GPU model
  // Whether the norm of each is held by more than half of the nodes (Clear).
  bool clear_count_ = true, clear_model_ = true, clear_driver_ = true;
  // Per pair of GPUs: the NVLinks most nodes have between them, and whether more than half do.
  std::map<std::pair<std::string, std::string>, std::pair<std::int32_t, bool>> pair_links_;
  std::map<std::string, int> nearest_nic_;  // per topo GPU row (`GPU3`): NearestNic most nodes show
};

void Judge::Inventory() {
  std::vector<std::optional<std::int32_t>> counts, links;
  std::vector<std::optional<std::string>> models, drivers;
  for (Node& n : a_.nodes) {
    v1::PreflightInventory* inv = n.out.mutable_inventory();
    counts.push_back(GpuCount(n));
    models.push_back(GpuModel(n));
    drivers.push_back(Driver(n));
    links.push_back(NvLinks(n));
    inv->set_gpus(counts.back().value_or(0));
    inv->set_gpu_model(models.back().value_or(""));
    inv->set_driver(n.gpu.driver);
    inv->set_cuda(n.gpu.cuda);
    inv->set_nvlinks_per_pair(links.back().value_or(-1));
    std::int32_t up = 0;
    std::map<double, int> rates;
    std::set<std::string> seen;
    for (const auto& [p, f] : n.ports) {
      if (!seen.insert(PortName(p)).second) continue;
      ++port_seen_[PortName(p)];
      if (!Up(p)) continue;
      ++up;
      ++port_up_[PortName(p)];
      ++port_rates_[PortName(p)][p.rate_gbps];
      ++rates[p.rate_gbps];
    }
    inv->set_ib_ports_active(up);
    // The rate most of its up ports run at: the fabric's (a storage or management port, a bond,
    // may run slower on every node).
    const auto most = std::max_element(rates.begin(), rates.end(),
                                       [](auto& x, auto& y) { return x.second < y.second; });
    inv->set_ib_rate_gbps(most == rates.end() ? 0 : most->first);
    for (const GpuHealth& g : n.gpu.gpus) {
      if (g.pcie_width > 0) ++pcie_widths_[g.name][g.pcie_width];
    }
  }
  norm_.set_gpus(Majority(counts).value_or(0));
  norm_.set_gpu_model(Majority(models).value_or(""));
  norm_.set_driver(Majority(drivers).value_or(""));
  norm_.set_nvlinks_per_pair(Majority(links).value_or(-1));
  clear_count_ = Clear(counts, norm_.gpus());
  clear_model_ = Clear(models, norm_.gpu_model());
  clear_driver_ = Clear(drivers, norm_.driver());
  // Per pair of GPUs (`GPU5`, `GPU6`), the NVLinks most nodes have between them; nodes with
  // another GPU count are left out (nvidia-smi numbers the GPUs it sees, so a lost GPU shifts
  // every pair after it).
  std::map<std::pair<std::string, std::string>, std::vector<std::optional<std::int32_t>>> pairs;
  for (const Node& n : a_.nodes) {
    if (!n.topo || GpuCount(n).value_or(norm_.gpus()) != norm_.gpus()) continue;
    ForEachGpuPair(*n.topo, [&](const TopoMatrix::Row& r, const std::string& c, std::int32_t l) {
      pairs[{r.device, c}].push_back(l);
    });
  }
  for (const auto& [pair, values] : pairs) {
    const std::int32_t norm = Majority(values).value_or(0);
    pair_links_[pair] = {norm, Clear(values, norm)};
  }
  std::map<std::string, std::vector<std::optional<int>>> nearest;
  for (const Node& n : a_.nodes) {
    if (!n.topo) continue;
    for (const TopoMatrix::Row& r : n.topo->rows) {
      if (r.device.starts_with("GPU")) nearest[r.device].push_back(NearestNic(*n.topo, r));
    }
  }
  for (const auto& [gpu, values] : nearest) nearest_nic_[gpu] = Majority(values).value_or(0);
  std::vector<std::optional<std::int32_t>> ups;
  std::vector<std::optional<double>> rates;
  for (const Node& n : a_.nodes) {
    if (n.ports.empty()) continue;
    ups.push_back(n.out.inventory().ib_ports_active());
    rates.push_back(n.out.inventory().ib_rate_gbps());
  }
  norm_.set_ib_ports_active(Majority(ups).value_or(0));
  norm_.set_ib_rate_gbps(Majority(rates).value_or(0));
}

// A node whose inventory differs from what most nodes show.
void Judge::Odd(Node& n) {
  const v1::PreflightInventory& inv = n.out.inventory();
  if (auto count = GpuCount(n); count && norm_.gpus() > 0 && *count != norm_.gpus()) {
    auto& f = Add(n, "ODD_GPU_COUNT", clear_count_,
                  std::to_string(*count) + " GPUs where most nodes have " +
                      std::to_string(norm_.gpus()) + Split(clear_count_));
    Cite(f, n.gpu.attached_line);
  }
  if (!inv.gpu_model().empty() && !norm_.gpu_model().empty() &&
      inv.gpu_model() != norm_.gpu_model()) {
    Add(n, "ODD_GPU_MODEL", clear_model_,
        inv.gpu_model() + " where most nodes have " + norm_.gpu_model() + Split(clear_model_));
  }
  if (!inv.driver().empty() && !norm_.driver().empty() && inv.driver() != norm_.driver()) {
    Cite(Add(n, "ODD_DRIVER", clear_driver_,
             "driver " + inv.driver() + " where most nodes run " + norm_.driver() +
                 Split(clear_driver_)),
         n.gpu.driver_line);
  }
  if (n.topo && GpuCount(n).value_or(norm_.gpus()) == norm_.gpus()) {
    ForEachGpuPair(*n.topo,
                   [&](const TopoMatrix::Row& r, const std::string& c, std::int32_t links) {
                     const auto it = pair_links_.find({r.device, c});
                     if (it == pair_links_.end() || links >= it->second.first) return;
                     const auto [norm, clear] = it->second;
                     auto& f = Add(n, "ODD_NVLINKS", clear,
                                   r.device + " and " + c + " have " + std::to_string(links) +
                                       " NVLinks between them where most nodes' have " +
                                       std::to_string(norm) + Split(clear));
                     f.set_device(r.device + "<->" + c);
                     Cite(f, n.topo_file, r.line);
                   });
  }
  // A GPU whose nearest NIC is farther than on most nodes: GPUDirect RDMA through the CPUs'
  // interconnect. A warning: what it costs is the fabric runs' to show.
  if (n.topo) {
    for (const TopoMatrix::Row& r : n.topo->rows) {
      const int norm = r.device.starts_with("GPU") ? nearest_nic_[r.device] : 0;
      const int mine = norm > 0 ? NearestNic(*n.topo, r) : 0;
      if (mine <= norm) continue;
      auto& f = Add(n, "ODD_GPU_NIC_AFFINITY", false,
                    r.device + "'s nearest NIC is " + std::string(kNicClass[mine]) +
                        " away where most nodes' " + r.device + " reaches one through " +
                        std::string(kNicClass[norm]));
      f.set_device(r.device);
      Cite(f, n.topo_file, r.line);
    }
  }
}

void Judge::Gpus(Node& n) {
  for (const GpuHealth& g : n.gpu.gpus) {
    auto add = [&](std::string code, bool fail, std::string message) -> v1::PreflightFinding& {
      auto& f = Add(n, std::move(code), fail,
                    "GPU " + std::to_string(g.index) + " (" + g.pci + "): " + std::move(message));
      f.set_gpu(g.index);
      f.set_device(g.pci);
      return f;
    };
    if (g.volatile_uncorrectable > 0) {
      Cite(add("ECC_UNCORRECTABLE", true,
               std::to_string(g.volatile_uncorrectable) + " volatile uncorrectable ECC errors"),
           g.memory_line);
    }
    if (g.remap_failed)
      Cite(add("ROW_REMAP_FAILED", true, "row remapping failed: the GPU needs service"),
           g.memory_line);
    if (g.remap_pending) {
      Cite(add("ROW_REMAP_PENDING", true, "a row remap is pending: reset the GPU before use"),
           g.pending_line);
    }
    if (g.retire_pending) {
      Cite(add("RETIRED_PAGES", true, "a page retirement is pending: reset the GPU before use"),
           g.pending_line);
    }
    if (g.retired_dbe > 0 && !g.retire_pending) {
      Cite(add("RETIRED_PAGES", false,
               std::to_string(g.retired_dbe) + " pages retired for double-bit ECC errors"),
           g.retired_line);
    }
    if (g.hw_slowdown || g.hw_thermal || g.hw_power_brake) {
      Cite(add("THROTTLED", true,
               "clocks held down by the hardware (HW slowdown, thermal or power brake)"),
           g.throttle_line);
    } else if (g.sw_thermal) {
      Cite(add("THROTTLED", false, "clocks held down by the driver's thermal limit"),
           g.throttle_line);
    }
    if (!g.diag_failed.empty())
      Cite(add("DCGM_FAIL", true, "dcgmi diag: " + g.diag_failed + " failed"), g.diag_line);
    // A link trained below its width, lower than most GPUs of its model in the allocation (a
    // board wired at x8 shows Max 16x on every node, which is no fault).
    if (g.pcie_width > 0 && g.pcie_width_max > g.pcie_width) {
      const auto& widths = pcie_widths_[g.name];
      const auto most = std::max_element(widths.begin(), widths.end(),
                                         [](auto& x, auto& y) { return x.second < y.second; });
      if (most != widths.end() && g.pcie_width < most->first) {
        Cite(add("PCIE_WIDTH_DEGRADED", true,
                 "PCIe link at x" + std::to_string(g.pcie_width) + " of x" +
                     std::to_string(g.pcie_width_max) + " where most " + g.name + "s run at x" +
                     std::to_string(most->first)),
             g.pcie_line);
      }
    }
  }
}

void Judge::Ports(Node& n) {
  std::set<std::string> done;
  for (const auto& [p, file] : n.ports) {
    const std::string name = PortName(p);
    if (!done.insert(name).second) continue;
    const int up = port_up_[name];
    if (!Up(p)) {
      // A port down on most nodes is one the fabric does not use.
      if (up * 2 <= port_seen_[name]) continue;
      auto& f = Add(n, "IB_PORT_DOWN", true,
                    "port " + name + " is " + p.state + " (" + p.physical_state +
                        ") where it is Active on " + std::to_string(up) + " of " +
                        std::to_string(port_seen_[name]) + " nodes");
      f.set_device(name);
      Cite(f, file, p.line);
      continue;
    }
    const auto& rates = port_rates_[name];
    const auto most = std::max_element(rates.begin(), rates.end(),
                                       [](auto& x, auto& y) { return x.second < y.second; });
    if (most != rates.end() && p.rate_gbps < most->first) {
      auto& f = Add(n, "IB_PORT_SLOW", true,
                    "port " + name + " runs at " + Num(p.rate_gbps) +
                        " Gb/s where most nodes' run at " + Num(most->first));
      f.set_device(name);
      Cite(f, file, p.rate_line);
    }
  }
}

void Judge::Dcgm(Node& n) {
  for (const auto& [diag, file] : n.dcgm) {
    if (!diag.runtime_error.empty()) {  // the diagnostic did not run: nothing was tested
      auto& f = Add(n, "DCGM_WARN", false, "dcgmi diag did not run: " + diag.runtime_error);
      f.add_evidence()->set_file(a_.files[static_cast<std::size_t>(file)].rel);
    }
    for (const preflight::DcgmTest& t : diag.tests) {
      if (t.result != "Fail" && t.result != "Warn") continue;
      const std::string who = t.gpu >= 0 ? "GPU " + std::to_string(t.gpu) + ": " : "";
      auto& f = Add(
          n, t.result == "Fail" ? "DCGM_FAIL" : "DCGM_WARN", t.result == "Fail",
          who + "dcgmi diag " + t.name + " " + t.result + (t.info.empty() ? "" : ": " + t.info));
      f.set_gpu(t.gpu);
      const ReadFile& rf = a_.files[static_cast<std::size_t>(file)];
      v1::Evidence* e = f.add_evidence();
      e->set_file(rf.rel);
    }
  }
}

// The words for the codes the catalog keeps out of incidents (they follow another event), so a
// warning says what the line was; docs/log_formats.md §16.
std::string_view SecondaryXid(std::int32_t code) {
  switch (code) {
    case 45:
      return "a channel torn down after its process was killed or an earlier error (secondary)";
    case 63:
      return "a row remap recorded after an ECC error: the GPU's own state says whether one is "
             "pending";
    case 92:
      return "a high single-bit ECC error rate (corrected)";
    default:
      return "not a fault of the GPU on its own";
  }
}

// One finding per Xid code and GPU, citing its first line: the GPU's fault fails the node; an
// application's (13, 31, 43) or a secondary code says nothing about the GPU and only warns.
void Judge::Xids(Node& n) {
  std::map<std::pair<std::int32_t, std::string>, std::vector<const Node::XidLine*>> seen;
  for (const Node::XidLine& x : n.xids) seen[{x.code, x.pci}].push_back(&x);
  for (const auto& [key, lines] : seen) {
    const auto& [code, pci] = key;
    const std::optional<XidWords> words = DescribeXid(code);
    const GpuHealth* gpu = pci.empty() ? nullptr : n.gpu.ByPci(pci);
    std::string message =
        (code >= 0 ? "Xid " + std::to_string(code) : std::string("a GPU")) + " on " +
        (gpu != nullptr && gpu->index >= 0 ? "GPU " + std::to_string(gpu->index) + " (" + pci + ")"
         : pci.empty()                     ? "a GPU"
                                           : pci);
    message += words ? ": " + std::string(words->what) : ": " + std::string(SecondaryXid(code));
    if (lines.size() > 1) message += " (" + std::to_string(lines.size()) + " lines)";
    auto& f = Add(n, "XID", words && !words->application, std::move(message));
    f.set_gpu(gpu != nullptr ? gpu->index : -1);
    f.set_device(pci);
    Cite(f, lines.front()->file, lines.front()->line);
  }
}

// What a nccl-tests run is judged by: the bus bandwidth at its largest message (the fabric's,
// where the small sizes' average is mostly latency), the better of out-of-place and in-place (a
// slow link slows both; a hiccup of the host during one of them is not the fabric); its line.
std::pair<double, std::int32_t> Bandwidth(const NcclTestsRun& r) {
  const preflight::NcclTestsRow* top = nullptr;
  for (const auto& row : r.rows) {
    if (top == nullptr || row.bytes > top->bytes) top = &row;
  }
  if (top == nullptr) return {-1, 0};
  return {std::max(top->oop_busbw, top->ip_busbw), top->line};
}

// The history store's earlier hardware incidents of the node (docs/history_format.md).
void Judge::History(Node& n, const engine::History& history) {
  std::vector<const v1::HistoryEntry*> hardware;
  for (const v1::HistoryEntry& e : history.entries) {
    if (e.node() == n.name && HardwareOwned(e.owner())) hardware.push_back(&e);
  }
  if (hardware.empty()) return;
  std::string listed;
  for (std::size_t i = 0; i < hardware.size() && i < 5; ++i)
    listed += (i ? ", " : "") + DescribeHistoryEntry(*hardware[i]);
  if (hardware.size() > 5) listed += ", and " + std::to_string(hardware.size() - 5) + " more";
  auto& f =
      Add(n, "REPEAT_OFFENDER", hardware.size() >= 2,
          std::to_string(hardware.size()) + " earlier hardware incident(s) in the history store (" +
              listed + ")" + (hardware.size() >= 2 ? ": drain it" : ""));
  f.add_evidence()->set_file(o_.history.string());
}

// Runs over groups of nodes, some of them bad (slow, or a probe that did not finish): each node's
// bad runs, and the culprits, the nodes bad in every run they took part in (two at least, or
// their one-node run). A bad two-node run that no culprit explains is the link's; the callers
// say so.
template <typename Run>
struct Blame {
  std::map<std::string, std::vector<const Run*>> bad;
  std::set<std::string> culprits;
};
template <typename Run, typename NodesOf, typename IsBad>
Blame<Run> Attribute(const std::vector<const Run*>& runs, NodesOf nodes_of, IsBad is_bad) {
  Blame<Run> b;
  std::map<std::string, std::vector<const Run*>> all;
  for (const Run* r : runs) {
    for (const std::string& name : nodes_of(*r)) {
      all[name].push_back(r);
      if (is_bad(*r)) b.bad[name].push_back(r);
    }
  }
  for (const auto& [name, mine] : b.bad) {
    const auto& every = all[name];
    if (mine.size() == every.size() && (every.size() >= 2 || nodes_of(*every.front()).size() == 1))
      b.culprits.insert(name);
  }
  return b;
}

// nccl-tests: each run against the median of the runs of its shape (test, node count, rank
// count, largest message). A node slow in every run it took part in (or in its one-node run)
// fails; a slow two-node run that no such node explains is the link's, reported on both nodes.
void Judge::Fabric() {
  std::map<std::string, Node*> by_name;
  for (Node& n : a_.nodes) by_name[n.name] = &n;
  std::map<std::tuple<std::string, std::size_t, std::size_t, std::uint64_t>,
           std::vector<const TestRun*>>
      shapes;
  for (TestRun& r : a_.runs) {
    std::set<std::string> nodes(r.run.hosts.begin(), r.run.hosts.end());
    if (nodes.empty()) {  // a run that names no host: the node whose folder holds it
      for (const Node& n : a_.nodes) {
        if (std::find(n.files.begin(), n.files.end(), r.file) != n.files.end())
          nodes.insert(n.name);
      }
    }
    r.nodes.assign(nodes.begin(), nodes.end());
    const std::uint64_t largest =
        r.run.rows.empty()
            ? 0
            : std::max_element(r.run.rows.begin(), r.run.rows.end(), [](auto& x, auto& y) {
                return x.bytes < y.bytes;
              })->bytes;
    if (Bandwidth(r.run).first > 0)
      shapes[{r.run.test, r.nodes.size(), std::max<std::size_t>(r.run.hosts.size(), 1), largest}]
          .push_back(&r);
    const auto wrong =
        std::find_if(r.run.rows.begin(), r.run.rows.end(), [](auto& row) { return row.wrong > 0; });
    if (r.run.out_of_bounds || wrong != r.run.rows.end()) {
      for (const std::string& name : r.nodes) {
        if (by_name.count(name) == 0) continue;
        auto& f = Add(*by_name[name], "NCCL_TESTS_WRONG", r.nodes.size() == 1,
                      "nccl-tests " + r.run.test + " on " + std::to_string(r.nodes.size()) +
                          " node(s) returned wrong values");
        Cite(f, r.file, wrong != r.run.rows.end() ? wrong->line : r.run.avg_line);
      }
    }
  }
  const double floor = o_.busbw_floor;
  for (auto& [shape, runs] : shapes) {
    if (runs.size() < 3) continue;  // too few to say what is normal
    std::vector<double> bw;
    for (const TestRun* r : runs) bw.push_back(Bandwidth(r->run).first);
    std::nth_element(bw.begin(), bw.begin() + static_cast<std::ptrdiff_t>(bw.size() / 2), bw.end());
    const double median = bw[bw.size() / 2];
    const Blame<TestRun> blame = Attribute<TestRun>(
        runs, [](const TestRun& r) -> const auto& { return r.nodes; },
        [&](const TestRun& r) { return Bandwidth(r.run).first < floor * median; });
    auto culprit = [&](const std::string& name) { return blame.culprits.count(name) > 0; };
    const auto& slow_runs = blame.bad;
    const std::string test = std::get<0>(shape).empty() ? std::string("run") : std::get<0>(shape);
    const std::string of_median = " GB/s at the largest size, below " + Num(floor * 100) +
                                  "% of the median " + Num(median) + " GB/s of " +
                                  std::to_string(runs.size()) + " runs of its shape";
    for (const auto& [name, mine] : slow_runs) {
      if (by_name.count(name) == 0) continue;
      if (culprit(name)) {
        std::string values;
        for (const TestRun* r : mine)
          values += (values.empty() ? "" : ", ") + Num(Bandwidth(r->run).first);
        auto& f =
            Add(*by_name[name], "BUSBW_LOW", true,
                "nccl-tests " + test + ": slow in " +
                    (mine.size() == 1 ? "its run"
                                      : "all " + std::to_string(mine.size()) + " of its runs") +
                    ", bus bandwidth " + values + of_median);
        for (const TestRun* r : mine) Cite(f, r->file, Bandwidth(r->run).second);
        continue;
      }
      // The slow runs no culprit explains, between two nodes: the link's.
      for (const TestRun* r : mine) {
        if (r->nodes.size() != 2 || culprit(r->nodes[0]) || culprit(r->nodes[1])) continue;
        const std::string& other = r->nodes[0] == name ? r->nodes[1] : r->nodes[0];
        auto& f = Add(*by_name[name], "BUSBW_LOW", false,
                      "nccl-tests " + test + " with " + other + ": bus bandwidth " +
                          Num(Bandwidth(r->run).first) + of_median +
                          "; both nodes' other runs are not all slow: the link between them");
        f.set_device(std::min(name, other) + "<->" + std::max(name, other));
        Cite(f, r->file, Bandwidth(r->run).second);
      }
    }
  }
}

// The probes `denpex preflight --fabric` ran that did not finish, by the status its files'
// first lines carry. As for slow runs: a node whose every probe failed (two at least, or its
// one-node probe) fails; a failed pair probe that no such node explains leaves the link between
// them untested, a warning on both and a problem.
void Judge::Probes() {
  std::map<std::string, Node*> by_name;
  for (Node& n : a_.nodes) by_name[n.name] = &n;
  std::vector<const Probe*> probes;
  for (const Probe& p : a_.probes) probes.push_back(&p);
  const Blame<Probe> blame = Attribute<Probe>(
      probes, [](const Probe& p) -> const auto& { return p.header.nodes; },
      [](const Probe& p) { return p.header.status != "ok"; });
  auto culprit = [&](const std::string& name) { return blame.culprits.count(name) > 0; };
  const auto& failed = blame.bad;
  auto describe = [](const Probe& p) {
    std::string nodes;
    for (const std::string& n : p.header.nodes) nodes += (nodes.empty() ? "" : " ") + n;
    return "probe " + p.header.round + " (" + nodes + "): " + p.header.status;
  };
  for (const auto& [name, mine] : failed) {
    if (by_name.count(name) == 0) continue;
    if (culprit(name)) {
      auto& f = Add(*by_name[name], "PROBE_FAILED", true,
                    "fabric probe" + std::string(mine.size() == 1 ? "" : "s") + " failed: every " +
                        "probe with this node did not finish (" + describe(*mine.front()) +
                        (mine.size() > 1 ? ", and " + std::to_string(mine.size() - 1) + " more"
                                         : std::string()) +
                        ")");
      for (const Probe* p : mine) Cite(f, p->file, p->header.line);
      continue;
    }
    for (const Probe* p : mine) {
      const auto& nodes = p->header.nodes;
      if (nodes.size() != 2 || culprit(nodes[0]) || culprit(nodes[1])) continue;
      const std::string& other = nodes[0] == name ? nodes[1] : nodes[0];
      auto& f = Add(*by_name[name], "PROBE_FAILED", false,
                    describe(*p) + "; both nodes' other probes finished: the link between them " +
                        "is untested");
      f.set_device(std::min(name, other) + "<->" + std::max(name, other));
      Cite(f, p->file, p->header.line);
      if (name == std::min(name, other))
        a_.problems.push_back(a_.files[static_cast<std::size_t>(p->file)].rel + ": " +
                              describe(*p) + ": the link " + name + "<->" + other +
                              " is untested; run the probe again");
    }
  }
}

v1::PreflightReport Judge::Report() {
  engine::History history;
  if (!o_.history.empty()) {
    auto read = ReadHistory(o_.history);
    if (read.ok()) {
      history = std::move(*read);
      for (const std::string& p : history.problems) a_.problems.push_back(p);
      if (!history.exists)
        a_.problems.push_back(o_.history.string() +
                              ": no such history store; no node's history was read");
    } else {
      a_.problems.push_back(read.status().message());
    }
  }
  Inventory();
  for (Node& n : a_.nodes) {
    Odd(n);
    Gpus(n);
    Ports(n);
    Dcgm(n);
    Xids(n);
    History(n, history);
  }
  Fabric();
  Probes();
  v1::PreflightReport report;
  std::vector<std::string> failed;
  for (Node& n : a_.nodes) {
    const bool pass = std::none_of(n.out.findings().begin(), n.out.findings().end(),
                                   [](auto& f) { return f.fail(); });
    n.out.set_node(n.name);
    n.out.set_pass(pass);
    if (!pass) failed.push_back(n.name);
    *report.add_nodes() = std::move(n.out);
  }
  report.set_verdict(failed.empty() ? v1::PREFLIGHT_PASS : v1::PREFLIGHT_FAIL);
  report.set_exclude(SlurmHostList(failed));
  *report.mutable_majority() = norm_;
  for (std::string& p : a_.problems) report.add_problems(std::move(p));
  return report;
}

// `gpu-0041` -> ("gpu-", "0041"); no digits at the end: ("name", "").
std::pair<std::string, std::string> SplitNumber(const std::string& host) {
  std::size_t i = host.size();
  while (i > 0 && host[i - 1] >= '0' && host[i - 1] <= '9') --i;
  return {host.substr(0, i), host.substr(i)};
}

}  // namespace

std::string SlurmHostList(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  // Group by prefix and digit count (padding), keep the groups in the hosts' order.
  std::vector<std::pair<std::pair<std::string, std::size_t>, std::vector<std::string>>> groups;
  for (const std::string& h : hosts) {
    auto [prefix, digits] = SplitNumber(h);
    // Brackets in a name cannot be written inside a range.
    if (digits.empty() || prefix.find_first_of("[],") != std::string::npos) {
      groups.push_back({{h, 0}, {}});
      continue;
    }
    auto key = std::make_pair(prefix, digits.size());
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](auto& g) { return g.first == key && !g.second.empty(); });
    if (it == groups.end()) {
      groups.push_back({key, {digits}});
    } else {
      it->second.push_back(digits);
    }
  }
  std::string out;
  for (const auto& [key, numbers] : groups) {
    if (!out.empty()) out += ',';
    if (numbers.empty()) {
      out += key.first;
      continue;
    }
    if (numbers.size() == 1) {
      out += key.first + numbers[0];
      continue;
    }
    out += key.first + "[";
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      auto value = [&](std::size_t k) { return std::stoull(numbers[k]); };
      while (j + 1 < numbers.size() && value(j + 1) == value(j) + 1) ++j;
      if (i > 0) out += ',';
      out += numbers[i];
      if (j > i) out += "-" + numbers[j];
      i = j + 1;
    }
    out += "]";
  }
  return out;
}

Result<v1::PreflightReport> PreflightFrom(const std::filesystem::path& dir,
                                          const PreflightOptions& options) {
  Allocation a;
  if (Status st = ReadAllocation(dir, options, &a); !st.ok()) return st;
  tbb::parallel_for(std::size_t{0}, a.nodes.size(),
                    [&](std::size_t i) { ReadNode(a, a.nodes[i]); });
  for (Node& n : a.nodes) {  // in node order, whatever order the nodes were read in
    for (std::size_t k = 0; k < n.runs_read.size(); ++k)
      a.runs.push_back({std::move(n.runs_read[k]), n.runs_file[k], {}});
    if (!n.problem.empty()) a.problems.push_back(n.problem);
  }
  AddNodesOfRuns(&a);
  const bool any =
      !a.runs.empty() || std::any_of(a.nodes.begin(), a.nodes.end(),
                                     [](const Node& n) { return !n.out.sources().empty(); });
  if (!any) {
    return Status::InvalidInput(dir.string() +
                                ": no tool output recognised (nvidia-smi -q, nvidia-smi topo -m, "
                                "ibstat, dcgmi diag -j, nccl-tests); "
                                "put each node's outputs in a folder named after the node");
  }
  return Judge(a, options).Report();
}

std::string RenderPreflightText(const v1::PreflightReport& report) {
  std::ostringstream out;
  int failed = 0, warned = 0;
  for (const auto& n : report.nodes()) {
    failed += !n.pass();
    warned += n.pass() && !n.findings().empty();
  }
  out << "PREFLIGHT " << (report.verdict() == v1::PREFLIGHT_PASS ? "PASS" : "FAIL") << ": "
      << report.nodes_size() << " nodes, " << failed << " failed, " << warned << " with warnings\n";
  const auto& m = report.majority();
  // The norm, where a node tool said anything (a folder of fabric runs alone has none).
  if (m.gpus() > 0 || !m.driver().empty() || m.ib_ports_active() > 0) {
    out << "  most nodes: " << m.gpus() << " x " << (m.gpu_model().empty() ? "?" : m.gpu_model())
        << ", driver " << (m.driver().empty() ? "?" : m.driver());
    if (m.nvlinks_per_pair() >= 0) out << ", " << m.nvlinks_per_pair() << " NVLinks between GPUs";
    if (m.ib_ports_active() > 0)
      out << ", " << m.ib_ports_active() << " IB ports at " << Num(m.ib_rate_gbps()) << " Gb/s";
    out << "\n";
  }
  for (const bool fail : {true, false}) {
    for (const auto& n : report.nodes()) {
      for (const auto& f : n.findings()) {
        if (f.fail() != fail) continue;
        out << "  " << (fail ? "FAIL " : "WARN ") << n.node() << " " << f.code() << ": "
            << f.message() << "\n";
        for (const auto& e : f.evidence()) {
          out << "       " << e.file();
          if (e.line() > 0) out << ":" << e.line() << ": " << e.text();
          out << "\n";
        }
      }
    }
  }
  if (!report.exclude().empty()) out << "exclude: " << report.exclude() << "\n";
  for (const auto& p : report.problems()) out << "  note: " << p << "\n";
  return out.str();
}

}  // namespace denpex::engine
