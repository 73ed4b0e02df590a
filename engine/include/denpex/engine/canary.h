// `denpex canary` (docs/canary.md): the failed job's command run again at production shape,
// resumed from the verified checkpoint, judged against the failed run's own pre-failure baseline.
// This header is the canary's plan and its judgement, both pure: the nodes the recovery drains,
// the checkpoint to resume from, the command's placeholders, and GO / NO_GO from the two runs'
// training metrics (denpex/engine/metrics.h) and the canary's diagnoses. The CLI launches the
// command and follows it (cli/src/canary/).
//
//   auto resume = engine::FindResumePoint(diagnosis, "out/incident", "");
//   ...run the command, read its metrics, collect the watcher's diagnoses...
//   v1::CanaryReport r;
//   engine::JudgeCanary({.diagnosis = &diagnosis, .failed = &before, .canary = &after,
//                        .resume_step = resume->step}, {.steps = 20}, &r);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/engine/metrics.h"
#include "denpex/v1/canary.pb.h"
#include "denpex/v1/diagnosis.pb.h"

namespace denpex::engine {

// The nodes the diagnosis's recovery drains (its `drain_node` preconditions' targets), sorted,
// each once. A GPU to drain (`drain_and_rma`) is not a node to leave out.
std::vector<std::string> DrainedNodes(const v1::Diagnosis& diagnosis);
// The nodes the recovery says the canary must include (its `run_canary` preconditions' targets:
// a node whose GPU was reset or whose host was fixed is what the canary tests), sorted, each once.
std::vector<std::string> CanaryNodes(const v1::Diagnosis& diagnosis);

// The checkpoint the canary resumes from.
struct ResumePoint {
  std::filesystem::path checkpoint;  // the chosen checkpoint: a file or a folder
  std::filesystem::path dir;         // the checkpoint directory it lies in
  std::int64_t step = -1;
  std::string source;  // "diagnosis" or "--checkpoint"
};

// With `checkpoint_dir`: that directory verified again (VerifyCheckpointDir), its newest safe
// checkpoint. Without: the diagnosis's checkpoint outcome, its `dir` relative to `incident` when
// relative. kInvalidArgument, saying what to do, when the decision is not RESUME (no safe
// checkpoint, not evaluated, inconclusive) or the checkpoint is no longer on disk; the errors of
// VerifyCheckpointDir otherwise.
Result<ResumePoint> FindResumePoint(const v1::Diagnosis& diagnosis,
                                    const std::filesystem::path& incident,
                                    const std::filesystem::path& checkpoint_dir);

// What the command's placeholders and environment say (docs/canary.md, "The command").
struct CanaryShape {
  std::string exclude;  // Slurm host list of the drained nodes; empty: none
  std::string nodes;    // the allocation less the drained nodes (host list); empty: not given
  std::string include;  // the nodes the canary must include (host list); empty: none named
  ResumePoint resume;
  std::int64_t steps = 0;     // N
  std::filesystem::path out;  // the canary's output directory
};

// Each argument with `{exclude}`, `{nodes}`, `{include}`, `{checkpoint}`, `{checkpoint_dir}`,
// `{step}`,
// `{steps}`, `{until}` (step + steps) and `{out}` replaced by their values; any other brace is
// left as it is.
std::vector<std::string> ExpandCanaryCommand(const std::vector<std::string>& argv,
                                             const CanaryShape& shape);
// The same values as environment variables: DENPEX_CANARY_EXCLUDE, DENPEX_CANARY_NODES,
// DENPEX_CANARY_INCLUDE, DENPEX_RESUME_CHECKPOINT, DENPEX_RESUME_CHECKPOINT_DIR,
// DENPEX_RESUME_STEP, DENPEX_CANARY_STEPS, DENPEX_CANARY_UNTIL, DENPEX_CANARY_OUT.
std::vector<std::pair<std::string, std::string>> CanaryEnvironment(const CanaryShape& shape);

// The ranks the canary must bring to `until`: those the failed run printed steps for; when its
// lines name no rank, every series of the canary. Sorted.
std::vector<std::int32_t> CanaryRanks(const TrainingMetrics& failed);
// Whether every one of `ranks` (every series when `ranks` is empty) printed step `until` or later.
bool CanaryReached(const TrainingMetrics& canary, const std::vector<std::int32_t>& ranks,
                   std::int64_t until);

struct CanaryOptions {
  std::int64_t steps = 20;            // N: steps past the resume step
  double step_time_tolerance = 0.25;  // the canary's median may be this much slower
  double loss_tolerance = 0.5;        // the first loss within this share of the checkpoint's
};

struct CanaryEvidence {
  const v1::Diagnosis* diagnosis = nullptr;  // the failed run's
  const TrainingMetrics* failed = nullptr;   // the failed run's lines
  const TrainingMetrics* canary = nullptr;   // the canary's lines
  std::int64_t resume_step = 0;
  // The canary's diagnoses that named a failure (VERDICT_DIAGNOSED), each answer once, in the
  // order they were last given: the failure check names the last (the final diagnosis, when the
  // command ended by itself).
  std::vector<v1::Diagnosis> failures;
};

// The checks, the verdict and its summary into `report` (its shape fields are the caller's):
// steps_reached, resumed, step_time, loss, failure. docs/canary.md, "Checks".
void JudgeCanary(const CanaryEvidence& evidence, const CanaryOptions& options,
                 v1::CanaryReport* report);

// The report as an operator reads it.
std::string RenderCanaryText(const v1::CanaryReport& report);

// The history store's record of a canary (`"kind": "canary"`, docs/history_format.md): the
// incident's node, GPU, class and owner from its diagnosis, `time` when the canary ended.
v1::CanaryRecord CanaryHistoryRecord(const v1::CanaryReport& report, const v1::Diagnosis& diagnosis,
                                     TimeNs ended);

}  // namespace denpex::engine
