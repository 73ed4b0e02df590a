// Large files are parsed in chunks, in parallel (a 2 GB combined srun log must use every
// core). Chunk boundaries fall after a newline and depend only on the file's bytes, never on
// the thread count (the last few shrink, so the workers finish together); chunks are taken in
// file order and merged in order, each as soon as it and
// every chunk before it are parsed (beside the parsing of the rest), lines renumbered, and
// nothing depends on the chunk size: an untimed line at a chunk's start borrows the stamp before it, a
// watchdog's status line completes the timeout of the chunk before, and a chunk that ends inside
// a record that goes on (a ChildFailedError table, a traceback, a split line) is parsed again
// joined with the next (up to 4 chunks; a record longer than that is read as broken halves).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parse/parse_log.h"

namespace denpex::engine {

// 16 MiB: each worker reads its chunk into a buffer of this size (ParseChunk, ingest/chunks.cc),
// kept for the process's life, so the chunk size is resident memory twice over; 16, 32 and
// 64 MiB parse the scale incidents in the same time (docs/benchmarks.md, "Read, not mapped"),
// 64 MiB with ~90 MiB more peak RSS. The last chunks shrink (below), so one worker does not wait
// long on the other's dense last chunk.
inline constexpr std::size_t kChunkBytes = 16 << 20;
inline constexpr std::size_t kTailChunkBytes = 4 << 20;  // the least a file's last chunks shrink to

// Where `text`'s chunks start (the first at 0): every `chunk_bytes` after a newline, smaller
// over the last four (ingest/chunks.cc). Only the bytes decide, never the thread count; `file`,
// when set, is the file `text` maps, whose bytes are read (ReadBehind::Copy) rather than mapped.
std::vector<std::size_t> ChunkStarts(std::string_view text, std::size_t chunk_bytes,
                                     const ReadBehind* file = nullptr);

// A large block's whole 2 MiB pages advised into transparent huge pages where the kernel has them
// (`madvise` mode): memory written once in bulk (merged events, a decoded text) takes one fault
// for each 2 MiB rather than each 4 KiB, and each fault is dear in a VM. Blocks under 32 MiB are
// left alone, as is memory glibc did not map on its own.
void AdviseHugePages(const void* data, std::size_t bytes);

// ParseLog over `text`, in parallel chunks when it is larger than kChunkBytes.
// `chunk_bytes` is a parameter for the tests. `ctx.read_behind`, when set, is given each chunk's
// bytes as the parse passes them, and the whole chunk once it is parsed.
ParsedLog ParseChunked(std::string_view text, const FileContext& ctx, std::size_t chunk_bytes = kChunkBytes);

// A log that grows while it is read (`denpex watch`): its text arrives in pieces of whole lines,
// each parsed as the chunk after the last and merged as ParseChunked merges its chunks, so what
// it holds is what one parse of the text so far gives. Until the text reaches kWholeBytes it is
// parsed whole at each piece (its prefixes sniffed and its opening lines read as a parse of the
// file reads them), unless the caller says its budget for such text is spent; a piece that ends
// inside a record that goes on (a traceback still printing) is held and parsed again joined with
// the next, up to kHeldBytes.
class GrowingLog {
 public:
  static constexpr std::size_t kWholeBytes = 64 << 10;
  static constexpr std::size_t kHeldBytes = 4 << 20;

  // `ctx.prefixes` is sniffed from the text (SniffPrefixes), not taken from `ctx`.
  explicit GrowingLog(const FileContext& ctx);
  GrowingLog(GrowingLog&&) noexcept;
  GrowingLog& operator=(GrowingLog&&) noexcept;
  ~GrowingLog();

  // The file's next bytes, from where the last piece ended; whole lines (ends in a newline).
  // `may_hold` false: not held whole even while small (the caller's budget for held text is
  // spent): parsed from here on piece by piece, its prefixes sniffed from what it holds so far.
  void Add(std::string_view lines, bool may_hold = true);
  // The text held whole, not parsed yet (a small file's).
  std::size_t held() const;
  // The text so far parsed: events (progress placed), counts, the file's last line. A held
  // record is read as it stands.
  ParsedLog Snapshot() const;
  std::uint64_t bytes() const;  // the text added so far
  // How many events other than step lines the pieces added so far made (a piece parsed again
  // counts again): what tells a watcher that something new happened, without a Snapshot.
  std::uint64_t signals() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace denpex::engine
