#include "analyze/flight_recorder.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace denpex::engine {
namespace {

// One rank's dump of one process group: its kFrGroup event and its entries there.
struct Member {
  std::int32_t group_event = -1;
  FrGroup state;
  std::vector<std::int32_t> entries;  // kFrCollective events, not p2p
};

struct Group {
  StrId pg = kNoStr;
  std::vector<std::int32_t> members;      // from `ranks`; empty when it does not list them
  std::map<std::int32_t, Member> dumped;  // rank -> its dump of the group
  std::int32_t first_event = -1;          // the first kFrGroup event: the dumps' order
};

struct Dumps {
  std::set<std::int32_t> ranks;  // ranks that wrote a dump
  std::vector<Group> groups;     // in the dumps' order
};

Dumps Collect(const Incident& inc) {
  Dumps d;
  std::map<std::pair<StrId, StrId>, std::size_t> index;  // (pg name, ranks) -> group
  for (const std::int32_t i : inc.OfKinds({Kind::kFrDump, Kind::kFrGroup})) {
    const Event& e = inc.events[i];
    if (e.family != Family::kFlightRecorder || e.rank < 0) continue;
    if (e.kind == Kind::kFrDump) d.ranks.insert(e.rank);
    const auto* g = std::get_if<FrGroup>(&e.detail);
    if (g == nullptr) continue;
    auto [it, added] = index.try_emplace({g->pg, g->ranks}, d.groups.size());
    if (added) {
      d.groups.push_back(
          {.pg = g->pg, .members = ParseFrRanks(inc.str(g->ranks)), .first_event = i});
    }
    d.groups[it->second].dumped[e.rank] = {.group_event = i, .state = *g};
  }
  // Entries by the group their rank's dump names (a dump lists each group once).
  std::map<std::pair<StrId, std::int32_t>, Member*> of;
  for (Group& g : d.groups) {
    for (auto& [rank, m] : g.dumped) of.emplace(std::pair{g.pg, rank}, &m);
  }
  for (const std::int32_t i : inc.OfKinds({Kind::kFrCollective})) {
    const Event& e = inc.events[i];
    const auto* c = std::get_if<FrCollective>(&e.detail);
    if (c == nullptr || e.rank < 0 || c->p2p || c->seq < 0) continue;
    if (const auto it = of.find({c->pg, e.rank}); it != of.end()) it->second->entries.push_back(i);
  }
  return d;
}

bool Pending(const FrGroup& g) { return g.last_enqueued > g.last_completed; }

// The oldest collective a group's dumped members wait in: the smallest `last_completed + 1` of
// those with one enqueued and not completed; -1 when none waits.
std::int64_t StuckSeq(const Group& g) {
  std::int64_t stuck = std::numeric_limits<std::int64_t>::max();
  for (const auto& [rank, m] : g.dumped) {
    if (Pending(m.state)) stuck = std::min(stuck, m.state.last_completed + 1);
  }
  return stuck == std::numeric_limits<std::int64_t>::max() ? -1 : stuck;
}

std::int32_t EntryAt(const Incident& inc, const Member& m, std::int64_t seq) {
  for (const std::int32_t i : m.entries) {
    if (std::get<FrCollective>(inc.events[i].detail).seq == seq) return i;
  }
  return -1;
}

// What a collective is, for comparing members' entries at one sequence number.
std::tuple<StrId, StrId, StrId> Shape(const Incident& inc, std::int32_t entry) {
  const auto& c = std::get<FrCollective>(inc.events[entry].detail);
  return {c.op, c.sizes, c.dtypes};
}

// The members of a stuck group: who waits in the collective, who never enqueued it.
struct Stuck {
  std::int64_t seq = -1;
  std::vector<std::int32_t> waiting, behind, absent;
  std::int32_t waiter_entry = -1;  // the first waiting member's entry at `seq`
};

Stuck Examine(const Incident& inc, const Dumps& d, const Group& g) {
  Stuck s{.seq = StuckSeq(g)};
  if (s.seq < 0) return s;
  for (const auto& [rank, m] : g.dumped) {
    if (m.state.last_enqueued < s.seq) {
      s.behind.push_back(rank);
    } else if (m.state.last_completed < s.seq) {
      s.waiting.push_back(rank);
      if (s.waiter_entry < 0) s.waiter_entry = EntryAt(inc, m, s.seq);
      if (s.waiter_entry < 0) s.waiter_entry = m.group_event;
    }
  }
  for (const std::int32_t r : g.members) {
    if (!d.ranks.contains(r)) s.absent.push_back(r);
  }
  return s;
}

// The one waiting member whose entry at the stuck sequence number differs from every other's,
// while at least two others agree; -1 when there is none.
std::int32_t OddMember(const Incident& inc, const Group& g, const Stuck& s, std::int32_t* own,
                       std::int32_t* peer) {
  std::map<std::tuple<StrId, StrId, StrId>, std::vector<std::pair<std::int32_t, std::int32_t>>> by;
  for (const std::int32_t r : s.waiting) {
    const std::int32_t entry = EntryAt(inc, g.dumped.at(r), s.seq);
    if (entry >= 0) by[Shape(inc, entry)].emplace_back(r, entry);
  }
  if (by.size() != 2) return -1;
  const auto& first = by.begin()->second;
  const auto& second = std::next(by.begin())->second;
  const auto* odd = first.size() == 1 ? &first : second.size() == 1 ? &second : nullptr;
  const auto* rest = odd == &first ? &second : &first;
  if (odd == nullptr || rest->size() < 2) return -1;
  *own = odd->front().second;
  *peer = rest->front().second;
  return odd->front().first;
}

}  // namespace

std::vector<std::int32_t> ParseFrRanks(std::string_view text) {
  std::vector<std::int32_t> out;
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '[' || text[i] == '(')) ++i;
  while (i < text.size()) {
    std::int32_t r = -1;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), r);
    if (ec != std::errc() || r < 0 || r > kMaxRank) return {};
    out.push_back(r);
    i = static_cast<std::size_t>(end - text.data());
    while (i < text.size() && text[i] == ' ') ++i;
    if (i < text.size() && (text[i] == ']' || text[i] == ')')) break;
    if (i >= text.size() || text[i] != ',') return {};
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

FrAnalysis AnalyzeFlightRecorder(const Incident& inc) {
  FrAnalysis out;
  const Dumps d = Collect(inc);
  out.dumps = static_cast<std::int32_t>(d.ranks.size());
  if (d.groups.empty()) return out;
  // Ranks waiting in some collective or point-to-point operation (a pipeline stage's recv):
  // the reader emits every entry not completed.
  std::set<std::int32_t> busy;
  for (const Event& e : inc.events) {
    const auto* c = std::get_if<FrCollective>(&e.detail);
    if (c != nullptr && e.rank >= 0 && c->state != FrCollective::State::kCompleted)
      busy.insert(e.rank);
  }
  out.waiting.assign(busy.begin(), busy.end());
  std::map<std::int32_t, FrBlocker> never, odd;
  std::set<std::int32_t> absent;
  FrBlocker no_dump{.why = FrBlocker::Why::kNoDump};  // what the stuck groups missing one say
  for (const Group& g : d.groups) {
    const Stuck s = Examine(inc, d, g);
    if (s.waiting.empty()) continue;
    const auto waiting = static_cast<std::int32_t>(s.waiting.size());
    if (!s.absent.empty()) {
      absent.insert(s.absent.begin(), s.absent.end());
      no_dump.waiting = std::max(no_dump.waiting, waiting);
      if (no_dump.waiter < 0) no_dump.waiter = s.waiter_entry;
    }
    for (const std::int32_t r : s.behind) {
      if (busy.contains(r)) continue;  // it waits in another group: a victim
      FrBlocker& b = never[r];
      if (waiting > b.waiting) {
        b = {.rank = r,
             .why = FrBlocker::Why::kNeverJoined,
             .own = g.dumped.at(r).group_event,
             .waiter = s.waiter_entry,
             .waiting = waiting};
      }
    }
    std::int32_t own = -1, peer = -1;
    if (s.behind.empty()) {
      if (const std::int32_t r = OddMember(inc, g, s, &own, &peer); r >= 0) {
        odd[r] = {.rank = r,
                  .why = FrBlocker::Why::kOddCollective,
                  .own = own,
                  .waiter = peer,
                  .waiting = waiting - 1};
      }
    }
  }
  const auto& pick = !never.empty() ? never : odd;
  for (const auto& [rank, b] : pick) out.roots.push_back(b);
  if (out.roots.empty() && absent.size() == 1) {
    no_dump.rank = *absent.begin();
    out.roots.push_back(no_dump);
  }
  return out;
}

FrVerdict FrTraceVerdict(const Incident& inc) {
  const Dumps d = Collect(inc);
  for (const Group& g : d.groups) {
    const Stuck s = Examine(inc, d, g);
    if (s.waiting.empty()) continue;
    if (!s.behind.empty()) return {.ranks = s.behind, .event = s.waiter_entry};
    std::int32_t own = -1, peer = -1;
    if (const std::int32_t r = OddMember(inc, g, s, &own, &peer); r >= 0)
      return {.ranks = {r}, .event = own};
  }
  return {};
}

FrVerdict FrWavefrontVerdict(const Incident& inc) {
  const Dumps d = Collect(inc);
  FrVerdict best;
  TimeNs best_time = 0;
  for (const Group& g : d.groups) {
    std::int64_t top = -1;
    for (const auto& [rank, m] : g.dumped) top = std::max(top, m.state.last_enqueued);
    std::vector<std::int32_t> missing;
    TimeNs created = std::numeric_limits<TimeNs>::max();
    std::int32_t cite = -1;
    for (const auto& [rank, m] : g.dumped) {
      if (m.state.last_enqueued < top) missing.push_back(rank);
      const std::int32_t entry = EntryAt(inc, m, top);
      if (entry >= 0 && inc.events[entry].time < created) {
        created = inc.events[entry].time;
        cite = entry;
      }
    }
    if (missing.empty() || cite < 0) continue;
    if (best.ranks.empty() || created < best_time) {
      best = {.ranks = missing, .event = cite};
      best_time = created;
    }
  }
  return best;
}

}  // namespace denpex::engine
