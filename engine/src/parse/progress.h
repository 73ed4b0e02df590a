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
// key, which for dense task or rank ids is a direct map). The 16k tasks' records of a combined
// srun log are 1 MB, and the scan streams 32 MB past them per chunk, so updating a record as its
// line is read missed the caches on nearly every progress line, one miss at a time (a tenth of
// the parse; a prefetch as the line's label is read did not hide it). Updates are queued and
// applied a batch at a time, where the misses of consecutive records overlap.
class ProgressTable {
 public:
  // `r` (its `at`: the events emitted before its line) becomes its key's latest record.
  void Update(const ProgressRecord& r) {
    if (pending_.empty()) pending_.reserve(kBatch);  // allocated on a file's first progress line, not per parser
    pending_.push_back(r);
    if (pending_.size() == kBatch) Flush();
  }
  // A requeued job's next run: its lines start new records, the current ones are kept as they are.
  void Close() {
    Flush();
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
  static constexpr std::size_t kBatch = 256;
  static constexpr std::size_t kAhead = 8;  // records prefetched ahead of the one applied
  static std::size_t Hash(std::int32_t key) {
    return key >= -1 ? static_cast<std::size_t>(std::int64_t{key} + 1) : static_cast<std::size_t>(-2 - std::int64_t{key});
  }
  static std::int32_t KeyOf(const ProgressRecord& r) { return ProgressKey(r.rank, r.task); }

  void Flush() {
    if (pending_.empty()) return;
    if (slots_.empty()) slots_.resize(kInitialSlots);
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      if (k + kAhead < pending_.size()) {
        __builtin_prefetch(&slots_[Hash(KeyOf(pending_[k + kAhead])) & (slots_.size() - 1)], 1);
      }
      Apply(pending_[k]);
    }
    pending_.clear();
  }
  void Apply(const ProgressRecord& r) {
    if (slots_.empty()) slots_.resize(kInitialSlots);
    const std::int32_t key = KeyOf(r);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      ProgressRecord& slot = slots_[i];
      if (slot.line == 0) {
        if (2 * (live_ + 1) > slots_.size()) {
          Grow();
          Apply(r);
          return;
        }
        ++live_;
        slot = r;
        slot.seq = seq_++;
        return;
      }
      if (KeyOf(slot) == key) {
        const std::uint32_t at = slot.at, seq = slot.seq;
        slot = r;
        slot.at = at;
        slot.seq = seq;
        return;
      }
    }
  }
  void Grow() {
    std::vector<ProgressRecord> old(2 * slots_.size());
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const ProgressRecord& r : old) {
      if (r.line == 0) continue;
      std::size_t i = Hash(KeyOf(r)) & mask;
      while (slots_[i].line != 0) i = (i + 1) & mask;
      slots_[i] = r;
    }
  }

  std::vector<ProgressRecord> slots_;
  std::vector<ProgressRecord> pending_;  // updates not applied yet, in line order
  std::vector<ProgressRecord> closed_;
  std::size_t live_ = 0;
  std::uint32_t seq_ = 0;
};

}  // namespace denpex::engine
