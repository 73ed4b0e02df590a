#include "analyze/cascade.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace denpex::engine {
namespace {

struct Accumulator {
  const char* family = "";
  std::int32_t count = 0;
  std::vector<std::int32_t>
      ranks;  // as they come: counted distinct once (a 131k-rank wave adds 150 k)
  TimeNs first_time = 0;
  bool timed = false;
};

// How many distinct ranks `a` holds, marked off by rank (a sort of a 131k-rank wave's ranks
// took ~6 ms).
std::int32_t DistinctRanks(const Accumulator& a) {
  if (a.ranks.empty()) return 0;
  std::vector<char> seen(
      static_cast<std::size_t>(*std::max_element(a.ranks.begin(), a.ranks.end())) + 1, 0);
  std::int32_t distinct = 0;
  for (const std::int32_t r : a.ranks) {
    distinct += seen[static_cast<std::size_t>(r)] ? 0 : 1;
    seen[static_cast<std::size_t>(r)] = 1;
  }
  return distinct;
}

void Add(std::map<StrId, Accumulator>* groups, StrId signature, const char* family,
         std::int32_t rank, const Event& e) {
  Accumulator& a = (*groups)[signature];
  if (e.clock != Clock::kNone && (!a.timed || e.time < a.first_time)) {
    a.first_time = e.time;
    a.timed = true;
  }
  a.family = family;
  a.count += 1;
  if (rank >= 0) a.ranks.push_back(rank);
}

std::int32_t NodeOf(const JobFacts& facts, const Event& e) {
  if (e.rank >= 0 && e.rank < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[e.rank].node >= 0) {
    return facts.ranks[e.rank].node;
  }
  return e.node;
}

// An agent's own rendezvous failure, the last exception of its chained traceback:
// RendezvousConnectionError (its c10d store was lost), RendezvousTimeoutError (the join timed
// out), RendezvousClosedError. Not the inner exception, not a c10d connect warning.
bool AgentRendezvousError(const Incident& inc, const Event& e) {
  if (e.kind != Kind::kRendezvousError) return false;
  const auto* p = std::get_if<PythonError>(&e.detail);
  if (p == nullptr) return false;
  const std::string_view type = inc.str(p->type);
  return type.ends_with("RendezvousConnectionError") || type.ends_with("RendezvousTimeoutError") ||
         type.ends_with("RendezvousClosedError");
}

// The c10d store errors that are not failure reports of the launcher: each agent's rendezvous
// error (one per node whose agent reported no worker failure: the truth's one report per
// node), each worker's store connection reset (one per rank: its `recvValue failed` block and
// `should dump` warning are one error). Event indices, in event order.
std::vector<std::int32_t> StoreErrors(const Incident& inc, const JobFacts& facts,
                                      const std::function<bool(std::int32_t)>& is_excluded,
                                      std::int32_t initiator_node) {
  std::vector<std::int32_t> out;
  std::set<std::int32_t> nodes, ranks;
  for (const std::int32_t i : inc.OfKinds({Kind::kRendezvousError, Kind::kStoreError})) {
    const Event& e = inc.events[i];
    const std::int32_t node = NodeOf(facts, e);
    if (node >= 0 && node == initiator_node) continue;
    if (e.kind == Kind::kStoreError) {
      if (e.rank < 0 || is_excluded(e.rank) || !ranks.insert(e.rank).second) continue;
    } else {
      if (!AgentRendezvousError(inc, e) || node < 0 || !facts.nodes[node].reports.empty()) continue;
      if (!nodes.insert(node).second) continue;
    }
    out.push_back(i);
  }
  return out;
}

}  // namespace

CascadeSummary SummarizeCascade(const Incident& inc, const JobFacts& facts,
                                const std::vector<std::int32_t>& excluded,
                                std::int32_t initiator_node) {
  auto is_excluded = [&](std::int32_t r) {
    return std::find(excluded.begin(), excluded.end(), r) != excluded.end();
  };
  CascadeSummary out;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    if (!is_excluded(r) && (rf.timeouts > 0 || rf.torn_down || rf.exit_event)) {
      out.secondary_ranks.push_back(r);
    }
  }
  std::map<StrId, Accumulator> groups;
  VisitEvents(inc, facts.wave.timeouts, [&](std::int32_t i) {
    const Event& e = inc.events[i];
    if (is_excluded(e.rank)) return;
    Add(&groups, e.signature, "nccl_watchdog", e.rank, e);
    ++out.secondary_errors;
  });
  // Timeouts no rank could be given to are secondary errors all the same; none can be told to
  // be an excluded rank's (an initiator's own timeout printed without a rank is counted too).
  for (std::int32_t i : facts.wave.unranked_timeouts) {
    const Event& e = inc.events[i];
    Add(&groups, e.signature, "nccl_watchdog", -1, e);
    ++out.secondary_errors;
  }
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (n == initiator_node) continue;
    for (std::int32_t i : facts.nodes[n].reports) {
      const Event& e = inc.events[i];
      const std::int32_t rank = e.rank >= 0 ? e.rank : facts.nodes[n].failed_rank;
      Add(&groups, e.signature, "torchrun", rank, e);
      ++out.secondary_errors;
    }
  }
  for (std::int32_t i :
       facts.scheduler.srun_reports) {  // srun's `task(s) <ids>: <status>` lines of the others
    const Event& e = inc.events[i];
    const auto* n = std::get_if<SlurmNote>(&e.detail);
    if (e.kind != Kind::kTaskExit || n == nullptr) continue;
    const std::vector<std::int32_t> tasks = ParseTaskList(inc.str(n->tasks));
    if (std::any_of(tasks.begin(), tasks.end(), is_excluded)) continue;
    Add(&groups, e.signature, "slurm", tasks.empty() ? -1 : tasks.front(), e);
    ++out.secondary_errors;
  }
  for (std::int32_t i : StoreErrors(inc, facts, is_excluded, initiator_node)) {
    const Event& e = inc.events[i];
    Add(&groups, e.signature, "torchrun", e.rank, e);
    ++out.secondary_errors;
  }
  out.grouped_errors = out.secondary_errors;  // one incident per job in this slice
  for (auto& [signature, a] : groups) {
    out.groups.push_back({.signature = signature,
                          .family = a.family,
                          .count = a.count,
                          .ranks = DistinctRanks(a),
                          .first_time = a.first_time,
                          .timed = a.timed});
  }
  std::sort(out.groups.begin(), out.groups.end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(-a.count, a.first_time, inc.str(a.signature)) <
           std::make_tuple(-b.count, b.first_time, inc.str(b.signature));
  });
  return out;
}

}  // namespace denpex::engine
