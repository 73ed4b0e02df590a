// Per-incident metrics (scorer/src/metrics.cc) and their edge cases: no initiator, several
// initiators, INCONCLUSIVE, missing checkpoints, missing times.
#include <gtest/gtest.h>

#include "denpex/scorer/scorer.h"
#include "fixtures.h"

namespace denpex::scorer {
namespace {
using testing::Cite;
using testing::Diagnosed;
using testing::Resume;
using testing::SigkillTruth;
using testing::WithCheckpoints;

TEST(ScorerInitiator, RightInitiatorScoresEveryField) {
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
  EXPECT_EQ(s.launcher(), "torchrun");
  EXPECT_EQ(s.scale(), "2k-4k");
  EXPECT_EQ(s.truth_rank(), 1091);
  EXPECT_EQ(s.answer_rank(), 1091);
}

// A truth with a bad link (Truth.link) scores the diagnosis' link: the same two ends in either
// order, HCAs compared where both name one; a truth without one leaves the metric unset.
TEST(ScorerLink, SameEndsInEitherOrderAreTheLinkOtherNodesAreNot) {
  v1::Truth truth = SigkillTruth();
  EXPECT_FALSE(ScoreIncident(truth, Diagnosed(1091, "gpu-0137")).has_link_correct());
  v1::Link* want = truth.mutable_link();
  want->set_node_a("gpu-0137");
  want->set_hca_a("mlx5_3");
  want->set_node_b("gpu-0138");
  want->set_hca_b("mlx5_3");
  auto score = [&](const std::string& a, const std::string& hca_a, const std::string& b) {
    v1::Diagnosis d = Diagnosed(-1, "");
    d.mutable_link()->set_node_a(a);
    d.mutable_link()->set_hca_a(hca_a);
    d.mutable_link()->set_node_b(b);
    const auto s = ScoreIncident(truth, d);
    EXPECT_TRUE(s.has_link_correct());
    return s.link_correct();
  };
  EXPECT_TRUE(score("gpu-0137", "mlx5_3", "gpu-0138"));
  EXPECT_TRUE(score("gpu-0138", "", "GPU-0137"));   // swapped, HCA unknown, case-insensitive
  EXPECT_FALSE(score("gpu-0137", "mlx5_1", "gpu-0138"));  // the other HCA
  EXPECT_FALSE(score("gpu-0137", "", "gpu-0139"));  // the other node pair
  EXPECT_FALSE(ScoreIncident(truth, Diagnosed(1091, "gpu-0137")).link_correct());  // no link named
}

TEST(ScorerInitiator, VictimOnSameNodeIsRightNodeWrongRank) {
  const auto s = ScoreIncident(SigkillTruth(), Diagnosed(1090, "gpu-0137"));
  EXPECT_FALSE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_node_correct());
}

// Judged at the level it answered: a wrong rank on the right node is wrong; the right node with
// no rank is coarser, not wrong; a node-level answer about another node is wrong.
TEST(ScorerInitiator, ACommittedAnswerIsWrongOnlyAtTheLevelItAnswered) {
  EXPECT_TRUE(ScoreIncident(SigkillTruth(), Diagnosed(1090, "gpu-0137")).committed_wrong());
  EXPECT_FALSE(ScoreIncident(SigkillTruth(), Diagnosed(1091, "gpu-0137")).committed_wrong());
  const auto coarser = ScoreIncident(SigkillTruth(), Diagnosed(-1, "gpu-0137"));
  EXPECT_FALSE(coarser.committed_wrong());
  EXPECT_FALSE(coarser.initiator_rank_correct());
  EXPECT_TRUE(coarser.initiator_node_correct());
  EXPECT_TRUE(ScoreIncident(SigkillTruth(), Diagnosed(-1, "gpu-0138")).committed_wrong());
  v1::Diagnosis abstained = Diagnosed(1090, "gpu-0137");
  abstained.set_verdict(v1::VERDICT_INCONCLUSIVE);
  EXPECT_FALSE(ScoreIncident(SigkillTruth(), abstained).committed_wrong());
  v1::Truth job = SigkillTruth();
  job.mutable_initiator()->set_rank(-1);
  job.mutable_initiator()->clear_node();
  EXPECT_TRUE(ScoreIncident(job, Diagnosed(-1, "gpu-0137")).committed_wrong());
  EXPECT_FALSE(ScoreIncident(job, Diagnosed(-1, "")).committed_wrong());
}

// Neither a rank nor a node (no line names the rank or the host): the answer says what failed in
// the job, and is true at its level when its class and owner are the initiator's. The scheduler
// ending the job, or the right class with another owner, is wrong.
TEST(ScorerInitiator, AJobLevelAnswerIsJudgedByItsClassAndOwner) {
  const auto coarse = ScoreIncident(SigkillTruth(), Diagnosed(-1, ""));
  EXPECT_FALSE(coarse.committed_wrong());
  EXPECT_FALSE(coarse.initiator_rank_correct());
  EXPECT_FALSE(coarse.initiator_node_correct());
  v1::Diagnosis scheduler = Diagnosed(-1, "");
  scheduler.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_SCHEDULER_CANCEL);
  scheduler.set_owner(v1::OWNER_SCHEDULER);
  EXPECT_TRUE(ScoreIncident(SigkillTruth(), scheduler).committed_wrong());
  v1::Diagnosis owner = Diagnosed(-1, "");
  owner.set_owner(v1::OWNER_HOST);
  EXPECT_TRUE(ScoreIncident(SigkillTruth(), owner).committed_wrong());
}

TEST(ScorerInitiator, RightRankInSecondOrThirdCandidateCountsForTop3Only) {
  v1::Diagnosis d = Diagnosed(17, "gpu-0003");
  d.add_candidates()->set_rank(5);
  d.add_candidates()->set_rank(1091);
  d.add_candidates()->set_rank(2000);
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_FALSE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_rank_top3());

  v1::Diagnosis fourth = Diagnosed(17, "gpu-0003");
  for (int r : {5, 6, 1091}) fourth.add_candidates()->set_rank(r);
  EXPECT_FALSE(ScoreIncident(SigkillTruth(), fourth).initiator_rank_top3());
}

TEST(ScorerInitiator, InconclusiveIsNeverCountedCorrectButKeepsTopK) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  d.set_verdict(v1::VERDICT_INCONCLUSIVE);
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_TRUE(s.inconclusive());
  EXPECT_FALSE(s.initiator_rank_correct());
  EXPECT_FALSE(s.owner_correct());
  EXPECT_TRUE(s.initiator_rank_top3());
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 0.0);
  EXPECT_EQ(s.answer_rank(), -1);
  EXPECT_DOUBLE_EQ(s.cascade_compression(), 0.0);  // grouped under no initiator
  EXPECT_DOUBLE_EQ(s.gpu_hours_recovered(), 0.0);
}

TEST(ScorerInitiator, NodeOnlyTruthIsMatchedAtNodeLevel) {
  v1::Truth t = SigkillTruth();
  t.mutable_initiator()->set_rank(-1);  // e.g. a whole node was lost
  const auto s = ScoreIncident(t, Diagnosed(1094, "gpu-0137"));
  EXPECT_TRUE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_rank_top3());
  EXPECT_FALSE(ScoreIncident(t, Diagnosed(9, "gpu-0002")).initiator_rank_correct());
}

TEST(ScorerInitiator, JobLevelTruthIsMatchedByAJobLevelAnswerOnly) {
  v1::Truth t = SigkillTruth();  // the scheduler ended the whole job
  t.mutable_initiator()->set_rank(-1);
  t.mutable_initiator()->clear_node();
  const auto job = ScoreIncident(t, Diagnosed(-1, ""));
  EXPECT_TRUE(job.initiator_rank_correct());
  EXPECT_TRUE(job.initiator_node_correct());
  const auto rank = ScoreIncident(t, Diagnosed(0, "gpu-0001"));
  EXPECT_FALSE(rank.initiator_rank_correct());
  EXPECT_FALSE(rank.initiator_node_correct());
  EXPECT_FALSE(rank.initiator_rank_top3());
}

TEST(ScorerInitiator, SeveralInjectedEventsScoreAgainstTheFirstInitiator) {
  v1::Truth t = SigkillTruth();
  auto* later = t.add_events();  // a later, independent event on another rank
  later->set_kind("FAULT_KIND_HANG");
  later->set_rank(3000);
  EXPECT_TRUE(ScoreIncident(t, Diagnosed(1091, "gpu-0137")).initiator_rank_correct());
  const auto second = ScoreIncident(t, Diagnosed(3000, "gpu-0376"));
  EXPECT_FALSE(second.initiator_rank_correct());
  EXPECT_EQ(second.family(), "sigkill");
}

TEST(ScorerInitiator, NoInitiatorInTruthRewardsAbstainingOnly) {
  v1::Truth t;  // nothing injected, nothing to find
  t.mutable_job()->set_world_size(1024);
  v1::Diagnosis abstain;
  abstain.set_verdict(v1::VERDICT_INCONCLUSIVE);
  const auto a = ScoreIncident(t, abstain);
  EXPECT_EQ(a.family(), "none");
  EXPECT_TRUE(a.initiator_rank_correct());
  EXPECT_EQ(a.truth_rank(), -1);
  const auto c = ScoreIncident(t, Diagnosed(0, "gpu-0001"));  // rank 0 is not "no rank"
  EXPECT_FALSE(c.initiator_rank_correct());
  EXPECT_FALSE(c.initiator_rank_top3());
}

TEST(ScorerInitiator, InconclusiveTruthExpectsInconclusiveOnItsNode) {
  v1::Truth t = SigkillTruth();
  t.set_verdict(v1::VERDICT_INCONCLUSIVE);  // e.g. the node's logs were lost
  t.mutable_initiator()->set_rank(-1);
  v1::Diagnosis d = Diagnosed(-1, "gpu-0137");
  d.set_verdict(v1::VERDICT_INCONCLUSIVE);
  const auto s = ScoreIncident(t, d);
  EXPECT_TRUE(s.initiator_rank_correct());
  EXPECT_TRUE(s.initiator_node_correct());
  EXPECT_FALSE(ScoreIncident(t, Diagnosed(1091, "gpu-0137")).initiator_rank_correct());
}

TEST(ScorerEvidence, PartialAndWrongCitationsLowerRecallAndPrecision) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Cite(&d, "gpu-0137/torchrun.log", 12, v1::EVIDENCE_ROLE_INITIATING);
  Cite(&d, "gpu-0001/rank_0.log", 3, v1::EVIDENCE_ROLE_INITIATING);
  Cite(&d, "gpu-0002/rank_9.log", 5, v1::EVIDENCE_ROLE_CONSEQUENCE);  // not judged
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_DOUBLE_EQ(s.evidence_recall(), 0.5);
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 0.5);
}

TEST(ScorerEvidence, NothingRequiredAndNothingCitedHasPerfectRecallAndNoPrecision) {
  v1::Truth t = SigkillTruth();
  t.clear_evidence();  // a silent hang: no line shows the fault
  const auto s = ScoreIncident(t, Diagnosed(1091, "gpu-0137"));
  EXPECT_DOUBLE_EQ(s.evidence_recall(), 1.0);
  EXPECT_FALSE(s.has_evidence_precision());  // nothing initiating on either side: undefined
}

// A lost host prints nothing: the truth requires a corroborating line (the node's last) but no
// initiating one. An answer that cites no initiating line either leaves precision undefined;
// one that cites initiating lines is judged on them; a truth with an initiating line the
// answer does not cite as such scores 0.
TEST(ScorerEvidence, PrecisionIsUndefinedOnlyWhenNeitherSideHasAnInitiatingLine) {
  v1::Truth t = SigkillTruth();
  t.clear_evidence();
  auto* last = t.add_evidence();
  last->set_file("gpu-0137/torchrun.log");
  last->set_line(40);
  last->set_role(v1::EVIDENCE_ROLE_CORROBORATING);
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Cite(&d, "gpu-0137/torchrun.log", 40, v1::EVIDENCE_ROLE_CORROBORATING);
  auto s = ScoreIncident(t, d);
  EXPECT_DOUBLE_EQ(s.evidence_recall(), 1.0);
  EXPECT_FALSE(s.has_evidence_precision());
  Cite(&d, "gpu-0001/rank_0.log", 3, v1::EVIDENCE_ROLE_INITIATING);  // a claim the truth does not back
  s = ScoreIncident(t, d);
  ASSERT_TRUE(s.has_evidence_precision());
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 0.0);
  v1::Diagnosis silent = Diagnosed(1091, "gpu-0137");
  Cite(&silent, "gpu-0137/torchrun.log", 12, v1::EVIDENCE_ROLE_CORROBORATING);
  s = ScoreIncident(SigkillTruth(), silent);  // the truth's initiating lines, not cited as such
  ASSERT_TRUE(s.has_evidence_precision());
  EXPECT_DOUBLE_EQ(s.evidence_precision(), 0.0);
}

TEST(ScorerCascade, CompressionIsGroupedOverSecondaryCappedAtOne) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  d.mutable_cascade()->set_grouped_errors(75);
  EXPECT_DOUBLE_EQ(ScoreIncident(SigkillTruth(), d).cascade_compression(), 0.75);
  d.mutable_cascade()->set_grouped_errors(130);  // counted more than there are
  EXPECT_DOUBLE_EQ(ScoreIncident(SigkillTruth(), d).cascade_compression(), 1.0);
}

TEST(ScorerCascade, CompressionUnderTheWrongInitiatorIsZero) {
  v1::Diagnosis d = Diagnosed(1090, "gpu-0137");
  d.mutable_cascade()->set_grouped_errors(100);
  EXPECT_DOUBLE_EQ(ScoreIncident(SigkillTruth(), d).cascade_compression(), 0.0);
}

TEST(ScorerCascade, NoSecondaryErrorsInTruthLeavesCompressionUnset) {
  v1::Truth t = SigkillTruth();
  t.mutable_cascade()->set_secondary_errors(0);  // e.g. gloo prints no watchdog lines
  EXPECT_FALSE(ScoreIncident(t, Diagnosed(1091, "gpu-0137")).has_cascade_compression());
}

TEST(ScorerCascade, PurityIsShareOfListedRanksThatAreTrulySecondary) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  for (int r : {1088, 1089, 1091, 7}) d.mutable_cascade()->add_secondary_ranks(r);
  EXPECT_DOUBLE_EQ(ScoreIncident(SigkillTruth(), d).cascade_purity(), 0.5);
}

TEST(ScorerCascade, PurityUnsetWhenNothingListedOrTruthHasNoCascade) {
  EXPECT_FALSE(ScoreIncident(SigkillTruth(), Diagnosed(1091, "gpu-0137")).has_cascade_purity());
  v1::Truth t = SigkillTruth();
  t.clear_cascade();
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  d.mutable_cascade()->add_secondary_ranks(3);
  EXPECT_FALSE(ScoreIncident(t, d).has_cascade_purity());
}

TEST(ScorerCheckpoint, NewestSafeCheckpointIsCorrectWithNoExcess) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Resume(&d, "step_10.pt", 10);
  const auto s = ScoreIncident(WithCheckpoints(SigkillTruth()), d);
  EXPECT_TRUE(s.checkpoint_correct());
  EXPECT_FALSE(s.checkpoint_unsafe());
  EXPECT_EQ(s.checkpoint_excess_steps(), 0);
  EXPECT_EQ(s.checkpoint_rewind_steps(), 5);  // the newest directory (15) was broken
}

TEST(ScorerCheckpoint, NewestDirectoryThatIsBrokenIsUnsafe) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137", "newest-checkpoint");
  Resume(&d, "step_15.pt", 15);
  const auto s = ScoreIncident(WithCheckpoints(SigkillTruth()), d);
  EXPECT_FALSE(s.checkpoint_correct());
  EXPECT_TRUE(s.checkpoint_unsafe());
  EXPECT_FALSE(s.has_checkpoint_excess_steps());
}

TEST(ScorerCheckpoint, OlderSafeCheckpointCountsExcessSteps) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Resume(&d, "step_5.pt", 5);
  const auto s = ScoreIncident(WithCheckpoints(SigkillTruth()), d);
  EXPECT_FALSE(s.checkpoint_correct());
  EXPECT_FALSE(s.checkpoint_unsafe());
  EXPECT_EQ(s.checkpoint_excess_steps(), 5);
  EXPECT_EQ(s.checkpoint_rewind_steps(), 10);
}

TEST(ScorerCheckpoint, MissingCheckpointsInTruthLeaveCheckpointMetricsUnset) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Resume(&d, "step_10.pt", 10);
  const auto s = ScoreIncident(SigkillTruth(), d);
  EXPECT_FALSE(s.has_checkpoint_correct());
  EXPECT_FALSE(s.checkpoint_unsafe());
  EXPECT_FALSE(s.has_checkpoint_excess_steps());
}

TEST(ScorerCheckpoint, NoSafeCheckpointRequiresSayingSo) {
  v1::Truth t = SigkillTruth();
  t.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  auto* r = t.mutable_checkpoint()->add_rejected();
  r->set_path("step_5.pt");
  r->set_step(5);
  v1::Diagnosis none = Diagnosed(1091, "gpu-0137");
  none.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  EXPECT_TRUE(ScoreIncident(t, none).checkpoint_correct());

  v1::Diagnosis resumed = Diagnosed(1091, "gpu-0137");
  Resume(&resumed, "step_5.pt", 5);
  EXPECT_TRUE(ScoreIncident(t, resumed).checkpoint_unsafe());

  v1::Diagnosis not_evaluated = Diagnosed(1091, "gpu-0137");  // e.g. a baseline
  const auto s = ScoreIncident(t, not_evaluated);
  EXPECT_FALSE(s.checkpoint_correct());
  EXPECT_FALSE(s.checkpoint_unsafe());
}

TEST(ScorerCheckpoint, NewestSafeIsSetOnlyWhenTheTruthResumes) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  Resume(&d, "step_10.pt", 10);
  const auto s = ScoreIncident(WithCheckpoints(SigkillTruth()), d);
  EXPECT_TRUE(s.checkpoint_newest_safe());
  EXPECT_EQ(s.checkpoint_resume_step(), 10);
  v1::Diagnosis older = Diagnosed(1091, "gpu-0137");
  Resume(&older, "step_5.pt", 5);
  EXPECT_FALSE(ScoreIncident(WithCheckpoints(SigkillTruth()), older).checkpoint_newest_safe());
  v1::Truth none = SigkillTruth();
  none.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  EXPECT_FALSE(ScoreIncident(none, d).has_checkpoint_newest_safe());
  EXPECT_FALSE(ScoreIncident(SigkillTruth(), d).has_checkpoint_newest_safe());  // no truth
}

// Truth INCONCLUSIVE: the newest save is in an unknown format; step_10.pt, older, verifies.
v1::Truth UnknownFormatTruth() {
  v1::Truth t = WithCheckpoints(SigkillTruth());
  t.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_INCONCLUSIVE);
  t.mutable_checkpoint()->mutable_rejected(0)->set_path("step_15");
  t.mutable_checkpoint()->mutable_rejected(0)->set_reason("a format no verifier knows");
  return t;
}

TEST(ScorerCheckpoint, InconclusiveTruthIsAnsweredByAbstaining) {
  v1::Diagnosis abstain = Diagnosed(1091, "gpu-0137");
  abstain.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_INCONCLUSIVE);
  const auto a = ScoreIncident(UnknownFormatTruth(), abstain);
  EXPECT_TRUE(a.checkpoint_correct());
  EXPECT_FALSE(a.checkpoint_unsafe());
  EXPECT_FALSE(a.has_checkpoint_resume_step());

  v1::Diagnosis trusted = Diagnosed(1091, "gpu-0137", "newest-checkpoint");
  Resume(&trusted, "step_15", 15);  // the unverifiable newest: unsafe
  const auto b = ScoreIncident(UnknownFormatTruth(), trusted);
  EXPECT_FALSE(b.checkpoint_correct());
  EXPECT_TRUE(b.checkpoint_unsafe());

  v1::Diagnosis older = Diagnosed(1091, "gpu-0137");
  Resume(&older, "step_10.pt", 10);  // safe, but it should have abstained
  const auto c = ScoreIncident(UnknownFormatTruth(), older);
  EXPECT_FALSE(c.checkpoint_correct());
  EXPECT_FALSE(c.checkpoint_unsafe());
}

TEST(ScorerCheckpoint, RewindAvoidedComparesWithTheNewestCheckpointBaseline) {
  const v1::Truth t = WithCheckpoints(SigkillTruth());
  v1::Diagnosis engine = Diagnosed(1091, "gpu-0137");
  Resume(&engine, "step_10.pt", 10);
  v1::Diagnosis blind = Diagnosed(1091, "gpu-0137", "newest-checkpoint");
  Resume(&blind, "step_15.pt", 15);  // broken: the run restarts from scratch
  v1::Diagnosis logs = Diagnosed(1091, "gpu-0137", "first-error");  // NOT_EVALUATED
  std::vector<v1::IncidentScore> scores = {ScoreIncident(t, engine), ScoreIncident(t, blind),
                                           ScoreIncident(t, logs), ScoreIncident(SigkillTruth(), engine)};
  scores[3].set_incident("no-checkpoints");
  CompareCheckpointRewind(&scores);
  EXPECT_EQ(scores[0].checkpoint_rewind_avoided(), 10);  // 10 - 0
  EXPECT_EQ(scores[1].checkpoint_rewind_avoided(), 0);
  EXPECT_EQ(scores[2].checkpoint_rewind_avoided(), 0);   // resumed nothing, as the baseline
  EXPECT_FALSE(scores[3].has_checkpoint_rewind_avoided());  // no checkpoint truth
  std::vector<v1::IncidentScore> alone = {ScoreIncident(t, engine)};
  CompareCheckpointRewind(&alone);  // no baseline ran
  EXPECT_FALSE(alone[0].has_checkpoint_rewind_avoided());
}

TEST(ScorerTime, AnswerTimeAndGpuHoursComeFromTruthTimestamps) {
  const auto s = ScoreIncident(SigkillTruth(), Diagnosed(1091, "gpu-0137"),
                               {.diagnose_seconds = 1.5});
  EXPECT_DOUBLE_EQ(s.diagnose_seconds(), 1.5);
  EXPECT_DOUBLE_EQ(s.answer_after_fault_seconds(), 601.5);
  EXPECT_DOUBLE_EQ(s.cascade_gpu_hours(), 4096.0 * 600 / 3600);
  EXPECT_DOUBLE_EQ(s.gpu_hours_recovered(), 4096.0 * 598.5 / 3600);
  EXPECT_FALSE(s.has_gpu_hours_triage_saved());
}

TEST(ScorerTime, WrongAnswerRecoversNothing) {
  const auto s = ScoreIncident(SigkillTruth(), Diagnosed(5, "gpu-0001"),
                               {.diagnose_seconds = 1.0, .manual_triage_minutes = 30});
  EXPECT_DOUBLE_EQ(s.gpu_hours_recovered(), 0.0);
  EXPECT_DOUBLE_EQ(s.gpu_hours_triage_saved(), 0.0);
  EXPECT_GT(s.cascade_gpu_hours(), 0.0);
}

TEST(ScorerTime, ManualTriageTimeIsAnExplicitParameter) {
  const auto s = ScoreIncident(SigkillTruth(), Diagnosed(1091, "gpu-0137"),
                               {.diagnose_seconds = 60, .manual_triage_minutes = 30});
  EXPECT_DOUBLE_EQ(s.gpu_hours_triage_saved(), 4096.0 * (1800 - 60) / 3600);
}

TEST(ScorerTime, MissingTimestampsLeaveTimeMetricsUnset) {
  v1::Truth t = SigkillTruth();
  t.mutable_job()->clear_end_time();
  const auto s = ScoreIncident(t, Diagnosed(1091, "gpu-0137"));
  EXPECT_FALSE(s.has_answer_after_fault_seconds());
  EXPECT_FALSE(s.has_gpu_hours_recovered());
}

TEST(ScorerGrouping, ScaleBucketsFollowWorldSize) {
  EXPECT_EQ(ScaleBucket(0), "unknown");
  EXPECT_EQ(ScaleBucket(4), "<1k");
  EXPECT_EQ(ScaleBucket(1024), "1k");
  EXPECT_EQ(ScaleBucket(2048), "2k-4k");
  EXPECT_EQ(ScaleBucket(4096), "2k-4k");
  EXPECT_EQ(ScaleBucket(8192), "8k-16k");
  EXPECT_EQ(ScaleBucket(16384), "8k-16k");
  EXPECT_EQ(ScaleBucket(131072), "32k+");
}

TEST(ScorerGrouping, MissingLauncherIsUnspecified) {
  v1::Truth t = SigkillTruth();
  t.mutable_job()->clear_launcher();
  EXPECT_EQ(ScoreIncident(t, Diagnosed(1091, "gpu-0137")).launcher(), "unspecified");
}

// Truth.recurrence: scored only when the truth carries a history store; the counts and the
// escalation must match, and an escalated recovery must lead with the truth's action.
TEST(ScorerRecurrence, CountsEscalationAndFirstActionMustMatch) {
  v1::Truth t = SigkillTruth();
  EXPECT_FALSE(ScoreIncident(t, Diagnosed(1091, "gpu-0137")).has_recurrence_correct());
  t.mutable_recurrence()->set_node_incidents(2);
  t.mutable_recurrence()->set_gpu_incidents(1);
  t.mutable_recurrence()->set_escalated(true);
  t.mutable_recovery()->add_preconditions()->set_action("drain_and_rma");
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  *d.mutable_recurrence() = t.recurrence();
  d.mutable_recovery()->add_preconditions()->set_action("drain_and_rma");
  EXPECT_TRUE(ScoreIncident(t, d).recurrence_correct());
  d.mutable_recovery()->mutable_preconditions(0)->set_action("reset_gpu");
  EXPECT_FALSE(ScoreIncident(t, d).recurrence_correct());  // counted but not escalated
  d.mutable_recovery()->mutable_preconditions(0)->set_action("drain_and_rma");
  d.mutable_recurrence()->set_gpu_incidents(0);
  EXPECT_FALSE(ScoreIncident(t, d).recurrence_correct());
  v1::Diagnosis wrong = Diagnosed(5, "gpu-0001");  // the wrong node's history
  *wrong.mutable_recurrence() = t.recurrence();
  *wrong.mutable_recovery() = t.recovery();
  EXPECT_FALSE(ScoreIncident(t, wrong).recurrence_correct());
  v1::Diagnosis none = Diagnosed(1091, "gpu-0137");  // never read the store
  EXPECT_FALSE(ScoreIncident(t, none).recurrence_correct());
}

}  // namespace
}  // namespace denpex::scorer
