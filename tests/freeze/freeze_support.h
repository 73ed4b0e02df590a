// What the freeze tests share: the files of an entry read as the engine reads them
// (decompressed), and a search for a name standing as a name (not inside a longer word).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "denpex/engine/compressed.h"

namespace denpex::testing {

inline std::string ReadBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Each file under `root` (relative path, its text: decompressed when compressed, else its bytes).
inline std::vector<std::pair<std::string, std::string>> FilesOf(const std::filesystem::path& root) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string data = ReadBytes(e.path());
    engine::DecompressedLog d = engine::DecompressLog(data, std::size_t{1} << 32);
    out.emplace_back(e.path().lexically_relative(root).string(),
                     d.codec.empty() ? std::move(data) : std::move(d.text));
  }
  return out;
}

inline bool NameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Whether `name` stands in `text` with no letter or digit right before or after it.
inline bool HoldsName(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string_view::npos;
       at = text.find(name, at + 1)) {
    const bool left = at == 0 || !NameChar(text[at - 1]);
    const bool right = at + name.size() >= text.size() || !NameChar(text[at + name.size()]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace denpex::testing
