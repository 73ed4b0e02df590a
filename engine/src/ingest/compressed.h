// Compressed logs (logrotate's `.gz`, `.xz` and `.zst`, and whatever a user compressed), known
// by their magic bytes, never by their names: decompressed into memory, bounded, so the parse
// reads their text as it reads any log's. Lines and offsets cited in a compressed file are the
// decompressed text's. A log in UTF-16 with its byte order mark (what Windows PowerShell 5.1's `>`
// and `Out-File` write: `kubectl logs … > pod.log` on a Windows laptop) is read the same way, its
// text made UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

enum class Compression : std::uint8_t { kNone, kGzip, kXz, kZstd, kUtf16Le, kUtf16Be };

// From the file's first bytes (6 are enough).
Compression CompressionOf(std::string_view head);
std::string_view CompressionName(Compression c);  // "gzip", "xz", "zstd", "UTF-16LE", "UTF-16BE"

// At most this much text is decompressed from a compressed file: 16 times its size, at least 64
// MiB (a log of repeated lines compresses far better than 16:1), or, where it is more, the size a
// gzip trailer gives its text (NCCL chatter compresses past 16:1: a 16k-rank console 22:1); at most
// 1 GiB.
std::size_t InflateCap(std::string_view compressed);

struct Inflated {
  std::vector<char> text;
  bool capped = false;  // more text followed past `cap`
  std::string error;    // the stream broke (truncated, corrupt): `text` is what came before; empty when whole
};

// The text of the compressed stream `data` (concatenated members and frames too), up to `cap` bytes.
Inflated Inflate(std::string_view data, Compression c, std::size_t cap);

}  // namespace denpex::engine
