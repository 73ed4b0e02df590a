// Aggregation of per-incident scores per (strategy, group), and the report order of
// incidents. Every mean is weighted by IncidentScore.weight (1 unless a suite says
// otherwise); metrics that apply to some incidents only average over those.
#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <utility>

#include "denpex/scorer/scorer.h"

namespace denpex::scorer {
namespace {

// A weighted mean and how many incidents fed it.
struct Mean {
  double sum = 0, weight = 0;
  int n = 0;
  void Add(double v, double w) {
    sum += v * w;
    weight += w;
    ++n;
  }
  double Value() const { return weight > 0 ? sum / weight : 0.0; }
};

struct Acc {
  int n = 0, committed = 0;
  Mean rank, node, top3, owner, cls, recall, precision, coverage, precision_committed;
  Mean compression, purity, ckpt_correct, ckpt_unsafe, excess, rewind, newest_safe, avoided;
  Mean recurrence, link, wrong_rate;
  int unsafe_resumes = 0, wrong = 0, drafts = 0;
  Mean diagnose, answer, cascade_gh, recovered_gh, triage_gh;
  double diagnose_max = 0, weight = 0;

  void Add(const v1::IncidentScore& s) {
    const double w = s.weight() > 0 ? s.weight() : 1.0;
    const bool committed_now = !s.inconclusive();
    ++n;
    committed += committed_now ? 1 : 0;
    weight += w;
    rank.Add(s.initiator_rank_correct(), w);
    node.Add(s.initiator_node_correct(), w);
    top3.Add(s.initiator_rank_top3(), w);
    owner.Add(s.owner_correct(), w);
    cls.Add(s.failure_class_correct(), w);
    recall.Add(s.evidence_recall(), w);
    coverage.Add(committed_now, w);
    if (committed_now) {
      if (s.has_evidence_precision()) precision.Add(s.evidence_precision(), w);
      precision_committed.Add(s.initiator_rank_correct(), w);
      wrong_rate.Add(s.committed_wrong(), w);
    }
    wrong += s.committed_wrong() ? 1 : 0;
    drafts += s.expected_draft() ? 1 : 0;
    if (s.has_cascade_compression()) compression.Add(s.cascade_compression(), w);
    if (s.has_cascade_purity()) purity.Add(s.cascade_purity(), w);
    if (s.has_checkpoint_correct()) {
      ckpt_correct.Add(s.checkpoint_correct(), w);
      ckpt_unsafe.Add(s.checkpoint_unsafe(), w);
      unsafe_resumes += s.checkpoint_unsafe() ? 1 : 0;
    }
    if (s.has_checkpoint_newest_safe()) newest_safe.Add(s.checkpoint_newest_safe(), w);
    if (s.has_checkpoint_rewind_avoided()) avoided.Add(static_cast<double>(s.checkpoint_rewind_avoided()), w);
    if (s.has_checkpoint_excess_steps()) excess.Add(s.checkpoint_excess_steps(), w);
    if (s.has_checkpoint_rewind_steps()) rewind.Add(s.checkpoint_rewind_steps(), w);
    if (s.has_recurrence_correct()) recurrence.Add(s.recurrence_correct(), w);
    if (s.has_link_correct()) link.Add(s.link_correct(), w);
    diagnose.Add(s.diagnose_seconds(), w);
    diagnose_max = std::max(diagnose_max, s.diagnose_seconds());
    if (s.has_answer_after_fault_seconds()) answer.Add(s.answer_after_fault_seconds(), w);
    if (s.has_cascade_gpu_hours()) cascade_gh.Add(s.cascade_gpu_hours(), w);
    if (s.has_gpu_hours_recovered()) recovered_gh.Add(s.gpu_hours_recovered(), w);
    if (s.has_gpu_hours_triage_saved()) triage_gh.Add(s.gpu_hours_triage_saved(), w);
  }

  v1::AggregateScore ToProto(const std::string& strategy, const std::string& group) const {
    v1::AggregateScore g;
    g.set_strategy(strategy);
    g.set_group(group);
    g.set_incidents(n);
    g.set_committed(committed);
    g.set_weight(weight);
    g.set_initiator_rank_top1(rank.Value());
    g.set_initiator_node_top1(node.Value());
    g.set_initiator_rank_top3(top3.Value());
    g.set_owner_accuracy(owner.Value());
    g.set_failure_class_accuracy(cls.Value());
    g.set_evidence_recall(recall.Value());
    g.set_evidence_precision(precision.Value());
    g.set_precision_incidents(precision.n);
    g.set_coverage(coverage.Value());
    g.set_precision_committed(precision_committed.Value());
    g.set_committed_wrong(wrong);
    g.set_committed_wrong_rate(wrong_rate.Value());
    g.set_drafts(drafts);
    g.set_cascade_compression(compression.Value());
    g.set_cascade_incidents(compression.n);
    g.set_cascade_purity(purity.Value());
    g.set_purity_incidents(purity.n);
    g.set_checkpoint_accuracy(ckpt_correct.Value());
    g.set_checkpoint_incidents(ckpt_correct.n);
    g.set_checkpoint_unsafe_rate(ckpt_unsafe.Value());
    g.set_checkpoint_excess_steps(excess.Value());
    g.set_checkpoint_rewind_steps(rewind.Value());
    g.set_checkpoint_safe_resumes(excess.n);
    g.set_checkpoint_unsafe_resumes(unsafe_resumes);
    g.set_checkpoint_newest_safe_rate(newest_safe.Value());
    g.set_checkpoint_resume_incidents(newest_safe.n);
    g.set_checkpoint_rewind_avoided(avoided.Value());
    g.set_checkpoint_rewind_compared(avoided.n);
    g.set_recurrence_accuracy(recurrence.Value());
    g.set_recurrence_incidents(recurrence.n);
    g.set_link_accuracy(link.Value());
    g.set_link_incidents(link.n);
    g.set_diagnose_seconds(diagnose.Value());
    g.set_diagnose_seconds_max(diagnose_max);
    g.set_answer_after_fault_seconds(answer.Value());
    g.set_timed_incidents(answer.n);
    g.set_cascade_gpu_hours(cascade_gh.Value());
    g.set_gpu_hours_recovered(recovered_gh.Value());
    g.set_gpu_hours_triage_saved(triage_gh.Value());
    g.set_triage_incidents(triage_gh.n);
    return g;
  }
};

constexpr std::array<const char*, 5> kGroupKinds = {"overall", "suite:", "family:",
                                                     "launcher:", "scale:"};
constexpr std::array<const char*, 6> kScaleOrder = {"<1k", "1k", "2k-4k", "8k-16k", "32k+",
                                                    "unknown"};

// Sort key of a group name: its kind, then scale buckets in size order, others by name.
std::tuple<int, int, std::string> GroupKey(const std::string& group) {
  for (int k = 0; k < static_cast<int>(kGroupKinds.size()); ++k) {
    const std::string prefix = kGroupKinds[k];
    if (group.rfind(prefix, 0) != 0) continue;
    const std::string rest = group.substr(prefix.size());
    int bucket = 0;
    if (prefix == "scale:") {
      bucket = static_cast<int>(std::find(kScaleOrder.begin(), kScaleOrder.end(), rest) -
                                kScaleOrder.begin());
    }
    return {k, bucket, rest};
  }
  return {static_cast<int>(kGroupKinds.size()), 0, group};
}

std::vector<std::string> GroupsOf(const v1::IncidentScore& s) {
  std::vector<std::string> groups = {"overall"};
  if (!s.suite().empty()) groups.push_back("suite:" + s.suite());
  groups.push_back("family:" + s.family());
  groups.push_back("launcher:" + (s.launcher().empty() ? "unspecified" : s.launcher()));
  groups.push_back("scale:" + (s.scale().empty() ? ScaleBucket(s.world_size()) : s.scale()));
  return groups;
}

}  // namespace

std::vector<v1::AggregateScore> Aggregate(const std::vector<v1::IncidentScore>& scores) {
  std::vector<std::string> strategies;
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto& s : scores) {
    if (std::find(strategies.begin(), strategies.end(), s.strategy()) == strategies.end()) {
      strategies.push_back(s.strategy());
    }
    for (const auto& g : GroupsOf(s)) acc[{s.strategy(), g}].Add(s);
  }
  std::vector<v1::AggregateScore> out;
  out.reserve(acc.size());
  for (const auto& [key, a] : acc) out.push_back(a.ToProto(key.first, key.second));
  auto strategy_index = [&](const std::string& st) {
    return std::find(strategies.begin(), strategies.end(), st) - strategies.begin();
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(strategy_index(a.strategy()), GroupKey(a.group())) <
           std::make_tuple(strategy_index(b.strategy()), GroupKey(b.group()));
  });
  return out;
}

void SortIncidents(const std::vector<std::string>& strategies,
                   std::vector<v1::IncidentScore>* scores) {
  auto strategy_index = [&](const std::string& st) {
    return std::find(strategies.begin(), strategies.end(), st) - strategies.begin();
  };
  std::stable_sort(scores->begin(), scores->end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(a.suite(), a.incident(), a.seed(), strategy_index(a.strategy())) <
           std::make_tuple(b.suite(), b.incident(), b.seed(), strategy_index(b.strategy()));
  });
}

}  // namespace denpex::scorer
