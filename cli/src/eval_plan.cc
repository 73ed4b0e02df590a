// `denpex eval` planning: what to run. Inputs (scenario files, directories of scenarios,
// suite files, corpus directories) become one sorted list of jobs, so the report order and
// the shard a job falls in never depend on the order inputs were listed or on threads.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "denpex/sim/simulator.h"
#include "eval_internal.h"

namespace denpex::cli {
namespace fs = std::filesystem;
namespace pb = google::protobuf;

namespace {

constexpr std::string_view kSuiteSuffix = ".suite.textproto";

bool IsSuiteFile(const fs::path& p) {
  const std::string s = p.filename().string();
  return s.size() > kSuiteSuffix.size() && s.ends_with(kSuiteSuffix);
}

class FirstError : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (message_.empty()) message_ = std::to_string(line + 1) + ":" + std::to_string(column + 1) +
                                     ": " + message;
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

// The scenario files and the suite files of a directory, each sorted.
struct Listing {
  std::vector<fs::path> scenarios, suites;
};

Result<Listing> ListDirectory(const fs::path& dir) {
  Listing l;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".textproto") continue;
    (IsSuiteFile(e.path()) ? l.suites : l.scenarios).push_back(e.path());
  }
  if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  std::sort(l.scenarios.begin(), l.scenarios.end());
  std::sort(l.suites.begin(), l.suites.end());
  return l;
}

// One suite entry (or a path named on the command line) expanded into scenarios.
struct Expanded {
  std::vector<v1::Scenario> scenarios;
  double weight_each = 1;
};

Result<Expanded> ExpandEntry(const fs::path& path, const v1::SuiteEntry& entry) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    auto listed = ListDirectory(path);
    if (!listed.ok()) return listed.status();
    if (listed->scenarios.empty()) {
      return Status::InvalidInput(path.string() + ": no *.textproto scenarios in this directory");
    }
    files = std::move(listed->scenarios);
  } else if (fs::exists(path, ec)) {
    files.push_back(path);
  } else {
    return Status::NotFound(path.string() + ": no such scenario file or directory");
  }
  const std::vector<std::string> set(entry.set().begin(), entry.set().end());
  Expanded out;
  for (const auto& f : files) {
    auto sc = sim::LoadScenario(f, set);
    if (!sc.ok()) return sc.status();
    out.scenarios.push_back(std::move(*sc));
  }
  const double weight = entry.weight() > 0 ? entry.weight() : 1.0;
  out.weight_each = weight / static_cast<double>(files.size());
  return out;
}

std::string DefaultId(const v1::Scenario& sc, const v1::SuiteEntry& entry, bool one_file) {
  if (!entry.id().empty() && one_file) return entry.id();
  std::string id = entry.id().empty() ? sc.name() : entry.id() + "/" + sc.name();
  if (entry.set_size() > 0) {
    id += '@';
    id += std::to_string(sc.job().nodes() * sc.job().gpus_per_node());
  }
  return id;
}

struct Planner {
  int seeds = 1;
  EvalPlan plan;
  std::set<std::pair<std::string, std::string>> ids;  // (suite, id)

  Status AddScenarios(const std::string& suite, const fs::path& path,
                      const v1::SuiteEntry& entry, const std::string& where) {
    auto expanded = ExpandEntry(path, entry);
    if (!expanded.ok()) return expanded.status();
    for (auto& sc : expanded->scenarios) {
      const std::string id = DefaultId(sc, entry, expanded->scenarios.size() == 1);
      if (!ids.insert({suite, id}).second) {
        return Status::InvalidInput(where + ": incident '" + id + "' appears twice in suite '" +
                                    suite + "'; give one of them an `id`");
      }
      for (int i = 0; i < seeds; ++i) {
        EvalJob job{.suite = suite, .id = id, .weight = expanded->weight_each};
        job.seed = sc.seed() + static_cast<std::uint64_t>(i);
        job.scenario = sc;
        plan.jobs.push_back(std::move(job));
      }
    }
    return Status::Ok();
  }

  Status AddCorpus(const fs::path& dir) {
    std::error_code ec;
    std::vector<fs::path> incidents;
    std::vector<fs::path> without_incident;  // an expected.json with no incident/ beside it
    if (fs::is_directory(dir / "incident", ec)) {
      incidents.push_back(dir);
    } else {
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (fs::is_directory(e.path() / "incident", ec)) {
          incidents.push_back(e.path());
        } else if (fs::exists(e.path() / "expected.json", ec)) {
          without_incident.push_back(e.path());
        }
      }
      if (ec) return Status::NotFound(dir.string() + ": " + ec.message());
    }
    if (incidents.empty() && without_incident.empty()) {
      return Status::InvalidInput(dir.string() +
                                  ": no incident here (a corpus holds <id>/incident/ and "
                                  "<id>/expected.json; see docs/evaluation.md)");
    }
    fs::path name = dir.lexically_normal();
    if (name.filename().empty()) name = name.parent_path();  // "corpora/real/"
    const std::string suite = "corpus:" + name.filename().string();
    std::sort(without_incident.begin(), without_incident.end());
    for (const auto& e : without_incident) {
      plan.broken.push_back(suite + "/" + e.filename().string() +
                            ": skipped: " + (e / "incident").string() +
                            ": no such directory (an entry holds incident/ beside expected.json)");
    }
    std::sort(incidents.begin(), incidents.end());
    for (const auto& inc : incidents) {
      EvalJob job{.suite = suite, .id = inc.filename().string(), .corpus_dir = inc};
      if (!ids.insert({suite, job.id}).second) continue;  // same corpus named twice
      // A broken entry is reported and skipped; the rest of the corpus is scored.
      if (auto st = proto::ReadJsonFile(inc / "expected.json", &job.expected); !st.ok()) {
        plan.broken.push_back(suite + "/" + job.id + ": skipped: " + st.message());
        continue;
      }
      plan.jobs.push_back(std::move(job));
    }
    return Status::Ok();
  }

  // Weights are relative within a suite: scaled so that their mean over the suite's jobs
  // is 1, so a weighted suite counts as many incidents as it has in "overall".
  void NormalizeWeights(size_t first) {
    double total = 0;
    for (size_t i = first; i < plan.jobs.size(); ++i) total += plan.jobs[i].weight;
    if (total <= 0) return;
    const double scale = static_cast<double>(plan.jobs.size() - first) / total;
    for (size_t i = first; i < plan.jobs.size(); ++i) plan.jobs[i].weight *= scale;
  }

  // A command-line input: a suite file, a scenario file, or a directory, whose suites
  // run as suites and whose scenarios run under "cli".
  Status AddInput(const fs::path& in) {
    if (IsSuiteFile(in)) return AddSuite(in);
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      auto listed = ListDirectory(in);
      if (!listed.ok()) return listed.status();
      for (const auto& suite : listed->suites) DENPEX_RETURN_IF_ERROR(AddSuite(suite));
      if (!listed->suites.empty() && listed->scenarios.empty()) return Status::Ok();
    }
    return AddScenarios("cli", in, v1::SuiteEntry{}, in.string());
  }

  Status AddSuite(const fs::path& path) {
    auto suite = LoadSuite(path);
    if (!suite.ok()) return suite.status();
    const fs::path base = path.parent_path();
    const size_t first = plan.jobs.size();
    for (int i = 0; i < suite->scenarios_size(); ++i) {
      const auto& entry = suite->scenarios(i);
      const std::string where = path.string() + ": scenarios[" + std::to_string(i) + "]";
      DENPEX_RETURN_IF_ERROR(AddScenarios(suite->name(), base / entry.path(), entry, where));
    }
    NormalizeWeights(first);
    for (const auto& c : suite->corpora()) DENPEX_RETURN_IF_ERROR(AddCorpus(base / c));
    return Status::Ok();
  }
};

}  // namespace

Result<v1::Suite> LoadSuite(const fs::path& path) {
  auto text = proto::ReadFile(path, proto::kMaxTextprotoBytes, "a suite");
  if (!text.ok()) return text.status();
  v1::Suite suite;
  FirstError errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(*text, &suite)) {
    return Status::InvalidInput(path.string() + ":" + errors.message() +
                                "; hint: a suite is a denpex.v1.Suite textproto, see "
                                "docs/evaluation.md");
  }
  if (suite.name().empty()) {
    std::string stem = path.filename().string();
    suite.set_name(stem.substr(0, stem.size() - kSuiteSuffix.size()));
  }
  if (suite.scenarios_size() == 0 && suite.corpora_size() == 0) {
    return Status::InvalidInput(path.string() + ":1:1: the suite lists no scenarios and no corpora");
  }
  return suite;
}

Result<EvalPlan> PlanEval(const std::vector<fs::path>& inputs,
                          const std::vector<fs::path>& corpora, int seeds) {
  Planner p{.seeds = seeds};
  for (const auto& in : inputs) {
    p.plan.inputs.push_back(in.string());
    DENPEX_RETURN_IF_ERROR(p.AddInput(in));
  }
  for (const auto& c : corpora) {
    p.plan.inputs.push_back("--corpus " + c.string());
    DENPEX_RETURN_IF_ERROR(p.AddCorpus(c));
  }
  std::stable_sort(p.plan.jobs.begin(), p.plan.jobs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.suite, a.id, a.seed) < std::tie(b.suite, b.id, b.seed);
  });
  // The first incident of each suite gets a per-rank timeline (one more pass over its logs).
  for (size_t i = 0; i < p.plan.jobs.size(); ++i) {
    p.plan.jobs[i].rank_timeline = i == 0 || p.plan.jobs[i].suite != p.plan.jobs[i - 1].suite;
  }
  return std::move(p.plan);
}

Result<Shard> ParseShard(const std::string& text) {
  Shard s;
  char slash = 0;
  const auto bad = Status::InvalidArgument("--shard '" + text +
                                           "': expected I/N with 0 <= I < N, e.g. 0/8");
  if (std::sscanf(text.c_str(), "%d%c%d", &s.index, &slash, &s.count) != 3 || slash != '/') {
    return bad;
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) return bad;
  if (text != std::to_string(s.index) + "/" + std::to_string(s.count)) return bad;
  return s;
}

Result<std::vector<std::string>> ResolveStrategies(const std::vector<std::string>& asked,
                                                   bool baselines) {
  // Every strategy name the engine may know; those it does not (yet) know are skipped.
  constexpr std::array<const char*, 8> kCandidates = {
      "engine",   "first-error",  "loudest", "elastic-root-cause", "newest-checkpoint",
      "fr-trace", "fr-wavefront", "ras"};
  std::vector<std::string> known;
  for (const char* c : kCandidates) {
    if (engine::ParseStrategy(c)) known.emplace_back(c);
  }
  std::vector<std::string> out;
  for (const auto& s : asked) {
    if (!engine::ParseStrategy(s)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::InvalidArgument("unknown strategy '" + s + "' (known: " + list + ")");
    }
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  if (baselines) {
    for (const auto& k : known) {
      if (k != "engine" && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
  }
  return out;
}

}  // namespace denpex::cli
