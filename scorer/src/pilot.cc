// Pilot scoring (docs/evaluation.md, "Pilot"): a corpus entry's confirmed expected outcome is
// the arbiter; the engine's diagnosis and the team's recorded process (the postmortem) are each
// held against it, one dimension at a time. What the entry does not record stays unset.
#include <set>
#include <string_view>
#include <utility>

#include "denpex/scorer/scorer.h"
#include "text_helpers.h"

namespace denpex::scorer {
namespace {

// "OWNER_HOST" -> "host", "FAILURE_CLASS_HOST_OOM" -> "host_oom".
std::string OwnerText(v1::Owner o) { return Lower(WithoutPrefix(v1::Owner_Name(o), "OWNER_")); }
std::string ClassText(v1::FailureClass c) {
  return Lower(WithoutPrefix(v1::FailureClass_Name(c), "FAILURE_CLASS_"));
}

// A checkpoint as a path (relative to the checkpoint directory, or as a team names it) and a
// step (-1: unknown).
struct Checkpoint {
  std::string path;
  std::int64_t step = -1;
};

std::string CheckpointText(const Checkpoint& c) {
  return c.path.empty() ? "step " + std::to_string(c.step)
         : c.step >= 0  ? c.path + "@" + std::to_string(c.step)
                        : c.path;
}

// One path ends with the other at a '/' boundary: "checkpoints/step_10.pt" and "step_10.pt".
bool SamePath(const std::string& a, const std::string& b) {
  const std::string& longer = a.size() >= b.size() ? a : b;
  const std::string& shorter = a.size() >= b.size() ? b : a;
  if (shorter.empty() || !longer.ends_with(shorter)) return false;
  return longer.size() == shorter.size() || longer[longer.size() - shorter.size() - 1] == '/';
}

// By path when both name one, else by step when both know it.
bool SameCheckpoint(const Checkpoint& a, const Checkpoint& b) {
  if (!a.path.empty() && !b.path.empty()) return SamePath(a.path, b.path);
  return a.step >= 0 && a.step == b.step;
}

std::optional<Checkpoint> Resume(const v1::CheckpointOutcome& c) {
  if (c.decision() != v1::CHECKPOINT_DECISION_RESUME) return std::nullopt;
  return Checkpoint{c.path(), c.step()};
}

std::string DecisionText(const v1::CheckpointOutcome& c) {
  if (auto r = Resume(c)) return CheckpointText(*r);
  switch (c.decision()) {
    case v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT:
      return "no safe checkpoint";
    case v1::CHECKPOINT_DECISION_INCONCLUSIVE:
      return "inconclusive";
    default:
      return "not evaluated";
  }
}

v1::PilotRight Right(bool engine, bool process) {
  if (engine && process) return v1::PILOT_RIGHT_BOTH;
  if (engine) return v1::PILOT_RIGHT_ENGINE;
  if (process) return v1::PILOT_RIGHT_PROCESS;
  return v1::PILOT_RIGHT_NEITHER;
}

void AddDecision(const std::string& what, const std::string& engine, const std::string& process,
                 const std::string& expected, bool differed, bool engine_right, bool process_right,
                 v1::PilotIncident* p) {
  auto* d = p->add_decisions();
  d->set_decision(what);
  d->set_engine(engine);
  d->set_process(process);
  d->set_expected(expected);
  d->set_differed(differed);
  d->set_right(Right(engine_right, process_right));
}

bool JudgesCheckpoints(const v1::Truth& t) {
  const auto d = t.checkpoint().decision();
  return d != v1::CHECKPOINT_DECISION_UNSPECIFIED && d != v1::CHECKPOINT_DECISION_NOT_EVALUATED;
}

void ScoreOwnerAndClass(const v1::Truth& t, const v1::Diagnosis& d, const v1::IncidentScore& s,
                        v1::PilotIncident* p) {
  const bool committed = !s.inconclusive();
  const bool has_initiator = t.has_initiator() && t.verdict() != v1::VERDICT_INCONCLUSIVE;
  if (t.owner() != v1::OWNER_UNSPECIFIED || !has_initiator) p->set_owner_correct(s.owner_correct());
  const auto& pm = t.corpus_entry().postmortem();
  if (pm.process_owner() != v1::OWNER_UNSPECIFIED && p->has_owner_correct()) {
    const bool process_right = pm.process_owner() == t.owner();
    p->set_process_owner_correct(process_right);
    AddDecision("owner", committed ? OwnerText(d.owner()) : "inconclusive",
                OwnerText(pm.process_owner()),
                has_initiator ? OwnerText(t.owner()) : "inconclusive",
                !committed || d.owner() != pm.process_owner(), s.owner_correct(), process_right, p);
  }
  if (pm.process_failure_class() != v1::FAILURE_CLASS_UNSPECIFIED) {
    const auto want = t.initiator().failure_class();
    AddDecision("class", committed ? ClassText(d.initiator().failure_class()) : "inconclusive",
                ClassText(pm.process_failure_class()),
                has_initiator ? ClassText(want) : "inconclusive",
                !committed || d.initiator().failure_class() != pm.process_failure_class(),
                s.failure_class_correct(), has_initiator && pm.process_failure_class() == want, p);
  }
}

// The expected evidence lines the diagnosis cites, as IncidentScore.evidence_recall counts them.
void ScoreEvidence(const v1::Truth& t, const v1::Diagnosis& d, v1::PilotIncident* p) {
  if (t.evidence_size() == 0) return;
  std::set<std::pair<std::string, int>> cited;
  for (const auto& e : d.evidence()) cited.insert({e.file(), e.line()});
  int found = 0;
  for (const auto& e : t.evidence()) found += cited.count({e.file(), e.line()}) ? 1 : 0;
  p->set_evidence_expected(t.evidence_size());
  p->set_evidence_cited(found);
  p->set_evidence_recall(static_cast<double>(found) / t.evidence_size());
}

void ScoreRecovery(const v1::Truth& t, const v1::Diagnosis& d, const v1::IncidentScore& s,
                   v1::PilotIncident* p) {
  const auto& pm = t.corpus_entry().postmortem();
  const std::optional<Checkpoint> engine = Resume(d.checkpoint());
  p->set_engine_resume(DecisionText(d.checkpoint()));
  for (const auto& pre : d.recovery().preconditions()) p->add_engine_recovery(pre.text());
  for (const auto& r : pm.recovery()) p->add_process_recovery(r);
  if (s.has_checkpoint_correct()) p->set_checkpoint_correct(s.checkpoint_correct());
  if (pm.resumed_from().empty()) return;
  const Checkpoint team{pm.resumed_from(), pm.resumed_step()};
  p->set_process_resume(CheckpointText(team));
  const bool same = engine && SameCheckpoint(*engine, team);
  p->set_recovery_verified(same);
  if (!JudgesCheckpoints(t)) return;
  const std::optional<Checkpoint> want = Resume(t.checkpoint());
  const bool process_right = want && SameCheckpoint(*want, team);
  p->set_process_checkpoint_correct(process_right);
  AddDecision("checkpoint", p->engine_resume(), p->process_resume(), DecisionText(t.checkpoint()),
              !same, s.checkpoint_correct(), process_right, p);
}

void ScoreTime(const v1::Truth& t, const v1::IncidentScore& s, v1::PilotIncident* p) {
  p->set_engine_minutes(s.diagnose_seconds() / 60);
  const auto& pm = t.corpus_entry().postmortem();
  if (!pm.has_operator_minutes()) return;
  p->set_operator_minutes(pm.operator_minutes());
  const bool right = !s.inconclusive() && s.owner_correct();
  p->set_minutes_saved(right ? pm.operator_minutes() - p->engine_minutes() : 0.0);
}

// One dimension's totals; `right` and `process` read one entry (nullopt: not recorded).
struct Tally {
  int recorded = 0, right = 0, process_recorded = 0, process_right = 0;
  double sum = 0;
  void Add(std::optional<bool> engine, std::optional<bool> process, double value) {
    if (engine) {
      ++recorded;
      right += *engine ? 1 : 0;
      sum += value;
    }
    if (process) {
      ++process_recorded;
      process_right += *process ? 1 : 0;
    }
  }
  v1::PilotDimension ToProto(const char* name, bool mean_of_values) const {
    v1::PilotDimension d;
    d.set_dimension(name);
    d.set_recorded(recorded);
    d.set_engine_right(right);
    d.set_engine_score(recorded == 0 ? 0.0 : (mean_of_values ? sum : right) / recorded);
    d.set_process_recorded(process_recorded);
    d.set_process_right(process_right);
    return d;
  }
};

template <typename T>
std::optional<T> Opt(bool has, T v) {
  return has ? std::optional<T>(v) : std::nullopt;
}

}  // namespace

v1::PilotIncident ScorePilot(const v1::Truth& expected, const v1::Diagnosis& diagnosis,
                             const v1::IncidentScore& score) {
  v1::PilotIncident p;
  p.set_suite(score.suite());
  p.set_incident(score.incident());
  p.set_draft(expected.corpus_entry().draft());
  p.set_postmortem(expected.corpus_entry().has_postmortem());
  p.set_inconclusive(score.inconclusive());
  ScoreOwnerAndClass(expected, diagnosis, score, &p);
  ScoreEvidence(expected, diagnosis, &p);
  ScoreRecovery(expected, diagnosis, score, &p);
  ScoreTime(expected, score, &p);
  return p;
}

v1::PilotSummary SummarizePilot(const std::vector<v1::PilotIncident>& incidents) {
  v1::PilotSummary out;
  Tally owner, evidence, checkpoint, recovery, time;
  double operator_minutes = 0, engine_minutes = 0, saved = 0;
  for (const auto& p : incidents) {
    out.set_entries(out.entries() + 1);
    out.set_drafts(out.drafts() + (p.draft() ? 1 : 0));
    out.set_postmortems(out.postmortems() + (p.postmortem() ? 1 : 0));
    owner.Add(Opt(p.has_owner_correct(), p.owner_correct()),
              Opt(p.has_process_owner_correct(), p.process_owner_correct()), 0);
    evidence.Add(Opt(p.has_evidence_recall(), p.evidence_recall() >= 1.0), std::nullopt,
                 p.evidence_recall());
    checkpoint.Add(Opt(p.has_checkpoint_correct(), p.checkpoint_correct()),
                   Opt(p.has_process_checkpoint_correct(), p.process_checkpoint_correct()), 0);
    recovery.Add(Opt(p.has_recovery_verified(), p.recovery_verified()), std::nullopt, 0);
    time.Add(Opt(p.has_minutes_saved(), p.minutes_saved() > 0), std::nullopt, 0);
    if (p.has_operator_minutes()) {
      operator_minutes += p.operator_minutes();
      engine_minutes += p.engine_minutes();
      saved += p.minutes_saved();
    }
    for (const auto& d : p.decisions()) {
      out.set_decisions_compared(out.decisions_compared() + 1);
      if (!d.differed()) continue;
      out.set_decisions_differed(out.decisions_differed() + 1);
      if (d.right() == v1::PILOT_RIGHT_ENGINE) out.set_engine_right(out.engine_right() + 1);
      if (d.right() == v1::PILOT_RIGHT_PROCESS) out.set_process_right(out.process_right() + 1);
      if (d.right() == v1::PILOT_RIGHT_NEITHER) out.set_neither_right(out.neither_right() + 1);
    }
  }
  *out.add_dimensions() = owner.ToProto("causal owner", false);
  *out.add_dimensions() = evidence.ToProto("evidence completeness", true);
  *out.add_dimensions() = checkpoint.ToProto("checkpoint decision", false);
  *out.add_dimensions() = recovery.ToProto("verified recovery", false);
  v1::PilotDimension t = time.ToProto("operator time", false);
  t.set_operator_minutes(operator_minutes);
  t.set_engine_minutes(engine_minutes);
  t.set_minutes_saved(saved);
  *out.add_dimensions() = std::move(t);
  return out;
}

std::string PilotRightName(v1::PilotRight r) {
  switch (r) {
    case v1::PILOT_RIGHT_BOTH:
      return "both";
    case v1::PILOT_RIGHT_ENGINE:
      return "engine";
    case v1::PILOT_RIGHT_PROCESS:
      return "process";
    case v1::PILOT_RIGHT_NEITHER:
      return "neither";
    default:
      return "not compared";
  }
}

std::string PilotDimensionScore(const v1::PilotDimension& d, int entries) {
  const std::string of =
      std::to_string(d.recorded()) + " of " + std::to_string(entries) + " entries recorded";
  if (d.recorded() == 0) return "not recorded (" + of + ")";
  if (d.dimension() == "operator time") {
    return Fixed(d.minutes_saved(), 1) + " min saved (operators " + Fixed(d.operator_minutes(), 1) +
           " min, engine " + Fixed(d.engine_minutes(), 2) + " min; " + of + ")";
  }
  if (d.dimension() == "evidence completeness") {
    return "mean recall " + Fixed(100 * d.engine_score(), 1) + "%, complete " +
           std::to_string(d.engine_right()) + "/" + std::to_string(d.recorded()) + " (" + of + ")";
  }
  return std::to_string(d.engine_right()) + "/" + std::to_string(d.recorded()) + " (" + of + ")";
}

std::string RenderPilotTable(const v1::EvalReport& report) {
  if (!report.has_pilot()) return "";
  const v1::PilotSummary& s = report.pilot();
  std::string out = "pilot (engine on " + std::to_string(s.entries()) + " corpus entries, " +
                    std::to_string(s.drafts()) + " drafts, " + std::to_string(s.postmortems()) +
                    " with a postmortem):\n";
  for (const auto& d : s.dimensions()) {
    out += "  " + Pad(d.dimension() + ":", 23) + PilotDimensionScore(d, s.entries());
    if (d.process_recorded() > 0) {
      out += "; process " + std::to_string(d.process_right()) + "/" +
             std::to_string(d.process_recorded());
    }
    out += "\n";
  }
  out += "  decisions compared with the process: " + std::to_string(s.decisions_compared()) +
         ", differed " + std::to_string(s.decisions_differed()) + " (engine right " +
         std::to_string(s.engine_right()) + ", process right " + std::to_string(s.process_right()) +
         ", neither " + std::to_string(s.neither_right()) + ")\n";
  return out;
}

}  // namespace denpex::scorer
