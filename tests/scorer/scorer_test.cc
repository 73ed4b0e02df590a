#include "denpex/scorer/scorer.h"

#include <gtest/gtest.h>

namespace denpex::scorer {
namespace {

v1::Truth SigkillTruth() {
  v1::Truth t;
  t.set_scenario("sigkill");
  t.set_seed(7);
  t.set_verdict(v1::VERDICT_DIAGNOSED);
  t.mutable_initiator()->set_rank(1091);
  t.mutable_initiator()->set_node("gpu-0137");
  t.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);
  t.set_owner(v1::OWNER_UNKNOWN);
  auto* e = t.add_evidence();
  e->set_file("gpu-0137/torchrun.log");
  e->set_line(12);
  auto* e2 = t.add_evidence();
  e2->set_file("gpu-0137/torchrun.log");
  e2->set_line(40);
  t.add_events()->set_kind("FAULT_KIND_SIGKILL");
  t.mutable_job()->set_world_size(4096);
  return t;
}

v1::Diagnosis Diagnosed(int rank, const std::string& node) {
  v1::Diagnosis d;
  d.set_strategy("engine");
  d.set_verdict(v1::VERDICT_DIAGNOSED);
  d.mutable_initiator()->set_rank(rank);
  d.mutable_initiator()->set_node(node);
  d.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);
  d.set_owner(v1::OWNER_UNKNOWN);
  auto* c = d.add_candidates();
  c->set_rank(rank);
  c->set_node(node);
  return d;
}

void Cite(v1::Diagnosis* d, const std::string& file, int line, v1::EvidenceRole role) {
  auto* e = d->add_evidence();
  e->set_file(file);
  e->set_line(line);
  e->set_role(role);
}

TEST(Scorer, RightInitiatorScoresEveryField) {
  v1::Diagnosis d = Diagnosed(1091, "GPU-0137");  // node names compare case-insensitively
  Cite(&d, "gpu-0137/torchrun.log", 12, v1::EVIDENCE_ROLE_INITIATING);
  Cite(&d, "gpu-0137/torchrun.log", 40, v1::EVIDENCE_ROLE_INITIATING);
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_TRUE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_node_correct());
  EXPECT_TRUE(s.initiator_rank_top3());
  EXPECT_TRUE(s.owner_correct());
  EXPECT_TRUE(s.failure_class_correct());
  EXPECT_DOUBLE_EQ(s.evidence_recall(), 1.0);
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 1.0);
  EXPECT_EQ(s.family(), "sigkill");
}

TEST(Scorer, VictimOnSameNodeIsRightNodeWrongRank) {
  const auto s = ScoreIncident(SigkillTruth(), Diagnosed(1090, "gpu-0137"));
  EXPECT_FALSE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_node_correct());
}

TEST(Scorer, InconclusiveIsNeverCountedCorrectButKeepsTopK) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  d.set_verdict(v1::VERDICT_INCONCLUSIVE);
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_TRUE(s.inconclusive());
  EXPECT_FALSE(s.initiator_rank_correct());
  EXPECT_FALSE(s.owner_correct());
  EXPECT_TRUE(s.initiator_rank_top3());
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 0.0);
}

TEST(Scorer, PartialAndWrongCitationsLowerRecallAndPrecision) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Cite(&d, "gpu-0137/torchrun.log", 12, v1::EVIDENCE_ROLE_INITIATING);
  Cite(&d, "gpu-0001/rank_0.log", 3, v1::EVIDENCE_ROLE_INITIATING);
  Cite(&d, "gpu-0002/rank_9.log", 5, v1::EVIDENCE_ROLE_CONSEQUENCE);  // not judged
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_DOUBLE_EQ(s.evidence_recall(), 0.5);
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 0.5);
}

TEST(Scorer, NodeOnlyTruthIsMatchedAtNodeLevel) {
  v1::Truth t = SigkillTruth();
  t.mutable_initiator()->set_rank(-1);  // e.g. a whole node was lost
  const auto s = ScoreIncident(t, Diagnosed(1094, "gpu-0137"));
  EXPECT_TRUE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_rank_top3());
}

TEST(Scorer, SeveralInjectedEventsScoreAgainstTheFirstInitiator) {
  v1::Truth t = SigkillTruth();
  t.add_events()->set_kind("FAULT_KIND_HANG");  // a later, independent event
  const auto s = ScoreIncident(t, Diagnosed(1091, "gpu-0137"));
  EXPECT_TRUE(s.initiator_rank_correct());
  EXPECT_EQ(s.family(), "sigkill");
}

TEST(Scorer, NoInjectedEventIsFamilyNone) {
  v1::Truth t;
  EXPECT_EQ(ScoreIncident(t, v1::Diagnosis{}).family(), "none");
}

TEST(Scorer, AggregatesPerStrategyAndFamilyWithOverallFirst) {
  std::vector<v1::IncidentScore> scores;
  for (int i = 0; i < 4; ++i) {
    auto d = Diagnosed(i < 3 ? 1091 : 5, "gpu-0137");
    scores.push_back(ScoreIncident(SigkillTruth(), d));
    auto b = Diagnosed(7, "gpu-0001");
    b.set_strategy("first-error");
    scores.push_back(ScoreIncident(SigkillTruth(), b));
  }
  const auto agg = Aggregate(scores);
  ASSERT_EQ(agg.size(), 4u);
  EXPECT_EQ(agg[0].strategy(), "engine");
  EXPECT_EQ(agg[0].group(), "overall");
  EXPECT_DOUBLE_EQ(agg[0].initiator_rank_top1(), 0.75);
  EXPECT_DOUBLE_EQ(agg[0].coverage(), 1.0);
  EXPECT_EQ(agg[1].group(), "family:sigkill");
  EXPECT_EQ(agg[2].strategy(), "first-error");
  EXPECT_DOUBLE_EQ(agg[2].initiator_rank_top1(), 0.0);

  v1::EvalReport report;
  for (const auto& a : agg) *report.add_aggregates() = a;
  const std::string table = RenderTable(report);
  EXPECT_NE(table.find("first-error"), std::string::npos);
  EXPECT_NE(table.find(" 75.0%"), std::string::npos);
}

TEST(Scorer, AggregateOfNothingIsEmpty) { EXPECT_TRUE(Aggregate({}).empty()); }

}  // namespace
}  // namespace denpex::scorer
