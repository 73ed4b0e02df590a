// The character classes and small text shapes `denpex freeze`'s finder (names.cc) and rewriter
// (rewriter.cc) share: a name's characters and separators, where a Slurm job is named, and
// DeepSpeed's base64 `--world_info=`.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace denpex::freeze {

inline bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlnum(char c) { return IsLetter(c) || IsDigit(c); }
inline bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline bool IsNameChar(char c) { return IsAlnum(c) || c == '.' || c == '-' || c == '_'; }
inline bool IsSeparator(char c) { return c == '.' || c == '-' || c == '_'; }
inline bool IsEmailLocal(char c) {
  return IsAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

// The run of `pred` characters from `at`.
template <typename Pred>
inline std::size_t RunEnd(std::string_view text, std::size_t at, Pred pred) {
  while (at < text.size() && pred(text[at])) ++at;
  return at;
}

inline std::string_view TrimSeparators(std::string_view s) {
  while (!s.empty() && IsSeparator(s.back())) s.remove_suffix(1);
  return s;
}

// Whether the digits at [at, end) of `text` name a Slurm job (shapes.cc).
bool JobContext(std::string_view text, std::size_t at, std::size_t end);

// DeepSpeed's `--world_info=<base64 of {"host": [slots], ...}>` (urlsafe alphabet): the hosts
// sit inside the encoding, so it is decoded (denpex/common/base64.h), rewritten and encoded again.
inline constexpr std::string_view kWorldInfo = "world_info=";

}  // namespace denpex::freeze
