// Passes over an incident's events in parallel, over blocks of them (the caller's task arena):
// what they find does not depend on the thread count.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parse/event.h"

namespace denpex::engine {

inline constexpr std::size_t kEventGrain = 8192;  // events a block

// f(Event&) for every event: f must touch nothing but its event (or read-only state).
template <typename F>
void EachEvent(std::vector<Event>& events, F f) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, events.size(), kEventGrain),
                    [&](const auto& range) {
                      for (std::size_t i = range.begin(); i != range.end(); ++i) f(events[i]);
                    });
}

// The index of the first event for which p holds (-1: none; p reads its event only). A block's
// search stops at its first, and a block after one already found is not searched.
template <typename P>
std::int32_t FirstEventWhere(const std::vector<Event>& events, P p) {
  const auto first = [](std::int32_t a, std::int32_t b) {
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
  };
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, events.size(), kEventGrain), std::int32_t{-1},
      [&](const auto& range, std::int32_t found) {
        if (found >= 0 && static_cast<std::size_t>(found) < range.begin()) return found;
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          if (p(events[i])) return first(found, static_cast<std::int32_t>(i));
        }
        return found;
      },
      first);
}

// Whether p holds for some event.
template <typename P>
bool AnyEvent(const std::vector<Event>& events, P p) {
  return FirstEventWhere(events, p) >= 0;
}

}  // namespace denpex::engine
