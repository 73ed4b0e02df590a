#include "analyze/nccl_ras.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace denpex::engine {
namespace {

using Why = RasRank::Why;

// The reports in their order: by time, then as read (files in order, a file's reports in
// order): each report's kRasReport event and the events up to the next.
struct Report {
  std::int32_t event = -1;
  TimeNs time = 0;
  std::vector<std::int32_t> ranks;  // its kRasRank events
};

std::vector<Report> Reports(const Incident& inc) {
  std::vector<Report> out;
  for (const std::int32_t i : inc.OfKinds({Kind::kRasReport, Kind::kRasRank})) {
    const Event& e = inc.events[i];
    if (e.family != Family::kNcclRas) continue;
    if (e.kind == Kind::kRasReport) {
      out.push_back({.event = i, .time = e.time});
    } else if (e.kind == Kind::kRasRank && !out.empty() &&
               inc.events[out.back().event].file == e.file) {
      out.back().ranks.push_back(i);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Report& a, const Report& b) { return a.time < b.time; });
  return out;
}

const RasRank& RankOf(const Incident& inc, std::int32_t event) {
  return std::get<RasRank>(inc.events[event].detail);
}

}  // namespace

RasAnalysis AnalyzeNcclRas(const Incident& inc) {
  RasAnalysis out;
  const std::vector<Report> reports = Reports(inc);
  out.reports = static_cast<std::int32_t>(reports.size());
  if (reports.empty()) return out;
  const Report& newest = reports.back();
  out.newest = newest.event;
  std::map<std::int32_t, RasBlocker> roots;
  // Gone: dead or silent. When any rank is gone, the counts of the rest say nothing new: the
  // others stopped with it.
  for (std::int32_t i : newest.ranks) {
    const Event& e = inc.events[i];
    const RasRank& r = RankOf(inc, i);
    if (e.rank < 0 || (r.why != Why::kDead && r.why != Why::kMissing)) continue;
    roots.try_emplace(e.rank,
                      RasBlocker{.rank = e.rank, .why = RasBlocker::Why::kGone, .event = i});
  }
  if (roots.empty()) {
    for (std::int32_t i : newest.ranks) {
      const Event& e = inc.events[i];
      const RasRank& r = RankOf(inc, i);
      // Behind with a few: a minority of its communicator (never half of it).
      if (e.rank < 0 || r.why != Why::kBehind || r.comm_size <= 0 || 2 * r.with >= r.comm_size)
        continue;
      RasBlocker b{.rank = e.rank, .why = RasBlocker::Why::kBehind, .event = i};
      for (auto older = reports.rbegin() + 1; older != reports.rend() && b.earlier < 0; ++older) {
        for (std::int32_t j : older->ranks) {
          const RasRank& o = RankOf(inc, j);
          if (inc.events[j].rank == e.rank && o.why == Why::kBehind && o.hash == r.hash &&
              o.op == r.op && o.count == r.count) {
            b.earlier = j;
            b.why = RasBlocker::Why::kStuck;
            break;
          }
        }
      }
      roots.try_emplace(e.rank, b);
    }
    for (std::int32_t i : newest.ranks) {
      const Event& e = inc.events[i];
      auto it = roots.find(e.rank);
      if (it != roots.end() && RankOf(inc, i).why == Why::kAhead && it->second.ahead < 0) {
        it->second.ahead = i;
        it->second.why = RasBlocker::Why::kOdd;
      }
    }
  }
  // Where the waits end: a rank that issued another collective than its peers (odd counts) stops
  // everyone behind it; else the ranks behind in the most communicators (a rank stuck on the
  // host is behind everywhere it belongs, while its tensor-parallel peers, blocked in a
  // collective it never entered, fall behind only in their other communicators).
  const bool odd = std::any_of(roots.begin(), roots.end(),
                               [](const auto& r) { return r.second.why == RasBlocker::Why::kOdd; });
  std::map<std::int32_t, std::set<StrId>> behind_in;
  for (std::int32_t i : newest.ranks) {
    const RasRank& r = RankOf(inc, i);
    if (r.why == Why::kBehind && roots.contains(inc.events[i].rank))
      behind_in[inc.events[i].rank].insert(r.hash);
  }
  std::size_t most = 0;
  for (const auto& [rank, comms] : behind_in) most = std::max(most, comms.size());
  for (auto& [rank, b] : roots) {
    if (odd && b.why != RasBlocker::Why::kOdd) continue;
    if (!odd && b.why != RasBlocker::Why::kGone && behind_in[rank].size() < most) continue;
    out.roots.push_back(b);
  }
  return out;
}

RasVerdict RasListedVerdict(const Incident& inc) {
  RasVerdict v;
  const std::vector<Report> reports = Reports(inc);
  if (reports.empty()) return v;
  // RAS prints a communicator's missing ranks (Errors) before its mismatches (Warnings).
  for (const bool missing : {true, false}) {
    for (std::int32_t i : reports.back().ranks) {
      const Event& e = inc.events[i];
      const RasRank& r = RankOf(inc, i);
      const bool gone = r.why == Why::kDead || r.why == Why::kMissing;
      if (e.rank < 0 || gone != missing || r.why == Why::kError) continue;
      if (std::find(v.ranks.begin(), v.ranks.end(), e.rank) != v.ranks.end()) continue;
      if (v.event < 0) v.event = i;
      v.ranks.push_back(e.rank);
    }
  }
  return v;
}

}  // namespace denpex::engine
