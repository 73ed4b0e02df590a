// ProgressIndex: where each rank's (or srun task's) progress is kept, by ProgressKey
// (log_parser.h); ProgressTable: the iteration records themselves, by the same key. Flat arrays, not a hash map: a 16k-task srun file alternates tasks on every
// progress line, and a hash lookup per line was a tenth of the whole parse. Keys beyond kMaxFlat
// (no real job) spill into a map.
#pragma once

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

// The latest iteration record per ProgressKey, in the slots themselves (open addressing on the
// key, which for dense task or rank ids is a direct map): one memory access per progress line,
// which the parser prefetches while it reads the line (the 16k tasks' records are 1 MB, and the
// scan streams 32 MB past them per chunk, so each access missed the caches, twice when an
// index pointed into a separate vector).
class ProgressTable {
 public:
  ProgressTable() : slots_(kInitialSlots) {}

  void Prefetch(std::int32_t key) const { __builtin_prefetch(&slots_[Hash(key) & (slots_.size() - 1)], 1); }
  // The record of `key`, made (placed before event `at`) when it has none. Valid until the next call.
  ProgressRecord* Get(std::int32_t key, std::uint32_t at) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      ProgressRecord& r = slots_[i];
      if (r.line == 0) {
        if (2 * (live_ + 1) > slots_.size()) {
          Grow();
          return Get(key, at);
        }
        ++live_;
        r.at = at;
        r.seq = seq_++;
        r.rank = key >= -1 ? key : -1;  // what the key is made of, until the caller fills the rest
        r.task = key >= -1 ? -1 : -2 - key;
        return &r;
      }
      if (ProgressKey(r.rank, r.task) == key) return &r;
    }
  }
  // A requeued job's next run: its lines start new records, the current ones are kept as they are.
  void Close() {
    for (ProgressRecord& r : slots_) {
      if (r.line != 0) closed_.push_back(r);
      r = ProgressRecord{};
    }
    live_ = 0;
  }
  // Every record, in the order they were made.
  std::vector<ProgressRecord> Take() {
    Close();
    std::vector<ProgressRecord> out(closed_.size());
    for (const ProgressRecord& r : closed_) out[r.seq] = r;
    closed_.clear();
    seq_ = 0;
    return out;
  }

 private:
  static constexpr std::size_t kInitialSlots = 64;
  static std::size_t Hash(std::int32_t key) {
    return key >= -1 ? static_cast<std::size_t>(std::int64_t{key} + 1) : static_cast<std::size_t>(-2 - std::int64_t{key});
  }
  void Grow() {
    std::vector<ProgressRecord> old(2 * slots_.size());
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const ProgressRecord& r : old) {
      if (r.line == 0) continue;
      std::size_t i = Hash(ProgressKey(r.rank, r.task)) & mask;
      while (slots_[i].line != 0) i = (i + 1) & mask;
      slots_[i] = r;
    }
  }

  std::vector<ProgressRecord> slots_;
  std::vector<ProgressRecord> closed_;
  std::size_t live_ = 0;
  std::uint32_t seq_ = 0;
};

}  // namespace denpex::engine
