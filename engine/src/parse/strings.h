// StringTable: interned text that events keep (process-group names, op types, hosts, masked
// error signatures). Events hold a StrId; the text lives here once. Each file is parsed with
// its own table; the merge re-interns into one table in file order, so ids never depend on
// the thread count.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <functional>
#include <vector>

namespace denpex::engine {

using StrId = std::uint32_t;
inline constexpr StrId kNoStr = 0;  // the empty string, always id 0

class StringTable {
 public:
  StringTable() { Intern({}); }
  // Get's views point into the deque's strings, which never move; a move keeps them.
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StrId Intern(std::string_view s) {
    const std::uint64_t hash = std::hash<std::string_view>{}(s);
    if ((strings_.size() + 1) * 2 > slots_.size()) Grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.id_plus_one == 0) {
        const auto id = static_cast<StrId>(strings_.size());
        strings_.emplace_back(s);
        hashes_.push_back(hash);
        slot = {id + 1, static_cast<std::uint32_t>(hash >> 32)};
        return id;
      }
      if (slot.hash_high == static_cast<std::uint32_t>(hash >> 32) && strings_[slot.id_plus_one - 1] == s) {
        return slot.id_plus_one - 1;
      }
    }
  }
  std::string_view Get(StrId id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }

 private:
  // Open addressing (linear probing, at most half full): no node per string, and most misses
  // end at the slot's hash without touching the string.
  struct Slot {
    StrId id_plus_one = 0;  // 0: empty
    std::uint32_t hash_high = 0;
  };
  void Grow() {
    std::vector<Slot> slots(slots_.empty() ? 64 : slots_.size() * 2);
    const std::size_t mask = slots.size() - 1;
    for (StrId id = 0; id < hashes_.size(); ++id) {
      std::size_t i = hashes_[id] & mask;
      while (slots[i].id_plus_one != 0) i = (i + 1) & mask;
      slots[i] = {id + 1, static_cast<std::uint32_t>(hashes_[id] >> 32)};
    }
    slots_ = std::move(slots);
  }

  std::deque<std::string> strings_;
  std::vector<std::uint64_t> hashes_;  // per id, to grow the table
  std::vector<Slot> slots_;
};

}  // namespace denpex::engine
