// What the NCCL RAS reports say (the nccl_ras family's events, docs/log_formats.md §29): in the
// newest report, the ranks whose process is gone (considered dead, or silent: no data from it)
// and the ranks that launched fewer operations of a type than the rest of their communicator (a
// rank outside the collective the others have entered: stuck in its own code, or slow). A rank
// behind in one type and ahead in another issued another collective than its peers (a
// mismatched or skipped one). A rank ahead alone is no root: RAS lists the few ranks ahead as
// readily as the few behind, and those ahead are the ones waiting. A rank behind at the same
// count in an earlier report too has not moved since (stuck, not slow).
#pragma once

#include <cstdint>
#include <vector>

#include "incident/incident.h"

namespace denpex::engine {

struct RasBlocker {
  enum class Why : std::uint8_t { kGone, kBehind, kStuck, kOdd };
  std::int32_t rank = -1;
  Why why = Why::kBehind;
  std::int32_t event = -1;    // its kRasRank event in the newest report
  std::int32_t earlier = -1;  // kStuck: the same count in an earlier report (kRasRank)
  std::int32_t ahead = -1;    // kOdd: where it is ahead (kRasRank)
};

struct RasAnalysis {
  std::int32_t reports = 0;       // reports read (every file's)
  std::int32_t newest = -1;       // the newest report's kRasReport event
  std::vector<RasBlocker> roots;  // in rank order

  const RasBlocker* RootOf(std::int32_t rank) const {
    for (const RasBlocker& b : roots) {
      if (b.rank == rank) return &b;
    }
    return nullptr;
  }
};

RasAnalysis AnalyzeNcclRas(const Incident& inc);

// What RAS alone says, as an operator reads its text report (the `ras` baseline,
// analyze/baselines.cc): the ranks it lists one by one in its newest report, in its order: the
// communicators' missing ranks, then those whose status or count differs from the most common
// (the outliers, whichever side they are on). Ranks of a communicator smaller than the job count
// only when tied to a global rank.
struct RasVerdict {
  std::vector<std::int32_t> ranks;  // in the report's order
  std::int32_t event = -1;          // the first one's kRasRank event
};
RasVerdict RasListedVerdict(const Incident& inc);

}  // namespace denpex::engine
