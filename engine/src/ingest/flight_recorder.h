// PyTorch Flight Recorder dumps (docs/log_formats.md §28): each rank's ring of its last
// collectives, written as `<prefix><rank>` (TORCH_NCCL_DEBUG_INFO_TEMP_FILE, default
// `/tmp/nccl_trace_rank_`) when its watchdog fires. Recognised by their content (a pickle whose
// top dict holds the dump's keys, or the JSON form), never by their folder; read whole, once,
// into the kFrDump / kFrGroup / kFrCollective events of parse/event.h. Records, not lines: an
// event's `line` is its entry's place in `entries` (1-based), its offset and length 0, and a
// report renders it from its fields (FrEventText), never from the file's bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "parse/event.h"
#include "parse/parse_log.h"
#include "parse/strings.h"

namespace denpex::engine {

// A dump over this is refused (a 2,000-entry ring with stacks is a few MB).
inline constexpr std::uint64_t kMaxFlightRecorderBytes = std::uint64_t{256} << 20;

enum class FrForm : std::uint8_t { kNone, kPickle, kJson };

// What a file's bytes say: a dump's pickle (protocol 2 to 5, the first key of its top dict one of
// the dump's: `version`, `pg_config`, `entries`, ...), its JSON (one object whose first key is one
// of those and that names `pg_config` and `entries`), or neither (kNone: a text log, another
// binary). Costs a few bytes for anything but a JSON object starting with a dump's key.
// `whole` false: `bytes` is only the file's head (a growing file's), and a JSON object whose
// first key is a dump's is taken to be one (the caller checks the whole once it reads it).
FrForm SniffFlightRecorder(std::string_view bytes, bool whole = true);

// The rank a dump's file name ends with (`nccl_trace_rank_3`, `rank_3`, `torchcomm_fr_trace_3`,
// `nccl_trace_rank_3.json`, `..._3.pkl`): its trailing digits, after up to two extensions that
// are not all digits; -1 when it ends in no number (or one past the engine's rank bound).
std::int32_t FlightRecorderRank(std::string_view file_name);

// One dump read: its events (file `file`, rank `rank`, strings in `log.strings`) and, when it
// could not be read whole, what was wrong (the caller names the file); a dump that is not one
// (no `entries`, no `pg_config`) gives no event and a problem.
// A pickle dump's ring is read from the end the reader needs (flight_recorder_tail.h), and
// whole where that walk cannot tell; kWhole always runs every entry (the tests compare them).
struct FrRead {
  ParsedLog log;
  std::string problem;
};
enum class FrRing : std::uint8_t { kTail, kWhole };
FrRead ReadFlightRecorder(std::string_view bytes, FrForm form, std::uint32_t file,
                          std::int32_t rank, FrRing ring = FrRing::kTail);

// A dump event as a report quotes it (its fields, as the dump holds them): `nccl_trace_rank_3
// entry 412: nccl:all_reduce pg 0 (default_pg) seq 57 started, sizes [[1024]] [Float]`. `name`
// is the dump's file name; `str` resolves the event's StrIds. Empty for any other event.
std::string FrEventText(const Event& e, std::string_view name, const StringTable& str);

// "scheduled", "started", "completed": an entry's `state` as the dump writes it.
std::string_view FrStateName(FrCollective::State s);

}  // namespace denpex::engine
