#include "analyze/mismatch.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace denpex::engine {
namespace {

// What a rank says it was running: op and sizes.
using Shape = std::tuple<StrId, std::int64_t, std::int64_t>;

Shape ShapeOf(const WatchdogTimeout& w) { return {w.op, w.numel_in, w.numel_out}; }

}  // namespace

std::vector<Mismatch> FindMismatches(const Incident& inc,
                                     const std::vector<std::int32_t>& timeouts) {
  // (group uid, description, SeqNum, base) -> the reporters' timeout events. A group printed
  // without a uid (torch ≤ 2.3 `[Rank r]`) is told apart by its base, global - group rank: the
  // contiguous groups (tensor parallel) whose members sit next to each other.
  // Sorted by key, each key's events in the order of the wave (a stable sort of the pairs: a map
  // of 30 k keys over 150 k timeouts cost more than the rest of the search).
  using Key = std::tuple<StrId, StrId, std::int64_t, std::int64_t>;
  std::vector<std::pair<Key, std::int32_t>> keyed;
  keyed.reserve(timeouts.size());
  VisitEvents(inc, timeouts, [&](std::int32_t i) {
    const Event& e = inc.events[i];
    const auto& w = std::get<WatchdogTimeout>(e.detail);
    const std::int64_t base = w.pg == kNoStr ? std::int64_t{e.rank} - w.group_rank : 0;
    if (w.seq >= 0) keyed.emplace_back(Key{w.pg, w.pg_desc, w.seq, base}, i);
  });
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Mismatch> out;
  std::vector<std::int32_t> events;
  for (std::size_t begin = 0, end = 0; begin < keyed.size(); begin = end) {
    events.clear();
    for (end = begin; end < keyed.size() && keyed[end].first == keyed[begin].first; ++end)
      events.push_back(keyed[end].second);
    // A line cut before its op or sizes (a truncated log's last line) says nothing of its shape
    // where its peers' lines print them (torch >= 2.0 prints NumelIn and NumelOut).
    auto partial = [&](std::int32_t i) {
      const auto& w = std::get<WatchdogTimeout>(inc.events[i].detail);
      return w.op == kNoStr || w.numel_in < 0 || w.numel_out < 0;
    };
    if (!std::all_of(events.begin(), events.end(), partial)) std::erase_if(events, partial);
    // A rank that says two shapes for one collective (its watchdog line and a quote of it glued
    // to the next file's first line, where a file was cut and files were laid one after another:
    // `NumelOut=4000[W302 ...`) is not known to have issued either: it neither stands out nor
    // votes.
    std::map<std::int32_t, Shape> said;
    std::set<std::int32_t> unsure;
    for (std::int32_t i : events) {
      const Shape shape = ShapeOf(std::get<WatchdogTimeout>(inc.events[i].detail));
      const auto [it, added] = said.try_emplace(inc.events[i].rank, shape);
      if (!added && it->second != shape) unsure.insert(inc.events[i].rank);
    }
    std::erase_if(events, [&](std::int32_t i) { return unsure.contains(inc.events[i].rank); });
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
