// Training metrics read from a run's own trainer lines: per rank (or per stream of lines where no
// rank is known), the steps it printed, with the loss and the seconds per step where a line
// prints them or its stamps give them, each cited as file:line. `denpex canary` reads both runs
// through it and compares the canary with the failed run's pre-failure baseline (docs/canary.md).
//
//   auto m = engine::ReadTrainingMetrics("out/incident");
//   auto b = engine::SummarizeBaseline(*m, {.not_after_step = 1200});
//   // b.median_seconds_per_step, b.last_loss, b.last_step
//
// The line shapes, per trainer and version, are docs/metrics.md. Identity comes from what the
// lines say (a `[rank<G>]:` or Open MPI prefix, `rank=<R>`, DeepSpeed's `[Rank <R>]`), never from a
// file's name. Read-only; never follows a symbolic link out of the directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"

namespace denpex::engine {

// The trainer whose line shape a step came from.
enum class TrainerShape {
  kMegatron,       // ` [stamp] iteration <i>/<n> | ... elapsed time per iteration (ms): ...`
  kDeepSpeed,      // `[Rank 0] step=<n>, skipped=<k>, lr=[...], mom=[...]`
  kDeepSpeedPipe,  // `steps: <n> loss: <l> iter time (s): <t> samples/sec: <s>`
  kTorchtitan,     // `step: <n>  loss: <l>  memory: ...  tps: ...`
  kKeyValue,       // `rank=<R> step=<n>/<N> loss=<l> ... step_ms=<ms>` (corpora/capture/train.py)
  kPlainStep,      // `step <n> loss <l>` (corpora/capture/train2.py)
  kHfTrainer,      // `{'loss': <l>, ...}` with the tqdm bar's `<n>/<N> [..., <r>it/s]`
};
const char* TrainerShapeName(TrainerShape shape);

struct TrainingStep {
  std::int64_t step = 0;
  std::optional<double> loss;
  // Seconds per step: printed by the line (Megatron's interval average, DeepSpeed's pipeline
  // `iter time`, train.py's `step_ms`, the tqdm bar's rate), else derived from this line's stamp
  // and the previous step's in the same series (`derived`), else none.
  std::optional<double> seconds_per_step;
  bool derived = false;
  std::optional<TimeNs> time;  // the line's own stamp, else its collector's; none when untimed
  std::string file;  // relative to the incident directory (the file's name when one file is read)
  std::uint32_t line = 0;  // 1-based
  std::string Cite() const { return file + ":" + std::to_string(line); }
};

struct TrainingSeries {
  std::int32_t rank = -1;  // -1: no line says whose steps these are
  std::string stream;  // rank -1: the file (and srun task, local rank or host) the lines came from
  TrainerShape shape = TrainerShape::kMegatron;  // of its first step
  std::vector<TrainingStep> steps;  // in the order the run printed them (a restart's steps go back)
};

struct TrainingMetrics {
  std::vector<TrainingSeries> series;  // ranked series by rank, then the others by stream
  std::int64_t files = 0;              // files read
  std::int64_t lines = 0;              // lines read
  std::int64_t malformed = 0;          // lines of a known shape whose numbers do not parse
  std::vector<std::string> problems;   // "file: what was wrong" (unreadable, capped, binary)
};

// Reads every log under a directory (checkpoint folders aside, compressed and rotated logs as
// the engine reads them), or one file. kNotFound when the path does not exist; a directory
// with no step line gives no series, not an error.
Result<TrainingMetrics> ReadTrainingMetrics(const std::filesystem::path& incident_dir_or_file);

// Where the baseline stops: steps printed after this time or past this step are not in it.
// Both unset: every step.
struct BaselineBound {
  std::optional<TimeNs> not_after_time;  // untimed steps are kept when only a time is given
  std::optional<std::int64_t> not_after_step;
  int last_steps = 20;  // K: the median is over the last K steps with a seconds-per-step value
};

struct Baseline {
  bool found = false;  // a series had a step within the bound
  std::int32_t rank = -1;
  std::string stream;
  std::int64_t last_step = -1;
  std::string last_step_cite;
  std::optional<double> last_loss;  // the last printed loss within the bound
  std::string last_loss_cite;
  std::optional<double> median_seconds_per_step;
  int steps_measured = 0;  // how many values the median is of (<= last_steps)
};

// The baseline of the series that reached the highest step within the bound (ties: the one with
// more steps there, then the lowest rank, then the stream). Within it, only the steps of the
// run's last stretch count: from its last restart (a step lower than the one before it) on.
Baseline SummarizeBaseline(const TrainingMetrics& metrics, const BaselineBound& bound);
// The same, of one series.
Baseline SummarizeSeries(const TrainingSeries& series, const BaselineBound& bound);

}  // namespace denpex::engine
