#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <system_error>

#include "denpex/cli/commands.h"
#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "denpex/scorer/scorer.h"
#include "denpex/sim/simulator.h"
#include "eval_internal.h"

namespace denpex::cli {
namespace fs = std::filesystem;

namespace {
double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Expands directories into their *.textproto files, sorted, so runs are reproducible.
Result<std::vector<fs::path>> ExpandScenarioPaths(const std::vector<fs::path>& inputs) {
  std::vector<fs::path> out;
  for (const auto& p : inputs) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.path().extension() == ".textproto") found.push_back(e.path());
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) return Status::InvalidInput(p.string() + ": no *.textproto scenarios in this directory");
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      return Status::NotFound(p.string() + ": no such scenario file or directory");
    }
  }
  return out;
}
}  // namespace

Result<IncidentRun> RunIncident(const v1::Scenario& scenario, std::uint64_t seed,
                                const fs::path& dir, const std::vector<std::string>& strategies) {
  IncidentRun run;
  const auto t0 = std::chrono::steady_clock::now();
  auto sim = sim::Simulate(scenario, {.out_dir = dir, .seed = seed});
  if (!sim.ok()) return sim.status();
  run.simulate_seconds = SecondsSince(t0);
  run.truth = sim->truth;
  for (const auto& name : strategies) {
    auto strategy = engine::ParseStrategy(name);
    if (!strategy) return Status::InvalidArgument("unknown strategy '" + name + "'");
    const auto t1 = std::chrono::steady_clock::now();
    auto d = engine::Diagnose(dir / "incident", {.strategy = *strategy});
    if (!d.ok()) return d.status();
    const double secs = SecondsSince(t1);
    v1::IncidentScore score =
        scorer::ScoreIncident(run.truth, *d, {.diagnose_seconds = secs});
    run.diagnoses.push_back(std::move(*d));
    run.scores.push_back(std::move(score));
  }
  return run;
}

int RunEval(const EvalArgs& args, std::ostream& out, std::ostream& err) {
  if (args.seeds < 1) {
    err << "denpex eval: --seeds must be at least 1\n";
    return kExitUsage;
  }
  for (const auto& s : args.strategies) {
    if (!engine::ParseStrategy(s)) {
      err << "denpex eval: unknown strategy '" << s << "'\n";
      return kExitUsage;
    }
  }
  auto paths = ExpandScenarioPaths(args.scenarios);
  if (!paths.ok()) {
    err << "denpex eval: " << paths.status().message() << "\n";
    return ExitCodeFor(paths.status());
  }
  std::vector<v1::Scenario> scenarios;
  for (const auto& p : *paths) {
    auto sc = sim::LoadScenario(p);
    if (!sc.ok()) {
      err << sc.status().message() << "\n";
      return ExitCodeFor(sc.status());
    }
    scenarios.push_back(std::move(*sc));
  }

  std::error_code ec;
  fs::path work = args.work_dir;
  const bool temporary = work.empty();
  if (temporary) {
    std::random_device rd;
    work = fs::temp_directory_path() / ("denpex-eval-" + std::to_string(rd()));
  }
  fs::create_directories(work, ec);

  v1::EvalReport report;
  int failures = 0;
  for (const auto& sc : scenarios) {
    for (int i = 0; i < args.seeds; ++i) {
      const std::uint64_t seed = sc.seed() + static_cast<std::uint64_t>(i);
      const fs::path dir = work / sc.name() / ("seed-" + std::to_string(seed));
      auto run = RunIncident(sc, seed, dir, args.strategies);
      if (!run.ok()) {
        err << "denpex eval: " << sc.name() << " seed " << seed << ": " << run.status().message() << "\n";
        ++failures;
        continue;
      }
      for (auto& s : run->scores) *report.add_incidents() = s;
      out << "  " << sc.name() << " seed " << seed << ":";
      for (const auto& s : run->scores) {
        out << "  " << s.strategy() << "=" << (s.inconclusive() ? "inconclusive" : s.initiator_rank_correct() ? "right" : "wrong");
      }
      out << "\n" << std::flush;
      if (temporary) fs::remove_all(dir, ec);
    }
  }
  if (temporary) fs::remove_all(work, ec);

  std::vector<v1::IncidentScore> all(report.incidents().begin(), report.incidents().end());
  for (auto& a : scorer::Aggregate(all)) *report.add_aggregates() = std::move(a);
  out << "\n" << scorer::RenderTable(report);
  if (!args.json.empty()) {
    if (auto st = proto::WriteJsonFile(args.json, report); !st.ok()) {
      err << "denpex eval: " << st.message() << "\n";
      return ExitCodeFor(st);
    }
  }
  return failures == 0 ? kExitOk : kExitBadInput;
}

}  // namespace denpex::cli
