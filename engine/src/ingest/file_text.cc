#include "ingest/file_text.h"

#include <fcntl.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include "denpex/common/unique_fd.h"
#include "ingest/chunks.h"
#include "ingest/compressed.h"
#include "ingest/json_logs.h"
#include "ingest/sigbus_guard.h"

namespace denpex::engine {
namespace {

// Smaller files are read: a mapping costs more than it saves, and a job with 131k rank files
// would otherwise hold more mappings than vm.max_map_count allows.
constexpr std::size_t kMapThreshold = 64 * 1024;
constexpr std::size_t kBinaryProbeBytes = 8 * 1024;

std::atomic<MappedHook> g_mapped_hook{nullptr};

Status Errno(const std::filesystem::path& path, const char* what) {
  return Status::IoError(path.string() + ": cannot " + what + " (" + std::strerror(errno) + ")");
}

// `name` relative to the open directory `dir` (AT_FDCWD: as a path).
UniqueFd OpenReadOnly(int dir, const char* name) {
  return UniqueFd(::openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
}

// Up to `size` bytes of `fd` from `offset` (fewer when the file is shorter now).
Result<std::vector<char>> ReadAll(int fd, std::size_t size, const std::filesystem::path& path) {
  std::vector<char> bytes(size);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, bytes.data() + got, size - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "read");
    if (n == 0) break;  // the file shrank while we read it
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

Compression CompressionOfFile(int fd) {
  char head[6];
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  return n > 0 ? CompressionOf(std::string_view(head, static_cast<std::size_t>(n))) : Compression::kNone;
}

// A file's whole lines in pieces of kPiece bytes, more for a line longer than that, read in order
// from its start; the last piece ends with the file (a last line without its newline too). Each
// piece owns its bytes: it may be decoded on another thread while the next is read.
class LinePieces {
 public:
  static constexpr std::size_t kPiece = std::size_t{4} << 20;
  struct Piece {
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0;
    std::string_view view() const { return {bytes.get(), size}; }
  };
  explicit LinePieces(int fd) : fd_(fd) {}
  // The next piece; false at the end, or on a read error (error() says which).
  bool Next(Piece* p) {
    if (end_) return false;
    std::size_t capacity = carry_.size() + kPiece;
    p->bytes = std::make_unique_for_overwrite<char[]>(capacity);
    std::memcpy(p->bytes.get(), carry_.data(), carry_.size());
    p->size = carry_.size();
    std::size_t whole = 0;  // the piece's bytes up to its last newline
    while (!end_) {
      if (p->size == capacity) {  // a line longer than the piece
        auto larger = std::make_unique_for_overwrite<char[]>(capacity * 2);
        std::memcpy(larger.get(), p->bytes.get(), p->size);
        p->bytes = std::move(larger);
        capacity *= 2;
      }
      const ssize_t n =
          ::pread(fd_, p->bytes.get() + p->size, capacity - p->size, static_cast<off_t>(at_));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
        end_ = true;
        return false;
      }
      end_ = n == 0;
      at_ += static_cast<std::uint64_t>(n);
      p->size += static_cast<std::size_t>(n);
      if (const void* nl = ::memrchr(p->bytes.get(), '\n', p->size)) {
        whole = static_cast<std::size_t>(static_cast<const char*>(nl) - p->bytes.get()) + 1;
        if (p->size == capacity || end_) break;
      }
    }
    if (end_) whole = p->size;
    carry_.assign(p->bytes.get() + whole, p->size - whole);
    p->size = whole;
    return true;
  }
  int error() const { return error_; }

 private:
  int fd_;
  std::uint64_t at_ = 0;
  bool end_ = false;
  int error_ = 0;
  std::string carry_;  // the bytes after the last piece's last newline
};

// A plain file of JSON records (ingest/json_logs.h) read whole: its pieces read in order, decoded
// in parallel, appended in order (tbb's pipeline, a few pieces in flight): the decode, ~1 GB/s on
// one core, runs on every core, and the raw bytes are never held whole.
Result<JsonLogText> ReadJsonLogWhole(int fd, std::size_t size, JsonLog kind,
                                     const std::filesystem::path& path) {
  struct Item {
    LinePieces::Piece piece;
    JsonLogText decoded;
  };
  JsonLogText out;
  out.text.reserve(size + 64);
  AdviseHugePages(out.text.data(), out.text.capacity());
  LinePieces pieces(fd);
  tbb::parallel_pipeline(
      4, tbb::make_filter<void, std::shared_ptr<Item>>(tbb::filter_mode::serial_in_order,
                                                       [&](tbb::flow_control& fc) {
                                                         auto item = std::make_shared<Item>();
                                                         if (!pieces.Next(&item->piece)) {
                                                           fc.stop();
                                                           return std::shared_ptr<Item>();
                                                         }
                                                         return item;
                                                       }) &
             tbb::make_filter<std::shared_ptr<Item>, std::shared_ptr<Item>>(
                 tbb::filter_mode::parallel,
                 [kind](std::shared_ptr<Item> item) {
                   item->decoded.text.reserve(item->piece.size + 64);
                   DecodeJsonLog(item->piece.view(), kind, std::string::npos, &item->decoded);
                   item->piece.bytes.reset();
                   return item;
                 }) &
             tbb::make_filter<std::shared_ptr<Item>, void>(
                 tbb::filter_mode::serial_in_order, [&](std::shared_ptr<Item> item) {
                   out.text.insert(out.text.end(), item->decoded.text.begin(),
                                   item->decoded.text.end());
                   out.records += item->decoded.records;
                   out.other_lines += item->decoded.other_lines;
                   out.extra_lines += item->decoded.extra_lines;
                 }));
  if (pieces.error() != 0) {
    errno = pieces.error();
    return Errno(path, "read");
  }
  return out;
}

FileText::Identity IdentityOf(const struct stat& st) {
  return {.dev = static_cast<std::uint64_t>(st.st_dev),
          .ino = static_cast<std::uint64_t>(st.st_ino),
          .size = static_cast<std::uint64_t>(st.st_size),
          .mtime_sec = st.st_mtim.tv_sec,
          .mtime_nsec = st.st_mtim.tv_nsec};
}

// A plain file of JSON records read whole: an array of records (JsonLog::kShipperArray, decoded
// whole: its records are put in time order) or one record a line (ReadJsonLogWhole).
Result<JsonLogText> ReadJsonLog(int fd, std::size_t size, JsonLog kind,
                                const std::filesystem::path& path) {
  if (kind != JsonLog::kShipperArray) return ReadJsonLogWhole(fd, size, kind, path);
  auto bytes = ReadAll(fd, size, path);
  if (!bytes.ok()) return bytes.status();
  return DecodeJsonLog(std::string_view(bytes->data(), bytes->size()), kind);
}

// The start of a plain file of JSON records, decoded up to `limit` bytes of text (a head), its
// pieces read as ReadJsonLogWhole reads them, in turn.
Result<JsonLogText> ReadJsonLogHead(int fd, JsonLog kind, const std::filesystem::path& path,
                                    std::size_t limit) {
  JsonLogText decoded;
  LinePieces pieces(fd);
  for (LinePieces::Piece p; decoded.text.size() < limit && pieces.Next(&p);)
    DecodeJsonLog(p.view(), kind, limit, &decoded);
  if (pieces.error() != 0) {
    errno = pieces.error();
    return Errno(path, "read");
  }
  return decoded;
}

}  // namespace

Result<FileText> FileText::Open(const std::filesystem::path& path) {
  return OpenAt(AT_FDCWD, path.c_str(), path);
}

Result<FileText> FileText::OpenAt(int dir, const char* name, const std::filesystem::path& path) {
  UniqueFd fd = OpenReadOnly(dir, name);
  if (fd.get() < 0) return Errno(path, "open");
  // Its first kMapThreshold bytes are read before anything else is asked of it: a read that
  // returns fewer reached the end of a regular file, which is then read whole, and its first
  // bytes say whether it is compressed (one read, no fstat: the per-file cost of 16k kernel logs,
  // docs/benchmarks.md). A larger one is stat'ed and mapped; read whole only when it is
  // compressed or cannot be mapped safely. An empty or failed read is told apart by an fstat: an
  // empty file, or not a regular file (a directory, a FIFO).
  thread_local const std::unique_ptr<char[]> head =
      std::make_unique_for_overwrite<char[]>(kMapThreshold);
  ssize_t got;
  do {
    got = ::pread(fd.get(), head.get(), kMapThreshold, 0);
  } while (got < 0 && errno == EINTR);
  const int read_error = got < 0 ? errno : 0;
  FileText::Identity identity;
  std::size_t size = got > 0 ? static_cast<std::size_t>(got) : 0;
  if (got <= 0 || size == kMapThreshold) {
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Errno(path, "stat");
    if (!S_ISREG(st.st_mode)) return Status::IoError(path.string() + ": not a regular file");
    if (read_error != 0) {
      errno = read_error;
      return Errno(path, "read");
    }
    if (size == kMapThreshold) size = std::max(size, static_cast<std::size_t>(st.st_size));
    identity = IdentityOf(st);
  }
  const Compression compression =
      CompressionOf(std::string_view(head.get(), std::min<std::size_t>(size, 6)));
  FileText text;
  text.identity_ = identity;
  if (size < kMapThreshold) {
    text.Take(std::vector<char>(head.get(), head.get() + size), compression);
    return text;
  }
  if (const JsonLog kind = compression == Compression::kNone
                               ? SniffJsonLog(std::string_view(head.get(), kMapThreshold))
                               : JsonLog::kNone;
      kind != JsonLog::kNone) {
    auto decoded = ReadJsonLog(fd.get(), size, kind, path);
    if (!decoded.ok()) return decoded.status();
    text.TakeDecoded(std::move(*decoded), kind);
    return text;
  }
  if (compression == Compression::kNone) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    const int guard = p != MAP_FAILED ? GuardMapping(p, size) : -1;
    if (guard >= 0) {
      ::madvise(p, size, MADV_SEQUENTIAL);
      text.map_ = p;
      text.data_ = static_cast<const char*>(p);
      text.size_ = size;
      text.fd_ = fd.Release();
      text.guard_ = guard;
      if (const MappedHook hook = g_mapped_hook.load()) hook(path);
      return text;
    }
    if (p != MAP_FAILED) ::munmap(p, size);  // unguarded, a truncation would kill us: read it
  }
  auto read = ReadAll(fd.get(), size, path);
  if (!read.ok()) return read.status();
  text.Take(std::move(*read), compression);
  return text;
}

void FileText::Take(std::vector<char> bytes, Compression compression) {
  if (compression != Compression::kNone) {
    const std::size_t cap = InflateCap(std::string_view(bytes.data(), bytes.size()));
    Inflated inflated = Inflate(std::string_view(bytes.data(), bytes.size()), compression, cap);
    const std::string kind(CompressionName(compression));
    if (!inflated.error.empty()) {
      problem_ = "compressed (" + kind + ") but " + inflated.error + ": read the " +
                 std::to_string(inflated.text.size()) + " bytes of text before the break";
    } else if (inflated.capped) {
      problem_ = "compressed (" + kind + "): its text is read up to " + std::to_string(cap) +
                 " bytes (" + std::to_string(bytes.size()) +
                 " compressed bytes); the rest is not read";
    }
    compression_ = kind;
    buffer_ = std::move(inflated.text);
  } else {
    buffer_ = std::move(bytes);
  }
  data_ = buffer_.data();
  size_ = buffer_.size();
  if (const JsonLog kind = SniffJsonLog(view().substr(0, kMapThreshold)); kind != JsonLog::kNone)
    TakeDecoded(DecodeJsonLog(view(), kind), kind);
}

void FileText::TakeDecoded(JsonLogText decoded, JsonLog kind) {
  const std::string problem = JsonLogProblem(decoded, kind);
  if (!problem.empty()) problem_ += (problem_.empty() ? "" : "; ") + problem;
  encoding_ = JsonLogName(kind);
  ties_unordered_ = decoded.ties_unordered;
  buffer_ = std::move(decoded.text);
  data_ = buffer_.data();
  size_ = buffer_.size();
}

void FileText::Release(std::uint64_t offset, std::uint64_t length) const {
  if (!map_ || offset >= size_) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t begin = (offset + page - 1) / page * page;  // whole pages inside the range only
  const std::size_t end = std::min<std::uint64_t>(offset + length, size_) / page * page;
  if (end > begin) ::madvise(static_cast<char*>(map_) + begin, end - begin, MADV_DONTNEED);
}

// MADV_POPULATE_READ (Linux 5.14) maps the range's pages from the page cache in one call: no
// fault per 64 KiB of fault-around, each of which costs an exception (dear in a VM: half the
// system time of a 2 GB parse there). An older kernel says EINVAL and the faults map them.
void FileText::Fetch(std::uint64_t offset, std::uint64_t length) const {
#ifdef MADV_POPULATE_READ
  if (!map_ || offset >= size_) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t begin = offset / page * page;
  const std::size_t end = std::min<std::uint64_t>(offset + length, size_);
  if (end > begin) ::madvise(static_cast<char*>(map_) + begin, end - begin, MADV_POPULATE_READ);
#else
  (void)offset, (void)length;
#endif
}

bool FileText::Copy(std::uint64_t offset, std::size_t length, char* into) const {
  if (!map_ || offset > size_ || length > size_ - offset) return false;
  for (std::size_t got = 0; got < length;) {
    const ssize_t n = ::pread(fd_, into + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // an error, or the file is shorter now: the mapping says how
    got += static_cast<std::size_t>(n);
  }
  return true;
}

FileText::FileText(FileText&& other) noexcept { *this = std::move(other); }

FileText& FileText::operator=(FileText&& other) noexcept {
  if (this == &other) return *this;
  Release();
  map_ = std::exchange(other.map_, nullptr);
  fd_ = std::exchange(other.fd_, -1);
  guard_ = std::exchange(other.guard_, -1);
  buffer_ = std::move(other.buffer_);
  compression_ = std::move(other.compression_);
  encoding_ = std::move(other.encoding_);
  identity_ = other.identity_;
  problem_ = std::move(other.problem_);
  ties_unordered_ = other.ties_unordered_;
  size_ = std::exchange(other.size_, 0);
  data_ = map_ ? static_cast<const char*>(map_) : buffer_.data();
  other.data_ = nullptr;
  return *this;
}

FileText::~FileText() { Release(); }

void FileText::Release() {
  UnguardMapping(guard_);
  if (map_) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
  guard_ = -1;
  fd_ = -1;
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  buffer_.clear();
}

std::size_t FileText::LeadingHole() const {
  if (size_ == 0 || data_[0] != '\0') return 0;
  std::size_t i = 0;
  for (std::uint64_t word = 0; i + 8 <= size_; i += 8) {  // a hole is pages of zeros: 8 bytes a step
    std::memcpy(&word, data_ + i, 8);
    if (word != 0) break;
  }
  while (i < size_ && data_[i] == '\0') ++i;
  return i < Readable() ? i : 0;
}

bool FileText::LooksBinary() const {
  if (size_ == 0) return false;
  const std::size_t from = LeadingHole();
  const void* nul = std::memchr(data_ + from, '\0', std::min(size_ - from, kBinaryProbeBytes));
  return nul != nullptr && static_cast<std::size_t>(static_cast<const char*>(nul) - data_) < Readable();
}

std::size_t FileText::Readable() const {
  if (!map_) return size_;
  const std::size_t fault = std::min(FirstFaultOffset(guard_), size_);
  if (fault == size_ && (size_ == 0 || data_[size_ - 1] != '\0')) return size_;  // the common case
  std::size_t cut = fault;
  struct stat st;
  if (::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < cut) return static_cast<std::size_t>(st.st_size);
  if (cut < size_) {  // it grew again: the page before the fault holds the old end, then NUL bytes
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t floor = cut > 0 ? (cut - 1) / page * page : 0;
    while (cut > floor && data_[cut - 1] == '\0') --cut;
  }
  return cut;
}

bool FileText::Shrank() const {
  struct stat st;
  return map_ != nullptr && ::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < size_;
}

namespace {

// The lines of `view` through `cut`, counted from the line that starts at `from.offset` (number
// `from.line`, or the text's start when that is 0).
std::int64_t LinesTo(std::string_view view, std::size_t cut, LineSpan from) {
  if (cut == 0) return 0;
  const std::size_t begin = from.line > 0 ? from.offset : 0;
  const std::int64_t before = from.line > 0 ? from.line - 1 : 0;
  const auto newlines = std::count(view.begin() + static_cast<std::ptrdiff_t>(begin),
                                   view.begin() + static_cast<std::ptrdiff_t>(cut), '\n');
  return before + newlines + (view[cut - 1] != '\n' ? 1 : 0);
}

// The last non-empty line of the text's first `lines` lines, which end at `cut`.
LineSpan LastLineTo(std::string_view view, std::size_t cut, std::int64_t lines) {
  std::size_t end = cut > 0 && view[cut - 1] == '\n' ? cut - 1 : cut;  // line `lines` ends here
  for (std::int64_t number = lines; number > 0; --number) {
    const std::size_t nl = end == 0 ? std::string_view::npos : view.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    std::size_t length = end - begin;
    if (length > 0 && view[end - 1] == '\r') --length;
    if (length > 0 && length <= kMaxLineBytes) {
      return {static_cast<std::uint32_t>(number), begin, static_cast<std::uint32_t>(length)};
    }
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  return {};
}

}  // namespace

std::string KeepReadable(const FileText& text, std::string_view rel, ParsedLog* log, bool* ends_cut) {
  const std::string_view view = text.view();
  const std::size_t cut = text.Readable();
  if (cut >= view.size()) return {};
  std::size_t dropped = 0;
  std::erase_if(log->events, [&](const Event& e) {
    if (e.offset + e.length <= cut) return false;
    ++dropped;
    log->untimed -= e.clock == Clock::kNone || e.time_borrowed ? 1 : 0;
    return true;
  });
  LineSpan from;  // the latest line known by number before the cut (events are not all in line
                  // order: progress events are placed apart)
  for (const Event& e : log->events) {
    if (e.line > from.line) from = {e.line, e.offset, e.length};
  }
  if (log->last_line.line > from.line && log->last_line.offset + log->last_line.length <= cut) from = log->last_line;
  log->lines = LinesTo(view, cut, from);
  log->last_line = LastLineTo(view, cut, log->lines);
  *ends_cut = cut > 0 && view[cut - 1] != '\n';
  const std::string size = std::to_string(view.size()), to = std::to_string(cut);
  const bool shrank = text.Shrank();
  return std::string(rel) +
         (shrank ? ": shrank from " + size + " to " + to + " bytes while it was read (truncated or rotated by a job still writing it?)"
                 : ": could not be read past byte " + to + " of " + size +
                       " (a read error, or it was truncated and written again while it was read)") +
         ": read to line " + std::to_string(log->lines) + "; the " + std::to_string(view.size() - cut) +
         " bytes after it are not read as its lines (" + std::to_string(dropped) + " events there dropped); " +
         (shrank ? "rerun once the job has stopped writing it" : "rerun once the file reads whole");
}

void SetMappedHookForTest(MappedHook hook) { g_mapped_hook.store(hook); }

namespace {

// The text of one file that had to be produced whole (inflated, or decoded from Docker's
// records), kept for ReadSpan: a report cites several lines of a file, and each would otherwise
// inflate or decode it again (the 16k-rank incident's srun log as Docker's records, 409 MB: ~0.5
// s a citation). The largest text handed over (KeepForQuotes) or produced by ReadSpan is kept, the
// log a report most likely cites (a kernel log's citation between two of the console's does not
// evict it); each incident loaded starts afresh (ForgetKeptText), so a process that diagnoses many
// (`denpex eval`) holds one incident's text at a time.
struct ProducedText {
  FileText::Identity id;
  std::shared_ptr<const std::vector<char>> text;
};
std::mutex g_produced_mu;
ProducedText g_produced;

// Keeps `text` of file `id` unless a larger text of another file is kept.
void Keep(const FileText::Identity& id, std::vector<char>&& text) {
  const std::lock_guard lock(g_produced_mu);
  if (g_produced.text && !(g_produced.id == id) && g_produced.text->size() > text.size()) return;
  g_produced = {.id = id, .text = std::make_shared<const std::vector<char>>(std::move(text))};
}

std::string SpanOf(const std::vector<char>& text, std::uint64_t offset, std::uint32_t length) {
  if (offset >= text.size()) return std::string();
  return std::string(text.data() + offset, std::min<std::size_t>(length, text.size() - offset));
}

}  // namespace

void ForgetKeptText() {
  const std::lock_guard lock(g_produced_mu);
  g_produced = {};
}

void KeepForQuotes(FileText&& text) {
  if (text.map_ != nullptr || text.identity_.size == 0 ||
      (text.compression_.empty() && text.encoding_.empty()))
    return;
  std::vector<char> bytes = std::move(text.buffer_);
  text.Release();
  Keep(text.identity_, std::move(bytes));
}

Result<std::string> ReadSpan(const std::filesystem::path& path, std::uint64_t offset,
                             std::uint32_t length) {
  UniqueFd fd = OpenReadOnly(AT_FDCWD, path.c_str());
  if (fd.get() < 0) return Errno(path, "open");
  // A compressed file or JSON records are cited in their text (FileText::Open). A head (the
  // first kMapThreshold bytes) is produced alone; a span further on, the whole text, kept.
  const Compression c = CompressionOfFile(fd.get());
  const std::uint64_t end = offset + length;
  JsonLog kind = JsonLog::kNone;
  if (c == Compression::kNone) {
    char head[kMapThreshold];
    ssize_t n;
    do {
      n = ::pread(fd.get(), head, sizeof head, 0);
    } while (n < 0 && errno == EINTR);
    if (n > 0) kind = SniffJsonLog(std::string_view(head, static_cast<std::size_t>(n)));
  }
  if (c != Compression::kNone || kind != JsonLog::kNone) {
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Errno(path, "stat");
    const auto size = static_cast<std::size_t>(st.st_size);
    const FileText::Identity id = IdentityOf(st);
    {
      const std::lock_guard lock(g_produced_mu);
      if (g_produced.text && g_produced.id == id) return SpanOf(*g_produced.text, offset, length);
    }
    std::vector<char> text;
    if (kind != JsonLog::kNone) {
      const bool head = end <= kMapThreshold && kind != JsonLog::kShipperArray;
      auto decoded = head ? ReadJsonLogHead(fd.get(), kind, path, end)
                          : ReadJsonLog(fd.get(), size, kind, path);
      if (!decoded.ok()) return decoded.status();
      if (head) return SpanOf(decoded->text, offset, length);
      text = std::move(decoded->text);
    } else {
      auto bytes = ReadAll(fd.get(), size, path);
      if (!bytes.ok()) return bytes.status();
      const std::string_view data(bytes->data(), bytes->size());
      const std::size_t cap = InflateCap(data);
      if (end <= kMapThreshold) {
        text = Inflate(data, c, std::min<std::size_t>(kMapThreshold, cap)).text;
        if (SniffJsonLog(std::string_view(text.data(), text.size())) == JsonLog::kNone)
          return SpanOf(text, offset, length);
      }
      text = Inflate(data, c, cap).text;
      const std::string_view whole(text.data(), text.size());
      if (const JsonLog inner = SniffJsonLog(whole.substr(0, kMapThreshold));
          inner != JsonLog::kNone)
        text = DecodeJsonLog(whole, inner).text;
    }
    std::string span = SpanOf(text, offset, length);
    Keep(id, std::move(text));
    return span;
  }
  std::string out(length, '\0');
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = ::pread(fd.get(), out.data() + got, length - got,
                              static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "read");
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace denpex::engine
