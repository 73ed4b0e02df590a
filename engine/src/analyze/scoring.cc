#include "analyze/scoring.h"

#include <algorithm>

namespace denpex::engine {
namespace {

double LauncherScore(const JobFacts& facts, std::int32_t rank) {
  const RankFacts& r = facts.ranks[rank];
  double score = r.python_error ? kTraceback : 0;
  if (!OwnExit(facts, rank)) return score;
  if (!facts.WaveSeen()) return score + kLauncherEarly;
  if (!facts.wave.start || !r.exit_timed)
    return score + kLauncherNear;  // an untimed wave or exit: no order either way
  if (r.exit_time < *facts.wave.start - kSkewWindow) return score + kLauncherEarly;
  if (r.exit_time <= *facts.wave.start + kSkewWindow) return score + kLauncherNear;
  return score + kLauncherLate;
}

// Torn down by its agent after a local worker failed on its own before the wave: it died
// before it could time out, so its silence says nothing about it. (Torn down after a victim's
// exit, it had as long as that victim to report a peer, and did not.)
bool TornDownEarly(const JobFacts& facts, std::int32_t rank) {
  const RankFacts& r = facts.ranks[rank];
  if (!r.torn_down || r.node < 0) return false;
  const std::int32_t first = facts.nodes[r.node].failed_rank;
  return first >= 0 && OwnExit(facts, first) &&
         (!facts.WaveSeen() || (facts.wave.start && facts.ranks[first].exit_timed &&
                                facts.ranks[first].exit_time < *facts.wave.start - kSkewWindow));
}

// gloo has no watchdog and no sequence numbers: a member with a log that reported nothing about
// its peers, while others failed against a peer (timed out on one alive but silent, or lost
// the connection to one gone), is where their waits end.
bool SilentMember(const RankFacts& r) {
  return r.has_log && r.timeouts == 0 && !r.peer_error && !r.python_error;
}

double SilenceScore(const JobFacts& facts, std::int32_t rank) {
  const std::int32_t reporters = facts.wave.gloo_timeouts + facts.wave.gloo_closed;
  if (facts.WaveSeen() || reporters == 0 || !SilentMember(facts.ranks[rank])) return 0;
  std::int32_t silent = 0;
  for (const RankFacts& r : facts.ranks) silent += SilentMember(r) ? 1 : 0;
  const std::int32_t others = std::max(1, facts.world.ranks_seen - silent);
  return kProgress * std::min(1.0, static_cast<double>(reporters) / others);
}

}  // namespace

bool WatchdogAborted(const JobFacts& facts, std::int32_t rank) {
  const RankFacts& r = facts.ranks[rank];
  return r.exit_event && r.exit_code == kExitSigabrt && facts.WaveSeen();
}

bool OwnExit(const JobFacts& facts, std::int32_t rank) {
  const RankFacts& r = facts.ranks[rank];
  // SIGABRT during a watchdog wave is the watchdog's own teardown, even when the rank's
  // watchdog lines were lost (a truncated log): a consequence.
  const bool watchdog_abort = WatchdogAborted(facts, rank);
  return r.exit_event && !r.torn_down && r.timeouts == 0 && !watchdog_abort &&
         (!r.peer_error || r.python_error);
}

std::vector<RankScore> ScoreRanks(const JobFacts& facts, const WaitAnalysis& waits,
                                  const std::vector<std::int32_t>& mismatched,
                                  const FrAnalysis& recorder, const RasAnalysis& ras) {
  std::vector<RankScore> all;
  const auto world = std::max<std::size_t>(waits.explains.size(), facts.ranks.size());
  for (std::int32_t rank = 0; rank < static_cast<std::int32_t>(world); ++rank) {
    RankScore s{.rank = rank};
    if (rank < static_cast<std::int32_t>(facts.ranks.size())) {
      s.launcher = LauncherScore(facts, rank);
      s.torn_down_early = TornDownEarly(facts, rank);
      s.progress = SilenceScore(facts, rank) * (s.torn_down_early ? kTornDown : 1);
    }
    if (std::find(mismatched.begin(), mismatched.end(), rank) != mismatched.end()) s.mismatch = kMismatch;
    if (const FrBlocker* b = recorder.RootOf(rank)) {
      if (b->why == FrBlocker::Why::kNeverJoined) s.recorder = kRecorderNeverJoined;
      if (b->why == FrBlocker::Why::kNoDump) s.recorder = kRecorderNoDump;
    }
    if (rank < static_cast<std::int32_t>(waits.explains.size()) && waits.reporters > 0 && waits.explains[rank] > 0) {
      s.progress = kProgress * waits.explains[rank] / waits.reporters;
      if (s.torn_down_early) s.progress *= kTornDown;
    }
    // Its agent saw it end by SIGABRT during the wave: its own watchdog took it down, so it timed
    // out waiting like the others (its timeout lines were lost: a truncated log). Not silent.
    if (rank < static_cast<std::int32_t>(facts.ranks.size()) && WatchdogAborted(facts, rank)) s.progress = 0;
    if (const RasBlocker* b = ras.RootOf(rank)) {
      // Behind in one report only corroborates: a healthy job's snapshot catches a rank late now
      // and then; one that has not moved between two reports, or is gone, decides alone.
      s.ras = b->why == RasBlocker::Why::kGone                      ? kRasGone
              : b->why == RasBlocker::Why::kStuck                   ? kRasStuck
              : b->why == RasBlocker::Why::kBehind && s.total() > 0 ? kRasBehind
                                                                    : 0;  // kOdd: a mismatch
    }
    all.push_back(s);
  }
  // A rank that waited on a local peer's failed extension build stopped because of it: the waits
  // that end at it end at the builder (its own exit and traceback are the build's consequences).
  for (std::int32_t rank = 0; rank < static_cast<std::int32_t>(facts.ranks.size()); ++rank) {
    const std::int32_t builder = facts.ranks[rank].waited_on;
    if (builder < 0) continue;
    all[builder].progress = std::max(all[builder].progress, all[rank].progress);
    all[rank] = RankScore{.rank = rank};
  }
  std::vector<RankScore> out;
  for (const RankScore& s : all) {
    if (s.total() > 0) out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RankScore& a, const RankScore& b) { return a.total() > b.total(); });
  return out;
}

}  // namespace denpex::engine
