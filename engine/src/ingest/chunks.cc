#include "ingest/chunks.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace denpex::engine {
namespace {

// Chunk starts: every kChunkBytes, moved forward past the next newline.
std::vector<std::size_t> ChunkStarts(std::string_view text, std::size_t chunk_bytes) {
  std::vector<std::size_t> starts{0};
  for (std::size_t at = chunk_bytes; at < text.size(); at += chunk_bytes) {
    const std::size_t nl = text.find('\n', std::max(at, starts.back()));
    if (nl == std::string_view::npos || nl + 1 >= text.size()) break;
    starts.push_back(nl + 1);
    at = nl + 1;
  }
  return starts;
}

// Progress events (Megatron iteration lines, key=value step lines) are one per rank, or per srun
// task while the rank is unknown, holding the latest line: a single pass over the file keeps
// one. Each chunk's parser keeps its own, so the merge folds a later chunk's into the earlier
// event (in its place, as a single pass leaves it); without this a 16k-task srun file in 64
// chunks kept a million progress events.
using ProgressSlots = std::unordered_map<std::int64_t, std::size_t>;  // slot -> index in the merged events

std::optional<std::int64_t> ProgressSlot(const Event& e) {
  if (e.kind != Kind::kIteration) return std::nullopt;
  const std::int64_t key = e.rank >= 0 || e.task < 0 ? e.rank : -2 - std::int64_t{e.task};  // records.cc's ProgressKey
  return 2 * key + (std::get<Iteration>(e.detail).data_us >= 0 ? 1 : 0);                    // step lines apart
}

ProgressSlots SlotsOf(const ParsedLog& log) {
  ProgressSlots slots;
  for (std::size_t i = 0; i < log.events.size(); ++i) {
    if (const auto slot = ProgressSlot(log.events[i])) slots.emplace(*slot, i);
  }
  return slots;
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
    if (w.pg == remap[st.pg] && w.group_rank == st.group_rank && w.last_enqueued < 0) {
      w.last_enqueued = st.last_enqueued;
      w.last_completed = st.last_completed;
    }
  }
}

// `into`'s open timeouts, with `from`'s (at their merged indices) replacing a rank's older one.
void MergeOpenWatchdogs(const ParsedLog& from, const std::vector<std::size_t>& placed, ParsedLog* into) {
  std::map<std::int32_t, std::size_t> open(into->open_watchdogs.begin(), into->open_watchdogs.end());
  for (const auto& [rank, index] : from.open_watchdogs) open[rank] = placed[index];
  into->open_watchdogs.assign(open.begin(), open.end());
}

// Appends `from` (the chunk after `into`'s last) to `into`: strings re-interned, lines shifted.
void Append(ParsedLog&& from, ParsedLog* into, ProgressSlots* slots) {
  const auto shift = static_cast<std::uint32_t>(into->lines);
  std::vector<StrId> remap(from.strings.size());
  for (StrId id = 0; id < remap.size(); ++id) remap[id] = into->strings.Intern(from.strings.Get(id));
  CloseWatchdogs(from, remap, into);
  std::vector<std::size_t> placed;  // from's event index -> its index in `into`
  placed.reserve(from.events.size());
  for (Event& e : from.events) {
    placed.push_back(into->events.size());
    ForEachStrId(e, [&](StrId& id) { id = remap[id]; });
    e.line += shift;
    if (e.clock == Clock::kNone && into->last_stamp_clock != Clock::kNone) {  // no stamp before it in its chunk
      e.time = into->last_stamp;
      e.clock = into->last_stamp_clock;
      e.time_borrowed = true;
    }
    if (e.kind == Kind::kRequeue) {  // the next run's iteration lines are new events (records.cc)
      std::erase_if(*slots, [](const auto& kv) { return kv.first % 2 == 0; });
    }
    if (const auto slot = ProgressSlot(e)) {
      const auto [at, fresh] = slots->try_emplace(*slot, into->events.size());
      if (!fresh) {
        placed.back() = at->second;
        FoldProgress(std::move(e), &into->events[at->second]);
        continue;
      }
    }
    into->events.push_back(std::move(e));
  }
  MergeOpenWatchdogs(from, placed, into);
  into->prefix_ranks.insert(into->prefix_ranks.end(), from.prefix_ranks.begin(), from.prefix_ranks.end());
  into->lines += from.lines;
  into->malformed += from.malformed;
  into->joined += from.joined;
  into->interleaved += from.interleaved;
  into->broken += from.broken;
  into->untimed += from.untimed;
  if (from.last_line.line > 0) into->last_line = {from.last_line.line + shift, from.last_line.offset, from.last_line.length};
  if (into->first_dated == 0) into->first_dated = from.first_dated;
  if (from.last_stamp_clock != Clock::kNone) {
    into->last_stamp = from.last_stamp;
    into->last_stamp_clock = from.last_stamp_clock;
  }
  into->agent |= from.agent;
  into->task_labels |= from.task_labels;
  into->local_tags |= from.local_tags;
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
    merged[g] = ParseLog(text.substr((*starts)[first], end - (*starts)[first]), ctx, 1, (*starts)[first]);
  });
  *parts = std::move(merged);
  *starts = std::move(merged_starts);
}

}  // namespace

ParsedLog ParseChunked(std::string_view text, const FileContext& ctx, std::size_t chunk_bytes,
                       const FileText* source) {
  if (text.size() <= chunk_bytes) return ParseLog(text, ctx);
  std::vector<std::size_t> starts = ChunkStarts(text, chunk_bytes);
  std::vector<ParsedLog> parts(starts.size());
  tbb::parallel_for(std::size_t{0}, starts.size(), [&](std::size_t i) {
    const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : text.size();
    parts[i] = ParseLog(text.substr(starts[i], end - starts[i]), ctx, 1, starts[i]);
    if (source) source->Release(starts[i], end - starts[i]);
  });
  JoinOpenRecords(text, ctx, &starts, &parts);
  ParsedLog out = std::move(parts[0]);
  // One allocation for every chunk's events (growing by doubling copied them and faulted in
  // fresh pages several times over on a 2 GB file).
  std::size_t events = 0;
  for (const ParsedLog& part : parts) events += part.events.size();
  out.events.reserve(events);
  ProgressSlots slots = SlotsOf(out);
  for (std::size_t i = 1; i < parts.size(); ++i) Append(std::move(parts[i]), &out, &slots);
  std::sort(out.prefix_ranks.begin(), out.prefix_ranks.end());
  out.prefix_ranks.erase(std::unique(out.prefix_ranks.begin(), out.prefix_ranks.end()), out.prefix_ranks.end());
  return out;
}

}  // namespace denpex::engine
