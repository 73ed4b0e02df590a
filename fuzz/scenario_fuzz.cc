// Fuzz target for the scenario reader (denpex/sim/simulator.h, ParseScenario): any bytes as a
// scenario file. It may refuse them with a message naming a line and column, never crash or
// hang; the simulator is not run.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "denpex/sim/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)denpex::sim::ParseScenario(text, "fuzz.textproto");
  return 0;
}
