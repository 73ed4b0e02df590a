#include "denpex/sim/simulator.h"

namespace denpex::sim {
// Placeholder until the simulator lands.
Result<SimulateResult> Simulate(const v1::Scenario&, const SimulateOptions&) {
  return Status::Internal("simulate: not implemented yet");
}
}  // namespace denpex::sim
