// The wait-for graph: a rank that timed out waits on the collective it timed out in, and
// that collective waits on every member that never joined it (a silent member, or a reporter
// whose last enqueued collective is older). A rank its agent tore down was alive until then
// and is presumed to wait in its groups' collectives like its peers. The chains end in
// terminal components (nothing leads out of them); the silent ranks there are where the
// cascade started, and how many reporters reach one measures how much of it it explains.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "analyze/groups.h"

namespace denpex::engine {

struct WaitAnalysis {
  std::int32_t reporters = 0;  // ranks that reported a timeout
  // By global rank, for silent ranks at the end of a chain: the reporters that wait on it,
  // directly or through other blocked ranks. 0 for every other rank.
  std::vector<std::int32_t> explains;
  // By global rank: the groups in which it is a member that blocked a reporter.
  std::vector<std::int32_t> blocking_groups;
};

WaitAnalysis AnalyzeWaits(const JobFacts& facts, const std::vector<ProcessGroup>& groups);

}  // namespace denpex::engine
