#include "ingest/chunks.h"

#include <oneapi/tbb/parallel_for.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "parse/progress.h"

namespace denpex::engine {

namespace {

// The first newline of `text` at or after `at` (npos: none), read through `file` when it can copy
// its bytes: a look through the mapping maps the whole folio it lands in (ext4 keeps a large file
// in folios of up to 2 MiB), 2 MiB of resident set for each chunk of a file otherwise read by copy.
std::size_t NewlineFrom(std::string_view text, std::size_t at, const ReadBehind* file) {
  if (file == nullptr) return text.find('\n', at);
  char piece[4096];
  for (std::size_t from = at; from < text.size(); from += sizeof piece) {
    const std::size_t n = std::min(sizeof piece, text.size() - from);
    if (!file->Copy(from, n, piece)) return text.find('\n', at);
    if (const void* nl = std::memchr(piece, '\n', n))
      return from + static_cast<std::size_t>(static_cast<const char*>(nl) - piece);
  }
  return std::string_view::npos;
}

}  // namespace

// Chunk starts: every `chunk_bytes`, moved forward past the next newline; then, once less than
// four chunks are left, a quarter of what is left (never less than kTailChunkBytes), so the
// workers finish together: chunks are taken in order, and the last ones bound how long one
// worker waits for the other at the end. A failed job's log is densest at its end (the 2 GB
// benchmark file's last chunks take 2-3 times as long as the others), so its chunks shrink there
// (docs/benchmarks.md, "Chunk size, again").
std::vector<std::size_t> ChunkStarts(std::string_view text, std::size_t chunk_bytes,
                                     const ReadBehind* file) {
  const std::size_t least = std::min(chunk_bytes, kTailChunkBytes);
  std::vector<std::size_t> starts{0};
  for (std::size_t at = 0;;) {
    const std::size_t left = text.size() - at;
    at += std::clamp(left / 4, least, chunk_bytes);
    if (at >= text.size()) break;
    const std::size_t nl = NewlineFrom(text, at, file);
    if (nl == std::string_view::npos || nl + 1 >= text.size()) break;
    starts.push_back(nl + 1);
    at = nl + 1;
  }
  return starts;
}

namespace {

// Progress events (Megatron iteration lines, key=value step lines) are one per rank, or per srun
// task while the rank is unknown, holding the latest line: a single pass over the file keeps
// one. Each chunk's parser keeps its own, so the merge folds a later chunk's into the earlier
// one (in its place, as a single pass leaves it); without this a 16k-task srun file in 64
// chunks kept a million progress events. Iteration lines come as compact records
// (ParsedLog::progress); step lines as events.
//
// A merged iteration record is only its place, an event left empty in the merged events when
// its key first comes, and where its latest record is (which chunk, which record): folding a
// later chunk's record writes those 8 bytes, and each surviving record becomes its event once,
// when every chunk is merged (MergedRecords::Fill). Copying each chunk's records into the
// merged ones (16 k per chunk, a million for a 2 GB file, each a cache line written to a 1 MB
// array the parse had evicted) cost more than the rest of the merge, and placing the records
// among the merged events at the end (PlaceProgress: the 2 GB file's 150 k events moved) took
// ~3 ms while the other worker waited.
class MergedRecords {
 public:
  // `records` are the next chunk's, its lines to be shifted by `shift`, its strings re-interned
  // by `remap` (empty: the first chunk's, kept as they are).
  std::uint32_t AddChunk(std::vector<ProgressRecord>&& records, std::uint32_t shift, std::vector<StrId>&& remap) {
    chunks_.push_back({std::move(records), shift, std::move(remap)});
    return static_cast<std::uint32_t>(chunks_.size() - 1);
  }
  const std::vector<ProgressRecord>& records(std::uint32_t chunk) const { return chunks_[chunk].records; }
  const std::vector<StrId>& remap(std::uint32_t chunk) const { return chunks_[chunk].remap; }
  // Record `index` of `chunk` is its key's latest: it replaces the earlier one, in that one's
  // place; false when the key is new: the caller places it at merged event `slot`.
  bool Fold(std::uint32_t chunk, std::uint32_t index, std::uint32_t slot) {
    const ProgressRecord& r = chunks_[chunk].records[index];
    const std::size_t k = index_.Find(ProgressKey(r.rank, r.task));
    if (k != ProgressIndex::kNone) {
      latest_[k] = {chunk, index};
      return true;
    }
    Add(chunk, index, slot);
    return false;
  }
  // Record `index` of `chunk` is a new merged record, its event at merged event `slot` (the
  // first chunk's records: a key made two of them when a requeue came between).
  void Add(std::uint32_t chunk, std::uint32_t index, std::uint32_t slot) {
    const ProgressRecord& r = chunks_[chunk].records[index];
    index_.Set(ProgressKey(r.rank, r.task), latest_.size());
    latest_.push_back({chunk, index});
    slot_.push_back(slot);
  }
  // A requeued job's next run: its lines start new records.
  void Restart() { index_.Clear(); }
  // Frees the records of the chunks before `chunk` once `chunk`'s are folded: the few still
  // their key's latest (keys `chunk` did not update) are copied aside first. So two chunks'
  // records are held at a time, not every chunk's (a 2 GB file's 64 chunks hold 1 MB each).
  void RetireBefore(std::uint32_t chunk) {
    for (; retired_ < chunk; ++retired_) {
      for (Latest& l : latest_) {
        if (l.chunk != retired_) continue;
        settled_.push_back(Resolved(l));
        l = {kSettled, static_cast<std::uint32_t>(settled_.size() - 1)};
      }
      chunks_[retired_] = Chunk();
    }
  }
  // Writes each merged record's event (of `file`) into its place in `events`.
  void Fill(std::uint32_t file, std::vector<Event>* events) {
    for (std::size_t k = 0; k < latest_.size(); ++k) (*events)[slot_[k]] = ProgressEvent(Resolved(latest_[k]), file);
    *this = MergedRecords();
  }

 private:
  static constexpr std::uint32_t kSettled = ~std::uint32_t{0};  // Latest::chunk of a record in settled_
  struct Chunk {
    std::vector<ProgressRecord> records;
    std::uint32_t shift = 0;
    std::vector<StrId> remap;
  };
  struct Latest {
    std::uint32_t chunk, index;
  };
  // The record `l` refers to, its line and host those of the merged file.
  ProgressRecord Resolved(const Latest& l) const {
    if (l.chunk == kSettled) return settled_[l.index];
    const Chunk& c = chunks_[l.chunk];
    ProgressRecord r = c.records[l.index];
    r.line += c.shift;
    if (!c.remap.empty()) r.host = c.remap[r.host];
    return r;
  }

  std::vector<Chunk> chunks_;
  ProgressIndex index_;           // key -> merged record
  std::vector<Latest> latest_;    // per merged record: its key's latest record
  std::vector<std::uint32_t> slot_;  // per merged record: its event's index in the merged events
  std::vector<ProgressRecord> settled_;  // records of retired chunks still their key's latest
  std::uint32_t retired_ = 0;            // chunks before this one are retired
};

struct ProgressSlots {
  MergedRecords iterations;
  ProgressIndex steps;  // key -> index in the merged events
};

// The key of a step-line event (file_parser.cc's StepLine), if `e` is one.
std::optional<std::int32_t> StepKey(const Event& e) {
  if (e.kind != Kind::kIteration) return std::nullopt;
  return ProgressKey(e.rank, e.task);
}

// The first chunk's progress, `log` being its result (of `file`): its records placed among its
// events (PlaceProgress) and each made a merged record of its own (a key has two when a
// requeue came between); a requeue restarts the keys for the chunks after, as in Append.
void StartSlots(ParsedLog* log, std::uint32_t file, ProgressSlots* slots) {
  const std::uint32_t chunk = slots->iterations.AddChunk(std::vector<ProgressRecord>(log->progress), 0, {});
  const auto& records = slots->iterations.records(chunk);
  PlaceProgress(log, file);
  std::size_t k = 0;  // record k is placed after the `at` events before it and the k records before it
  for (std::size_t i = 0; i < log->events.size(); ++i) {
    if (k < records.size() && records[k].at + k == i) {
      slots->iterations.Add(chunk, static_cast<std::uint32_t>(k++), static_cast<std::uint32_t>(i));
      continue;
    }
    if (const auto key = StepKey(log->events[i])) slots->steps.Set(*key, i);
    if (log->events[i].kind == Kind::kRequeue) slots->iterations.Restart();
  }
}

// `later`'s progress replaces `*earlier`'s; a slow run that began at the later chunk's first
// step line of the rank goes on from the earlier chunk's.
void FoldProgress(Event&& later, Event* earlier) {
  const auto& a = std::get<Iteration>(earlier->detail);
  auto& b = std::get<Iteration>(later.detail);
  if (b.slow_from_start && a.slow_since >= 0) {
    b.slow_since = a.slow_since;
    b.slow_at = a.slow_at;
    b.slow_from_start = a.slow_from_start;
  }
  *earlier = std::move(later);
}

// A status line of `from` whose timeout is still open in `into` completes it, as a single pass
// would have (the first matching status line of the rank's last timeout).
void CloseWatchdogs(const ParsedLog& from, const std::vector<StrId>& remap, ParsedLog* into) {
  for (const OrphanStatus& st : from.orphan_statuses) {
    const auto it = std::lower_bound(into->open_watchdogs.begin(), into->open_watchdogs.end(), std::make_pair(st.rank, std::size_t{0}));
    if (it == into->open_watchdogs.end() || it->first != st.rank) continue;
    auto& w = std::get<WatchdogTimeout>(into->events[it->second].detail);
    // A timeout printed with `[Rank r]` only takes its rank's status (LogParser::WatchdogMessage).
    if ((w.pg == kNoStr || w.pg == remap[st.pg]) && w.group_rank == st.group_rank && w.last_enqueued < 0) {
      w.last_enqueued = st.last_enqueued;
      w.last_completed = st.last_completed;
    }
  }
}

// `into`'s open timeouts, with `from`'s (at their merged indices) replacing a rank's older one.
// Both lists are sorted by rank, one entry per rank: merged in one pass (a std::map of a 16k-rank
// job's open timeouts was rebuilt for every chunk merged).
void MergeOpenWatchdogs(const ParsedLog& from, const std::vector<std::size_t>& placed, ParsedLog* into) {
  if (from.open_watchdogs.empty()) return;
  std::vector<std::pair<std::int32_t, std::size_t>> open;
  open.reserve(into->open_watchdogs.size() + from.open_watchdogs.size());
  auto a = into->open_watchdogs.begin();
  for (const auto& [rank, index] : from.open_watchdogs) {
    for (; a != into->open_watchdogs.end() && a->first < rank; ++a) open.push_back(*a);
    if (a != into->open_watchdogs.end() && a->first == rank) ++a;
    open.emplace_back(rank, placed[index]);
  }
  open.insert(open.end(), a, into->open_watchdogs.end());
  into->open_watchdogs = std::move(open);
}

// Appends `from` (the chunk after `into`'s last) to `into`: strings re-interned, lines shifted.
void Append(ParsedLog&& from, const PrefixPolicy& prefixes, ParsedLog* into, ProgressSlots* slots) {
  const auto shift = static_cast<std::uint32_t>(into->lines);
  MergedRecords& merged = slots->iterations;
  const std::uint32_t chunk = merged.AddChunk(std::move(from.progress), shift, into->strings.Absorb(std::move(from.strings)));
  const std::vector<StrId>& remap = merged.remap(chunk);
  CloseWatchdogs(from, remap, into);
  std::vector<std::size_t> placed(from.events.size());  // from's event index -> its index in `into`
  const auto& records = merged.records(chunk);
  std::size_t record = 0;
  const auto fold_records_until = [&](std::size_t at) {  // the records placed before from.events[at]
    for (; record < records.size() && records[record].at <= at; ++record) {
      if (!merged.Fold(chunk, static_cast<std::uint32_t>(record), static_cast<std::uint32_t>(into->events.size()))) {
        into->events.emplace_back();  // its place, filled once every chunk is merged
      }
    }
  };
  for (std::size_t i = 0; i < from.events.size(); ++i) {
    fold_records_until(i);
    Event& e = from.events[i];
    ForEachStrId(e, [&](StrId& id) { id = remap[id]; });
    e.line += shift;
    if (e.clock == Clock::kNone && !into->stamp_gap.empty()) {  // no stamp before it in its chunk: search the last ones
      TimeNs t;
      Clock c;
      if (LastStampIn(into->stamp_gap, prefixes, &t, &c)) into->last_stamp = t, into->last_stamp_clock = c;
      into->stamp_gap = {};
    }
    if (e.clock == Clock::kNone && into->last_stamp_clock != Clock::kNone) {
      e.time = into->last_stamp;
      e.clock = into->last_stamp_clock;
      e.time_borrowed = true;
    }
    // the next run's iteration lines are new events (file_parser.cc)
    if (e.kind == Kind::kRequeue) slots->iterations.Restart();
    placed[i] = into->events.size();
    if (const auto key = StepKey(e)) {
      const std::size_t at = slots->steps.Find(*key);
      if (at != ProgressIndex::kNone) {
        placed[i] = at;
        FoldProgress(std::move(e), &into->events[at]);
        continue;
      }
      slots->steps.Set(*key, into->events.size());
    }
    into->events.push_back(std::move(e));
  }
  fold_records_until(from.events.size());
  merged.RetireBefore(chunk);
  MergeOpenWatchdogs(from, placed, into);
  into->prefix_ranks.insert(into->prefix_ranks.end(), from.prefix_ranks.begin(), from.prefix_ranks.end());
  into->barrier_ranks.insert(into->barrier_ranks.end(), from.barrier_ranks.begin(),
                             from.barrier_ranks.end());
  into->kernel_hosts_differ |=
      from.kernel_hosts_differ || (!into->kernel_host.empty() && !from.kernel_host.empty() &&
                                   into->kernel_host != from.kernel_host);
  if (into->kernel_host.empty()) into->kernel_host = std::move(from.kernel_host);
  into->lines += from.lines;
  into->malformed += from.malformed;
  into->joined += from.joined;
  into->interleaved += from.interleaved;
  into->broken += from.broken;
  into->untimed += from.untimed;
  into->false_candidates += from.false_candidates;
  into->trigger_lines += from.trigger_lines;
  into->idle_trigger_lines += from.idle_trigger_lines;
  if (from.last_line.line > 0) into->last_line = {from.last_line.line + shift, from.last_line.offset, from.last_line.length};
  if (into->first_dated == 0) into->first_dated = from.first_dated;
  if (from.last_stamp_clock != Clock::kNone) {
    into->last_stamp = from.last_stamp;
    into->last_stamp_clock = from.last_stamp_clock;
    into->stamp_gap = from.stamp_gap;
  } else if (!from.stamp_gap.empty()) {  // no stamp in `from` before its gap: the gaps run on as one
    const char* begin = into->stamp_gap.empty() ? from.stamp_gap.data() : into->stamp_gap.data();
    into->stamp_gap = {begin, static_cast<std::size_t>(from.stamp_gap.data() + from.stamp_gap.size() - begin)};
  }
  into->agent |= from.agent;
  into->task_labels |= from.task_labels;
  into->local_tags |= from.local_tags;
  into->top_local_tag = std::max(into->top_local_tag, from.top_local_tag);
}


// A chunk that ends inside a record that goes on (a ChildFailedError table, a traceback still
// printing, a wrapped or split line) is parsed again joined with the chunks after it, up to
// kMaxJoined chunks in all, so the record is read as one pass reads it. The joined groups are
// independent: parsed in parallel. `parts` becomes one result per group, `starts` their starts.
constexpr std::size_t kMaxJoined = 4;

void JoinOpenRecords(std::string_view text, const FileContext& ctx, std::vector<std::size_t>* starts,
                     std::vector<ParsedLog>* parts) {
  struct Group {
    std::size_t first, last;  // chunks [first, last)
  };
  std::vector<Group> groups;
  bool joined = false;
  for (std::size_t i = 0; i < parts->size();) {
    std::size_t j = i + 1;
    while (j < parts->size() && (*parts)[j - 1].open_at_end && j - i < kMaxJoined) ++j;
    joined |= j > i + 1;
    groups.push_back({i, j});
    i = j;
  }
  if (!joined) return;
  std::vector<ParsedLog> merged(groups.size());
  std::vector<std::size_t> merged_starts(groups.size());
  tbb::parallel_for(std::size_t{0}, groups.size(), [&](std::size_t g) {
    const auto [first, last] = groups[g];
    merged_starts[g] = (*starts)[first];
    if (last == first + 1) {
      merged[g] = std::move((*parts)[first]);
      return;
    }
    const std::size_t end = last < starts->size() ? (*starts)[last] : text.size();
    merged[g] = ParseLogPart(text.substr((*starts)[first], end - (*starts)[first]), ctx, 1, (*starts)[first]);
  });
  *parts = std::move(merged);
  *starts = std::move(merged_starts);
}

// Merges parsed chunks into one result in file order, as they become ready: whichever worker
// finishes the chunk that is next in line merges it and every parsed chunk after it, while the
// other workers go on parsing, so the merge is no serial tail after the parallel parse. It stops at
// the first chunk that ends inside an open record: that one and the rest are joined and merged once
// all are parsed.
class OrderedMerge {
 public:
  OrderedMerge(const FileContext& ctx, std::vector<ParsedLog>* parts, std::size_t text_bytes)
      : ctx_(ctx),
        text_bytes_(text_bytes),
        parts_(*parts),
        parsed_(std::make_unique<std::atomic<bool>[]>(parts->size())) {}

  // Chunk i is parsed (i == size: none, only merge what is ready).
  void Parsed(std::size_t i) {
    if (i < parts_.size()) parsed_[i].store(true);
    // A worker that finds the merge busy leaves its chunk to the merging one, which looks again
    // after it lets go: the chunk a busy merge did not see is then either seen, or its worker
    // gets the lock.
    while (Ready()) {
      std::unique_lock lock(mu_, std::try_to_lock);
      if (!lock) return;
      while (Ready()) MergeNext();
    }
  }
  std::size_t merged() const { return merged_.load(); }
  ParsedLog Take() { return std::move(out_); }
  // Writes the merged iteration events into `out`'s events, once every chunk is merged.
  void FillProgress(ParsedLog* out) { slots_.iterations.Fill(ctx_.file, &out->events); }
  // The chunks from merged() on, joined where records stay open, in order.
  void AppendRest(std::vector<ParsedLog>&& rest, ParsedLog* out) {
    for (ParsedLog& part : rest) {  // merged() counts them as they go: Reserve looks at what is left
      if (merged_ == 0) {
        *out = std::move(part);
        StartSlots(out, ctx_.file, &slots_);
      } else {
        Reserve(part, out);
        Append(std::move(part), ctx_.prefixes, out, &slots_);
      }
      merged_.fetch_add(1);
    }
  }

 private:
  bool Ready() const {
    const std::size_t m = merged_.load();
    return !stopped_.load() && m < parts_.size() && parsed_[m].load();
  }
  void MergeNext() {
    const std::size_t m = merged_.load();
    ParsedLog& part = parts_[m];
    if (part.open_at_end) {
      stopped_.store(true);
      return;
    }
    if (m == 0) {
      out_ = std::move(part);
      StartSlots(&out_, ctx_.file, &slots_);
    } else {
      Reserve(part, &out_);
      Append(std::move(part), ctx_.prefixes, &out_, &slots_);
    }
    // Freed at once: glibc keeps it (KeepFreedMemory) for the chunks parsed next, which fault in
    // fewer fresh pages.
    part = ParsedLog();
    merged_.fetch_add(1);
  }
  // Room for `part`'s events and records (the records become events once placed). The first
  // merge makes room for one event per kPlannedBytesPerEvent of the file; when that runs out,
  // room for as many again as `part` has for each chunk still to come. Address space, touched
  // only as events arrive: growing by doubling instead copied them and faulted in fresh pages,
  // and a plan from the first chunks alone ran out at a failed job's end, where its events are
  // densest (the 131k-rank scale incident: 70 % of its 1.07 M events in the file's last fifth).
  void Reserve(const ParsedLog& part, ParsedLog* out) {
    const std::size_t adds = part.events.size() + part.progress.size();
    const std::size_t need = out->events.size() + adds;
    if (need <= out->events.capacity() && planned_) return;
    const std::size_t after = parts_.size() - std::min(parts_.size(), merged_.load() + 1);
    const std::size_t plan = planned_ ? 0 : text_bytes_ / kPlannedBytesPerEvent;
    planned_ = true;
    // In huge pages: a 131k-rank job's srun log makes ~1 M events, 140 MB written once and then
    // handed to the incident (ingest/load.cc), and its ~34 k first-touch faults of 4 KiB pages
    // become ~70 (docs/benchmarks.md, "The load stage at 131k ranks"). The new block advised
    // before the events so far are copied in, so the copy faults in huge pages too.
    std::vector<Event> grown;
    grown.reserve(std::max({plan, need + adds * after, 2 * out->events.capacity()}));
    AdviseHugePages(grown.data(), grown.capacity() * sizeof(Event));
    grown.insert(grown.end(), out->events.begin(), out->events.end());
    out->events = std::move(grown);
  }

  // The 131k-rank scale incident's srun log: one event per 1.9 KiB; the 16k-rank one's, per 1.9.
  static constexpr std::size_t kPlannedBytesPerEvent = 1024;

  const FileContext& ctx_;
  std::size_t text_bytes_;
  std::vector<ParsedLog>& parts_;
  std::unique_ptr<std::atomic<bool>[]> parsed_;
  std::mutex mu_;  // held while merging
  std::atomic<std::size_t> merged_{0};
  std::atomic<bool> stopped_{false};
  bool planned_ = false;  // Reserve made room for the chunks to come
  ParsedLog out_;
  ProgressSlots slots_;
};

}  // namespace

namespace {

// The ranks lists of a merged log sorted and made distinct, and its stamp gap (a view of text
// that is not kept) dropped: what every merge ends with.
void Finish(ParsedLog* out) {
  out->stamp_gap = {};
  std::sort(out->prefix_ranks.begin(), out->prefix_ranks.end());
  out->prefix_ranks.erase(std::unique(out->prefix_ranks.begin(), out->prefix_ranks.end()),
                          out->prefix_ranks.end());
  std::sort(out->barrier_ranks.begin(), out->barrier_ranks.end());
  out->barrier_ranks.erase(std::unique(out->barrier_ranks.begin(), out->barrier_ranks.end()),
                           out->barrier_ranks.end());
}

// A worker's buffer for the copy of the chunk it parses, kept for its next chunk (a fresh buffer
// each time would be first-touch faults each time), in transparent huge pages where the kernel
// has them (`madvise` mode).
class ChunkBuffer {
 public:
  ChunkBuffer() = default;
  ChunkBuffer(const ChunkBuffer&) = delete;
  ChunkBuffer& operator=(const ChunkBuffer&) = delete;
  ~ChunkBuffer() {
    if (data_ != nullptr) ::munmap(data_, capacity_);
  }
  // Room for `size` bytes (nullptr when there is no memory for it).
  char* Get(std::size_t size) {
    if (size <= capacity_) return data_;
    if (data_ != nullptr) ::munmap(data_, capacity_);
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    capacity_ = (size + kHugePage - 1) / kHugePage * kHugePage;
    void* p =
        ::mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      data_ = nullptr;
      capacity_ = 0;
      return nullptr;
    }
    ::madvise(p, capacity_, MADV_HUGEPAGE);
    data_ = static_cast<char*>(p);
    return data_;
  }

 private:
  char* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// Bytes [begin, end) of `text`, parsed (`place`: ParseLog, progress placed; else ParseLogPart).
// A mapped file's bytes are read (pread) into the worker's buffer and parsed there, not through
// the mapping: each mapped page costs a fault (or a slot of MADV_POPULATE_READ), a page-table walk
// at each TLB miss and an unmap, and in this VM the 131k-rank scale incident's 2 GB srun log took
// ~1.2 CPU-s more to parse mapped (docs/benchmarks.md, "Read, not mapped"). The part's view of its
// text (its stamp gap) is moved onto `text`, which holds the same bytes. A file that no longer
// holds them all is parsed from the mapping, whose guard reads what is gone as NUL bytes
// (ingest/file_text.h).
ParsedLog ParseChunk(std::string_view text, std::size_t begin, std::size_t end,
                     const FileContext& ctx, bool place) {
  const std::size_t size = end - begin;
  if (ctx.read_behind != nullptr) {
    thread_local ChunkBuffer buffer;
    char* copy = buffer.Get(size);
    if (copy != nullptr && ctx.read_behind->Copy(begin, size, copy)) {
      FileContext from_copy = ctx;
      from_copy.read_behind = nullptr;
      const std::string_view bytes(copy, size);
      ParsedLog part =
          place ? ParseLog(bytes, from_copy, 1, begin) : ParseLogPart(bytes, from_copy, 1, begin);
      if (!part.stamp_gap.empty()) {
        part.stamp_gap = text.substr(begin + static_cast<std::size_t>(part.stamp_gap.data() - copy),
                                     part.stamp_gap.size());
      }
      return part;
    }
  }
  const std::string_view bytes = text.substr(begin, size);
  ParsedLog part = place ? ParseLog(bytes, ctx, 1, begin) : ParseLogPart(bytes, ctx, 1, begin);
  if (ctx.read_behind != nullptr) ctx.read_behind->Release(begin, size);
  return part;
}

}  // namespace

void AdviseHugePages(const void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (bytes < (std::size_t{32} << 20)) return;
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + kHuge - 1) & ~(kHuge - 1), end = (at + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

ParsedLog ParseChunked(std::string_view text, const FileContext& ctx, std::size_t chunk_bytes) {
  if (text.size() <= chunk_bytes)
    return ParseChunk(text, 0, text.size(), ctx, true);  // progress placed
  std::vector<std::size_t> starts = ChunkStarts(text, chunk_bytes, ctx.read_behind);
  std::vector<ParsedLog> parts(starts.size());
  OrderedMerge merge(ctx, &parts, text.size());
  // Chunks are taken in file order, whatever order the loop's iterations run in, so the
  // merge of the chunks parsed so far runs beside the parsing of the later ones.
  std::atomic<std::size_t> next{0};
  tbb::parallel_for(std::size_t{0}, starts.size(), [&](std::size_t) {
    const std::size_t i = next.fetch_add(1);
    const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : text.size();
    parts[i] = ParseChunk(text, starts[i], end, ctx, false);
    merge.Parsed(i);
  });
  merge.Parsed(starts.size());  // whatever the workers left (none when the last chunk's worker merged it)
  ParsedLog out = merge.Take();
  if (merge.merged() < parts.size()) {  // from a chunk that ends inside an open record: joined, then merged
    std::vector<std::size_t> rest_starts(starts.begin() + static_cast<std::ptrdiff_t>(merge.merged()), starts.end());
    std::vector<ParsedLog> rest(std::make_move_iterator(parts.begin() + static_cast<std::ptrdiff_t>(merge.merged())),
                                std::make_move_iterator(parts.end()));
    JoinOpenRecords(text, ctx, &rest_starts, &rest);
    merge.AppendRest(std::move(rest), &out);
  }
  merge.FillProgress(&out);
  Finish(&out);
  return out;
}

// ---- GrowingLog ----------------------------------------------------------------------------

struct GrowingLog::State {
  FileContext ctx;
  std::uint64_t merged_end = 0;  // the bytes merged into `merged`
  bool started = false;          // `merged` holds the first piece
  ParsedLog merged;
  ProgressSlots slots;
  std::string gap;  // the text `merged.stamp_gap` views (a piece's text is not kept)
  std::string
      pending;  // the text from merged_end on, not merged yet: a small file's, or a held record
  std::uint64_t signals = 0;
};

namespace {

// The events of `log` other than step lines (placed or still progress records).
std::uint64_t Signals(const ParsedLog& log) {
  return static_cast<std::uint64_t>(
      std::count_if(log.events.begin(), log.events.end(),
                    [](const Event& e) { return e.kind != Kind::kIteration; }));
}

// The stamp gap a later piece may search is at most this much of the last untimed lines.
constexpr std::size_t kGapBytes = 1 << 20;

// `part` (the text from `out`'s end) merged into `out` as ParseChunked merges a chunk; the
// lines after the last stamp kept in `*gap`, since the piece's text is not.
void MergePiece(ParsedLog&& part, const FileContext& ctx, bool first, ParsedLog* out,
                ProgressSlots* slots, std::string* gap) {
  const bool stamped = part.last_stamp_clock != Clock::kNone;
  std::string part_gap(part.stamp_gap);
  part.stamp_gap = {};
  if (first) {
    *out = std::move(part);
    StartSlots(out, ctx.file, slots);
    out->stamp_gap = {};
  } else {
    Append(std::move(part), ctx.prefixes, out, slots);
  }
  std::string joined =
      stamped || first ? std::move(part_gap) : std::string(out->stamp_gap) + part_gap;
  if (joined.size() > kGapBytes) {
    const std::size_t nl = joined.find('\n', joined.size() - kGapBytes);
    joined.erase(0, nl == std::string::npos ? joined.size() : nl + 1);
  }
  *gap = std::move(joined);
  out->stamp_gap = *gap;
}

}  // namespace

GrowingLog::GrowingLog(const FileContext& ctx) : state_(std::make_unique<State>()) {
  state_->ctx = ctx;
  state_->ctx.read_behind = nullptr;
}
GrowingLog::GrowingLog(GrowingLog&&) noexcept = default;
GrowingLog& GrowingLog::operator=(GrowingLog&&) noexcept = default;
GrowingLog::~GrowingLog() = default;

std::uint64_t GrowingLog::bytes() const { return state_->merged_end + state_->pending.size(); }
std::uint64_t GrowingLog::signals() const { return state_->signals; }

std::size_t GrowingLog::held() const { return state_->started ? 0 : state_->pending.size(); }

void GrowingLog::Add(std::string_view lines, bool may_hold) {
  State& s = *state_;
  s.pending.append(lines);
  // Held whole: parsed by Snapshot; the new lines alone are parsed here, to be counted.
  if (!s.started && may_hold && s.pending.size() < kWholeBytes) {
    FileContext ctx = s.ctx;
    ctx.prefixes = SniffPrefixes(s.pending);
    s.signals += Signals(ParseLogPart(lines, ctx, 1, s.pending.size() - lines.size()));
    return;
  }
  if (!s.started) s.ctx.prefixes = SniffPrefixes(s.pending);
  ParsedLog part = ParseLogPart(s.pending, s.ctx, 1, s.merged_end);
  s.signals += Signals(part);
  if (part.open_at_end && s.pending.size() < kHeldBytes) return;  // parsed again with what follows
  MergePiece(std::move(part), s.ctx, !s.started, &s.merged, &s.slots, &s.gap);
  s.started = true;
  s.merged_end += s.pending.size();
  s.pending.clear();
}

ParsedLog GrowingLog::Snapshot() const {
  const State& s = *state_;
  if (!s.started) {  // small: one parse of the whole text, as ParseChunked parses it
    FileContext ctx = s.ctx;
    ctx.prefixes = SniffPrefixes(s.pending);
    return ParseChunked(s.pending, ctx, kChunkBytes);
  }
  ParsedLog out = s.merged;
  ProgressSlots slots = s.slots;
  std::string gap = s.gap;
  out.stamp_gap = gap;
  if (!s.pending.empty()) {
    MergePiece(ParseLogPart(s.pending, s.ctx, 1, s.merged_end), s.ctx, false, &out, &slots, &gap);
  }
  slots.iterations.Fill(s.ctx.file, &out.events);
  Finish(&out);
  return out;
}

}  // namespace denpex::engine
