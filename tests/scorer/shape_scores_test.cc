// The shape axis' outcomes (scorer::CompareShape, docs/evaluation.md "Collection shapes"):
// a copy's answer against the canonical answer and the truth, with the copy's node names.
#include <gtest/gtest.h>

#include "denpex/scorer/scorer.h"
#include "fixtures.h"

namespace denpex::scorer {
namespace {
using testing::Diagnosed;
using testing::SigkillTruth;

v1::ShapeOutcome Outcome(const v1::Diagnosis& canonical, const v1::Diagnosis& shaped,
                         const NodeAliases& aliases = {}) {
  return CompareShape(SigkillTruth(), canonical, shaped, aliases).outcome();
}

v1::Diagnosis Inconclusive() {
  v1::Diagnosis d;
  d.set_verdict(v1::VERDICT_INCONCLUSIVE);
  return d;
}

TEST(ShapeOutcome, SameAnswerIsSameAlsoUnderTheCopysNodeName) {
  const auto canonical = Diagnosed(1091, "gpu-0137");
  EXPECT_EQ(Outcome(canonical, Diagnosed(1091, "GPU-0137")), v1::SHAPE_OUTCOME_SAME);
  EXPECT_EQ(Outcome(canonical, Diagnosed(1091, "host-0"), {{"host-0", {"gpu-0001", "gpu-0137"}}}),
            v1::SHAPE_OUTCOME_SAME);
  EXPECT_EQ(Outcome(Inconclusive(), Inconclusive()), v1::SHAPE_OUTCOME_SAME);
}

TEST(ShapeOutcome, NodeLevelOrFewerFieldsConsistentWithTheTruthIsCoarser) {
  const auto canonical = Diagnosed(1091, "gpu-0137");
  EXPECT_EQ(Outcome(canonical, Diagnosed(-1, "gpu-0137")), v1::SHAPE_OUTCOME_COARSER);
  auto no_class = Diagnosed(1091, "");
  no_class.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_UNSPECIFIED);
  EXPECT_EQ(Outcome(canonical, no_class), v1::SHAPE_OUTCOME_COARSER);
}

TEST(ShapeOutcome, InconclusiveWhereCanonicalCommittedIsAbstained) {
  EXPECT_EQ(Outcome(Diagnosed(1091, "gpu-0137"), Inconclusive()), v1::SHAPE_OUTCOME_ABSTAINED);
}

TEST(ShapeOutcome, CommittedDisagreementWithTheTruthIsWrongEvenWhenCanonicalWasToo) {
  const auto canonical = Diagnosed(1091, "gpu-0137");
  EXPECT_EQ(Outcome(canonical, Diagnosed(1090, "gpu-0137")), v1::SHAPE_OUTCOME_WRONG);
  EXPECT_EQ(Outcome(canonical, Diagnosed(-1, "gpu-0002")), v1::SHAPE_OUTCOME_WRONG);
  auto xid = Diagnosed(1091, "gpu-0137");
  xid.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS);
  EXPECT_EQ(Outcome(canonical, xid), v1::SHAPE_OUTCOME_WRONG);
  EXPECT_EQ(Outcome(Diagnosed(7, "gpu-0001"), Diagnosed(7, "gpu-0001")), v1::SHAPE_OUTCOME_WRONG);
  // An opaque folder name that stands for another node is another node.
  EXPECT_EQ(Outcome(canonical, Diagnosed(1091, "a1b2"), {{"a1b2", {"gpu-0002"}}}),
            v1::SHAPE_OUTCOME_WRONG);
}

TEST(ShapeOutcome, AnythingElseDiffers) {
  // Right where the canonical layout abstained: not the same answer, not wrong.
  EXPECT_EQ(Outcome(Inconclusive(), Diagnosed(1091, "gpu-0137")), v1::SHAPE_OUTCOME_DIFFERS);
  // The same rank and node, another owner.
  auto owner = Diagnosed(1091, "gpu-0137");
  owner.set_owner(v1::OWNER_HOST);
  EXPECT_EQ(Outcome(Diagnosed(1091, "gpu-0137"), owner), v1::SHAPE_OUTCOME_DIFFERS);
}

TEST(ShapeOutcome, AggregatesCountEachOutcomeInTheAskedShapeOrder) {
  std::vector<v1::ShapeResult> results(3);
  results[0].set_shape("cri");
  results[0].set_outcome(v1::SHAPE_OUTCOME_SAME);
  results[1].set_shape("cri");
  results[1].set_outcome(v1::SHAPE_OUTCOME_WRONG);
  results[2].set_shape("merged");
  results[2].set_outcome(v1::SHAPE_OUTCOME_ABSTAINED);
  const auto g = AggregateShapes(results, {"merged", "cri", "paste"});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].shape(), "merged");
  EXPECT_EQ(g[0].abstained(), 1);
  EXPECT_EQ(g[1].pairs(), 2);
  EXPECT_DOUBLE_EQ(g[1].same_share(), 0.5);
  EXPECT_DOUBLE_EQ(g[1].wrong_share(), 0.5);
  EXPECT_EQ(g[2].pairs(), 0);
}

TEST(ShapeOutcome, GateShapeFloorsFailWhenSameDropsOrWrongRises) {
  v1::EvalReport report;
  auto* a = report.add_shape_aggregates();
  a->set_shape("cri");
  a->set_pairs(10);
  a->set_same_share(0.8);
  a->set_wrong_share(0.1);
  v1::GateBaseline b = MakeGateBaseline(report, 0);
  ASSERT_EQ(b.shape_floors_size(), 1);
  EXPECT_TRUE(CheckGate(b, report).empty());
  a->set_same_share(0.7);
  a->set_wrong_share(0.2);
  const auto failures = CheckGate(b, report);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_NE(failures[0].find("shape cri same"), std::string::npos);
  EXPECT_NE(failures[1].find("shape cri wrong"), std::string::npos);
  report.clear_shape_aggregates();
  EXPECT_EQ(CheckGate(b, report).size(), 1u);  // the shape was not run
}

}  // namespace
}  // namespace denpex::scorer
