// `denpex`: flag parsing only. Every subcommand is one call into denpex_cli_lib.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include "denpex/cli/commands.h"
#include "denpex/cli/docgen.h"
#include "denpex/cli/install.h"
#include "denpex/common/status.h"
#include "denpex/engine/engine.h"

namespace {
constexpr const char* kExitCodes =
    "Exit codes: 0 success (an INCONCLUSIVE verdict is a success), 2 usage error, "
    "3 unreadable or invalid input, 4 regression gate failed (eval --gate), 1 internal error.";

// A scenario, suite or corpus path that names nothing here is taken from the shipped data
// (<exe>/../share/denpex once installed; denpex/cli/install.h).
const CLI::Validator kShipped(
    [](std::string& s) -> std::string {
      s = denpex::cli::ResolveShipped(s, denpex::cli::ShippedDataDir()).string();
      return "";
    },
    "");

// The flags of issue #6 (suites, baselines, shards, reports, gate).
void AddEvalFlags(CLI::App* eval, denpex::cli::EvalArgs& a) {
  eval->add_option("--corpus", a.corpora, "Frozen incidents: DIR/<id>/{incident/,expected.json}")
      ->allow_extra_args(false)  // one DIR per --corpus; repeat the flag for more
      ->transform(kShipped);
  eval->add_flag("--baselines", a.baselines, "Add every baseline strategy the engine knows");
  eval->add_option("--jobs", a.jobs, "Parallel jobs (0 = all cores)")->capture_default_str();
  eval->add_option("--shard", a.shard, "Run shard I of N (0-based): every N-th job from the I-th");
  eval->add_option("--markdown", a.markdown, "Write a Markdown report here");
  eval->add_option("--html", a.html, "Write a self-contained HTML report here");
  eval->add_option("--gate", a.gate, "Exit 4 when a metric tracked in this baseline dropped");
  eval->add_option("--write-gate", a.write_gate, "Write a gate baseline from this run");
  eval->add_option("--manual-triage-minutes", a.manual_triage_minutes,
                   "Also score GPU-hours saved against this manual triage time");
  eval->add_option("--shapes", a.shapes,
                   "Also diagnose each incident re-laid in these collection shapes (LIST or all: " +
                       denpex::cli::CollectionShapeNames() +
                       ") and compare with the canonical answer (docs/evaluation.md)")
      ->delimiter(',')
      ->allow_extra_args(false);  // --shapes a,b SCENARIO: the scenario is not a shape
  eval->add_flag(
      "--preflight", a.preflight,
      "The inputs are preflight scenarios (scenarios/preflight): simulate each cluster, judge it "
      "with denpex preflight --from and score which nodes it fails");
  eval->add_flag(
      "--watch", a.watch,
      "Also replay each incident in simulated time into denpex watch's watcher and score "
      "its provisional answers: time to the right answer, before the watchdog, false "
      "alarms (docs/evaluation.md, \"Watch mode\")");
  eval->add_option(
          "--watch-every", a.watch_every,
          "With --watch: evaluate after new events at most once per this many simulated seconds")
      ->capture_default_str();
  eval->add_option(
          "--watch-every-idle", a.watch_every_idle,
          "With --watch: evaluate every this many simulated seconds without new events (stalls)")
      ->capture_default_str();
  eval->add_flag("--watch-pace-untimed", a.watch_pace_untimed,
                 "With --watch: pace each file with no stamped line over the replay's span (an "
                 "early bound: its lines may come before they were written) instead of writing it "
                 "whole when the replay ends (the latest they can come; the default)");
}
// --progress, --no-progress, --progress-interval (cli/src/progress.h).
void AddProgressFlags(CLI::App* app, denpex::cli::ProgressArgs& a, const char* what) {
  auto* on = app->add_flag("--progress", a.on,
                           std::string("Show the progress of ") + what +
                               " on stderr: a redrawn line on a terminal, else a line with an "
                               "ETA at most every --progress-interval seconds and every 10 % "
                               "(the default)");
  auto* off = app->add_flag("--no-progress", a.off, "Show no progress");
  on->excludes(off);
  app->add_option("--progress-interval", a.interval_s,
                  "Least seconds between two progress lines when stderr is not a terminal")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

// A seed is a whole number in [0, 2^64): "-1" would otherwise wrap to 2^64 - 1.
const CLI::Validator kSeed(
    [](std::string& s) -> std::string {
      const bool digits = !s.empty() && s.size() <= 20 &&
                          s.find_first_not_of("0123456789") == std::string::npos;
      if (digits && (s.size() < 20 || s <= "18446744073709551615")) return "";
      return "--seed " + s + " is not a whole number from 0 to 18446744073709551615";
    },
    "UINT64");

// CLI11 answers `denpex preflight --help` with the main help and exit 0, and reads a mistyped
// subcommand as a stray argument: a word standing where a subcommand is required that names
// none is reported as unknown instead (exit 2).
bool UnknownSubcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  std::string path = "denpex";
  for (int i = 1; i < argc && at->get_require_subcommand_min() > 0; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("-")) return false;
    CLI::App* next = nullptr;
    for (CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == arg) next = sub;
    }
    if (next == nullptr) {
      std::cerr << path << ": unknown subcommand '" << arg << "'; `" << path
                << " --help` lists them\n";
      return true;
    }
    at = next;
    path += " " + std::string(arg);
  }
  return false;
}
}  // namespace

namespace denpex::cli {
extern const char* const kBuildCommit;  // generated at build time (cmake/BuildInfo.cmake)
}

namespace {

// The commands that read or write whole incidents start once more with their heap in huge pages
// (engine.h), from the executable's pre-initialisers: before the static initialisers of the
// program and its libraries (protobuf's descriptors, the command-line tables), so that the
// first start costs little more than the dynamic loader's work.
void RestartBeforeStaticInit(int argc, char** argv, char** envp) {
  if (argc < 2) return;
  const std::string_view command = argv[1];
  if (command == "diagnose" || command == "eval" || command == "events" || command == "simulate" ||
      command == "demo" || command == "merge") {
    denpex::engine::RestartWithHugePageHeap(argv, envp);
  }
}
[[gnu::used, gnu::section(".preinit_array")]] void (*const kRestartBeforeStaticInit)(
    int, char**, char**) = RestartBeforeStaticInit;

}  // namespace

int main(int argc, char** argv) {
  using namespace denpex::cli;
  denpex::engine::KeepFreedMemory();
  CLI::App app{"denpex: find patient zero of a failed distributed training job"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionText(kBuildCommit),
                       "Print the version, the commit and the log formats it reads best");
  int rc = denpex::kExitOk;

  SimulateArgs sim_args;
  auto* sim = app.add_subcommand("simulate", "Simulate a scenario: DIR/incident (logs) and DIR/truth.json");
  sim->add_option("scenario", sim_args.scenario, "Scenario file (.textproto)")
      ->required()
      ->transform(kShipped);
  sim->add_option("--out", sim_args.out, "Output directory")->required();
  sim->add_option("--seed", sim_args.seed, "Seed (overrides the scenario's), 0 to 2^64-1")->check(kSeed);
  sim->add_flag("--force", sim_args.force,
                "Replace DIR/incident even when it holds files and no truth.json is beside it (it is deleted first)");
  sim->add_flag("--preflight", sim_args.preflight,
                "The scenario is a preflight scenario (scenarios/preflight): write DIR/collected "
                "(each node's "
                "tool outputs, for denpex preflight --from) and DIR/preflight_truth.json");
  sim->add_option("--replay", sim_args.replay,
                  "Write DIR/incident in time: each line at its simulated time, SPEED simulated "
                  "seconds per wall second (60: a 10-minute incident in 10 s); 0: at once");
  sim->add_option("--replay-max-gap", sim_args.replay_max_gap,
                  "With --replay: cap every idle wall-clock gap at SECONDS");
  sim->add_option(
      "--set", sim_args.overrides,
      "Override a field: --set job.nodes=64 (repeatable). Knobs: job.{nodes,tp,pp,dp},"
      " launcher=LAUNCHER_TORCHRUN|LAUNCHER_SRUN|LAUNCHER_MPIRUN|LAUNCHER_PDSH, "
      "layout=LAYOUT_PER_RANK_FILES|"
      "LAYOUT_TORCHRUN_LOG_DIR|LAYOUT_SLURM_OUT|LAYOUT_MPIRUN_OUT|LAYOUT_PDSH_OUT, "
      "format.{torch=1.13|2.1|2.4|2.6,"
      "nccl=2.18.5|2.21.5|2.24.3|2.26.2|2.28.9|2.29.2,slurm=22.05|23.02,driver=418|470|535|560,"
      "nccl_debug_info,fabric=FABRIC_"
      "INFINIBAND|FABRIC_ROCE,nccl_socket_nthreads=0-16}, faults[0].{kind,rank,"
      "node,step,at_fraction,slowdown,slow_steps,stall}, timeouts.{nccl_timeout_ms,dump_on_timeout,"
      "async_error_handling=0-3,blocking_wait,heartbeat_timeout_ms,watchdog_stuck_fraction,"
      "flight_recorder.{buffer_size,format=FLIGHT_RECORDER_FORMAT_PICKLE|..._JSON,coverage="
      "FLIGHT_RECORDER_COVERAGE_ALL|..._ALL_BUT_FIRST_FAILED|..._RANDOM_HALF,version,"
      "enable_timing}}, nccl_ras.{every_s,format=NCCL_RAS_FORMAT_TEXT|..._JSON,queries,verbose}, "
      "slurm.{kill_on_bad_exit,"
      "kill_wait_ms,slurmd_timeout_ms,requeue}, bare_metal.{open_mpi=4.1|5.0,report_bindings}, "
      "pdsh.{server_alive_interval_s,server_alive_count_max}, deepspeed_runner, "
      "clocks.skew_sigma_ms, training.{warmup_steps,"
      "step_time_ms,tp_collectives_per_step,log_interval,compute_jitter,microbatches"
      " (1F1B),data_parallel=DATA_PARALLEL_DDP|DATA_PARALLEL_ZERO,trainer_log="
      "TRAINER_LOG_MEGATRON|TRAINER_LOG_DEEPSPEED,per_rank_timers}, "
      "realism.{benign_warnings,loud_rank,kernel_logs,old_ecc_event,xid45_on_kill,nvidia_smi,"
      "missing_node_fraction,truncated_node_fraction,damage_initiator_node,missing_initiator_node,"
      "interleaved_line_rate} "
      "(docs/scenario_format.md)");
  AddProgressFlags(sim, sim_args.progress, "the model stage of a large scenario and of a --replay");
  sim->footer(kExitCodes);
  sim->callback([&] { rc = RunSimulate(sim_args, std::cout, std::cerr); });

  DiagnoseArgs diag_args;
  auto* diag = app.add_subcommand("diagnose", "Diagnose an incident directory (never modifies it)");
  diag->add_option("incident", diag_args.incident, "Incident directory")->required();
  diag->add_option("--json", diag_args.json,
                   "Write the diagnosis JSON here (a regular file outside the incident; - for "
                   "standard output, instead of the text)");
  diag->add_option("--html", diag_args.html,
                   "Write the incident report as one self-contained HTML page here: verdict, "
                   "cascade timeline, cited lines in context, checkpoint, recovery "
                   "(docs/incident_report.md)");
  diag->add_option("--markdown", diag_args.markdown,
                   "Write the same incident report in Markdown here");
  diag->add_option("--strategy", diag_args.strategy,
                   "engine | first-error | loudest | elastic-root-cause | newest-checkpoint | "
                   "fr-trace | fr-wavefront | ras (baselines)")
      ->capture_default_str();
  diag->add_option("--checkpoint-dir", diag_args.checkpoint_dir,
                   "The job's checkpoint directory, verified read-only (default: a checkpoints/ "
                   "folder inside the incident, if any)");
  diag->add_option("--threads", diag_args.threads, "Worker threads (0 = all cores)")->capture_default_str();
  diag->add_option("--control", diag_args.control,
                   "A healthy run of the same job: fail-slow ranks are measured against their own timers there");
  diag->add_option("--history", diag_args.history,
                   "The node/GPU history store (JSON lines, docs/history_format.md): earlier incidents of the initiator's "
                   "node and GPU, read only unless --record-history");
  diag->add_flag("--record-history", diag_args.record_history,
                 "Append this diagnosis to the --history store (never inside the incident)");
  diag->footer(kExitCodes);
  diag->callback([&] { rc = RunDiagnose(diag_args, std::cout, std::cerr); });

  WatchArgs watch_args;
  auto* watch = app.add_subcommand(
      "watch",
      "Follow a running job's incident directory; name patient zero as soon as the "
      "logs show it, before the watchdog fires (docs/watch.md)");
  watch->add_option("incident", watch_args.incident, "The directory the job writes its logs into")
      ->required();
  watch->add_option(
      "--json", watch_args.json,
      "Replace this file with the diagnosis JSON at each change (outside the directory)");
  watch->add_option(
      "--on-diagnosis", watch_args.on_diagnosis,
      "Run this shell command at each change; it gets the --json path as $1 and $DENPEX_DIAGNOSIS");
  watch->add_option("--webhook", watch_args.webhook,
                    "POST the diagnosis JSON to this http:// URL at each change");
  watch
      ->add_option("--until-exit", watch_args.until_exit,
                   "The job's PID: give the final diagnosis when it exits")
      ->check(CLI::PositiveNumber);
  watch->add_option("--slurm-job", watch_args.slurm_job,
                    "The job's Slurm id: give the final diagnosis when Slurm ends it");
  watch->add_option("--checkpoint-dir", watch_args.checkpoint_dir,
                    "The job's checkpoint directory, for the final diagnosis");
  watch->add_option("--interval", watch_args.interval, "Seconds between looks at the directory")
      ->capture_default_str();
  watch
      ->add_option("--settle", watch_args.settle,
                   "Seconds a committed answer must hold, evaluation after evaluation, before it "
                   "is acted on")
      ->capture_default_str();
  watch
      ->add_option("--stall-factor", watch_args.stall_factor,
                   "Step times without a step line that make a progress stall")
      ->capture_default_str();
  watch
      ->add_option(
          "--time-scale", watch_args.time_scale,
          "Log seconds per wall second (an incident replayed with `simulate --replay S`: S)")
      ->capture_default_str();
  watch
      ->add_option("--timeout", watch_args.timeout,
                   "Stop, with the final diagnosis, after this many seconds (0: never)")
      ->capture_default_str();
  watch
      ->add_option("--threads", watch_args.threads,
                   "Worker threads of an evaluation (0 = all cores)")
      ->capture_default_str();
  watch->footer(kExitCodes);
  watch->callback([&] { rc = RunWatch(watch_args, std::cout, std::cerr); });

  EventsArgs events_args;
  auto* events = app.add_subcommand("events", "Print the events the engine recognised, one JSON object per line");
  events->add_option("incident", events_args.incident, "Incident directory")->required();
  events->add_option("--family", events_args.family, "Only this family: nccl_watchdog, nccl, cuda, cuda_oom, host_oom, xid, slurm, torchrun, "
                    "deepspeed, fsdp, kubernetes, ray, bare_metal, gloo, trainer, python, other");
  events->add_option("--threads", events_args.threads, "Worker threads (0 = all cores)")->capture_default_str();
  events->footer(kExitCodes);
  events->callback([&] { rc = RunEvents(events_args, std::cout, std::cerr); });

  FreezeArgs freeze_args;
  auto* freeze = app.add_subcommand(
      "freeze",
      "Copy a resolved incident into a corpus entry, anonymised through a name map kept outside "
      "it, with an expected.json drafted from the diagnosis; --confirm confirms or corrects a "
      "draft (docs/freeze.md)");
  freeze->add_option("incident", freeze_args.path, "Incident directory (with --confirm: the entry)")
      ->required();
  freeze->add_option("--out", freeze_args.out, "The entry to create: CORPUS/<name>");
  freeze->add_option("--map", freeze_args.map,
                     "The name map, read and extended (default: <out>.map.json beside the entry; "
                     "never inside it)");
  freeze->add_option("--threads", freeze_args.threads, "Worker threads (0 = all cores)")
      ->capture_default_str();
  freeze->add_flag(
      "--confirm", freeze_args.confirm,
      "Confirm the entry's drafted expected.json, with the corrections and postmortem given");
  freeze->add_option("--owner", freeze_args.owner,
                     "With --confirm: the real owner (OWNER_HOST or host, ...)");
  freeze->add_option(
      "--class", freeze_args.failure_class,
      "With --confirm: the real failure class (FAILURE_CLASS_HOST_OOM or host_oom, ...)");
  freeze->add_option("--rank", freeze_args.rank,
                     "With --confirm: the initiating rank (-1: a whole node or the job)");
  freeze->add_option("--node", freeze_args.node,
                     "With --confirm: the initiating node (its real name is mapped)");
  freeze->add_option(
      "--checkpoint", freeze_args.checkpoint,
      "With --confirm: the safe checkpoint PATH[@STEP] (relative to checkpoints/), or none");
  freeze->add_option("--resumed-from", freeze_args.resumed_from,
                     "With --confirm: the checkpoint the team resumed from, PATH[@STEP]");
  freeze->add_option("--recovery", freeze_args.recovery,
                     "With --confirm: a recovery step the team took (repeatable)");
  freeze->add_option("--operator-minutes", freeze_args.operator_minutes,
                     "With --confirm: operator minutes spent (default: the investigation's span)");
  freeze->add_option("--investigation-started", freeze_args.investigation_started,
                     "With --confirm: when the investigation started (RFC 3339)");
  freeze->add_option("--investigation-ended", freeze_args.investigation_ended,
                     "With --confirm: when it ended (RFC 3339)");
  freeze->add_option("--process-owner", freeze_args.process_owner,
                     "With --confirm: the owner the team's process first blamed");
  freeze->add_option("--process-class", freeze_args.process_failure_class,
                     "With --confirm: the failure class the team's process first named");
  freeze->add_option("--notes", freeze_args.notes, "With --confirm: a note for the postmortem");
  freeze->footer(kExitCodes);
  freeze->callback([&] { rc = RunFreeze(freeze_args, std::cout, std::cerr); });

  ScoreArgs score_args;
  auto* score = app.add_subcommand("score", "Score a diagnosis against ground truth");
  score->add_option("--truth", score_args.truth, "truth.json")->required();
  score->add_option("--diagnosis", score_args.diagnosis, "diagnosis JSON")->required();
  score->add_option("--json", score_args.json, "Write the score JSON here (- for standard output)");
  score->footer(kExitCodes);
  score->callback([&] { rc = RunScore(score_args, std::cout, std::cerr); });

  EvalArgs eval_args;
  auto* eval = app.add_subcommand("eval", "Simulate, diagnose and score scenarios, suites and "
                                          "corpora; print a table (docs/evaluation.md)");
  eval->add_option("scenarios", eval_args.scenarios,
                   "Scenario files, directories of them, or suite files (*.suite.textproto); "
                   "scenarios/... not found here is read from the shipped scenarios")
      ->transform(kShipped);
  eval->add_option("--seeds", eval_args.seeds, "Seeds per scenario (seed, seed+1, ...)")->capture_default_str();
  eval->add_option("--json", eval_args.json, "Write the report JSON here (- for standard output)");
  eval->add_option("--work-dir", eval_args.work_dir, "Keep the simulated incidents here");
  eval->add_option("--strategies", eval_args.strategies, "Strategies to compare")->capture_default_str();
  AddEvalFlags(eval, eval_args);
  AddProgressFlags(eval, eval_args.progress, "the jobs");
  eval->footer(kExitCodes);
  EvalMergeArgs merge_args;
  auto* merge = eval->add_subcommand("merge", "Merge shard reports (--shard I/N) into one report");
  merge->add_option("reports", merge_args.reports, "EvalReport JSON files")->required();
  merge->add_option("--out", merge_args.out, "Write the merged report JSON here");
  merge->add_option("--markdown", merge_args.markdown, "Write a Markdown report here");
  merge->add_option("--html", merge_args.html, "Write a self-contained HTML report here");
  merge->add_option("--gate", merge_args.gate, "Exit 4 when a metric tracked in this baseline dropped");
  merge->callback([&] { rc = RunEvalMerge(merge_args, std::cout, std::cerr); });
  eval->callback([&] {
    if (merge->parsed()) return;
    rc = RunEval(eval_args, std::cout, std::cerr);
  });

  CheckpointVerifyArgs ckpt_args;
  auto* ckpt = app.add_subcommand("checkpoint", "Checkpoint tools (read-only)");
  ckpt->require_subcommand(1);
  auto* verify = ckpt->add_subcommand(
      "verify", "Verify the checkpoints in DIR newest first; say which one is safe to resume from");
  verify->add_option("dir", ckpt_args.dir, "Checkpoint directory")->required();
  verify->add_option("--json", ckpt_args.json,
                     "Write the report JSON here (outside DIR; - for standard output)");
  verify->add_flag("--deep", ckpt_args.deep,
                   "Read every tensor: reject NaN/Inf (naming the tensor) and bad zip CRC-32s");
  AddProgressFlags(verify, ckpt_args.progress, "--deep (bytes read; no ETA)");
  verify->add_option("--world-size", ckpt_args.world_size, "World size of the job that will resume")
      ->check(CLI::Range(0, 1 << 24));
  verify->add_option("--tp", ckpt_args.tp, "Tensor-parallel size")->check(CLI::Range(0, 1 << 24));
  verify->add_option("--pp", ckpt_args.pp, "Pipeline-parallel size")->check(CLI::Range(0, 1 << 24));
  verify->add_option("--dp", ckpt_args.dp, "Data-parallel size")->check(CLI::Range(0, 1 << 24));
  verify->add_option("--not-after", ckpt_args.not_after,
                     "RFC 3339 time of the initiating fault: later checkpoints are suspect");
  verify->footer(kExitCodes);
  verify->callback([&] { rc = RunCheckpointVerify(ckpt_args, std::cout, std::cerr); });

  PreflightArgs preflight_args;
  auto* preflight = app.add_subcommand("preflight",
                                       "Collect each node's health tool outputs, run fabric "
                                       "probes, and judge them before a run: the nodes to exclude");
  preflight->add_option("--from", preflight_args.from,
                        "Judge: a folder of one folder per node holding nvidia-smi -q, nvidia-smi "
                        "topo -m, ibstat, dcgmi "
                        "diag -j, kernel log and nccl-tests outputs");
  preflight->add_option("--collect", preflight_args.collect,
                        "Collect: run this node's nvidia-smi, ibstat, dmesg (and dcgmi) into "
                        "DIR/<host>/ (once per node)");
  preflight->add_option("--host", preflight_args.host,
                        "With --collect: the node's folder name (default: the short host name)");
  preflight
      ->add_option("--dcgm-level", preflight_args.dcgm_level,
                   "With --collect: also run dcgmi diag -r N -j (1-4; 0: not)")
      ->check(CLI::Range(0, 4))
      ->capture_default_str();
  preflight->add_option("--fabric", preflight_args.fabric,
                        "Fabric: run the probes across --nodes through the launcher, each "
                        "probe's output into DIR (shared by the nodes), and judge them");
  preflight->add_option("--nodes", preflight_args.nodes,
                        "With --fabric: the nodes, in Slurm's host list syntax (default: "
                        "$SLURM_JOB_NODELIST)");
  preflight
      ->add_option("--launcher", preflight_args.launcher,
                   "With --fabric: srun or torchrun (default: srun inside a Slurm job)")
      ->check(CLI::IsMember({"srun", "torchrun"}));
  preflight
      ->add_option("--on", preflight_args.on,
                   "With --fabric --launcher torchrun: the command prefix that runs on node "
                   "{host}")
      ->capture_default_str();
  preflight
      ->add_option("--ranks-per-node", preflight_args.ranks_per_node,
                   "With --fabric: ranks per node in each probe (the GPUs per node; 2 or more "
                   "also tests each node alone)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  preflight
      ->add_option("--python", preflight_args.python,
                   "With --fabric: the Python with torch that runs the gloo probe and torchrun")
      ->capture_default_str();
  preflight->add_option("--probe", preflight_args.probe,
                        "With --fabric: each rank runs this command instead of the gloo probe "
                        "(e.g. nccl-tests' all_reduce_perf -b 8 -e 8G -f 2 -g 1; split at spaces)");
  preflight
      ->add_option("--probe-max-bytes", preflight_args.probe_max_bytes,
                   "With --fabric: the gloo probe's largest message, e.g. 64MiB")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  preflight
      ->add_option("--probe-timeout", preflight_args.probe_timeout,
                   "With --fabric: seconds a probe's collectives may take")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  preflight
      ->add_option("--port", preflight_args.port,
                   "With --fabric: the rendezvous port of a round's first probe (the next ones "
                   "+1 each)")
      ->check(CLI::Range(1024, 65000))
      ->capture_default_str();
  preflight->add_option("--history", preflight_args.history,
                        "The node/GPU history store (docs/history_format.md): a node with "
                        "earlier hardware incidents is a repeat offender");
  preflight->add_option("--json", preflight_args.json,
                        "Write the report JSON here (outside DIR; - for standard output)");
  preflight->add_option(
      "--exclude-file", preflight_args.exclude_file,
      "Write the failed nodes here in Slurm's host list syntax (for sbatch --exclude)");
  preflight
      ->add_option("--busbw-floor", preflight_args.busbw_floor,
                   "A nccl-tests run below this share of the median of its shape's runs fails")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  preflight->footer(
      "Exit codes: 0 every node passed, 5 at least one failed, 2 usage error, 3 unreadable or "
      "invalid input.");
  preflight->callback([&] { rc = RunPreflight(preflight_args, std::cout, std::cerr); });

  CanaryArgs canary_args;
  auto* canary = app.add_subcommand(
      "canary",
      "Run the failed job's command at production shape (drained nodes excluded), resumed from "
      "the verified checkpoint, and judge it against the failed run: go or no-go. denpex canary "
      "--diagnosis FILE --incident DIR --out DIR -- COMMAND...");
  canary->add_option("--diagnosis", canary_args.diagnosis, "The failed run's diagnosis JSON")
      ->required();
  canary
      ->add_option("--incident", canary_args.incident,
                   "The failed run's incident directory: its step lines are the baseline")
      ->required();
  canary
      ->add_option("--out", canary_args.out,
                   "The canary's output directory, new or empty: the command's output goes to "
                   "OUT/console.log ({out} in the command for its own files)")
      ->required();
  canary->add_option("--checkpoint", canary_args.checkpoint,
                     "Resume from the newest safe checkpoint of this directory, verified again "
                     "(default: the diagnosis's checkpoint)");
  canary
      ->add_option("--steps", canary_args.steps,
                   "N: the canary must reach the resume step + N on every rank")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->capture_default_str();
  canary->add_option("--nodes", canary_args.nodes,
                     "The allocation in Slurm's host list syntax: {nodes} is it less the drained "
                     "nodes");
  canary
      ->add_option("--step-time-tolerance", canary_args.step_time_tolerance,
                   "The canary's median step time may exceed the failed run's by this share")
      ->capture_default_str();
  canary
      ->add_option("--loss-tolerance", canary_args.loss_tolerance,
                   "The canary's first loss must lie within this share of the failed run's loss "
                   "at the checkpoint's step")
      ->capture_default_str();
  canary->add_option("--timeout", canary_args.timeout, "Seconds the command may run")
      ->capture_default_str();
  canary
      ->add_option("--grace", canary_args.grace,
                   "Seconds between SIGTERM and SIGKILL when the canary stops the command")
      ->capture_default_str();
  canary->add_option("--interval", canary_args.interval, "Seconds between looks at OUT")
      ->capture_default_str();
  canary->add_option("--json", canary_args.json,
                     "Write the report JSON here (- for standard output)");
  canary->add_option("--history", canary_args.history,
                     "Append the result to this history store (docs/history_format.md)");
  canary
      ->add_option("command", canary_args.command,
                   "The job's command and its arguments, after --; {exclude}, {nodes}, "
                   "{include}, {checkpoint}, {checkpoint_dir}, {step}, {steps}, {until}, {out} "
                   "are substituted")
      ->required();
  canary->footer(
      "Exit codes: 0 go, 5 no-go, 2 usage error or a refusal to start (no safe checkpoint, every "
      "node drained), 3 unreadable input or nothing to judge (no step line).");
  canary->callback([&] { rc = RunCanary(canary_args, std::cout, std::cerr); });

  DemoArgs demo_args;
  auto* demo = app.add_subcommand("demo", "The embedded default: simulate 4,096 ranks with one "
                                          "SIGKILLed rank, diagnose, score");
  demo->add_option("--out", demo_args.out, "Where to write the incident")->capture_default_str();
  demo->add_flag("--force", demo_args.force,
                 "Replace OUT/incident even when it holds files and no truth.json is beside it");
  demo->footer(kExitCodes);
  demo->callback([&] { rc = RunDemo(demo_args, std::cout, std::cerr); });

  RunArgs run_args;
  auto* run = app.add_subcommand("run",
                                 "Run a training command and collect its output, identity and exit "
                                 "into an incident directory: denpex run --out DIR -- COMMAND...");
  run->add_option("--out", run_args.out, "Incident directory (DIR/<host>/rank_<R>.log, ...)")
      ->required();
  run->add_option("--max-bytes", run_args.max_bytes, "Cap of each task's log, e.g. 64MiB (0: none)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  run->add_option("--error-context-before", run_args.error_context_before,
                  "Lines the error index keeps before each first distinct error, whatever "
                  "--max-bytes drops")
      ->capture_default_str();
  run->add_option("--error-context-after", run_args.error_context_after,
                  "Lines the error index keeps after each first distinct error")
      ->capture_default_str();
  run->add_option("--rank-env", run_args.rank_env,
                  "Variables that may hold the global rank, first set wins (default: " +
                      denpex::cli::RunDefaultRankEnv() + ")");
  run->add_option("--host", run_args.host,
                  "Name of the node directory (default: SLURMD_NODENAME when it names this "
                  "machine, else the host name)");
  run->add_flag("--no-tee", run_args.no_tee, "Do not copy the command's output to the console");
  run->add_flag("--no-kernel-log", run_args.no_kernel_log,
                "Do not read the kernel log (/dev/kmsg)");
  run->add_flag("--no-nvidia-smi", run_args.no_nvidia_smi,
                "Do not take an nvidia-smi snapshot at the end");
  run->add_option("command", run_args.command, "The command and its arguments, after --")
      ->required();
  run->footer(
      "Exit code: the command's (or its signal); 126/127 when it cannot be started, 2 usage error, "
      "3 when DIR cannot be written.");
  run->callback([&] { rc = RunRun(run_args, std::cout, std::cerr); });

  CollectArgs collect_args;
  auto* collect = app.add_subcommand(
      "collect",
      "Gather a finished job's evidence outside its ranks' output (the scheduler's lines of the "
      "job, its records, each node's kernel log) into an incident directory");
  collect->add_option("--slurm-job", collect_args.slurm_job, "The Slurm job id")->required();
  collect
      ->add_option("--out", collect_args.out,
                   "Incident directory (the one `denpex run --out` wrote, or a new one)")
      ->required();
  collect->add_option("--slurmctld-log", collect_args.slurmctld_log,
                      "The controller's log (default: scontrol show config's SlurmctldLogFile)");
  collect->add_option("--slurmd-log", collect_args.slurmd_log,
                      "The nodes' slurmd log, %n or %h for the node (default: SlurmdLogFile)");
  collect
      ->add_option("--kernel", collect_args.kernel,
                   "Where each node's kernel log is read: srun (a step on the node), local (this "
                   "machine, when it is one of the job's nodes) or none")
      ->capture_default_str();
  collect
      ->add_option("--kernel-margin", collect_args.kernel_margin_s,
                   "Seconds of kernel log kept before the job's start and after its end")
      ->capture_default_str();
  collect->footer(
      "Exit codes: 0 collected, 2 usage error, 3 when nothing could be collected or the job "
      "cannot be placed.");
  collect->callback([&] { rc = RunCollect(collect_args, std::cout, std::cerr); });

  // Hidden (no group): the build writes the man page and the completions with it (docgen.h).
  std::string docs_kind;
  std::filesystem::path docs_out;
  auto* docs = app.add_subcommand("generate-docs", "")->group("");
  docs->add_option("kind", docs_kind, "man, bash or zsh")->required();
  docs->add_option("--out", docs_out, "Write here (default: standard output)");
  docs->callback([&] {
    rc = RunGenerateDocs(app, docs_kind, DENPEX_VERSION, docs_out, std::cout, std::cerr);
  });

  if (UnknownSubcommand(app, argc, argv)) return denpex::kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return denpex::kExitUsage;
  }
  return rc;
}
