// The end of a Flight Recorder ring, found without running the dump's pickle (docs/log_formats.md
// §28, docs/benchmarks.md "Flight Recorder dumps"). A dump's ring holds the rank's last 2,000
// collectives, oldest first; what the reader keeps of it is each group's last completed entry
// and every entry not completed, which sit at its end. Running the whole pickle builds every
// value of the ring (about 70,000 for 2,000 entries) to keep five of them; this walks the opcodes
// once without building anything, notes where each entry begins, its group and whether its
// `state` is "completed", and writes a pickle of the same dump holding only the entries from the
// first one the reader needs (the memo entries those refer to, defined in the entries skipped,
// written again before them). The caller runs that pickle with the same machine and reader, and
// checks that the reader found each group's last completed entry where the walk did; anything
// this walk does not know (another dump shape, a memo entry that is not a scalar, a version
// without `pg_status`) gives nullopt, and the caller reads the whole dump.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

struct FrTail {
  std::string pickle;       // the dump with entries [first, entries) only
  std::size_t first = 0;    // entries skipped, from the oldest
  std::size_t entries = 0;  // the ring's length
  struct Group {
    std::string name;             // `process_group`'s name, else `pg_id`'s digits
    std::int64_t last_completed;  // its last entry whose state is "completed" (-1: none)
  };
  std::vector<Group> groups;  // every group an entry names, in order of first entry
};

// The tail of a protocol 2-5 pickle dump whose top dict names `pg_status` before `entries` and
// whose entries are dicts (EMPTY_DICT, MARK, ..., SETITEMS) in batches of APPENDS; nullopt when
// the walk cannot tell, or when the reader needs every entry (nothing would be skipped).
std::optional<FrTail> FrPickleTail(std::string_view bytes);

}  // namespace denpex::engine
