// The pieces of `denpex eval` (and `denpex demo`), private to the CLI library:
//   plan    inputs (scenarios, directories, suite files, corpora) -> a sorted job list
//   run     one job: simulate (or take a frozen incident), diagnose with each strategy, score
//   report  Markdown and HTML renderings of an EvalReport (report.h)
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/scorer/scorer.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::cli {

// Writes an output the user named: to `out` for "-", else through WriteOutputFile
// (denpex/common/output_file.h), never into a tree of `read_only`.
Status WriteOutput(const std::filesystem::path& path, std::string_view data, std::ostream& out,
                   std::span<const std::filesystem::path> read_only = {});

// A fresh scratch directory for simulated incidents (under $TMPDIR, else /dev/shm, else the
// system temp directory); not created.
std::filesystem::path ScratchRoot();

struct IncidentRun {
  v1::Truth truth;
  std::vector<v1::Diagnosis> diagnoses;  // one per strategy, in the order asked
  std::vector<v1::IncidentScore> scores;
  double simulate_seconds = 0;
};

// The history store `denpex eval` reads when it lies beside an incident directory
// (docs/history_format.md; the simulator writes it for a scenario's `history`).
inline constexpr const char* kHistoryStore = "history.jsonl";

// Diagnoses `incident_dir` with each strategy and scores each diagnosis against `truth`; with
// a history store beside `incident_dir`, each diagnosis reads it first (as `diagnose --history`).
Result<IncidentRun> DiagnoseAndScore(const std::filesystem::path& incident_dir,
                                     const v1::Truth& truth,
                                     const std::vector<std::string>& strategies,
                                     const scorer::ScoreOptions& options, int threads);

// Simulates `scenario` with `seed` into `dir` (dir/incident, dir/truth.json), then
// DiagnoseAndScore.
Result<IncidentRun> RunIncident(const v1::Scenario& scenario, std::uint64_t seed,
                                const std::filesystem::path& dir,
                                const std::vector<std::string>& strategies,
                                const scorer::ScoreOptions& options = {}, int threads = 0);

// One unit of evaluation work: a scenario with one seed, or one frozen corpus incident.
struct EvalJob {
  std::string suite;  // suite name, "cli", or "corpus:<dir name>"
  std::string id;     // incident name in the report
  std::uint64_t seed = 0;
  double weight = 1;
  std::optional<v1::Scenario> scenario;  // simulated job
  std::filesystem::path corpus_dir;      // frozen job: corpus_dir/incident + expected
  v1::Truth expected;                    // frozen job: corpus_dir/expected.json
  bool rank_timeline = false;            // also list the engine's events for the timeline
};

struct EvalPlan {
  std::vector<EvalJob> jobs;  // sorted by (suite, id, seed): the order shards index
  std::vector<std::string> inputs;
  // Corpus entries left out because their expected.json cannot be read (or has no incident/
  // beside it), each "<suite>/<id>: skipped: <why>"; the rest of the corpus is planned.
  std::vector<std::string> broken;
};

// Expands scenario files, directories of *.textproto, suite files (*.suite.textproto) and
// corpus directories into jobs. Scenario errors name file:line:column. A corpus entry whose
// expected.json is missing or unreadable is listed in `broken`, not an error.
Result<EvalPlan> PlanEval(const std::vector<std::filesystem::path>& inputs,
                          const std::vector<std::filesystem::path>& corpora, int seeds);

// Parses a suite file (denpex.v1.Suite, textproto); errors name file:line:column.
Result<v1::Suite> LoadSuite(const std::filesystem::path& path);

// "I/N" with 0 <= I < N.
struct Shard {
  int index = 0, count = 1;
};
Result<Shard> ParseShard(const std::string& text);

// The strategies an eval compares: `asked` (each must be known to the engine), then with
// `baselines` every baseline the engine knows that is not already there. kInvalidArgument
// names the unknown strategy and lists the known ones.
Result<std::vector<std::string>> ResolveStrategies(const std::vector<std::string>& asked,
                                                   bool baselines);

// The value of a top-level key of one `denpex events` line (docs/events_format.md): a string's
// text, or a number's digits (or `null`); none when the key is absent.
std::optional<std::string_view> JsonValue(std::string_view line, std::string_view key);

// Report extras built from a diagnosis: the bounded copy embedded in reports, and the
// incident timeline (report_timeline.cc).
v1::Diagnosis TrimForReport(const v1::Diagnosis& d);
v1::Timeline TimelineOf(const v1::Truth& truth, const v1::Diagnosis& d);
// Adds each rank's first error (from the engine's event listing, docs/events_format.md) to
// `timeline` as "rank" points, at most kMaxRankPoints (every k-th rank beyond that).
inline constexpr int kMaxRankPoints = 2000;
Status AddRankFirstErrors(const std::filesystem::path& incident_dir, int threads,
                          v1::Timeline* timeline);

}  // namespace denpex::cli
