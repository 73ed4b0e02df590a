// The incident report in Markdown (`denpex diagnose --markdown FILE`): the sections of the HTML
// page, the timeline as its table of ranks, log text escaped so that no line of a log can
// become markup, a link or a table cell of its own.
#include <algorithm>

#include "report.h"
#include "report_incident.h"

namespace denpex::cli {
namespace {

// Text for a table cell or a line of prose: control bytes escaped, and everything Markdown or
// the HTML it allows would read as markup.
std::string Md(const std::string& raw) {
  std::string out;
  for (char c : Shown(raw)) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '`':
        out += "\\`";
        break;
      case '*':
        out += "\\*";
        break;
      case '_':
        out += "\\_";
        break;
      case '[':
        out += "\\[";
        break;
      case ']':
        out += "\\]";
        break;
      case '#':
        out += "\\#";
        break;
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MdTable(std::vector<std::vector<std::string>> rows) {
  for (auto& r : rows) {
    for (auto& cell : r) cell = Md(cell);
  }
  return MdRows(rows);
}

// A fenced block that no run of backticks in `body` can close.
std::string Fenced(const std::string& body) {
  std::size_t longest = 0, run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fence + "text\n" + body + fence + "\n";
}

std::string Context(int i, const EvidenceContext& c) {
  std::string out = "### " + std::to_string(i) + ". " +
                    Md(EnumWord(v1::EvidenceRole_Name(c.cited.role()), "EVIDENCE_ROLE_")) + " " +
                    Md(c.cited.file()) + ":" + std::to_string(c.cited.line()) + "\n\n";
  std::string body;
  auto line = [&](std::uint32_t n, const std::string& text) {
    char num[24];
    std::snprintf(num, sizeof num, "%s%6u | ",
                  n == static_cast<std::uint32_t>(c.cited.line()) ? ">>" : "  ", n);
    body += num + Shown(text) + "\n";
  };
  if (c.lines.empty()) {
    out += Md(c.note) + "\n\n";
    line(c.cited.line(), c.cited.text());
  }
  for (std::size_t k = 0; k < c.lines.size(); ++k) line(c.first_line + k, c.lines[k]);
  return out + Fenced(body) + "\n";
}

std::string Timeline(const IncidentReport& r) {
  std::string out = "## Cascade timeline\n\n";
  const std::string origin = TimelineOrigin(r);
  if (origin.empty()) return out + "No rank's error carries a time.\n\n";
  int left_out = 0;
  const auto rows = RankRows(r, &left_out);
  out += "Ranks over time, the initiator first: " + Md(origin) +
         " (each node's printed stamps less its clock offset; the HTML report (`--html`) draws "
         "it).\n\n" +
         MdTable(rows) + "\n";
  if (left_out > 0) out += std::to_string(left_out) + " more ranks not listed.\n\n";
  const auto groups = GroupRows(r.diagnosis);
  if (!groups.empty()) out += "### Error groups\n\n" + MdTable(groups) + "\n";
  return out;
}

}  // namespace

std::string RenderIncidentMarkdown(const IncidentReport& r) {
  const v1::Diagnosis& d = r.diagnosis;
  std::string out = "# Denpex incident report\n\nIncident " + Md(r.incident) +
                    ", diagnosed by the " + Md(d.strategy()) +
                    " strategy (`docs/incident_report.md`).\n\n## Verdict: " +
                    Md(EnumWord(v1::Verdict_Name(d.verdict()), "VERDICT_")) + "\n\n";
  auto verdict = VerdictRows(d);
  verdict.insert(verdict.begin(), {"", ""});
  out += MdTable(verdict) + "\n";
  const auto missing = MissingLines(d);
  if (!missing.empty()) {
    out += "### What is missing\n\n";
    for (const auto& m : missing) out += "- " + Md(m) + "\n";
    out += "\n";
  }
  out += Timeline(r) + "## Evidence\n\n";
  if (r.evidence.empty()) out += "No line is cited.\n\n";
  for (std::size_t i = 0; i < r.evidence.size(); ++i) out += Context(i + 1, r.evidence[i]);
  if (r.evidence_left_out > 0) {
    out += std::to_string(r.evidence_left_out) + " more cited lines are in the diagnosis JSON.\n\n";
  }
  auto ckpt = CheckpointRows(d);
  ckpt.insert(ckpt.begin(), {"", ""});
  out += "## Checkpoint\n\n" + MdTable(ckpt) + "\n";
  if (const auto rejected = RejectedRows(d); !rejected.empty()) out += MdTable(rejected) + "\n";
  out += "## Before resuming\n\n";
  const auto steps = RecoverySteps(d);
  if (steps.empty()) out += "No step is required.\n";
  for (std::size_t i = 0; i < steps.size(); ++i)
    out += std::to_string(i + 1) + ". " + Md(steps[i]) + "\n";
  return out + "\n## Input\n\n" + Md(InputSummary(d)) + "\n";
}

}  // namespace denpex::cli
