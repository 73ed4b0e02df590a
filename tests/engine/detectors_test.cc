// The detector table (analyze/detectors.h): its rows' names are unique and in the order
// docs/diagnosis_format.md §5 lists, and single rows run alone on small incidents answer (or
// not) as their place in the table says. The incidents are a torchrun job written by fixture.h
// and an srun job's slurm-<jobid>.out + slurmctld.log in the shapes of docs/log_formats.md
// §10-12b.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analyze/detectors.h"
#include "analyze/scope.h"
#include "fixture.h"
#include "ingest/attempts.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

// The incident as Diagnose hands it to the engine strategy: later attempts set aside, scoped.
Incident Load(const fs::path& dir) {
  auto inc = LoadIncident(dir, 1);
  EXPECT_TRUE(inc.ok()) << inc.status().message();
  if (!inc.ok()) return Incident{};
  SetAsideLaterAttempts(&*inc);
  ScopeToJob(&*inc);
  return std::move(*inc);
}

const FactsDetector& Before(std::string_view name) {
  for (const FactsDetector& d : DetectorsBeforeWaits()) {
    if (d.name == name) return d;
  }
  ADD_FAILURE() << "no row before the wait analysis is named " << name;
  return DetectorsBeforeWaits().front();
}

const AnalysisDetector& After(std::string_view name) {
  for (const AnalysisDetector& d : DetectorsAfterWaits()) {
    if (d.name == name) return d;
  }
  ADD_FAILURE() << "no row after the wait analysis is named " << name;
  return DetectorsAfterWaits().front();
}

// The name of the first row that answers, both phases as AnalyzeParticipation tries them.
std::string FirstAnswer(const Incident& inc) {
  JobFacts facts = CollectFacts(inc);
  for (const FactsDetector& d : DetectorsBeforeWaits()) {
    Finding f;
    if (d.diagnose(inc, facts, &f)) return std::string(d.name);
  }
  const Analysis a = BuildAnalysis(inc, std::move(facts), nullptr);
  for (const AnalysisDetector& d : DetectorsAfterWaits()) {
    Finding f;
    if (d.diagnose(a, &f)) return std::string(d.name);
  }
  return "";
}

std::vector<std::string> TableNames() {
  std::vector<std::string> names;
  for (const FactsDetector& d : DetectorsBeforeWaits()) names.emplace_back(d.name);
  for (const AnalysisDetector& d : DetectorsAfterWaits()) names.emplace_back(d.name);
  return names;
}

// The names docs/diagnosis_format.md lists in its paragraph on the detectors' order: every
// `lower_snake` token from the line that starts it to the next blank line.
std::vector<std::string> DocumentedNames() {
  std::ifstream in(std::string(DENPEX_SOURCE_DIR) + "/docs/diagnosis_format.md");
  std::string line, paragraph;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("The engine tries its detectors")) inside = true;
    if (inside && line.empty()) break;
    if (inside) paragraph += line + " ";
  }
  std::vector<std::string> names;
  const std::regex name("`([a-z]+(_[a-z]+)*)`");
  for (auto it = std::sregex_iterator(paragraph.begin(), paragraph.end(), name);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

TEST(Detectors, NamesAreUnique) {
  const std::vector<std::string> names = TableNames();
  const std::set<std::string> distinct(names.begin(), names.end());
  EXPECT_EQ(distinct.size(), names.size());
  for (const std::string& n : names) EXPECT_FALSE(n.empty());
}

TEST(Detectors, OrderIsTheOneTheDiagnosisFormatDocumentLists) {
  EXPECT_EQ(DocumentedNames(), TableNames());
}

TEST(Detectors, EveryIncidentGetsAnAnswerFromTheLastRow) {
  ASSERT_FALSE(DetectorsAfterWaits().empty());
  EXPECT_EQ(DetectorsAfterWaits().back().name, "undecided");
  EXPECT_EQ(DetectorsBeforeWaits().front().name, "scheduler_ended_job");
}

// "  [2026-03-02 09:MM:SS] iteration ..." for second `s` after 09:00:00 (Megatron, rank 23).
std::string Iteration(int s, int iteration) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "23:  [2026-03-02 09:%02d:%02d] iteration %8d/  100000 | consumed samples: %12d | elapsed "
      "time per "
      "iteration (ms): 2000.0 | learning rate: 1.500000E-06 | global batch size:    32 | lm loss: "
      "9.000000E+00 | loss scale: 1.0 | grad norm: 2.000 | number of skipped iterations:   0 | "
      "number of "
      "nan iterations:   0 |\n",
      s / 60, s % 60, iteration, iteration * 32);
  return buf;
}

// 3 nodes x 8 ranks under srun; slurmctld finds gpu-0002 not responding at 09:02:28 and sets
// it DOWN at 09:05:59; the ranks' last iteration line is at `last_second` after 09:00:00.
void WriteSrunIncident(const fs::path& dir, int last_second) {
  fs::create_directories(dir);
  std::ofstream out(dir / "slurm-4242001.out");
  int iteration = 0;
  for (int s = 10; s <= last_second; s += 2) out << Iteration(s, ++iteration);
  out << "srun: error: Node failure on gpu-0002\n"
         "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
         "slurmstepd: error: *** JOB 4242001 ON gpu-0001 CANCELLED AT 2026-03-02T09:05:59 DUE TO "
         "NODE FAILURE, SEE "
         "SLURMCTLD LOG FOR DETAILS ***\n"
         "srun: error: gpu-0001: tasks 0-7: Terminated\n"
         "srun: error: gpu-0003: tasks 16-23: Terminated\n";
  std::ofstream ctld(dir / "slurmctld.log");
  ctld << "[2026-03-02T09:00:00.014] sched: Allocate JobId=4242001 NodeList=gpu-[0001-0003] "
          "#CPUs=336 Partition=gpu\n"
          "[2026-03-02T09:02:28.428] error: Nodes gpu-0002 not responding\n"
          "[2026-03-02T09:05:59.834] error: Nodes gpu-0002 not responding, setting DOWN\n"
          "[2026-03-02T09:05:59.834] Killing JobId=4242001 on failed node gpu-0002\n"
          "[2026-03-02T09:06:00.581] _job_complete: JobId=4242001 WTERMSIG 15\n";
}

// Training went on past `not responding`: the scheduler's row before the wait analysis answers
// alone, with what the table's loop would add nothing to (restart advice included).
TEST(Detectors, SchedulerFailedNodeAnswersAloneWhenTrainingWentOnPastNotResponding) {
  TempDir tmp;
  WriteSrunIncident(tmp.path(), 340);
  const Incident inc = Load(tmp.path());
  const JobFacts facts = CollectFacts(inc);
  Finding f;
  ASSERT_TRUE(Before("scheduler_failed_node").diagnose(inc, facts, &f));
  EXPECT_EQ(f.failure_class, v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE);
  EXPECT_EQ(f.owner, v1::OWNER_SCHEDULER);
  EXPECT_EQ(f.rank, -1);
  ASSERT_GE(f.node, 0);
  EXPECT_EQ(inc.nodes[f.node], "gpu-0002");
  EXPECT_TRUE(std::any_of(f.recovery.begin(), f.recovery.end(),
                          [](const auto& p) { return p.action == "restart_job"; }));
  Finding other;
  EXPECT_FALSE(Before("scheduler_ended_job").diagnose(inc, facts, &other));
  EXPECT_FALSE(Before("job_wide_error").diagnose(inc, facts, &other));
  EXPECT_EQ(FirstAnswer(inc), "scheduler_failed_node");
}

// Progress stopped with the node: not the scheduler's doing, so no row before the wait analysis
// answers; `lost_node` names the node from the leaders it silenced and slurmctld's word.
TEST(Detectors, LostNodeNamesTheNodeProgressStoppedWith) {
  TempDir tmp;
  WriteSrunIncident(tmp.path(), 40);
  const Incident inc = Load(tmp.path());
  Finding none;
  EXPECT_FALSE(Before("scheduler_failed_node").diagnose(inc, CollectFacts(inc), &none));
  const Analysis a = BuildAnalysis(inc, CollectFacts(inc), nullptr);
  Finding f;
  ASSERT_TRUE(After("lost_node").diagnose(a, &f));
  EXPECT_EQ(f.failure_class, v1::FAILURE_CLASS_NODE_LOSS);
  EXPECT_EQ(f.owner, v1::OWNER_HOST);
  EXPECT_EQ(f.rank, -1);
  ASSERT_GE(f.node, 0);
  EXPECT_EQ(inc.nodes[f.node], "gpu-0002");
  EXPECT_EQ(FirstAnswer(inc), "lost_node");
}

// A torchrun job whose rank 3 was SIGKILLed: its agent's `failed` line makes it the clear leader.
TEST(Detectors, LeaderNamesTheRankItsAgentSawKilled) {
  TempDir tmp;
  testing::Incident spec;  // 4 nodes x 8, TP8 x PP2 x DP2
  spec.initiator = 3;
  testing::WriteIncident(tmp.path(), spec);
  const Incident inc = Load(tmp.path());
  const Analysis a = BuildAnalysis(inc, CollectFacts(inc), nullptr);
  ASSERT_FALSE(a.scores.empty());
  EXPECT_TRUE(a.leads);
  EXPECT_EQ(a.lost_node, -1);
  Finding f;
  ASSERT_TRUE(After("leader").diagnose(a, &f));
  EXPECT_EQ(f.verdict, v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.failure_class, v1::FAILURE_CLASS_SIGNAL_KILL);
  for (std::string_view row :
       {"lost_node", "no_candidate", "slow_port", "lost_agent", "step_straggler"}) {
    Finding other;
    EXPECT_FALSE(After(row).diagnose(a, &other)) << row;
  }
  EXPECT_EQ(FirstAnswer(inc), "leader");
}

// The same job hung instead (rank 3 alive and silent, no agent log to say more): the leader
// row still names it from the wait-for graph alone.
TEST(Detectors, LeaderNamesTheHungRankTheOthersWaitOn) {
  TempDir tmp;
  testing::Incident spec;
  spec.initiator = 3;
  spec.fault = testing::Fault::kHang;
  testing::WriteIncident(tmp.path(), spec);
  const Incident inc = Load(tmp.path());
  const Analysis a = BuildAnalysis(inc, CollectFacts(inc), nullptr);
  Finding f;
  ASSERT_TRUE(After("leader").diagnose(a, &f));
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.failure_class, v1::FAILURE_CLASS_HANG);
}

// `undecided`, the table's last row, answers whatever the scores: called alone on a clear
// leader it names the one rank that ties with itself as undecided.
TEST(Detectors, UndecidedAlwaysAnswers) {
  TempDir tmp;
  testing::Incident spec;
  testing::WriteIncident(tmp.path(), spec);
  const Incident inc = Load(tmp.path());
  const Analysis a = BuildAnalysis(inc, CollectFacts(inc), nullptr);
  Finding f;
  EXPECT_TRUE(After("undecided").diagnose(a, &f));
  EXPECT_EQ(f.verdict, v1::VERDICT_INCONCLUSIVE);
}

}  // namespace
}  // namespace denpex::engine
