// A straggler: a job that did not fail (no rank failed, no watchdog wave, no scheduler end) but
// whose step lines show one rank spending most of each step in its own part (`data_ms` of a
// key=value step line) while its peers spend theirs waiting for it in the collectives.
#pragma once

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// True, and `f` filled, when exactly one rank's own part has been most of its step since some
// step while every other rank that prints step lines spends well under half of it there.
bool FindStraggler(const Incident& inc, const JobFacts& facts, Finding* f);

}  // namespace denpex::engine
