#include "analyze/stall.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "analyze/describe.h"

namespace denpex::engine {
namespace {

std::string Seconds(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ns / 1e9);
  return buf;
}

}  // namespace

std::map<std::int32_t, ProgressMark> LatestProgress(const Incident& inc) {
  std::map<std::int32_t, ProgressMark> marks;
  for (const std::int32_t i : inc.OfKinds({Kind::kIteration})) {
    const Event& e = inc.events[i];
    if (e.rank < 0 || e.clock == Clock::kNone) continue;
    const auto& it = std::get<Iteration>(e.detail);
    ProgressMark& m = marks[e.rank];
    if (it.iteration > m.iteration || (it.iteration == m.iteration && e.time > m.time)) {
      m = {it.iteration, e.time, static_cast<std::int32_t>(i)};
    }
  }
  return marks;
}

bool AnswerProgressStall(const Incident& inc, const std::map<std::int32_t, ProgressMark>& marks,
                         const StallClock& clock, Finding* f) {
  if (marks.empty() || clock.line_ns <= 0) return false;
  const double limit = std::max(clock.factor * clock.line_ns, clock.min_ns);
  TimeNs latest = 0;
  std::int64_t top = -1;
  for (const auto& [rank, m] : marks)
    latest = std::max(latest, m.time), top = std::max(top, m.iteration);
  const bool all_stopped = static_cast<double>(clock.now - latest) > limit;
  // Behind: stopped long before the newest step line, or (once every rank stopped) at an
  // earlier step than the others.
  std::vector<std::int32_t> behind;
  for (const auto& [rank, m] : marks) {
    const bool stopped = static_cast<double>(clock.now - m.time) > limit;
    if (stopped &&
        (static_cast<double>(latest - m.time) > limit || (all_stopped && m.iteration < top))) {
      behind.push_back(rank);
    }
  }
  if (!all_stopped && (behind.empty() || marks.size() < 2)) return false;
  if (behind.size() * 2 >= marks.size()) behind.clear();  // most stopped: no one stands out
  // The ones that stopped first: the earliest of those behind, and those within a step of it.
  std::vector<std::int32_t> first;
  if (!behind.empty()) {
    TimeNs earliest = marks.at(behind.front()).time;
    for (const std::int32_t r : behind) earliest = std::min(earliest, marks.at(r).time);
    for (const std::int32_t r : behind) {
      if (static_cast<double>(marks.at(r).time - earliest) <= clock.line_ns) first.push_back(r);
    }
  }
  std::set<std::int32_t> nodes;
  for (const std::int32_t r : first)
    nodes.insert(inc.events[static_cast<std::size_t>(marks.at(r).event)].node);
  const std::string period = Seconds(clock.line_ns);
  if (first.empty()) {
    const ProgressMark& any = marks.begin()->second;
    Commit({.verdict = v1::VERDICT_INCONCLUSIVE}, f);
    f->reason = Say(ReasonId::kEveryRankStalled,
                    {{"ranks", Count(static_cast<std::int64_t>(marks.size()), "rank")},
                     {"step", std::to_string(top)},
                     {"ago", Seconds(static_cast<double>(clock.now - latest))},
                     {"period", period}});
    f->evidence.push_back({any.event, v1::EVIDENCE_ROLE_CONTEXT});
    return true;
  }
  const ProgressMark& m = marks.at(first.front());
  const Event& e = inc.events[static_cast<std::size_t>(m.event)];
  Answer a{.failure_class = v1::FAILURE_CLASS_HANG, .owner = v1::OWNER_UNKNOWN, .confidence = 0.6};
  if (first.size() == 1) {
    a.rank = first.front(), a.node = e.node, a.local_rank = e.local_rank;
  } else if (nodes.size() == 1 && *nodes.begin() >= 0) {
    a.node = *nodes.begin();
    a.confidence = 0.5;
  } else {
    a.verdict = v1::VERDICT_INCONCLUSIVE;
    a.confidence = 0;
  }
  Commit(a, f);
  f->reason = Say(
      ReasonId::kProgressStoppedFirst,
      {{"ranks", RankList(first)},
       {"step", std::to_string(m.iteration)},
       {"at", ClockTime(m.time)},
       {"ahead", all_stopped ? Say(ReasonId::kOthersReachedStep, {{"step", std::to_string(top)}})
                             : Say(ReasonId::kOthersWentOnUntil, {{"at", ClockTime(latest)}})},
       {"ago", Seconds(static_cast<double>(clock.now - m.time))},
       {"period", period}});
  for (const std::int32_t r : first)
    f->evidence.push_back({marks.at(r).event, v1::EVIDENCE_ROLE_INITIATING});
  f->recovery.push_back(
      {"inspect", a.rank >= 0 ? "rank " + std::to_string(a.rank) : NodeName(inc, a.node),
       Say(ReasonId::kInspectWhileRunning,
           {{"who", a.rank >= 0 ? "rank " + std::to_string(a.rank) : "ranks " + RankList(first)},
            {"node", NodeName(inc, e.node)}})});
  return true;
}

}  // namespace denpex::engine
