// The engine strategy's detectors as one ordered table (detectors.cc): AnalyzeParticipation
// tries the rows top to bottom and the first that answers writes the finding. The table has two
// phases, each its own list with its own row type:
//   before the wait analysis: rows that read only the incident and the facts as collected (no
//     clock aligned yet, no group, no score): endings the whole job shares;
//   after it: rows that may read the Analysis (aligned clocks, process groups, the wait-for
//     graph, the ranks' scores) and end with the answers from the scores.
// Each row is callable alone (the tests run single rows on small incidents).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "analyze/clocks.h"
#include "analyze/facts.h"
#include "analyze/fail_slow.h"
#include "analyze/finding.h"
#include "analyze/flight_recorder.h"
#include "analyze/groups.h"
#include "analyze/mismatch.h"
#include "analyze/scoring.h"
#include "analyze/wait_graph.h"
#include "incident/incident.h"

namespace denpex::engine {

// What the wait analysis worked out, which the rows after it read (BuildAnalysis).
struct Analysis {
  const Incident& inc;
  const Incident* control = nullptr;  // a healthy run of the same job (--control), or none
  JobFacts facts;                     // clocks aligned, silent group members added
  std::vector<ProcessGroup> groups;
  WaitAnalysis waits;
  ClockOffsets clocks;
  std::vector<Mismatch> mismatches;  // from the watchdog lines, then the dumps' odd collectives
  FrAnalysis recorder;               // what the Flight Recorder dumps say
  RasAnalysis ras;                   // what the NCCL RAS reports say
  std::vector<RankScore> scores;     // best first; ranks no line places left out when unplaced > 0
  double unplaced = 0;               // the best score among the ranks left out (0: none)
  bool leads = false;                // the top score clearly leads (kLeadRatio), or is the only one
  std::int32_t lost_node = -1;       // the node the leaders were lost with (LostNode), or -1
  std::optional<Straggler> straggler;  // from the per-rank timers (FindFailSlow)

  const Mismatch* MismatchOf(std::int32_t rank) const {
    for (const Mismatch& m : mismatches) {
      if (m.rank == rank) return &m;
    }
    return nullptr;
  }
};

// The wait analysis between the two phases: aligns the clocks, infers the process groups, builds
// the wait-for graph and scores the ranks (participation.cc).
Analysis BuildAnalysis(const Incident& inc, JobFacts facts, const Incident* control);

// A row before the wait analysis: true when it answered (and filled `f`).
struct FactsDetector {
  std::string_view name;
  bool (*diagnose)(const Incident& inc, const JobFacts& facts, Finding* f);
};

// A row after the wait analysis: true when it answered (and filled `f`). A `complete` answer is
// returned as the row leaves it; the others then get the cascade's consequences and the restart
// advice (AnalyzeParticipation).
struct AnalysisDetector {
  std::string_view name;
  bool (*diagnose)(const Analysis& a, Finding* f);
  bool complete = false;
};

// The two phases' rows, in the order they are tried (docs/diagnosis_format.md §5 lists them).
std::span<const FactsDetector> DetectorsBeforeWaits();
std::span<const AnalysisDetector> DetectorsAfterWaits();

}  // namespace denpex::engine
