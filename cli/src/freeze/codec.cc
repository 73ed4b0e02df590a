#include "freeze/codec.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "denpex/common/text.h"

namespace denpex::freeze {
namespace {

Result<std::string> Gzip(std::string_view text) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Internal("gzip: deflate did not finish");
  return out;
}

Result<std::string> Xz(std::string_view text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t pos = 0;
  const lzma_ret rc = lzma_easy_buffer_encode(
      6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(text.data()), text.size(),
      reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
  if (rc != LZMA_OK) return Status::Internal("xz: encode failed");
  out.resize(pos);
  return out;
}

Result<std::string> Zstd(std::string_view text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

// UTF-8 `text` as UTF-16 with its byte order mark (a byte that starts no valid UTF-8 sequence as
// U+FFFD).
std::string Utf16(std::string_view text, bool big_endian) {
  std::string out;
  out.reserve(2 * text.size() + 2);
  const auto unit = [&](char32_t u) {
    const char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
    out.push_back(big_endian ? hi : lo);
    out.push_back(big_endian ? lo : hi);
  };
  unit(0xFEFF);
  for (std::size_t k = 0; k < text.size();) {
    const char32_t cp = NextUtf8(text, &k);
    if (cp >= 0x10000) {
      unit(0xD800 + ((cp - 0x10000) >> 10));
      unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      unit(cp);
    }
  }
  return out;
}

}  // namespace

Result<std::string> Compress(std::string_view text, std::string_view codec) {
  if (text.size() > (std::size_t{1} << 31))
    return Status::InvalidInput("a compressed log of more than 2 GiB of text");
  if (codec == "gzip") return Gzip(text);
  if (codec == "xz") return Xz(text);
  if (codec == "zstd") return Zstd(text);
  if (codec == "UTF-16LE" || codec == "UTF-16BE") return Utf16(text, codec == "UTF-16BE");
  return Status::InvalidArgument("unknown codec " + std::string(codec));
}

}  // namespace denpex::freeze
