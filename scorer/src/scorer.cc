#include "denpex/scorer/scorer.h"

namespace denpex::scorer {
// Placeholder until the scorer lands.
v1::IncidentScore ScoreIncident(const v1::Truth&, const v1::Diagnosis&) { return {}; }
std::vector<v1::AggregateScore> Aggregate(const std::vector<v1::IncidentScore>&) { return {}; }
std::string RenderTable(const v1::EvalReport&) { return {}; }
std::string RenderIncident(const v1::IncidentScore&) { return {}; }
}  // namespace denpex::scorer
