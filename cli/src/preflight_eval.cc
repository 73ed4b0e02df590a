// `denpex eval --preflight SCENARIO... --seeds N` (docs/evaluation.md, "Preflight"): each
// preflight scenario simulated at each seed (sim/preflight.h), judged by `denpex preflight
// --from` (engine/preflight.h) and scored against its truth: were the faulty nodes failed, was
// a healthy node failed, was a slow link named on both ends.
#include "preflight_eval.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "denpex/engine/preflight.h"
#include "denpex/sim/preflight.h"
#include "eval_internal.h"

namespace denpex::cli {
namespace {

namespace fs = std::filesystem;

int Fail(std::ostream& err, const Status& st) {
  err << "denpex eval --preflight: " << st.message() << "\n";
  return ExitCodeFor(st);
}

struct Job {
  std::size_t scenario;
  std::uint64_t seed;
};

// One simulated cluster's result.
struct Outcome {
  std::string kind;              // the injected fault's kind (`HEALTHY` for a control)
  bool named = false;            // every faulty node failed, every slow link named on both ends
  std::int32_t false_fails = 0;  // healthy nodes failed
  std::int32_t nodes = 0;
  std::int32_t probe_runs = 0;
  std::int64_t all_pair_runs = 0;
  double seconds = 0;  // preflight's own time
  std::string error;   // the run could not be made
  std::string detail;  // what was wrong, for the listing
};

Outcome Score(const v1::PreflightTruth& truth, const v1::PreflightReport& report) {
  Outcome o;
  o.kind =
      truth.faults().empty() ? "HEALTHY" : truth.faults(0).substr(0, truth.faults(0).find(' '));
  o.probe_runs = truth.probe_runs();
  o.all_pair_runs = truth.all_pair_runs();
  o.nodes = report.nodes_size();
  const std::set<std::string> bad(truth.bad_nodes().begin(), truth.bad_nodes().end());
  std::set<std::string> failed;
  std::map<std::string, std::set<std::string>> link_ends;  // `a<->b` -> the nodes that name it
  for (const auto& n : report.nodes()) {
    if (!n.pass()) failed.insert(n.node());
    for (const auto& f : n.findings()) {
      if (f.code() == "BUSBW_LOW" && !f.fail() && !f.device().empty())
        link_ends[f.device()].insert(n.node());
    }
  }
  bool links = true;
  for (const std::string& l : truth.bad_links()) links = links && link_ends[l].size() == 2;
  const bool all_bad = std::includes(failed.begin(), failed.end(), bad.begin(), bad.end());
  for (const std::string& f : failed) o.false_fails += bad.count(f) == 0;
  o.named = all_bad && links;
  if (!all_bad) o.detail += " missed " + engine::SlurmHostList({bad.begin(), bad.end()});
  if (!links) o.detail += " link not named";
  if (o.false_fails > 0) o.detail += " failed healthy " + report.exclude();
  return o;
}

std::vector<fs::path> ScenarioFiles(const std::vector<fs::path>& inputs, Status* st) {
  std::vector<fs::path> files;
  for (const fs::path& p : inputs) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.path().extension() == ".textproto") in_dir.push_back(e.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      if (in_dir.empty())
        *st = Status::InvalidInput(p.string() +
                                   ": no *.textproto preflight scenarios in this directory");
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int RunPreflightEval(const EvalArgs& args, std::ostream& out, std::ostream& err) {
  const auto t0 = std::chrono::steady_clock::now();
  Status st;
  const std::vector<fs::path> files = ScenarioFiles(args.scenarios, &st);
  if (!st.ok()) return Fail(err, st);
  if (files.empty()) {
    return Fail(err, Status::InvalidArgument(
                         "name preflight scenarios or a directory of them (scenarios/preflight)"));
  }
  std::vector<v1::PreflightScenario> scenarios;
  for (const fs::path& f : files) {
    auto s = sim::LoadPreflightScenario(f);
    if (!s.ok()) return Fail(err, s.status());
    scenarios.push_back(std::move(*s));
  }
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    for (int k = 0; k < args.seeds; ++k)
      jobs.push_back({i, scenarios[i].seed() + static_cast<std::uint64_t>(k)});
  }
  const fs::path work = args.work_dir.empty() ? ScratchRoot() : args.work_dir;
  std::vector<Outcome> outcomes(jobs.size());
  auto run = [&](std::size_t j) {
    const Job& job = jobs[j];
    const v1::PreflightScenario& s = scenarios[job.scenario];
    const fs::path dir = work / (s.name() + "_" + std::to_string(job.seed));
    Outcome& o = outcomes[j];
    auto truth = sim::SimulatePreflight(s, {.out_dir = dir, .seed = job.seed});
    if (!truth.ok()) {
      o.error = truth.status().message();
      return;
    }
    const auto p0 = std::chrono::steady_clock::now();
    auto report = engine::PreflightFrom(dir / "collected");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
    if (!report.ok()) {
      o.error = report.status().message();
    } else {
      o = Score(*truth, *report);
      o.seconds = seconds;
    }
    if (args.work_dir.empty()) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  tbb::task_arena arena(args.jobs > 0 ? args.jobs : tbb::task_arena::automatic);
  arena.execute(
      [&] { tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t j) { run(j); }); });
  if (args.work_dir.empty()) {
    std::error_code ec;
    fs::remove_all(work, ec);
  }

  // Per fault kind and scenario: runs, named, healthy nodes failed, probe runs against every pair.
  struct Row {
    int runs = 0, named = 0, errors = 0;
    std::int64_t false_fails = 0, nodes = 0, probe = 0, pairs = 0;
    double seconds = 0;
  };
  std::map<std::string, Row> rows;
  Row all;
  std::ostringstream misses;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Outcome& o = outcomes[j];
    const std::string& name = scenarios[jobs[j].scenario].name();
    if (!o.error.empty()) {
      misses << "  error " << name << " seed " << jobs[j].seed << ": " << o.error << "\n";
      ++rows["(error)"].errors, ++all.errors;
      continue;
    }
    for (Row* r : {&rows[o.kind + " (" + name + ")"], &all}) {
      ++r->runs;
      r->named += o.named;
      r->false_fails += o.false_fails;
      r->nodes += o.nodes;
      r->probe += o.probe_runs;
      r->pairs += o.all_pair_runs;
      r->seconds = std::max(r->seconds, o.seconds);
    }
    if (!o.named || o.false_fails > 0)
      misses << "  " << name << " seed " << jobs[j].seed << ":" << o.detail << "\n";
  }
  out << "| fault (scenario) | clusters | nodes (mean) | named | healthy nodes failed | nccl-tests "
         "runs "
         "(mean) | every pair would be | slowest preflight s |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  auto print = [&](const std::string& kind, const Row& r) {
    if (r.runs == 0) return;
    const double n = r.runs;
    out << "| " << kind << " | " << r.runs << " | " << Fixed(static_cast<double>(r.nodes) / n, 0)
        << " | " << r.named << "/" << r.runs << " (" << Fixed(100.0 * r.named / n, 1) << "%) | "
        << r.false_fails << " | " << Fixed(static_cast<double>(r.probe) / n, 0) << " | "
        << Fixed(static_cast<double>(r.pairs) / n, 0) << " | " << Fixed(r.seconds, 2) << " |\n";
  };
  for (const auto& [kind, r] : rows) {
    if (kind != "(error)") print(kind, r);
  }
  print("all", all);
  const std::string listed = misses.str();
  if (!listed.empty()) out << "not named, or a healthy node failed:\n" << listed;
  out << "preflight eval: " << jobs.size() << " clusters in "
      << Fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1)
      << " s\n";
  return all.errors > 0 ? kExitBadInput : kExitOk;
}

}  // namespace denpex::cli
