// Start here: the scorer. Compares a Diagnosis with the Truth of the same incident,
// aggregates scores per strategy and group, merges shard reports and checks a report
// against a regression-gate baseline. Depends only on proto and common. Every definition
// here is the one docs/evaluation.md publishes; change both together.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::scorer {

struct ScoreOptions {
  double diagnose_seconds = 0;       // the strategy's wall time
  double manual_triage_minutes = 0;  // > 0: also score gpu_hours_triage_saved
};

// One incident, one strategy. Grouping fields (suite, weight) are left for the caller.
v1::IncidentScore ScoreIncident(const v1::Truth& truth, const v1::Diagnosis& diagnosis,
                                const ScoreOptions& options = {});

// The truth's fault time (docs/evaluation.md, "Time and GPU-hours"): job.fault_time, else the
// initiator's time, else the first event's; none when the truth has no time.
std::optional<TimeNs> FaultTime(const v1::Truth& truth);

// Sets checkpoint_rewind_avoided on every score the truth judged checkpoints for, against
// `baseline`'s score of the same (suite, incident, seed); left unset without one.
void CompareCheckpointRewind(std::vector<v1::IncidentScore>* scores,
                             const std::string& baseline = "newest-checkpoint");

// "<1k", "1k", "2k-4k", "8k-16k", "32k+"; "unknown" for a world size of 0.
std::string ScaleBucket(int world_size);

// One aggregate per (strategy, group): "overall", then "suite:*", "family:*", "launcher:*"
// and "scale:*" (buckets in size order). Strategies in order of first appearance.
std::vector<v1::AggregateScore> Aggregate(const std::vector<v1::IncidentScore>& scores);

// Incidents in report order: by (suite, incident, seed), strategies in the order given,
// unknown strategies last. Stable, so equal keys keep their order.
void SortIncidents(const std::vector<std::string>& strategies,
                   std::vector<v1::IncidentScore>* scores);

// Joins shard reports into one: incidents and details concatenated and sorted, aggregates
// recomputed. Fails when two reports hold the same (suite, incident, seed, strategy) or
// were run with different strategies.
Result<v1::EvalReport> MergeReports(const std::vector<v1::EvalReport>& shards);

// A fixed-width table of the "overall" aggregates (all groups with `all_groups`), for
// terminals and Markdown.
std::string RenderTable(const v1::EvalReport& report, bool all_groups = true);

// The text printed by `denpex score`.
std::string RenderIncident(const v1::IncidentScore& score);

// Regression gate. The tracked metrics: for the first strategy, in "overall" and every
// "family:*" and "scale:*" group, each quality metric that applies there.
v1::GateBaseline MakeGateBaseline(const v1::EvalReport& report, double tolerance);

// One line per tracked metric that dropped by more than the tolerance, or is missing.
std::vector<std::string> CheckGate(const v1::GateBaseline& baseline,
                                   const v1::EvalReport& report);

// Pilot (`denpex eval --corpus`, docs/evaluation.md "Pilot"): the engine's diagnosis of a corpus
// entry beside the team's recorded process (Truth.corpus_entry.postmortem), the entry's expected
// outcome the arbiter. Each dimension is unset where the entry does not record it. `score` is
// ScoreIncident's for the same diagnosis, its suite and incident already set (they are copied).
v1::PilotIncident ScorePilot(const v1::Truth& expected, const v1::Diagnosis& diagnosis,
                             const v1::IncidentScore& score);

// The totals: per dimension, how many entries record it, the engine's and the process's right
// answers; the decisions that differed and who was right.
v1::PilotSummary SummarizePilot(const std::vector<v1::PilotIncident>& incidents);

// "engine", "process", "both", "neither", "not compared".
std::string PilotRightName(v1::PilotRight right);

// One dimension's engine figure with its count of recorded entries, e.g. "12/16 (16 of 16 entries
// recorded)", "not recorded (0 of 16 entries recorded)".
std::string PilotDimensionScore(const v1::PilotDimension& dimension, int entries);

// The pilot's totals as text for the terminal; empty without a pilot.
std::string RenderPilotTable(const v1::EvalReport& report);

// Collection shapes (`denpex eval --shapes`). Names a copy gives the canonical layout's nodes:
// lower-case name in the copy -> the canonical node names it stands for.
using NodeAliases = std::map<std::string, std::vector<std::string>>;

// The outcome of one (incident, shape) pair: the engine's answer on the copy (`shaped`)
// against its answer on the canonical layout and the truth; suite, incident, seed, shape and
// error are left for the caller.
v1::ShapeResult CompareShape(const v1::Truth& truth, const v1::Diagnosis& canonical,
                             const v1::Diagnosis& shaped, const NodeAliases& aliases = {});

// One aggregate per shape: `shapes` first in that order, then any other shape of `results`.
std::vector<v1::ShapeAggregate> AggregateShapes(const std::vector<v1::ShapeResult>& results,
                                                const std::vector<std::string>& shapes);

// "rank 3 @node-b, SIGNAL_KILL/UNKNOWN" or "INCONCLUSIVE"; "same", "coarser", ...
std::string ShapeAnswerText(const v1::ShapeAnswer& answer);
std::string ShapeOutcomeName(v1::ShapeOutcome outcome);

// The per-shape table and the wrong or differing pairs; empty without shapes.
std::string RenderShapeTable(const v1::EvalReport& report);

}  // namespace denpex::scorer
