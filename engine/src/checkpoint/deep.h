// --deep: every byte a checkpoint's tensors hold is read once, in bounded chunks, for the
// CRC-32 of its zip record and for NaN/Inf in floating-point tensors (a job that saved after
// its loss diverged writes a complete, well-formed file whose weights are unusable).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/byte_file.h"
#include "checkpoint/reader_finding.h"
#include "checkpoint/zip.h"

namespace denpex::engine::ckpt {

// How an element type spells NaN and Inf; kNotFloat for integers, bool and unknown types.
enum class FloatKind : std::uint8_t {
  kNotFloat,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E4M3FN,  // no Inf; NaN is S.1111.111
  kF8E5M2,    // IEEE-like: exponent 11111
  kF8Fnuz,    // e4m3fnuz / e5m2fnuz: 0x80 is the only NaN
};
std::uint64_t FloatKindSize(FloatKind kind);
// From a torch storage class ("torch.BFloat16Storage"; complex storages scan as their parts).
FloatKind FloatKindOfStorage(std::string_view storage_class);
// From a safetensors dtype ("BF16").
FloatKind FloatKindOfDtype(std::string_view dtype);

struct NonFinite {
  std::uint64_t element = 0;  // index of the first NaN/Inf element
  bool nan = false;           // else ±Inf
};
// The first NaN/Inf among `count` elements at `data` (unaligned is fine).
std::optional<NonFinite> FindNonFinite(const char* data, std::uint64_t count, FloatKind kind);

// Reads through one reusable buffer (memory stays at kDeepChunk whatever the file size) and
// reports the bytes it read to `progress` after every chunk.
inline constexpr std::uint64_t kDeepChunk = 4u << 20;
class DeepReader {
 public:
  using Progress = std::function<void(std::uint64_t bytes)>;
  // `max_bytes`: what the reader may read in all (0: no limit); records and tensors that would
  // pass it are skipped whole and counted in skipped_bytes().
  explicit DeepReader(const Progress* progress = nullptr, std::uint64_t max_bytes = 0);

  // Every record of a torch.save archive (a file or a DCP item) against its CRC-32, and every
  // floating-point storage data.pkl references for NaN/Inf, named by the tensor that views
  // it (`name` stands in for a tensor saved on its own, as DCP items are).
  Finding TorchArchive(const ByteFile& f, const ZipArchive& archive, const std::string& name = "");
  // Every floating-point tensor of a safetensors file whose header already verified.
  Finding Safetensors(const ByteFile& f);

  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t skipped_bytes() const { return skipped_bytes_; }

 private:
  struct StreamResult {
    Finding read_error;  // ok() unless a read failed
    std::uint32_t crc = 0;
    std::optional<NonFinite> hit;
  };
  // Bytes [offset, offset + length) of `f`: their CRC-32 when `crc`, the first non-finite
  // element when `kind` is a float type.
  StreamResult Stream(const ByteFile& f, std::uint64_t offset, std::uint64_t length, FloatKind kind,
                bool crc);

  // Whether `length` more bytes fit the budget; counts them as skipped when not.
  bool Fits(std::uint64_t length);
  // ", N bytes not read (over the budget)" when something was skipped since `before`.
  std::string Skipped(std::uint64_t before) const;

  const Progress* progress_;
  std::uint64_t max_bytes_;
  std::uint64_t skipped_bytes_ = 0;
  std::vector<std::uint64_t> buffer_;  // kDeepChunk bytes, 8-aligned
  std::uint64_t bytes_read_ = 0;
};

}  // namespace denpex::engine::ckpt
