// Fail-slow (issue #9): the rank (or node) every other rank waits for, found from per-rank step timers
// alone (docs/log_formats.md §5, `step_timers`). In a synchronous job every rank's step takes
// as long as the slowest one's, so the straggler is the rank that computes longest and waits
// least in collectives. Per step, each rank's compute is compared with the median of all
// ranks (or, given a healthy control run of the same job, its own compute there divided
// out first); a rank is slow in a step when it computes more than max(10%, 6 robust sigmas)
// above the median and waits less than the median. A straggler is slow for at least 3
// consecutive steps and in at least 75% of the steps from its first slow one on, so jitter
// and one-off hiccups flag nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

struct Straggler {
  std::vector<std::int32_t> ranks;  // the slow ranks, most deviant first
  bool whole_node = false;          // more than one, all on one node: the node is slow
  // More than one, and some on no node a line names (a merged file): one slow node or several
  // slow GPUs, not told apart.
  bool unplaced = false;
  std::int32_t node = -1;           // the lead rank's node
  std::int32_t first_event = -1;    // the lead rank's timer line of its first slow step
  std::int32_t peer_event = -1;     // a healthy rank's timer line of that step
  std::int32_t slow_steps = 0;      // the lead rank's slow steps
  std::int32_t steps = 0;           // the lead rank's steps with timers
  double compute_ratio = 0;         // the lead's compute over the median, over its slow steps
  double wait_ratio = 0;            // the lead's wait over the median, over its slow steps
  bool against_control = false;     // measured against a control run
  std::optional<TimeNs> since;      // when its first slow step began (printed clock)

  std::int32_t lead() const { return ranks.front(); }
};

// Tuning (docs/diagnosis_format.md, "Fail-slow").
inline constexpr double kSlowMinExcess = 0.10;   // compute at least 10% above the median
inline constexpr double kSlowSigmas = 6.0;       // and at least 6 robust sigmas above it
inline constexpr std::int32_t kSlowMinRun = 3;   // consecutive slow steps
inline constexpr double kSlowMinShare = 0.75;    // of the steps from the first slow one on
inline constexpr std::int32_t kSlowMinRanks = 4; // ranks reporting a step for it to count

// nullopt when no rank is persistently slow, when too few ranks print timers, or when so
// many are slow that no single rank or node stands out (everyone slow: data loading,
// congestion).
std::optional<Straggler> FindFailSlow(const Incident& inc, const JobFacts& facts, const Incident* control);

// Fills `f` (verdict, initiator, class STRAGGLER, owner: GPU hardware for one rank, host for a
// node, evidence, reason, recovery). The caller adds what the cascade shows.
void DiagnoseFailSlow(const Incident& inc, const JobFacts& facts, const Straggler& s, Finding* f);

}  // namespace denpex::engine
