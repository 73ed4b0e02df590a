// What the Markdown and HTML reports share: the metric columns, the grouping of aggregates
// into sections, the run summary and per-incident answer cells.
#include <algorithm>
#include <cstdio>

#include "denpex/scorer/scorer.h"
#include "report.h"

namespace denpex::cli {
namespace {

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}
std::string Num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
// "-" when the metric applies to no incident of the group.
std::string PctIf(double v, int n) { return n > 0 ? Pct(v) : "-"; }
std::string NumIf(double v, int n, const char* fmt) { return n > 0 ? Num(v, fmt) : "-"; }

}  // namespace

const std::vector<Column>& LocalizationColumns() {
  static const std::vector<Column> kColumns = {
      {"n", "incidents", [](const auto& g) { return std::to_string(g.incidents()); }},
      {"rank@1", "committed to the right initiator rank",
       [](const auto& g) { return Pct(g.initiator_rank_top1()); }},
      {"node@1", "committed to the right initiator node",
       [](const auto& g) { return Pct(g.initiator_node_top1()); }},
      {"rank@3", "right rank among the first three candidates",
       [](const auto& g) { return Pct(g.initiator_rank_top3()); }},
      {"owner", "committed to the right owner",
       [](const auto& g) { return Pct(g.owner_accuracy()); }},
      {"class", "committed to the right failure class",
       [](const auto& g) { return Pct(g.failure_class_accuracy()); }},
      {"coverage", "committed (not INCONCLUSIVE) / incidents",
       [](const auto& g) { return Pct(g.coverage()); }},
      {"precision", "right rank among committed answers",
       [](const auto& g) { return PctIf(g.precision_committed(), g.committed()); }},
      {"wrong", "committed answers wrong at the level they answered (rank, node or job)",
       [](const auto& g) { return std::to_string(g.committed_wrong()); }},
  };
  return kColumns;
}

const std::vector<Column>& OutcomeColumns() {
  static const std::vector<Column> kColumns = {
      {"evidence recall", "required citations cited",
       [](const auto& g) { return Pct(g.evidence_recall()); }},
      {"evidence precision", "INITIATING citations that are required (committed answers)",
       [](const auto& g) { return PctIf(g.evidence_precision(), g.precision_incidents()); }},
      {"compression", "secondary errors grouped under the right initiator / all",
       [](const auto& g) { return PctIf(g.cascade_compression(), g.cascade_incidents()); }},
      {"purity", "listed secondary ranks that truly are secondary",
       [](const auto& g) { return PctIf(g.cascade_purity(), g.purity_incidents()); }},
      {"ckpt right", "checkpoint decision and step as the truth's",
       [](const auto& g) { return PctIf(g.checkpoint_accuracy(), g.checkpoint_incidents()); }},
      {"ckpt unsafe", "resumed from a checkpoint newer than the newest safe one",
       [](const auto& g) {
         return PctIf(g.checkpoint_unsafe_rate(), g.checkpoint_incidents());
       }},
      {"excess steps", "steps older than the newest safe checkpoint (safe resumes)",
       [](const auto& g) {
         return NumIf(g.checkpoint_excess_steps(), g.checkpoint_safe_resumes(), "%.1f");
       }},
      {"unsafe resumes", "incidents resumed from an unsafe checkpoint (count)",
       [](const auto& g) {
         return g.checkpoint_incidents() > 0 ? std::to_string(g.checkpoint_unsafe_resumes())
                                             : std::string("-");
       }},
      {"newest safe", "resumed from exactly the newest safe checkpoint, where one exists",
       [](const auto& g) {
         return PctIf(g.checkpoint_newest_safe_rate(), g.checkpoint_resume_incidents());
       }},
      {"rewind avoided", "steps kept vs the newest-checkpoint baseline (unsafe resume = step 0)",
       [](const auto& g) {
         return NumIf(g.checkpoint_rewind_avoided(), g.checkpoint_rewind_compared(), "%.1f");
       }},
      {"recurrence", "history store read as the truth's: earlier node/GPU incidents, escalation",
       [](const auto& g) { return PctIf(g.recurrence_accuracy(), g.recurrence_incidents()); }},
      {"link", "the bad link's two ends (nodes, HCAs) as the truth's",
       [](const auto& g) { return PctIf(g.link_accuracy(), g.link_incidents()); }},
      {"diagnose s", "mean wall time of the strategy",
       [](const auto& g) { return Num(g.diagnose_seconds(), "%.3f"); }},
      {"answer after fault s", "job end - fault + wall time",
       [](const auto& g) {
         return NumIf(g.answer_after_fault_seconds(), g.timed_incidents(), "%.1f");
       }},
      {"GPU-h recovered", "mean per incident: cascade GPU-hours a right answer avoids",
       [](const auto& g) {
         return NumIf(g.gpu_hours_recovered(), g.timed_incidents(), "%.1f");
       }},
  };
  return kColumns;
}

std::vector<std::string> GroupKinds(const v1::EvalReport& report) {
  std::vector<std::string> kinds;
  for (const auto& g : report.aggregates()) {
    const auto colon = g.group().find(':');
    const std::string kind = colon == std::string::npos ? g.group() : g.group().substr(0, colon);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  }
  return kinds;
}

std::vector<std::string> GroupsOfKind(const v1::EvalReport& report, const std::string& kind) {
  std::vector<std::string> groups;
  for (const auto& g : report.aggregates()) {
    const bool match = g.group() == kind || g.group().rfind(kind + ":", 0) == 0;
    if (match && std::find(groups.begin(), groups.end(), g.group()) == groups.end()) {
      groups.push_back(g.group());
    }
  }
  return groups;
}

std::vector<const v1::AggregateScore*> RowsOf(const v1::EvalReport& report,
                                              const std::string& group) {
  std::vector<const v1::AggregateScore*> rows;
  for (const auto& g : report.aggregates()) {
    if (g.group() == group) rows.push_back(&g);
  }
  return rows;
}

std::string RunSummary(const v1::EvalRun& run) {
  std::string inputs, strategies;
  for (const auto& s : run.inputs()) inputs += (inputs.empty() ? "" : ", ") + s;
  for (const auto& s : run.strategies()) strategies += (strategies.empty() ? "" : ", ") + s;
  // Seeds are a simulated suite's: a run of frozen corpora alone (`--corpus DIR`) has none.
  const bool simulated =
      std::any_of(run.inputs().begin(), run.inputs().end(),
                  [](const std::string& in) { return !in.starts_with("--corpus "); });
  std::string out = "Inputs: " + inputs + ". Strategies: " + strategies;
  if (simulated) out += ". Seeds per scenario: " + std::to_string(run.seeds());
  out += ". Jobs: " + std::to_string(run.jobs_run()) + " of " + std::to_string(run.jobs_total());
  if (!run.shard().empty()) out += " (shard " + run.shard() + ")";
  if (run.shapes_size() > 0) {
    std::string shapes;
    for (const auto& s : run.shapes()) shapes += (shapes.empty() ? "" : ", ") + s;
    out += ". Collection shapes: " + shapes;
  }
  if (run.shards_merged() > 0) out += " (" + std::to_string(run.shards_merged()) + " reports merged)";
  out += ". Wall time: " + Num(run.wall_seconds(), "%.1f") + " s";
  if (run.threads() > 0) out += " on " + std::to_string(run.threads()) + " threads";
  if (run.manual_triage_minutes() > 0) {
    out += ". Manual triage time: " + Num(run.manual_triage_minutes(), "%.0f") + " min";
  }
  return out + ".";
}

const char* const kReportStyle = R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ddd;padding:3px 8px}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.first td{border-top:2px solid #999}tr.engine td{font-weight:600}
table.incidents tr.row{cursor:pointer}table.incidents tr.row:hover{background:#f7f7ff}
.right{color:#176f2c}.wrong{color:#b3261e}.abstain{color:#8a6d00}.draft{color:#8a6d00;font-weight:600}
tr.detail td{background:#fafafa}pre{white-space:pre-wrap;font-size:12px;margin:4px 0}
svg.timeline{background:#fff}svg .plot{fill:#fbfbfb;stroke:#bbb}svg .tick{font-size:11px;fill:#555}
svg .pt.fault{fill:#b3261e}svg .pt.initiator{fill:none;stroke:#1a56c4;stroke-width:3}
svg .wave.group{stroke:#e08a00;stroke-width:3;opacity:.7}svg .wave.end{stroke:#666;stroke-dasharray:4 3}
svg .wave.fault{stroke:#b3261e}svg .pt.rank{fill:#555;opacity:.6}.legend span{margin-right:16px}
</style>)";

std::string HtmlRows(const std::vector<std::vector<std::string>>& rows, const char* cls) {
  std::string out = std::string("<table class=\"") + cls + "\">";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += "<tr>";
    for (const auto& cell : rows[i]) {
      out += (i == 0 ? "<th>" : "<td>") + HtmlEscape(cell) + (i == 0 ? "</th>" : "</td>");
    }
    out += "</tr>";
  }
  return out + "</table>";
}

std::string MdRows(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out += "|";
    for (const auto& cell : rows[i]) out += " " + cell + " |";
    out += "\n";
    if (i == 0) {
      out += "|";
      for (size_t c = 0; c < rows[0].size(); ++c) out += c == 0 ? "---|" : "---:|";
      out += "\n";
    }
  }
  return out;
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string AnswerCell(const v1::IncidentScore& s) {
  if (s.inconclusive()) return s.initiator_rank_correct() ? "abstained (right)" : "abstained";
  const std::string who = s.answer_rank() >= 0 ? "rank " + std::to_string(s.answer_rank())
                                               : s.answer_node();
  return (s.initiator_rank_correct() ? "RIGHT " : "wrong ") + who;
}

std::vector<std::vector<std::string>> ShapeRows(const v1::EvalReport& report) {
  std::vector<std::vector<std::string>> rows;
  if (report.shape_aggregates_size() == 0) return rows;
  rows.push_back({"shape", "pairs", "same", "coarser", "abstained", "wrong", "differs"});
  for (const auto& g : report.shape_aggregates()) {
    rows.push_back({g.shape(), std::to_string(g.pairs()), Pct(g.same_share()),
                    Pct(g.coarser_share()), Pct(g.abstained_share()), Pct(g.wrong_share()),
                    Pct(g.differs_share())});
  }
  return rows;
}

std::vector<std::vector<std::string>> ShapePairRows(const v1::EvalReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : report.shape_results()) {
    if (r.outcome() != v1::SHAPE_OUTCOME_WRONG && r.outcome() != v1::SHAPE_OUTCOME_DIFFERS) continue;
    if (rows.empty()) {
      rows.push_back({"outcome", "incident", "seed", "shape", "truth", "canonical", "shape answer"});
    }
    rows.push_back({scorer::ShapeOutcomeName(r.outcome()), r.suite() + "/" + r.incident(),
                    std::to_string(r.seed()), r.shape(), scorer::ShapeAnswerText(r.truth()),
                    scorer::ShapeAnswerText(r.canonical()),
                    r.error().empty() ? scorer::ShapeAnswerText(r.answer()) : "error: " + r.error()});
  }
  return rows;
}

}  // namespace denpex::cli
