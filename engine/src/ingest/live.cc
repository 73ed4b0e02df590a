#include "ingest/live.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "denpex/common/unique_fd.h"
#include "ingest/compressed.h"
#include "ingest/file_text.h"
#include "ingest/flight_recorder.h"
#include "ingest/json_logs.h"
#include "ingest/load.h"
#include "ingest/nccl_ras.h"

namespace denpex::engine {
namespace {

// A growing file is read this much at a time; what a refresh reads of one file is unbounded.
constexpr std::size_t kReadBlock = 4 << 20;
// Its first bytes hold a NUL: not a text log (as FileText::LooksBinary probes).
constexpr std::size_t kBinaryProbe = 8 * 1024;

}  // namespace

FileContext LiveIncident::ContextOf(const SourceFile& src) const {
  return FileContext{.name_rank = src.name_rank,
                     .local_rank = src.local_rank,
                     .kernel = src.kernel,
                     .texts = texts_};
}

Result<LiveIncident> LiveIncident::Open(const std::filesystem::path& dir,
                                        const std::filesystem::path& skip, Texts texts) {
  LiveIncident live;
  live.skip_ = skip;
  live.texts_ = texts;
  auto listing = ListIncident(dir, skip);
  if (!listing.ok()) return listing.status();
  live.root_ = listing->root;
  return live;
}

Status LiveIncident::List() {
  auto listing = ListIncident(root_, skip_);
  if (!listing.ok()) return listing.status();
  problems_ = std::move(listing->problems);
  for (SourceFile& src : listing->files) {
    auto it = files_.find(src.rel);
    if (it != files_.end()) continue;
    File f;
    f.log = GrowingLog(ContextOf(src));
    f.src = std::move(src);
    files_.emplace(f.src.rel, std::move(f));
  }
  return Status::Ok();
}

void LiveIncident::Read(File* f) {
  struct stat st;
  if (f->read > 0 && ::lstat(f->src.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uint64_t>(st.st_size) == (f->compressed ? f->compressed_size : f->read) &&
      st.st_ino == f->inode && st.st_dev == f->device) {
    return;  // unchanged: one system call (a whole look at 16k files makes 16k of them)
  }
  const UniqueFd fd(::open(f->src.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) {
    if (f->read == 0) f->problem = std::string("unreadable: ") + std::strerror(errno);
    return;  // gone after it was read: what was read stays
  }
  if (!S_ISREG(st.st_mode)) return;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const bool replaced = f->read > 0 && (f->inode != st.st_ino || f->device != st.st_dev);
  if (replaced || size < f->read ||
      (f->compressed && size != f->compressed_size)) {  // read again from its start
    bytes_ -= f->read;
    held_ -= Held(*f);
    f->log = GrowingLog(ContextOf(f->src));
    f->tagged.reset();
    f->read = 0;
    f->problem.clear();
    f->dump_read.reset();
    f->decoded = JsonLogText();
    f->inflated.clear();
  }
  f->inode = st.st_ino;
  f->device = st.st_dev;
  if (size == f->read || !f->problem.empty()) return;
  if (f->read == 0) {
    char head[256] = {};
    const ssize_t n = ::pread(fd.get(), head, sizeof head, 0);
    const std::string_view h(head, n > 0 ? static_cast<std::size_t>(n) : 0);
    f->compressed = CompressionOf(h.substr(0, 8)) != Compression::kNone;
    // A dump shows in its first bytes (its JSON form is checked again once read whole).
    f->dump = SniffFlightRecorder(h, /*whole=*/false) != FrForm::kNone;
    bool undecided = false;
    f->ras = !f->dump && SniffNcclRas(h, &undecided) != RasForm::kNone;
    // A poller's file that holds its first stamp line only: what it is shows with its next.
    if (undecided && !f->dump && !f->compressed && h.size() < sizeof head) return;
  }
  if ((f->dump || f->ras) && ReadDump(f, fd.get(), size)) return;
  if (f->compressed) {  // read whole, decompressed (a finished piece of a rotated log)
    auto text = FileText::Open(f->src.path);
    if (!text.ok() || text->LooksBinary()) {
      f->problem = text.ok() ? "binary file (NUL bytes in its text), skipped"
                             : "unreadable: " + text.status().message();
      return;
    }
    f->inflated = text->problem();
    std::string whole(text->view());
    if (!whole.empty() && whole.back() != '\n') whole.push_back('\n');
    Feed(f, whole, false);
    signals_ += f->log.signals();
    f->read = size;
    f->compressed_size = size;
    bytes_ += size;
    return;
  }
  std::string buffer;
  for (std::uint64_t at = f->read; at < size;) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kReadBlock, size - at));
    const std::size_t old = buffer.size();
    buffer.resize(old + want);
    const ssize_t n = ::pread(fd.get(), buffer.data() + old, want, static_cast<off_t>(at));
    if (n <= 0) {
      buffer.resize(old);
      break;
    }
    buffer.resize(old + static_cast<std::size_t>(n));
    at += static_cast<std::uint64_t>(n);
  }
  if (f->read == 0 &&
      std::memchr(buffer.data(), '\0', std::min(buffer.size(), kBinaryProbe)) != nullptr) {
    f->problem = "binary file (NUL bytes), skipped";
    return;
  }
  // (a file's JSON records are known by its first whole lines: a last line cut short is not read)
  if (f->read == 0) f->json = SniffJsonLog(buffer);
  std::size_t nl = buffer.rfind('\n');
  if (f->json == JsonLog::kShipperArray && f->read == 0) {
    // an export's array (written once) is read when it is one whole JSON value, with or without
    // a final newline (curl's search response): its records are put in time order
    if (!WholeJsonValue(buffer)) return;
    nl = buffer.size() - 1;
  }
  if (nl == std::string::npos) return;  // no whole line yet
  const std::uint64_t signals = f->log.signals();
  const std::size_t held = Held(*f);
  const std::string_view lines = std::string_view(buffer).substr(0, nl + 1);
  if (f->json != JsonLog::kNone) {
    const JsonLogText decoded = DecodeJsonLog(lines, f->json);
    f->decoded.records += decoded.records;
    f->decoded.other_lines += decoded.other_lines;
    f->decoded.extra_lines += decoded.extra_lines;
    f->decoded.unordered += decoded.unordered;
    f->decoded.ties_unordered |= decoded.ties_unordered;
    Feed(f, std::string_view(decoded.text.data(), decoded.text.size()), held_ < kHeldBytes);
  } else {
    Feed(f, lines, held_ < kHeldBytes);
  }
  signals_ += f->log.signals() - signals;
  held_ = held_ - held + Held(*f);
  f->read += nl + 1;
  bytes_ += nl + 1;
}

std::size_t LiveIncident::Held(const File& f) {
  std::size_t held = f.log.held();
  if (f.tagged != nullptr) {
    for (const GrowingLog& log : f.tagged->logs) held += log.held();
  }
  return held;
}

void LiveIncident::Feed(File* f, std::string_view text, bool may_hold) {
  const std::uint64_t offset = f->log.bytes();  // where `text` starts in the file's text
  f->log.Add(text, may_hold);
  if (offset == 0) {
    const PrefixPolicy policy = SniffPrefixes(text);
    if (MayRelayStreams(text, policy))
      f->tagged.reset(new File::Tagged{StreamSplitter(policy), {}});
  }
  if (f->tagged == nullptr) return;
  StreamSplitter& splitter = f->tagged->splitter;
  splitter.Add(text, offset);
  std::vector<GrowingLog>& logs = f->tagged->logs;
  for (std::size_t k = 0; k < splitter.streams().size(); ++k) {
    TaggedStream& stream = splitter.streams()[k];
    if (k == logs.size()) {
      FileContext ctx = ContextOf(f->src);
      ctx.ties_unordered = f->decoded.ties_unordered;  // an export's shuffled array (read once)
      logs.emplace_back(ctx);
    }
    if (stream.text.empty()) continue;
    logs[k].Add(stream.text, may_hold);
    stream.dropped += stream.text.size();
    stream.text.clear();
  }
}

// A dump is read whole each time it changes (torch writes it once, when the watchdog fires; a
// read while it is being written is cut short and read again at its next change); so is a file
// of RAS reports (a poller appends one at a time; a report cut short is read whole next time).
bool LiveIncident::ReadDump(File* f, int fd, std::uint64_t size) {
  std::string bytes;
  if (size <= (f->ras ? kMaxNcclRasBytes : kMaxFlightRecorderBytes)) {
    bytes.resize(static_cast<std::size_t>(size));
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n =
          ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    bytes.resize(got);
    if (!f->ras && !bytes.empty() && bytes[0] != '\x80' &&
        SniffFlightRecorder(bytes) == FrForm::kNone) {
      f->dump = false;  // a JSON log whose first key only looked like a dump's: read as text
      return false;
    }
  }
  bytes_ -= f->read;
  f->dump_read =
      std::make_shared<const ParsedFile>(f->ras ? ReadRasBytes(bytes, size, f->src.rel, 0)
                                                : ReadDumpBytes(bytes, size, f->src.rel, 0));
  f->read = size;
  bytes_ += size;
  return true;
}

Result<std::uint64_t> LiveIncident::Refresh(const std::vector<std::string>* only) {
  const std::uint64_t before = bytes_;
  const bool listed =
      only == nullptr || std::any_of(only->begin(), only->end(),
                                     [&](const std::string& rel) { return !files_.contains(rel); });
  if (listed) {
    if (Status s = List(); !s.ok()) return s;
  }
  if (only == nullptr) {
    for (auto& [rel, f] : files_) Read(&f);
  } else {
    for (const std::string& rel : *only) {
      auto it = files_.find(rel);
      if (it != files_.end()) Read(&it->second);
    }
  }
  return bytes_ - before;
}

Result<Incident> LiveIncident::Assemble(int threads) const {
  if (files_.empty()) {
    return Status::InvalidInput("no log files found under " + root_.string() +
                                ": pass the directory that holds the job's logs");
  }
  Listing listing{.root = root_, .files = {}, .problems = problems_};
  std::vector<ParsedFile> parsed;
  parsed.reserve(files_.size());
  for (const auto& [rel, f] : files_) {
    const auto index = static_cast<std::uint32_t>(listing.files.size());
    listing.files.push_back(f.src);
    // what a read of the finished file says of its text (load.cc's `inflate`)
    std::string inflated = f.inflated;
    if (const std::string decoded =
            f.json != JsonLog::kNone ? JsonLogProblem(f.decoded, f.json) : "";
        !decoded.empty())
      inflated += (inflated.empty() ? "" : "; ") + decoded;
    if (!inflated.empty()) inflated = rel + ": " + inflated;
    ParsedFile p;
    if (f.dump_read != nullptr) {
      p.flight_recorder = f.dump_read->flight_recorder;
      p.nccl_ras = f.dump_read->nccl_ras;
      p.notes = f.dump_read->notes;
      p.problem = f.dump_read->problem;
      p.rankless = f.dump_read->rankless;
      p.bytes = f.dump_read->bytes;
      p.log.events = f.dump_read->log.events;
      p.log.strings = StringTable(f.dump_read->log.strings);
      for (Event& e : p.log.events) e.file = index;
    } else if (!f.problem.empty()) {
      p.problem = rel + ": " + f.problem;
    } else if (f.tagged != nullptr && f.tagged->splitter.Splits()) {  // a file per stream
      const std::vector<TaggedStream>& streams = f.tagged->splitter.streams();
      listing.files.pop_back();
      for (std::size_t k = 0; k < streams.size(); ++k) {
        const auto at = static_cast<std::uint32_t>(listing.files.size());
        listing.files.push_back(f.src);
        listing.files.back().tag = streams[k].tag;
        listing.files.back().tag_index = static_cast<std::int32_t>(k);
        ParsedFile t{.log = f.tagged->logs[k].Snapshot(),
                     .bytes = k == 0 ? static_cast<std::int64_t>(f.read) : 0,
                     .inflate = k == 0 ? inflated : std::string()};
        CiteAtFile(streams[k], &t.log);
        for (Event& e : t.log.events) e.file = at;
        parsed.push_back(std::move(t));
      }
      continue;
    } else {
      p.log = f.log.Snapshot();
      for (Event& e : p.log.events) e.file = index;
      p.bytes = static_cast<std::int64_t>(f.read);
      p.inflate = std::move(inflated);
    }
    parsed.push_back(std::move(p));
  }
  return AssembleIncident(std::move(listing), std::move(parsed), threads);
}

}  // namespace denpex::engine
