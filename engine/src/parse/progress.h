// ProgressIndex: where each rank's (or srun task's) progress is kept, by ProgressKey
// (log_parser.h); ProgressTable: the iteration records themselves, by the same key. Flat arrays, not a hash map: a 16k-task srun file alternates tasks on every
// progress line, and a hash lookup per line was a tenth of the whole parse. Keys beyond kMaxFlat
// (no real job) spill into a map.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "parse/log_parser.h"

namespace denpex::engine {

class ProgressIndex {
 public:
  static constexpr std::size_t kNone = ~std::size_t{0};

  std::size_t Find(std::int32_t key) const {
    const auto& v = key >= -1 ? by_rank_ : by_task_;
    const std::size_t i = Slot(key);
    if (i < v.size()) return v[i];
    if (spill_.empty()) return kNone;
    const auto it = spill_.find(key);
    return it == spill_.end() ? kNone : it->second;
  }
  void Set(std::int32_t key, std::size_t index) {
    auto& v = key >= -1 ? by_rank_ : by_task_;
    const std::size_t i = Slot(key);
    if (i >= kMaxFlat) {
      spill_[key] = index;
      return;
    }
    if (i >= v.size()) v.resize(i + 1, kNone);
    v[i] = index;
  }
  void Clear() {
    by_rank_.clear();
    by_task_.clear();
    spill_.clear();
  }

 private:
  static constexpr std::size_t kMaxFlat = std::size_t{1} << 20;
  static std::size_t Slot(std::int32_t key) {
    return key >= -1 ? static_cast<std::size_t>(std::int64_t{key} + 1) : static_cast<std::size_t>(-2 - std::int64_t{key});
  }
  std::vector<std::size_t> by_rank_;  // [rank + 1]
  std::vector<std::size_t> by_task_;  // [task]
  std::unordered_map<std::int32_t, std::size_t> spill_;
};

// The latest iteration record per ProgressKey. Only a key's last record survives a parse (with
// the place and order of its first), and a 16k-task combined srun log updates each key many
// times: per key the table keeps 8 bytes, the latest line's number and where its record comes
// from, in flat arrays by key (a 16k-task job's 128 KB stay in L2 while the scan streams the
// chunk past them; full 64-byte records updated in place, even queued and prefetched a batch
// at a time, missed the caches on most progress lines). A line in the common shape is kept as
// its offset in the parsed text and read again only if it survives (`read`, at Close/Take,
// while the text is still mapped); any other progress line keeps its full record aside.
class ProgressTable {
 public:
  // Offsets of lines to read again are below this (a text's offsets past it keep full records).
  static constexpr std::uint32_t kMaxOffset = (std::uint32_t{1} << 31) - 1;
  // The line `line` (its number, >= 1) at `offset` of the text becomes its key's latest; `at`:
  // the events emitted before it.
  void Note(std::int32_t key, std::uint32_t offset, std::uint32_t length, std::uint32_t line, std::uint32_t at) {
    Entry& e = EntryOf(key);
    if (e.line == 0) order_.push_back({key, at});
    e = {line, offset, length};
  }
  // `r` (its `at`: the events emitted before its line) becomes its key's latest record.
  void Update(const ProgressRecord& r) {
    const std::int32_t key = ProgressKey(r.rank, r.task);
    Entry& e = EntryOf(key);
    if (e.line == 0) order_.push_back({key, r.at});
    e = {r.line, kFull | static_cast<std::uint32_t>(full_.size()), 0};
    full_.push_back(r);
  }
  // A requeued job's next run: its lines start new records, the current ones are kept as they
  // are. `read(offset, length, line)` is the record of a line given to Note; `prefetch(offset)`
  // asks for its text ahead (the scan has long evicted it).
  template <typename Read, typename Prefetch>
  void Close(const Read& read, const Prefetch& prefetch) {
    closed_.reserve(closed_.size() + order_.size());
    for (std::size_t k = 0; k < order_.size(); ++k) {
      if (k + kAhead < order_.size()) {
        const Entry& next = EntryOf(order_[k + kAhead].key);
        if ((next.ref & kFull) == 0) prefetch(next.ref);
      }
      const First& f = order_[k];
      Entry& e = EntryOf(f.key);
      ProgressRecord r = (e.ref & kFull) != 0 ? full_[e.ref & ~kFull] : read(e.ref, e.length, e.line);
      r.at = f.at;
      r.seq = seq_++;
      closed_.push_back(r);
      e = Entry{};
    }
    order_.clear();
    full_.clear();
  }
  // Every record, in the order they were made.
  template <typename Read, typename Prefetch>
  std::vector<ProgressRecord> Take(const Read& read, const Prefetch& prefetch) {
    Close(read, prefetch);
    seq_ = 0;
    std::vector<ProgressRecord> out;
    out.swap(closed_);
    return out;
  }

 private:
  struct Entry {
    std::uint32_t line = 0;  // 0: no record
    std::uint32_t ref = 0;   // the line's offset in the text, or kFull | its index in full_
    std::uint32_t length = 0;
  };
  struct First {
    std::int32_t key;
    std::uint32_t at;
  };
  static constexpr std::uint32_t kFull = std::uint32_t{1} << 31;
  static constexpr std::size_t kAhead = 16;  // lines prefetched ahead of the one read
  static constexpr std::size_t kMaxFlat = std::size_t{1} << 20;

  Entry& EntryOf(std::int32_t key) {
    auto& v = key >= -1 ? by_rank_ : by_task_;
    const std::size_t i = key >= -1 ? static_cast<std::size_t>(std::int64_t{key} + 1) : static_cast<std::size_t>(-2 - std::int64_t{key});
    if (i < v.size()) return v[i];
    if (i >= kMaxFlat) return spill_[key];
    v.resize(std::max<std::size_t>(std::bit_ceil(i + 1), 64));
    return v[i];
  }

  std::vector<Entry> by_rank_;  // [rank + 1]
  std::vector<Entry> by_task_;  // [task]
  std::unordered_map<std::int32_t, Entry> spill_;
  std::vector<First> order_;           // the current run's keys, in the order their first record came
  std::vector<ProgressRecord> full_;   // the current run's full records
  std::vector<ProgressRecord> closed_;
  std::uint32_t seq_ = 0;
};

}  // namespace denpex::engine
