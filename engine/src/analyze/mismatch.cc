#include "analyze/mismatch.h"

#include <map>
#include <tuple>

namespace denpex::engine {
namespace {

// What a rank says it was running: op and sizes.
using Shape = std::tuple<StrId, std::int64_t, std::int64_t>;

Shape ShapeOf(const WatchdogTimeout& w) { return {w.op, w.numel_in, w.numel_out}; }

}  // namespace

std::vector<Mismatch> FindMismatches(const Incident& inc, const JobFacts& facts) {
  // (group uid, description, SeqNum) -> the reporters' timeout events
  std::map<std::tuple<StrId, StrId, std::int64_t>, std::vector<std::int32_t>> collectives;
  for (std::int32_t i : facts.timeouts) {
    const auto& w = std::get<WatchdogTimeout>(inc.events[i].detail);
    if (w.seq >= 0) collectives[{w.pg, w.pg_desc, w.seq}].push_back(i);
  }
  std::vector<Mismatch> out;
  for (const auto& [key, events] : collectives) {
    if (events.size() < 3) continue;
    std::map<Shape, std::vector<std::int32_t>> shapes;
    for (std::int32_t i : events) shapes[ShapeOf(std::get<WatchdogTimeout>(inc.events[i].detail))].push_back(i);
    if (shapes.size() != 2) continue;
    const auto& a = shapes.begin()->second;
    const auto& b = std::next(shapes.begin())->second;
    const auto& odd = a.size() == 1 ? a : b;
    const auto& rest = a.size() == 1 ? b : a;
    if (odd.size() != 1 || rest.size() < 2) continue;
    std::int32_t peer = rest.front();
    for (std::int32_t i : rest) {
      if (inc.events[i].time < inc.events[peer].time) peer = i;
    }
    out.push_back({inc.events[odd.front()].rank, odd.front(), peer});
  }
  return out;
}

}  // namespace denpex::engine
