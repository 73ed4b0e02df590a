// Fuzz target for the decompressors of compressed logs (engine/src/ingest/compressed.h): any
// bytes as a gzip, xz and zstd stream. None may crash, hang, or return more text than the cap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/compressed.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kCap = 1 << 20;
  for (Compression c : {Compression::kGzip, Compression::kXz, Compression::kZstd}) {
    const Inflated out = Inflate(bytes, c, kCap);
    if (out.text.size() > kCap) std::abort();
  }
  (void)CompressionOf(bytes);
  return 0;
}
