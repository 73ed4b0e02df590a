#include "denpex/sim/simulator.h"

namespace denpex::sim {
// Placeholder until the simulator lands.
Result<v1::Scenario> ParseScenario(std::string_view, std::string_view source,
                                   std::span<const std::string>) {
  return Status::Internal(std::string(source) + ": scenario parsing not implemented yet");
}
Result<v1::Scenario> LoadScenario(const std::filesystem::path& path,
                                  std::span<const std::string> overrides) {
  return ParseScenario("", path.string(), overrides);
}
}  // namespace denpex::sim
