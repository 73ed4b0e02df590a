// Plain-text renderings of scores: the terminal table of `denpex eval` and the one-incident
// summary of `denpex score`.
#include <algorithm>

#include "denpex/scorer/scorer.h"
#include "text_helpers.h"

namespace denpex::scorer {
namespace {

// "—" when a metric does not apply to any incident of the group.
std::string PctOr(double v, int n) { return n > 0 ? Pct(v) : "    - "; }

std::string Row(const v1::AggregateScore& g, size_t group_width) {
  return "| " + Pad(g.group(), group_width) + " | " + Pad(g.strategy(), 18) + " | " +
         Pad(std::to_string(g.incidents()), 4) + " | " + Pad(Pct(g.initiator_rank_top1()), 6) +
         " | " + Pad(Pct(g.initiator_node_top1()), 6) + " | " +
         Pad(Pct(g.initiator_rank_top3()), 6) + " | " + Pct(g.owner_accuracy()) + " | " +
         Pct(g.failure_class_accuracy()) + " | " + Pad(Pct(g.coverage()), 8) + " | " +
         Pad(PctOr(g.precision_committed(), g.committed()), 9) + " | " +
         Pad(std::to_string(g.committed_wrong()), 5) + " | " +
         Pad(Pct(g.evidence_recall()), 8) + " | " +
         Pad(PctOr(g.cascade_compression(), g.cascade_incidents()), 8) + " | " +
         Pad(PctOr(g.checkpoint_accuracy(), g.checkpoint_incidents()), 6) + " | " +
         Pad(PctOr(g.recurrence_accuracy(), g.recurrence_incidents()), 6) + " |\n";
}

}  // namespace

std::string RenderTable(const v1::EvalReport& report, bool all_groups) {
  // Groups in the order the first strategy lists them; each group's strategies together.
  std::vector<std::string> groups;
  size_t width = 20;
  for (const auto& g : report.aggregates()) {
    if (!all_groups && g.group() != "overall") continue;
    if (std::find(groups.begin(), groups.end(), g.group()) == groups.end()) {
      groups.push_back(g.group());
      width = std::max(width, g.group().size());
    }
  }
  std::string out = "| " + Pad("group", width) +
                    " | strategy           | n    | rank@1 | node@1 | rank@3 | owner  | class  | "
                    "coverage | precision | wrong | evidence | compress | ckpt   | recur  |\n|" +
                    std::string(width + 2, '-') +
                    "|--------------------|------|--------|--------|--------|--------|--------|"
                    "----------|-----------|-------|----------|----------|--------|--------|\n";
  for (const auto& group : groups) {
    for (const auto& g : report.aggregates()) {
      if (g.group() == group) out += Row(g, width);
    }
  }
  return out;
}

std::string RenderIncident(const v1::IncidentScore& s) {
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  std::string out = "  [" + s.strategy() + "] " + s.incident() + " seed " +
                    std::to_string(s.seed()) + ": ";
  if (s.inconclusive()) out += "INCONCLUSIVE; ";
  // A committed answer that is not rank-correct is either wrong or coarser (the right node).
  const char* rank = s.initiator_rank_correct()                       ? "RIGHT"
                     : s.inconclusive() || s.committed_wrong() ? "WRONG"
                                                                       : "COARSER (no rank, right node)";
  out += std::string("initiator rank ") + rank +
         ", node " + yn(s.initiator_node_correct()) + ", top-3 " +
         yn(s.initiator_rank_top3()) + ", owner " + yn(s.owner_correct()) + ", class " +
         yn(s.failure_class_correct()) + ", evidence recall " + Pct(s.evidence_recall());
  if (s.has_cascade_compression()) out += ", compression " + Pct(s.cascade_compression());
  if (s.has_cascade_purity()) out += ", purity " + Pct(s.cascade_purity());
  if (s.has_checkpoint_correct()) {
    out += std::string(", checkpoint ") + (s.checkpoint_correct() ? "right" : "wrong") +
           (s.checkpoint_unsafe() ? " (UNSAFE)" : "");
  }
  if (s.has_answer_after_fault_seconds()) {
    out += ", answer " + Fixed(s.answer_after_fault_seconds(), 1) + " s after the fault";
  }
  if (s.has_gpu_hours_recovered()) {
    out += ", " + Fixed(s.gpu_hours_recovered(), 1) + " GPU-h recoverable";
  }
  return out + "\n";
}

}  // namespace denpex::scorer
