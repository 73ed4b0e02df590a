// Bytes from logs and input files shown to a person: what a terminal must not interpret, and
// whether text is UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace denpex {

// `s` with every byte a terminal would act on written visibly: C0 control bytes other than tab
// and newline as `\x1b`-style escapes, DEL as `\x7f`, and the C1 controls U+0080-U+009F (valid
// UTF-8 `C2 80`-`C2 9F`) as `\u009b`-style escapes. A log line cannot clear, move or fake the
// operator's screen through the text report. Everything else is kept byte for byte; a string
// with nothing to escape is returned unchanged.
std::string EscapeControlBytes(std::string_view s);

// Code point `cp` (up to U+10FFFF) appended to `out` (a std::string or a std::vector<char>) in
// UTF-8.
template <typename Bytes>
void AppendUtf8(char32_t cp, Bytes* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | cp >> 6));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | cp >> 12));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | cp >> 18));
    out->push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The code point of the UTF-8 sequence at s[*i] (*i < s.size()), *i moved past it; U+FFFD and one
// byte for a byte that starts no valid sequence (FirstInvalidUtf8's rules).
char32_t NextUtf8(std::string_view s, std::size_t* i);

// The offset of the first byte of `s` that is not part of valid UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF are invalid), or std::string_view::npos.
std::size_t FirstInvalidUtf8(std::string_view s);

}  // namespace denpex
