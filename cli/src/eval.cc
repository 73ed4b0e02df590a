// `denpex eval` and `denpex eval merge`: plan the jobs (eval_plan.cc), run them in
// parallel with TBB, score, aggregate, write the reports (report_*.cc), apply the
// regression gate. The report never depends on the thread count: every job writes its own
// slot and the slots are read in plan order.
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <random>
#include <span>
#include <system_error>

#include "denpex/cli/commands.h"
#include "denpex/common/output_file.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/history_store.h"
#include "denpex/proto/json_io.h"
#include "denpex/scorer/scorer.h"
#include "denpex/sim/simulator.h"
#include "eval_internal.h"
#include "preflight_eval.h"
#include "progress.h"
#include "report.h"
#include "shapes/shapes.h"
#include "watch/watch_eval.h"

namespace denpex::cli {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

// Where simulated incidents live while they are scored (each is removed once scored): a
// fresh directory under $TMPDIR when set, else under /dev/shm (tmpfs: a 16k-rank incident
// is ~18k files, written 10-20x faster than to disk), else the system temp directory.
fs::path ScratchRoot() {
  fs::path base = fs::temp_directory_path();
  if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK) == 0) base = "/dev/shm";
  std::random_device rd;
  return base / ("denpex-eval-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
}

namespace {

// The jobs done so far on stderr (progress.h), the last one named.
class Progress {
 public:
  Progress(const ProgressArgs& args, std::ostream& err, size_t total)
      : line_(ChooseProgress(args), err, "denpex eval", "jobs", total, args.interval_s) {}
  void Done(const EvalJob& job) {
    const size_t n = ++done_;
    line_.Update(n, job.suite + "/" + job.id + " seed " + std::to_string(job.seed));
  }

 private:
  ProgressLine line_;
  std::atomic<size_t> done_{0};
};

struct RunConfig {
  std::vector<std::string> strategies;
  scorer::ScoreOptions score;
  fs::path work;
  bool keep = false;  // --work-dir: keep the simulated incidents
  int diagnose_threads = 0;
  std::vector<const shapes::Shape*> shapes;  // --shapes: copies the engine also diagnoses
  std::optional<WatchEvalOptions> watch;     // --watch: the incident replayed into a watcher
};

struct JobOutcome {
  std::vector<v1::IncidentScore> scores;
  v1::IncidentDetail detail;
  std::vector<v1::ShapeResult> shape_results;  // in the order of RunConfig::shapes
  std::optional<v1::WatchResult> watch;        // --watch
  std::optional<v1::PilotIncident> pilot;      // a corpus entry the engine diagnosed
  std::string error;  // empty: the job ran
};

std::string JobName(const EvalJob& job) {
  return job.suite + "/" + job.id + (job.scenario ? " seed " + std::to_string(job.seed) : "");
}

// A simulated incident is removed once scored, unless --work-dir asked to keep it.
void RemoveScratch(const EvalJob& job, const fs::path& dir, const RunConfig& cfg) {
  std::error_code ec;
  if (job.scenario && !cfg.keep) fs::remove_all(dir, ec);
}

// Each shape's copy of `incident` (under dir/shapes/<shape>/, removed unless kept), diagnosed
// by the engine and compared with its canonical answer (`run.diagnoses[engine]`).
void RunShapes(const EvalJob& job, const fs::path& incident, const fs::path& dir,
               const IncidentRun& run, size_t engine, const RunConfig& cfg, JobOutcome* out) {
  for (const shapes::Shape* shape : cfg.shapes) {
    const fs::path copy = dir / "shapes" / shape->name;
    std::error_code ec;
    fs::remove_all(copy, ec);
    v1::ShapeResult r;
    auto relaid = shapes::Relay(*shape, incident, run.truth, copy / "incident");
    if (relaid.ok() && !relaid->applies) {
      fs::remove_all(copy, ec);
      continue;
    }
    Result<IncidentRun> shaped = relaid.status();
    if (relaid.ok()) {
      const fs::path store = incident.parent_path() / kHistoryStore;
      if (fs::exists(store, ec)) fs::copy_file(store, copy / kHistoryStore, ec);
      shaped = DiagnoseAndScore(copy / "incident", run.truth, {"engine"}, cfg.score,
                                cfg.diagnose_threads);
    }
    if (shaped.ok()) {
      r = scorer::CompareShape(run.truth, run.diagnoses[engine], shaped->diagnoses[0],
                               relaid->node_aliases);
      r.set_diagnose_seconds(shaped->scores[0].diagnose_seconds());
      r.set_reason(shaped->diagnoses[0].reason().substr(0, 400));
    } else {
      r = scorer::CompareShape(run.truth, run.diagnoses[engine], v1::Diagnosis{});
      r.set_outcome(v1::SHAPE_OUTCOME_DIFFERS);
      r.set_error(shaped.status().message());
    }
    r.set_suite(job.suite);
    r.set_incident(job.id);
    r.set_seed(job.seed);
    r.set_shape(shape->name);
    out->shape_results.push_back(std::move(r));
    if (!cfg.keep) fs::remove_all(copy, ec);
  }
  std::error_code ec;
  if (!cfg.keep) fs::remove_all(dir / "shapes", ec);
}

// --watch: the incident replayed in simulated time into a watcher (under dir/watch/, removed
// unless kept), its answers scored; the engine's diagnosis of the whole incident is the final one.
v1::WatchResult WatchJob(const EvalJob& job, const fs::path& incident, const fs::path& dir,
                         const IncidentRun& run, const RunConfig& cfg) {
  const size_t engine = static_cast<size_t>(
      std::find(cfg.strategies.begin(), cfg.strategies.end(), "engine") - cfg.strategies.begin());
  WatchEvalOptions o = *cfg.watch;
  o.threads = cfg.diagnose_threads;
  const bool healthy = job.scenario && IsHealthyControl(*job.scenario);
  auto r = MeasureWatch(incident, dir / "watch" / "incident", run.truth, run.diagnoses[engine],
                        healthy, o);
  v1::WatchResult out = r.ok() ? std::move(*r) : v1::WatchResult{};
  if (!r.ok()) {
    out.set_error(r.status().message());
    out.set_family(scorer::ScoreIncident(run.truth, run.diagnoses[engine]).family());
    out.set_world_size(run.truth.job().world_size());
    out.set_healthy(healthy);
  }
  out.set_suite(job.suite);
  out.set_incident(job.id);
  out.set_seed(job.seed);
  std::error_code ec;
  if (!cfg.keep) fs::remove_all(dir / "watch", ec);
  return out;
}

JobOutcome RunJob(const EvalJob& job, const RunConfig& cfg) {
  JobOutcome out;
  const fs::path dir = cfg.work / job.suite / job.id / ("seed-" + std::to_string(job.seed));
  auto run = job.scenario ? RunIncident(*job.scenario, job.seed, dir, cfg.strategies,
                                        cfg.score, cfg.diagnose_threads)
                          : DiagnoseAndScore(job.corpus_dir / "incident", job.expected,
                                             cfg.strategies, cfg.score, cfg.diagnose_threads);
  if (!run.ok()) {
    out.error = JobName(job) + ": " + run.status().message();
    RemoveScratch(job, dir, cfg);
    return out;
  }
  for (auto& s : run->scores) {
    s.set_suite(job.suite);
    s.set_incident(job.id);
    s.set_seed(job.seed);
    s.set_weight(job.weight);
  }
  const size_t engine = static_cast<size_t>(
      std::find(cfg.strategies.begin(), cfg.strategies.end(), "engine") - cfg.strategies.begin());
  if (!job.scenario && engine < run->scores.size()) {
    out.pilot = scorer::ScorePilot(run->truth, run->diagnoses[engine], run->scores[engine]);
  }
  out.scores = std::move(run->scores);
  out.detail.set_suite(job.suite);
  out.detail.set_incident(job.id);
  out.detail.set_seed(job.seed);
  *out.detail.mutable_diagnosis() = TrimForReport(run->diagnoses[0]);
  *out.detail.mutable_timeline() = TimelineOf(run->truth, run->diagnoses[0]);
  if (job.rank_timeline) {
    const fs::path incident = job.scenario ? dir / "incident" : job.corpus_dir / "incident";
    // A missing event listing is not a failed job: the scores stand without it.
    auto* tl = out.detail.mutable_timeline();
    if (auto st = AddRankFirstErrors(incident, cfg.diagnose_threads, tl); !st.ok()) {
      tl->set_source(tl->source() + " (no event listing: " + st.message() + ")");
    }
  }
  out.detail.set_diagnosis_text(engine::RenderText(run->diagnoses[0]));
  if (!cfg.shapes.empty()) {
    const fs::path incident = job.scenario ? dir / "incident" : job.corpus_dir / "incident";
    RunShapes(job, incident, dir, *run, engine, cfg, &out);
  }
  if (cfg.watch) {
    out.watch = WatchJob(job, job.scenario ? dir / "incident" : job.corpus_dir / "incident", dir,
                         *run, cfg);
  }
  RemoveScratch(job, dir, cfg);
  return out;
}

std::vector<JobOutcome> RunJobs(const std::vector<EvalJob>& jobs, RunConfig cfg, int threads,
                                Progress& progress) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  // Parallel jobs each diagnose on one thread: the cores are already busy, and the
  // measured wall time stays comparable between strategies.
  cfg.diagnose_threads = arena.max_concurrency() > 1 && jobs.size() > 1 ? 1 : 0;
  std::vector<JobOutcome> outcomes(jobs.size());
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t i) {
      outcomes[i] = RunJob(jobs[i], cfg);
      progress.Done(jobs[i]);
    });
  });
  return outcomes;
}

int Fail(std::ostream& err, std::string_view cmd, const Status& st) {
  err << "denpex " << cmd << ": " << st.message() << "\n";
  return ExitCodeFor(st);
}

// --json, --markdown, --html: whichever were given ("-": standard output), never inside a corpus.
Status WriteReports(const v1::EvalReport& report, const fs::path& json, const fs::path& md,
                    const fs::path& html, std::span<const fs::path> read_only, std::ostream& out) {
  if (!json.empty()) DENPEX_RETURN_IF_ERROR(WriteOutput(json, proto::ToJson(report) + "\n", out, read_only));
  if (!md.empty()) DENPEX_RETURN_IF_ERROR(WriteOutput(md, RenderMarkdown(report), out, read_only));
  if (!html.empty()) DENPEX_RETURN_IF_ERROR(WriteOutput(html, RenderHtml(report), out, read_only));
  return Status::Ok();
}

// kExitOk, kExitRegression when a tracked metric dropped, or the code of a read error.
int ApplyGate(const fs::path& gate, const v1::EvalReport& report, std::ostream& out,
              std::ostream& err) {
  if (gate.empty()) return kExitOk;
  v1::GateBaseline baseline;
  if (auto st = proto::ReadJsonFile(gate, &baseline); !st.ok()) return Fail(err, "eval", st);
  const auto failures = scorer::CheckGate(baseline, report);
  if (failures.empty()) {
    out << "gate: " << baseline.metrics_size() << " tracked metrics"
        << (baseline.shape_floors_size() > 0
                ? " and " + std::to_string(baseline.shape_floors_size()) + " shape floors"
                : std::string())
        << " at or above "
        << gate.string() << "\n";
    return kExitOk;
  }
  err << "gate: " << failures.size() << " of " << baseline.metrics_size()
      << " tracked metrics dropped below " << gate.string() << ":\n";
  for (const auto& f : failures) err << "  " << f << "\n";
  return kExitRegression;
}

// `broken`: corpus entries the plan skipped, reported first among the failures.
v1::EvalReport BuildReport(std::vector<JobOutcome>& outcomes,
                           const std::vector<std::string>& shape_names,
                           const std::vector<std::string>& broken) {
  v1::EvalReport report;
  for (const auto& b : broken) report.mutable_run()->add_failures(b);
  std::vector<v1::IncidentScore> all;
  std::vector<v1::ShapeResult> shaped;
  std::vector<v1::PilotIncident> pilot;
  for (auto& o : outcomes) {
    if (!o.error.empty()) {
      report.mutable_run()->add_failures(o.error);
      continue;
    }
    for (auto& s : o.scores) all.push_back(std::move(s));
    *report.add_details() = std::move(o.detail);
    for (auto& r : o.shape_results) shaped.push_back(std::move(r));
    if (o.watch) *report.add_watch_results() = std::move(*o.watch);
    if (o.pilot) pilot.push_back(std::move(*o.pilot));
  }
  if (!pilot.empty()) {
    *report.mutable_pilot() = scorer::SummarizePilot(pilot);
    for (auto& p : pilot) *report.add_pilot_incidents() = std::move(p);
  }
  if (!shape_names.empty()) {
    for (auto& g : scorer::AggregateShapes(shaped, shape_names)) {
      *report.add_shape_aggregates() = std::move(g);
    }
    for (auto& r : shaped) *report.add_shape_results() = std::move(r);
  }
  scorer::CompareCheckpointRewind(&all);
  for (auto& a : scorer::Aggregate(all)) *report.add_aggregates() = std::move(a);
  for (auto& s : all) *report.add_incidents() = std::move(s);
  return report;
}

Status CheckArgs(const EvalArgs& args) {
  if (args.seeds < 1) return Status::InvalidArgument("--seeds must be at least 1");
  if (args.jobs < 0) return Status::InvalidArgument("--jobs must be 0 (all cores) or more");
  if (args.watch && !(args.watch_every > 0 && args.watch_every_idle >= args.watch_every)) {
    return Status::InvalidArgument(
        "--watch-every must be > 0 and --watch-every-idle at least as long (simulated seconds)");
  }
  if (args.manual_triage_minutes < 0) {
    return Status::InvalidArgument("--manual-triage-minutes must not be negative");
  }
  if (args.scenarios.empty() && args.corpora.empty()) {
    return Status::InvalidArgument(
        "nothing to evaluate: give scenario files, directories, suite files "
        "(*.suite.textproto) or --corpus DIR");
  }
  // The outputs are checked before the run, not after minutes of work.
  for (const fs::path* p : {&args.json, &args.markdown, &args.html, &args.write_gate}) {
    if (!p->empty() && !IsStdout(*p)) DENPEX_RETURN_IF_ERROR(CheckOutputPath(*p, args.corpora));
  }
  return Status::Ok();
}

// The command that rewrites a gate baseline: recorded in the baseline file itself.
std::string RefreshCommand(const EvalArgs& args) {
  std::string cmd = "denpex eval";
  for (const auto& in : args.scenarios) (cmd += ' ') += in.string();
  for (const auto& c : args.corpora) cmd += " --corpus " + c.string();
  cmd += " --seeds " + std::to_string(args.seeds) + " --strategies";
  for (const auto& s : args.strategies) cmd += " " + s;
  if (!args.shapes.empty()) {
    cmd += " --shapes ";
    for (size_t i = 0; i < args.shapes.size(); ++i) cmd += (i ? "," : "") + args.shapes[i];
  }
  return cmd + " --write-gate " + args.write_gate.string();
}

}  // namespace

Result<IncidentRun> DiagnoseAndScore(const fs::path& incident_dir, const v1::Truth& truth,
                                     const std::vector<std::string>& strategies,
                                     const scorer::ScoreOptions& options, int threads) {
  IncidentRun run;
  run.truth = truth;
  // A fleet's history store beside the incident (what the simulator writes for a scenario's
  // `history`, or a frozen incident's own): read as `denpex diagnose --history` reads it.
  std::optional<engine::History> history;
  const fs::path store = incident_dir.parent_path() / kHistoryStore;
  std::error_code ec;
  if (fs::exists(store, ec)) {
    auto read = engine::ReadHistory(store);
    if (!read.ok()) return read.status();
    history = std::move(*read);
  }
  for (const auto& name : strategies) {
    auto strategy = engine::ParseStrategy(name);
    if (!strategy) return Status::InvalidArgument("unknown strategy '" + name + "'");
    const auto t0 = Clock::now();
    auto d = engine::Diagnose(incident_dir, {.strategy = *strategy, .threads = threads});
    if (!d.ok()) return d.status();
    if (history) engine::ApplyHistory(*history, store.filename().string(), incident_dir, &*d);
    scorer::ScoreOptions o = options;
    o.diagnose_seconds = SecondsSince(t0);
    run.scores.push_back(scorer::ScoreIncident(truth, *d, o));
    run.diagnoses.push_back(std::move(*d));
  }
  return run;
}

Result<IncidentRun> RunIncident(const v1::Scenario& scenario, std::uint64_t seed,
                                const fs::path& dir, const std::vector<std::string>& strategies,
                                const scorer::ScoreOptions& options, int threads) {
  const auto t0 = Clock::now();
  auto sim = sim::Simulate(scenario, {.out_dir = dir, .seed = seed});
  if (!sim.ok()) return sim.status();
  const double simulate_seconds = SecondsSince(t0);
  auto run = DiagnoseAndScore(dir / "incident", sim->truth, strategies, options, threads);
  if (run.ok()) run->simulate_seconds = simulate_seconds;
  return run;
}

std::string CollectionShapeNames() {
  std::string names;
  for (const shapes::Shape& s : shapes::AllShapes()) (names += names.empty() ? "" : ", ") += s.name;
  return names;
}

int RunEval(const EvalArgs& args, std::ostream& out, std::ostream& err) {
  if (args.preflight) return RunPreflightEval(args, out, err);
  const auto t0 = Clock::now();
  if (auto st = CheckArgs(args); !st.ok()) return Fail(err, "eval", st);
  auto strategies = ResolveStrategies(args.strategies, args.baselines);
  if (!strategies.ok()) return Fail(err, "eval", strategies.status());
  Shard shard;
  if (!args.shard.empty()) {
    auto parsed = ParseShard(args.shard);
    if (!parsed.ok()) return Fail(err, "eval", parsed.status());
    shard = *parsed;
  }
  auto shape_list = shapes::ParseShapes(args.shapes);
  if (!shape_list.ok()) return Fail(err, "eval", shape_list.status());
  if (!shape_list->empty() &&
      std::find(strategies->begin(), strategies->end(), "engine") == strategies->end()) {
    return Fail(err, "eval", Status::InvalidArgument(
                                 "--shapes compares the engine's answers: add engine to --strategies"));
  }
  if (args.watch &&
      std::find(strategies->begin(), strategies->end(), "engine") == strategies->end()) {
    return Fail(
        err, "eval",
        Status::InvalidArgument("--watch scores the engine's answers: add engine to --strategies"));
  }
  std::vector<std::string> shape_names;
  for (const auto* s : *shape_list) shape_names.emplace_back(s->name);
  auto plan = PlanEval(args.scenarios, args.corpora, args.seeds);
  if (!plan.ok()) return Fail(err, "eval", plan.status());
  std::vector<EvalJob> jobs;
  for (size_t i = 0; i < plan->jobs.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) == shard.index) {
      jobs.push_back(plan->jobs[i]);
    }
  }
  // A drafted corpus entry's expected outcome is the engine's own answer until a person
  // confirms it (docs/freeze.md): it is scored, and said to be a draft.
  for (const EvalJob& j : jobs) {
    if (j.expected.corpus_entry().draft()) {
      err << "denpex eval: note: " << j.suite << "/" << j.id
          << ": expected.json is a draft (drafted by denpex freeze from the engine's own "
             "diagnosis; "
             "confirm or correct it with denpex freeze --confirm): its scores prove nothing yet\n";
    }
  }

  RunConfig cfg{.strategies = *strategies,
                .score = {.manual_triage_minutes = args.manual_triage_minutes},
                .work = args.work_dir.empty() ? ScratchRoot() : args.work_dir,
                .keep = !args.work_dir.empty(),
                .shapes = *shape_list};
  if (args.watch) {
    cfg.watch = WatchEvalOptions{.every_s = args.watch_every,
                                 .idle_s = args.watch_every_idle,
                                 .pace_untimed = args.watch_pace_untimed};
  }
  std::vector<JobOutcome> outcomes;
  {
    Progress progress(args.progress, err, jobs.size());
    outcomes = RunJobs(jobs, cfg, args.jobs, progress);
  }
  std::error_code ec;
  if (!cfg.keep) fs::remove_all(cfg.work, ec);

  v1::EvalReport report = BuildReport(outcomes, shape_names, plan->broken);
  auto* run = report.mutable_run();
  for (const auto& s : shape_names) run->add_shapes(s);
  for (const auto& in : plan->inputs) run->add_inputs(in);
  for (const auto& s : *strategies) run->add_strategies(s);
  run->set_seeds(args.seeds);
  if (!args.shard.empty()) run->set_shard(args.shard);
  run->set_jobs_total(static_cast<int>(plan->jobs.size()));
  run->set_jobs_run(static_cast<int>(jobs.size()));
  run->set_threads(tbb::task_arena(args.jobs > 0 ? args.jobs : tbb::task_arena::automatic)
                       .max_concurrency());
  run->set_manual_triage_minutes(args.manual_triage_minutes);
  run->set_wall_seconds(SecondsSince(t0));

  for (const auto& f : run->failures()) err << "denpex eval: " << f << "\n";
  out << scorer::RenderTable(report) << "\n";
  if (report.has_pilot()) out << scorer::RenderPilotTable(report) << "\n";
  if (!shape_names.empty()) out << "collection shapes (engine):\n" << scorer::RenderShapeTable(report) << "\n";
  if (args.watch) {
    const std::vector<v1::WatchResult> watched(report.watch_results().begin(),
                                               report.watch_results().end());
    out << "watch mode (engine; every " << args.watch_every << " s after new events, "
        << args.watch_every_idle << " s idle; files with no stamp "
        << (args.watch_pace_untimed ? "paced over the span" : "at the end") << "):\n"
        << RenderWatchTable(watched) << "\n";
  }
  out << "evaluated " << jobs.size() << " of " << plan->jobs.size() << " jobs with "
      << strategies->size() << " strategies"
      << (shape_names.empty() ? std::string() : " and " + std::to_string(shape_names.size()) + " shapes")
      << " in " << run->wall_seconds() << " s on "
      << run->threads() << " threads\n";
  if (auto st = WriteReports(report, args.json, args.markdown, args.html, args.corpora, out); !st.ok()) {
    return Fail(err, "eval", st);
  }
  if (!args.write_gate.empty()) {
    auto baseline = scorer::MakeGateBaseline(report, 0);
    baseline.set_suite(run->inputs().empty() ? "" : run->inputs(0));
    baseline.set_refresh(RefreshCommand(args));
    if (auto st = WriteOutput(args.write_gate, proto::ToJson(baseline) + "\n", out, args.corpora); !st.ok()) {
      return Fail(err, "eval", st);
    }
  }
  if (run->failures_size() > 0) return kExitBadInput;
  return ApplyGate(args.gate, report, out, err);
}

int RunEvalMerge(const EvalMergeArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<v1::EvalReport> shards(args.reports.size());
  for (size_t i = 0; i < args.reports.size(); ++i) {
    if (auto st = proto::ReadJsonFile(args.reports[i], &shards[i]); !st.ok()) {
      return Fail(err, "eval merge", st);
    }
  }
  auto merged = scorer::MergeReports(shards);
  if (!merged.ok()) return Fail(err, "eval merge", merged.status());
  out << scorer::RenderTable(*merged) << "\n";
  if (merged->has_pilot()) out << scorer::RenderPilotTable(*merged) << "\n";
  if (merged->shape_aggregates_size() > 0) {
    out << "collection shapes (engine):\n" << scorer::RenderShapeTable(*merged) << "\n";
  }
  if (merged->watch_results_size() > 0) {
    const std::vector<v1::WatchResult> watched(merged->watch_results().begin(),
                                               merged->watch_results().end());
    out << "watch mode (engine):\n" << RenderWatchTable(watched) << "\n";
  }
  out << "merged " << shards.size() << " reports: " << merged->run().jobs_run() << " of "
      << merged->run().jobs_total() << " jobs\n";
  if (merged->run().jobs_run() < merged->run().jobs_total()) {
    err << "denpex eval merge: warning: " << merged->run().jobs_total() - merged->run().jobs_run()
        << " jobs are in none of these reports; is a shard missing?\n";
  }
  if (auto st = WriteReports(*merged, args.out, args.markdown, args.html, {}, out); !st.ok()) {
    return Fail(err, "eval merge", st);
  }
  if (merged->run().failures_size() > 0) return kExitBadInput;
  return ApplyGate(args.gate, *merged, out, err);
}

}  // namespace denpex::cli
