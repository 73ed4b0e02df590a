#include "analyze/groups.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace denpex::engine {
namespace {

// Stops the stride search on pathological inputs (it is linear in practice).
constexpr std::int64_t kSearchBudget = 20'000'000;

// A report whose line names no process group (torch <= 2.2 prints `[Rank N]`, N the rank within
// the group; `[PG  Rank N]` an unnamed group): UnnamedGroups places it.
bool Unnamed(const WatchdogTimeout& w) { return w.pg == kNoStr && w.pg_desc == kNoStr; }

std::vector<ProcessGroup> CollectReports(const Incident& inc, const JobFacts& facts) {
  std::vector<ProcessGroup> groups;
  std::unordered_map<std::uint64_t, std::size_t> index;  // (uid, desc) -> group
  // In time order: a rank's first timeout per group wins.
  VisitEvents(inc, facts.wave.timeouts, [&](std::int32_t i) {
    const Event& e = inc.events[i];
    const auto& w = std::get<WatchdogTimeout>(e.detail);
    if (Unnamed(w)) return;
    auto [it, added] = index.try_emplace(std::uint64_t{w.pg} << 32 | w.pg_desc, groups.size());
    if (added) groups.push_back({.uid = w.pg, .desc = w.pg_desc});
    groups[it->second].reports.push_back({.rank = e.rank,
                                          .group_rank = w.group_rank,
                                          .seq = w.seq,
                                          .last_enqueued = w.last_enqueued,
                                          .event = i});
  });
  for (auto& g : groups) {
    // A rank's first report in the group (the stable sort keeps time order within a rank).
    std::stable_sort(g.reports.begin(), g.reports.end(),
                     [](const auto& a, const auto& b) { return a.rank < b.rank; });
    g.reports.erase(std::unique(g.reports.begin(), g.reports.end(),
                                [](const auto& a, const auto& b) { return a.rank == b.rank; }),
                    g.reports.end());
    std::sort(g.reports.begin(), g.reports.end(), [](const auto& a, const auto& b) {
      return std::tie(a.group_rank, a.rank) < std::tie(b.group_rank, b.rank);
    });
  }
  return groups;
}

// The base of `g` under `stride`, when every reporter sits where the progression says.
std::optional<std::int64_t> BaseFor(const ProcessGroup& g, std::int64_t stride) {
  const GroupReport& first = g.reports.front();
  const std::int64_t base = first.rank - stride * first.group_rank;
  if (base < 0) return std::nullopt;
  for (const auto& r : g.reports) {
    if (r.rank != base + stride * r.group_rank) return std::nullopt;
  }
  return base;
}

// The stride shown by a group whose reporters hold two different group ranks; 0 when the
// group shows none (or none that fits).
std::int64_t DirectStride(const ProcessGroup& g) {
  const GroupReport& lo = g.reports.front();
  const GroupReport& hi = g.reports.back();
  if (hi.group_rank == lo.group_rank) return 0;
  const std::int64_t dg = hi.rank - lo.rank, dr = hi.group_rank - lo.group_rank;
  if (dg <= 0 || dg % dr != 0 || !BaseFor(g, dg / dr)) return 0;
  return dg / dr;
}

// Groups of one kind (same description) partition the ranks: no rank is in two of them. When
// no group shows its stride directly (each has reporters at one group rank only, e.g. the
// one survivor of a pair), the stride is the only one under which the groups, each grown to
// `size` members, never claim one reporter twice. 0 when none or several qualify.
std::int64_t PartitionStride(const std::vector<ProcessGroup*>& kind, std::int64_t size) {
  std::map<std::int32_t, std::size_t> owner;  // reporter rank -> group within the kind
  std::int64_t max_stride = -1;
  for (std::size_t gi = 0; gi < kind.size(); ++gi) {
    for (const auto& r : kind[gi]->reports) {
      owner[r.rank] = gi;
      if (r.group_rank > 0) {
        const std::int64_t bound = r.rank / r.group_rank;
        max_stride = max_stride < 0 ? bound : std::min(max_stride, bound);
      }
    }
  }
  std::int64_t found = 0, budget = kSearchBudget;
  for (std::int64_t stride = 1; stride <= max_stride && budget > 0; ++stride) {
    bool consistent = true;
    for (std::size_t gi = 0; gi < kind.size() && consistent; ++gi) {
      const auto base = BaseFor(*kind[gi], stride);
      consistent = base.has_value();
      for (std::int64_t k = 0; consistent && k < size; ++k, --budget) {
        auto it = owner.find(static_cast<std::int32_t>(*base + stride * k));
        consistent = it == owner.end() || it->second == gi;
      }
    }
    if (!consistent) continue;
    if (found != 0) return 0;  // ambiguous
    found = stride;
  }
  return budget > 0 ? found : 0;
}

// The size of a kind's groups when its highest group ranks never reported (they were silent,
// or torn down before their watchdogs fired, in every group of the kind): the reporters only
// bound it from below. The groups of a parallelism grid tile the world, so a block of
// `stride * size` ranks divides the world and every group starts within the first `stride`
// ranks of its block. The smallest size from `seen` up that satisfies both is never larger
// than the true one; `seen` when none does (the world size is unknown or the groups are no grid).
// When the world size seen is no multiple of the block (the ranks of a top node that left no
// logs are missing from it), the bases still show the block when they lie in two or more of
// them (a pipeline's later stages start a block further on): the smallest such block is taken.
std::int64_t TiledSize(const std::vector<ProcessGroup*>& kind, std::int64_t stride, std::int64_t seen,
                       std::int64_t world_size) {
  if (stride <= 0 || seen <= 0 || world_size <= 0) return seen;
  std::vector<std::int64_t> bases;
  for (const ProcessGroup* g : kind) {
    if (const auto b = BaseFor(*g, stride)) bases.push_back(*b);
  }
  const std::int64_t top_base = bases.empty() ? 0 : *std::max_element(bases.begin(), bases.end());
  for (std::int64_t n = seen; stride * n <= std::max(world_size, top_base); ++n) {
    const std::int64_t block = stride * n;
    if (world_size % block != 0 && top_base < block) continue;
    if (std::all_of(bases.begin(), bases.end(), [&](std::int64_t b) { return b % block < stride; })) return n;
  }
  return seen;
}

// Members of each group of one kind.
void InferKind(const std::vector<ProcessGroup*>& kind, std::int64_t world_size, bool default_pg) {
  std::int64_t size = 0;
  std::set<std::int64_t> direct;
  for (const ProcessGroup* g : kind) {
    size = std::max<std::int64_t>(size, g->reports.back().group_rank + 1);
    if (const std::int64_t s = DirectStride(*g)) direct.insert(s);
  }
  if (default_pg) size = std::max(size, world_size);
  std::int64_t stride = 0;
  if (direct.size() == 1) {
    stride = *direct.begin();
  } else if (direct.empty() && size > 1) {
    stride = PartitionStride(kind, size);
  }
  if (!default_pg) size = TiledSize(kind, stride, size, world_size);
  for (ProcessGroup* g : kind) {
    const std::int64_t own = DirectStride(*g);
    const std::int64_t s = own != 0 ? own : stride;
    const auto base = s != 0 ? BaseFor(*g, s) : std::nullopt;
    if (!base) continue;
    for (std::int64_t k = 0; k < size; ++k) g->members.push_back(static_cast<std::int32_t>(*base + s * k));
  }
}

}  // namespace

// Unnamed groups (see Unnamed). The collective a report timed out on still tells its groups
// apart: every member of one group waits in the same collective (OpType, NumelIn, SeqNum), so
// the reports of one such collective are the groups of one kind. They are split into groups
// by the stride under which the groups, each `size` members wide, never claim one reporter
// twice (Megatron's groups are arithmetic progressions) and at least one group shows two of its
// members (the stride is seen, not assumed). A collective whose reporters fit no such stride,
// or several (a handful of reports a wrong stride also fits), or show one group rank per group
// only (a pipeline pair's survivor), yields no group: its ranks are left out, not guessed.
namespace {

using Collective = std::tuple<StrId, std::int64_t, std::int64_t>;  // op, numel in, seq

// Whether `stride` splits `reports` into groups (base = rank - stride * group rank) that never
// claim one reporter twice, `size` members each, and at least one of which shows two different
// group ranks. `base_of` is scratch space (reporter rank -> its group's base).
bool SplitsByStride(const std::vector<GroupReport>& reports, std::int64_t stride, std::int64_t size,
                    std::unordered_map<std::int32_t, std::int64_t>* base_of, std::int64_t* budget) {
  base_of->clear();
  std::unordered_map<std::int64_t, std::int32_t> first_rank;  // base -> a member's group rank
  bool seen = false;
  for (const GroupReport& r : reports) {
    const std::int64_t base = r.rank - stride * r.group_rank;
    if (base < 0) return false;
    (*base_of)[r.rank] = base;
    const auto [it, fresh] = first_rank.emplace(base, r.group_rank);
    seen = seen || (!fresh && it->second != r.group_rank);
  }
  if (!seen) return false;
  *budget -= static_cast<std::int64_t>(first_rank.size()) * size + static_cast<std::int64_t>(reports.size());
  for (const auto& [base, group_rank] : first_rank) {
    for (std::int64_t k = 0; k < size; ++k) {
      const auto it = base_of->find(static_cast<std::int32_t>(base + stride * k));
      if (it != base_of->end() && it->second != base) return false;
    }
  }
  return true;
}

// The one stride that splits `reports` (SplitsByStride); 0 when none does, when several do
// (ambiguous: nothing is inferred), or when the search ran out of budget.
std::int64_t UniqueStride(const std::vector<GroupReport>& reports, std::int64_t size, std::int64_t world, std::int64_t* budget) {
  std::int64_t max_stride = size > 1 ? (world - 1) / (size - 1) : 0;
  for (const GroupReport& r : reports) {
    if (r.group_rank > 0) max_stride = std::min<std::int64_t>(max_stride, r.rank / r.group_rank);
  }
  std::unordered_map<std::int32_t, std::int64_t> base_of;
  base_of.reserve(reports.size());
  std::int64_t found = 0;
  for (std::int64_t stride = 1; stride <= max_stride; ++stride) {
    if (*budget <= 0) return 0;
    *budget -= static_cast<std::int64_t>(reports.size());
    if (!SplitsByStride(reports, stride, size, &base_of, budget)) continue;
    if (found != 0) return 0;  // ambiguous
    found = stride;
  }
  return found;
}

// Point-to-point work (a pipeline's SEND/RECV) and collectives run in different groups.
bool PointToPoint(std::string_view op) { return op == "SEND" || op == "RECV"; }

// A member that timed out in a collective no group could be inferred for (a pipeline stage's
// RECV at another SeqNum, its group showing one member) still reported: when its `[Rank N]`
// there is its place in an inferred group of the same kind of work (point-to-point or not),
// that report is its report in this group, as a named group would show it. Without it, the
// member would look like one the group's reporters wait on, though it was itself waiting.
void AddStrayReports(const Incident& inc, const std::vector<std::pair<Collective, GroupReport>>& strays,
                     const std::vector<StrId>& ops, std::vector<ProcessGroup>* groups) {
  std::unordered_map<std::int32_t, std::vector<const std::pair<Collective, GroupReport>*>> by_rank;
  for (const auto& s : strays) by_rank[s.second.rank].push_back(&s);
  if (by_rank.empty()) return;
  for (std::size_t gi = 0; gi < groups->size(); ++gi) {
    ProcessGroup& g = (*groups)[gi];
    const bool p2p = PointToPoint(inc.str(ops[gi]));
    bool added = false;
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      if (ReportAt(g, static_cast<std::int32_t>(k)) != nullptr) continue;
      const auto it = by_rank.find(g.members[k]);
      if (it == by_rank.end()) continue;
      for (const auto* s : it->second) {
        if (s->second.group_rank != static_cast<std::int32_t>(k) || PointToPoint(inc.str(std::get<0>(s->first))) != p2p) continue;
        g.reports.push_back(s->second);
        added = true;
        break;
      }
    }
    if (added) {
      std::sort(g.reports.begin(), g.reports.end(),
                [](const auto& a, const auto& b) { return std::tie(a.group_rank, a.rank) < std::tie(b.group_rank, b.rank); });
    }
  }
}

std::vector<ProcessGroup> UnnamedGroups(const Incident& inc, const JobFacts& facts) {
  std::map<Collective, std::vector<GroupReport>> by_collective;
  std::set<std::pair<Collective, std::int32_t>> seen;
  for (std::int32_t i : facts.wave.timeouts) {
    const Event& e = inc.events[i];
    const auto& w = std::get<WatchdogTimeout>(e.detail);
    if (!Unnamed(w) || w.group_rank < 0 || w.seq < 0) continue;
    const Collective c{w.op, w.numel_in, w.seq};
    if (!seen.insert({c, e.rank}).second) continue;
    by_collective[c].push_back({.rank = e.rank, .group_rank = w.group_rank, .seq = w.seq,
                                .last_enqueued = w.last_enqueued, .event = i});
  }
  const auto world = static_cast<std::int64_t>(facts.ranks.size());
  std::vector<ProcessGroup> out;
  std::vector<StrId> ops;  // the collective each group in `out` was inferred from
  std::vector<std::pair<Collective, GroupReport>> strays;  // reports of collectives no group came of
  for (auto& [collective, reports] : by_collective) {
    std::int64_t budget = kSearchBudget;  // per collective: a wide one must not starve the rest
    std::int64_t size = 0;
    for (const GroupReport& r : reports) size = std::max<std::int64_t>(size, r.group_rank + 1);
    const std::int64_t stride = size < 2 ? 0 : UniqueStride(reports, size, world, &budget);  // size 1: nothing to complete
    if (stride == 0) {
      for (const GroupReport& r : reports) strays.emplace_back(collective, r);
      continue;
    }
    std::map<std::int64_t, std::vector<GroupReport>> split;
    for (const GroupReport& r : reports) split[r.rank - stride * r.group_rank].push_back(r);
    std::vector<ProcessGroup*> kind;
    const std::size_t first = out.size();
    for (auto& [base, members] : split) {
      ProcessGroup g;
      g.reports = std::move(members);
      std::sort(g.reports.begin(), g.reports.end(), [](const auto& a, const auto& b) {
        return std::tie(a.group_rank, a.rank) < std::tie(b.group_rank, b.rank);
      });
      out.push_back(std::move(g));
    }
    for (std::size_t i = first; i < out.size(); ++i) kind.push_back(&out[i]);
    size = TiledSize(kind, stride, size, world);
    for (ProcessGroup* g : kind) {
      const std::int64_t base = g->reports.front().rank - stride * g->reports.front().group_rank;
      for (std::int64_t k = 0; k < size; ++k) g->members.push_back(static_cast<std::int32_t>(base + stride * k));
    }
    ops.resize(out.size(), std::get<0>(collective));
  }
  AddStrayReports(inc, strays, ops, &out);
  return out;
}

}  // namespace

std::vector<ProcessGroup> InferGroups(const Incident& inc, const JobFacts& facts) {
  std::vector<ProcessGroup> groups = CollectReports(inc, facts);
  // Kinds: groups sharing a description (TENSOR_MODEL_PARALLEL_GROUP, ...); a group without
  // one is a kind of its own.
  std::map<std::pair<StrId, std::size_t>, std::vector<ProcessGroup*>> kinds;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const StrId desc = groups[i].desc;
    kinds[{desc, desc == kNoStr ? i : 0}].push_back(&groups[i]);
  }
  const StrId default_pg = [&] {
    for (const auto& g : groups) {
      if (inc.str(g.desc) == "default_pg") return g.desc;
    }
    return kNoStr;
  }();
  for (auto& [key, kind] : kinds) {
    InferKind(kind, static_cast<std::int64_t>(facts.ranks.size()),
              key.first != kNoStr && key.first == default_pg);
  }
  for (ProcessGroup& g : UnnamedGroups(inc, facts)) groups.push_back(std::move(g));
  return groups;
}

const GroupReport* ReportAt(const ProcessGroup& g, std::int32_t group_rank) {
  auto it = std::lower_bound(g.reports.begin(), g.reports.end(), group_rank,
                             [](const GroupReport& r, std::int32_t gr) { return r.group_rank < gr; });
  return it != g.reports.end() && it->group_rank == group_rank ? &*it : nullptr;
}

bool WaitsOn(const ProcessGroup& g, const GroupReport& reporter, std::int32_t group_rank) {
  const GroupReport* m = ReportAt(g, group_rank);
  if (!m) return true;
  if (m->rank == reporter.rank) return false;
  return m->last_enqueued >= 0 && reporter.seq >= 0 && m->last_enqueued < reporter.seq;
}

}  // namespace denpex::engine
