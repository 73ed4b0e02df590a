// A slow NIC from its IB port's counters (see ib_ports.h).
#include "analyze/ib_ports.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "ingest/file_text.h"

namespace denpex::engine {
namespace {

// A line of a counter file, where it is: the file's index in the incident and the line.
struct Cited {
  std::uint32_t file = 0;
  LineSpan span;
};

struct Port {
  std::int32_t node = -1, device = -1;
  std::int64_t rate = 0, symbol_error = 0, link_downed = 0, xmit_wait = -1;
  Cited rate_at, symbol_at, wait_at;
  std::uint32_t seen = 0;  // the counters read (bits), to find one read twice
  // A counter given twice for one (node, device): two machines' files under one host name, not
  // the pieces of one rotated file (each piece holds other counters).
  bool twice = false;
};

std::int64_t LeadingInt(std::string_view s) {
  std::int64_t v = -1;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// `/sys/class/infiniband/mlx5_3/ports/1/counters/symbol_error:0` -> the port's field.
void ReadLine(std::string_view line, const Cited& at, std::int32_t node,
              std::map<std::pair<std::int32_t, std::int32_t>, Port>* ports) {
  constexpr std::string_view kRoot = "/sys/class/infiniband/";
  const std::size_t root = line.find(kRoot);
  if (root == std::string_view::npos) return;
  std::string_view rest = line.substr(root + kRoot.size());
  const std::string_view device = rest.substr(0, rest.find('/'));
  const std::size_t underscore = device.rfind('_');
  if (underscore == std::string_view::npos) return;
  const std::int64_t index = LeadingInt(device.substr(underscore + 1));
  const std::size_t colon = rest.find(':');
  if (index < 0 || colon == std::string_view::npos) return;
  const std::string_view key = rest.substr(0, colon);
  const std::int64_t value = LeadingInt(rest.substr(colon + 1));
  Port& p = (*ports)[{node, static_cast<std::int32_t>(index)}];
  p.node = node;
  p.device = static_cast<std::int32_t>(index);
  auto first = [&p](std::uint32_t bit) {  // the counter's first reading for this port
    const bool fresh = (p.seen & bit) == 0;
    p.twice |= !fresh;
    p.seen |= bit;
    return fresh;
  };
  if (key.ends_with("/rate")) {
    if (first(1)) p.rate = value, p.rate_at = at;
  } else if (key.ends_with("/symbol_error")) {
    if (first(2) || value > p.symbol_error) p.symbol_error = value, p.symbol_at = at;
  } else if (key.ends_with("/link_downed")) {
    if (first(4) || value > p.link_downed) p.link_downed = value;
  } else if (key.ends_with("/port_xmit_wait")) {
    if (first(8)) p.xmit_wait = value, p.wait_at = at;
  }
}

// A file of IB port counters is known by what it holds (`grep -r . /sys/class/infiniband/*/ports/
// */counters` lines), whatever its name; the ports of one node are gathered over its files (a
// rotated copy's pieces each hold some of the counters).
std::vector<Port> ReadPorts(const Incident& inc) {
  std::map<std::pair<std::int32_t, std::int32_t>, Port> ports;  // (node, device)
  for (std::size_t i = 0; i < inc.files.size(); ++i) {
    const LogFile& f = inc.files[i];
    // a relayed file's stream: its file holds other nodes' lines (ingest/streams.h)
    if (f.node < 0 || !f.readable || f.own_rank >= 0 || f.no_ib_counters || !f.tag.empty())
      continue;
    // Through the ingest's reader: mapped, no symbolic link followed, a shrinking file cut.
    auto file = FileText::Open(inc.root / f.path);
    if (!file.ok()) continue;
    const std::string_view text = file->view().substr(0, file->Readable());
    if (!MayHoldIbCounters(text)) continue;
    std::size_t at = 0;
    std::uint32_t number = 0;
    while (at < text.size()) {
      std::size_t end = text.find('\n', at);
      if (end == std::string_view::npos) end = text.size();
      ++number;
      const Cited cited{static_cast<std::uint32_t>(i),
                        LineSpan{number, at, static_cast<std::uint32_t>(end - at)}};
      ReadLine(text.substr(at, end - at), cited, f.node, &ports);
      at = end + 1;
    }
  }
  std::vector<Port> out;
  for (auto& [key, p] : ports) out.push_back(p);
  return out;
}

std::string Ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fx", x);
  return buf;
}

// Under srun with no line tying tasks to hosts: slurmctld's allocation lists the job's nodes,
// and srun's default (block) distribution gives the i-th node tasks i*n .. i*n+n-1, n the
// tasks per node (the world size over the nodes), SLURM_LOCALID k on GPU k. -1 when unknown.
std::int32_t AllocatedRank(const Incident& inc, const JobFacts& facts, std::int32_t node, std::int32_t device) {
  std::vector<std::string> hosts;
  for (const Event& e : inc.events) {
    if (e.kind == Kind::kJobAllocated) hosts = ExpandHostlist(inc.str(std::get<SlurmNote>(e.detail).node));  // the last one: a requeue's
  }
  const auto world = static_cast<std::int64_t>(facts.ranks.size());
  if (hosts.empty() || world == 0 || world % static_cast<std::int64_t>(hosts.size()) != 0) return -1;
  std::string name(inc.nodes[static_cast<std::size_t>(node)]);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto at = std::find(hosts.begin(), hosts.end(), name);
  const std::int64_t per_node = world / static_cast<std::int64_t>(hosts.size());
  if (at == hosts.end() || device >= per_node) return -1;
  return static_cast<std::int32_t>((at - hosts.begin()) * per_node + device);
}

std::int32_t RankOf(const Incident& inc, const JobFacts& facts, std::int32_t node, std::int32_t device, std::int32_t ports_on_node) {
  if (node < 0 || node >= static_cast<std::int32_t>(facts.nodes.size())) return -1;
  const std::vector<std::int32_t>& ranks = facts.nodes[node].ranks;
  for (std::int32_t r : ranks) {
    if (r < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[r].local_rank == device) return r;
  }
  // No line states local ranks (srun's labels carry global ranks only): a node's ranks are a
  // block in launch order, one per GPU and port, when it has one per port.
  if (ports_on_node == static_cast<std::int32_t>(ranks.size()) && device < ports_on_node) return ranks[device];
  return ranks.empty() ? AllocatedRank(inc, facts, node, device) : -1;
}

}  // namespace

std::optional<SlowPort> FindSlowPort(const Incident& inc, const JobFacts& facts) {
  const std::vector<Port> ports = ReadPorts(inc);
  if (ports.size() < 2) return std::nullopt;
  std::map<std::int64_t, std::int32_t> rates;  // the job's usual rate: the most common one
  std::vector<std::int64_t> waits;
  for (const Port& p : ports) {
    if (p.rate > 0) ++rates[p.rate];
    if (p.xmit_wait >= 0) waits.push_back(p.xmit_wait);
  }
  std::int64_t usual = 0;
  std::int32_t most = 0;
  for (const auto& [rate, count] : rates) {
    if (count > most) usual = rate, most = count;
  }
  std::int64_t median = 0;
  if (!waits.empty()) {
    std::nth_element(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(waits.size() / 2), waits.end());
    median = waits[waits.size() / 2];
  }
  // A port stands out by its rate (3) or its wait (2); errors only corroborate (1 each).
  const Port* best = nullptr;
  int best_score = 0, runner_up = 0;
  for (const Port& p : ports) {
    const bool slow_rate = usual > 0 && p.rate > 0 && p.rate < usual;
    const bool waits_long = median > 0 && p.xmit_wait >= 10 * median;
    if (!slow_rate && !waits_long) continue;
    const int score = (slow_rate ? 3 : 0) + (waits_long ? 2 : 0) + (p.symbol_error >= 100 ? 1 : 0) + (p.link_downed > 0 ? 1 : 0);
    if (score > best_score) {
      runner_up = best_score;
      best_score = score;
      best = &p;
    } else {
      runner_up = std::max(runner_up, score);
    }
  }
  if (best == nullptr || runner_up >= best_score) return std::nullopt;  // none, or two alike
  // A counter of the port read twice: the node's logs are several machines' (one host name for
  // all), so neither the port's machine nor its rank is known.
  if (best->twice) return std::nullopt;
  SlowPort s;
  s.node = best->node;
  s.device = best->device;
  const auto on_node = static_cast<std::int32_t>(std::count_if(ports.begin(), ports.end(), [&](const Port& p) { return p.node == best->node; }));
  s.rank = RankOf(inc, facts, best->node, best->device, on_node);
  s.by_allocation = s.rank >= 0 && facts.nodes[best->node].ranks.empty();
  s.half_rate = usual > 0 && best->rate > 0 && best->rate < usual;
  s.symbol_error = best->symbol_error;
  s.link_downed = best->link_downed;
  s.wait_ratio = median > 0 && best->xmit_wait > 0 ? static_cast<double>(best->xmit_wait) / static_cast<double>(median) : 0;
  const Cited& cited = best->symbol_error > 0 && best->symbol_at.span.line > 0 ? best->symbol_at
                       : s.half_rate                                           ? best->rate_at
                                                                               : best->wait_at;
  s.file = cited.file;
  s.line = cited.span;
  s.ports = static_cast<std::int32_t>(ports.size());
  return s;
}

std::vector<ErringPort> FindErringPorts(const Incident& inc, const std::vector<std::int32_t>& nodes) {
  std::vector<ErringPort> out;
  for (const Port& p : ReadPorts(inc)) {
    if (std::find(nodes.begin(), nodes.end(), p.node) == nodes.end()) continue;
    if (p.symbol_error < 100 && p.link_downed <= 0) continue;
    out.push_back(
        {p.node, p.device, p.symbol_at.file, p.symbol_at.span, p.symbol_error, p.link_downed});
  }
  return out;
}

void DiagnoseSlowPort(const Incident& inc, const JobFacts& facts, const SlowPort& p, Finding* f) {
  const std::string node = NodeName(inc, p.node);
  const std::string port = "mlx5_" + std::to_string(p.device);
  Commit({.rank = p.rank,
          .node = p.node,
          .local_rank = p.device,
          .failure_class = v1::FAILURE_CLASS_STRAGGLER,
          .owner = v1::OWNER_NETWORK,
          .confidence = p.half_rate ? 0.9 : 0.8},
         f);
  f->candidates.clear();
  f->candidates.push_back({p.rank, p.node, 1.0});
  f->lines.push_back({p.file, p.line, v1::EVIDENCE_ROLE_INITIATING});
  const std::vector<ReasonArg> where = {{"ports", std::to_string(p.ports)},
                                        {"port", port},
                                        {"node", node},
                                        {"rank", std::to_string(p.rank)},
                                        {"gpu", std::to_string(p.device)}};
  f->reason = Say(p.rank >= 0 ? ReasonId::kSlowNicOfRank : ReasonId::kSlowNicOfGpu, where);
  // What sets the port apart: the first sign opens the list, the others follow it after a comma.
  if (p.half_rate) f->reason.Add(ReasonId::kBelowUsualRate);
  if (p.wait_ratio >= 10) {
    if (p.half_rate) f->reason.Add(ReasonId::kListComma);
    f->reason.Add(ReasonId::kXmitWaitRatio, {{"ratio", Ratio(p.wait_ratio)}});
  }
  if (p.symbol_error > 0)
    f->reason.Add(ReasonId::kSymbolErrorsAfter, {{"count", std::to_string(p.symbol_error)}});
  if (p.link_downed > 0)
    f->reason.Add(ReasonId::kLinkDownedAfter, {{"count", std::to_string(p.link_downed)}});
  f->reason.Add(ReasonId::kSlowNicSlowsCollectives);
  if (p.by_allocation) f->reason.Add(ReasonId::kRankByAllocationOrder);
  f->cascade = SummarizeCascade(inc, facts, p.rank >= 0 ? std::vector<std::int32_t>{p.rank} : std::vector<std::int32_t>{}, p.node);
  f->recovery.push_back(
      {"inspect_nic", node, Say(ReasonId::kCheckSlowPort, {{"port", port}, {"node", node}})});
}

}  // namespace denpex::engine
