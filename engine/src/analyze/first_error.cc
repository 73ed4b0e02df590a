// Baseline `first-error`: what a person grepping the logs finds first. The rank of the
// earliest `Watchdog caught collective operation timeout` line by printed timestamp, with no
// clock-skew correction and no notion of who was silent. It exists so the evaluation shows
// what the engine adds.
#include <algorithm>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/facts.h"
#include "analyze/strategies.h"

namespace denpex::engine {

Finding AnalyzeFirstError(const Incident& inc) {
  const JobFacts facts = CollectFacts(inc);
  Finding f;
  f.strategy = "first-error";
  f.ranks_seen = facts.world.ranks_seen;
  f.world_size = static_cast<std::int32_t>(facts.ranks.size());
  f.owner = v1::OWNER_UNKNOWN;
  if (!facts.HasWave()) {
    f.verdict = v1::VERDICT_INCONCLUSIVE;
    f.reason = Say(ReasonId::kNoWatchdogTimeout);
    f.cascade = SummarizeCascade(inc, facts, {}, -1);
    return f;
  }
  const std::int32_t first = facts.wave.timeouts.front();
  const Event& e = inc.events[first];
  const RankFacts& r = facts.ranks[e.rank];
  Commit({.rank = e.rank,
          .node = r.node,
          .local_rank = r.local_rank,
          .owner = v1::OWNER_UNKNOWN,
          .confidence = 0.5},
         &f);
  f.time = e.time;
  f.reason = Say(
      ReasonId::kEarliestWatchdogTimeout,
      {{"rank", std::to_string(e.rank)}, {"where", Where(inc, e)}, {"time", ClockTime(e.time)}});
  // Candidates: the first three distinct ranks to time out, in printed order.
  for (std::int32_t i : facts.wave.timeouts) {
    const std::int32_t rank = inc.events[i].rank;
    const bool seen = std::any_of(f.candidates.begin(), f.candidates.end(),
                                  [&](const CandidateScore& c) { return c.rank == rank; });
    if (seen) continue;
    f.candidates.push_back({rank, facts.ranks[rank].node, 1.0 / (f.candidates.size() + 1)});
    if (f.candidates.size() == 3) break;
  }
  f.evidence.push_back({first, v1::EVIDENCE_ROLE_INITIATING});
  f.cascade = SummarizeCascade(inc, facts, {e.rank}, r.node);
  f.recovery.push_back({"restart_job", "", Say(ReasonId::kRestartFromNewest)});
  return f;
}

}  // namespace denpex::engine
