// The fabric probes' plan (which groups of nodes run a probe together, round by round) and the
// line each probe's output file starts with (include/denpex/engine/preflight.h, docs/
// preflight.md "Fabric").
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "denpex/engine/preflight.h"
#include "preflight/host_split.h"

namespace denpex::engine {

std::vector<FabricRound> PlanFabric(const std::vector<std::string>& nodes, bool node_round) {
  std::vector<FabricRound> rounds;
  const std::size_t n = nodes.size();
  if (node_round && n > 0) {
    FabricRound r{.name = "node", .groups = {}};
    for (const std::string& node : nodes) r.groups.push_back({node});
    rounds.push_back(std::move(r));
  }
  if (n < 2) return rounds;
  if (n == 2) {
    rounds.push_back({.name = "pairs-1", .groups = {{nodes[0], nodes[1]}}});
    return rounds;
  }
  // Pair i is (i, i + 1 mod n). Even n: the even pairs, then the odd ones. Odd n: the same up to
  // pair n - 2; pair n - 1 (the last node with the first) meets both rounds' nodes and runs last.
  const std::size_t first_round = rounds.size();
  const std::size_t pair_rounds = n % 2 == 0 ? 2 : 3;
  for (std::size_t k = 0; k < pair_rounds; ++k) {
    rounds.push_back({.name = "pairs-" + std::to_string(k + 1), .groups = {}});
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t round = (n % 2 == 1 && i == n - 1) ? 2 : i % 2;
    rounds[first_round + round].groups.push_back({nodes[i], nodes[(i + 1) % n]});
  }
  return rounds;
}

ProbeCost EveryPairCost(std::int64_t nodes) {
  if (nodes < 2) return {};
  return {.probes = nodes * (nodes - 1) / 2, .rounds = nodes % 2 == 0 ? nodes - 1 : nodes};
}

namespace {
constexpr std::string_view kProbeTag = "# denpex fabric probe: ";
}  // namespace

std::optional<FabricProbeHeader> ParseFabricProbeHeader(std::string_view text) {
  for (std::int32_t n = 1; n <= 5 && !text.empty(); ++n) {
    const std::size_t eol = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(std::min(eol + 1, text.size()));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.starts_with(kProbeTag)) continue;
    line.remove_prefix(kProbeTag.size());
    FabricProbeHeader h;
    h.line = n;
    while (!line.empty()) {
      const std::size_t eq = line.find('=');
      if (eq == std::string_view::npos) break;
      const std::string_view key = line.substr(0, eq);
      line.remove_prefix(eq + 1);
      if (key == "status") {  // the last field: the rest of the line
        h.status = std::string(line);
        break;
      }
      const std::size_t end = std::min(line.find(' '), line.size());
      const std::string_view value = line.substr(0, end);
      line.remove_prefix(std::min(end + 1, line.size()));
      if (key == "round") {
        h.round = std::string(value);
      } else if (key == "launcher") {
        h.launcher = std::string(value);
      } else if (key == "ranks_per_node") {
        std::from_chars(value.data(), value.data() + value.size(), h.ranks_per_node);
      } else if (key == "nodes") {
        for (std::size_t at = 0; at < value.size();) {
          const std::size_t comma = std::min(value.find(',', at), value.size());
          if (comma > at) h.nodes.emplace_back(value.substr(at, comma - at));
          at = comma + 1;
        }
      }
    }
    if (!h.nodes.empty() && !h.status.empty()) return h;
  }
  return std::nullopt;
}

std::string FormatFabricProbeHeader(const FabricProbeHeader& h) {
  std::string nodes;
  for (const std::string& n : h.nodes) nodes += (nodes.empty() ? "" : ",") + n;
  return std::string(kProbeTag) + "round=" + h.round + " nodes=" + nodes +
         " launcher=" + h.launcher + " ranks_per_node=" + std::to_string(h.ranks_per_node) +
         " status=" + h.status;
}

std::vector<std::string> ExpandSlurmHostList(std::string_view list) {
  return preflight::ExpandHostList(list);
}

}  // namespace denpex::engine
