// LoadIncident: the ingest stage's entry, an incident directory in, the Incident every later
// stage reads (incident/incident.h) out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "incident/incident.h"
#include "ingest/walk.h"
#include "parse/parse_log.h"

namespace denpex::engine {

// Walks, reads and parses `dir` (parallel over files; `threads` 0 = all cores). kNotFound /
// kInvalidInput when the directory is missing, not a directory, or holds no readable log.
// `skip`: a checkpoint directory inside `dir` that is not to be read as logs. `every_line`
// turns the pre-filter off (FileContext::every_line): the same result, slower. `chunk_bytes`
// (0: ingest/chunks.h's kChunkBytes) is the size of the chunks large files are parsed in, for
// the tests: the result never depends on it. `texts`: Texts::kAnalysed leaves out the texts that
// are only shown (parse/parse_log.h), for a diagnosis.
Result<Incident> LoadIncident(const std::filesystem::path& dir, int threads,
                              const std::filesystem::path& skip = {}, bool every_line = false,
                              std::size_t chunk_bytes = 0, Texts texts = Texts::kAll);

// What parsing one file gave: LoadIncident's per-file result, and a growing log's snapshot
// (ingest/live.h).
struct ParsedFile {
  ParsedLog log;
  std::int64_t bytes = 0;
  std::string problem;  // set when the file could not be read as text
  bool cut = false;     // the text ends without a newline
  std::string
      shrank;  // set when the file shrank (or a page failed) while it was read: read to the cut
  std::string hole;     // set when the file starts with a hole of NUL bytes: read from after it
  std::string stream;   // set on a rotated log's live piece: its pieces were read as one stream
  std::string inflate;  // set when a compressed file's stream broke or was capped
  std::int32_t rotated_into = -1;  // an older piece of a rotated log: its live piece (LogFile)
  bool no_ib_counters = false;     // its text fails MayHoldIbCounters (LogFile)
  // A Flight Recorder dump (ingest/flight_recorder.h), not a text log: `log` holds its events
  // only; `problem` says why it could not be read, `rankless` that its name ends in no rank.
  bool flight_recorder = false;
  std::string rankless;
  // NCCL RAS reports (ingest/nccl_ras.h), not read by the line parser: `log` holds their
  // events; `notes` what the reader says of them (a repaired JSON, older reports not read).
  bool nccl_ras = false;
  std::vector<std::string> notes;
  // A file that relays several containers' tagged lines (ingest/streams.h): a ParsedFile per
  // stream, each with its tag, its events cited at the file's lines; `log` is then empty. The
  // first holds the file's bytes and problems.
  std::vector<ParsedFile> tagged;
  std::string tag;
};

// A Flight Recorder dump's bytes read into a ParsedFile (LoadIncident's and a growing
// directory's alike): `rel` names it in problems, `index` is its file index. A file of more
// than kMaxFlightRecorderBytes (`size`) is refused unread.
ParsedFile ReadDumpBytes(std::string_view bytes, std::uint64_t size, std::string_view rel,
                         std::uint32_t index);

// A file of NCCL RAS reports read into a ParsedFile (as ReadDumpBytes): `text` is the whole
// file. A file of more than kMaxNcclRasBytes (`size`) is refused unread.
ParsedFile ReadRasBytes(std::string_view text, std::uint64_t size, std::string_view rel,
                        std::uint32_t index);

// The Incident of files already parsed, `parsed[i]` being `listing.files[i]`'s: what
// LoadIncident does once it has parsed every file (its events merged in file order, then
// resolved). The same errors as LoadIncident when no file is readable text.
Result<Incident> AssembleIncident(Listing&& listing, std::vector<ParsedFile>&& parsed, int threads);

}  // namespace denpex::engine
