// StringTable: interned text that events keep (process-group names, op types, hosts, masked
// error signatures). Events hold a StrId; the text lives here once. Each file is parsed with
// its own table; the merge re-interns into one table in file order, so ids never depend on
// the thread count.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace denpex::engine {

using StrId = std::uint32_t;
inline constexpr StrId kNoStr = 0;  // the empty string, always id 0

class StringTable {
 public:
  StringTable() { Intern({}); }
  // Keys view the stored strings, so a copy would dangle; a move keeps the deque's elements.
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StrId Intern(std::string_view s) {
    if (auto it = index_.find(s); it != index_.end()) return it->second;
    const auto id = static_cast<StrId>(strings_.size());
    strings_.emplace_back(s);
    index_.emplace(strings_.back(), id);  // keys view the deque's strings, which never move
    return id;
  }
  std::string_view Get(StrId id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StrId> index_;
};

}  // namespace denpex::engine
