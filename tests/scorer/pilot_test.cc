// The pilot's per-dimension math (scorer/src/pilot.cc): a corpus entry's expected outcome is the
// arbiter, the engine and the team's recorded process are each held against it, and what the
// entry does not record is left unset, never a pass or a fail.
#include <gtest/gtest.h>

#include "denpex/scorer/scorer.h"
#include "fixtures.h"

namespace denpex::scorer::testing {
namespace {

// A confirmed corpus entry: the SIGKILL truth, owner host, checkpoints at 10 (safe) and 15.
v1::Truth Entry() {
  v1::Truth t = WithCheckpoints(SigkillTruth());
  t.set_owner(v1::OWNER_HOST);
  t.mutable_corpus_entry()->set_confirmed_at("2026-03-02T12:00:00Z");
  return t;
}

v1::Diagnosis Engine(v1::Owner owner) {
  v1::Diagnosis d = Diagnosed(1091, "gpu-0137");
  d.set_owner(owner);
  Cite(&d, "gpu-0137/torchrun.log", 12, v1::EVIDENCE_ROLE_INITIATING);
  Resume(&d, "step_10.pt", 10);
  d.mutable_recovery()->add_preconditions()->set_text("Drain gpu-0137.");
  return d;
}

v1::PilotIncident Score(const v1::Truth& t, const v1::Diagnosis& d, double seconds) {
  v1::IncidentScore s = ScoreIncident(t, d, {.diagnose_seconds = seconds});
  s.set_suite("corpus:pilot");
  s.set_incident("a");
  return ScorePilot(t, d, s);
}

const v1::PilotDecision* Decision(const v1::PilotIncident& p, const std::string& what) {
  for (const auto& d : p.decisions()) {
    if (d.decision() == what) return &d;
  }
  return nullptr;
}

TEST(Pilot, EntryWithoutPostmortemLeavesProcessRecoveryAndTimeNotRecorded) {
  const v1::PilotIncident p = Score(Entry(), Engine(v1::OWNER_HOST), 1.5);
  EXPECT_EQ(p.suite(), "corpus:pilot");
  EXPECT_FALSE(p.draft());
  EXPECT_FALSE(p.postmortem());
  ASSERT_TRUE(p.has_owner_correct());
  EXPECT_TRUE(p.owner_correct());
  EXPECT_FALSE(p.has_process_owner_correct());
  ASSERT_TRUE(p.has_evidence_recall());
  EXPECT_DOUBLE_EQ(p.evidence_recall(), 0.5);
  EXPECT_EQ(p.evidence_cited(), 1);
  EXPECT_EQ(p.evidence_expected(), 2);
  ASSERT_TRUE(p.has_checkpoint_correct());
  EXPECT_TRUE(p.checkpoint_correct());
  EXPECT_FALSE(p.has_process_checkpoint_correct());
  EXPECT_FALSE(p.has_recovery_verified());
  EXPECT_FALSE(p.has_operator_minutes());
  EXPECT_FALSE(p.has_minutes_saved());
  EXPECT_DOUBLE_EQ(p.engine_minutes(), 1.5 / 60);
  EXPECT_EQ(p.engine_resume(), "step_10.pt@10");
  ASSERT_EQ(p.engine_recovery_size(), 1);
  EXPECT_EQ(p.decisions_size(), 0);
}

TEST(Pilot, EntryWithoutEvidenceOrCheckpointLeavesThoseNotRecorded) {
  v1::Truth t = SigkillTruth();
  t.clear_evidence();
  const v1::PilotIncident p = Score(t, Engine(v1::OWNER_UNKNOWN), 1);
  EXPECT_FALSE(p.has_evidence_recall());
  EXPECT_FALSE(p.has_checkpoint_correct());
  EXPECT_TRUE(p.has_owner_correct());
}

TEST(Pilot, RightOwnerSavesOperatorMinutesAndWinsTheDecisionThatDiffered) {
  v1::Truth t = Entry();
  auto* pm = t.mutable_corpus_entry()->mutable_postmortem();
  pm->set_operator_minutes(95);
  pm->set_process_owner(v1::OWNER_APPLICATION);  // the process first blamed the code
  pm->set_process_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);  // and named the right class
  const v1::PilotIncident p = Score(t, Engine(v1::OWNER_HOST), 30);
  EXPECT_TRUE(p.postmortem());
  EXPECT_TRUE(p.owner_correct());
  ASSERT_TRUE(p.has_process_owner_correct());
  EXPECT_FALSE(p.process_owner_correct());
  EXPECT_DOUBLE_EQ(p.operator_minutes(), 95);
  EXPECT_DOUBLE_EQ(p.minutes_saved(), 95 - 0.5);

  const v1::PilotDecision* owner = Decision(p, "owner");
  ASSERT_NE(owner, nullptr);
  EXPECT_TRUE(owner->differed());
  EXPECT_EQ(owner->right(), v1::PILOT_RIGHT_ENGINE);
  EXPECT_EQ(owner->engine(), "host");
  EXPECT_EQ(owner->process(), "application");
  EXPECT_EQ(owner->expected(), "host");
  const v1::PilotDecision* cls = Decision(p, "class");
  ASSERT_NE(cls, nullptr);
  EXPECT_FALSE(cls->differed());
  EXPECT_EQ(cls->right(), v1::PILOT_RIGHT_BOTH);
  EXPECT_EQ(Decision(p, "checkpoint"), nullptr);  // the postmortem names no resume
}

TEST(Pilot, WrongOwnerSavesNoTimeAndTheProcessWasRight) {
  v1::Truth t = Entry();
  auto* pm = t.mutable_corpus_entry()->mutable_postmortem();
  pm->set_operator_minutes(40);
  pm->set_process_owner(v1::OWNER_HOST);
  const v1::PilotIncident p = Score(t, Engine(v1::OWNER_NETWORK), 2);
  EXPECT_FALSE(p.owner_correct());
  EXPECT_TRUE(p.process_owner_correct());
  ASSERT_TRUE(p.has_minutes_saved());
  EXPECT_DOUBLE_EQ(p.minutes_saved(), 0);
  const v1::PilotDecision* owner = Decision(p, "owner");
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(owner->right(), v1::PILOT_RIGHT_PROCESS);
}

TEST(Pilot, InconclusiveEngineDiffersFromAnyProcessOwner) {
  v1::Truth t = Entry();
  t.mutable_corpus_entry()->mutable_postmortem()->set_process_owner(v1::OWNER_NETWORK);
  v1::Diagnosis d;
  d.set_strategy("engine");
  d.set_verdict(v1::VERDICT_INCONCLUSIVE);
  const v1::PilotIncident p = Score(t, d, 1);
  const v1::PilotDecision* owner = Decision(p, "owner");
  ASSERT_NE(owner, nullptr);
  EXPECT_TRUE(p.inconclusive());
  EXPECT_FALSE(p.owner_correct());
  EXPECT_EQ(owner->engine(), "inconclusive");
  EXPECT_TRUE(owner->differed());
  EXPECT_EQ(owner->right(), v1::PILOT_RIGHT_NEITHER);
}

TEST(Pilot, RecoveryVerifiedWhenTheEngineResumesFromTheTeamsCheckpoint) {
  v1::Truth t = Entry();
  auto* pm = t.mutable_corpus_entry()->mutable_postmortem();
  pm->set_resumed_from("checkpoints/step_10.pt");  // the team names it from the job's folder
  pm->set_resumed_step(10);
  pm->add_recovery("drained gpu-0137");
  const v1::PilotIncident p = Score(t, Engine(v1::OWNER_HOST), 1);
  ASSERT_TRUE(p.has_recovery_verified());
  EXPECT_TRUE(p.recovery_verified());
  EXPECT_TRUE(p.process_checkpoint_correct());
  EXPECT_EQ(p.process_resume(), "checkpoints/step_10.pt@10");
  ASSERT_EQ(p.process_recovery_size(), 1);
  const v1::PilotDecision* ck = Decision(p, "checkpoint");
  ASSERT_NE(ck, nullptr);
  EXPECT_FALSE(ck->differed());
  EXPECT_EQ(ck->right(), v1::PILOT_RIGHT_BOTH);
}

TEST(Pilot, OlderResumeByTheTeamDiffersAndTheExpectedCheckpointDecides) {
  v1::Truth t = Entry();
  auto* pm = t.mutable_corpus_entry()->mutable_postmortem();
  pm->set_resumed_from("step_5.pt");
  pm->set_resumed_step(5);
  const v1::PilotIncident p = Score(t, Engine(v1::OWNER_HOST), 1);
  EXPECT_FALSE(p.recovery_verified());
  EXPECT_FALSE(p.process_checkpoint_correct());
  const v1::PilotDecision* ck = Decision(p, "checkpoint");
  ASSERT_NE(ck, nullptr);
  EXPECT_TRUE(ck->differed());
  EXPECT_EQ(ck->right(), v1::PILOT_RIGHT_ENGINE);
  EXPECT_EQ(ck->expected(), "step_10.pt@10");

  // The engine resuming from the torn step 15: the team's step 10 was the right one.
  v1::Diagnosis unsafe = Engine(v1::OWNER_HOST);
  Resume(&unsafe, "step_15.pt", 15);
  pm->set_resumed_from("step_10.pt");
  pm->set_resumed_step(10);
  const v1::PilotIncident q = Score(t, unsafe, 1);
  EXPECT_FALSE(q.recovery_verified());
  EXPECT_EQ(Decision(q, "checkpoint")->right(), v1::PILOT_RIGHT_PROCESS);
}

TEST(Pilot, ResumeMatchedByStepWhenOneSideNamesNoPath) {
  v1::Truth t = Entry();
  auto* pm = t.mutable_corpus_entry()->mutable_postmortem();
  pm->set_resumed_from("iteration 10");  // the team's words; a different path
  pm->set_resumed_step(10);
  EXPECT_FALSE(Score(t, Engine(v1::OWNER_HOST), 1).recovery_verified());  // both name a path
  v1::Diagnosis by_step = Engine(v1::OWNER_HOST);
  by_step.mutable_checkpoint()->clear_path();
  EXPECT_TRUE(Score(t, by_step, 1).recovery_verified());
}

TEST(Pilot, DraftIsMarked) {
  v1::Truth t = Entry();
  t.mutable_corpus_entry()->set_draft(true);
  EXPECT_TRUE(Score(t, Engine(v1::OWNER_HOST), 1).draft());
  EXPECT_TRUE(ScoreIncident(t, Engine(v1::OWNER_HOST)).expected_draft());
  EXPECT_FALSE(ScoreIncident(Entry(), Engine(v1::OWNER_HOST)).expected_draft());
}

const v1::PilotDimension& Dimension(const v1::PilotSummary& s, const std::string& name) {
  for (const auto& d : s.dimensions()) {
    if (d.dimension() == name) return d;
  }
  static const v1::PilotDimension kNone;
  ADD_FAILURE() << "no dimension " << name;
  return kNone;
}

TEST(Pilot, SummaryCountsRecordedEntriesPerDimension) {
  // Entry 1: right owner, 60 operator minutes, the team's resume matched, process blamed wrong.
  v1::Truth a = Entry();
  auto* pa = a.mutable_corpus_entry()->mutable_postmortem();
  pa->set_operator_minutes(60);
  pa->set_process_owner(v1::OWNER_APPLICATION);
  pa->set_resumed_from("step_10.pt");
  pa->set_resumed_step(10);
  // Entry 2: wrong owner, 30 operator minutes, no resume recorded, a draft.
  v1::Truth b = Entry();
  b.mutable_corpus_entry()->set_draft(true);
  b.mutable_corpus_entry()->mutable_postmortem()->set_operator_minutes(30);
  // Entry 3: no postmortem, no evidence listed.
  v1::Truth c = Entry();
  c.clear_corpus_entry();
  c.clear_evidence();
  const v1::PilotSummary s =
      SummarizePilot({Score(a, Engine(v1::OWNER_HOST), 6), Score(b, Engine(v1::OWNER_NETWORK), 3),
                      Score(c, Engine(v1::OWNER_HOST), 3)});
  EXPECT_EQ(s.entries(), 3);
  EXPECT_EQ(s.drafts(), 1);
  EXPECT_EQ(s.postmortems(), 2);
  ASSERT_EQ(s.dimensions_size(), 5);
  EXPECT_EQ(s.dimensions(0).dimension(), "causal owner");

  const auto& owner = Dimension(s, "causal owner");
  EXPECT_EQ(owner.recorded(), 3);
  EXPECT_EQ(owner.engine_right(), 2);
  EXPECT_NEAR(owner.engine_score(), 2.0 / 3, 1e-12);
  EXPECT_EQ(owner.process_recorded(), 1);
  EXPECT_EQ(owner.process_right(), 0);

  const auto& evidence = Dimension(s, "evidence completeness");
  EXPECT_EQ(evidence.recorded(), 2);
  EXPECT_DOUBLE_EQ(evidence.engine_score(), 0.5);
  EXPECT_EQ(evidence.engine_right(), 0);

  const auto& recovery = Dimension(s, "verified recovery");
  EXPECT_EQ(recovery.recorded(), 1);
  EXPECT_EQ(recovery.engine_right(), 1);

  const auto& time = Dimension(s, "operator time");
  EXPECT_EQ(time.recorded(), 2);
  EXPECT_EQ(time.engine_right(), 1);  // only the right answer saves time
  EXPECT_DOUBLE_EQ(time.operator_minutes(), 90);
  EXPECT_DOUBLE_EQ(time.engine_minutes(), (6 + 3) / 60.0);
  EXPECT_DOUBLE_EQ(time.minutes_saved(), 60 - 0.1);
  EXPECT_EQ(
      PilotDimensionScore(time, s.entries()).find("2 of 3 entries recorded") != std::string::npos,
      true);
  EXPECT_EQ(
      PilotDimensionScore(
          Dimension(SummarizePilot({Score(c, Engine(v1::OWNER_HOST), 1)}), "operator time"), 1),
      "not recorded (0 of 1 entries recorded)");

  // Decisions: entry 1's owner (differed, engine right) and checkpoint (same, both right).
  EXPECT_EQ(s.decisions_compared(), 2);
  EXPECT_EQ(s.decisions_differed(), 1);
  EXPECT_EQ(s.engine_right(), 1);
  EXPECT_EQ(s.process_right(), 0);
  EXPECT_EQ(s.neither_right(), 0);
}

TEST(Pilot, MergedShardsRecomputeTheSummary) {
  v1::Truth t = Entry();
  t.mutable_corpus_entry()->mutable_postmortem()->set_operator_minutes(10);
  v1::EvalReport a, b;
  a.mutable_run()->add_strategies("engine");
  b.mutable_run()->add_strategies("engine");
  v1::PilotIncident p = Score(t, Engine(v1::OWNER_HOST), 6);
  p.set_incident("b");
  *a.add_pilot_incidents() = p;
  p.set_incident("a");
  *b.add_pilot_incidents() = p;
  auto merged = MergeReports({a, b});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_EQ(merged->pilot_incidents_size(), 2);
  EXPECT_EQ(merged->pilot_incidents(0).incident(), "a");
  EXPECT_EQ(merged->pilot().entries(), 2);
  EXPECT_DOUBLE_EQ(Dimension(merged->pilot(), "operator time").operator_minutes(), 20);
}

}  // namespace
}  // namespace denpex::scorer::testing
