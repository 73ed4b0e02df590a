// Process groups as the watchdog reports show them, and who belongs to them. A silent rank
// printed nothing, but its peers' reports name its group and their own place in it; Megatron
// builds every group as an arithmetic progression (global = base + stride * group rank), so
// the members can be recovered once the progression is verified against every reporter.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "incident/incident.h"

namespace denpex::engine {

struct GroupReport {
  std::int32_t rank = -1;        // global rank of the reporter
  std::int32_t group_rank = -1;  // its rank within the group
  std::int64_t seq = -1;         // SeqNum of the collective it timed out on
  std::int64_t last_enqueued = -1;  // -1 when the status line was missing
  std::int32_t event = -1;
};

struct ProcessGroup {
  StrId uid = kNoStr;
  StrId desc = kNoStr;
  std::vector<GroupReport> reports;   // one per reporting rank, by group rank
  std::vector<std::int32_t> members;  // global rank of each group rank; empty when unknown
};

std::vector<ProcessGroup> InferGroups(const Incident& inc, const JobFacts& facts);

// The report of the member at `group_rank`, or null when that member reported nothing here.
const GroupReport* ReportAt(const ProcessGroup& g, std::int32_t group_rank);

// True when `reporter` is blocked on the member at `group_rank`: that member never timed out
// in this group, or it had not yet enqueued the collective the reporter waits in.
bool WaitsOn(const ProcessGroup& g, const GroupReport& reporter, std::int32_t group_rank);

}  // namespace denpex::engine
