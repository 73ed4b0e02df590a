// The tracebacks of the frameworks' own errors (formatter_frameworks.cc): tables of lines with
// formatter_app.cc's {placeholders}; the line that starts with '!' is the one a truth cites.
#pragma once

#include <span>
#include <string_view>

#include "model/records.h"
#include "profiles.h"

namespace denpex::sim {

// A traceback as up to two tables printed one after the other (shared head frames + tail), after
// the exception that caused it (`cause`: its traceback and "The above exception was the direct
// cause ..."), with the process's own lines before it (`before`: a JIT build's output) and after
// it (`after`: Python's unraisable-exception report from a __del__ at teardown), which carry no
// rank prefix.
struct AppTraceback {
  std::span<const std::string_view> head;
  std::span<const std::string_view> tail;
  std::span<const std::string_view> before = {};
  std::span<const std::string_view> cause = {};
  std::span<const std::string_view> after = {};
};

// The traceback of `source` (never kMegatron: formatter_app.cc has those); `variant` picks the
// error, `torch` the release's wording where it changed.
AppTraceback AppTracebackOf(AppError source, int variant, const TorchProfile& torch);

}  // namespace denpex::sim
