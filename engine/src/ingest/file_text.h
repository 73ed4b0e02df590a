// The bytes of one file: memory-mapped, or read into memory when the file is small. Opened
// read-only and without following a symbolic link.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "parse/log_parser.h"

namespace denpex::engine {

class FileText final : public ReadBehind {
 public:
  static Result<FileText> Open(const std::filesystem::path& path);

  FileText(FileText&& other) noexcept;
  FileText& operator=(FileText&& other) noexcept;
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;
  ~FileText();

  std::string_view view() const { return {data_, size_}; }
  // True when the first bytes hold a NUL: not a text log.
  bool LooksBinary() const;
  // Drops the mapped pages of [offset, offset + length) from this process once parsed, so a
  // 2 GB file never sits whole in its resident set (the page cache keeps them). No-op when read.
  void Release(std::uint64_t offset, std::uint64_t length) const override;

 private:
  FileText() = default;
  void Release();

  const char* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;  // non-null when mapped
  std::vector<char> buffer_;
};

// `length` bytes at `offset` of `path` (one cited line, re-read when a report quotes it).
Result<std::string> ReadSpan(const std::filesystem::path& path, std::uint64_t offset,
                             std::uint32_t length);

}  // namespace denpex::engine
