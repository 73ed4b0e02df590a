#include "denpex/engine/engine.h"

namespace denpex::engine {
// Placeholder until the engine lands.
std::optional<Strategy> ParseStrategy(std::string_view name) {
  if (name == "engine") return Strategy::kEngine;
  if (name == "first-error") return Strategy::kFirstError;
  return std::nullopt;
}
std::string_view StrategyName(Strategy s) {
  return s == Strategy::kEngine ? "engine" : "first-error";
}
Result<v1::Diagnosis> Diagnose(const std::filesystem::path&, const DiagnoseOptions&) {
  return Status::Internal("diagnose: not implemented yet");
}
std::string RenderText(const v1::Diagnosis&) { return {}; }
}  // namespace denpex::engine
