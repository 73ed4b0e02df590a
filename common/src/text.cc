#include "denpex/common/text.h"

#include <cstdint>
#include <cstdio>

namespace denpex {
namespace {

bool IsCont(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the UTF-8 sequence at the start of `s`, or 0 when it is not valid UTF-8.
std::size_t SequenceLength(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return s.size() >= 2 && IsCont(b(1)) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (s.size() < 3 || !IsCont(b(1)) || !IsCont(b(2))) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (s.size() < 4 || !IsCont(b(1)) || !IsCont(b(2)) || !IsCont(b(3))) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

bool NeedsEscape(unsigned char c, unsigned char next) {
  return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F || (c == 0xC2 && next >= 0x80 && next <= 0x9F);
}

}  // namespace

std::string EscapeControlBytes(std::string_view s) {
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  while (i < s.size() && !NeedsEscape(at(i), at(i + 1))) ++i;
  if (i == s.size()) return std::string(s);
  std::string out(s.substr(0, i));
  out.reserve(s.size() + 16);
  char buf[8];
  for (; i < s.size(); ++i) {
    const unsigned char c = at(i);
    if (!NeedsEscape(c, at(i + 1))) {
      out.push_back(static_cast<char>(c));
    } else if (c == 0xC2) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(at(i + 1)));
      out += buf;
      ++i;
    } else {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    }
  }
  return out;
}

char32_t NextUtf8(std::string_view s, std::size_t* i) {
  const std::string_view rest = s.substr(*i);
  const std::size_t n = SequenceLength(rest);
  if (n == 0) {
    ++*i;
    return 0xFFFD;
  }
  *i += n;
  const auto b = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(rest[k]));
  };
  switch (n) {
    case 1:
      return b(0);
    case 2:
      return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
    case 3:
      return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
    default:
      return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
  }
}

std::size_t FirstInvalidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // ASCII runs, 8 bytes a step.
    while (i + 8 <= s.size()) {
      std::uint64_t w;
      __builtin_memcpy(&w, s.data() + i, 8);
      if ((w & 0x8080808080808080ull) != 0) break;
      i += 8;
    }
    if (i >= s.size()) break;
    const std::size_t n = SequenceLength(s.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace denpex
