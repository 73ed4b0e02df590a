// The pilot section of the evaluation report (docs/evaluation.md, "Pilot") as rows of cells,
// which report_markdown.cc and report_html.cc lay out: each dimension with the engine beside
// the team's recorded process, one row per corpus entry, and the decisions both made.
#include <cstdio>

#include "denpex/scorer/scorer.h"
#include "report.h"

namespace denpex::cli {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string OfRecorded(int right, int recorded) {
  return std::to_string(right) + "/" + std::to_string(recorded) + " (" +
         Fixed(recorded > 0 ? 100.0 * right / recorded : 0.0, 1) + "%)";
}

constexpr const char* kNotRecorded = "not recorded";

// The process's side of a dimension.
std::string ProcessCell(const v1::PilotDimension& d) {
  if (d.dimension() == "evidence completeness") return "not recorded (a postmortem cites no lines)";
  if (d.dimension() == "verified recovery") {
    return d.recorded() > 0 ? "the reference: the checkpoint the team resumed from" : kNotRecorded;
  }
  if (d.dimension() == "operator time") {
    return d.recorded() > 0 ? Fixed(d.operator_minutes(), 1) + " operator min" : kNotRecorded;
  }
  if (d.process_recorded() == 0) return kNotRecorded;
  return OfRecorded(d.process_right(), d.process_recorded()) + " right (" +
         std::to_string(d.process_recorded()) + " recorded)";
}

std::string EngineCell(const v1::PilotDimension& d) {
  if (d.recorded() == 0) return kNotRecorded;
  if (d.dimension() == "evidence completeness") {
    return "mean recall " + Fixed(100 * d.engine_score(), 1) + "%; complete in " +
           std::to_string(d.engine_right()) + "/" + std::to_string(d.recorded());
  }
  if (d.dimension() == "verified recovery") {
    return OfRecorded(d.engine_right(), d.recorded()) + " recommended it";
  }
  if (d.dimension() == "operator time") {
    return Fixed(60 * d.engine_minutes(), 1) + " s to answer; " + Fixed(d.minutes_saved(), 1) +
           " operator min saved (" + std::to_string(d.engine_right()) + "/" +
           std::to_string(d.recorded()) + " with the right owner)";
  }
  return OfRecorded(d.engine_right(), d.recorded()) + " right";
}

std::string Yes(const char* yes, const char* no, bool v) { return v ? yes : no; }

std::string OwnerCell(const v1::PilotIncident& p) {
  if (!p.has_owner_correct()) return kNotRecorded;
  std::string out = p.inconclusive() && !p.owner_correct()
                        ? "abstained"
                        : Yes("right", "wrong", p.owner_correct());
  if (p.has_process_owner_correct()) {
    out += Yes("; process right", "; process wrong", p.process_owner_correct());
  }
  return out;
}

std::string EvidenceCell(const v1::PilotIncident& p) {
  if (!p.has_evidence_recall()) return kNotRecorded;
  return std::to_string(p.evidence_cited()) + "/" + std::to_string(p.evidence_expected());
}

std::string CheckpointCell(const v1::PilotIncident& p) {
  if (!p.has_checkpoint_correct()) return kNotRecorded;
  std::string out = Yes("right", "wrong", p.checkpoint_correct()) + " (" + p.engine_resume() + ")";
  if (p.has_process_checkpoint_correct()) {
    out += Yes("; process right", "; process wrong", p.process_checkpoint_correct());
  }
  return out;
}

std::string RecoveryCell(const v1::PilotIncident& p) {
  if (!p.has_recovery_verified()) return kNotRecorded;
  if (p.recovery_verified()) return "verified: " + p.process_resume();
  return "differs: engine " + p.engine_resume() + ", team " + p.process_resume();
}

std::string DecisionsCell(const v1::PilotIncident& p) {
  if (p.decisions_size() == 0) return kNotRecorded;
  std::string out;
  for (const auto& d : p.decisions()) {
    if (!d.differed()) continue;
    out += (out.empty() ? "" : "; ") + d.decision() + ": " + scorer::PilotRightName(d.right()) +
           " right";
  }
  return out.empty() ? "none differed" : out;
}

}  // namespace

std::vector<std::vector<std::string>> PilotDimensionRows(const v1::EvalReport& report) {
  std::vector<std::vector<std::string>> rows;
  if (!report.has_pilot()) return rows;
  const v1::PilotSummary& s = report.pilot();
  rows.push_back({"dimension", "recorded", "engine", "recorded process"});
  for (const auto& d : s.dimensions()) {
    rows.push_back(
        {d.dimension(),
         std::to_string(d.recorded()) + " of " + std::to_string(s.entries()) + " entries",
         EngineCell(d), ProcessCell(d)});
  }
  return rows;
}

std::string PilotTotals(const v1::EvalReport& report) {
  const v1::PilotSummary& s = report.pilot();
  return std::to_string(s.entries()) + " corpus entries scored, " + std::to_string(s.drafts()) +
         " of them drafts (expected outcome not yet confirmed: their scores prove nothing), " +
         std::to_string(s.postmortems()) +
         " with a postmortem. Decisions compared with the process: " +
         std::to_string(s.decisions_compared()) +
         "; differed: " + std::to_string(s.decisions_differed()) + " (engine right " +
         std::to_string(s.engine_right()) + ", process right " + std::to_string(s.process_right()) +
         ", neither " + std::to_string(s.neither_right()) + ").";
}

std::vector<std::vector<std::string>> PilotIncidentRows(const v1::EvalReport& report) {
  std::vector<std::vector<std::string>> rows;
  if (report.pilot_incidents_size() == 0) return rows;
  rows.push_back({"entry", "causal owner", "evidence", "checkpoint decision", "verified recovery",
                  "operator min", "engine s", "min saved", "decisions that differed"});
  for (const auto& p : report.pilot_incidents()) {
    rows.push_back({p.suite() + "/" + p.incident() + (p.draft() ? " (draft)" : ""), OwnerCell(p),
                    EvidenceCell(p), CheckpointCell(p), RecoveryCell(p),
                    p.has_operator_minutes() ? Fixed(p.operator_minutes(), 1) : kNotRecorded,
                    Fixed(60 * p.engine_minutes(), 3),
                    p.has_minutes_saved() ? Fixed(p.minutes_saved(), 1) : "-", DecisionsCell(p)});
  }
  return rows;
}

std::vector<std::vector<std::string>> PilotDecisionRows(const v1::EvalReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : report.pilot_incidents()) {
    for (const auto& d : p.decisions()) {
      if (rows.empty()) {
        rows.push_back(
            {"entry", "decision", "engine", "process", "expected (arbiter)", "differed", "right"});
      }
      rows.push_back({p.suite() + "/" + p.incident() + (p.draft() ? " (draft)" : ""), d.decision(),
                      d.engine(), d.process(), d.expected(), d.differed() ? "yes" : "no",
                      scorer::PilotRightName(d.right())});
    }
  }
  return rows;
}

std::string DraftNote(const v1::EvalReport& report) {
  for (const auto& g : report.aggregates()) {
    if (g.group() != "overall" || g.drafts() == 0) continue;
    return std::to_string(g.drafts()) + " of " + std::to_string(g.incidents()) +
           " incidents were scored against a draft expected outcome (drafted by denpex freeze from "
           "the engine's own diagnosis, not yet confirmed): their scores prove nothing yet.";
  }
  return "";
}

}  // namespace denpex::cli
