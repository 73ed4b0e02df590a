// The fleet's history store a scenario carries (Scenario.history, docs/scenario_format.md):
// earlier incidents placed relative to the fault, written as history.jsonl beside the incident
// directory (docs/history_format.md), and what a correct diagnosis reads from it (the truth's
// `recurrence`, and its recovery escalated as the store's rules say).
#pragma once

#include <filesystem>

#include "denpex/common/status.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/truth.pb.h"
#include "model/faults.h"
#include "model/job.h"

namespace denpex::sim {

// The store's file name, beside incident/ and truth.json.
inline constexpr const char* kHistoryFile = "history.jsonl";

// Writes out_dir/history.jsonl (nothing when the scenario has no history) and fills
// truth->recurrence; a repeat offender's truth recovery is escalated (drain_and_rma first for
// a GPU with an earlier hardware incident, drain_node for a node with two or more).
Status WriteHistory(const v1::Scenario& scenario, const Job& job, const FaultPlan& fault,
                    TimeNs fault_time, const std::filesystem::path& out_dir, v1::Truth* truth);

}  // namespace denpex::sim
