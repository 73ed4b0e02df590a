// ParseLog: one log file's text in, its events out. Runs on one file (or one chunk of a large
// file) at a time, in parallel; lines are string_views into the file's mapping, and nothing is
// allocated per line. A SIMD pre-filter (triggers.h) finds the lines that hold a trigger
// literal of some recogniser; only those are read whole (prefixes, header, recognisers), and
// every other line costs its share of a newline count, so line numbers stay exact. While a
// multi-line record is open, every line is read whole.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parse/event.h"
#include "parse/prefix.h"
#include "parse/strings.h"

namespace denpex::engine {

// Longer lines are counted as malformed and skipped (a collapsed paste, a binary blob).
inline constexpr std::size_t kMaxLineBytes = 1 << 20;
// The first lines of each file (or chunk) are searched for a stamp with a year even when they
// hold no trigger: a launcher's banner often is the only line that carries one.
inline constexpr std::uint32_t kOpeningLines = 64;  // of the file (its first chunk), not of each chunk

// A line of a file, by place (what a report quotes when no event stands for it).
struct LineSpan {
  std::uint32_t line = 0;  // 0: none
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

// Where a parse gives back the bytes it has passed: a mapped file's pages (ingest/file_text.h).
class ReadBehind {
 public:
  // [offset, offset + length) of the file (whole pages inside it) will not be read again soon;
  // reading it again stays correct, it only costs the page faults.
  virtual void Release(std::uint64_t offset, std::uint64_t length) const = 0;
  // [offset, offset + length) will be read next: its pages may be mapped in one call now rather
  // than one fault at a time (a hint; a file that is not mapped ignores it).
  virtual void Fetch(std::uint64_t /*offset*/, std::uint64_t /*length*/) const {}
  // Reads [offset, offset + length) of the file into `into` (read(2), not through the mapping):
  // a copy the parse may read instead of the mapped pages (ingest/chunks.cc, ParseChunk). False
  // when it cannot give every byte (a file read into memory, or one shorter now than when it was
  // opened): the caller reads the text it was given.
  virtual bool Copy(std::uint64_t /*offset*/, std::size_t /*length*/, char* /*into*/) const {
    return false;
  }

 protected:
  ~ReadBehind() = default;
};

// Which texts a parse interns. A record's text that is only shown (`denpex events`), never read
// by an analysis, is unique per rank in a large job's abort: a watchdog note's message and a
// watchdog error's `what():` (~600 bytes a rank, ~80 MB of strings at 131k ranks).
enum class Texts : std::uint8_t {
  kAll,       // every text (`denpex events`, and every reader but a diagnosis)
  kAnalysed,  // only what an analysis reads (`denpex diagnose`): shown-only texts are kNoStr
};

// What the file's name and place say about its lines.
struct FileContext {
  std::uint32_t file = 0;         // stored in each event
  std::int32_t name_rank = -1;    // rank_<R>.log: the rank of lines with no rank prefix
  std::int32_t local_rank = -1;   // torchrun --log_dir `<L>/stdout.log`
  bool kernel = false;            // dmesg, kern.log, journal, syslog: read NVRM / OOM-killer lines
  PrefixPolicy prefixes;          // from SniffPrefixes on the file's first lines
  bool every_line = false;        // read every line whole: the reference the pre-filter is tested against
  // Lines of one time stand in an order the file does not say (a search response's hits, shuffled,
  // with no place in their file: ingest/json_logs.h): no record of several lines is read across
  // them (a traceback, torchrun's failure table), only what each line says alone.
  bool ties_unordered = false;
  Texts texts = Texts::kAll;
  // When set, the parse releases the text it has passed, kReleaseStep at a time (parse_log.cc).
  const ReadBehind* read_behind = nullptr;
};

// A watchdog status line (`last enqueued ... last completed ...`) whose rank had no open
// timeout in the text: the timeout is in an earlier chunk of the file (ingest/chunks.cc).
struct OrphanStatus {
  std::int32_t rank = -1;
  StrId pg = kNoStr;
  std::int32_t group_rank = -1;
  std::int64_t last_enqueued = -1;
  std::int64_t last_completed = -1;
};

// A Megatron iteration event kept apart from `events` while a file is parsed: one per rank (or
// srun task), holding its latest line, updated in place by each newer one. A 16k-task combined
// log has millions of progress lines and a 2 GB one is parsed in 64 chunks: updating compact
// records (one cache line each) instead of full events, and making events only once the
// chunks are merged (ingest/chunks.cc), keeps ~1 M transient events from being built.
struct alignas(64) ProgressRecord {  // one cache line
  TimeNs time = 0;  // the line's own stamp (Clock::kFull)
  std::int64_t iteration = 0;
  std::int64_t total = 0;
  std::uint64_t offset = 0;  // the latest line's, as Event
  std::uint32_t line = 0;    // 0: an empty slot of ProgressTable
  std::uint32_t length = 0;
  std::int32_t rank = -1;
  std::int32_t local_rank = -1;
  std::int32_t task = -1;
  StrId host = kNoStr;
  // Its place: before `events[at]` (the events emitted before its first line); records with the
  // same `at` keep their order.
  std::uint32_t at = 0;
  std::uint32_t seq = 0;  // the order the records were made in
};

// Progress is kept per rank; an srun-labelled line whose rank is not known yet (it is resolved
// from the task id after the merge) per task, so two tasks' lines stay two events.
inline std::int32_t ProgressKey(std::int32_t rank, std::int32_t task) { return rank >= 0 || task < 0 ? rank : -2 - task; }

struct ParsedLog {
  std::vector<Event> events;  // in line order; StrIds refer to `strings`
  std::vector<ProgressRecord> progress;  // iteration events not yet placed among `events` (ParseLogPart); in order of `at`
  StringTable strings;
  std::vector<std::int32_t> prefix_ranks;  // distinct `[rank<G>]:` ranks, sorted
  // Distinct ranks torch's store-based barrier names as the printing process's own (`Rank <R>:
  // Completed store-based barrier for key:...`, `Added key: ... to store for rank: <R>`), sorted:
  // what says whose file this is when its name does not (ingest/resolve.cc, OwnRankOfContent).
  std::vector<std::int32_t> barrier_ranks;
  std::int64_t lines = 0;
  std::int64_t malformed = 0;  // longer than kMaxLineBytes, a broken `[rank` prefix, or a line with a
                               // record trigger (or inside a record) whose fields do not parse
  std::int64_t joined = 0;     // hard-wrapped lines put back together
  std::int64_t interleaved = 0;  // lines srun's interleaving split, put back together (interleave.cc)
  std::int64_t broken = 0;     // records cut short that could not be recovered
  std::int64_t untimed = 0;    // events with no stamp of their own (borrowed, or none)
  // The pre-filter's work (triggers.h): places its SIMD tables accepted where no trigger literal
  // is (false candidates of the scan), lines read whole for a record trigger, and of those the
  // lines no recogniser took (no event made or updated, no record opened, continued or closed,
  // no progress noted): what the filter passed in vain.
  std::int64_t false_candidates = 0;
  std::int64_t trigger_lines = 0;
  std::int64_t idle_trigger_lines = 0;
  LineSpan last_line;          // the file's last non-empty line (where a lost node's log stops)
  TimeNs first_dated = 0;      // the first stamp with a full date (year) on a line with a record
                               // trigger or among the first kOpeningLines of the file; 0: none
  TimeNs last_stamp = 0;       // the text's last stamp (a later chunk's untimed events borrow it)
  Clock last_stamp_clock = Clock::kNone;  // kNone: no line of the text carries one
  // ParseLogPart only: the lines after `last_stamp` not yet searched for a later stamp (a view of
  // the text). Searching them costs a second pass over a chunk of untimed lines, so ParseChunked
  // does it only when a later chunk's untimed event borrows the stamp (LastStampIn), then clears it.
  std::string_view stamp_gap;
  // Per rank, its last watchdog timeout event (index into `events`), open to a status line that
  // a later chunk may hold; and the status lines this text holds for timeouts before it.
  std::vector<std::pair<std::int32_t, std::size_t>> open_watchdogs;
  std::vector<OrphanStatus> orphan_statuses;
  bool open_at_end = false;    // it ends inside a record that goes on (a table, a traceback, a split line)
  // The host its kernel lines name (`May 15 23:09:30 <host> kernel: `, `<ISO stamp> <host>
  // kernel: `), of those read (the first kOpeningLines and every line read whole); empty when none
  // does. Whose a kernel log is when none of its events names a host (ingest/identity.cc).
  std::string kernel_host;
  bool kernel_hosts_differ = false;  // they name more than one host
  // Most of the lines read among its first kOpeningLines are the kernel's (`[  518.05] msg`,
  // `May 15 23:09:30 host kernel: msg`): a kernel log by what it holds, whatever its name.
  bool kernel_text = false;
  bool agent = false;          // carries torchrun / torch.distributed.elastic agent lines
  bool task_labels = false;    // srun --label task ids (on a line with a trigger)
  bool local_tags = false;     // torchrun `[default<L>]:` tags
  std::int32_t top_local_tag = -1;  // the highest L of those tags
};

// `first_line` is the 1-based number of the first line of `text` (a chunk of a larger file
// starts past 1) and `base_offset` its byte offset in the file.
ParsedLog ParseLog(std::string_view text, const FileContext& ctx, std::uint32_t first_line = 1,
                   std::uint64_t base_offset = 0);

// ParseLog with the iteration events left in `progress`, for ParseChunked to fold across
// chunks before placing them (PlaceProgress).
// The last stamp of `lines` (skipped lines: their last line with a stamp that parses), if any.
bool LastStampIn(std::string_view lines, const PrefixPolicy& prefixes, TimeNs* time, Clock* clock);

ParsedLog ParseLogPart(std::string_view text, const FileContext& ctx, std::uint32_t first_line = 1,
                       std::uint64_t base_offset = 0);
// Moves `log->progress` into `log->events`, each record an iteration event of `file` at its place.
void PlaceProgress(ParsedLog* log, std::uint32_t file);
// The iteration event of `file` that record `r` stands for.
Event ProgressEvent(const ProgressRecord& r, std::uint32_t file);

// The old entry point, for files with nothing but a name rank.
inline ParsedLog ParseLog(std::string_view text, std::uint32_t file, std::int32_t file_rank) {
  return ParseLog(text, FileContext{.file = file, .name_rank = file_rank, .prefixes = SniffPrefixes(text)});
}

}  // namespace denpex::engine
