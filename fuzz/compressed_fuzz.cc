// Fuzz target for the text encodings of a log: the decompressors of compressed logs
// (engine/src/ingest/compressed.h), any bytes as a gzip, xz and zstd stream, and the decoder of
// JSON-record logs (engine/src/ingest/json_logs.h), any bytes as Docker's, a journal's and a
// shipper's records, and as an array of a shipper's records. None may crash, hang, or return more
// text than the cap; the decoder's text ends in a newline, and stops at the line that passes its
// limit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/compressed.h"
#include "ingest/json_logs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kCap = 1 << 20;
  for (Compression c : {Compression::kGzip, Compression::kXz, Compression::kZstd}) {
    const Inflated out = Inflate(bytes, c, kCap);
    if (out.text.size() > kCap) std::abort();
  }
  (void)CompressionOf(bytes);
  (void)SniffJsonLog(bytes);
  for (const JsonLog kind :
       {JsonLog::kDocker, JsonLog::kJournal, JsonLog::kShipper, JsonLog::kShipperArray}) {
    const JsonLogText all = DecodeJsonLog(bytes, kind);
    if (!all.text.empty() && all.text.back() != '\n') std::abort();
    constexpr std::size_t kLimit = 256;
    const JsonLogText head = DecodeJsonLog(bytes, kind, kLimit);
    if (head.text.size() > all.text.size() ||
        !std::equal(head.text.begin(), head.text.end(), all.text.begin()))
      std::abort();
  }
  return 0;
}
