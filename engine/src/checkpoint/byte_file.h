// One checkpoint file as positioned reads: a multi-gigabyte shard costs a few small reads
// (header, tail, central directory), never a whole-file read unless asked for. The same
// class wraps bytes in memory, so the format readers are tested and fuzzed without files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "denpex/common/status.h"

namespace denpex::engine::ckpt {

class ByteFile {
 public:
  // Opens read-only without following a symbolic link; only regular files.
  static Result<ByteFile> Open(const std::filesystem::path& path);
  static ByteFile FromBytes(std::string bytes);

  ByteFile(ByteFile&& other) noexcept;
  ByteFile& operator=(ByteFile&& other) noexcept;
  ByteFile(const ByteFile&) = delete;
  ByteFile& operator=(const ByteFile&) = delete;
  ~ByteFile();

  std::uint64_t size() const { return size_; }
  // Exactly `length` bytes at `offset`. kInvalidInput when the range passes the end of the
  // file (callers check bounds first), kIoError when the read fails.
  Result<std::string> Read(std::uint64_t offset, std::uint64_t length) const;
  // The same into a caller's buffer of at least `length` bytes (streaming reads reuse one).
  Status ReadInto(std::uint64_t offset, std::uint64_t length, char* out) const;

 private:
  ByteFile() = default;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string bytes_;  // FromBytes only
};

// Little-endian fields of a buffer; the caller guarantees `at + N <= b.size()`.
inline std::uint16_t Le16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) |
                                    static_cast<unsigned char>(b[at + 1]) << 8);
}
inline std::uint32_t Le32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(Le16(b, at)) | static_cast<std::uint32_t>(Le16(b, at + 2))
                                                       << 16;
}
inline std::uint64_t Le64(std::string_view b, std::size_t at) {
  return static_cast<std::uint64_t>(Le32(b, at)) | static_cast<std::uint64_t>(Le32(b, at + 4))
                                                       << 32;
}

// CRC-32 (IEEE 802.3, as zip uses it; zlib's); feed chunks by passing the previous value.
std::uint32_t Crc32(std::string_view data, std::uint32_t crc = 0);

// "1,234,567": byte counts in messages.
std::string Thousands(std::uint64_t n);

}  // namespace denpex::engine::ckpt
