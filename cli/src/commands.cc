#include "denpex/cli/commands.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <span>
#include <system_error>

#include "denpex/common/output_file.h"
#include "denpex/engine/checkpoint.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/history_store.h"
#include "denpex/engine/preflight.h"
#include "denpex/proto/json_io.h"
#include "denpex/scorer/scorer.h"
#include "denpex/sim/preflight.h"
#include "denpex/sim/simulator.h"
#include "eval_internal.h"
#include "preflight_collect.h"
#include "preflight_fabric.h"
#include "progress.h"
#include "replay.h"
#include "report_incident.h"

namespace denpex::cli {
namespace fs = std::filesystem;

namespace {
int Fail(std::ostream& err, std::string_view cmd, const Status& st) {
  err << "denpex " << cmd << ": " << st.message() << "\n";
  return ExitCodeFor(st);
}

// Checks an output path before the work that fills it (a diagnosis can take seconds): a usage
// error names what is wrong. "-" (standard output) and "" (none) need no check.
int CheckOutput(std::ostream& err, std::string_view cmd, const fs::path& path,
                std::span<const fs::path> read_only) {
  if (path.empty() || IsStdout(path)) return kExitOk;
  const Status st = CheckOutputPath(path, read_only);
  return st.ok() ? kExitOk : Fail(err, cmd, st);
}
}  // namespace

Status WriteOutput(const fs::path& path, std::string_view data, std::ostream& out,
                   std::span<const fs::path> read_only) {
  if (!IsStdout(path)) return WriteOutputFile(path, data, read_only);
  out << data << std::flush;
  return out ? Status::Ok() : Status::IoError("standard output: write failed");
}

namespace {

// `checkpoint verify --deep`'s bytes read so far and the rate on stderr (no ETA: the bytes to
// read are not known before): on a terminal redrawn at most every 200 ms and cleared at the end,
// elsewhere a line at most every --progress-interval seconds.
class DeepProgress {
 public:
  DeepProgress(ProgressMode mode, double interval_s, std::ostream& err)
      : mode_(mode), interval_s_(interval_s), err_(err), start_(Clock::now()), last_(start_) {}
  void Add(std::uint64_t bytes) {
    bytes_ += bytes;
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (mode_ == ProgressMode::kOff ||
        since < (mode_ == ProgressMode::kTerminal ? 0.2 : interval_s_)) {
      return;
    }
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    char line[128];
    std::snprintf(line, sizeof line, "--deep: %.2f GB read, %.2f GB/s, %s elapsed", bytes_ / 1e9,
                  s > 0 ? bytes_ / 1e9 / s : 0.0, Duration(s).c_str());
    if (mode_ == ProgressMode::kTerminal) {
      err_ << "\r" << line << std::flush;
      drawn_ = true;
    } else {
      err_ << UtcNow() << " denpex checkpoint verify " << line << "\n" << std::flush;
    }
  }
  void Clear() {
    if (drawn_) err_ << "\r\x1b[K" << std::flush;
  }

 private:
  using Clock = std::chrono::steady_clock;
  ProgressMode mode_;
  double interval_s_;
  std::ostream& err_;
  Clock::time_point start_, last_;
  std::uint64_t bytes_ = 0;
  bool drawn_ = false;
};

// Simulate and demo write OUT/incident afresh. One that is there already and holds anything is
// replaced only when asked (--force) or when it is a simulated one (the simulator's truth.json
// beside it): it may be a real incident collected there.
int CheckIncidentReplaceable(const fs::path& out, bool force, std::string_view command,
                             std::ostream& err) {
  const fs::path incident = out / "incident";
  std::error_code ec;
  const fs::file_status there = fs::symlink_status(incident, ec);
  if (force || !fs::exists(there)) return kExitOk;
  if (fs::is_directory(there) && fs::is_empty(incident, ec)) return kExitOk;
  if (fs::is_directory(there) && fs::is_regular_file(fs::symlink_status(out / "truth.json", ec))) {
    return kExitOk;
  }
  err << "denpex " << command << ": " << incident.string()
      << " exists, is not empty and is not a simulated incident (no truth.json beside it); "
      << command << " would delete it and write a new incident there. "
         "Pass --force to replace it, or choose another --out.\n";
  return kExitUsage;
}

// --replay SPEED must be a positive number when given (0: no replay); --replay-max-gap needs it.
int CheckReplayFlags(const SimulateArgs& args, std::ostream& err) {
  if (args.replay && !(*args.replay >= 0 && std::isfinite(*args.replay))) {
    err << "denpex simulate: --replay " << *args.replay
        << ": SPEED is simulated seconds per wall second and must be > 0 (e.g. --replay 60 plays "
           "a 10-minute incident in 10 s); 0 or no --replay writes the incident at once\n";
    return kExitUsage;
  }
  if (args.replay_max_gap) {
    if (!(*args.replay_max_gap > 0 && std::isfinite(*args.replay_max_gap))) {
      err << "denpex simulate: --replay-max-gap " << *args.replay_max_gap
          << ": SECONDS is the longest idle wall-clock gap of a replay and must be > 0\n";
      return kExitUsage;
    }
    if (args.replay.value_or(0) <= 0) {
      err << "denpex simulate: --replay-max-gap needs --replay SPEED (> 0)\n";
      return kExitUsage;
    }
  }
  return kExitOk;
}

}  // namespace

namespace {
// `denpex simulate --preflight`: a cluster's tool outputs for `denpex preflight --from`.
int RunSimulatePreflight(const SimulateArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.overrides.empty() || args.replay) {
    err << "denpex simulate --preflight: --set and --replay apply to incident scenarios only\n";
    return kExitUsage;
  }
  auto scenario = sim::LoadPreflightScenario(args.scenario);
  if (!scenario.ok()) return Fail(err, "simulate --preflight", scenario.status());
  const fs::path collected = args.out / "collected";
  std::error_code ec;
  if (!args.force && fs::exists(collected, ec) &&
      !fs::exists(args.out / "preflight_truth.json", ec)) {
    err << "denpex simulate --preflight: " << collected.string()
        << " exists and no preflight_truth.json is beside it (it may be a real collection); "
           "--force replaces it\n";
    return kExitUsage;
  }
  fs::remove_all(collected, ec);
  auto truth = sim::SimulatePreflight(*scenario, {.out_dir = args.out, .seed = args.seed});
  if (!truth.ok()) return Fail(err, "simulate --preflight", truth.status());
  out << "simulated " << scenario->name() << " (seed " << truth->seed() << ", " << scenario->nodes()
      << " nodes, " << truth->probe_runs() << " nccl-tests runs)\n"
      << "  collected: " << collected.string() << "\n"
      << "  truth:     " << (args.out / "preflight_truth.json").string() << "\n";
  return kExitOk;
}
}  // namespace

int RunSimulate(const SimulateArgs& args, std::ostream& out, std::ostream& err) {
  if (args.preflight) return RunSimulatePreflight(args, out, err);
  auto scenario = sim::LoadScenario(args.scenario, args.overrides);
  if (!scenario.ok()) {
    err << scenario.status().message() << "\n";
    return ExitCodeFor(scenario.status());
  }
  if (int rc = CheckReplayFlags(args, err); rc != kExitOk) return rc;
  if (int rc = CheckIncidentReplaceable(args.out, args.force, "simulate", err); rc != kExitOk) {
    return rc;
  }
  const bool replay = args.replay.value_or(0) > 0;
  // A replay stages the incident beside OUT/incident (never inside what a watcher follows);
  // truth.json is written where it always is, before the replay starts.
  const fs::path staging = args.out / ".replay-staging";
  if (replay) {  // an empty incident directory while the job is simulated: nothing printed yet
    std::error_code ec;
    fs::remove_all(args.out / "incident", ec);
    if (!ec) fs::create_directories(args.out / "incident", ec);
    if (ec) {
      return Fail(
          err, "simulate",
          Status::IoError((args.out / "incident").string() + ": cannot replace: " + ec.message()));
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto simulate = [&] {
    // The model stage of a large scenario (a call every 65,536 events: none for a small one);
    // the line is cleared when the simulation returns.
    ProgressLine progress(ChooseProgress(args.progress), err, "denpex simulate", "", 1000,
                          args.progress.interval_s);
    return sim::Simulate(*scenario, {.out_dir = args.out,
                                     .incident_dir = replay ? staging : fs::path(),
                                     .seed = args.seed,
                                     .on_model_progress = [&progress](double f) {
                                       progress.Update(static_cast<std::uint64_t>(1000 * f),
                                                       "modelling the job");
                                     }});
  };
  auto result = simulate();
  if (!result.ok()) return Fail(err, "simulate", result.status());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (replay) {
    const std::optional<TimeNs> start = ParseRfc3339(result->truth.job().start_time());
    ProgressLine progress(ChooseProgress(args.progress), err, "denpex simulate --replay", "", 1000,
                          args.progress.interval_s);
    const Status st = Replay(
        staging, args.out / "incident", start ? ToCivil(*start).year : ToCivil(0).year, start,
        {.speed = *args.replay,
         .max_gap_s = args.replay_max_gap,
         .on_batch =
             [&progress](std::int64_t done, std::int64_t total) {
               progress.Update(total > 0 ? static_cast<std::uint64_t>(1000 * done / total) : 1000);
             }},
        out);
    if (!st.ok()) return Fail(err, "simulate", st);
  }
  const auto& s = result->stats;
  out << "simulated " << scenario->name() << " (seed " << result->truth.seed() << ", "
      << result->truth.job().world_size() << " ranks): " << s.events << " events, " << s.lines
      << " lines, " << s.bytes << " bytes in " << s.files << " files, " << secs << " s\n"
      << "  incident: " << (args.out / "incident").string() << "\n"
      << "  truth:    " << (args.out / "truth.json").string() << "\n";
  return kExitOk;
}

namespace {
Result<engine::DiagnosisWithTimes> WithoutTimes(Result<v1::Diagnosis> d) {
  if (!d.ok()) return d.status();
  return engine::DiagnosisWithTimes{.diagnosis = std::move(*d), .times = {}};
}
}  // namespace

int RunDiagnose(const DiagnoseArgs& args, std::ostream& out, std::ostream& err) {
  auto strategy = engine::ParseStrategy(args.strategy);
  if (!strategy) {
    err << "denpex diagnose: unknown --strategy '" << args.strategy
        << "' (engine, first-error, loudest, elastic-root-cause, newest-checkpoint, fr-trace, "
           "fr-wavefront, ras)\n";
    return kExitUsage;
  }
  const fs::path read[] = {args.incident, args.checkpoint_dir, args.control};
  for (const fs::path* p : {&args.json, &args.html, &args.markdown}) {
    if (int rc = CheckOutput(err, "diagnose", *p, read); rc != kExitOk) return rc;
  }
  if (IsStdout(args.json) + IsStdout(args.html) + IsStdout(args.markdown) > 1) {
    err << "denpex diagnose: only one of --json, --html and --markdown can be - (standard "
           "output); write the others to files\n";
    return kExitUsage;
  }
  if (args.record_history && args.history.empty()) {
    err << "denpex diagnose: --record-history needs --history FILE (the store to append to)\n";
    return kExitUsage;
  }
  if (args.record_history) {
    if (int rc = CheckOutput(err, "diagnose", args.history, read); rc != kExitOk) return rc;
  }
  const engine::DiagnoseOptions options{.strategy = *strategy,
                                        .threads = args.threads,
                                        .checkpoint_dir = args.checkpoint_dir,
                                        .control = args.control};
  // Each rank's first error only for a report that draws the cascade.
  auto both = args.html.empty() && args.markdown.empty()
                  ? WithoutTimes(engine::Diagnose(args.incident, options))
                  : engine::DiagnoseWithTimes(args.incident, options);
  if (!both.ok()) return Fail(err, "diagnose", both.status());
  v1::Diagnosis* d = &both->diagnosis;
  if (!args.history.empty()) {
    auto history = engine::ReadHistory(args.history);
    if (!history.ok()) return Fail(err, "diagnose", history.status());
    for (const std::string& p : history->problems) {
      err << "denpex diagnose: " << p << "\n";
      d->mutable_input()->add_problems(p);
    }
    engine::ApplyHistory(*history, args.history.string(), args.incident, &*d);
    if (args.record_history) {
      const Status st = engine::RecordHistory(args.history, *history, engine::HistoryEntryOf(*d, args.incident), args.incident);
      if (!st.ok()) return Fail(err, "diagnose", st);
    }
  }
  // `--json -` (or --html, --markdown): standard output is that document, not the text.
  if (!IsStdout(args.json) && !IsStdout(args.html) && !IsStdout(args.markdown)) {
    out << engine::RenderText(*d);
  }
  if (!args.json.empty()) {
    if (auto st = WriteOutput(args.json, proto::ToJson(*d) + "\n", out, read); !st.ok()) {
      return Fail(err, "diagnose", st);
    }
  }
  if (args.html.empty() && args.markdown.empty()) return kExitOk;
  const IncidentReport report = BuildIncidentReport(args.incident, *d, std::move(both->times));
  if (!args.html.empty()) {
    if (auto st = WriteOutput(args.html, RenderIncidentHtml(report), out, read); !st.ok()) {
      return Fail(err, "diagnose", st);
    }
  }
  if (!args.markdown.empty()) {
    if (auto st = WriteOutput(args.markdown, RenderIncidentMarkdown(report), out, read); !st.ok()) {
      return Fail(err, "diagnose", st);
    }
  }
  return kExitOk;
}

int RunEvents(const EventsArgs& args, std::ostream& out, std::ostream& err) {
  const Status st = engine::WriteEvents(args.incident, {.threads = args.threads, .family = args.family}, out);
  return st.ok() ? kExitOk : Fail(err, "events", st);
}

int RunScore(const ScoreArgs& args, std::ostream& out, std::ostream& err) {
  v1::Truth truth;
  if (auto st = proto::ReadJsonFile(args.truth, &truth); !st.ok()) return Fail(err, "score", st);
  v1::Diagnosis diagnosis;
  if (auto st = proto::ReadJsonFile(args.diagnosis, &diagnosis); !st.ok()) return Fail(err, "score", st);
  const v1::IncidentScore score = scorer::ScoreIncident(truth, diagnosis);
  if (!IsStdout(args.json)) out << scorer::RenderIncident(score);
  if (!args.json.empty()) {
    if (auto st = WriteOutput(args.json, proto::ToJson(score) + "\n", out); !st.ok()) {
      return Fail(err, "score", st);
    }
  }
  return kExitOk;
}

int RunCheckpointVerify(const CheckpointVerifyArgs& args, std::ostream& out, std::ostream& err) {
  engine::CheckpointOptions opts{.world_size = args.world_size,
                                 .dims = {.tp = args.tp, .pp = args.pp, .dp = args.dp},
                                 .deep = args.deep};
  if (!args.not_after.empty()) {
    opts.not_after = ParseRfc3339(args.not_after);
    if (!opts.not_after) {
      err << "denpex checkpoint verify: --not-after '" << args.not_after
          << "' is not an RFC 3339 time (2026-03-02T09:17:03Z)\n";
      return kExitUsage;
    }
  }
  const fs::path read[] = {args.dir};
  if (int rc = CheckOutput(err, "checkpoint verify", args.json, read); rc != kExitOk) return rc;
  DeepProgress progress(ChooseProgress(args.progress), args.progress.interval_s, err);
  if (args.deep) {
    opts.deep_progress = [&progress](std::uint64_t bytes) { progress.Add(bytes); };
  }
  auto report = engine::VerifyCheckpointDir(args.dir, opts);
  progress.Clear();
  if (!report.ok()) return Fail(err, "checkpoint verify", report.status());
  if (!IsStdout(args.json)) out << engine::RenderCheckpointText(*report);
  if (!args.json.empty()) {
    const std::string json = proto::ToJson(engine::ToProto(*report)) + "\n";
    if (auto st = WriteOutput(args.json, json, out, read); !st.ok()) {
      return Fail(err, "checkpoint verify", st);
    }
  }
  return kExitOk;
}

int RunPreflight(const PreflightArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.from.empty() + !args.collect.empty() + !args.fabric.empty() != 1) {
    err << "denpex preflight: give one of --collect DIR (on each node: run its health tools into "
           "DIR/<host>), --fabric DIR (run the fabric probes across --nodes into DIR and judge "
           "them) or --from DIR (judge what was collected, one folder per node); "
           "docs/preflight.md\n";
    return kExitUsage;
  }
  if (!args.collect.empty()) return RunPreflightCollect(args, out, err);
  const fs::path read[] = {args.from.empty() ? args.fabric : args.from};
  if (int rc = CheckOutput(err, "preflight", args.json, read); rc != kExitOk) return rc;
  if (int rc = CheckOutput(err, "preflight", args.exclude_file, read); rc != kExitOk) return rc;
  if (!args.fabric.empty()) return RunPreflightFabric(args, out, err);
  auto report =
      engine::PreflightFrom(args.from, {.busbw_floor = args.busbw_floor, .history = args.history});
  if (!report.ok()) return Fail(err, "preflight", report.status());
  return WritePreflightReport(args, *report, out, err);
}

int WritePreflightReport(const PreflightArgs& args, const v1::PreflightReport& report,
                         std::ostream& out, std::ostream& err) {
  const fs::path read[] = {args.from.empty() ? args.fabric : args.from};
  if (!IsStdout(args.json)) out << engine::RenderPreflightText(report);
  if (!args.json.empty()) {
    if (auto st = WriteOutput(args.json, proto::ToJson(report) + "\n", out, read); !st.ok())
      return Fail(err, "preflight", st);
  }
  if (!args.exclude_file.empty()) {
    const std::string list = report.exclude().empty() ? "" : report.exclude() + "\n";
    if (auto st = WriteOutput(args.exclude_file, list, out, read); !st.ok())
      return Fail(err, "preflight", st);
  }
  return report.verdict() == v1::PREFLIGHT_PASS ? kExitOk : kExitPreflightFail;
}

int RunDemo(const DemoArgs& args, std::ostream& out, std::ostream& err) {
  auto scenario = sim::ParseScenario(sim::DefaultScenarioText(), "<embedded default scenario>");
  if (!scenario.ok()) return Fail(err, "demo", scenario.status());
  if (int rc = CheckIncidentReplaceable(args.out, args.force, "demo", err); rc != kExitOk) return rc;
  out << "denpex demo: " << scenario->description() << "\n"
      << "  simulating " << scenario->name() << " into " << args.out.string() << " ...\n";
  auto run = RunIncident(*scenario, scenario->seed(), args.out, {"engine", "first-error"});
  if (!run.ok()) return Fail(err, "demo", run.status());
  out << "  simulated in " << run->simulate_seconds << " s; diagnosing "
      << (args.out / "incident").string() << "\n\n";
  out << engine::RenderText(run->diagnoses[0]) << "\n";
  out << "score against " << (args.out / "truth.json").string() << ":\n";
  for (const auto& s : run->scores) out << scorer::RenderIncident(s);
  if (auto st = proto::WriteJsonFile(args.out / "diagnosis.json", run->diagnoses[0]); !st.ok()) {
    return Fail(err, "demo", st);
  }
  out << "\ndiagnosis JSON: " << (args.out / "diagnosis.json").string() << "\n";
  return kExitOk;
}

}  // namespace denpex::cli
