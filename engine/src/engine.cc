// Diagnose: ingest + parse (LoadIncident), one strategy (analyze/), report (report/).
#include "denpex/engine/engine.h"

#include "analyze/strategies.h"
#include "ingest/incident.h"
#include "report/diagnosis.h"

namespace denpex::engine {

std::optional<Strategy> ParseStrategy(std::string_view name) {
  if (name == "engine") return Strategy::kEngine;
  if (name == "first-error") return Strategy::kFirstError;
  return std::nullopt;
}

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kEngine: return "engine";
    case Strategy::kFirstError: return "first-error";
  }
  return "engine";
}

Result<v1::Diagnosis> Diagnose(const std::filesystem::path& incident_dir, const DiagnoseOptions& options) {
  auto incident = LoadIncident(incident_dir, options.threads);
  if (!incident.ok()) return incident.status();
  const Finding finding = options.strategy == Strategy::kFirstError ? AnalyzeFirstError(*incident)
                                                                    : AnalyzeParticipation(*incident);
  return ToDiagnosis(*incident, finding);
}

}  // namespace denpex::engine
