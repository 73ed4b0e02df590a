// The canary's judgement (denpex/engine/canary.h, docs/canary.md "Checks"): five checks from the
// two runs' training metrics and the canary's diagnoses, each citing the lines it rests on.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "denpex/engine/canary.h"

namespace denpex::engine {
namespace {

std::string Num(double v, const char* fmt = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
std::string Pct(double share) { return Num(100 * share, "%.0f") + "%"; }

std::string ClassName(v1::FailureClass c) {
  std::string name = v1::FailureClass_Name(c);
  return name.starts_with("FAILURE_CLASS_") ? name.substr(14) : name;
}

// "SIGNAL_KILL of rank 1 on node-a": what a diagnosis names.
std::string Named(const v1::Diagnosis& d) {
  const v1::Initiator& in = d.initiator();
  std::string s = ClassName(in.failure_class());
  if (in.rank() >= 0) s += " of rank " + std::to_string(in.rank());
  if (!in.node().empty()) s += (in.rank() >= 0 ? " on " : " on node ") + in.node();
  return s;
}

std::string SeriesName(const TrainingSeries& s) {
  return s.rank >= 0 ? "rank " + std::to_string(s.rank) : s.stream;
}

const TrainingSeries* SeriesOfRank(const TrainingMetrics& m, std::int32_t rank) {
  for (const TrainingSeries& s : m.series) {
    if (s.rank == rank && !s.steps.empty()) return &s;
  }
  return nullptr;
}

std::int64_t LastStep(const TrainingSeries& s) {
  std::int64_t last = -1;
  for (const TrainingStep& t : s.steps) last = std::max(last, t.step);
  return last;
}
const TrainingStep* LastStepLine(const TrainingSeries& s) {
  const TrainingStep* best = nullptr;
  for (const TrainingStep& t : s.steps) {
    if (best == nullptr || t.step > best->step) best = &t;
  }
  return best;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

v1::CanaryCheck* Add(v1::CanaryReport* r, const char* name, v1::CanaryCheckResult result,
                     std::string detail) {
  v1::CanaryCheck* c = r->add_checks();
  c->set_name(name);
  c->set_result(result);
  c->set_detail(std::move(detail));
  return c;
}

// Every required rank (every canary series when the failed run named none) brought to `until`.
void StepsReached(const CanaryEvidence& e, std::int64_t until, v1::CanaryReport* r) {
  const std::vector<std::int32_t> ranks = CanaryRanks(*e.failed);
  std::vector<const TrainingSeries*> series;
  std::vector<std::string> missing;
  if (ranks.empty()) {
    for (const TrainingSeries& s : e.canary->series) series.push_back(&s);
  } else {
    for (std::int32_t rank : ranks) {
      const TrainingSeries* s = SeriesOfRank(*e.canary, rank);
      if (s == nullptr)
        missing.push_back(std::to_string(rank));
      else
        series.push_back(s);
    }
  }
  const TrainingSeries* lag = nullptr;
  for (const TrainingSeries* s : series) {
    if (lag == nullptr || LastStep(*s) < LastStep(*lag)) lag = s;
  }
  const std::string want = "step " + std::to_string(until) + " (resume step " +
                           std::to_string(e.resume_step) + " + " +
                           std::to_string(until - e.resume_step) + ")";
  if (lag == nullptr) {
    auto* c =
        Add(r, "steps_reached", v1::CANARY_CHECK_FAIL,
            "the canary printed no step line, so it reached no step; it had to reach " + want);
    c->set_limit(static_cast<double>(until));
    return;
  }
  std::string who = ranks.empty() ? std::to_string(series.size()) + " series"
                                  : std::to_string(ranks.size()) + " rank(s) of the failed run";
  v1::CanaryCheck* c;
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 8; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 8) list += ", ...";
    c = Add(r, "steps_reached", v1::CANARY_CHECK_FAIL,
            std::to_string(missing.size()) + " of the " + who +
                " printed no step in the canary (rank " + list + "); every one had to reach " +
                want);
  } else if (LastStep(*lag) < until) {
    c = Add(r, "steps_reached", v1::CANARY_CHECK_FAIL,
            SeriesName(*lag) + " stopped at step " + std::to_string(LastStep(*lag)) +
                "; every one of the " + who + " had to reach " + want);
  } else {
    c = Add(r, "steps_reached", v1::CANARY_CHECK_PASS,
            "every one of the " + who + " reached " + want);
  }
  c->set_canary_value(static_cast<double>(LastStep(*lag)));
  c->set_limit(static_cast<double>(until));
  if (const TrainingStep* t = LastStepLine(*lag)) c->add_canary_evidence(t->Cite());
}

// The canary series compared with the baseline: the baseline's rank, else the first series.
const TrainingSeries* Reference(const TrainingMetrics& canary, std::int32_t rank) {
  if (rank >= 0) {
    if (const TrainingSeries* s = SeriesOfRank(canary, rank)) return s;
  }
  for (const TrainingSeries& s : canary.series) {
    if (!s.steps.empty()) return &s;
  }
  return nullptr;
}

void Resumed(const CanaryEvidence& e, const TrainingSeries* ref, const Baseline& at_ckpt,
             std::int64_t until, v1::CanaryReport* r) {
  if (ref == nullptr) {
    Add(r, "resumed", v1::CANARY_CHECK_NOT_MEASURED, "the canary printed no step line");
    return;
  }
  const TrainingStep& first = ref->steps.front();
  const std::string resume = std::to_string(e.resume_step);
  v1::CanaryCheck* c;
  if (first.step > e.resume_step && first.step <= until) {
    c = Add(r, "resumed", v1::CANARY_CHECK_PASS,
            SeriesName(*ref) + "'s first step is " + std::to_string(first.step) +
                ": it continued from the checkpoint's step " + resume);
  } else if (first.step <= e.resume_step) {
    c = Add(r, "resumed", v1::CANARY_CHECK_FAIL,
            SeriesName(*ref) + "'s first step is " + std::to_string(first.step) +
                ": the command did not resume from the checkpoint of step " + resume +
                " (give it {checkpoint} or read DENPEX_RESUME_CHECKPOINT)");
  } else {
    c = Add(r, "resumed", v1::CANARY_CHECK_FAIL,
            SeriesName(*ref) + "'s first step is " + std::to_string(first.step) +
                ", past the checkpoint's step " + resume +
                " + the canary's steps: not this checkpoint's run");
  }
  c->set_canary_value(static_cast<double>(first.step));
  c->set_baseline_value(static_cast<double>(e.resume_step));
  c->add_canary_evidence(first.Cite());
  if (at_ckpt.found) c->add_baseline_evidence(at_ckpt.last_step_cite);
}

// The canary's median seconds per step: every series' steps past the resume step, less each
// series' first (its warm-up: the first step after a start pays for it).
void StepTime(const CanaryEvidence& e, const Baseline& pace, const CanaryOptions& o,
              const TrainingSeries* ref, v1::CanaryReport* r) {
  std::vector<double> values;
  const TrainingStep *first = nullptr, *last = nullptr;
  for (const TrainingSeries& s : e.canary->series) {
    for (std::size_t i = 1; i < s.steps.size(); ++i) {
      const TrainingStep& t = s.steps[i];
      if (t.step <= e.resume_step || !t.seconds_per_step) continue;
      values.push_back(*t.seconds_per_step);
      if (&s == ref) {
        if (first == nullptr) first = &t;
        last = &t;
      }
    }
  }
  if (values.empty() || !pace.median_seconds_per_step) {
    auto* c =
        Add(r, "step_time", v1::CANARY_CHECK_NOT_MEASURED,
            values.empty() ? "the canary's step lines give no seconds per step past its first step"
                           : "the failed run's step lines give no seconds per step");
    if (!values.empty()) c->set_canary_value(Median(values));
    return;
  }
  const double canary = Median(values), base = *pace.median_seconds_per_step;
  const double limit = base * (1 + o.step_time_tolerance);
  const std::string said =
      "median " + Num(canary) + " s/step over " + std::to_string(values.size()) +
      " canary step(s) against the failed run's " + Num(base) + " s/step (" +
      SeriesName(TrainingSeries{.rank = pace.rank, .stream = pace.stream}) + ", its last " +
      std::to_string(pace.steps_measured) + " step(s) before the failure); the limit is " +
      Num(limit) + " (+" + Pct(o.step_time_tolerance) + ")";
  auto* c =
      Add(r, "step_time", canary <= limit ? v1::CANARY_CHECK_PASS : v1::CANARY_CHECK_FAIL, said);
  c->set_canary_value(canary);
  c->set_baseline_value(base);
  c->set_limit(limit);
  if (first != nullptr) c->add_canary_evidence(first->Cite());
  if (last != nullptr && last != first) c->add_canary_evidence(last->Cite());
  c->add_baseline_evidence(pace.last_step_cite);
}

// The canary's first loss against the failed run's last loss at or before the checkpoint's step,
// of the same rank where both name one.
void Loss(const CanaryEvidence& e, const Baseline& at_ckpt, const CanaryOptions& o,
          const TrainingSeries* ref, v1::CanaryReport* r) {
  Baseline base = at_ckpt;
  if (ref != nullptr && ref->rank >= 0) {
    if (const TrainingSeries* same = SeriesOfRank(*e.failed, ref->rank)) {
      Baseline b = SummarizeSeries(*same, {.not_after_step = e.resume_step});
      if (b.last_loss) base = b;
    }
  }
  const TrainingStep* first = nullptr;
  if (ref != nullptr) {
    for (const TrainingStep& t : ref->steps) {
      if (t.loss) {
        first = &t;
        break;
      }
    }
  }
  if (first == nullptr || !base.last_loss) {
    Add(r, "loss", v1::CANARY_CHECK_NOT_MEASURED,
        first == nullptr ? "the canary's step lines print no loss"
                         : "the failed run's step lines print no loss at or before step " +
                               std::to_string(e.resume_step));
    return;
  }
  const double c = *first->loss, b = *base.last_loss;
  const double off = std::fabs(c - b), limit = o.loss_tolerance * std::fabs(b);
  const bool pass = std::isfinite(c) && off <= limit;
  const std::string said = SeriesName(*ref) + "'s first loss " + Num(c) + " (step " +
                           std::to_string(first->step) + ") against " + Num(b) +
                           " at the failed run's step " + std::to_string(base.last_step) +
                           " (the checkpoint's step " + std::to_string(e.resume_step) +
                           "): " + (pass ? "within " : "off by more than ") + Pct(o.loss_tolerance);
  auto* chk = Add(r, "loss", pass ? v1::CANARY_CHECK_PASS : v1::CANARY_CHECK_FAIL, said);
  chk->set_canary_value(c);
  chk->set_baseline_value(b);
  chk->set_limit(limit);
  chk->add_canary_evidence(first->Cite());
  chk->add_baseline_evidence(base.last_loss_cite);
}

// Whether a diagnosis of the canary named a failure; `*said` the phrase the summary quotes.
void Failure(const CanaryEvidence& e, v1::CanaryReport* r, std::string* short_said) {
  const v1::Diagnosis& before = *e.diagnosis;
  v1::CanaryCheck* c;
  if (e.failures.empty()) {
    c = Add(r, "failure", v1::CANARY_CHECK_PASS,
            "no diagnosis of the canary named a failure" +
                (before.verdict() == v1::VERDICT_DIAGNOSED
                     ? " (the failed run's: " + Named(before) + ")"
                     : std::string()));
  } else {
    const v1::Diagnosis& d = e.failures.back();
    const bool same_class = before.verdict() == v1::VERDICT_DIAGNOSED &&
                            before.initiator().failure_class() == d.initiator().failure_class();
    const bool diagnosed = before.verdict() == v1::VERDICT_DIAGNOSED;
    const bool same_rank = diagnosed && before.initiator().rank() >= 0 &&
                           before.initiator().rank() == d.initiator().rank();
    const bool same_node = diagnosed && !before.initiator().node().empty() &&
                           before.initiator().node() == d.initiator().node();
    std::string said;
    if (same_class) {
      said = "the failure's signature recurred: " + Named(d) + ", as in the failed run (" +
             Named(before) + ")" +
             (same_rank   ? ", on the same rank"
              : same_node ? ", on the same node"
                          : ", elsewhere this time");
    } else {
      said =
          "the canary failed otherwise: " + Named(d) +
          (before.verdict() == v1::VERDICT_DIAGNOSED ? " (the failed run's: " + Named(before) + ")"
                                                     : std::string());
    }
    *short_said = same_class ? "the failure's signature recurred: " + Named(d)
                             : "another failure: " + Named(d);
    said += ": " + d.reason();
    c = Add(r, "failure", v1::CANARY_CHECK_FAIL, said);
    int n = 0;
    for (const v1::Evidence& ev : d.evidence()) {
      if (n++ == 3) break;
      c->add_canary_evidence(ev.file() + ":" + std::to_string(ev.line()));
    }
  }
  int n = 0;
  for (const v1::Evidence& ev : before.evidence()) {
    if (n++ == 3) break;
    c->add_baseline_evidence(ev.file() + ":" + std::to_string(ev.line()));
  }
}

}  // namespace

std::vector<std::int32_t> CanaryRanks(const TrainingMetrics& failed) {
  std::set<std::int32_t> ranks;
  for (const TrainingSeries& s : failed.series) {
    if (s.rank >= 0 && !s.steps.empty()) ranks.insert(s.rank);
  }
  return {ranks.begin(), ranks.end()};
}

bool CanaryReached(const TrainingMetrics& canary, const std::vector<std::int32_t>& ranks,
                   std::int64_t until) {
  if (ranks.empty()) {
    if (canary.series.empty()) return false;
    return std::all_of(canary.series.begin(), canary.series.end(),
                       [&](const TrainingSeries& s) { return LastStep(s) >= until; });
  }
  return std::all_of(ranks.begin(), ranks.end(), [&](std::int32_t rank) {
    const TrainingSeries* s = SeriesOfRank(canary, rank);
    return s != nullptr && LastStep(*s) >= until;
  });
}

void JudgeCanary(const CanaryEvidence& e, const CanaryOptions& o, v1::CanaryReport* r) {
  r->clear_checks();
  const std::int64_t until = e.resume_step + o.steps;
  const Baseline at_ckpt = SummarizeBaseline(*e.failed, {.not_after_step = e.resume_step});
  BaselineBound before_fault;
  if (e.diagnosis->verdict() == v1::VERDICT_DIAGNOSED)
    before_fault.not_after_time = ParseRfc3339(e.diagnosis->initiator().time());
  const Baseline pace = SummarizeBaseline(*e.failed, before_fault);
  const TrainingSeries* ref = Reference(*e.canary, at_ckpt.found ? at_ckpt.rank : pace.rank);

  StepsReached(e, until, r);
  Resumed(e, ref, at_ckpt, until, r);
  StepTime(e, pace, o, ref, r);
  Loss(e, at_ckpt, o, ref, r);
  std::string failure;
  Failure(e, r, &failure);

  const bool no_canary_steps = ref == nullptr, no_baseline = !pace.found;
  if (no_canary_steps) {
    r->add_problems(
        "the canary's output holds no step line of a trainer docs/metrics.md knows (Megatron, "
        "DeepSpeed, torchtitan, HF Trainer, `rank=<R> step=<n> loss=<l> step_ms=<ms>`): did the "
        "command's ranks write their output under the canary's directory?");
  }
  if (no_baseline) {
    r->add_problems(
        "the failed run's logs hold no step line of a trainer docs/metrics.md knows: "
        "there is no baseline to compare with");
  }
  std::vector<std::string> failed, unmeasured;
  for (const v1::CanaryCheck& c : r->checks()) {
    if (c.result() == v1::CANARY_CHECK_FAIL) failed.push_back(c.name());
    if (c.result() == v1::CANARY_CHECK_NOT_MEASURED) unmeasured.push_back(c.name());
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  if ((no_canary_steps || no_baseline) && e.failures.empty()) {
    r->set_verdict(v1::CANARY_NOT_JUDGED);
    r->set_summary("NOT_JUDGED: " + std::string(no_canary_steps ? "the canary" : "the failed run") +
                   " printed no step line, and no failure was seen: nothing to compare");
    return;
  }
  if (failed.empty() && unmeasured.empty()) {
    r->set_verdict(v1::CANARY_GO);
    r->set_summary("GO: all " + std::to_string(r->checks_size()) + " checks passed");
    return;
  }
  r->set_verdict(v1::CANARY_NO_GO);
  std::string s = "NO_GO:";
  if (!failed.empty()) s += " failed " + join(failed);
  if (!unmeasured.empty())
    s += std::string(failed.empty() ? "" : ";") + " not measured " + join(unmeasured);
  if (!failure.empty()) s += " (" + failure + ")";
  r->set_summary(s);
}

std::string RenderCanaryText(const v1::CanaryReport& r) {
  std::string s = "canary " + r.summary() + "\n";
  s += "  resumed from " + r.checkpoint() + " (step " + std::to_string(r.resume_step()) +
       ", from the " + r.checkpoint_source() + "), " + std::to_string(r.steps()) +
       " step(s) past it\n";
  if (!r.exclude().empty()) s += "  excluded (drained): " + r.exclude() + "\n";
  if (!r.nodes().empty()) s += "  nodes: " + r.nodes() + "\n";
  if (!r.include().empty()) s += "  must include (the recovery's canary): " + r.include() + "\n";
  if (r.command_size() > 0) {
    s += "  command:";
    for (const std::string& a : r.command()) s += " " + a;
    s += "\n";
  }
  if (!r.ended().empty()) s += "  ended: " + r.ended() + " (" + Num(r.seconds(), "%.1f") + " s)\n";
  for (const v1::CanaryCheck& c : r.checks()) {
    const char* word = c.result() == v1::CANARY_CHECK_PASS   ? "PASS"
                       : c.result() == v1::CANARY_CHECK_FAIL ? "FAIL"
                                                             : "N/A ";
    s += "  " + std::string(word) + " " + c.name() + ": " + c.detail() + "\n";
    if (c.canary_evidence_size() > 0) {
      s += "       canary (" + r.out() + "):";
      for (const std::string& at : c.canary_evidence()) s += " " + at;
      s += "\n";
    }
    if (c.baseline_evidence_size() > 0) {
      s += "       failed run (" + r.incident() + "):";
      for (const std::string& at : c.baseline_evidence()) s += " " + at;
      s += "\n";
    }
  }
  for (const std::string& p : r.problems()) s += "  problem: " + p + "\n";
  return s;
}

v1::CanaryRecord CanaryHistoryRecord(const v1::CanaryReport& r, const v1::Diagnosis& d,
                                     TimeNs ended) {
  v1::CanaryRecord e;
  e.set_kind("canary");
  e.set_time(FormatRfc3339(ended - ended % 1'000'000));
  if (d.verdict() == v1::VERDICT_DIAGNOSED) {
    e.set_node(d.initiator().node());
    e.set_gpu(d.initiator().gpu());
    e.set_failure_class(d.initiator().failure_class());
    e.set_owner(d.owner());
  }
  e.set_incident(r.incident());
  e.set_verdict(r.verdict());
  e.set_canary(r.out());
  return e;
}

}  // namespace denpex::engine
