#include "analyze/clocks.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace denpex::engine {
namespace {

TimeNs Median(std::vector<TimeNs>* v) {
  auto mid = v->begin() + static_cast<std::ptrdiff_t>(v->size() / 2);
  std::nth_element(v->begin(), mid, v->end());
  return *mid;
}

}  // namespace

ClockOffsets AlignClocks(const Incident& inc, const JobFacts& facts) {
  ClockOffsets out;
  out.by_node.assign(inc.nodes.size(), 0);
  // (group uid, description, SeqNum) -> (node, enqueue time in that node's clock)
  std::map<std::tuple<StrId, StrId, std::int64_t>, std::vector<std::pair<std::int32_t, TimeNs>>> anchors;
  for (std::int32_t i : facts.wave.timeouts) {
    const Event& e = inc.events[i];
    const auto& w = std::get<WatchdogTimeout>(e.detail);
    if (e.node < 0 || e.clock == Clock::kNone || e.time_borrowed || w.ran_for_ms < 0 || w.seq < 0) continue;
    anchors[{w.pg, w.pg_desc, w.seq}].emplace_back(e.node, e.time - w.ran_for_ms * kNsPerMs);
  }
  std::vector<std::vector<TimeNs>> deltas(inc.nodes.size());
  std::vector<TimeNs> starts;
  for (const auto& [key, members] : anchors) {
    starts.clear();
    for (const auto& m : members) starts.push_back(m.second);
    const TimeNs consensus = Median(&starts);
    for (const auto& [node, start] : members) deltas[node].push_back(start - consensus);
  }
  for (std::size_t n = 0; n < deltas.size(); ++n) {
    if (deltas[n].empty()) continue;
    out.by_node[n] = Median(&deltas[n]);
    ++out.anchored_nodes;
  }
  return out;
}

void ApplyOffsets(const Incident& inc, const ClockOffsets& offsets, JobFacts* facts) {
  for (RankFacts& r : facts->ranks) {
    if (r.exit_event) r.exit_time = offsets.Aligned(inc.events[*r.exit_event]);
  }
  facts->wave.start =
      EarliestTimed(inc, facts->WaveTimeouts(), [&](const Event& e) { return offsets.Aligned(e); });
}

}  // namespace denpex::engine
