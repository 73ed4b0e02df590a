// NCCL RAS reports (docs/log_formats.md §29): what `ncclras` prints about a live job's
// communicators (text from NCCL 2.24, JSON from 2.28.7), kept in a file, often many reports
// appended by a poller. Recognised by their lines, never by the file's name or folder; read
// whole into the kRasReport / kRasComm / kRasRank events of parse/event.h, each citing the line
// it comes from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parse/event.h"
#include "parse/parse_log.h"

namespace denpex::engine {

// A report file over this is refused (a poller's day of 32k-rank text reports is a few MB).
inline constexpr std::uint64_t kMaxNcclRasBytes = std::uint64_t{64} << 20;
// The reports of one file read: its newest (older ones say less about where the job is now).
inline constexpr int kNcclRasReportsRead = 16;

enum class RasForm : std::uint8_t { kNone, kText, kJson };

// What a file's head says: a text report (one of its first 8 non-empty lines, any prefix before
// it, is `NCCL version <v> compiled with CUDA <c>`), the JSON form (an object whose first key
// is `nccl_version`), or neither. `undecided` (when given) is set when `head` holds no whole
// line yet but blank and stamp lines: a poller's file before its first report arrives.
RasForm SniffNcclRas(std::string_view head, bool* undecided = nullptr);

// One file's reports read: their events (file `file`, strings in `log.strings`) and what the
// caller names in `input.problems` (a repaired JSON, reports left unread); `problem` when
// nothing could be read (the caller counts the file unreadable).
struct RasRead {
  ParsedLog log;
  std::vector<std::string> notes;
  std::string problem;
};
RasRead ReadNcclRas(std::string_view text, RasForm form, std::uint32_t file);

// "behind", "ahead", "missing", "dead", "status", "error".
std::string_view RasWhyName(RasRank::Why why);

}  // namespace denpex::engine
