// Each node's IB port state and counters as a collection script gathers them for a fail-slow
// investigation (`grep -H . /sys/class/infiniband/*/ports/1/...` into <hostname>/ib_counters.log;
// docs/log_formats.md §5c): written for the fail-slow kinds, after the run, and for a failed link
// whose ends failed together (FAULT_KIND_LINK_FAILURE variant 1). A slow NIC (FAULT_KIND_SLOW_NIC)
// or the failed link's first end shows on its port; healthy ports now and then carry a few
// symbol errors.
#pragma once

#include <filesystem>

#include "denpex/common/status.h"
#include "model/faults.h"
#include "model/job.h"
#include "writer.h"

namespace denpex::sim {

// FAULT_KIND_LINK_FAILURE, variant 1: the counters were collected (its bad port errs).
bool LinkCountersCollected(const FaultPlan& fault);

// Writes the files; returns the slow port's cited line (its symbol_error counter), empty when
// no port is slow.
Result<CitedLine> WriteIbCounters(const Job& job, const FaultPlan& fault, const std::filesystem::path& incident);

}  // namespace denpex::sim
