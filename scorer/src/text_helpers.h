// Small text helpers shared by the scorer's sources.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace denpex::scorer {

// An enum value's name without its prefix: ("OWNER_HOST", "OWNER_") -> "HOST" (a name without
// the prefix as it is).
inline std::string WithoutPrefix(std::string name, std::string_view prefix) {
  if (name.starts_with(prefix)) name.erase(0, prefix.size());
  return name;
}

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// 0.753 -> " 75.3%"
inline std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%5.1f%%", 100.0 * v);
  return buf;
}

inline std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

inline std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace denpex::scorer
