#include "ingest/load.h"

#include <fcntl.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "denpex/common/unique_fd.h"
#include "ingest/chunks.h"
#include "ingest/file_text.h"
#include "ingest/flight_recorder.h"
#include "ingest/nccl_ras.h"
#include "ingest/resolve.h"
#include "ingest/streams.h"
#include "ingest/walk.h"
#include "parse/parse_log.h"
#include "parse/simd.h"
#include "parse/triggers.h"
#include "stages.h"

namespace denpex::engine {
namespace {

// Files are parsed in batches of this many and merged after each, so the per-file results
// alive at once stay bounded at 131k ranks.
constexpr std::size_t kBatchFiles = 4096;

// A parse of the text after a file's leading hole releases its pages at their place in the file.
class ShiftedRelease final : public ReadBehind {
 public:
  ShiftedRelease(const ReadBehind& file, std::uint64_t shift) : file_(file), shift_(shift) {}
  void Release(std::uint64_t offset, std::uint64_t length) const override { file_.Release(offset + shift_, length); }
  void Fetch(std::uint64_t offset, std::uint64_t length) const override {
    file_.Fetch(offset + shift_, length);
  }
  bool Copy(std::uint64_t offset, std::size_t length, char* into) const override {
    return file_.Copy(offset + shift_, length, into);
  }

 private:
  const ReadBehind& file_;
  std::uint64_t shift_;
};

// The offsets of a parse of the text after a file's leading hole, made the file's (the hole
// holds no newline: line numbers are the file's already).
void ShiftOffsets(std::uint64_t shift, ParsedLog* log) {
  for (Event& e : log->events) e.offset += shift;
  if (log->last_line.line > 0) log->last_line.offset += shift;
}

// The incident directory, open while its files are read: each is opened by its path inside it,
// a lookup of a few components rather than of its whole absolute path (16k small logs:
// docs/benchmarks.md, "Per-file cost").
class IncidentDir {
 public:
  explicit IncidentDir(const std::filesystem::path& root)
      : fd_(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}

  Result<FileText> Open(const SourceFile& f) const {
    return fd_.valid() ? FileText::OpenAt(fd_.get(), f.rel.c_str(), f.path)
                       : FileText::Open(f.path);
  }

 private:
  UniqueFd fd_;
};

// How LoadIncident's files are parsed (its arguments of the same names).
struct ParseSettings {
  bool every_line = false;
  Texts texts = Texts::kAll;
  std::size_t chunk_bytes = kChunkBytes;
};

// A file's tagged streams (ingest/streams.h), each parsed as a file of its own beside the others,
// into `r->tagged`: its events and last line cited at the file's lines. `r`'s bytes, cut and
// problems go with the first.
void ParseTagged(const std::vector<TaggedStream>& streams, const FileContext& ctx,
                 const ParseSettings& settings, ParsedFile* r) {
  r->tagged.resize(streams.size());
  tbb::parallel_for(std::size_t{0}, streams.size(), [&](std::size_t k) {
    const TaggedStream& stream = streams[k];
    FileContext own = ctx;
    own.prefixes = SniffPrefixes(stream.text);
    own.read_behind = nullptr;
    ParsedFile& t = r->tagged[k];
    t.tag = stream.tag;
    t.log = ParseChunked(stream.text, own, settings.chunk_bytes);
    CiteAtFile(stream, &t.log);
  });
  ParsedFile& first = r->tagged.front();
  first.bytes = std::exchange(r->bytes, 0);
  first.inflate = std::move(r->inflate);
  std::size_t last = 0;  // the stream that holds the file's last line ends cut, where it does
  for (std::size_t k = 1; k < streams.size(); ++k)
    if (streams[k].lines.back().number > streams[last].lines.back().number) last = k;
  r->tagged[last].cut = r->cut;
}

ParsedFile ReadAndParse(const IncidentDir& dir, const SourceFile& f, std::uint32_t index,
                        const ParseSettings& settings) {
  ParsedFile r;
  auto text = dir.Open(f);
  if (!text.ok()) {
    r.problem = f.rel + ": unreadable: " + text.status().message();
    return r;
  }
  if (SniffFlightRecorder(text->view()) != FrForm::kNone)
    return ReadDumpBytes(text->view(), text->view().size(), f.rel, index);
  if (SniffNcclRas(text->view().substr(0, 4096)) != RasForm::kNone && !text->LooksBinary())
    return ReadRasBytes(text->view(), text->view().size(), f.rel, index);
  r.bytes = static_cast<std::int64_t>(text->view().size());
  r.cut = !text->view().empty() && text->view().back() != '\n';
  if (!text->problem().empty()) r.inflate = f.rel + ": " + text->problem();
  if (text->LooksBinary()) {
    r.problem = f.rel + ": binary file (NUL bytes" + (text->compression().empty() ? "" : " in its " + text->compression() + " text") +
                "), skipped";
    return r;
  }
  const std::size_t hole = text->LeadingHole();
  const std::string_view body = text->view().substr(hole);
  const ShiftedRelease shifted(*text, hole);
  const ReadBehind* read_behind = hole > 0 ? static_cast<const ReadBehind*>(&shifted) : &*text;
  const FileContext ctx{.file = index,
                        .name_rank = f.name_rank,
                        .local_rank = f.local_rank,
                        .kernel = f.kernel,
                        .prefixes = SniffPrefixes(body, read_behind),
                        .every_line = settings.every_line,
                        .ties_unordered = text->ties_unordered(),
                        .texts = settings.texts,
                        .read_behind = read_behind};
  if (hole == 0 && MayRelayStreams(body, ctx.prefixes)) {
    std::vector<TaggedStream> streams = SplitTaggedStreams(body, ctx.prefixes);
    if (!streams.empty() && text->Readable() >= text->view().size()) {  // read whole
      ParseTagged(streams, ctx, settings, &r);
      KeepForQuotes(std::move(*text));
      return r;
    }
  }
  r.log = ParseChunked(body, ctx, settings.chunk_bytes);
  if (hole > 0) {
    ShiftOffsets(hole, &r.log);
    r.hole = f.rel + ": starts with " + std::to_string(hole) +
             " NUL bytes (a hole: the file was truncated while a process kept writing at its old offset, e.g. `> file` "
             "on a live log): read from byte " + std::to_string(hole);
  }
  r.shrank = KeepReadable(*text, f.rel, &r.log, &r.cut);
  if (!r.shrank.empty()) r.bytes = static_cast<std::int64_t>(text->Readable());
  r.no_ib_counters = !MayHoldIbCounters(text->view().substr(0, text->Readable()));
  KeepForQuotes(std::move(*text));
  return r;
}

}  // namespace

ParsedFile ReadDumpBytes(std::string_view bytes, std::uint64_t size, std::string_view rel,
                         std::uint32_t index) {
  ParsedFile r;
  r.flight_recorder = true;
  r.bytes = static_cast<std::int64_t>(size);
  const std::string name(rel.substr(rel.rfind('/') + 1));
  if (size > kMaxFlightRecorderBytes) {
    r.problem = std::string(rel) + ": a Flight Recorder dump of " + std::to_string(size >> 20) +
                " MiB, over the " + std::to_string(kMaxFlightRecorderBytes >> 20) +
                " MiB read: skipped";
    return r;
  }
  const std::int32_t rank = FlightRecorderRank(name);
  FrRead read = ReadFlightRecorder(bytes, SniffFlightRecorder(bytes), index, rank);
  if (!read.problem.empty()) {
    r.problem = std::string(rel) + ": " + read.problem + ", skipped";
    return r;
  }
  if (rank < 0) {
    r.rankless = std::string(rel) +
                 ": a Flight Recorder dump whose name ends in no rank number (`<prefix><rank>`): "
                 "its events name no rank";
  }
  r.log = std::move(read.log);
  return r;
}

ParsedFile ReadRasBytes(std::string_view text, std::uint64_t size, std::string_view rel,
                        std::uint32_t index) {
  ParsedFile r;
  r.nccl_ras = true;
  r.bytes = static_cast<std::int64_t>(size);
  if (size > kMaxNcclRasBytes) {
    r.problem = std::string(rel) + ": NCCL RAS reports of " + std::to_string(size >> 20) +
                " MiB, over the " + std::to_string(kMaxNcclRasBytes >> 20) + " MiB read: skipped";
    return r;
  }
  RasRead read = ReadNcclRas(text, SniffNcclRas(text.substr(0, 4096)), index);
  for (std::string& n : read.notes) r.notes.push_back(std::string(rel) + ": " + std::move(n));
  if (!read.problem.empty()) {
    r.problem = std::string(rel) + ": " + read.problem + ", skipped";
    return r;
  }
  r.log = std::move(read.log);
  return r;
}

namespace {

// ---- Rotated logs ------------------------------------------------------------------------

// The pieces of one log that logrotate split in time (`X.log.2.gz`, `X.log.1`, `X.log`): file
// indexes, oldest first. The live piece (the last) parses them all.
using Stream = std::vector<std::size_t>;

// Files with the same SourceFile::stream, two or more, each as a Stream; `stream_of[i]` is file
// i's stream, -1 for a file that is a log of its own.
std::vector<Stream> RotatedStreams(const std::vector<SourceFile>& files, std::vector<std::int32_t>* stream_of) {
  std::map<std::string_view, Stream> by_stream;
  for (std::size_t i = 0; i < files.size(); ++i) by_stream[files[i].stream].push_back(i);
  std::vector<Stream> streams;
  stream_of->assign(files.size(), -1);
  for (auto& [name, members] : by_stream) {
    if (members.size() < 2) continue;
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) { return files[a].age > files[b].age; });
    for (std::size_t m : members) (*stream_of)[m] = static_cast<std::int32_t>(streams.size());
    streams.push_back(std::move(members));
  }
  return streams;
}

// One piece's place in the joined text of its stream.
struct Piece {
  std::size_t file;          // its index
  std::size_t start;         // its first byte in the joined text
  std::size_t end;           // past its last byte there (a piece that does not end in a newline gets one)
  std::uint64_t skip = 0;    // the bytes of the file before its text (a leading hole)
  std::uint32_t lines_before = 0;  // the joined text's lines before it
};

// A stream's pieces read as one log, oldest first (what borrows a stamp, a record that goes on
// across a rotation, the last line), each event then given back to the piece that holds its line,
// at its line and offset there: a rotated log is one stream of lines, cited where they are.
void ReadAndParseStream(const IncidentDir& dir, const std::vector<SourceFile>& files,
                        const Stream& stream, std::size_t begin, const ParseSettings& settings,
                        std::vector<ParsedFile>* results) {
  // The pieces opened side by side (a compressed one is inflated as it opens), then copied into
  // one buffer of their joined size, each with its newlines counted as it is copied: no piece
  // read twice, no copy grown by doubling (each first touch of fresh memory is dear in a VM).
  std::vector<std::optional<FileText>> texts(stream.size());
  tbb::parallel_for(std::size_t{0}, stream.size(), [&](std::size_t k) {
    const SourceFile& f = files[stream[k]];
    ParsedFile& r = (*results)[stream[k] - begin];
    auto text = dir.Open(f);
    if (!text.ok()) {
      r.problem = f.rel + ": unreadable: " + text.status().message();
      return;
    }
    r.bytes = static_cast<std::int64_t>(text->view().size());
    r.cut = !text->view().empty() && text->view().back() != '\n';
    r.no_ib_counters = !MayHoldIbCounters(text->view().substr(0, text->Readable()));
    if (!text->problem().empty()) r.inflate = f.rel + ": " + text->problem();
    if (text->LooksBinary()) {
      r.problem = f.rel + ": binary file (NUL bytes), skipped";
      return;
    }
    texts[k].emplace(std::move(*text));
  });
  std::vector<Piece> pieces;
  std::vector<const FileText*> sources;  // each piece's file
  std::vector<std::string_view> bodies;  // and its text
  std::size_t size = 0;
  for (std::size_t k = 0; k < stream.size(); ++k) {
    if (!texts[k]) continue;
    const FileText& text = *texts[k];
    const std::size_t hole = text.LeadingHole();
    const std::string_view body =
        text.view().substr(hole, text.Readable() > hole ? text.Readable() - hole : 0);
    const bool newline =
        !body.empty() && body.back() != '\n';  // a piece that does not end in one gets one
    pieces.push_back(
        Piece{.file = stream[k], .start = size, .end = size + body.size() + newline, .skip = hole});
    sources.push_back(&text);
    bodies.push_back(body);
    size = pieces.back().end;
  }
  if (pieces.empty()) return;
  const std::unique_ptr<char[]> joined_bytes(new char[size]);  // written whole below
  std::vector<std::uint32_t> newlines(pieces.size());
  tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t k) {
    const Piece& p = pieces[k];
    const std::string_view body = bodies[k];
    char* into = joined_bytes.get() + p.start;
    if (!sources[k]->Copy(p.skip, body.size(), into))
      std::memcpy(into, body.data(), body.size());  // held in memory, or shrank
    if (p.end - p.start > body.size()) into[body.size()] = '\n';
    newlines[k] = static_cast<std::uint32_t>(CountNewlines({into, p.end - p.start}));
  });
  texts.clear();
  const std::string_view joined(joined_bytes.get(), size);
  for (std::size_t k = 1; k < pieces.size(); ++k)
    pieces[k].lines_before = pieces[k - 1].lines_before + newlines[k - 1];
  const SourceFile& live = files[pieces.back().file];
  const FileContext ctx{.file = static_cast<std::uint32_t>(pieces.back().file),
                        .name_rank = live.name_rank,
                        .local_rank = live.local_rank,
                        .kernel = live.kernel,
                        .prefixes = SniffPrefixes(joined),
                        .every_line = settings.every_line,
                        .texts = settings.texts};
  ParsedLog log = ParseChunked(joined, ctx, settings.chunk_bytes);
  const auto piece_of = [&](std::uint64_t offset) {
    return std::upper_bound(pieces.begin(), pieces.end(), offset, [](std::uint64_t o, const Piece& p) { return o < p.start; }) - 1;
  };
  std::vector<std::vector<StrId>> remaps(pieces.size());
  for (Event& e : log.events) {
    const auto p = piece_of(e.offset);
    const auto k = static_cast<std::size_t>(p - pieces.begin());
    ParsedFile& r = (*results)[p->file - begin];
    std::vector<StrId>& remap = remaps[k];
    if (remap.empty()) remap.assign(log.strings.size(), kNoStr);
    ForEachStrId(e, [&](StrId& id) {
      if (id != kNoStr && remap[id] == kNoStr) remap[id] = r.log.strings.Intern(log.strings.Get(id));
      id = remap[id];
    });
    e.file = static_cast<std::uint32_t>(p->file);
    e.offset = e.offset - p->start + p->skip;
    e.line -= p->lines_before;
    r.log.events.push_back(e);
  }
  std::string joined_names;
  for (const Piece& p : pieces) {
    ParsedFile& r = (*results)[p.file - begin];
    r.log.lines = newlines[static_cast<std::size_t>(&p - pieces.data())];
    r.log.agent = log.agent;
    r.log.task_labels = log.task_labels;
    r.log.local_tags = log.local_tags;
    r.log.prefix_ranks = log.prefix_ranks;
    r.log.barrier_ranks = log.barrier_ranks;
    r.log.kernel_host = log.kernel_host;
    r.log.kernel_hosts_differ = log.kernel_hosts_differ;
    r.log.kernel_text = log.kernel_text;
    r.rotated_into = static_cast<std::int32_t>(pieces.back().file);
    joined_names += (joined_names.empty() ? "" : ", ") + files[p.file].rel;
  }
  ParsedFile& r = (*results)[pieces.back().file - begin];
  r.rotated_into = -1;
  r.log.malformed = log.malformed;
  r.log.joined = log.joined;
  r.log.interleaved = log.interleaved;
  r.log.broken = log.broken;
  r.log.untimed = log.untimed;
  r.log.false_candidates = log.false_candidates;
  r.log.trigger_lines = log.trigger_lines;
  r.log.idle_trigger_lines = log.idle_trigger_lines;
  r.log.first_dated = log.first_dated;
  if (log.last_line.line > 0) {  // in the live piece, or before it when that one is empty
    const auto p = piece_of(log.last_line.offset);
    (*results)[p->file - begin].log.last_line = {log.last_line.line - p->lines_before, log.last_line.offset - p->start + p->skip,
                                                 log.last_line.length};
  }
  if (pieces.size() > 1) r.stream = "rotated log read as one stream, oldest first: " + joined_names;
}

// Files [begin, end) parsed in parallel; results in file order. A rotated log's pieces are all
// parsed by its live piece's task (the batch holds them all).
std::vector<ParsedFile> ParseBatch(const IncidentDir& dir, const std::vector<SourceFile>& files,
                                   std::size_t begin, std::size_t end,
                                   const std::vector<Stream>& streams,
                                   const std::vector<std::int32_t>& stream_of,
                                   tbb::task_arena* arena, const ParseSettings& settings) {
  std::vector<ParsedFile> results(end - begin);
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end), [&](const auto& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        if (stream_of[i] >= 0) {
          const Stream& stream = streams[static_cast<std::size_t>(stream_of[i])];
          if (stream.back() == i) ReadAndParseStream(dir, files, stream, begin, settings, &results);
          continue;
        }
        results[i - begin] = ReadAndParse(dir, files[i], static_cast<std::uint32_t>(i), settings);
      }
    });
  });
  return results;
}

// The files of the batch at `begin` that were split into tagged streams (ParsedFile::tagged)
// made a file of the listing per stream, one after another under the file's path (the listing
// stays sorted): the batch's ParsedFiles, the events' file indices, the rotated streams' indices
// and `stream_of` follow. Returns how many files the listing gained.
std::size_t ExpandTagged(std::size_t begin, std::vector<ParsedFile>* batch, Listing* listing,
                         std::vector<Stream>* streams, std::vector<std::int32_t>* stream_of) {
  if (std::all_of(batch->begin(), batch->end(),
                  [](const ParsedFile& r) { return r.tagged.empty(); }))
    return 0;
  const std::size_t end = begin + batch->size();
  std::vector<ParsedFile> parsed;
  std::vector<SourceFile> sources;
  std::vector<std::int32_t> of;
  std::vector<std::size_t> moved(batch->size());  // old index - begin -> new index
  for (std::size_t k = 0; k < batch->size(); ++k) {
    ParsedFile& r = (*batch)[k];
    const SourceFile& src = listing->files[begin + k];
    moved[k] = begin + parsed.size();
    if (r.tagged.empty()) {
      parsed.push_back(std::move(r));
      sources.push_back(src);
      of.push_back((*stream_of)[begin + k]);
      continue;
    }
    for (std::size_t j = 0; j < r.tagged.size(); ++j) {
      SourceFile s = src;
      s.tag = std::move(r.tagged[j].tag);
      s.tag_index = static_cast<std::int32_t>(j);
      sources.push_back(std::move(s));
      parsed.push_back(std::move(r.tagged[j]));
      of.push_back(-1);
    }
  }
  const std::size_t added = parsed.size() - batch->size();
  const auto index = [&](std::size_t i) {
    return i < begin ? i : i < end ? moved[i - begin] : i + added;
  };
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    for (Event& e : parsed[k].log.events) e.file = static_cast<std::uint32_t>(begin + k);
    if (parsed[k].rotated_into >= 0)
      parsed[k].rotated_into =
          static_cast<std::int32_t>(index(static_cast<std::size_t>(parsed[k].rotated_into)));
  }
  for (Stream& stream : *streams) {
    for (std::size_t& i : stream) i = index(i);
  }
  const auto at = [begin](auto& v) { return v.begin() + static_cast<std::ptrdiff_t>(begin); };
  listing->files.erase(at(listing->files),
                       at(listing->files) + static_cast<std::ptrdiff_t>(batch->size()));
  listing->files.insert(at(listing->files), std::make_move_iterator(sources.begin()),
                        std::make_move_iterator(sources.end()));
  stream_of->erase(at(*stream_of), at(*stream_of) + static_cast<std::ptrdiff_t>(batch->size()));
  stream_of->insert(at(*stream_of), of.begin(), of.end());
  *batch = std::move(parsed);
  return added;
}

// The batch's events, in file order, appended to the incident's with their strings still their
// file's (RemapStrings re-interns them). Event is trivially copyable: each file's events are one
// memmove. When one file's vector has room for the incident's events and the whole batch (a
// combined srun log's: the chunk merge reserves address space for the chunks to come), that
// vector becomes the incident's, the events before it (the incident's so far, the batch's files
// before it) moved in at its front and the files after it appended, instead of a copy of its
// events into fresh pages and the unmapping of the vector (16k-rank benchmark incident: 149,773
// of its 149,778 events in one file; 131k-rank scale incident: ~1.07 M of them in its last batch,
// after 2 from the kernel logs of the batches before: a copy of 140 MB into 34 k fresh pages.
// Measured in docs/benchmarks.md).
void AppendEvents(std::vector<ParsedFile>& batch, Incident* inc) {
  static_assert(std::is_trivially_copyable_v<Event>);
  std::size_t total = inc->events.size(), largest = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    total += batch[i].log.events.size();
    if (batch[i].log.events.size() > batch[largest].log.events.size()) largest = i;
  }
  const auto append = [](std::vector<Event>* to, const ParsedFile& r) {
    to->insert(to->end(), r.log.events.begin(), r.log.events.end());
  };
  if (!batch.empty() && batch[largest].log.events.capacity() >= total &&
      batch[largest].log.events.size() >= inc->events.size()) {
    std::vector<Event> before = std::move(inc->events);
    for (std::size_t i = 0; i < largest; ++i) append(&before, batch[i]);
    inc->events = std::move(batch[largest].log.events);
    inc->events.insert(inc->events.begin(), before.begin(), before.end());
    for (std::size_t i = largest + 1; i < batch.size(); ++i) append(&inc->events, batch[i]);
    return;
  }
  inc->events.reserve(total);  // one allocation, not one per doubling
  for (const ParsedFile& r : batch) append(&inc->events, r);
}

// The string ids of the events from `first` on, each re-interned by its file's remap
// (`remaps[file - first_file]`), in parallel over blocks of events (the ~150 k events of the
// 16k-rank benchmark incident: ~1.1 ms of one thread).
void RemapStrings(std::size_t first, std::size_t first_file, const std::vector<std::vector<StrId>>& remaps,
                  Incident* inc) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(first, inc->events.size(), 4096), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      Event& e = inc->events[i];
      const std::vector<StrId>& remap = remaps[e.file - first_file];
      ForEachStrId(e, [&](StrId& id) { id = remap[id]; });
    }
  });
}

// A Flight Recorder dump: recorded as no text log (LogFile::flight_recorder: no lines, no
// node, no rank of its own); its events' strings interned. 1 when it was read.
int AddDump(const SourceFile& src, ParsedFile&& r, Incident* inc, std::vector<StrId>* remap) {
  LogFile f{.path = src.rel};
  f.flight_recorder = true;
  const bool read = r.problem.empty();
  if (!read) {
    inc->input.unreadable_files += 1;
    AddProblem(&inc->input, std::move(r.problem));
  } else {
    if (!r.rankless.empty()) AddProblem(&inc->input, std::move(r.rankless));
    *remap = inc->strings.Absorb(std::move(r.log.strings));
  }
  inc->files.push_back(std::move(f));
  return read ? 1 : 0;
}

// A file of NCCL RAS reports: no node, no rank of its own (its events name the ranks the reports
// do); its lines are cited as they are. 1 when it was read.
int AddReports(const SourceFile& src, ParsedFile&& r, Incident* inc, std::vector<StrId>* remap) {
  LogFile f{.path = src.rel};
  f.nccl_ras = true;
  for (std::string& n : r.notes) AddProblem(&inc->input, std::move(n));
  const bool read = r.problem.empty();
  if (!read) {
    inc->input.unreadable_files += 1;
    AddProblem(&inc->input, std::move(r.problem));
  } else {
    inc->input.lines += r.log.lines;
    *remap = inc->strings.Absorb(std::move(r.log.strings));
  }
  inc->files.push_back(std::move(f));
  return read ? 1 : 0;
}

// Records one file and interns its strings (its events are appended by AppendEvents: *remap
// says how to re-intern their ids); returns 1 when it was readable text.
int AddFile(const SourceFile& src, ParsedFile&& r, Incident* inc, std::vector<StrId>* remap) {
  LogFile f{.path = src.rel,
            .own_rank = src.name_rank,
            .local_rank = src.local_rank,
            .copy = src.copy,
            .kernel = src.kernel,
            .rotated_into = r.rotated_into};
  f.tag = src.tag;
  inc->input.files += src.tag_index > 0 ? 0 : 1;  // a file's tagged streams count once
  inc->input.bytes += r.bytes;
  if (r.flight_recorder) return AddDump(src, std::move(r), inc, remap);
  if (r.nccl_ras) return AddReports(src, std::move(r), inc, remap);
  const bool readable = r.problem.empty();
  if (!readable) {
    // A skipped file is counted and named, and contributes nothing else: not the rank or local
    // rank of its name, not its node (a binary `rank_9000.log` must not make the world 9,001).
    f = LogFile{.path = src.rel};
    inc->input.unreadable_files += 1;
    AddProblem(&inc->input, std::move(r.problem));
  } else {
    f.readable = true;
    f.kernel |= r.log.kernel_text;  // by what it holds as well as by its name
    f.agent = r.log.agent;
    f.task_labels = r.log.task_labels;
    f.local_tags = r.log.local_tags;
    f.top_local_tag = r.log.top_local_tag;
    f.prefix_ranks = std::move(r.log.prefix_ranks);
    f.barrier_ranks = std::move(r.log.barrier_ranks);
    f.last_line = r.log.last_line;
    f.cut = r.cut;
    f.no_ib_counters = r.no_ib_counters;
    if (r.log.first_dated != 0 && (inc->first_dated == 0 || r.log.first_dated < inc->first_dated)) {
      inc->first_dated = r.log.first_dated;
    }
    inc->input.lines += r.log.lines;
    inc->input.malformed_lines += r.log.malformed + r.log.broken;
    inc->input.joined_lines += r.log.joined;
    inc->input.interleaved_lines += r.log.interleaved;
    inc->input.broken_records += r.log.broken;
    inc->input.untimed_events += r.log.untimed;
    inc->input.false_candidates += r.log.false_candidates;
    inc->input.trigger_lines += r.log.trigger_lines;
    inc->input.idle_trigger_lines += r.log.idle_trigger_lines;
    if (!r.hole.empty()) AddProblem(&inc->input, std::move(r.hole));
    if (!r.stream.empty()) AddNote(&inc->input, std::move(r.stream));
    if (!r.inflate.empty()) AddProblem(&inc->input, std::move(r.inflate));
    if (!r.shrank.empty()) AddProblem(&inc->input, std::move(r.shrank));
    *remap = inc->strings.Absorb(std::move(r.log.strings));
    if (!r.log.kernel_host.empty() && !r.log.kernel_hosts_differ)
      f.kernel_host = inc->strings.Intern(r.log.kernel_host);
  }
  inc->files.push_back(std::move(f));
  return readable ? 1 : 0;
}

// `denpex run`'s `<stem>.errors.log` repeats lines of `<stem>.log` with the same stamps: an
// event of the copy that its main log also holds (same time, kind and signature) is dropped,
// so a line counts once. What the copy alone kept (the main log was capped) stays.
void DropCopies(Incident* inc) {
  if (std::none_of(inc->files.begin(), inc->files.end(), [](const LogFile& f) { return f.copy; })) return;
  std::map<std::string, std::uint32_t> by_path;
  for (std::uint32_t i = 0; i < inc->files.size(); ++i) by_path.emplace(inc->files[i].path, i);
  constexpr std::string_view kErrors = ".errors.log";
  std::vector<std::int64_t> main_of(inc->files.size(), -1);
  for (std::uint32_t i = 0; i < inc->files.size(); ++i) {
    const std::string& p = inc->files[i].path;
    if (!inc->files[i].copy) continue;
    auto it = by_path.find(p.substr(0, p.size() - kErrors.size()) + ".log");
    if (it != by_path.end() && inc->files[it->second].readable) main_of[i] = it->second;
  }
  using Key = std::tuple<std::uint32_t, TimeNs, Kind, StrId>;
  std::set<Key> in_main;
  for (const Event& e : inc->events) {
    if (!inc->files[e.file].copy) in_main.insert({e.file, e.time, e.kind, e.signature});
  }
  std::erase_if(inc->events, [&](const Event& e) {
    const std::int64_t m = main_of[e.file];
    return m >= 0 && in_main.contains({static_cast<std::uint32_t>(m), e.time, e.kind, e.signature});
  });
}

// Files [begin, begin + batch.size()) of `listing`, parsed, added to `inc`: their events appended
// in file order, their strings re-interned; returns how many were readable text.
int AddBatch(Listing* listing, std::size_t begin, std::vector<ParsedFile>&& batch,
             tbb::task_arena* arena, Incident* inc) {
  const std::size_t end = begin + batch.size();
  const std::size_t first = inc->events.size();
  std::vector<char> eventful(batch.size());  // before AppendEvents takes the events
  for (std::size_t k = 0; k < batch.size(); ++k)
    eventful[k] = !batch[k].log.events.empty() || !batch[k].log.progress.empty();
  AppendEvents(batch, inc);
  std::vector<std::vector<StrId>> remaps(end - begin);
  int readable = 0;
  for (std::size_t i = begin; i < end; ++i) {
    readable += AddFile(listing->files[i], std::move(batch[i - begin]), inc, &remaps[i - begin]);
    inc->files[i].eventful = inc->files[i].readable && eventful[i - begin] != 0;
    if (!inc->files[i].readable) listing->files[i].node.clear();  // names no node (AddFile)
  }
  arena->execute([&] { RemapStrings(first, begin, remaps, inc); });
  return readable;
}

}  // namespace

// A rotated log's events in the order of its stream, oldest piece first (the pieces sort live
// first by name: `X.log`, `X.log.1`, `X.log.2.gz`): what a rank raised first, its last line, are
// then found where the stream has them. Events stay cited in their piece.
void OrderRotatedStreams(const std::vector<SourceFile>& files, Incident* inc) {
  if (std::none_of(inc->files.begin(), inc->files.end(),
                   [](const LogFile& f) { return f.rotated_into >= 0; }))
    return;
  const auto stream = [&](const Event& e) {
    const std::int32_t into = inc->files[e.file].rotated_into;
    return into >= 0 ? static_cast<std::uint32_t>(into) : e.file;
  };
  auto& events = inc->events;
  for (std::size_t begin = 0, end = 0; begin < events.size(); begin = end) {
    bool pieces = false;
    for (end = begin + 1; end < events.size() && stream(events[end]) == stream(events[begin]); ++end) {
      pieces |= events[end].file != events[begin].file;
    }
    if (!pieces) continue;
    std::stable_sort(events.begin() + static_cast<std::ptrdiff_t>(begin), events.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](const Event& a, const Event& b) {
                       return std::tie(files[b.file].age, a.line) < std::tie(files[a.file].age, b.line);
                     });
  }
}

namespace {

// What no single file says, once every file is added (ingest/resolve.h).
void ResolveIncident(const std::vector<SourceFile>& files, tbb::task_arena* arena, Incident* inc) {
  OrderRotatedStreams(files, inc);
  arena->execute([&] {  // the steps' passes over the events run in parallel (resolve.cc)
    DropCopies(inc);
    const EventCensus census = TakeCensus(*inc);
    ResolveNodes(files, census, inc);
    ResolveRayWorkers(census, inc);
    ResolveOwnRanks(inc);
    ResolveRanks(census, inc);
    ResolveNcclPids(inc);
    ResolvePgRanks(inc);
    ResolveYears(census, inc);
    NoteRecovery(inc);
  });
}

}  // namespace

Result<Incident> LoadIncident(const std::filesystem::path& dir, int threads,
                              const std::filesystem::path& skip, bool every_line,
                              std::size_t chunk_bytes, Texts texts) {
  const ParseSettings settings{.every_line = every_line,
                               .texts = texts,
                               .chunk_bytes = chunk_bytes > 0 ? chunk_bytes : kChunkBytes};
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  ForgetKeptText();  // the last incident's text, kept for its quotes
  Result<Listing> listing = Status::Internal("not listed");
  // The trigger pre-filter's tables, built once per process (~6 ms of one thread: most of a
  // one-file incident's parse), are built while the directory is listed, not by the first parse.
  tbb::task_group filter;
  arena.execute([&] { filter.run([] { (void)LineFilter::Default(); }); });
  Stage list("ListIncident");
  arena.execute([&] { listing = ListIncident(dir, skip); });  // its folders are walked in parallel
  list.End();
  Stage built("LineFilter");  // what is left of the build once the listing is done
  arena.execute([&] { filter.wait(); });
  built.End();
  if (!listing.ok()) return listing.status();
  const std::string hint = ": pass the directory that holds the job's logs";
  if (listing->files.empty()) {
    return Status::InvalidInput("no log files found under " + dir.string() + hint);
  }
  Incident inc;
  inc.root = listing->root;
  for (auto& p : listing->problems) AddProblem(&inc.input, std::move(p));

  int readable = 0;
  const IncidentDir root(listing->root);
  std::vector<std::int32_t> stream_of;
  std::vector<Stream> streams = RotatedStreams(listing->files, &stream_of);
  for (std::size_t begin = 0, end = 0; begin < listing->files.size(); begin = end) {
    end = std::min(listing->files.size(), begin + kBatchFiles);
    while (end < listing->files.size() && stream_of[end] >= 0 && stream_of[end] == stream_of[end - 1]) ++end;
    for (std::size_t i = begin; i < end; ++i) {  // a stream's pieces in one batch
      if (stream_of[i] >= 0) end = std::max(end, *std::max_element(streams[static_cast<std::size_t>(stream_of[i])].begin(),
                                                                   streams[static_cast<std::size_t>(stream_of[i])].end()) + 1);
    }
    Stage parse("ParseBatch");
    std::vector<ParsedFile> batch =
        ParseBatch(root, listing->files, begin, end, streams, stream_of, &arena, settings);
    end += ExpandTagged(begin, &batch, &*listing, &streams, &stream_of);
    parse.End();
    Stage add("AddBatch");
    readable += AddBatch(&*listing, begin, std::move(batch), &arena, &inc);
  }
  if (readable == 0) {
    return Status::InvalidInput("no readable log files under " + dir.string() + hint);
  }
  Stage resolve("ResolveIncident");
  ResolveIncident(listing->files, &arena, &inc);
  FinishProblems(&inc.input);
  return inc;
}

Result<Incident> AssembleIncident(Listing&& listing, std::vector<ParsedFile>&& parsed,
                                  int threads) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  Incident inc;
  inc.root = listing.root;
  for (auto& p : listing.problems) AddProblem(&inc.input, std::move(p));
  const int readable = AddBatch(&listing, 0, std::move(parsed), &arena, &inc);
  if (readable == 0) {
    return Status::InvalidInput("no readable log files under " + listing.root.string() +
                                ": pass the directory that holds the job's logs");
  }
  ResolveIncident(listing.files, &arena, &inc);
  FinishProblems(&inc.input);
  return inc;
}

}  // namespace denpex::engine
