#include "analyze/order.h"

#include <algorithm>
#include <optional>

#include "analyze/facts.h"
#include "analyze/scoring.h"

namespace denpex::engine {
namespace {

bool Stamped(const Event& e) { return e.clock != Clock::kNone && !e.time_borrowed; }

// A collector's stamp (Event::time_collected) says when the line was read: no earlier than it
// was written, so it bounds that line, and every line before it in its stream, from above only.
bool StampedWhenWritten(const Event& e) { return Stamped(e) && !e.time_collected; }

// The stamps of the nearest events of its file before it stamped when written (lo) and after
// it stamped at all (hi), for each of the `sorted` event indices.
struct Bounds {
  std::vector<std::optional<TimeNs>> lo, hi;
};

Bounds BoundsOf(const Incident& inc, const std::vector<std::int32_t>& sorted) {
  Bounds b{std::vector<std::optional<TimeNs>>(sorted.size()), std::vector<std::optional<TimeNs>>(sorted.size())};
  const auto n = static_cast<std::int32_t>(inc.events.size());
  std::optional<TimeNs> last;
  std::size_t q = 0;
  for (std::int32_t i = 0; i < n && q < sorted.size(); ++i) {
    if (i > 0 && inc.events[i].file != inc.events[i - 1].file) last.reset();
    for (; q < sorted.size() && sorted[q] == i; ++q) b.lo[q] = last;
    if (StampedWhenWritten(inc.events[i])) last = inc.events[i].time;
  }
  last.reset();
  std::size_t r = sorted.size();
  for (std::int32_t i = n - 1; i >= 0 && r > 0; --i) {
    if (i + 1 < n && inc.events[i].file != inc.events[i + 1].file) last.reset();
    for (; r > 0 && sorted[r - 1] == i; --r) b.hi[r - 1] = last;
    if (Stamped(inc.events[i])) last = inc.events[i].time;
  }
  return b;
}

}  // namespace

std::vector<Order> OrderAgainst(const Incident& inc, const std::vector<std::int32_t>& events, std::int32_t mark) {
  const Event& m = inc.events[mark];
  const bool timed = HasOwnTime(inc, mark);
  const TimeNs before = m.time - kSkewWindow;
  std::vector<Order> out(events.size(), Order::kUnknown);
  std::vector<std::int32_t> unstamped;  // those only their neighbours can order
  for (std::size_t k = 0; k < events.size(); ++k) {
    const Event& e = inc.events[events[k]];
    if (e.file == m.file) {
      out[k] = e.line < m.line ? Order::kBefore : Order::kAfter;
    } else if (timed && e.time_collected && e.time < before) {
      out[k] = Order::kBefore;  // read before the mark, so written before it
    } else if (timed && HasOwnTime(inc, events[k]) && !e.time_collected) {
      out[k] = e.time < before ? Order::kBefore : Order::kAfter;
    } else if (timed) {
      unstamped.push_back(events[k]);
    }
  }
  if (unstamped.empty()) return out;
  std::sort(unstamped.begin(), unstamped.end());
  unstamped.erase(std::unique(unstamped.begin(), unstamped.end()), unstamped.end());
  const Bounds b = BoundsOf(inc, unstamped);
  for (std::size_t k = 0; k < events.size(); ++k) {
    const auto at = std::lower_bound(unstamped.begin(), unstamped.end(), events[k]);
    if (at == unstamped.end() || *at != events[k] || out[k] != Order::kUnknown) continue;
    const std::size_t q = static_cast<std::size_t>(at - unstamped.begin());
    if (b.hi[q] && *b.hi[q] < before) {
      out[k] = Order::kBefore;  // a stamped line written after it is already earlier
    } else if (b.lo[q] && *b.lo[q] >= before) {
      out[k] = Order::kAfter;   // a stamped line written before it is already later
    }
  }
  return out;
}

}  // namespace denpex::engine
