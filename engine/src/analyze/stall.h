// Progress stall (`denpex watch`): while the job still runs, no line may say yet who stopped;
// the step lines do. A rank whose step lines stopped while its peers' went on, or the ranks
// behind the others once every rank's stopped for longer than a multiple of the step time, are
// the ones that stopped first. Only the watch asks (the time `now` is the watcher's): a
// post-mortem has its own evidence of the end.
#pragma once

#include <cstdint>
#include <map>

#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// A rank's newest step line (an iteration event): its step, its time, the event.
struct ProgressMark {
  std::int64_t iteration = -1;
  TimeNs time = 0;
  std::int32_t event = -1;
};

// Every rank's newest step line, by rank; ranks with none are absent.
std::map<std::int32_t, ProgressMark> LatestProgress(const Incident& inc);

struct StallClock {
  TimeNs now = 0;  // in the logs' clock
  // The time between a rank's successive step lines: its step time, times the steps between
  // two lines (a job that logs every 10th step); 0: unknown, no answer.
  double line_ns = 0;
  double factor = 5;  // a stop longer than factor such times is a stall
  // ... and longer than this: a job stepping every 0.2 s pauses a second for a garbage
  // collection, a log flush, a machine busy with other work, and is not stalled.
  double min_ns = 5e9;
};

// The finding of a stall, when there is one: DIAGNOSED (HANG) when one rank, or one node's
// ranks, stopped first; INCONCLUSIVE with what stopped when the step lines name no one.
bool AnswerProgressStall(const Incident& inc, const std::map<std::int32_t, ProgressMark>& marks,
                         const StallClock& clock, Finding* f);

}  // namespace denpex::engine
