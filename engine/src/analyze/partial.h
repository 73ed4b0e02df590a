// A failure the logs place only partly: the launcher names a local rank of a node, and nothing
// in hand gives that worker's global rank (only the failing node's console was collected, cut
// before its ChildFailedError table, with no rendezvous result). The answer is given at the
// level the evidence supports: that node's local rank, rank -1.
#pragma once

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// True (and `f` filled: DIAGNOSED, rank -1, the node and local rank, a class from the exit code
// or the kernel's OOM kill of its pid) when exactly one node's agent reported a worker failure
// and no rank could be given to it. The reason says what is unknown and what to collect.
bool DiagnoseUnrankedFailure(const Incident& inc, const JobFacts& facts, Finding* f);

}  // namespace denpex::engine
