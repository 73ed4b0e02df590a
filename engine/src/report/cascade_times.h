// Each rank's first error, printed and aligned, for a report a person reads
// (`DiagnoseWithTimes`, denpex/engine/engine.h).
#pragma once

#include <vector>

#include "denpex/engine/engine.h"
#include "incident/incident.h"

namespace denpex::engine {

// `offsets` parallel to Incident::nodes (ClockOffsets::by_node); empty: every clock as printed.
CascadeTimes RankFirstErrors(const Incident& inc, const std::vector<TimeNs>& offsets);

}  // namespace denpex::engine
