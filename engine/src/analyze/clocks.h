// Clock alignment per node from causal anchors. Every member of a collective that never
// completes enqueued it at about the same true time (training steps are synchronous), so a
// reporter's printed time minus its `ran for` is that enqueue time in its node's clock; the
// difference to the collective's consensus (the median over its reporters) is the node's
// clock offset, and a node's offset is the median over all its reporters. Nodes with no
// anchor keep offset 0. The offsets let cross-node order survive skews of several seconds.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "incident/incident.h"

namespace denpex::engine {

struct ClockOffsets {
  std::vector<TimeNs> by_node;  // parallel to Incident::nodes: subtract from a printed time
  std::int32_t anchored_nodes = 0;

  TimeNs Aligned(const Event& e) const {
    return e.node >= 0 && e.node < static_cast<std::int32_t>(by_node.size()) ? e.time - by_node[e.node] : e.time;
  }
};

ClockOffsets AlignClocks(const Incident& inc, const JobFacts& facts);

// Rewrites the facts' times (exits, the wave's start) in aligned time.
void ApplyOffsets(const Incident& inc, const ClockOffsets& offsets, JobFacts* facts);

}  // namespace denpex::engine
