#include "denpex/common/base64.h"

#include <cstdint>

namespace denpex {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-' || c == '+') return 62;
  if (c == '_' || c == '/') return 63;
  return -1;
}

bool IsBase64Char(char c) { return Base64Value(c) >= 0 || c == '='; }

bool Base64Decode(std::string_view in, std::string* out) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  out->clear();
  out->reserve(in.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = Base64Value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return !out->empty();
}

std::string Base64Encode(std::string_view in, bool urlsafe, bool pad) {
  const char* alphabet = urlsafe
                             ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                             : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
                            (static_cast<unsigned char>(in[i + 1]) << 8) |
                            static_cast<unsigned char>(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out.push_back(alphabet[(v >> k) & 63]);
  }
  if (i < in.size()) {
    std::uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    const int chars = i + 1 < in.size() ? 3 : 2;
    for (int k = 0; k < chars; ++k) out.push_back(alphabet[(v >> (18 - 6 * k)) & 63]);
    if (pad) out.append(static_cast<std::size_t>(4 - chars), '=');
  }
  return out;
}

}  // namespace denpex
