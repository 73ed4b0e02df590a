// Baselines: what an operator reading the logs by hand, or running the public analysers on the
// Flight Recorder dumps, would conclude. They exist so the evaluation shows what the engine adds.
//   loudest             the rank with the most error lines (a grep | sort | uniq -c).
//   elastic-root-cause  the rank of the earliest torchrun "Root Cause (first observed failure)"
//                       entry: the first process an agent saw exit, often a victim.
//   fr-trace            torch's `fr_trace --allow-incomplete-ranks` on the dumps alone.
//   fr-wavefront        NVRx's Flight Recorder attribution: its head group's missing ranks.
#include <algorithm>
#include <map>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/facts.h"
#include "analyze/flight_recorder.h"
#include "analyze/nccl_ras.h"
#include "analyze/strategies.h"

namespace denpex::engine {
namespace {

Finding Start(const Incident& inc, const JobFacts& facts, const char* name) {
  Finding f;
  f.strategy = name;
  f.ranks_seen = facts.world.ranks_seen;
  f.world_size = static_cast<std::int32_t>(facts.ranks.size());
  f.owner = v1::OWNER_UNKNOWN;
  f.cascade = SummarizeCascade(inc, facts, {}, -1);
  return f;
}

void Name(const Incident& inc, const JobFacts& facts, std::int32_t rank, std::int32_t event, Finding* f) {
  Commit({.rank = rank,
          .node = facts.ranks[rank].node,
          .local_rank = facts.ranks[rank].local_rank,
          .owner = v1::OWNER_UNKNOWN,
          .confidence = 0.5},
         f);
  if (inc.events[event].clock != Clock::kNone) f->time = inc.events[event].time;
  f->evidence.push_back({event, v1::EVIDENCE_ROLE_INITIATING});
  f->cascade = SummarizeCascade(inc, facts, {rank}, f->node);
  f->recovery.push_back({"restart_job", "", Say(ReasonId::kRestartFromNewest)});
}

}  // namespace

Finding AnalyzeLoudest(const Incident& inc) {
  const JobFacts facts = CollectFacts(inc);
  Finding f = Start(inc, facts, "loudest");
  std::map<std::int32_t, std::pair<std::int32_t, std::int32_t>> count;  // rank -> (errors, first event)
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    // Only ranks the facts know (an event can name a rank no file or table confirms).
    if (e.signature == kNoStr || e.rank < 0 || e.rank >= static_cast<std::int32_t>(facts.ranks.size())) continue;
    auto [it, added] = count.try_emplace(e.rank, 0, i);
    it->second.first += 1;
  }
  if (count.empty()) {
    f.verdict = v1::VERDICT_INCONCLUSIVE;
    f.reason = Say(ReasonId::kNoRankedError);
    return f;
  }
  std::vector<std::pair<std::int32_t, std::int32_t>> ranked;  // (errors, rank)
  for (const auto& [rank, c] : count) ranked.emplace_back(c.first, rank);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < ranked.size() && i < 3; ++i) {
    f.candidates.push_back({ranked[i].second, facts.ranks[ranked[i].second].node, static_cast<double>(ranked[i].first)});
  }
  const std::int32_t rank = ranked.front().second;
  Name(inc, facts, rank, count[rank].second, &f);
  f.reason = Say(ReasonId::kLoudestRank, {{"rank", std::to_string(rank)},
                                          {"errors", std::to_string(ranked.front().first)}});
  return f;
}

Finding AnalyzeElasticRootCause(const Incident& inc) {
  const JobFacts facts = CollectFacts(inc);
  Finding f = Start(inc, facts, "elastic-root-cause");
  std::int32_t best = -1;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    const auto* fe = std::get_if<FailureEntry>(&e.detail);
    if (!fe || !fe->root_cause || e.rank < 0 || e.rank >= static_cast<std::int32_t>(facts.ranks.size())) continue;
    if (best < 0 || e.time < inc.events[best].time) best = i;
  }
  if (best < 0) {
    f.verdict = v1::VERDICT_INCONCLUSIVE;
    f.reason = Say(ReasonId::kNoRootCauseTable);
    return f;
  }
  const Event& e = inc.events[best];
  f.candidates.push_back({e.rank, facts.ranks[e.rank].node, 1.0});
  Name(inc, facts, e.rank, best, &f);
  f.reason = Say(ReasonId::kEarliestRootCause,
                 {{"rank", std::to_string(e.rank)}, {"where", Where(inc, e)}});
  return f;
}

namespace {

// A baseline on one kind of record (dumps, RAS reports): its ranks, the first named, `event`
// cited; `none` says why it names no one, `named` what names them.
Finding FromRecords(const Incident& inc, const char* name, const std::vector<std::int32_t>& ranks,
                    std::int32_t event, ReasonId none, ReasonId named) {
  JobFacts facts = CollectFacts(inc);
  for (const std::int32_t r : ranks) facts.EnsureRank(r);
  Finding f = Start(inc, facts, name);
  if (ranks.empty() || event < 0) {
    f.verdict = v1::VERDICT_INCONCLUSIVE;
    f.reason = Say(none);
    return f;
  }
  for (const std::int32_t r : ranks) f.candidates.push_back({r, facts.ranks[r].node, 1.0});
  Name(inc, facts, ranks.front(), event, &f);
  f.reason = Say(named, {{"ranks", RankList(ranks)}, {"where", Where(inc, inc.events[event])}});
  return f;
}

}  // namespace

Finding AnalyzeFrTrace(const Incident& inc) {
  const FrVerdict v = FrTraceVerdict(inc);
  return FromRecords(inc, "fr-trace", v.ranks, v.event, ReasonId::kNoFlightRecorderVerdict,
                     ReasonId::kFlightRecorderMissingRanks);
}

Finding AnalyzeFrWavefront(const Incident& inc) {
  const FrVerdict v = FrWavefrontVerdict(inc);
  return FromRecords(inc, "fr-wavefront", v.ranks, v.event, ReasonId::kNoFlightRecorderVerdict,
                     ReasonId::kFlightRecorderMissingRanks);
}

Finding AnalyzeRas(const Incident& inc) {
  const RasVerdict v = RasListedVerdict(inc);
  return FromRecords(inc, "ras", v.ranks, v.event, ReasonId::kNoRasVerdict,
                     ReasonId::kRasListedRanks);
}

}  // namespace denpex::engine
