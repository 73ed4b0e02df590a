// LiveIncident: an incident directory followed while a job writes it (`denpex watch`). Each file
// is a GrowingLog fed only the bytes it gained since the last Refresh (whole lines: a line still
// being written waits for its newline); Assemble gives the Incident of what is on disk so far,
// through the same merge and resolution as LoadIncident, so the analysis is the one `diagnose`
// runs. A file that shrank or was replaced (a new inode: rotated, truncated, rewritten) is read
// again from its start; a compressed file is read whole each time it changes. Small files are held
// whole (GrowingLog) up to kHeldBytes in all; past it, new files are parsed piece by piece from
// their first lines. Rotated pieces are read each as its own log (LoadIncident joins them into one
// stream). A file that relays several containers' tagged lines is read as its streams, as
// LoadIncident reads it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "incident/incident.h"
#include "ingest/chunks.h"
#include "ingest/json_logs.h"
#include "ingest/load.h"
#include "ingest/streams.h"
#include "ingest/walk.h"

namespace denpex::engine {

class LiveIncident {
 public:
  static constexpr std::size_t kHeldBytes = 64 << 20;

  // kNotFound / kInvalidInput as ListIncident. `skip`: a checkpoint directory inside `dir`.
  // `texts`: which texts the files' parses intern (parse/parse_log.h).
  static Result<LiveIncident> Open(const std::filesystem::path& dir,
                                   const std::filesystem::path& skip = {},
                                   Texts texts = Texts::kAll);

  // Lists the directory again and reads what each file gained. `only`: when not null, the files
  // to read (relative paths; the others are taken to be unchanged) and no listing, unless one of
  // them is new. Returns the bytes read.
  Result<std::uint64_t> Refresh(const std::vector<std::string>* only = nullptr);

  // The Incident of what has been read: the same errors as LoadIncident when nothing is readable.
  Result<Incident> Assemble(int threads) const;

  const std::filesystem::path& root() const { return root_; }
  std::uint64_t bytes() const { return bytes_; }
  // The events other than step lines read so far (GrowingLog::signals), summed over the files.
  std::uint64_t signals() const { return signals_; }

 private:
  struct File {
    SourceFile src;
    GrowingLog log{FileContext{}};
    std::uint64_t read = 0;  // bytes of the file fed to `log` (up to its last newline)
    std::uint64_t inode = 0, device = 0;
    bool compressed = false;
    std::uint64_t compressed_size = 0;  // its size when it was last read
    // JSON records (ingest/json_logs.h: Docker's, a journal's export), known by its first whole
    // lines: each piece's records decoded before `log` reads them (an array's once it is whole),
    // what was decoded counted in `decoded` (its text not kept) for what its reader says of them.
    JsonLog json = JsonLog::kNone;
    JsonLogText decoded;
    std::string inflated;  // what a compressed file's reader said of its text (FileText::problem)
    std::string problem;   // why its text is not read (binary, unreadable); empty when it is
    // A Flight Recorder dump (ingest/flight_recorder.h) or a file of NCCL RAS reports
    // (ingest/nccl_ras.h): read whole each time it changes, its events held here instead of
    // `log`.
    bool dump = false;
    bool ras = false;
    std::shared_ptr<const ParsedFile> dump_read;
    // A file that relays several containers' tagged lines (ingest/streams.h), known by its first
    // whole lines: its lines dealt to their streams as well, each a GrowingLog of its own, and read
    // as its streams while it is one to (StreamSplitter::Splits), else as `log`.
    struct Tagged {
      StreamSplitter splitter;
      std::vector<GrowingLog> logs;  // per stream of the splitter
    };
    std::unique_ptr<Tagged> tagged;
  };
  // Gives `f` its next text (whole lines; decoded, when its records are): `log`, and its streams'.
  void Feed(File* f, std::string_view text, bool may_hold);
  static std::size_t Held(const File& f);  // the text its GrowingLogs hold whole
  bool ReadDump(File* f, int fd, std::uint64_t size);
  FileContext ContextOf(const SourceFile& src) const;
  Status List();
  void Read(File* f);

  std::filesystem::path root_, skip_;
  Texts texts_ = Texts::kAll;
  std::map<std::string, File> files_;  // by relative path: the listing's order
  std::vector<std::string> problems_;  // the listing's
  std::uint64_t bytes_ = 0;
  std::uint64_t signals_ = 0;
  std::size_t held_ = 0;  // small files' text held whole (GrowingLog::held), summed
};

}  // namespace denpex::engine
