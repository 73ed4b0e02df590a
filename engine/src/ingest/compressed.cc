#include "ingest/compressed.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "denpex/common/text.h"
#include "denpex/engine/compressed.h"

namespace denpex::engine {
namespace {

constexpr std::size_t kFirstOut = 1 << 20;  // the buffer grows by doubling from here up to the cap

// The output buffer: grows to `cap`, and says how much room is left.
class Out {
 public:
  Out(std::vector<char>* text, std::size_t cap) : text_(text), cap_(cap) {}
  // Room for more, or false when the cap is reached.
  bool Grow() {
    if (text_->size() >= cap_) return false;
    text_->resize(std::min(cap_, std::max(kFirstOut, text_->size() * 2)));
    return true;
  }
  char* at(std::size_t used) { return text_->data() + used; }
  std::size_t room(std::size_t used) const { return text_->size() - used; }

 private:
  std::vector<char>* text_;
  std::size_t cap_;
};

constexpr std::uint64_t kLeastCap = 64ull << 20, kMostCap = 1ull << 30;

// 16 times a compressed file's size, at least 64 MiB, at most 1 GiB.
std::size_t RatioCap(std::uint64_t compressed_bytes) {
  return static_cast<std::size_t>(std::clamp(compressed_bytes * 16, kLeastCap, kMostCap));
}

// What a gzip file's trailer says its text's size is (ISIZE: the last member's, modulo 4 GiB),
// where deflate could have made it (at most ~1,032 bytes out for each byte in); 0 when not.
std::size_t GzipSizeHint(std::string_view data) {
  if (data.size() < 18 || static_cast<unsigned char>(data[0]) != 0x1f ||
      static_cast<unsigned char>(data[1]) != 0x8b)
    return 0;
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i)
    size |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[data.size() - 4 + i]))
            << (8 * i);
  return size <= data.size() * 1032 ? size : 0;
}

void InflateGzip(std::string_view data, std::size_t cap, Inflated* out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) {  // 15 + 32: gzip or zlib headers, detected
    out->error = "zlib cannot start";
    return;
  }
  // The buffer made the size the trailer gives (and a little room to see the stream end) at
  // once, not grown by doubling from 1 MiB: each step a copy into fresh pages (an 84 MB text
  // touched 255 MB). A stream larger than the hint grows from there. Never past 64 times the
  // file at once (a log compresses less: the 16k-rank console 22:1): a cut file's last four
  // bytes are no trailer, and say any size.
  if (const std::size_t hint = GzipSizeHint(data); hint > kFirstOut)
    out->text.resize(std::min({cap, hint + (64 << 10), data.size() * 64}));
  Out buf(&out->text, cap);
  std::size_t used = 0;
  std::size_t in = 0;
  constexpr const char* kTruncated = "ends before its stream does (truncated)";
  for (;;) {
    if (used == out->text.size() && !buf.Grow()) {
      out->capped = true;
      break;
    }
    const std::size_t chunk = std::min<std::size_t>(data.size() - in, std::numeric_limits<uInt>::max());
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in));
    z.avail_in = static_cast<uInt>(chunk);
    const std::size_t room = std::min<std::size_t>(buf.room(used), std::numeric_limits<uInt>::max());
    z.next_out = reinterpret_cast<Bytef*>(buf.at(used));
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, Z_NO_FLUSH);
    in += chunk - z.avail_in;
    used += room - z.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member may follow (`cat a.gz b.gz`); zero padding after the last one ends it.
      while (in < data.size() && data[in] == '\0') ++in;
      if (in == data.size() || inflateReset(&z) != Z_OK) break;
    } else if (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0)) {
      if (z.avail_out != 0 && in == data.size()) {
        out->error = kTruncated;
        break;
      }
    } else {
      out->error = rc == Z_BUF_ERROR ? kTruncated : std::string("corrupt (") + (z.msg ? z.msg : "zlib error") + ")";
      break;
    }
  }
  inflateEnd(&z);
  out->text.resize(used);
}

void InflateXz(std::string_view data, std::size_t cap, Inflated* out) {
  lzma_stream z = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&z, std::numeric_limits<std::uint64_t>::max(), LZMA_CONCATENATED) != LZMA_OK) {
    out->error = "liblzma cannot start";
    return;
  }
  Out buf(&out->text, cap);
  std::size_t used = 0;
  z.next_in = reinterpret_cast<const std::uint8_t*>(data.data());
  z.avail_in = data.size();
  for (;;) {
    if (used == out->text.size() && !buf.Grow()) {
      out->capped = z.avail_in > 0;
      break;
    }
    const std::size_t room = buf.room(used);
    z.next_out = reinterpret_cast<std::uint8_t*>(buf.at(used));
    z.avail_out = room;
    const lzma_ret rc = lzma_code(&z, z.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
    used += room - z.avail_out;
    if (rc == LZMA_STREAM_END) break;
    if (rc == LZMA_BUF_ERROR && z.avail_in == 0) {
      out->error = "ends before its stream does (truncated)";
      break;
    }
    if (rc != LZMA_OK) {
      out->error = "corrupt (liblzma error " + std::to_string(static_cast<int>(rc)) + ")";
      break;
    }
  }
  lzma_end(&z);
  out->text.resize(used);
}

void InflateZstd(std::string_view data, std::size_t cap, Inflated* out) {
  ZSTD_DStream* z = ZSTD_createDStream();
  if (z == nullptr) {
    out->error = "libzstd cannot start";
    return;
  }
  Out buf(&out->text, cap);
  std::size_t used = 0;
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::size_t last = 0;
  while (in.pos < in.size) {
    if (used == out->text.size() && !buf.Grow()) {
      out->capped = true;
      break;
    }
    ZSTD_outBuffer o{buf.at(used), buf.room(used), 0};
    last = ZSTD_decompressStream(z, &o, &in);
    used += o.pos;
    if (ZSTD_isError(last)) {
      out->error = std::string("corrupt (") + ZSTD_getErrorName(last) + ")";
      break;
    }
  }
  if (out->error.empty() && !out->capped && last != 0) out->error = "ends before its stream does (truncated)";
  ZSTD_freeDStream(z);
  out->text.resize(used);
}

// UTF-16 text (its byte order mark past) as UTF-8, up to `cap` bytes: a pair of surrogates is one
// character, a lone surrogate or a last odd byte U+FFFD.
void InflateUtf16(std::string_view data, bool big_endian, std::size_t cap, Inflated* out) {
  out->text.reserve(std::min(cap, data.size() / 2 + 16));
  const auto unit = [&](std::size_t k) -> std::uint32_t {
    const auto a = static_cast<unsigned char>(data[k]), b = static_cast<unsigned char>(data[k + 1]);
    return big_endian ? (a << 8 | b) : (b << 8 | a);
  };
  for (std::size_t k = 2; k < data.size(); k += 2) {
    std::uint32_t cp = 0xFFFD;
    if (k + 1 < data.size()) {
      cp = unit(k);
      if (cp >= 0xD800 && cp <= 0xDBFF && k + 3 < data.size() && unit(k + 2) >= 0xDC00 &&
          unit(k + 2) <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (unit(k + 2) - 0xDC00);
        k += 2;
      } else if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0xFFFD;
      }
    }
    const std::size_t before = out->text.size();
    AppendUtf8(cp, &out->text);
    if (out->text.size() > cap) {
      out->text.resize(before);
      out->capped = true;
      return;
    }
  }
}

}  // namespace

Compression CompressionOf(std::string_view head) {
  if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b') return Compression::kGzip;
  if (head.size() >= 6 && head.substr(0, 6) == std::string_view("\xfd" "7zXZ\0", 6)) return Compression::kXz;
  if (head.size() >= 4 && head.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4)) return Compression::kZstd;
  // UTF-16's byte order mark (not UTF-32LE's, `FF FE 00 00`)
  if (head.size() >= 2 && head.substr(0, 2) == "\xff\xfe" &&
      !head.substr(2).starts_with(std::string_view("\0\0", 2)))
    return Compression::kUtf16Le;
  if (head.size() >= 2 && head.substr(0, 2) == "\xfe\xff") return Compression::kUtf16Be;
  return Compression::kNone;
}

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kXz:
      return "xz";
    case Compression::kZstd:
      return "zstd";
    case Compression::kUtf16Le:
      return "UTF-16LE";
    case Compression::kUtf16Be:
      return "UTF-16BE";
    case Compression::kNone:
      break;
  }
  return "none";
}

std::size_t InflateCap(std::string_view compressed) {
  return std::max(RatioCap(compressed.size()),
                  std::min<std::size_t>(kMostCap, GzipSizeHint(compressed)));
}

Inflated Inflate(std::string_view data, Compression c, std::size_t cap) {
  Inflated out;
  switch (c) {
    case Compression::kGzip:
      InflateGzip(data, cap, &out);
      break;
    case Compression::kXz:
      InflateXz(data, cap, &out);
      break;
    case Compression::kZstd:
      InflateZstd(data, cap, &out);
      break;
    case Compression::kUtf16Le:
    case Compression::kUtf16Be:
      InflateUtf16(data, c == Compression::kUtf16Be, cap, &out);
      break;
    case Compression::kNone:
      out.text.assign(data.begin(), data.end());
      break;
  }
  return out;
}

}  // namespace denpex::engine

namespace denpex::engine {

DecompressedLog DecompressLog(std::string_view data, std::size_t cap) {
  DecompressedLog out;
  const Compression c = CompressionOf(data.substr(0, 6));
  if (c == Compression::kNone) return out;
  out.codec = std::string(CompressionName(c));
  Inflated in = Inflate(data, c, cap);
  out.text.assign(in.text.begin(), in.text.end());
  out.error = in.capped ? "more than " + std::to_string(cap) + " bytes of text" : in.error;
  return out;
}

}  // namespace denpex::engine
