#include "ingest/chunks.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
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

// Appends `from` (the chunk after `into`'s last) to `into`: strings re-interned, lines shifted.
void Append(ParsedLog&& from, ParsedLog* into) {
  const auto shift = static_cast<std::uint32_t>(into->lines);
  std::vector<StrId> remap(from.strings.size());
  for (StrId id = 0; id < remap.size(); ++id) remap[id] = into->strings.Intern(from.strings.Get(id));
  for (Event& e : from.events) {
    ForEachStrId(e, [&](StrId& id) { id = remap[id]; });
    e.line += shift;
    into->events.push_back(std::move(e));
  }
  into->prefix_ranks.insert(into->prefix_ranks.end(), from.prefix_ranks.begin(), from.prefix_ranks.end());
  into->lines += from.lines;
  into->malformed += from.malformed;
  into->joined += from.joined;
  into->interleaved += from.interleaved;
  into->broken += from.broken;
  into->untimed += from.untimed;
  if (from.last_line.line > 0) into->last_line = {from.last_line.line + shift, from.last_line.offset, from.last_line.length};
  if (into->first_dated == 0) into->first_dated = from.first_dated;
  into->agent |= from.agent;
  into->task_labels |= from.task_labels;
  into->local_tags |= from.local_tags;
}

}  // namespace

ParsedLog ParseChunked(std::string_view text, const FileContext& ctx, std::size_t chunk_bytes,
                       const FileText* source) {
  if (text.size() <= chunk_bytes) return ParseLog(text, ctx);
  const std::vector<std::size_t> starts = ChunkStarts(text, chunk_bytes);
  std::vector<ParsedLog> parts(starts.size());
  tbb::parallel_for(std::size_t{0}, starts.size(), [&](std::size_t i) {
    const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : text.size();
    parts[i] = ParseLog(text.substr(starts[i], end - starts[i]), ctx, 1, starts[i]);
    if (source) source->Release(starts[i], end - starts[i]);
  });
  ParsedLog out = std::move(parts[0]);
  // One allocation for every chunk's events (growing by doubling copied them and faulted in
  // fresh pages several times over on a 2 GB file).
  std::size_t events = 0;
  for (const ParsedLog& part : parts) events += part.events.size();
  out.events.reserve(events);
  for (std::size_t i = 1; i < parts.size(); ++i) Append(std::move(parts[i]), &out);
  std::sort(out.prefix_ranks.begin(), out.prefix_ranks.end());
  out.prefix_ranks.erase(std::unique(out.prefix_ranks.begin(), out.prefix_ranks.end()), out.prefix_ranks.end());
  return out;
}

}  // namespace denpex::engine
