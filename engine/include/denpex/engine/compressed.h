// Compressed logs as the engine reads them (gzip, xz, zstd; known by their magic bytes, never by
// their names), for tools that must see the same text the engine sees (`denpex freeze`).
#pragma once

#include <string>
#include <string_view>

namespace denpex::engine {

struct DecompressedLog {
  std::string codec;  // "gzip", "xz", "zstd"; empty when `data` is not compressed
  std::string text;   // the whole decompressed text (concatenated members and frames too)
  std::string error;  // the stream broke (truncated, corrupt): `text` is what came before
};

// `data`'s codec and text; at most `cap` bytes of text (then `error` says so).
DecompressedLog DecompressLog(std::string_view data, std::size_t cap);

}  // namespace denpex::engine
