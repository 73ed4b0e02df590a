// Per-rank step timers (docs/log_formats.md §5): DeepSpeed's timer line as its log_dist logger
// prints it, after the `[<time>] [INFO] [logging.py:96:log_dist] ` header:
//   [Rank 17] time (ms) | fwd: 498.12 | bwd: 1010.40 | bwd_inner: 1002.51 | bwd_allreduce: 7.89 | step: 11.20
//   [Rank 17] rank=17 time (ms) | forward: 498.12 | backward: ... | backward_inner: ... | ...
//   time (ms) | forward_microstep: 193.65 | backward_microstep: 329.25 | ...   (old, no rank)
// Each timer is compute or collective wait by its name; `bwd`/`backward` (compute plus the
// gradient reduction) counts only when no `*_inner` timer splits it, and the optimizer's
// `step` counts as neither. The line's shape is the list of its timers' names: a line a
// terminal's hard wrap cut has fewer than its job's others (analyze/fail_slow.cc compares only
// lines of one shape), and one that ends in a bar is cut for sure (shape 0).
#include <algorithm>
#include <charconv>

#include "parse/families.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool IsWaitTimer(std::string_view name) {
  for (std::string_view w : {"allreduce", "allgather", "all_gather", "reduce_scatter", "alltoall", "a2a", "comm", "wait",
                             "recv", "send", "sync"}) {
    if (Contains(name, w)) return true;
  }
  return false;
}

bool IsOptimizerTimer(std::string_view name) {
  return name == "step" || name.starts_with("step_") || name.starts_with("optimizer");
}

bool IsWholeBackward(std::string_view name) {
  return name == "bwd" || name == "backward" || name == "bwd_microstep" || name == "backward_microstep";
}

}  // namespace

bool RecogniseStepTimers(std::string_view msg, StringTable* /*strings*/, Recognised* out) {
  Scanner s(msg);
  std::int64_t rank = -1;
  if (s.Lit("[Rank ")) {
    if (!s.Digits(1, 9, &rank) || !s.Char(']') || rank > kMaxRank) return false;
    s.Char(' ');
    if (s.Lit("rank=")) {
      std::int64_t again;
      if (!s.Digits(1, 9, &again) || !s.Char(' ')) return false;
    }
  }
  if (!s.Lit("time (ms) |")) return false;
  std::string_view rest = s.Rest();
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  // DeepSpeed never ends the line with a bar: one that does was cut (a terminal's hard wrap) and
  // its missing timers would skew the compute/wait split. It stays a step (the rank's k-th line
  // is its k-th step) of a shape no whole line has.
  const bool cut = !rest.empty() && rest.back() == '|';
  if (cut) rest.remove_suffix(1);
  if (rest.empty()) return false;
  std::uint32_t shape = 2166136261u;  // FNV-1a over the names
  double compute = 0, wait = 0, whole_backward = 0;
  bool inner = false;
  int timers = 0;
  while (!rest.empty()) {
    const std::size_t bar = rest.find('|');
    std::string_view field = rest.substr(0, bar);
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    const std::size_t colon = field.find(':');
    if (colon == std::string_view::npos) return false;
    std::string_view name = field.substr(0, colon), value = field.substr(colon + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || name.empty() || !(v >= 0)) return false;
    ++timers;
    for (const char c : name) shape = (shape ^ static_cast<unsigned char>(c)) * 16777619u;
    shape = (shape ^ '|') * 16777619u;
    if (IsOptimizerTimer(name)) continue;
    if (IsWaitTimer(name)) {
      wait += v;
    } else if (IsWholeBackward(name)) {
      whole_backward += v;
    } else {
      inner = inner || Contains(name, "inner");
      compute += v;
    }
  }
  if (timers == 0) return false;
  if (!inner) compute += whole_backward;  // no split: the whole backward is compute
  out->family = Family::kTrainer;
  out->kind = Kind::kStepTimers;
  out->detail = StepTimers{static_cast<float>(compute), static_cast<float>(wait), cut ? 0u : std::max(shape, 1u)};
  out->error = false;
  out->rank = static_cast<std::int32_t>(rank);
  return true;
}

}  // namespace denpex::engine
