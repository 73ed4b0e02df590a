#include "report/cascade_times.h"

#include <map>
#include <string>

namespace denpex::engine {

CascadeTimes RankFirstErrors(const Incident& inc, const std::vector<TimeNs>& offsets) {
  auto offset_of = [&](std::int32_t node) {
    return node >= 0 && static_cast<std::size_t>(node) < offsets.size() ? offsets[node] : 0;
  };
  std::map<std::int32_t, const Event*> first;  // by rank, the earliest aligned error
  for (const Event& e : inc.events) {
    if (e.rank < 0 || e.clock == Clock::kNone || e.signature == kNoStr) continue;
    auto [it, added] = first.try_emplace(e.rank, &e);
    if (!added && e.time - offset_of(e.node) < it->second->time - offset_of(it->second->node)) {
      it->second = &e;
    }
  }
  CascadeTimes out;
  out.aligned = !offsets.empty();
  out.ranks.reserve(first.size());
  for (const auto& [rank, e] : first) {
    RankFirstError r{.rank = rank,
                     .printed = e->time,
                     .aligned = e->time - offset_of(e->node),
                     .file = inc.files[e->file].path,
                     .line = e->line};
    if (e->node >= 0) r.node = inc.nodes[e->node];
    ((r.what = FamilyName(e->family)) += ' ') += KindName(e->kind);
    out.ranks.push_back(std::move(r));
  }
  for (std::size_t n = 0; n < offsets.size() && n < inc.nodes.size(); ++n) {
    if (offsets[n] != 0) out.clocks.push_back({inc.nodes[n], offsets[n]});
  }
  return out;
}

}  // namespace denpex::engine
