// Recognisers for the trainer lines that print a step's loss or time (docs/metrics.md), tried in
// the order of one table. Pure functions over a message whose collector prefixes are already
// peeled (parse/prefix.h): no allocation, no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "denpex/common/time.h"
#include "denpex/engine/metrics.h"
#include "parse/scan.h"

namespace denpex::engine::metrics {

// What one line (or one `\r`-separated piece of it: a tqdm bar) says.
struct MetricLine {
  TrainerShape shape = TrainerShape::kMegatron;
  std::int64_t step = -1;  // -1: the line names no step (HF Trainer's loss dict)
  std::int64_t total = 0;  // the run's or the bar's last step, 0 when not printed
  std::optional<double> loss;
  std::optional<double> seconds_per_step;
  std::int32_t rank = -1;  // the line's own word on whose step it is
  bool bar = false;        // a tqdm bar (no loss; which bar it is is decided per stream)
};

// The first recogniser of the table that takes `message`; kNo when none does.
Match RecogniseMetricLine(std::string_view message, MetricLine* out);

// A program's own stamp opening `message` (after at most 24 bytes of header, such as torchtitan's
// `[titan] ` or a bracket): `YYYY-MM-DD hh:mm:ss` with `T` or a space, and a `.` or `,` fraction.
// Read as UTC: the lines of one run share a zone, and only their differences are used.
std::optional<TimeNs> LeadingStamp(std::string_view message);

// A cheap test that a line may hold one of the table's shapes (a literal each shape needs).
bool MayHoldMetric(std::string_view line);

}  // namespace denpex::engine::metrics
