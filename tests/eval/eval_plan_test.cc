// `denpex eval` planning (cli/src/eval_plan.cc): suites, directories, overrides, weights,
// corpora, shards and strategies, in process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <map>
#include <set>

#include <unistd.h>

#include "denpex/proto/json_io.h"
#include "denpex/sim/simulator.h"
#include "eval_internal.h"

namespace denpex::cli {
namespace {
namespace fs = std::filesystem;

const fs::path kSource = DENPEX_SOURCE_DIR;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("denpex-plan-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path Write(const std::string& name, const std::string& text) const {
    fs::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string Smoke(const std::string& file) { return (kSource / "scenarios/smoke" / file).string(); }

TEST(EvalPlan, JobsAreSortedBySuiteIncidentSeedWhateverTheInputOrder) {
  auto a = PlanEval({Smoke("sigkill_4096.textproto"), Smoke("sigkill_1024_debug.textproto")}, {}, 2);
  auto b = PlanEval({Smoke("sigkill_1024_debug.textproto"), Smoke("sigkill_4096.textproto")}, {}, 2);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->jobs.size(), 4u);
  for (size_t i = 0; i < a->jobs.size(); ++i) {
    EXPECT_EQ(a->jobs[i].id, b->jobs[i].id);
    EXPECT_EQ(a->jobs[i].seed, b->jobs[i].seed);
    EXPECT_EQ(a->jobs[i].suite, "cli");
  }
  EXPECT_EQ(a->jobs[0].id, "sigkill_1024_debug");
  EXPECT_EQ(a->jobs[1].seed, a->jobs[0].seed + 1);
}

TEST(EvalPlan, SuiteEntriesApplyOverridesWeightsAndIds) {
  TempDir tmp;
  const auto suite = tmp.Write("s.suite.textproto",
                               "name: \"mine\"\n"
                               "scenarios { path: \"" + Smoke("sigkill_4096.textproto") +
                                   "\" set: \"job.nodes=128\" set: \"job.dp=0\" weight: 3 }\n"
                                   "scenarios { path: \"" + (kSource / "scenarios/smoke").string() +
                                   "\" weight: 6 }\n");
  auto plan = PlanEval({suite}, {}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->jobs.size(), 4u);
  double total = 0;
  for (const auto& j : plan->jobs) {
    EXPECT_EQ(j.suite, "mine");
    total += j.weight;
  }
  // The directory's weight 6 is split over its 3 scenarios (2 each) against 3 for the
  // single entry; then scaled to a mean of 1 over the 4 jobs (x 4/9).
  EXPECT_DOUBLE_EQ(total, 4.0);
  EXPECT_EQ(plan->jobs.back().id, "sigkill_4096@1024");
  EXPECT_DOUBLE_EQ(plan->jobs.back().weight, 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(plan->jobs.front().weight, 8.0 / 9.0);
  EXPECT_EQ(plan->jobs.back().scenario->job().nodes(), 128);
}

TEST(EvalPlan, FirstIncidentOfEachSuiteGetsThePerRankTimeline) {
  auto plan = PlanEval({kSource / "scenarios/suites/families/hang.suite.textproto",
                        kSource / "scenarios/suites/smoke.suite.textproto"},
                       {}, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::map<std::string, int> marked;
  for (const auto& j : plan->jobs) marked[j.suite] += j.rank_timeline ? 1 : 0;
  EXPECT_EQ(marked, (std::map<std::string, int>{{"family-hang", 1}, {"smoke", 1}}));
  EXPECT_TRUE(plan->jobs.front().rank_timeline);
}

TEST(EvalPlan, DirectoryOfSuitesRunsEachSuiteUnderItsName) {
  auto plan = PlanEval({kSource / "scenarios/suites/families"}, {}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::set<std::string> suites;
  for (const auto& j : plan->jobs) suites.insert(j.suite);
  EXPECT_TRUE(suites.count("family-sigkill"));
  EXPECT_TRUE(suites.count("family-node-loss"));
  EXPECT_FALSE(suites.count("cli"));
}

TEST(EvalPlan, CommittedSuitesLoadAndCalibratedWeightsAreTheLlama3Counts) {
  for (const char* suite : {"smoke", "scale", "gate", "calibrated", "nccl_ras"}) {
    auto plan = PlanEval({kSource / "scenarios/suites" / (std::string(suite) + ".suite.textproto")},
                         {}, 1);
    EXPECT_TRUE(plan.ok()) << suite << ": " << plan.status().message();
  }
  auto calibrated = PlanEval({kSource / "scenarios/suites/calibrated.suite.textproto"}, {}, 1);
  ASSERT_TRUE(calibrated.ok());
  std::map<std::string, double> weight;
  double total = 0;
  for (const auto& j : calibrated->jobs) {
    weight[j.id] = j.weight;
    total += j.weight;
  }
  EXPECT_NEAR(total, static_cast<double>(calibrated->jobs.size()), 1e-9);  // mean weight 1
  // Relative weights are the Llama 3 counts split over each family's scenarios: exception
  // 54/3 + 2 over 3, hang 7 over 3, node loss under srun 32 over 2.
  EXPECT_NEAR(weight["exception_1024_torch113"] / weight["hang_1024_torchrun"], 20.0 / 7.0, 1e-6);
  EXPECT_NEAR(weight["node_loss_4096_srun"] / weight["hang_1024_torchrun"], 48.0 / 7.0, 1e-6);
  // GPU HBM3 + SRAM memory 72 + 19 on the one ECC scenario.
  EXPECT_NEAR(weight["xid_ecc_4096_srun_driver470"] / weight["hang_1024_torchrun"], 91.0 * 3.0 / 7.0, 1e-6);
  // Network Switch/Cable 35 + NIC 7 over the three NIC-failure scenarios.
  EXPECT_NEAR(weight["nic_failure_1024_torchrun"] / weight["hang_1024_torchrun"], 14.0 * 3.0 / 7.0, 1e-6);
}

TEST(EvalPlan, DuplicateIncidentInOneSuiteIsAnError) {
  TempDir tmp;
  const auto suite = tmp.Write("dup.suite.textproto",
                               "scenarios { path: \"" + Smoke("sigkill_4096.textproto") + "\" }\n"
                               "scenarios { path: \"" + Smoke("sigkill_4096.textproto") + "\" }\n");
  auto plan = PlanEval({suite}, {}, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("appears twice"), std::string::npos);
}

TEST(EvalPlan, SuiteSyntaxErrorNamesFileLineColumn) {
  TempDir tmp;
  const auto suite = tmp.Write("bad.suite.textproto", "name: \"x\"\nscenarios { pth: \"a\" }\n");
  auto loaded = LoadSuite(suite);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(suite.string() + ":2:"), std::string::npos)
      << loaded.status().message();
}

TEST(EvalPlan, SuiteNameDefaultsToFileStemAndEmptySuiteIsRejected) {
  TempDir tmp;
  auto named = LoadSuite(tmp.Write("nightly.suite.textproto", "corpora: \"c\"\n"));
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->name(), "nightly");
  EXPECT_FALSE(LoadSuite(tmp.Write("empty.suite.textproto", "name: \"e\"\n")).ok());
}

TEST(EvalPlan, MissingScenarioPathIsNotFound) {
  auto plan = PlanEval({"/nonexistent/denpex.textproto"}, {}, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kNotFound);
}

TEST(EvalPlan, CorpusDirectoriesBecomeOneJobPerIncident) {
  TempDir tmp;
  for (const char* id : {"b_exit", "a_kill"}) {
    fs::create_directories(tmp.path() / "real" / id / "incident");
    tmp.Write(std::string("real/") + id + "/expected.json",
              std::string("{\"scenario\": \"") + id + "\", \"verdict\": \"VERDICT_DIAGNOSED\"}");
  }
  auto plan = PlanEval({}, {tmp.path() / "real/"}, 5);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->jobs.size(), 2u);  // seeds do not apply to frozen incidents
  EXPECT_EQ(plan->jobs[0].suite, "corpus:real");
  EXPECT_EQ(plan->jobs[0].id, "a_kill");
  EXPECT_EQ(plan->jobs[0].expected.scenario(), "a_kill");
  EXPECT_FALSE(plan->jobs[0].scenario.has_value());
}

// A broken entry is reported (naming the file) and skipped; the rest of the corpus is planned.
TEST(EvalPlan, CorpusEntryWithMalformedOrMissingExpectedIsSkippedAndNamed) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "c/x/incident");
  tmp.Write("c/x/expected.json", "{\"no_such_field\": 1}");
  fs::create_directories(tmp.path() / "c/y/incident");  // no expected.json at all
  fs::create_directories(tmp.path() / "c/z/incident");
  tmp.Write("c/z/expected.json", "{\"scenario\": \"z\"}");
  tmp.Write("c/w/expected.json", "{\"scenario\": \"w\"}");  // no incident/ beside it
  fs::create_directories(tmp.path() / "c/notes");           // not an entry: left alone
  auto plan = PlanEval({}, {tmp.path() / "c"}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->jobs.size(), 1u);
  EXPECT_EQ(plan->jobs[0].id, "z");
  ASSERT_EQ(plan->broken.size(), 3u);
  EXPECT_EQ(plan->broken[0].rfind("corpus:c/w: skipped: ", 0), 0u) << plan->broken[0];
  EXPECT_NE(plan->broken[0].find("incident: no such directory"), std::string::npos);
  plan->broken.erase(plan->broken.begin());
  EXPECT_EQ(plan->broken[0].rfind("corpus:c/x: skipped: ", 0), 0u) << plan->broken[0];
  EXPECT_NE(plan->broken[0].find("expected.json"), std::string::npos);
  EXPECT_NE(plan->broken[0].find("no_such_field"), std::string::npos);
  EXPECT_EQ(plan->broken[1].rfind("corpus:c/y: skipped: ", 0), 0u) << plan->broken[1];
  EXPECT_NE(plan->broken[1].find("expected.json"), std::string::npos);
}

TEST(EvalShard, ParsesIndexOverCountAndRejectsTheRest) {
  auto s = ParseShard("3/8");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 8);
  for (const char* bad : {"8/8", "-1/4", "1/0", "1", "a/b", "1/2x", " 1/2"}) {
    EXPECT_FALSE(ParseShard(bad).ok()) << bad;
  }
}

TEST(EvalStrategies, UnknownStrategyListsTheKnownOnes) {
  auto r = ResolveStrategies({"engine", "no-such"}, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("known: engine, first-error"), std::string::npos)
      << r.status().message();
}

TEST(EvalStrategies, BaselinesAddEveryKnownBaselineOnceAfterTheAskedOnes) {
  auto r = ResolveStrategies({"engine", "first-error"}, true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0], "engine");
  EXPECT_EQ(std::count(r->begin(), r->end(), "first-error"), 1);
  auto only = ResolveStrategies({"engine"}, true);
  ASSERT_TRUE(only.ok());
  EXPECT_GE(only->size(), 2u);
}

}  // namespace
}  // namespace denpex::cli

namespace denpex::cli {
namespace {

// The harness reads a history store beside the incident (what a scenario's `history` makes the
// simulator write) and applies it to every strategy before scoring: the engine's recurrence is
// scored against the truth's, a strategy that names no owner never escalates.
TEST(EvalHistory, TheStoreBesideTheIncidentIsReadAndRecurrenceScored) {
  const std::string text = R"(name: "h"
seed: 3
job { nodes: 3 tp: 4 pp: 2 }
training { warmup_steps: 3 }
faults { kind: FAULT_KIND_XID_ECC rank: 5 }
history { target: HISTORY_TARGET_SAME_GPU days_before: 9 }
history { target: HISTORY_TARGET_OTHER_NODE }
)";
  auto scenario = sim::ParseScenario(text, "h.textproto");
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("eval_history_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto run = RunIncident(*scenario, 3, dir, {"engine", "elastic-root-cause"});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_TRUE(std::filesystem::exists(dir / kHistoryStore));
  ASSERT_EQ(run->scores.size(), 2u);
  ASSERT_TRUE(run->scores[0].has_recurrence_correct());
  EXPECT_TRUE(run->scores[0].recurrence_correct());
  EXPECT_TRUE(run->diagnoses[0].recurrence().escalated());
  EXPECT_EQ(run->diagnoses[0].recovery().preconditions(0).action(), "drain_and_rma");
  EXPECT_FALSE(run->diagnoses[1].recurrence().escalated());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace denpex::cli
