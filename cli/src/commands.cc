#include "denpex/cli/commands.h"

#include <chrono>
#include <iostream>
#include <system_error>

#include "denpex/engine/checkpoint.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/history.h"
#include "denpex/proto/json_io.h"
#include "denpex/scorer/scorer.h"
#include "denpex/sim/simulator.h"
#include "eval_internal.h"

namespace denpex::cli {
namespace fs = std::filesystem;

namespace {
int Fail(std::ostream& err, std::string_view cmd, const Status& st) {
  err << "denpex " << cmd << ": " << st.message() << "\n";
  return ExitCodeFor(st);
}

// True when `p` is `dir` or lies under it (after resolving what exists of both paths).
bool IsInside(const fs::path& p, const fs::path& dir) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(fs::absolute(p, ec), ec);
  const fs::path b = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return ib == b.end();
}
}  // namespace

int RunSimulate(const SimulateArgs& args, std::ostream& out, std::ostream& err) {
  auto scenario = sim::LoadScenario(args.scenario, args.overrides);
  if (!scenario.ok()) {
    err << scenario.status().message() << "\n";
    return ExitCodeFor(scenario.status());
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto result = sim::Simulate(*scenario, {.out_dir = args.out, .seed = args.seed});
  if (!result.ok()) return Fail(err, "simulate", result.status());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& s = result->stats;
  out << "simulated " << scenario->name() << " (seed " << result->truth.seed() << ", "
      << result->truth.job().world_size() << " ranks): " << s.events << " events, " << s.lines
      << " lines, " << s.bytes << " bytes in " << s.files << " files, " << secs << " s\n"
      << "  incident: " << (args.out / "incident").string() << "\n"
      << "  truth:    " << (args.out / "truth.json").string() << "\n";
  return kExitOk;
}

int RunDiagnose(const DiagnoseArgs& args, std::ostream& out, std::ostream& err) {
  auto strategy = engine::ParseStrategy(args.strategy);
  if (!strategy) {
    err << "denpex diagnose: unknown --strategy '" << args.strategy
        << "' (engine, first-error, loudest, elastic-root-cause, newest-checkpoint)\n";
    return kExitUsage;
  }
  if (!args.json.empty() && IsInside(args.json, args.incident)) {
    err << "denpex diagnose: refusing to write " << args.json.string()
        << " inside the incident directory; the engine never modifies an incident. "
           "Choose a --json path outside it.\n";
    return kExitUsage;
  }
  if (!args.json.empty() && !args.checkpoint_dir.empty() && IsInside(args.json, args.checkpoint_dir)) {
    err << "denpex diagnose: refusing to write " << args.json.string()
        << " inside the checkpoint directory; choose a --json path outside it.\n";
    return kExitUsage;
  }
  if (args.record_history && args.history.empty()) {
    err << "denpex diagnose: --record-history needs --history FILE (the store to append to)\n";
    return kExitUsage;
  }
  if (args.record_history && IsInside(args.history, args.incident)) {
    err << "denpex diagnose: refusing to write the history store " << args.history.string()
        << " inside the incident directory; the engine never modifies an incident. Keep the store outside it.\n";
    return kExitUsage;
  }
  auto d = engine::Diagnose(args.incident, {.strategy = *strategy,
                                            .threads = args.threads,
                                            .checkpoint_dir = args.checkpoint_dir,
                                            .control = args.control});
  if (!d.ok()) return Fail(err, "diagnose", d.status());
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
  out << engine::RenderText(*d);
  if (!args.json.empty()) {
    if (auto st = proto::WriteJsonFile(args.json, *d); !st.ok()) return Fail(err, "diagnose", st);
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
  out << scorer::RenderIncident(score);
  if (!args.json.empty()) {
    if (auto st = proto::WriteJsonFile(args.json, score); !st.ok()) return Fail(err, "score", st);
  }
  return kExitOk;
}

int RunCheckpointVerify(const CheckpointVerifyArgs& args, std::ostream& out, std::ostream& err) {
  engine::CheckpointOptions opts{.world_size = args.world_size,
                                 .dims = {.tp = args.tp, .pp = args.pp, .dp = args.dp},
                                 .deep_crc = args.deep};
  if (!args.not_after.empty()) {
    opts.not_after = ParseRfc3339(args.not_after);
    if (!opts.not_after) {
      err << "denpex checkpoint verify: --not-after '" << args.not_after
          << "' is not an RFC 3339 time (2026-03-02T09:17:03Z)\n";
      return kExitUsage;
    }
  }
  if (!args.json.empty() && IsInside(args.json, args.dir)) {
    err << "denpex checkpoint verify: refusing to write " << args.json.string()
        << " inside the checkpoint directory; the verifier never modifies it. "
           "Choose a --json path outside it.\n";
    return kExitUsage;
  }
  auto report = engine::VerifyCheckpointDir(args.dir, opts);
  if (!report.ok()) return Fail(err, "checkpoint verify", report.status());
  out << engine::RenderCheckpointText(*report);
  if (!args.json.empty()) {
    if (auto st = proto::WriteJsonFile(args.json, engine::ToProto(*report)); !st.ok()) {
      return Fail(err, "checkpoint verify", st);
    }
  }
  return kExitOk;
}

int RunDemo(const DemoArgs& args, std::ostream& out, std::ostream& err) {
  auto scenario = sim::ParseScenario(sim::DefaultScenarioText(), "<embedded default scenario>");
  if (!scenario.ok()) return Fail(err, "demo", scenario.status());
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
