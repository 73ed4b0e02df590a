// One incident's report for a person (`denpex diagnose --html FILE`, `--markdown FILE`): the
// verdict, the cascade timeline on aligned clocks with the printed stamps, the cited lines in
// their context read from the incident directory, the checkpoint decision and the recovery
// steps. BuildIncidentReport gathers what both formats show (report_incident.cc) and bounds it;
// report_incident_html.cc and report_incident_markdown.cc only lay it out. docs/incident_report.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/engine/engine.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/score.pb.h"

namespace denpex::cli {

// Bounds that keep the report of any cascade small (a few hundred KiB at most).
inline constexpr int kReportMaxEvidence = 40;            // cited lines shown in context
inline constexpr std::uint32_t kReportContext = 3;       // lines before and after each
inline constexpr std::size_t kReportMaxLineBytes = 400;  // a longer line is cut and marked
inline constexpr int kReportMaxRankRows = 50;            // rows of the ranks-over-time table
inline constexpr int kReportMaxRows = 20;                // groups, rejected checkpoints, problems

// One cited line and the lines around it as the file holds them now (raw bytes, cut to
// kReportMaxLineBytes; the renderers escape them).
struct EvidenceContext {
  v1::Evidence cited;
  std::uint32_t first_line = 0;    // the number of lines.front(); 0 when nothing was read
  std::vector<std::string> lines;  // first_line, first_line + 1, ...
  std::string note;                // why there is no context (file missing, compressed, ...)
};

struct IncidentReport {
  std::string incident;  // the directory as the user named it
  v1::Diagnosis diagnosis;
  engine::CascadeTimes times;
  std::vector<EvidenceContext> evidence;  // at most kReportMaxEvidence
  int evidence_left_out = 0;
};

// Reads the cited lines' context (each file once, never outside `incident`).
IncidentReport BuildIncidentReport(const std::filesystem::path& incident, v1::Diagnosis diagnosis,
                                   engine::CascadeTimes times);

std::string RenderIncidentHtml(const IncidentReport& report);
std::string RenderIncidentMarkdown(const IncidentReport& report);

// What both renderings share, as unescaped text.
// "DIAGNOSED" from ("VERDICT_DIAGNOSED", "VERDICT_") and the like.
std::string EnumWord(const std::string& enum_name, std::string_view prefix);
// The verdict as (label, value) rows: verdict, initiator, time, class, owner, confidence, why.
std::vector<std::vector<std::string>> VerdictRows(const v1::Diagnosis& d);
// What an INCONCLUSIVE verdict lacks: the reason, the candidates, the input's problems.
std::vector<std::string> MissingLines(const v1::Diagnosis& d);
// The timeline the SVG draws: x = seconds after the origin on aligned clocks (the initiator's
// first error, else the earliest), each rank's first error with its printed stamp in its label.
v1::Timeline IncidentTimeline(const IncidentReport& r);
std::string TimelineOrigin(const IncidentReport& r);  // the x axis's words
// Ranks over time, header first: the initiator's row first, then by aligned time, at most
// kReportMaxRankRows rows; `left_out` gets how many ranks were not listed.
std::vector<std::vector<std::string>> RankRows(const IncidentReport& r, int* left_out);
std::vector<std::vector<std::string>> GroupRows(const v1::Diagnosis& d);       // header first
std::vector<std::vector<std::string>> CheckpointRows(const v1::Diagnosis& d);  // label, value
std::vector<std::vector<std::string>> RejectedRows(const v1::Diagnosis& d);    // header first
std::vector<std::string> RecoverySteps(const v1::Diagnosis& d);
std::string InputSummary(const v1::Diagnosis& d);
// A line as shown: control bytes escaped (denpex/common/text.h).
std::string Shown(const std::string& raw);

}  // namespace denpex::cli
