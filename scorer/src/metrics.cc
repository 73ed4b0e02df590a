// Per-incident metrics: one Diagnosis against the Truth of the same incident. The
// definitions are the ones docs/evaluation.md publishes; change both together.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "denpex/common/time.h"
#include "denpex/scorer/scorer.h"
#include "text_helpers.h"

namespace denpex::scorer {
namespace {

// "FAULT_KIND_SIGKILL" -> "sigkill": the family a truth belongs to.
std::string FamilyOf(const v1::Truth& truth) {
  if (truth.events_size() == 0) return "none";
  std::string kind = truth.events(0).kind();
  const std::string prefix = "FAULT_KIND_";
  if (kind.rfind(prefix, 0) == 0) kind = kind.substr(prefix.size());
  return kind.empty() ? "none" : Lower(kind);
}

using Citation = std::pair<std::string, int>;  // (file, line)

double EvidenceRecall(const v1::Truth& truth, const v1::Diagnosis& d) {
  if (truth.evidence_size() == 0) return 1.0;
  std::set<Citation> cited;
  for (const auto& e : d.evidence()) cited.insert({e.file(), e.line()});
  int found = 0;
  for (const auto& e : truth.evidence()) found += cited.count({e.file(), e.line()}) ? 1 : 0;
  return static_cast<double>(found) / truth.evidence_size();
}

// Of the lines the diagnosis cites as initiating, the share the truth requires (in any role).
// Citing none is 0 when the truth has an initiating line (it was missed), and undefined when
// the truth has none either (the fault printed nothing: a lost host, a silent hang): there is
// nothing to be precise about, so the incident leaves the mean.
std::optional<double> EvidencePrecision(const v1::Truth& truth, const v1::Diagnosis& d) {
  std::set<Citation> required;
  bool truth_initiating = false;
  for (const auto& e : truth.evidence()) {
    required.insert({e.file(), e.line()});
    truth_initiating = truth_initiating || e.role() == v1::EVIDENCE_ROLE_INITIATING;
  }
  int initiating = 0, right = 0;
  for (const auto& e : d.evidence()) {
    if (e.role() != v1::EVIDENCE_ROLE_INITIATING) continue;
    ++initiating;
    right += required.count({e.file(), e.line()}) ? 1 : 0;
  }
  if (initiating == 0) return truth_initiating ? std::optional<double>(0.0) : std::nullopt;
  return static_cast<double>(right) / initiating;
}

bool SameNode(const std::string& a, const std::string& b) {
  return !a.empty() && Lower(a) == Lower(b);
}

// The whole job is the initiator (the scheduler ended it): no rank, no node.
bool JobLevel(const v1::Initiator& i) { return i.rank() < 0 && i.node().empty(); }

// A truth that names only a node (rank -1) is matched at node level; a job-level truth by
// an answer that names neither a rank nor a node.
bool MatchesInitiator(const v1::Initiator& want, int rank, const std::string& node) {
  if (JobLevel(want)) return rank < 0 && node.empty();
  return want.rank() >= 0 ? rank == want.rank() : SameNode(node, want.node());
}

// A committed answer judged at the level it answered (IncidentScore.committed_wrong): a rank
// must be the initiator; without one, a node must be the initiator's; a job-level truth takes
// neither. An answer that names neither for a truth that names a rank or a node says only what
// failed somewhere in the job (no line names the rank or the host): its class and owner must
// be the initiator's.
bool TrueAtItsLevel(const v1::Truth& truth, const v1::Diagnosis& d) {
  const v1::Initiator& want = truth.initiator();
  const v1::Initiator& got = d.initiator();
  if (JobLevel(want)) return JobLevel(got);
  if (got.rank() >= 0) {
    return want.rank() >= 0 ? got.rank() == want.rank() : SameNode(got.node(), want.node());
  }
  if (JobLevel(got)) return got.failure_class() == want.failure_class() && d.owner() == truth.owner();
  return SameNode(got.node(), want.node());
}

// The truth names no initiator (verdict INCONCLUSIVE, or no initiator block): abstaining is
// the right answer, and any committed answer is wrong.
bool TruthHasInitiator(const v1::Truth& truth) {
  return truth.has_initiator() && truth.verdict() != v1::VERDICT_INCONCLUSIVE;
}

void ScoreInitiator(const v1::Truth& truth, const v1::Diagnosis& d, v1::IncidentScore* s) {
  const bool committed = d.verdict() == v1::VERDICT_DIAGNOSED;
  const auto& want = truth.initiator();
  s->set_inconclusive(!committed);
  s->set_truth_rank(TruthHasInitiator(truth) ? want.rank() : -1);
  s->set_truth_node(want.node());
  s->set_answer_rank(committed ? d.initiator().rank() : -1);
  s->set_answer_node(committed ? d.initiator().node() : "");
  if (!TruthHasInitiator(truth)) {
    const bool node_ok = want.node().empty() || SameNode(d.initiator().node(), want.node());
    s->set_initiator_rank_correct(!committed);
    s->set_initiator_node_correct(!committed && node_ok);
    s->set_initiator_rank_top3(!committed);
    s->set_owner_correct(!committed);
    s->set_failure_class_correct(!committed);
    s->set_committed_wrong(committed);
    return;
  }
  const bool node_ok =
      committed && (JobLevel(want) ? d.initiator().node().empty()
                                   : SameNode(d.initiator().node(), want.node()));
  const bool rank_ok =
      committed && MatchesInitiator(want, d.initiator().rank(), d.initiator().node());
  bool top3 = rank_ok;
  for (int i = 0; i < std::min(3, d.candidates_size()); ++i) {
    top3 |= MatchesInitiator(want, d.candidates(i).rank(), d.candidates(i).node());
  }
  s->set_initiator_node_correct(node_ok);
  s->set_initiator_rank_correct(rank_ok);
  s->set_initiator_rank_top3(top3);
  s->set_committed_wrong(committed && !TrueAtItsLevel(truth, d));
  s->set_owner_correct(committed && d.owner() == truth.owner());
  s->set_failure_class_correct(committed &&
                               d.initiator().failure_class() == want.failure_class());
}

// Committed to the right initiator: what compression and recovered GPU-hours credit.
bool RightAnswer(const v1::IncidentScore& s) {
  return !s.inconclusive() && s.initiator_rank_correct();
}

void ScoreCascade(const v1::Truth& truth, const v1::Diagnosis& d, v1::IncidentScore* s) {
  const int secondary = truth.cascade().secondary_errors();
  if (secondary > 0) {
    const double grouped = std::max(0, d.cascade().grouped_errors());
    s->set_cascade_compression(
        RightAnswer(*s) ? std::min(1.0, grouped / secondary) : 0.0);
  }
  if (truth.has_cascade() && d.cascade().secondary_ranks_size() > 0) {
    const std::set<int> truly(truth.cascade().secondary_ranks().begin(),
                              truth.cascade().secondary_ranks().end());
    int pure = 0;
    for (int r : d.cascade().secondary_ranks()) pure += truly.count(r) ? 1 : 0;
    s->set_cascade_purity(static_cast<double>(pure) / d.cascade().secondary_ranks_size());
  }
}

void ScoreCheckpoint(const v1::Truth& truth, const v1::Diagnosis& d, v1::IncidentScore* s) {
  const auto& want = truth.checkpoint();
  if (want.decision() == v1::CHECKPOINT_DECISION_UNSPECIFIED ||
      want.decision() == v1::CHECKPOINT_DECISION_NOT_EVALUATED) {
    return;  // the truth does not judge checkpoints
  }
  const auto& got = d.checkpoint();
  const bool resume_wanted = want.decision() == v1::CHECKPOINT_DECISION_RESUME;
  const bool resumed = got.decision() == v1::CHECKPOINT_DECISION_RESUME;
  s->set_checkpoint_correct(got.decision() == want.decision() &&
                            (!resume_wanted || got.step() == want.step()));
  if (resume_wanted) s->set_checkpoint_newest_safe(resumed && got.step() == want.step());
  if (!resumed) return;
  s->set_checkpoint_resume_step(got.step());

  // The newest safe step bounds a safe resume: RESUME's step, or for INCONCLUSIVE (an
  // unknown newer format) the older save that verifies, when the truth names one.
  const bool bounded = resume_wanted ||
                       (want.decision() == v1::CHECKPOINT_DECISION_INCONCLUSIVE && !want.path().empty());
  std::int64_t newest = bounded ? want.step() : -1;
  bool rejected_path = false;
  for (const auto& r : want.rejected()) {
    newest = std::max(newest, r.step());
    rejected_path |= !got.path().empty() && r.path() == got.path();
  }
  newest = std::max(newest, want.last_written_step());
  const bool unsafe = !bounded || got.step() > want.step() || rejected_path;
  s->set_checkpoint_unsafe(unsafe);
  if (unsafe) return;
  s->set_checkpoint_excess_steps(want.step() - got.step());
  s->set_checkpoint_rewind_steps(newest - got.step());
}

// The truth's history store (Truth.recurrence): the diagnosis counted the same earlier node
// and GPU incidents, escalated exactly when the truth does, and then put the truth's first
// precondition first. A wrong initiator reads the wrong node's history, so it scores false.
void ScoreRecurrence(const v1::Truth& truth, const v1::Diagnosis& d, v1::IncidentScore* s) {
  if (!truth.has_recurrence()) return;
  const v1::Recurrence& want = truth.recurrence();
  const v1::Recurrence& got = d.recurrence();
  bool ok = RightAnswer(*s) && d.has_recurrence() && got.node_incidents() == want.node_incidents() &&
            got.gpu_incidents() == want.gpu_incidents() && got.escalated() == want.escalated();
  if (ok && want.escalated()) {
    const auto& w = truth.recovery().preconditions();
    const auto& g = d.recovery().preconditions();
    ok = !w.empty() && !g.empty() && g[0].action() == w[0].action();
  }
  s->set_recurrence_correct(ok);
}

// The truth's bad link (Truth.link): the diagnosis names the same two ends, in either order:
// the same nodes, and the same HCA at each end where both name one. Which end failed first is
// scored by rank@1 (the truth's initiator is that end), not here.
bool SameEnd(const std::string& node, const std::string& hca, const std::string& want_node, const std::string& want_hca) {
  return SameNode(node, want_node) && (hca.empty() || want_hca.empty() || Lower(hca) == Lower(want_hca));
}

void ScoreLink(const v1::Truth& truth, const v1::Diagnosis& d, v1::IncidentScore* s) {
  if (!truth.has_link()) return;
  const v1::Link& w = truth.link();
  const v1::Link& g = d.link();
  const bool same = SameEnd(g.node_a(), g.hca_a(), w.node_a(), w.hca_a()) && SameEnd(g.node_b(), g.hca_b(), w.node_b(), w.hca_b());
  const bool swapped = SameEnd(g.node_a(), g.hca_a(), w.node_b(), w.hca_b()) && SameEnd(g.node_b(), g.hca_b(), w.node_a(), w.hca_a());
  s->set_link_correct(d.verdict() == v1::VERDICT_DIAGNOSED && d.has_link() && (same || swapped));
}

}  // namespace

std::optional<TimeNs> FaultTime(const v1::Truth& truth) {
  for (const std::string& t : {truth.job().fault_time(), truth.initiator().time()}) {
    if (auto v = ParseRfc3339(t)) return v;
  }
  if (truth.events_size() > 0) return ParseRfc3339(truth.events(0).time());
  return std::nullopt;
}

namespace {

void ScoreTime(const v1::Truth& truth, const ScoreOptions& o, v1::IncidentScore* s) {
  const double world = truth.job().world_size();
  const bool right = RightAnswer(*s);
  if (o.manual_triage_minutes > 0) {
    const double saved_s = std::max(0.0, o.manual_triage_minutes * 60 - o.diagnose_seconds);
    s->set_gpu_hours_triage_saved(right ? world * saved_s / 3600 : 0.0);
  }
  const auto fault = FaultTime(truth);
  const auto end = ParseRfc3339(truth.job().end_time());
  if (!fault || !end || *end < *fault) return;
  const double cascade_s = static_cast<double>(*end - *fault) / kNsPerSec;
  s->set_answer_after_fault_seconds(cascade_s + o.diagnose_seconds);
  s->set_cascade_gpu_hours(world * cascade_s / 3600);
  const double avoidable_s = std::max(0.0, cascade_s - o.diagnose_seconds);
  s->set_gpu_hours_recovered(right ? world * avoidable_s / 3600 : 0.0);
}

}  // namespace

std::string ScaleBucket(int world_size) {
  if (world_size <= 0) return "unknown";
  if (world_size < 1024) return "<1k";
  if (world_size < 2048) return "1k";
  if (world_size < 8192) return "2k-4k";
  if (world_size < 32768) return "8k-16k";
  return "32k+";
}

v1::IncidentScore ScoreIncident(const v1::Truth& truth, const v1::Diagnosis& d,
                                const ScoreOptions& options) {
  v1::IncidentScore s;
  s.set_incident(truth.scenario());
  s.set_seed(truth.seed());
  s.set_strategy(d.strategy());
  s.set_family(FamilyOf(truth));
  s.set_world_size(truth.job().world_size());
  s.set_launcher(truth.job().launcher().empty() ? "unspecified" : Lower(truth.job().launcher()));
  s.set_scale(ScaleBucket(truth.job().world_size()));
  s.set_weight(1.0);
  s.set_diagnose_seconds(options.diagnose_seconds);
  s.set_expected_draft(truth.corpus_entry().draft());
  ScoreInitiator(truth, d, &s);
  s.set_evidence_recall(EvidenceRecall(truth, d));
  if (s.inconclusive()) {
    s.set_evidence_precision(0.0);
  } else if (const auto precision = EvidencePrecision(truth, d)) {
    s.set_evidence_precision(*precision);
  }
  ScoreCascade(truth, d, &s);
  ScoreCheckpoint(truth, d, &s);
  ScoreRecurrence(truth, d, &s);
  ScoreLink(truth, d, &s);
  ScoreTime(truth, options, &s);
  return s;
}

namespace {

// The step a checkpoint decision really lets the run continue from (see
// IncidentScore.checkpoint_rewind_avoided).
std::int64_t EffectiveStep(const v1::IncidentScore& s) {
  return s.has_checkpoint_resume_step() && !s.checkpoint_unsafe() ? s.checkpoint_resume_step() : 0;
}

}  // namespace

void CompareCheckpointRewind(std::vector<v1::IncidentScore>* scores, const std::string& baseline) {
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::int64_t> base;
  for (const auto& s : *scores) {
    if (s.strategy() == baseline && s.has_checkpoint_correct())
      base[{s.suite(), s.incident(), s.seed()}] = EffectiveStep(s);
  }
  for (auto& s : *scores) {
    if (!s.has_checkpoint_correct()) continue;
    const auto it = base.find({s.suite(), s.incident(), s.seed()});
    if (it != base.end()) s.set_checkpoint_rewind_avoided(EffectiveStep(s) - it->second);
  }
}

}  // namespace denpex::scorer
