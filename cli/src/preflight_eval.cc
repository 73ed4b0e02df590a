// `denpex eval --preflight SCENARIO... --seeds N` (docs/evaluation.md, "Preflight"): each
// preflight scenario simulated at each seed (sim/preflight.h), judged by `denpex preflight
// --from` (engine/preflight.h) and scored against its truth: were the faulty nodes failed, was
// a healthy node failed, was a slow link named on both ends.
#include "preflight_eval.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "denpex/engine/preflight.h"
#include "denpex/sim/preflight.h"
#include "eval_internal.h"
#include "progress.h"

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
  std::int64_t rounds = 0, all_pair_rounds = 0;  // the plan's (engine::PlanFabric), every pair's
  double seconds = 0;                            // preflight's own time
  std::string error;                             // the run could not be made
  std::string detail;                            // what was wrong, for the listing
  // Per collection shape (kShapes): the same report's exclude list and findings as from the
  // folders, and right by the truth.
  std::vector<std::pair<bool, bool>> shapes;
};

// How else a collection is handed over (docs/evaluation.md, "Preflight"): one file per tool of
// every node's lines under `host: ` (pdsh), or of each group of identical outputs under its
// hosts' list (dshbak -c / clush -b). The files directly in the collection stay as they are.
constexpr std::string_view kShapes[] = {"pdsh", "dshbak"};

// Each node folder's files, by their path inside the folder: node -> text.
std::map<std::string, std::map<std::string, std::string>> ByTool(const fs::path& collected,
                                                                 const fs::path& out) {
  std::map<std::string, std::map<std::string, std::string>> tools;
  std::error_code ec;
  fs::create_directories(out, ec);
  for (const auto& e : fs::directory_iterator(collected, ec)) {
    if (!e.is_directory()) {
      fs::copy_file(e.path(), out / e.path().filename(), ec);
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(e.path(), ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::ifstream in(it->path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      tools[it->path().lexically_relative(e.path()).generic_string()]
           [e.path().filename().string()] = text.str();
    }
  }
  return tools;
}

std::string FileName(std::string tool) {
  std::replace(tool.begin(), tool.end(), '/', '_');
  return tool;
}

void Relay(std::string_view shape, const fs::path& collected, const fs::path& out) {
  for (const auto& [tool, nodes] : ByTool(collected, out)) {
    std::ofstream file(out / (FileName(tool) + "." + std::string(shape)), std::ios::binary);
    if (shape == "pdsh") {
      for (const auto& [node, text] : nodes) {
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) file << node << ": " << line << "\n";
      }
      continue;
    }
    std::map<std::string, std::vector<std::string>> groups;  // text -> its nodes
    for (const auto& [node, text] : nodes) groups[text].push_back(node);
    for (const auto& [text, hosts] : groups) {
      file << "----------------\n"
           << engine::SlurmHostList(hosts) << " (" << hosts.size() << ")\n----------------\n"
           << text;
      if (!text.empty() && text.back() != '\n') file << "\n";
    }
  }
}

// What a shape must give the same of: the exclude list and each node's finding codes.
std::string Answer(const v1::PreflightReport& r) {
  std::string a = r.exclude() + "|";
  for (const auto& n : r.nodes()) {
    a += n.node() + ":";
    for (const auto& f : n.findings()) a += f.code() + (f.fail() ? "!" : "") + ",";
  }
  return a;
}

Outcome Score(const v1::PreflightTruth& truth, const v1::PreflightReport& report) {
  Outcome o;
  o.kind =
      truth.faults().empty() ? "HEALTHY" : truth.faults(0).substr(0, truth.faults(0).find(' '));
  o.probe_runs = truth.probe_runs();
  o.all_pair_runs = truth.all_pair_runs();
  o.nodes = report.nodes_size();
  // The simulated clusters' runs are the plan's: each node alone, then each with the next.
  std::vector<std::string> names(static_cast<std::size_t>(o.nodes));
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = std::to_string(i);
  o.rounds = static_cast<std::int64_t>(engine::PlanFabric(names, /*node_round=*/true).size());
  o.all_pair_rounds = 1 + engine::EveryPairCost(o.nodes).rounds;  // and the one-node round
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
  std::vector<std::string_view> shapes;
  for (const std::string& name : args.shapes) {
    if (name == "all") {
      shapes.assign(std::begin(kShapes), std::end(kShapes));
    } else if (std::find(std::begin(kShapes), std::end(kShapes), name) != std::end(kShapes)) {
      shapes.push_back(*std::find(std::begin(kShapes), std::end(kShapes), name));
    } else {
      return Fail(err, Status::InvalidArgument(
                           "--shapes " + name +
                           ": a preflight collection's shapes are pdsh, dshbak (or all)"));
    }
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
      for (std::string_view shape : shapes) {
        const fs::path copy = dir / std::string(shape);
        Relay(shape, dir / "collected", copy);
        auto again = engine::PreflightFrom(copy);
        const bool same = again.ok() && Answer(*again) == Answer(*report);
        const Outcome scored = again.ok() ? Score(*truth, *again) : Outcome{};
        o.shapes.emplace_back(same, again.ok() && scored.named && scored.false_fails == 0);
      }
    }
    if (args.work_dir.empty()) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  {
    // The jobs done so far on stderr, as `denpex eval` shows its own (progress.h).
    ProgressLine progress(ChooseProgress(args.progress), err, "denpex eval --preflight", "jobs",
                          jobs.size(), args.progress.interval_s);
    std::atomic<std::size_t> done{0};
    tbb::task_arena arena(args.jobs > 0 ? args.jobs : tbb::task_arena::automatic);
    arena.execute([&] {
      tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t j) {
        run(j);
        progress.Update(
            ++done, scenarios[jobs[j].scenario].name() + " seed " + std::to_string(jobs[j].seed));
      });
    });
  }
  if (args.work_dir.empty()) {
    std::error_code ec;
    fs::remove_all(work, ec);
  }

  // Per fault kind and scenario: runs, named, healthy nodes failed, probe runs against every pair.
  struct Row {
    int runs = 0, named = 0, errors = 0;
    std::int64_t false_fails = 0, nodes = 0, probe = 0, pairs = 0, rounds = 0, pair_rounds = 0;
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
      r->rounds += o.rounds;
      r->pair_rounds += o.all_pair_rounds;
      r->seconds = std::max(r->seconds, o.seconds);
    }
    if (!o.named || o.false_fails > 0)
      misses << "  " << name << " seed " << jobs[j].seed << ":" << o.detail << "\n";
  }
  out << "| fault (scenario) | clusters | nodes (mean) | named | healthy nodes failed | nccl-tests "
         "runs "
         "(mean) | every pair would be | probe rounds (mean) | every pair's rounds | slowest "
         "preflight s |\n"
      << "|---|---|---|---|---|---|---|---|---|---|\n";
  auto print = [&](const std::string& kind, const Row& r) {
    if (r.runs == 0) return;
    const double n = r.runs;
    out << "| " << kind << " | " << r.runs << " | " << Fixed(static_cast<double>(r.nodes) / n, 0)
        << " | " << r.named << "/" << r.runs << " (" << Fixed(100.0 * r.named / n, 1) << "%) | "
        << r.false_fails << " | " << Fixed(static_cast<double>(r.probe) / n, 0) << " | "
        << Fixed(static_cast<double>(r.pairs) / n, 0) << " | "
        << Fixed(static_cast<double>(r.rounds) / n, 1) << " | "
        << Fixed(static_cast<double>(r.pair_rounds) / n, 0) << " | " << Fixed(r.seconds, 2)
        << " |\n";
  };
  for (const auto& [kind, r] : rows) {
    if (kind != "(error)") print(kind, r);
  }
  print("all", all);
  if (!shapes.empty()) {
    out << "\n| shape | clusters | same answer as the folders | right |\n|---|---|---|---|\n";
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      int runs = 0, same = 0, right = 0;
      for (const Outcome& o : outcomes) {
        if (k >= o.shapes.size()) continue;
        ++runs, same += o.shapes[k].first, right += o.shapes[k].second;
      }
      out << "| " << shapes[k] << " | " << runs << " | " << same << "/" << runs << " | " << right
          << "/" << runs << " |\n";
    }
  }
  const std::string listed = misses.str();
  if (!listed.empty()) out << "not named, or a healthy node failed:\n" << listed;
  out << "preflight eval: " << jobs.size() << " clusters in "
      << Fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1)
      << " s\n";
  return all.errors > 0 ? kExitBadInput : kExitOk;
}

}  // namespace denpex::cli
