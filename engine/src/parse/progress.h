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

// The latest iteration record per ProgressKey: the records in the order they were made (what
// Take returns), and each live key's place among them in a ProgressIndex. A 16k-task combined
// srun log alternates tasks on every progress line, and the scan streams 32 MB of text past
// the records per chunk, so updating a record as its line is read missed the caches on nearly
// every progress line, one miss at a time (a tenth of the parse; a prefetch as the line's label
// is read did not hide it). Updates are queued and applied a batch at a time, where the misses
// of consecutive records overlap. (The records were kept in the slots of an open-addressed table
// before, then copied out in order at the end: three times the memory per chunk, all of it
// freshly faulted in by each of a 2 GB file's 64 chunks.)
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
    live_.Clear();
  }
  // Every record, in the order they were made.
  std::vector<ProgressRecord> Take() {
    Close();
    return std::move(records_);
  }

 private:
  static constexpr std::size_t kBatch = 256;
  static constexpr std::size_t kAhead = 8;  // records prefetched ahead of the one applied
  static std::int32_t KeyOf(const ProgressRecord& r) { return ProgressKey(r.rank, r.task); }

  void Flush() {
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      if (k + kAhead < pending_.size()) {
        const std::size_t i = live_.Find(KeyOf(pending_[k + kAhead]));
        if (i != ProgressIndex::kNone) __builtin_prefetch(&records_[i], 1);
      }
      Apply(pending_[k]);
    }
    pending_.clear();
  }
  void Apply(const ProgressRecord& r) {
    const std::int32_t key = KeyOf(r);
    const std::size_t i = live_.Find(key);
    if (i == ProgressIndex::kNone) {
      live_.Set(key, records_.size());
      records_.push_back(r);
      records_.back().seq = static_cast<std::uint32_t>(records_.size() - 1);
      return;
    }
    ProgressRecord& slot = records_[i];
    const std::uint32_t at = slot.at, seq = slot.seq;
    slot = r;
    slot.at = at;
    slot.seq = seq;
  }

  std::vector<ProgressRecord> records_;  // in the order they were made
  ProgressIndex live_;                   // key -> its record in records_ (this run's)
  std::vector<ProgressRecord> pending_;  // updates not applied yet, in line order
};

}  // namespace denpex::engine
