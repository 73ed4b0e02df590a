// Order: where a rank's failure line stands against a timed word of the scheduler or the
// platform (docs/log_formats.md, "Order"). A claim that the scheduler ended the job before any
// rank failed needs evidence of that order for every failure line: the place of both lines in
// one file, both lines' own stamps, or, for a line with no stamp of its own (srun-labelled
// tracebacks, srun's `task N: Exited`), the stamped lines of its file before and after it,
// which bound when it was written. A collector's stamp on a line that states no time (CRI,
// journal, `kubectl logs --timestamps`) is when the line was read: it proves a line came before
// the mark, never after it. Without such evidence the order is unknown, and the claim not made.
#pragma once

#include <cstdint>
#include <vector>

#include "incident/incident.h"

namespace denpex::engine {

enum class Order : std::uint8_t {
  kBefore,   // it came earlier than the mark, by more than the clock-skew window
  kAfter,    // it came after the mark, or within the window
  kUnknown,  // nothing orders the two
};

// Where each of `events` (event indices) stands against event `mark`; parallel to `events`.
// One pass over the events at most (the bounds of the unstamped ones).
std::vector<Order> OrderAgainst(const Incident& inc, const std::vector<std::int32_t>& events, std::int32_t mark);

}  // namespace denpex::engine
