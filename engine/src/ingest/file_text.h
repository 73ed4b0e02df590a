// The bytes of one file: memory-mapped, or read into memory when the file is small. Opened
// read-only and without following a symbolic link.
//
// A file that changes while it is read. Only the length it had when it was opened is read: a
// log that grows meanwhile is read up to there (its later lines are not seen). A mapped file
// that shrinks (a live job's log truncated with `> file`, or rotated by copytruncate, while
// `denpex diagnose` reads it) would kill the process with SIGBUS at the first page past its new
// end; each mapping is guarded instead (ingest/sigbus_guard.h): such pages read as NUL bytes,
// Readable() says where the file's bytes end, and KeepReadable, after the parse, drops what was
// read past that cut and words the problem the report lists (a page the kernel cannot read, an
// I/O error, is handled the same way). A file read into memory is a snapshot of what read()
// returned, cut where it ended. A file that shrank and grew back past its old length before
// anything touched the gap is not detected (its bytes are a mix).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "ingest/compressed.h"
#include "ingest/json_logs.h"
#include "parse/parse_log.h"

namespace denpex::engine {

class FileText final : public ReadBehind {
 public:
  static Result<FileText> Open(const std::filesystem::path& path);
  // `name` relative to the open directory `dir` (a lookup of its own few components, not of a
  // whole absolute path: the per-file cost of 16k small logs); `path` names it in messages.
  static Result<FileText> OpenAt(int dir, const char* name, const std::filesystem::path& path);

  FileText(FileText&& other) noexcept;
  FileText& operator=(FileText&& other) noexcept;
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;
  ~FileText();

  std::string_view view() const { return {data_, size_}; }
  // A compressed file (ingest/compressed.h, known by its magic bytes) is read as its text,
  // decompressed into memory: "gzip", "xz", "zstd"; empty when the file is plain.
  const std::string& compression() const { return compression_; }
  // A file of JSON records (ingest/json_logs.h: Docker's json-file logs, a journal's JSON export;
  // known by its first lines, also inside a compressed file) is read as the lines they stand for:
  // "Docker JSON", "journal JSON"; empty when not.
  const std::string& encoding() const { return encoding_; }
  // What went wrong reading it: a compressed stream that broke or was capped; empty when none.
  const std::string& problem() const { return problem_; }
  // A decoded export's lines of one time stand in no known order (JsonLogText::ties_unordered).
  bool ties_unordered() const { return ties_unordered_; }
  // The NUL bytes the file starts with, when text follows them before Readable(): a hole left by
  // truncating a log (`> file`, copytruncate) while its writer, which had not opened it to
  // append, went on writing at its old offset (srun's `--open-mode=truncate` output, a shell
  // redirect). The text after the hole is the file's to read. 0: none, or nothing but NUL bytes.
  std::size_t LeadingHole() const;
  // True when the first bytes after LeadingHole() hold a NUL before Readable(): not a text log.
  bool LooksBinary() const;
  // The bytes of view() that are still the file's: view().size(), unless the mapped file shrank
  // while it was read; then its new length (or, when it grew again, the first page that was
  // read past its end, less the NUL bytes before it on that page). Past it the view reads NUL
  // bytes. No system call unless a page faulted past the end or the view ends with a NUL.
  std::size_t Readable() const;
  // True when the mapped file is now shorter than view() (one fstat). When Readable() is short
  // but the file is not, a page could not be read: an I/O error (a network file system), or the
  // file was truncated and written again past the page while it was read.
  bool Shrank() const;
  // Drops the mapped pages of [offset, offset + length) from this process once parsed, so a
  // 2 GB file never sits whole in its resident set (the page cache keeps them). No-op when read.
  void Release(std::uint64_t offset, std::uint64_t length) const override;
  void Fetch(std::uint64_t offset, std::uint64_t length) const override;
  // Which file this is (device, inode, size, modification time), known for a file of
  // kMapThreshold bytes or more (stat'ed as it is opened); all zero otherwise.
  struct Identity {
    std::uint64_t dev = 0, ino = 0, size = 0;
    std::int64_t mtime_sec = 0, mtime_nsec = 0;
    bool operator==(const Identity&) const = default;
  };
  const Identity& identity() const { return identity_; }
  friend void KeepForQuotes(FileText&& text);
  // A mapped file's bytes read with pread(2) (false for a file read into memory, or when the
  // file no longer holds every byte of the range).
  bool Copy(std::uint64_t offset, std::size_t length, char* into) const override;

 private:
  FileText() = default;
  void Release();
  // Holds `bytes` as its text, inflated first when `compression` says so, and decoded when it
  // is Docker's records.
  void Take(std::vector<char> bytes, Compression compression);
  void TakeDecoded(JsonLogText decoded, JsonLog kind);

  const char* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;  // non-null when mapped
  int fd_ = -1;          // kept open while mapped (Readable() asks for the file's length)
  int guard_ = -1;       // the mapping's slot in ingest/sigbus_guard.h, -1 when not guarded
  std::vector<char> buffer_;
  std::string compression_;
  std::string encoding_;
  Identity identity_;
  std::string problem_;
  bool ties_unordered_ = false;
};

// After `log` was parsed from `text`: when the file shrank while it was read, or a page of it
// could not be read (Readable() is below view().size()), drops the events on or past the cut (those bytes read as NUL, or are no
// longer in the file to be quoted), counts `log->lines` to the cut and makes `log->last_line`
// the last line before it, sets `*ends_cut` to whether the readable bytes end inside a line, and
// returns the problem line for `rel` (the file's path as the report names it). Returns "" and
// changes nothing when the file kept its length.
std::string KeepReadable(const FileText& text, std::string_view rel, ParsedLog* log, bool* ends_cut);

// Test seam: called by FileText::Open with each file's path once it is mapped (and guarded),
// before Open returns; a test truncates the file there to make it shrink under its mapping.
// nullptr (the default) for none.
using MappedHook = void (*)(const std::filesystem::path& path);
void SetMappedHookForTest(MappedHook hook);

// Hands a text that had to be produced (inflated, or decoded from Docker's records) over to
// ReadSpan, which then quotes the file's lines from it rather than producing it again (a report
// cites several lines of the largest log): one text is kept, the largest handed over or produced
// by ReadSpan. Nothing for a mapped file, or one too small to have been stat'ed.
void KeepForQuotes(FileText&& text);
// Drops the text kept for quotes (LoadIncident, as it starts on an incident).
void ForgetKeptText();

// `length` bytes at `offset` of `path` (one cited line, re-read when a report quotes it); of its
// text when it is compressed or Docker's records.
Result<std::string> ReadSpan(const std::filesystem::path& path, std::uint64_t offset,
                             std::uint32_t length);

}  // namespace denpex::engine
