// LogParser: the per-file state machine behind ParseLog. It strips each line's prefixes and
// header, hands the message to the family recognisers in the order of their table
// (recognisers.h), and joins multi-line records: the watchdog block (timeout + status line), a
// Python traceback (one event, at its `Type: message` line), the ChildFailedError table (one
// event per entry), the driver's multi-line "fallen off the bus" notice, and watchdog lines a
// terminal hard-wrapped.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "parse/families.h"
#include "parse/headers.h"
#include "parse/lines.h"
#include "parse/parse_log.h"
#include "parse/prefix.h"
#include "parse/progress.h"
#include "parse/triggers.h"

namespace denpex::engine {

// Where a line sits in its file.
struct LineRef {
  std::string_view text;
  std::uint64_t offset;
  std::uint32_t number;
  // The line holds no label colon (a digit, `:`, a space) at or after this byte of `text`, as
  // the trigger scan found (LineFilter::Found); past the end: not known.
  std::uint32_t no_label_colon_from = ~std::uint32_t{0};
};

class LogParser {
 public:
  // `text` is what the lines are read from (Line's LineRefs point into it), its first byte at
  // `base` of the file; it must stay mapped until Finish.
  LogParser(const FileContext& ctx, std::string_view text, std::uint64_t base);

  // A line read whole. `level` is what the line filter found in it (triggers.h): malformed
  // headers are counted, and stamps with a year noted, only on lines with a record trigger or
  // `opening` lines (the first of a chunk), so the count never depends on which other lines
  // are read whole.
  void Line(const LineRef& line, TriggerLevel level, bool opening = false);
  // A line whose only trigger is a prefix: its prefixes are read, its message is not.
  void PrefixLine(const LineRef& line);
  // An opening line not read whole: only its stamp, for the first stamp with a year.
  void DateLine(const LineRef& line);
  // Lines that were not read whole, ending just before the next line read whole: the time of
  // the last stamped one is lent to the next event that has none (found only when needed).
  void Gap(std::string_view lines);
  void ClearGaps() { gaps_begin_ = gaps_end_ = nullptr; }
  // Lines counted but not read (`long_lines` of them longer than kMaxLineBytes: malformed).
  void Skip(std::int64_t lines, std::int64_t long_lines);
  // Places the trigger scan passed where no literal was (ParsedLog::false_candidates).
  void FalseCandidates(std::int64_t n) { out_.false_candidates += n; }
  // The file's last non-empty line, when it comes after every line read whole.
  void LastLine(const LineSpan& span) { out_.last_line = span; }
  // Multi-line state is open (a watchdog line cut short, a traceback, the torchrun table, an
  // NVRM notice): every line must be read whole until it closes. So must every line of a file whose
  // lines of one time stand in no known order: a table's field is read alone there, and no
  // trigger literal marks it.
  bool NeedsEveryLine() const {
    return ctx_.ties_unordered || has_wrapped_ || has_fragment_ || has_pending_gpu_ ||
           table_.open || !tracebacks_.empty() || open_partials_ > 0 ||
           ctx_.prefixes.wrap_width > 0;
  }
  bool HasFirstDated() const { return out_.first_dated != 0; }
  // The file's result; `place` puts the progress records among the events (ParseLog), or leaves
  // them for ParseChunked to fold across chunks first.
  ParsedLog Finish(bool place = true);

 private:
  // A line once its prefixes and header are read.
  struct Parsed {
    LineRef ref;               // `text` may be a joined copy; offset/number are the first line's
    std::uint32_t cite_length = 0;  // bytes of the first physical line, as a report quotes it
    LineOrigin origin;
    Header header;
    std::int32_t rank = -1;
  };

  // Lines that changed an event in place, a table entry, or noted progress (a line that changed
  // neither this nor the Footprint is counted in ParsedLog::idle_trigger_lines).
  std::int64_t updates_ = 0;
  void Process(const LineRef& line, std::uint32_t cite_length, int joins);
  // `p` with its prefixes read: `body` is the rest. `anchored`: the message found behind an
  // opaque prefix (Anchor), read once.
  void Read(Parsed& p, std::string_view body, int joins, bool anchored);
  // What a line changed in the parse (an event, a record opened or closed): a line that changed
  // nothing may hold its message behind a prefix the parser does not know.
  using Footprint = std::tuple<std::size_t, std::size_t, std::size_t, bool, bool, bool, bool>;
  Footprint Now() const;
  void Anchor(Parsed& p, std::string_view body);
  void PeelAnchoredPrefix(std::string_view* body);
  std::string anchor_shape_;  // the opaque prefix of the open record's first line, digits as '0'
  // torchrun's per-worker error file (error.json): its exception read as a line of its own, at
  // the file's timestamp (errors.cc, ReadErrorFile). False when `body` is no such record.
  bool ErrorFile(Parsed& p, std::string_view body);
  std::string error_file_;
  // The time of the last stamped line of the pending gaps, into last_time_.
  void ResolveGaps();

  void Dispatch(const Parsed& p);
  void Unheaded(const Parsed& p);
  void IterationLine(const Parsed& p);
  // A Megatron iteration line in its common shape (an srun label or nothing before ` [`),
  // read without the general prefix and header parsers: what Process would do with it.
  bool ProgressLine(const LineRef& line);
  // ProgressLine for a line in that shape that parses, past the interleaving check: noted by its
  // fields only (ProgressTable::Note), made a record if it is its key's last. kNoShape: the line
  // is not in that shape, so ProgressLine would not take it either (both read it with
  // ReadProgressShape, whose answer does not depend on the label width it tries first).
  enum class Fast { kNoted, kNoShape, kOther };
  Fast FastProgress(const LineRef& line);
  std::size_t label_width_ = 0;  // where the last progress line's srun label ended (0: none)
  void CloseProgress() { iterations_.Close(base_, ctx_.name_rank, ctx_.local_rank); }
  // Another task's label inside an srun-labelled line (whose own label is `width` wide), its
  // colon at or after `from`: what SplitInterleaved splits at.
  static bool HasEmbeddedLabel(std::string_view line, std::size_t width, std::int32_t own, std::size_t from);
  void Emit(const Parsed& p, Recognised&& r);
  Event NewEvent(const Parsed& p, EventDetail detail);
  // Sets what NewEvent takes from the line (time, rank, place), leaving the rest of `*e`.
  void PlaceEvent(const Parsed& p, Event* e);
  void NoteRank(std::int32_t rank);
  // The `[rank<G>]:` ranks seen, one bit each (ParsedLog::prefix_ranks, sorted, at Finish): an
  // srun-interleaved log changes rank on nearly every line, so a list of them grew by one per line
  // and was sorted at the end.
  std::vector<std::uint64_t> prefix_rank_bits_;
  // torch's store-based barrier lines, which name the rank of the process printing them
  // (ParsedLog::barrier_ranks); true when `body` holds one.
  bool BarrierRank(std::string_view body);
  void NoteTime(const Parsed& p);
  // A kernel line's syslog host (ParsedLog::kernel_host); an opening line, whether it is the
  // kernel's (ParsedLog::kernel_text).
  void NoteKernel(const Header& h, bool opening);
  std::uint32_t opening_read_ = 0, opening_kernel_ = 0;

  // ProcessGroupNCCL (the watchdog block; wrapped timeout lines are joined first).
  void Watchdog(const Parsed& p, int joins);
  bool JoinWrapped(const LineRef& line);
  void FlushWrapped();
  // `text`: the message after its process-group prefix `pg`.
  void WatchdogMessage(const Parsed& p, const PgPrefix& pg, std::string_view text);
  // A timeout message inside another one (`what():  [PG 1 Rank 7] Process group watchdog thread
  // terminated with exception: [Rank 7] Watchdog caught ...`, a Python exception quoting it) or
  // alone without its c10 header: its own timeout event, unless the file already gave it.
  void EmbeddedTimeout(const Parsed& p, std::string_view text);
  // The timeouts emitted, by (group rank, SeqNum, ran-for ms): the same timeout quoted again.
  std::unordered_set<std::uint64_t> timeouts_seen_;
  bool NoteTimeout(const WatchdogTimeout& w);
  // The event detail of a timeout line's fields under its process-group prefix.
  WatchdogTimeout TimeoutOf(const PgPrefix& pg, const WatchdogTimeoutFields& f);
  // srun interleaving (interleave.cc): a line another task's line was spliced into is read
  // as that task's line, and its head waits for its tail on the task's next line.
  bool SplitInterleaved(const LineRef& line);
  bool JoinFragment(const LineRef& line);
  std::string fragment_;
  LineRef fragment_line_{};
  std::int32_t fragment_task_ = -1;
  std::size_t fragment_width_ = 0;
  bool has_fragment_ = false;
  // Python tracebacks, per stream (a combined log interleaves ranks).
  std::int64_t StreamOf(const Parsed& p) const;
  bool Traceback(const Parsed& p);
  // The ChildFailedError table (§9).
  bool TableLine(const Parsed& p);
  // A table's `rank :` field read alone (FileContext::ties_unordered): the rank and local rank it
  // names, no exit code (its `exitcode :` line may be another entry's).
  bool LoneRankField(const Parsed& p);
  void ReadTableField(const Parsed& p);
  void FlushEntry();
  // The driver's multi-line "fallen off the bus" notice.
  bool ConfirmFallenOff(const Parsed& p);
  void HoldPendingGpu(const Parsed& p, Recognised&& r);
  std::string pending_gpu_text_;

  // Lines the collection split: a CRI `P` line and its stream's next lines up to an `F` one,
  // and a terminal copy's hard-wrapped pieces (ctx_.prefixes.wrap_width); `cite` is the first
  // physical line's length.
  struct Partial {
    std::string text;
    LineRef head{};
    std::uint32_t cite = 0;
    int pieces = 0;
    bool open = false;
    std::size_t last = 0;  // where the last physical line's text starts in `text`
  };
  bool JoinPartial(const LineRef& line, std::uint32_t cite);
  void FlushPartial(Partial* open);
  Partial partials_[2];  // stdout, stderr
  int open_partials_ = 0;
  bool JoinHardWrapped(const LineRef& line, std::uint32_t cite);
  void FlushHardWrapped();
  Partial wrap_;
  // A line without its ANSI codes (two, so the line before stays readable while one is read).
  std::string clean_[2];
  unsigned clean_turn_ = 0;

  FileContext ctx_;
  std::string_view text_;
  std::uint64_t base_;
  ParsedLog out_;
  TriggerLevel level_ = TriggerLevel::kNone;  // of the line being read
  bool opening_ = false;
  // The lines not yet searched for a stamp: from the oldest gap's start to the newest gap's end.
  // The lines read whole in between hold no stamp (each one that does sets last_time_ and
  // empties this), so searching them too finds what searching each gap would.
  const char* gaps_begin_ = nullptr;
  const char* gaps_end_ = nullptr;
  std::int32_t last_rank_ = -1;
  // Time of the last stamped line, lent to the events that follow without one.
  TimeNs last_time_ = 0;
  Clock last_clock_ = Clock::kNone;

  struct Table {
    bool open = false;
    bool root_cause = false;
    bool in_entry = false;
    Event entry;  // FailureEntry detail; rank/line set by the `rank :` field
  } table_;
  struct OpenTraceback {
    std::int64_t stream;
    std::uint32_t first;         // the `Traceback (most recent call last):` line
    std::uint32_t pin_line = 0;  // its last frame line that calls pin_memory (0: none)
    // Python's report of an exception it could not raise (`Exception ignored in: <function
    // X.__del__ ...>` opened it: a destructor at teardown): its closing line is no error of the rank.
    bool unraisable = false;
  };
  std::vector<OpenTraceback> tracebacks_;
  std::vector<std::int64_t> unraisable_;  // streams whose next traceback is an unraisable report
  bool ChainLine(const Parsed& p);
  std::uint32_t traceback_touched_ = 0;  // the last line that opened or continued a traceback
  // The traceback just closed ended in a pin_memory frame: its exception is a page-locked
  // (pinned) host allocation that failed (torch's CachingHostAllocator -> cudaHostAlloc).
  bool closed_in_pin_ = false;
  // Per rank, the last watchdog timeout event (index into out_.events), awaiting its `last
  // enqueued` status line, and the ranks that have one. A flat index, not a hash map: a 16k-rank
  // job's watchdog blocks interleave every rank, and the map's lookups and rehashes were ~5 % of
  // the parse of the benchmark's dense tail.
  ProgressIndex open_watchdogs_;
  std::vector<std::int32_t> watchdog_ranks_;
  // Per rank (or srun task), its latest iteration line: a newer one replaces it (progress noise
  // would otherwise be millions of events; the latest is what shows where a rank stopped). Kept
  // as compact records (parse_log.h), placed among the events at the end.
  ProgressTable iterations_;
  static constexpr std::size_t kNoIndex = ProgressIndex::kNone;
  ProgressIndex last_step_;  // key=value step lines (index into out_.events), by ProgressKey
  IterationStampCache iteration_stamps_;  // progress lines of a run share their date
  bool StepLine(const Parsed& p);
  bool GluedStepLine(const Parsed& p);
  void Step(const Parsed& p, const StepMetricsFields& f);  // a step line read: its event
  // A watchdog timeout line cut by a terminal: kept until the next line says whether it goes on.
  std::string wrapped_;
  LineRef wrapped_line_{};
  std::uint32_t wrapped_cite_ = 0;
  int wrapped_joins_ = 0;
  bool has_wrapped_ = false;
  // `NVRM: The NVIDIA GPU <pci>` seen; confirmed by "fallen off the bus" within a few lines.
  bool has_pending_gpu_ = false;
  Parsed pending_gpu_;
  Recognised pending_gpu_record_;
};

}  // namespace denpex::engine
