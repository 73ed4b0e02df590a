// Renderings of an EvalReport for people: Markdown (report_markdown.cc), a self-contained
// HTML page (report_html.cc) and the SVG timeline it embeds (report_timeline.cc). The
// columns both formats share live in report_common.cc. What each metric means:
// docs/evaluation.md.
#pragma once

#include <string>
#include <vector>

#include "denpex/v1/score.pb.h"

namespace denpex::cli {

std::string RenderMarkdown(const v1::EvalReport& report);
std::string RenderHtml(const v1::EvalReport& report);

// An SVG chart of one incident: x = seconds after the timeline's origin (the truth's fault in
// an evaluation), named by `x_label`; y = rank. With `zoom_on_ranks`, x spans only the ranks'
// first errors (the cascade wave up close).
std::string TimelineSvg(const v1::Timeline& timeline, int width, int height,
                        bool zoom_on_ranks = false,
                        const std::string& x_label = "seconds after the fault (truth)");

// One column of an aggregate table.
struct Column {
  const char* header;
  const char* tip;  // a short definition, shown as a tooltip in HTML
  std::string (*cell)(const v1::AggregateScore&);
};

// "Localization": top-1/top-3, owner, class, abstention.
const std::vector<Column>& LocalizationColumns();
// "Evidence, cascade, checkpoint, time".
const std::vector<Column>& OutcomeColumns();

// The group kinds of the report in order, e.g. {"overall", "suite", "family", ...}, and the
// groups of one kind in report order.
std::vector<std::string> GroupKinds(const v1::EvalReport& report);
std::vector<std::string> GroupsOfKind(const v1::EvalReport& report, const std::string& kind);
// The aggregates of one group, strategies in report order.
std::vector<const v1::AggregateScore*> RowsOf(const v1::EvalReport& report,
                                              const std::string& group);

// One line about the run: inputs, strategies, seeds, jobs, wall time.
std::string RunSummary(const v1::EvalRun& run);

// Escapes &, <, > and " for HTML and SVG text and attributes.
std::string HtmlEscape(const std::string& s);

// The <style> element every HTML report opens with (tables, timeline colours).
extern const char* const kReportStyle;
// Rows of cells as an HTML table of class `cls` (the first row the header; cells escaped) and
// as a Markdown table (the first row the header; cells as given, first column left-aligned).
std::string HtmlRows(const std::vector<std::vector<std::string>>& rows, const char* cls);
std::string MdRows(const std::vector<std::vector<std::string>>& rows);

// "RIGHT", "wrong", "abstained" for a per-incident cell, with the answered rank.
std::string AnswerCell(const v1::IncidentScore& s);

// The collection-shapes axis (`--shapes`) as rows of cells, header first: one row per shape
// (pairs and the share of each outcome), and one per wrong or differing (incident, shape)
// pair (outcome, incident, seed, shape, truth, canonical answer, shape answer). Empty without
// shapes.
std::vector<std::vector<std::string>> ShapeRows(const v1::EvalReport& report);
std::vector<std::vector<std::string>> ShapePairRows(const v1::EvalReport& report);

// The pilot (`--corpus`, docs/evaluation.md "Pilot"; report_pilot.cc) as rows of cells, header
// first, each empty without a pilot: one row per dimension (entries recording it, the engine,
// the recorded process), one per corpus entry, one per decision both made. PilotTotals: one
// sentence (entries, drafts, postmortems, decisions that differed and who was right).
std::vector<std::vector<std::string>> PilotDimensionRows(const v1::EvalReport& report);
std::vector<std::vector<std::string>> PilotIncidentRows(const v1::EvalReport& report);
std::vector<std::vector<std::string>> PilotDecisionRows(const v1::EvalReport& report);
std::string PilotTotals(const v1::EvalReport& report);

// "N of M incidents were scored against a draft expected outcome ..." when any was; else empty.
std::string DraftNote(const v1::EvalReport& report);

}  // namespace denpex::cli
