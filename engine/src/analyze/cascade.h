// The cascade: every rank and error record that followed from the initiator, grouped by
// masked signature so thousands of near-identical lines read as a handful of rows.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "analyze/finding.h"

namespace denpex::engine {

// `excluded`: the initiator (or the undecided candidates); `initiator_node`: its node, whose
// agent report is initiating evidence rather than a secondary error (-1 when unknown).
CascadeSummary SummarizeCascade(const Incident& inc, const JobFacts& facts,
                                const std::vector<std::int32_t>& excluded,
                                std::int32_t initiator_node);

}  // namespace denpex::engine
