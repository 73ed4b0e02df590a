// Scoring: how strongly the evidence points at each rank. Two independent kinds of evidence:
//   launcher  — its torchrun agent saw it exit (by a signal, or with an exception) while it
//               had printed no timeout of its own, before the watchdog wave;
//   progress  — it is a silent member of groups whose other members timed out waiting, and
//               a share of all reporters is stuck behind it (wait_graph.h); with gloo (no
//               watchdog, no groups) it reported nothing while the other ranks failed against
//               a peer, and the share is theirs among the ranks that were not silent.
// The weights are few and fixed so an operator can redo the arithmetic from the cited lines
// (docs/diagnosis_format.md).
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "analyze/flight_recorder.h"
#include "analyze/nccl_ras.h"
#include "analyze/wait_graph.h"

namespace denpex::engine {

inline constexpr double kLauncherEarly = 8;   // exited well before the first timeout
inline constexpr double kLauncherNear = 3;    // exited within the clock-skew window of it
inline constexpr double kLauncherLate = 1;    // exited after it
inline constexpr double kTraceback = 2;       // printed a Python exception of its own
inline constexpr double kMismatch = 8;        // its collective's op or size differs from its peers' (mismatch.h)
inline constexpr double kProgress = 4;        // times the share of reporters stuck behind it
// Flight Recorder dumps (flight_recorder.h): never enqueued the collective its group's dumped
// members wait in, and waits in none itself; the only member without a dump they wait on.
inline constexpr double kRecorderNeverJoined = 8;
inline constexpr double kRecorderNoDump = 4;
// NCCL RAS reports (nccl_ras.h): its process dead or silent; behind the rest of its communicator
// and not moved since an earlier report; behind in the newest report only (added only to a rank
// other evidence scores: one snapshot catches a healthy rank late now and then).
inline constexpr double kRasGone = 8;
inline constexpr double kRasStuck = 8;
inline constexpr double kRasBehind = 4;
inline constexpr double kTornDown = 0.25;     // factor for ranks torn down by their agent early
inline constexpr double kLeadRatio = 1.5;     // the leader must beat the runner-up by this
// A silent rank that only stopped participating (no exit, no error of its own) is the initiator
// only when at least this share of the ranks that timed out waited on it: fewer point at a rank
// the wave did not start from (the one it did is not in the logs in hand).
inline constexpr double kLeastWaitShare = 0.05;
inline constexpr TimeNs kSkewWindow = 30 * kNsPerSec;  // cross-node clock skew tolerated
inline constexpr TimeNs kStallLead = 250 * kNsPerMs;   // aligned stall times this far apart are ordered

struct RankScore {
  std::int32_t rank = -1;
  double launcher = 0;
  double progress = 0;
  double mismatch = 0;
  double recorder = 0;  // where the Flight Recorder dumps' waits end (an odd collective: mismatch)
  double ras = 0;       // what the NCCL RAS reports single it out for (odd counts: mismatch)
  bool torn_down_early = false;
  double total() const { return launcher + progress + mismatch + recorder + ras; }
};

// Ranks with any score, most likely first (ties by rank number).
std::vector<RankScore> ScoreRanks(const JobFacts& facts, const WaitAnalysis& waits,
                                  const std::vector<std::int32_t>& mismatched,
                                  const FrAnalysis& recorder, const RasAnalysis& ras);

// True when its agent saw it end by SIGABRT during a watchdog wave: the watchdog's own teardown.
bool WatchdogAborted(const JobFacts& facts, std::int32_t rank);

// True when the rank exited on its own account (not as a victim or a torn-down worker).
bool OwnExit(const JobFacts& facts, std::int32_t rank);

}  // namespace denpex::engine
