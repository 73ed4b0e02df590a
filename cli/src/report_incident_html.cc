// The incident report as one self-contained HTML page (`denpex diagnose --html FILE`): inline
// CSS and SVG, no script and no external resource; the styles and the timeline are the
// evaluation report's (report_common.cc, report_timeline.cc).
#include "report.h"
#include "report_incident.h"

namespace denpex::cli {
namespace {

constexpr const char* kIncidentStyle = R"(<style>
.verdict{border-left:6px solid #176f2c;padding:2px 14px;background:#f6fbf7}
.verdict.inconclusive{border-color:#8a6d00;background:#fffbea}
table.kv th{width:8em;vertical-align:top}table.kv td{max-width:1100px}
.ev{margin:10px 0;border:1px solid #ddd}.ev .head{background:#f3f3f3;padding:3px 8px;font-family:monospace}
pre.ctx{margin:0;padding:4px 0;white-space:pre-wrap;word-break:break-all;font-size:12px}
pre.ctx span.l{display:block;padding-left:5.5em;text-indent:-5.5em}
pre.ctx span.ln{display:inline-block;width:4.5em;margin-right:1em;text-align:right;color:#888;text-indent:0}
pre.ctx span.hit{background:#fff0a8;font-weight:600}.note{color:#8a6d00;padding:3px 8px}
</style>)";

constexpr const char* kLegend =
    "<p class=\"legend\"><span style=\"color:#1a56c4\">&#9675; the initiator's first error</span>"
    "<span style=\"color:#555\">&#183; each rank's first error</span>"
    "<span style=\"color:#e08a00\">&#9474; first error of each error group, as printed</span></p>";

std::string E(const std::string& raw) { return HtmlEscape(Shown(raw)); }

// (label, value) rows as a two-column table, values escaped.
std::string KeyValues(const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table class=\"kv\">";
  for (const auto& r : rows) out += "<tr><th>" + E(r[0]) + "</th><td>" + E(r[1]) + "</td></tr>";
  return out + "</table>";
}

std::string Escaped(std::vector<std::vector<std::string>> rows, const char* cls) {
  for (auto& r : rows) {
    for (auto& cell : r) cell = Shown(cell);  // HtmlRows escapes for HTML
  }
  return HtmlRows(rows, cls);
}

std::string Verdict(const IncidentReport& r) {
  const v1::Diagnosis& d = r.diagnosis;
  const bool diagnosed = d.verdict() == v1::VERDICT_DIAGNOSED;
  std::string out = std::string("<section class=\"verdict") + (diagnosed ? "" : " inconclusive") +
                    "\"><h2>Verdict: " + E(EnumWord(v1::Verdict_Name(d.verdict()), "VERDICT_")) +
                    "</h2>" + KeyValues(VerdictRows(d));
  const auto missing = MissingLines(d);
  if (!missing.empty()) {
    out += "<h3>What is missing</h3><ul class=\"missing\">";
    for (const auto& m : missing) out += "<li>" + E(m) + "</li>";
    out += "</ul>";
  }
  return out + "</section>";
}

std::string Timeline(const IncidentReport& r) {
  std::string out = "<h2>Cascade timeline</h2>";
  const v1::Timeline tl = IncidentTimeline(r);
  if (tl.points_size() == 0) {
    return out + "<p class=\"note\">No rank's error carries a time: nothing to draw.</p>";
  }
  out +=
      "<p>Each rank at the time of its first error, on the engine's aligned clocks (each "
      "node's printed stamps less its clock offset; the table gives both). Hover a mark for "
      "its line.</p>" +
      std::string(kLegend) + TimelineSvg(tl, 1000, 300, false, TimelineOrigin(r));
  if (r.times.ranks.size() > 1) {
    out += "<h3>The wave of first errors, up close</h3>" +
           TimelineSvg(tl, 1000, 300, true, TimelineOrigin(r));
  }
  int left_out = 0;
  out += "<h3>Ranks over time, the initiator first</h3>" + Escaped(RankRows(r, &left_out), "ranks");
  if (left_out > 0) {
    out += "<p class=\"note\">" + std::to_string(left_out) +
           " more ranks not listed (the timeline draws them; `denpex events` lists every "
           "line).</p>";
  }
  if (!r.times.clocks.empty()) {
    out += "<p>" + std::to_string(r.times.clocks.size()) +
           " nodes' clocks were moved to align them; their offsets are in the table.</p>";
  }
  const auto groups = GroupRows(r.diagnosis);
  if (!groups.empty()) out += "<h3>Error groups</h3>" + Escaped(groups, "groups");
  return out;
}

std::string Context(const EvidenceContext& c) {
  std::string out = "<div class=\"ev\"><div class=\"head\">[" +
                    E(EnumWord(v1::EvidenceRole_Name(c.cited.role()), "EVIDENCE_ROLE_")) + "] " +
                    E(c.cited.file()) + ":" + std::to_string(c.cited.line()) + "</div>";
  if (c.lines.empty()) {
    return out + "<div class=\"note\">" + E(c.note) +
           "</div><pre class=\"ctx\"><span class=\"l hit\">" + "<span class=\"ln\">" +
           std::to_string(c.cited.line()) + "</span>" + E(c.cited.text()) + "</span></pre></div>";
  }
  out += "<pre class=\"ctx\">";
  for (std::size_t i = 0; i < c.lines.size(); ++i) {
    const std::uint32_t n = c.first_line + i;
    out += std::string("<span class=\"l") +
           (n == static_cast<std::uint32_t>(c.cited.line()) ? " hit" : "") +
           "\"><span class=\"ln\">" + std::to_string(n) + "</span>" + E(c.lines[i]) + "</span>";
  }
  return out + "</pre></div>";
}

std::string Evidence(const IncidentReport& r) {
  std::string out = "<h2>Evidence</h2>";
  if (r.evidence.empty()) return out + "<p>No line is cited.</p>";
  out +=
      "<p>Each cited line (highlighted) with the lines around it, read from the incident "
      "directory now.</p>";
  for (const auto& c : r.evidence) out += Context(c);
  if (r.evidence_left_out > 0) {
    out += "<p class=\"note\">" + std::to_string(r.evidence_left_out) +
           " more cited lines are in the diagnosis JSON (--json).</p>";
  }
  return out;
}

std::string Checkpoint(const v1::Diagnosis& d) {
  std::string out = "<h2>Checkpoint</h2>" + KeyValues(CheckpointRows(d));
  const auto rejected = RejectedRows(d);
  if (!rejected.empty()) out += Escaped(rejected, "rejected");
  return out;
}

std::string Recovery(const v1::Diagnosis& d) {
  const auto steps = RecoverySteps(d);
  std::string out = "<h2>Before resuming</h2>";
  if (steps.empty()) return out + "<p>No step is required.</p>";
  out += "<ol class=\"recovery\">";
  for (const auto& s : steps) out += "<li>" + E(s) + "</li>";
  return out + "</ol>";
}

}  // namespace

std::string RenderIncidentHtml(const IncidentReport& r) {
  std::string out =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>Denpex incident report</title>";
  out += kReportStyle;
  out += kIncidentStyle;
  out += "</head><body><h1>Denpex incident report</h1><p class=\"run\">Incident " + E(r.incident) +
         ", diagnosed by the " + E(r.diagnosis.strategy()) +
         " strategy. Formats: docs/diagnosis_format.md; this report: docs/incident_report.md.</p>";
  out += Verdict(r) + Timeline(r) + Evidence(r) + Checkpoint(r.diagnosis) + Recovery(r.diagnosis);
  out += "<h2>Input</h2><p>" + E(InputSummary(r.diagnosis)) + "</p>";
  return out + "</body></html>\n";
}

}  // namespace denpex::cli
