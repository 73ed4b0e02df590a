// The subcommands of `denpex`, as library functions. Each returns the process exit code
// (0 ok, 2 usage error, 3 unreadable or invalid input, 4 regression-gate failure) and
// prints to the given streams.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace denpex::cli {

// `denpex eval --gate`: a tracked metric dropped below the committed baseline.
inline constexpr int kExitRegression = 4;
// `denpex preflight`: at least one node failed (its report says which and why).
inline constexpr int kExitPreflightFail = 5;

// How long work shows its progress on stderr (cli/src/progress.h): `--progress`,
// `--no-progress` (neither: a redrawn line on a terminal, periodic lines elsewhere) and
// `--progress-interval S`, the least time between two periodic lines.
struct ProgressArgs {
  bool on = false;
  bool off = false;
  double interval_s = 30;
};

struct SimulateArgs {
  std::filesystem::path scenario;
  std::filesystem::path out;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> overrides;  // --set field=value
  bool force = false;  // replace a non-empty out/incident (otherwise refused: it may be a real one)
  // --replay: write out/incident in time, SPEED simulated seconds per wall second (> 0; none
  // or 0: all at once). --replay-max-gap: the longest idle wall gap, seconds (> 0).
  std::optional<double> replay;
  std::optional<double> replay_max_gap;
  ProgressArgs progress;  // of the replay
  // --preflight: the scenario is a preflight scenario (denpex.v1.PreflightScenario): write
  // out/collected/ (each node's tool outputs) and out/preflight_truth.json.
  bool preflight = false;
};
int RunSimulate(const SimulateArgs& args, std::ostream& out, std::ostream& err);

struct DiagnoseArgs {
  std::filesystem::path incident;
  std::filesystem::path json;  // empty: no JSON file
  std::filesystem::path html;  // the incident report as one HTML page; empty: none
  std::filesystem::path markdown;  // the incident report in Markdown; empty: none
  std::string strategy = "engine";
  int threads = 0;
  std::filesystem::path control;  // a healthy run of the same job; empty: none
  std::filesystem::path checkpoint_dir;  // empty: a checkpoints/ folder inside the incident
  std::filesystem::path history;         // the node/GPU history store (docs/history_format.md); empty: none
  bool record_history = false;           // append this diagnosis to `history`
};
int RunDiagnose(const DiagnoseArgs& args, std::ostream& out, std::ostream& err);

// `denpex freeze` (docs/freeze.md): an incident anonymised into a corpus entry, or with
// `confirm` a drafted entry's expected outcome confirmed and corrected.
struct FreezeArgs {
  std::filesystem::path path;  // the incident; with `confirm`: the entry
  std::filesystem::path out;   // the entry to create
  std::filesystem::path map;   // empty: <out>.map.json
  int threads = 0;
  bool confirm = false;
  std::optional<std::string> owner, failure_class, node, checkpoint, resumed_from;
  std::optional<int> rank;
  std::vector<std::string> recovery;
  std::optional<double> operator_minutes;
  std::optional<std::string> investigation_started, investigation_ended;
  std::optional<std::string> process_owner, process_failure_class, notes;
};
int RunFreeze(const FreezeArgs& args, std::ostream& out, std::ostream& err);

struct WatchArgs {
  std::filesystem::path incident;
  std::filesystem::path json;  // replaced at each change; empty: none
  std::string on_diagnosis;    // run at each change with the JSON's path; empty: none
  std::string webhook;         // http:// URL the JSON is POSTed to at each change; empty: none
  int until_exit = 0;          // the job's PID: it ends when that process exits; 0: none
  std::string slurm_job;       // the job's Slurm id: it ends when Slurm says so; empty: none
  std::filesystem::path checkpoint_dir;  // for the final diagnosis
  double interval = 1;                   // seconds between looks at the directory
  double settle = 3;                     // seconds a commit must hold before it is acted on
  double stall_factor = 5;               // step times without progress that make a stall
  double time_scale = 1;                 // log seconds per wall second (a replay's speed)
  double timeout = 0;                    // stop after this many seconds; 0: never
  int threads = 1;                       // a watcher stays light beside the job; 0: all cores
};
int RunWatch(const WatchArgs& args, std::ostream& out, std::ostream& err);

struct EventsArgs {
  std::filesystem::path incident;
  std::string family;  // empty: every family
  int threads = 0;
};
int RunEvents(const EventsArgs& args, std::ostream& out, std::ostream& err);

struct ScoreArgs {
  std::filesystem::path truth;
  std::filesystem::path diagnosis;
  std::filesystem::path json;
};
int RunScore(const ScoreArgs& args, std::ostream& out, std::ostream& err);

struct EvalArgs {
  std::vector<std::filesystem::path> scenarios;  // files or directories of *.textproto
  int seeds = 5;
  std::filesystem::path json;
  std::filesystem::path work_dir;  // empty: a temporary directory, removed afterwards
  std::vector<std::string> strategies = {"engine", "first-error"};  // --baselines adds the rest
  // Issue #6 (docs/evaluation.md): suites, baselines, parallel jobs, shards, reports, gate.
  std::vector<std::filesystem::path> corpora;  // --corpus: frozen incidents with expected.json
  bool baselines = false;                      // add every baseline the engine knows
  int jobs = 0;                                // parallel jobs; 0 = all cores
  std::string shard;                           // "I/N": run every N-th job from the I-th
  std::filesystem::path markdown, html;        // more report formats
  std::filesystem::path gate;                  // exit 4 when a tracked metric drops
  std::filesystem::path write_gate;            // write a gate baseline from this run
  double manual_triage_minutes = 0;            // > 0: score gpu_hours_triage_saved
  ProgressArgs progress;
  std::vector<std::string> shapes;             // --shapes: collection shapes, or "all"
  // --watch: each incident also replayed in simulated time into `denpex watch`'s watcher, its
  // provisional answers scored (docs/evaluation.md, "Watch mode"): evaluated after new events
  // at most once per `watch_every` simulated seconds, and every `watch_every_idle` without one.
  bool watch = false;
  double watch_every = 1;
  double watch_every_idle = 10;
  // The replay paces each file with no stamped line over the span (ReplayOptions::pace_untimed:
  // an early bound, lines may come before they were written) instead of writing it whole when it
  // ends (the latest its lines can come: the default, so no answer is credited early).
  bool watch_pace_untimed = false;
  // --preflight: the inputs are preflight scenarios (denpex.v1.PreflightScenario): each cluster
  // simulated, judged by `denpex preflight --from` and scored (docs/evaluation.md, "Preflight").
  bool preflight = false;
};
int RunEval(const EvalArgs& args, std::ostream& out, std::ostream& err);
// The collection shapes `--shapes` knows, by name: "merged, interleaved, ...".
std::string CollectionShapeNames();

struct EvalMergeArgs {
  std::vector<std::filesystem::path> reports;  // EvalReport JSON files of one run's shards
  std::filesystem::path out, markdown, html;
  std::filesystem::path gate;
};
int RunEvalMerge(const EvalMergeArgs& args, std::ostream& out, std::ostream& err);

struct CheckpointVerifyArgs {
  std::filesystem::path dir;
  std::filesystem::path json;  // empty: no JSON file
  bool deep = false;           // read every tensor: NaN/Inf, zip CRC-32 (whole files)
  int world_size = 0;          // 0: unknown
  int tp = 0;
  int pp = 0;
  int dp = 0;
  std::string not_after;  // RFC 3339 time of the initiating fault; empty: none
  ProgressArgs progress;  // of --deep
};
int RunCheckpointVerify(const CheckpointVerifyArgs& args, std::ostream& out, std::ostream& err);

// `denpex preflight` (docs/preflight.md): --collect runs this node's health tools into DIR/<host>;
// --from judges what was collected, --fabric runs the fabric probes and judges them; exit
// kExitPreflightFail when a node fails.
struct PreflightArgs {
  std::filesystem::path from;          // one folder per node
  std::filesystem::path collect;       // --collect: this node's tools' outputs into collect/<host>/
  std::string host;                    // with --collect: the node's folder; empty: the host name
  int dcgm_level = 0;                  // with --collect: run `dcgmi diag -r N -j`; 0: not
  std::filesystem::path json;          // empty: no JSON file
  std::filesystem::path exclude_file;  // the failed nodes' host list written here; empty: none
  std::filesystem::path history;       // the node/GPU history store; empty: none
  double busbw_floor = 0.8;            // PreflightOptions::busbw_floor
  // --fabric: run the fabric probes into this folder, then judge it as --from does.
  std::filesystem::path fabric;
  std::string nodes;               // Slurm host list; empty: $SLURM_JOB_NODELIST
  std::string launcher;            // `srun`, `torchrun`; empty: srun inside a Slurm job
  std::string on = "ssh {host}";   // torchrun: the command prefix that runs on node {host}
  int ranks_per_node = 1;          // ranks each probe starts per node (GPUs per node)
  std::string python = "python3";  // the interpreter of the gloo probe and torchrun
  std::string probe;               // a probe command instead of the gloo probe; empty: gloo
  std::uint64_t probe_max_bytes = 64u << 20;  // the gloo probe's largest message
  int probe_timeout = 300;                    // seconds a probe's collectives may take
  int port = 29600;  // the rendezvous port of a round's first probe (+1 each)
};
int RunPreflight(const PreflightArgs& args, std::ostream& out, std::ostream& err);

// `denpex canary` (docs/canary.md): the failed job's command run at production shape (drained
// nodes excluded), resumed from the verified checkpoint, followed by the watcher and judged
// against the failed run's own pre-failure baseline. Exit 0 go, kExitCanaryNoGo no-go, 3 when
// nothing could be judged, 2 when it refuses to start (no safe checkpoint, every node drained).
inline constexpr int kExitCanaryNoGo = 5;
struct CanaryArgs {
  std::filesystem::path diagnosis;   // the failed run's diagnosis JSON
  std::filesystem::path incident;    // the failed run's incident directory (its baseline)
  std::filesystem::path out;         // the canary's output directory (new or empty)
  std::filesystem::path checkpoint;  // verified again and resumed from; empty: the diagnosis's
  std::int64_t steps = 20;           // N: steps past the resume step
  std::string nodes;                 // the allocation (Slurm host list); empty: not given
  double step_time_tolerance = 0.25;
  double loss_tolerance = 0.5;
  double timeout = 3600;          // seconds the command may run
  double grace = 10;              // seconds between SIGTERM and SIGKILL when it is stopped
  double interval = 0.5;          // seconds between looks at its output
  std::filesystem::path json;     // the report; empty: none
  std::filesystem::path history;  // the history store the result is appended to; empty: none
  int threads = 1;
  std::vector<std::string> command;
};
int RunCanary(const CanaryArgs& args, std::ostream& out, std::ostream& err);

struct DemoArgs {
  std::filesystem::path out = "denpex-demo";
  bool force = false;  // replace OUT/incident even when it is not a simulated one
};
int RunDemo(const DemoArgs& args, std::ostream& out, std::ostream& err);

// `denpex run`: the collection wrapper (docs/run_wrapper.md). Returns the wrapped command's
// exit code; when the command was killed by a signal, the wrapper dies by the same signal
// (so that torchrun and srun report the task as they would without it).
struct RunArgs {
  std::filesystem::path out;
  std::vector<std::string> command;
  std::uint64_t max_bytes = 256ull << 20;      // of each task's log; 0: no cap
  std::size_t error_context_before = 50;       // lines the error index keeps before each first
  std::size_t error_context_after = 20;        // distinct error, and after it
  std::string rank_env;  // comma-separated; the first one set names the rank; "": the launchers'
  std::string host;                            // empty: the host name
  bool no_tee = false;
  bool no_kernel_log = false;
  bool no_nvidia_smi = false;
};
int RunRun(const RunArgs& args, std::ostream& out, std::ostream& err);
struct CollectArgs {
  std::string slurm_job;                // the job id
  std::filesystem::path out;            // the incident directory (beside `denpex run --out`)
  std::filesystem::path slurmctld_log;  // empty: scontrol show config's
  std::filesystem::path slurmd_log;     // empty: scontrol show config's; %n, %h: the node
  std::string kernel = "srun";          // srun, local or none
  std::int64_t kernel_margin_s = 300;   // kernel lines this long before the start, after the end
};
int RunCollect(const CollectArgs& args, std::ostream& out, std::ostream& err);

// The variables `denpex run` reads the rank from by default, comma-separated, in order.
std::string RunDefaultRankEnv();

}  // namespace denpex::cli
