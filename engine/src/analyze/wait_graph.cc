#include "analyze/wait_graph.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/range/iterator_range.hpp>

#include <algorithm>
#include <map>
#include <utility>

namespace denpex::engine {
namespace {

// Vertices 0 .. world-1 are ranks; the rest are collectives (one per group and SeqNum that
// someone timed out on). Edges point from what is waited on to who waits, so a search from a
// silent rank finds everyone stuck behind it.
using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// Tracing a search per terminal component is linear each (its ranks share one reach); beyond
// this many components, a rank's direct waiters stand in for its reach.
constexpr std::size_t kMaxTraced = 1024;

struct Edges {
  std::vector<std::pair<std::size_t, std::size_t>> list;
  std::size_t vertices = 0;
};

// A rank its agent tore down and that printed no timeout: alive until then, presumably
// blocked in its groups' collectives like its peers.
bool PresumedWaiting(const JobFacts& facts, std::size_t r) {
  return r < facts.ranks.size() && facts.ranks[r].torn_down && facts.ranks[r].timeouts == 0;
}

// A member placed on no node while some timeouts have no rank: one of them may be its own, so
// nothing says it held the collective up (WaveFacts::unranked_timeouts).
bool MayHaveReported(const JobFacts& facts, std::int32_t r) {
  return !facts.wave.unranked_timeouts.empty() &&
         (r >= static_cast<std::int32_t>(facts.ranks.size()) || facts.ranks[r].node < 0);
}

Edges BuildEdges(const JobFacts& facts, const std::vector<ProcessGroup>& groups, std::size_t world,
                 std::vector<std::int32_t>* blocking_groups) {
  Edges out;
  out.vertices = world;
  for (const ProcessGroup& g : groups) {
    std::map<std::int64_t, std::size_t> collective;  // SeqNum -> vertex
    std::vector<bool> blocked(g.members.size(), false);
    for (const GroupReport& rep : g.reports) {
      auto [it, added] = collective.try_emplace(rep.seq, out.vertices);
      if (added) ++out.vertices;
      out.list.emplace_back(it->second, rep.rank);
      if (!added) continue;
      // Members the collective waits on (reporters with the same SeqNum share its edges).
      for (std::size_t k = 0; k < g.members.size(); ++k) {
        if (!WaitsOn(g, rep, static_cast<std::int32_t>(k)) || MayHaveReported(facts, g.members[k])) continue;
        out.list.emplace_back(g.members[k], it->second);
        if (PresumedWaiting(facts, g.members[k])) out.list.emplace_back(it->second, g.members[k]);
        blocked[k] = true;
      }
      for (const GroupReport& other : g.reports) {  // laggards, when membership is unknown
        if (g.members.empty() && WaitsOn(g, rep, other.group_rank)) out.list.emplace_back(other.rank, it->second);
      }
    }
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      if (blocked[k] && g.members[k] < static_cast<std::int32_t>(blocking_groups->size())) {
        (*blocking_groups)[g.members[k]] += 1;
      }
    }
  }
  return out;
}

// The strongly connected component of each vertex, and whether it is terminal: one no wait
// leads out of. Edges are stored reversed (waited-on -> waiter), so a component is terminal
// when no edge enters it from another component.
struct Components {
  std::vector<std::size_t> of;
  std::vector<bool> terminal;  // by component
};

Components TerminalComponents(const Graph& g) {
  const std::size_t n = boost::num_vertices(g);
  Components c{.of = std::vector<std::size_t>(n), .terminal = std::vector<bool>(n, true)};
  boost::strong_components(g, boost::make_iterator_property_map(c.of.begin(), boost::get(boost::vertex_index, g)));
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const auto u = boost::source(e, g), v = boost::target(e, g);
    if (c.of[u] != c.of[v]) c.terminal[c.of[v]] = false;  // v waits on something outside
  }
  return c;
}

// Counts the reporters a search reaches.
class ReachVisitor : public boost::default_bfs_visitor {
 public:
  ReachVisitor(const JobFacts& facts, std::int32_t* count) : facts_(facts), count_(count) {}
  void discover_vertex(Vertex v, const Graph&) const {
    if (v < facts_.ranks.size() && facts_.ranks[v].timeouts > 0) ++*count_;
  }

 private:
  const JobFacts& facts_;
  std::int32_t* count_;
};

}  // namespace

WaitAnalysis AnalyzeWaits(const JobFacts& facts, const std::vector<ProcessGroup>& groups) {
  // Inferred members can lie beyond the ranks that left a log.
  std::size_t world = facts.ranks.size();
  for (const auto& g : groups) {
    for (std::int32_t m : g.members) world = std::max<std::size_t>(world, m + 1);
  }
  WaitAnalysis out;
  out.explains.assign(world, 0);
  out.blocking_groups.assign(world, 0);
  for (const auto& r : facts.ranks) out.reporters += r.timeouts > 0 ? 1 : 0;

  Edges edges = BuildEdges(facts, groups, world, &out.blocking_groups);
  const Graph graph(boost::edges_are_unsorted_multi_pass, edges.list.begin(), edges.list.end(),
                    edges.vertices);
  auto silent = [&](std::size_t r) { return r >= facts.ranks.size() || facts.ranks[r].timeouts == 0; };
  const Components comps = TerminalComponents(graph);

  std::vector<boost::default_color_type> color(edges.vertices);
  std::map<std::size_t, std::int32_t> reach;  // terminal component -> reporters it reaches
  for (std::size_t r = 0; r < world; ++r) {
    if (!silent(r) || out.blocking_groups[r] == 0 || !comps.terminal[comps.of[r]]) continue;
    if (const auto it = reach.find(comps.of[r]); it != reach.end()) {  // the same component: the same reach
      out.explains[r] = it->second;
      continue;
    }
    if (reach.size() >= kMaxTraced) {
      for (auto v : boost::make_iterator_range(boost::adjacent_vertices(r, graph))) {
        for (auto w : boost::make_iterator_range(boost::adjacent_vertices(v, graph))) {
          out.explains[r] += silent(w) ? 0 : 1;
        }
      }
      continue;
    }
    std::fill(color.begin(), color.end(), boost::white_color);
    boost::breadth_first_search(
        graph, static_cast<Vertex>(r),
        boost::visitor(ReachVisitor(facts, &out.explains[r]))
            .color_map(boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, graph))));
    reach.emplace(comps.of[r], out.explains[r]);
  }
  return out;
}

}  // namespace denpex::engine
