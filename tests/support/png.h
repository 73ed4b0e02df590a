// A PNG file's pixels, for tests that look at a screenshot (headless Chromium's): 8-bit RGB or
// RGBA, not interlaced, every filter type. Nothing else is needed to read Chromium's output.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace denpex::testing {

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3
  const std::uint8_t* At(int x, int y) const {
    return &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
  }
};

inline std::uint32_t Be32(const std::string& s, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at])) << 24 |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at + 1])) << 16 |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at + 2])) << 8 |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at + 3]));
}

inline std::optional<Image> ReadPng(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  if (s.size() < 8 || s.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return std::nullopt;
  Image img;
  int channels = 0;
  std::string idat;
  for (std::size_t at = 8; at + 8 <= s.size();) {
    const std::uint32_t len = Be32(s, at);
    const std::string type = s.substr(at + 4, 4);
    if (at + 12 + len > s.size()) return std::nullopt;
    if (type == "IHDR") {
      img.width = static_cast<int>(Be32(s, at + 8));
      img.height = static_cast<int>(Be32(s, at + 12));
      const int depth = static_cast<std::uint8_t>(s[at + 16]);
      const int color = static_cast<std::uint8_t>(s[at + 17]);
      const int interlace = static_cast<std::uint8_t>(s[at + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return std::nullopt;
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += s.substr(at + 8, len);
    }
    at += 12 + len;
  }
  if (channels == 0 || img.width <= 0 || img.height <= 0) return std::nullopt;
  const std::size_t stride = static_cast<std::size_t>(img.width) * channels;
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_len != raw.size()) {
    return std::nullopt;
  }
  std::vector<std::uint8_t> prev(stride, 0), cur(stride);
  img.rgb.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  for (int y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* line = &raw[y * (stride + 1) + 1];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? cur[i - channels] : 0;
      const int b = prev[i];
      const int c = i >= static_cast<std::size_t>(channels) ? prev[i - channels] : 0;
      int pred = 0;
      switch (filter) {
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          break;
      }
      cur[i] = static_cast<std::uint8_t>(line[i] + pred);
    }
    for (int x = 0; x < img.width; ++x) {
      for (int k = 0; k < 3; ++k)
        img.rgb[(static_cast<std::size_t>(y) * img.width + x) * 3 + k] = cur[x * channels + k];
    }
    prev.swap(cur);
  }
  return img;
}

}  // namespace denpex::testing
