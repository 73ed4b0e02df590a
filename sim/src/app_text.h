// The tracebacks of the frameworks' own errors (formatter_frameworks.cc): tables of lines with
// formatter_app.cc's {placeholders}; the line that starts with '!' is the one a truth cites.
#pragma once

#include <span>
#include <string_view>

#include "profiles.h"
#include "records.h"

namespace denpex::sim {

// A traceback as up to two tables printed one after the other (shared head frames + tail).
struct AppTraceback {
  std::span<const std::string_view> head;
  std::span<const std::string_view> tail;
};

// The traceback of `source` (never kMegatron: formatter_app.cc has those); `variant` picks the
// error, `torch` the release's wording where it changed.
AppTraceback AppTracebackOf(AppError source, int variant, const TorchProfile& torch);

}  // namespace denpex::sim
