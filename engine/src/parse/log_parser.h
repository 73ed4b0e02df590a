// ParseLog: one log file's text in, its events out. Runs on one file at a time (files are
// parsed in parallel); lines are string_views into the file's mapping, and nothing is
// allocated per line: a line costs a few first-byte tests unless it has a shape that matters.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "parse/event.h"
#include "parse/strings.h"

namespace denpex::engine {

// Longer lines are counted as malformed and skipped (a collapsed paste, a binary blob).
inline constexpr std::size_t kMaxLineBytes = 1 << 20;

struct ParsedLog {
  std::vector<Event> events;  // in line order; StrIds refer to `strings`
  StringTable strings;
  std::vector<std::int32_t> prefix_ranks;  // distinct `[rank<G>]:` ranks, sorted
  std::int64_t lines = 0;
  std::int64_t malformed = 0;
  bool agent = false;  // carries torchrun / torch.distributed.elastic agent lines
};

// `file` is stored in each event; `file_rank` (from a rank_<R>.log name, else -1) is the rank
// of lines that carry no `[rank<G>]:` prefix.
ParsedLog ParseLog(std::string_view text, std::uint32_t file, std::int32_t file_rank);

}  // namespace denpex::engine
