// Collective mismatch: a rank issued a different collective (OpType) or size (Numel) than its
// peers at the same SeqNum of a process group. Nobody is silent then — every member times
// out, the odd rank included — so participation cannot name it; the odd watchdog line can.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "incident/incident.h"

namespace denpex::engine {

struct Mismatch {
  std::int32_t rank = -1;
  std::int32_t event = -1;       // its own watchdog line (the odd OpType / Numel)
  std::int32_t peer_event = -1;  // the earliest peer's line at the same SeqNum
};

// One entry per rank whose line disagrees with every other reporter of its collective (at
// least two peers that agree among themselves). `timeouts`: the wave's watchdog timeouts
// (WaveFacts::timeouts), the only facts it reads.
std::vector<Mismatch> FindMismatches(const Incident& inc,
                                     const std::vector<std::int32_t>& timeouts);

}  // namespace denpex::engine
