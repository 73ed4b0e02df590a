#include "analyze/straggler.h"

#include <vector>

#include "analyze/cascade.h"
#include "analyze/describe.h"

namespace denpex::engine {
namespace {

// Each rank's last key=value step line (Iteration with the durations), by rank.
std::vector<std::int32_t> LastStepLines(const Incident& inc, std::size_t world) {
  std::vector<std::int32_t> out(world, -1);
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    const auto* it = std::get_if<Iteration>(&e.detail);
    if (!it || it->step_us < 0 || e.rank < 0 || e.rank >= static_cast<std::int32_t>(world)) continue;
    const std::int32_t prev = out[e.rank];
    if (prev < 0 || std::get<Iteration>(inc.events[prev].detail).iteration <= it->iteration) out[e.rank] = i;
  }
  return out;
}

}  // namespace

bool FindStraggler(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::vector<std::int32_t> last = LastStepLines(inc, facts.ranks.size());
  std::int32_t slow = -1, others = 0;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(last.size()); ++r) {
    if (last[r] < 0) continue;
    const auto& it = std::get<Iteration>(inc.events[last[r]].detail);
    if (it.slow_since >= 0) {
      if (slow >= 0) return false;  // two ranks slow: not one straggler
      slow = r;
    } else {
      ++others;
    }
  }
  if (slow < 0 || others == 0) return false;
  const Event& e = inc.events[last[slow]];
  const auto& it = std::get<Iteration>(e.detail);
  const RankFacts& r = facts.ranks[slow];
  // A slow disk, data source, CPU or GPU: the lines do not say which.
  Commit({.rank = slow,
          .node = r.node,
          .local_rank = r.local_rank,
          .failure_class = v1::FAILURE_CLASS_STRAGGLER,
          .owner = v1::OWNER_UNKNOWN,
          .confidence = 0.7},
         f);
  if (it.slow_at != 0) f->time = it.slow_at;
  f->evidence.push_back({last[slow], v1::EVIDENCE_ROLE_INITIATING});
  for (std::int32_t o = 0; o < static_cast<std::int32_t>(last.size()); ++o) {
    if (o != slow && last[o] >= 0) {
      f->evidence.push_back({last[o], v1::EVIDENCE_ROLE_CORROBORATING});
      break;
    }
  }
  f->cascade = SummarizeCascade(inc, facts, {slow}, r.node);
  f->candidates.push_back({slow, r.node, 1});
  f->reason = Say(ReasonId::kStepStraggler, {{"rank", std::to_string(slow)},
                                             {"node", NodeName(inc, r.node)},
                                             {"since", std::to_string(it.slow_since)},
                                             {"own_ms", std::to_string(it.data_us / 1000)},
                                             {"step_ms", std::to_string(it.step_us / 1000)},
                                             {"step", std::to_string(it.iteration)},
                                             {"where", Where(inc, e)},
                                             {"others", std::to_string(others)}});
  f->recovery.push_back({"inspect_rank", "rank " + std::to_string(slow),
                         Say(ReasonId::kCheckSlowRank,
                             {{"rank", std::to_string(slow)}, {"node", NodeName(inc, r.node)}})});
  return true;
}

}  // namespace denpex::engine
