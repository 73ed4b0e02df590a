// The HTML report (`denpex eval --html FILE`): one self-contained page (inline CSS, JS and
// SVG; no external resource) with the aggregate tables, the cascade timeline of the first
// incident, and one row per incident that opens to show its diagnosis.
#include <map>
#include <tuple>

#include "denpex/proto/json_io.h"
#include "report.h"

namespace denpex::cli {
namespace {

// Incidents past this many are listed without their embedded diagnosis (bounded size).
constexpr int kMaxEmbedded = 300;

constexpr const char* kScript = R"(<script>
document.querySelectorAll('table.incidents tr.row').forEach(function(r){
  r.addEventListener('click',function(){var d=r.nextElementSibling;d.hidden=!d.hidden;});});
</script>)";

constexpr const char* kLegend =
    "<p class=\"legend\"><span style=\"color:#b3261e\">&#9679; injected fault (truth)</span>"
    "<span style=\"color:#1a56c4\">&#9675; initiator named by the diagnosis</span>"
    "<span style=\"color:#e08a00\">&#9474; first error of each error group (wave front)</span>"
    "<span style=\"color:#666\">&#9478; job end</span>"
    "<span style=\"color:#555\">&#183; a rank's first error (event listing)</span></p>";

std::string Table(const v1::EvalReport& report, const std::vector<std::string>& groups,
                  const std::vector<Column>& cols) {
  std::string out = "<table class=\"aggregates\"><tr><th>group</th><th>strategy</th>";
  for (const auto& c : cols) {
    out += "<th title=\"" + HtmlEscape(c.tip) + "\">" + HtmlEscape(c.header) + "</th>";
  }
  out += "</tr>";
  for (const auto& group : groups) {
    bool first = true;
    for (const auto* g : RowsOf(report, group)) {
      const bool engine = report.run().strategies_size() > 0 &&
                          g->strategy() == report.run().strategies(0);
      out += std::string("<tr class=\"") + (first ? "first " : "") + (engine ? "engine" : "") +
             "\"><td>" + HtmlEscape(group) + "</td><td>" + HtmlEscape(g->strategy()) + "</td>";
      for (const auto& c : cols) out += "<td class=\"num\">" + HtmlEscape(c.cell(*g)) + "</td>";
      out += "</tr>";
      first = false;
    }
  }
  return out + "</table>";
}

std::string FeaturedTimeline(const v1::EvalReport& report);

// The overall tables, the featured incident timeline, then the tables per group kind.
std::string Sections(const v1::EvalReport& report) {
  std::string out;
  for (const auto& kind : GroupKinds(report)) {
    const auto groups = GroupsOfKind(report, kind);
    out += "<h2>" + HtmlEscape(kind == "overall" ? std::string("Overall") : "By " + kind) + "</h2>";
    if (kind == "overall" && !DraftNote(report).empty()) {
      out += "<p class=\"drafts\"><b>Drafts:</b> " + HtmlEscape(DraftNote(report)) + "</p>";
    }
    out += "<h3>Localization</h3>" + Table(report, groups, LocalizationColumns());
    out += "<h3>Evidence, cascade, checkpoint, time</h3>" +
           Table(report, groups, OutcomeColumns());
    if (kind == "overall") out += FeaturedTimeline(report);
  }
  return out;
}

std::string AnswerTd(const v1::IncidentScore* s) {
  if (s == nullptr) return "<td>-</td>";
  const char* cls = s->inconclusive() ? "abstain" : s->initiator_rank_correct() ? "right" : "wrong";
  return std::string("<td class=\"") + cls + "\">" + HtmlEscape(AnswerCell(*s)) + "</td>";
}

std::string DetailCell(const v1::IncidentDetail& d, int colspan) {
  std::string out = "<tr class=\"detail\" hidden><td colspan=\"" + std::to_string(colspan) + "\">";
  out += "<pre>" + HtmlEscape(d.diagnosis_text()) + "</pre>";
  if (d.timeline().points_size() > 0) out += TimelineSvg(d.timeline(), 640, 200);
  out += "<details><summary>diagnosis JSON (" + HtmlEscape(d.diagnosis().strategy()) +
         ", trimmed)</summary><pre>" + HtmlEscape(proto::ToJson(d.diagnosis())) + "</pre></details>";
  return out + "</td></tr>";
}

std::string Incidents(const v1::EvalReport& report) {
  using Key = std::tuple<std::string, std::string, std::uint64_t>;
  std::map<Key, std::map<std::string, const v1::IncidentScore*>> scores;
  for (const auto& s : report.incidents()) {
    scores[{s.suite(), s.incident(), s.seed()}][s.strategy()] = &s;
  }
  const auto& strategies = report.run().strategies();
  std::string out =
      "<h2>Incidents</h2><p>Click a row to open the diagnosis of the first strategy.</p>"
      "<table class=\"incidents\"><tr><th>suite</th><th>incident</th><th>seed</th>"
      "<th>family</th><th>ranks</th><th>truth</th>";
  for (const auto& s : strategies) out += "<th>" + HtmlEscape(s) + "</th>";
  out += "</tr>";
  const int colspan = 6 + strategies.size();
  int embedded = 0;
  for (const auto& d : report.details()) {
    const auto& by = scores[{d.suite(), d.incident(), d.seed()}];
    if (by.empty()) continue;
    const v1::IncidentScore& any = *by.begin()->second;
    const std::string truth = any.truth_rank() >= 0 ? "rank " + std::to_string(any.truth_rank()) +
                                                          " on " + any.truth_node()
                                                    : any.truth_node();
    out += "<tbody><tr class=\"row\"><td>" + HtmlEscape(d.suite()) + "</td><td>" +
           HtmlEscape(d.incident()) +
           (any.expected_draft() ? " <span class=\"draft\">(draft)</span>" : "") +
           "</td><td class=\"num\">" + std::to_string(d.seed()) + "</td><td>" +
           HtmlEscape(any.family()) + "</td><td class=\"num\">" + std::to_string(any.world_size()) +
           "</td><td>" + HtmlEscape(truth) + "</td>";
    for (const auto& s : strategies) {
      auto it = by.find(s);
      out += AnswerTd(it == by.end() ? nullptr : it->second);
    }
    out += "</tr>";
    if (embedded++ < kMaxEmbedded) out += DetailCell(d, colspan);
    else out += "<tr class=\"detail\" hidden><td colspan=\"" + std::to_string(colspan) +
                "\">not embedded (report size bound); see the JSON report</td></tr>";
    out += "</tbody>";
  }
  return out + "</table>";
}

// The timeline of the largest incident with per-rank first errors (else of the first
// incident with a timeline), whole and, when it has them, zoomed on the wave.
std::string FeaturedTimeline(const v1::EvalReport& report) {
  auto ranked = [](const v1::IncidentDetail& d) {
    return d.timeline().source().rfind("events", 0) == 0;
  };
  const v1::IncidentDetail* chosen = nullptr;
  for (const auto& d : report.details()) {
    if (d.timeline().points_size() == 0) continue;
    if (chosen == nullptr || (ranked(d) && !ranked(*chosen)) ||
        (ranked(d) && d.timeline().world_size() > chosen->timeline().world_size())) {
      chosen = &d;
    }
  }
  if (chosen == nullptr) return "";
  const auto& tl = chosen->timeline();
  std::string out = "<h2>Cascade timeline: " +
                    HtmlEscape(chosen->suite() + "/" + chosen->incident()) + " seed " +
                    std::to_string(chosen->seed()) + "</h2><p>Marks sit at their time after the "
                    "injected fault (the truth's clock; logged times are in each node's clock) "
                    "and at their rank. Points from: " + HtmlEscape(tl.source()) + ".</p>" +
                    kLegend + TimelineSvg(tl, 960, 320);
  if (tl.source().rfind("events", 0) == 0) {
    out += "<h3>The wave of first errors, up close</h3>" + TimelineSvg(tl, 960, 320, true);
  }
  return out;
}

// The collection-shapes axis: one row per shape, then the wrong and differing pairs.
std::string Shapes(const v1::EvalReport& report) {
  const auto rows = ShapeRows(report);
  if (rows.empty()) return "";
  std::string out = "<h2>Collection shapes</h2><p>The engine on each incident re-laid in each "
                    "shape, against its answer on the canonical layout (docs/evaluation.md, "
                    "&quot;Collection shapes&quot;).</p>" + HtmlRows(rows, "shapes");
  const auto pairs = ShapePairRows(report);
  if (!pairs.empty()) out += "<h3>Wrong and differing pairs</h3>" + HtmlRows(pairs, "shape-pairs");
  return out;
}

// The pilot: each dimension, the engine beside the recorded process, per entry and in total.
std::string Pilot(const v1::EvalReport& report) {
  const auto dims = PilotDimensionRows(report);
  if (dims.empty()) return "";
  std::string out =
      "<h2 id=\"pilot\">Pilot</h2><p>The engine on each corpus entry beside the team's recorded "
      "process (the entry's postmortem), each dimension scored separately against the entry's "
      "expected outcome, the arbiter (docs/evaluation.md, &quot;Pilot&quot;). A dimension an "
      "entry does not record is <i>not recorded</i>, never a pass or a fail.</p><p "
      "class=\"pilot-totals\">" +
      HtmlEscape(PilotTotals(report)) + "</p>" + HtmlRows(dims, "pilot-dimensions") +
      "<h3>Per entry</h3>" + HtmlRows(PilotIncidentRows(report), "pilot-incidents");
  const auto decisions = PilotDecisionRows(report);
  if (!decisions.empty()) {
    out += "<h3>Decisions: engine and process</h3>" + HtmlRows(decisions, "pilot-decisions");
  }
  return out;
}

}  // namespace

std::string RenderHtml(const v1::EvalReport& report) {
  std::string out = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>Denpex evaluation report</title>";
  out += kReportStyle;
  out += "</head><body><h1>Denpex evaluation report</h1><p class=\"run\">" +
         HtmlEscape(RunSummary(report.run())) +
         " Metric definitions: docs/evaluation.md; <b>-</b> means the metric applies to no "
         "incident of the group.</p>";
  if (report.run().failures_size() > 0) {
    out += "<h2>Jobs that failed</h2><ul class=\"failures\">";
    for (const auto& f : report.run().failures()) out += "<li>" + HtmlEscape(f) + "</li>";
    out += "</ul>";
  }
  out += Pilot(report) + Sections(report) + Shapes(report) + Incidents(report);
  return out + kScript + "</body></html>\n";
}

}  // namespace denpex::cli
