// Aggregation per strategy and group, report order, shard merging and the regression gate.
#include <gtest/gtest.h>

#include <algorithm>

#include "denpex/scorer/scorer.h"
#include "fixtures.h"

namespace denpex::scorer {
namespace {
using testing::Diagnosed;
using testing::Resume;
using testing::SigkillTruth;
using testing::WithCheckpoints;

// Four engine scores (three right) and four baseline scores (all wrong).
std::vector<v1::IncidentScore> EngineAndBaseline() {
  std::vector<v1::IncidentScore> scores;
  for (int i = 0; i < 4; ++i) {
    v1::Truth t = SigkillTruth();
    t.set_seed(i);
    scores.push_back(ScoreIncident(t, Diagnosed(i < 3 ? 1091 : 5, "gpu-0137")));
    scores.push_back(ScoreIncident(t, Diagnosed(7, "gpu-0001", "first-error")));
  }
  return scores;
}

const v1::AggregateScore* Find(const std::vector<v1::AggregateScore>& agg,
                               const std::string& strategy, const std::string& group) {
  for (const auto& g : agg) {
    if (g.strategy() == strategy && g.group() == group) return &g;
  }
  return nullptr;
}

TEST(ScorerAggregate, GroupsPerStrategyWithOverallFirstThenFamilyLauncherScale) {
  const auto agg = Aggregate(EngineAndBaseline());
  ASSERT_EQ(agg.size(), 8u);
  const std::vector<std::string> groups = {"overall", "family:sigkill", "launcher:torchrun",
                                           "scale:2k-4k"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(agg[i].strategy(), "engine");
    EXPECT_EQ(agg[i].group(), groups[i]);
    EXPECT_EQ(agg[i + 4].strategy(), "first-error");
  }
  EXPECT_DOUBLE_EQ(agg[0].initiator_rank_top1(), 0.75);
  EXPECT_DOUBLE_EQ(agg[0].coverage(), 1.0);
  EXPECT_DOUBLE_EQ(agg[4].initiator_rank_top1(), 0.0);
}

TEST(ScorerAggregate, ScaleBucketsSortBySizeNotByName) {
  std::vector<v1::IncidentScore> scores;
  for (int world : {131072, 16384, 4, 1024, 4096}) {
    v1::Truth t = SigkillTruth();
    t.mutable_job()->set_world_size(world);
    scores.push_back(ScoreIncident(t, Diagnosed(1091, "gpu-0137")));
  }
  std::vector<std::string> scales;
  for (const auto& g : Aggregate(scores)) {
    if (g.group().rfind("scale:", 0) == 0) scales.push_back(g.group());
  }
  EXPECT_EQ(scales, (std::vector<std::string>{"scale:<1k", "scale:1k", "scale:2k-4k",
                                              "scale:8k-16k", "scale:32k+"}));
}

TEST(ScorerAggregate, SuiteWeightsWeighTheMeans) {
  auto right = ScoreIncident(SigkillTruth(), Diagnosed(1091, "gpu-0137"));
  auto wrong = ScoreIncident(SigkillTruth(), Diagnosed(5, "gpu-0001"));
  right.set_weight(3);
  wrong.set_weight(1);
  right.set_suite("calibrated");
  wrong.set_suite("calibrated");
  const auto agg = Aggregate({right, wrong});
  const auto* suite = Find(agg, "engine", "suite:calibrated");
  ASSERT_NE(suite, nullptr);
  EXPECT_DOUBLE_EQ(suite->initiator_rank_top1(), 0.75);
  EXPECT_DOUBLE_EQ(suite->weight(), 4.0);
  EXPECT_EQ(suite->incidents(), 2);
}

TEST(ScorerAggregate, AbstentionCoverageAndPrecisionWhenCommitted) {
  auto right = ScoreIncident(SigkillTruth(), Diagnosed(1091, "gpu-0137"));
  auto wrong = ScoreIncident(SigkillTruth(), Diagnosed(5, "gpu-0001"));
  v1::Diagnosis abstain = Diagnosed(1091, "gpu-0137");
  abstain.set_verdict(v1::VERDICT_INCONCLUSIVE);
  auto inconclusive = ScoreIncident(SigkillTruth(), abstain);
  const auto agg = Aggregate({right, wrong, inconclusive, inconclusive});
  EXPECT_EQ(agg[0].committed(), 2);
  EXPECT_DOUBLE_EQ(agg[0].coverage(), 0.5);
  EXPECT_DOUBLE_EQ(agg[0].precision_committed(), 0.5);
  EXPECT_DOUBLE_EQ(agg[0].initiator_rank_top1(), 0.25);
}

TEST(ScorerAggregate, MetricsThatApplyToSomeIncidentsAverageOverThoseOnly) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Resume(&d, "step_10.pt", 10);
  d.mutable_cascade()->set_grouped_errors(50);
  const auto with_ckpt = ScoreIncident(WithCheckpoints(SigkillTruth()), d);
  v1::Truth plain = SigkillTruth();
  plain.mutable_cascade()->set_secondary_errors(0);
  const auto without = ScoreIncident(plain, d);
  const auto agg = Aggregate({with_ckpt, without});
  EXPECT_EQ(agg[0].checkpoint_incidents(), 1);
  EXPECT_DOUBLE_EQ(agg[0].checkpoint_accuracy(), 1.0);
  EXPECT_EQ(agg[0].cascade_incidents(), 1);
  EXPECT_DOUBLE_EQ(agg[0].cascade_compression(), 0.5);
  EXPECT_EQ(agg[0].timed_incidents(), 2);
  EXPECT_EQ(agg[0].checkpoint_resume_incidents(), 1);
  EXPECT_DOUBLE_EQ(agg[0].checkpoint_newest_safe_rate(), 1.0);
  EXPECT_EQ(agg[0].checkpoint_unsafe_resumes(), 0);
  EXPECT_EQ(agg[0].checkpoint_rewind_compared(), 0);  // no baseline: nothing compared
}

// Evidence precision averages over the committed incidents where it is defined: an answer with
// no initiating line for a truth with none (a lost host) is left out, not counted as 0 or 1.
TEST(ScorerAggregate, PrecisionLeavesOutIncidentsWhereItIsUndefined) {
  v1::Diagnosis cites = Diagnosed(1091, "gpu-0137");
  testing::Cite(&cites, "gpu-0137/torchrun.log", 12, v1::EVIDENCE_ROLE_INITIATING);
  v1::Diagnosis wrong = Diagnosed(1091, "gpu-0137");
  testing::Cite(&wrong, "gpu-0001/rank_0.log", 3, v1::EVIDENCE_ROLE_INITIATING);
  v1::Truth silent = SigkillTruth();
  silent.clear_evidence();
  const auto agg = Aggregate({ScoreIncident(SigkillTruth(), cites), ScoreIncident(SigkillTruth(), wrong),
                              ScoreIncident(silent, Diagnosed(1091, "gpu-0137"))});
  EXPECT_EQ(agg[0].committed(), 3);
  EXPECT_EQ(agg[0].precision_incidents(), 2);
  EXPECT_DOUBLE_EQ(agg[0].evidence_precision(), 0.5);
}

TEST(ScorerAggregate, CheckpointCountsUnsafeResumesAndRewindAvoided) {
  const v1::Truth t = WithCheckpoints(SigkillTruth());
  v1::Diagnosis engine = Diagnosed(1091, "gpu-0137");
  Resume(&engine, "step_10.pt", 10);
  v1::Diagnosis blind = Diagnosed(1091, "gpu-0137", "newest-checkpoint");
  Resume(&blind, "step_15.pt", 15);
  std::vector<v1::IncidentScore> scores = {ScoreIncident(t, engine), ScoreIncident(t, blind)};
  CompareCheckpointRewind(&scores);
  const auto agg = Aggregate(scores);
  ASSERT_EQ(agg[0].strategy(), "engine");
  EXPECT_EQ(agg[0].checkpoint_unsafe_resumes(), 0);
  EXPECT_DOUBLE_EQ(agg[0].checkpoint_rewind_avoided(), 10);
  EXPECT_EQ(agg[0].checkpoint_rewind_compared(), 1);
  const auto base = std::find_if(agg.begin(), agg.end(), [](const auto& a) {
    return a.strategy() == "newest-checkpoint" && a.group() == "overall";
  });
  ASSERT_NE(base, agg.end());
  EXPECT_EQ(base->checkpoint_unsafe_resumes(), 1);
  EXPECT_DOUBLE_EQ(base->checkpoint_newest_safe_rate(), 0.0);
}

TEST(ScorerAggregate, AggregateOfNothingIsEmpty) { EXPECT_TRUE(Aggregate({}).empty()); }

TEST(ScorerRender, TableShowsEachGroupWithStrategiesSideBySide) {
  v1::EvalReport report;
  for (const auto& a : Aggregate(EngineAndBaseline())) *report.add_aggregates() = a;
  const std::string table = RenderTable(report);
  const auto engine = table.find("| overall              | engine");
  const auto baseline = table.find("| overall              | first-error");
  ASSERT_NE(engine, std::string::npos) << table;
  ASSERT_NE(baseline, std::string::npos) << table;
  EXPECT_LT(baseline, table.find("family:sigkill")) << table;
  EXPECT_NE(table.find(" 75.0%"), std::string::npos);
}

v1::EvalReport ReportOf(std::vector<v1::IncidentScore> scores) {
  v1::EvalReport r;
  r.mutable_run()->add_strategies("engine");
  r.mutable_run()->add_strategies("first-error");
  r.mutable_run()->set_jobs_total(4);
  r.mutable_run()->set_jobs_run(static_cast<int>(scores.size() / 2));
  SortIncidents({"engine", "first-error"}, &scores);
  for (const auto& s : scores) *r.add_incidents() = s;
  for (const auto& a : Aggregate(scores)) *r.add_aggregates() = a;
  return r;
}

TEST(ScorerMerge, MergedShardsEqualTheWholeRun) {
  auto all = EngineAndBaseline();
  std::vector<v1::IncidentScore> even, odd;
  for (const auto& s : all) (s.seed() % 2 ? odd : even).push_back(s);
  auto merged = MergeReports({ReportOf(odd), ReportOf(even)});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const auto whole = ReportOf(all);
  ASSERT_EQ(merged->incidents_size(), whole.incidents_size());
  for (int i = 0; i < whole.incidents_size(); ++i) {
    EXPECT_EQ(merged->incidents(i).SerializeAsString(), whole.incidents(i).SerializeAsString());
  }
  ASSERT_EQ(merged->aggregates_size(), whole.aggregates_size());
  EXPECT_EQ(merged->run().jobs_run(), 4);
  EXPECT_EQ(merged->run().shards_merged(), 2);
}

TEST(ScorerMerge, SameShardTwiceIsRejected) {
  const auto r = ReportOf(EngineAndBaseline());
  const auto merged = MergeReports({r, r});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("given twice"), std::string::npos);
}

TEST(ScorerMerge, DifferentStrategiesAreRejected) {
  auto a = ReportOf(EngineAndBaseline());
  v1::EvalReport b;
  b.mutable_run()->add_strategies("engine");
  EXPECT_FALSE(MergeReports({a, b}).ok());
  EXPECT_FALSE(MergeReports({}).ok());
}

TEST(ScorerGate, UnchangedReportPassesAndADropFails) {
  const auto report = ReportOf(EngineAndBaseline());
  const auto baseline = MakeGateBaseline(report, 0.01);
  ASSERT_GT(baseline.metrics_size(), 0);
  for (const auto& m : baseline.metrics()) EXPECT_EQ(m.strategy(), "engine");
  EXPECT_TRUE(CheckGate(baseline, report).empty());

  auto worse = EngineAndBaseline();
  worse[0] = ScoreIncident(SigkillTruth(), Diagnosed(5, "gpu-0001"));  // engine now wrong
  const auto failures = CheckGate(baseline, ReportOf(worse));
  ASSERT_FALSE(failures.empty());
  EXPECT_NE(failures[0].find("engine overall initiator_rank_top1: 0.7500 -> 0.5000"),
            std::string::npos)
      << failures[0];
}

TEST(ScorerGate, LowerIsBetterMetricsFailWhenTheyRise) {
  v1::GateBaseline b;
  auto* m = b.add_metrics();
  m->set_strategy("engine");
  m->set_group("overall");
  m->set_metric("checkpoint_unsafe_rate");
  m->set_value(0.0);
  m->set_lower_is_better(true);
  v1::EvalReport r;
  auto* g = r.add_aggregates();
  g->set_strategy("engine");
  g->set_group("overall");
  g->set_checkpoint_incidents(5);  // the metric applies
  g->set_checkpoint_unsafe_rate(0.2);
  EXPECT_EQ(CheckGate(b, r).size(), 1u);
  g->set_checkpoint_unsafe_rate(0.0);
  EXPECT_TRUE(CheckGate(b, r).empty());
}

// A metric that applies to no incident of a group now (evidence precision where it is undefined
// everywhere) is not a drop; once it applies again it is compared.
TEST(ScorerGate, MetricThatNoLongerAppliesIsNotADrop) {
  v1::GateBaseline b;
  auto* m = b.add_metrics();
  m->set_strategy("engine");
  m->set_group("family:node_loss");
  m->set_metric("evidence_precision");
  m->set_value(0.9);
  v1::EvalReport r;
  auto* g = r.add_aggregates();
  g->set_strategy("engine");
  g->set_group("family:node_loss");
  g->set_committed(3);
  EXPECT_TRUE(CheckGate(b, r).empty());
  g->set_precision_incidents(1);
  EXPECT_EQ(CheckGate(b, r).size(), 1u);
}

TEST(ScorerGate, MissingGroupOrUnknownMetricFails) {
  v1::GateBaseline b;
  auto* m = b.add_metrics();
  m->set_strategy("engine");
  m->set_group("family:hang");
  m->set_metric("initiator_rank_top1");
  EXPECT_EQ(CheckGate(b, ReportOf(EngineAndBaseline())).size(), 1u);
  m->set_group("overall");
  m->set_metric("no_such_metric");
  EXPECT_EQ(CheckGate(b, ReportOf(EngineAndBaseline())).size(), 1u);
}

}  // namespace
TEST(ScorerMerge, ShapeResultsAreJoinedAndTheirAggregatesRecomputed) {
  auto shard = [](std::uint64_t seed, v1::ShapeOutcome o) {
    v1::EvalReport r = ReportOf({});
    r.mutable_run()->add_shapes("merged");
    r.mutable_run()->add_shapes("cri");
    for (const char* shape : {"cri", "merged"}) {
      auto* x = r.add_shape_results();
      x->set_suite("s");
      x->set_incident("i");
      x->set_seed(seed);
      x->set_shape(shape);
      x->set_outcome(o);
    }
    return r;
  };
  auto merged = MergeReports({shard(2, v1::SHAPE_OUTCOME_WRONG), shard(1, v1::SHAPE_OUTCOME_SAME)});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_EQ(merged->shape_results_size(), 4);
  EXPECT_EQ(merged->shape_results(0).seed(), 1u);
  EXPECT_EQ(merged->shape_results(0).shape(), "merged");  // the asked order, not the names'
  ASSERT_EQ(merged->shape_aggregates_size(), 2);
  EXPECT_EQ(merged->shape_aggregates(0).shape(), "merged");
  EXPECT_EQ(merged->shape_aggregates(1).pairs(), 2);
  EXPECT_DOUBLE_EQ(merged->shape_aggregates(1).wrong_share(), 0.5);
}

}  // namespace denpex::scorer
