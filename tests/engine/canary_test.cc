// `denpex canary`'s plan and judgement (denpex/engine/canary.h): the checks over two runs'
// training metrics and the canary's diagnoses, the drained nodes, the resume point, the
// placeholders, and the history store's canary records.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "denpex/engine/canary.h"
#include "denpex/engine/history_store.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;

struct Step {
  std::int64_t step;
  double loss;
  double seconds;
};

// A rank's steps as the metrics reader gives them, each cited on its own line of `file`.
TrainingSeries Series(std::int32_t rank, const std::vector<Step>& steps,
                      const std::string& file = "train.log") {
  TrainingSeries s{.rank = rank, .shape = TrainerShape::kKeyValue};
  std::uint32_t line = 10 * static_cast<std::uint32_t>(rank + 1);
  for (const Step& t : steps) {
    s.steps.push_back({.step = t.step,
                       .loss = t.loss,
                       .seconds_per_step = t.seconds,
                       .file = file,
                       .line = line++});
  }
  return s;
}

// Steps `from`..`to` at `seconds` each, the loss falling from `loss` by 0.1 a step.
std::vector<Step> Steps(std::int64_t from, std::int64_t to, double loss, double seconds) {
  std::vector<Step> v;
  for (std::int64_t i = from; i <= to; ++i)
    v.push_back({i, loss - 0.1 * static_cast<double>(i - from), seconds});
  return v;
}

v1::Diagnosis Killed(int rank, const std::string& node) {
  v1::Diagnosis d;
  d.set_verdict(v1::VERDICT_DIAGNOSED);
  d.mutable_initiator()->set_rank(rank);
  d.mutable_initiator()->set_node(node);
  d.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);
  d.set_reason(std::string("Rank ").append(std::to_string(rank)).append(" exited with SIGKILL."));
  auto* e = d.add_evidence();
  e->set_file("train.log");
  e->set_line(52);
  e->set_role(v1::EVIDENCE_ROLE_INITIATING);
  return d;
}

// The failed run: ranks 0 and 1 to step 12 at 0.1 s a step, loss 6.7 at step 10 (its checkpoint).
TrainingMetrics FailedRun() {
  TrainingMetrics m;
  m.series.push_back(Series(0, Steps(1, 12, 7.7, 0.1)));
  m.series.push_back(Series(1, Steps(1, 12, 7.8, 0.1)));
  return m;
}

const v1::CanaryCheck& Check(const v1::CanaryReport& r, const std::string& name) {
  for (const v1::CanaryCheck& c : r.checks()) {
    if (c.name() == name) return c;
  }
  static const v1::CanaryCheck none;
  ADD_FAILURE() << "no check " << name;
  return none;
}

v1::CanaryReport Judge(const TrainingMetrics& canary, std::vector<v1::Diagnosis> failures = {},
                       CanaryOptions o = {.steps = 5}) {
  const v1::Diagnosis d = Killed(1, "node-b");
  const TrainingMetrics failed = FailedRun();
  v1::CanaryReport r;
  JudgeCanary({.diagnosis = &d,
               .failed = &failed,
               .canary = &canary,
               .resume_step = 10,
               .failures = std::move(failures)},
              o, &r);
  return r;
}

TEST(Canary, GoesWhenEveryRankReachesItsStepsAtThePaceAndLossOfTheCheckpoint) {
  TrainingMetrics canary;
  canary.series.push_back(Series(0, Steps(11, 15, 6.6, 0.11), "console.log"));
  canary.series.push_back(Series(1, Steps(11, 15, 6.7, 0.11), "console.log"));
  const v1::CanaryReport r = Judge(canary);
  EXPECT_EQ(r.verdict(), v1::CANARY_GO) << RenderCanaryText(r);
  ASSERT_EQ(r.checks_size(), 5);
  for (const v1::CanaryCheck& c : r.checks())
    EXPECT_EQ(c.result(), v1::CANARY_CHECK_PASS) << c.name() << ": " << c.detail();
  EXPECT_DOUBLE_EQ(Check(r, "steps_reached").limit(), 15);
  EXPECT_DOUBLE_EQ(Check(r, "step_time").canary_value(), 0.11);
  EXPECT_DOUBLE_EQ(Check(r, "step_time").baseline_value(), 0.1);
  // rank 0's first loss against its own loss at step 10, each line cited
  EXPECT_DOUBLE_EQ(Check(r, "loss").canary_value(), 6.6);
  EXPECT_NEAR(Check(r, "loss").baseline_value(), 6.8, 1e-9);
  EXPECT_EQ(Check(r, "loss").canary_evidence(0), "console.log:10");
  EXPECT_EQ(Check(r, "loss").baseline_evidence(0), "train.log:19");
  EXPECT_EQ(Check(r, "failure").baseline_evidence(0), "train.log:52");
}

TEST(Canary, NoGoNamesTheRecurrenceWhenTheFailureOfTheSameClassComesBack) {
  TrainingMetrics canary;
  canary.series.push_back(Series(0, Steps(11, 12, 6.6, 0.1), "console.log"));
  canary.series.push_back(Series(1, Steps(11, 12, 6.7, 0.1), "console.log"));
  v1::Diagnosis again = Killed(1, "node-b");
  again.mutable_evidence(0)->set_file("console.log");
  again.mutable_evidence(0)->set_line(31);
  const v1::CanaryReport r = Judge(canary, {again});
  EXPECT_EQ(r.verdict(), v1::CANARY_NO_GO);
  EXPECT_EQ(Check(r, "steps_reached").result(), v1::CANARY_CHECK_FAIL);
  EXPECT_EQ(Check(r, "failure").result(), v1::CANARY_CHECK_FAIL);
  EXPECT_NE(Check(r, "failure").detail().find("signature recurred"), std::string::npos);
  EXPECT_NE(Check(r, "failure").detail().find("on the same rank"), std::string::npos);
  EXPECT_EQ(Check(r, "failure").canary_evidence(0), "console.log:31");
  EXPECT_NE(r.summary().find("signature recurred: SIGNAL_KILL of rank 1"), std::string::npos)
      << r.summary();
}

TEST(Canary, AnotherFailureIsNoGoButNotARecurrence) {
  TrainingMetrics canary;
  canary.series.push_back(Series(0, Steps(11, 15, 6.6, 0.1), "console.log"));
  canary.series.push_back(Series(1, Steps(11, 15, 6.7, 0.1), "console.log"));
  v1::Diagnosis other = Killed(0, "node-a");
  other.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  const v1::CanaryReport r = Judge(canary, {other});
  EXPECT_EQ(r.verdict(), v1::CANARY_NO_GO);
  EXPECT_NE(Check(r, "failure").detail().find("failed otherwise: PYTHON_EXCEPTION of rank 0"),
            std::string::npos)
      << Check(r, "failure").detail();
}

TEST(Canary, NoGoWhenTheStepTimeIsPastTheTolerance) {
  TrainingMetrics canary;
  canary.series.push_back(Series(0, Steps(11, 15, 6.6, 0.2), "console.log"));
  canary.series.push_back(Series(1, Steps(11, 15, 6.7, 0.2), "console.log"));
  v1::CanaryReport r = Judge(canary);
  EXPECT_EQ(r.verdict(), v1::CANARY_NO_GO);
  EXPECT_EQ(Check(r, "step_time").result(), v1::CANARY_CHECK_FAIL);
  EXPECT_DOUBLE_EQ(Check(r, "step_time").limit(), 0.125);
  // A tolerance of 100% lets twice the time pass.
  r = Judge(canary, {}, {.steps = 5, .step_time_tolerance = 1.0});
  EXPECT_EQ(Check(r, "step_time").result(), v1::CANARY_CHECK_PASS);
}

TEST(Canary, TheFirstStepAfterTheResumeIsNotTimed) {
  // Each rank's first step pays for the start (3 s); the others are at the baseline's pace.
  std::vector<Step> steps = Steps(11, 15, 6.6, 0.1);
  steps[0].seconds = 3;
  TrainingMetrics canary;
  canary.series.push_back(Series(0, steps, "console.log"));
  canary.series.push_back(Series(1, steps, "console.log"));
  EXPECT_EQ(Check(Judge(canary), "step_time").result(), v1::CANARY_CHECK_PASS);
}

TEST(Canary, NoGoWhenTheCommandStartedOverInsteadOfResuming) {
  TrainingMetrics canary;
  canary.series.push_back(Series(0, Steps(1, 15, 12.0, 0.1), "console.log"));
  canary.series.push_back(Series(1, Steps(1, 15, 12.1, 0.1), "console.log"));
  const v1::CanaryReport r = Judge(canary);
  EXPECT_EQ(r.verdict(), v1::CANARY_NO_GO);
  EXPECT_EQ(Check(r, "resumed").result(), v1::CANARY_CHECK_FAIL);
  EXPECT_NE(Check(r, "resumed").detail().find("did not resume"), std::string::npos);
  EXPECT_EQ(Check(r, "loss").result(), v1::CANARY_CHECK_FAIL);  // 12.0 against 6.8
}

TEST(Canary, ARankMissingFromTheCanaryFailsTheSteps) {
  TrainingMetrics canary;
  canary.series.push_back(Series(0, Steps(11, 15, 6.6, 0.1), "console.log"));
  const v1::CanaryReport r = Judge(canary);
  EXPECT_EQ(Check(r, "steps_reached").result(), v1::CANARY_CHECK_FAIL);
  EXPECT_NE(Check(r, "steps_reached").detail().find("(rank 1)"), std::string::npos);
  EXPECT_FALSE(CanaryReached(canary, CanaryRanks(FailedRun()), 15));
  canary.series.push_back(Series(1, Steps(11, 15, 6.7, 0.1), "console.log"));
  EXPECT_TRUE(CanaryReached(canary, CanaryRanks(FailedRun()), 15));
  EXPECT_FALSE(CanaryReached(canary, CanaryRanks(FailedRun()), 16));
}

TEST(Canary, AValueTheLinesDoNotGiveIsNoGoNotGo) {
  TrainingMetrics canary;
  std::vector<Step> steps = Steps(11, 15, 6.6, 0.1);
  canary.series.push_back(Series(0, steps, "console.log"));
  canary.series.push_back(Series(1, steps, "console.log"));
  for (TrainingSeries& s : canary.series) {
    for (TrainingStep& t : s.steps) t.seconds_per_step.reset();
  }
  const v1::CanaryReport r = Judge(canary);
  EXPECT_EQ(Check(r, "step_time").result(), v1::CANARY_CHECK_NOT_MEASURED);
  EXPECT_EQ(r.verdict(), v1::CANARY_NO_GO);
  EXPECT_NE(r.summary().find("not measured step_time"), std::string::npos) << r.summary();
}

TEST(Canary, NothingToJudgeWithoutAStepLineOrAFailure) {
  const v1::CanaryReport r = Judge(TrainingMetrics{});
  EXPECT_EQ(r.verdict(), v1::CANARY_NOT_JUDGED);
  ASSERT_GE(r.problems_size(), 1);
  EXPECT_NE(r.problems(0).find("no step line"), std::string::npos);
  // A failure seen before any step line is a no-go, not nothing.
  EXPECT_EQ(Judge(TrainingMetrics{}, {Killed(1, "node-b")}).verdict(), v1::CANARY_NO_GO);
}

TEST(Canary, DrainsTheNodesTheRecoveryDrainsAndNotAGpu) {
  v1::Diagnosis d;
  for (const auto& [action, target] : std::vector<std::pair<std::string, std::string>>{
           {"drain_node", "gpu-0043"},
           {"drain_and_rma", "gpu-0041 GPU 0000:3a:00"},
           {"drain_node", "gpu-0041"},
           {"drain_node", "gpu-0043"},
           {"restart_job", ""},
           {"run_canary", "gpu-0040"}}) {
    auto* p = d.mutable_recovery()->add_preconditions();
    p->set_action(action);
    p->set_target(target);
  }
  EXPECT_EQ(DrainedNodes(d), (std::vector<std::string>{"gpu-0041", "gpu-0043"}));
  EXPECT_EQ(CanaryNodes(d), (std::vector<std::string>{"gpu-0040"}));
}

TEST(Canary, SubstitutesThePlaceholdersAndLeavesOtherBraces) {
  const CanaryShape shape{.exclude = "gpu-[0041,0043]",
                          .nodes = "gpu-[0040,0042]",
                          .include = "gpu-0040",
                          .resume = {.checkpoint = "/ckpt/step_10.pt", .dir = "/ckpt", .step = 10},
                          .steps = 5,
                          .out = "/canary"};
  EXPECT_EQ(
      ExpandCanaryCommand({"srun", "--exclude={exclude}", "-w", "{nodes}", "train.py", "--resume",
                           "{checkpoint}", "--from={step}", "--steps", "{until}", "{json: {x}}",
                           "{out}/{steps}", "{", "-w{include}"},
                          shape),
      (std::vector<std::string>{"srun", "--exclude=gpu-[0041,0043]", "-w", "gpu-[0040,0042]",
                                "train.py", "--resume", "/ckpt/step_10.pt", "--from=10", "--steps",
                                "15", "{json: {x}}", "/canary/5", "{", "-wgpu-0040"}));
  bool found = false;
  for (const auto& [k, v] : CanaryEnvironment(shape)) {
    if (k == "DENPEX_RESUME_STEP") found = v == "10";
    if (k == "DENPEX_CANARY_INCLUDE") {
      EXPECT_EQ(v, "gpu-0040");
    }
  }
  EXPECT_TRUE(found);
}

TEST(Canary, ResumesFromTheDiagnosisCheckpointOrRefuses) {
  testing::TempDir dir;
  fs::create_directories(dir.path() / "incident/checkpoints");
  std::ofstream(dir.path() / "incident/checkpoints/step_10.pt") << "x";
  v1::Diagnosis d;
  auto* c = d.mutable_checkpoint();
  c->set_decision(v1::CHECKPOINT_DECISION_RESUME);
  c->set_dir("checkpoints");
  c->set_path("step_10.pt");
  c->set_step(10);
  auto r = FindResumePoint(d, dir.path() / "incident", "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->checkpoint, dir.path() / "incident/checkpoints/step_10.pt");
  EXPECT_EQ(r->step, 10);
  EXPECT_EQ(r->source, "diagnosis");

  c->set_path("step_15.pt");  // no longer there
  EXPECT_EQ(FindResumePoint(d, dir.path() / "incident", "").status().code(),
            StatusCode::kInvalidArgument);
  c->set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  const auto refused = FindResumePoint(d, dir.path() / "incident", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("give --checkpoint DIR"), std::string::npos);
}

TEST(Canary, TheHistoryStoreKeepsCanaryRecordsApartFromIncidents) {
  testing::TempDir dir;
  const fs::path store = dir.path() / "history.jsonl";
  std::ofstream(store)
      << R"({"time":"2026-02-11T04:12:09Z","node":"gpu-0044","failure_class":"FAILURE_CLASS_GPU_ECC","owner":"OWNER_GPU_HARDWARE","incident":"/fleet/1","action":"reset_gpu"})"
      << "\n";
  v1::CanaryReport report;
  report.set_incident("/fleet/1");
  report.set_out("/fleet/1-canary");
  report.set_verdict(v1::CANARY_NO_GO);
  v1::Diagnosis d = Killed(3, "gpu-0044");
  const v1::CanaryRecord record = CanaryHistoryRecord(report, d, 1'770'000'000'000'000'000);
  auto before = ReadHistory(store);
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(RecordCanary(store, *before, record, dir.path() / "incident").ok());
  auto after = ReadHistory(store);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->problems.empty()) << after->problems.front();
  ASSERT_EQ(after->entries.size(), 1u);  // the incident, as before
  ASSERT_EQ(after->canaries.size(), 1u);
  EXPECT_EQ(after->canaries[0].verdict(), v1::CANARY_NO_GO);
  EXPECT_EQ(after->canaries[0].node(), "gpu-0044");
  EXPECT_EQ(after->canaries[0].canary(), "/fleet/1-canary");
  // Recorded once.
  ASSERT_TRUE(RecordCanary(store, *after, record, dir.path() / "incident").ok());
  EXPECT_EQ(ReadHistory(store)->canaries.size(), 1u);
  // A canary never counts as an earlier incident of its node.
  d.mutable_initiator()->set_time("2027-01-01T00:00:00Z");
  ApplyHistory(*after, store.string(), "/fleet/2", &d);
  EXPECT_EQ(d.recurrence().node_incidents(), 1);
  // A canary's fields on a line without the kind are a bad line, named.
  std::ofstream(store, std::ios::app)
      << R"({"time":"2026-02-12T00:00:00Z","node":"gpu-0044","verdict":"CANARY_GO"})"
      << "\n";
  auto bad = ReadHistory(store);
  ASSERT_EQ(bad->problems.size(), 1u);
  EXPECT_NE(bad->problems[0].find(":3: "), std::string::npos) << bad->problems[0];
}

}  // namespace
}  // namespace denpex::engine
