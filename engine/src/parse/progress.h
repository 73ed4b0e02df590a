// ProgressIndex: where each rank's (or srun task's) progress is kept, by ProgressKey
// (parse_log.h); ProgressTable: the iteration records themselves, by the same key. Flat arrays, not
// a hash map: a 16k-task srun file alternates tasks on every progress line, and a hash lookup per
// line was a tenth of the whole parse. Keys beyond kMaxFlat (no real job) spill into a map.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "parse/parse_log.h"

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
// the place and order of its first), and a 16k-task combined srun log updates each key a few
// times per chunk. A line in the common shape (LogParser::FastProgress: its rank and local rank
// are the file's) is appended to a log of 32-byte entries, and its key's slot, 4 bytes in a
// flat array by key (64 KB for 16k tasks: it stays in L2 while the scan streams the chunk past
// it), points at it; a record is made only of each key's last, at Close. Full records updated in
// place, smaller slots whose survivors' lines are read again at Close, and slots holding the
// fields all cost more (a cache miss per line or per survivor; docs/benchmarks.md, progress8).
// Any other progress line keeps its full record aside.
class ProgressTable {
 public:
  // The note log, the key order and the slots are the memory of the table last destroyed on
  // this thread (a thread's chunks are parsed one after another; each worker keeps ~2 MB): a
  // 32 MiB chunk of a 16k-task log notes ~52 k lines (1.6 MB of log), which would otherwise grow
  // by doubling from nothing in each chunk's table.
  ProgressTable() { Scratch().Lend(this); }
  ~ProgressTable() { Scratch().Keep(this); }
  ProgressTable(const ProgressTable&) = delete;
  ProgressTable& operator=(const ProgressTable&) = delete;

  // What a Note can hold: larger values (and texts) take Update.
  static constexpr std::uint32_t kMaxOffset = (std::uint32_t{1} << 31) - 1;
  static constexpr std::int64_t kMaxValue = std::int64_t{0xffffffff};
  // Fields of a progress line in the common shape; `line` >= 1.
  struct alignas(32) Noted {  // never across two cache lines
    std::uint32_t line = 0;
    std::uint32_t offset = 0;  // in the parsed text
    std::uint32_t length = 0;
    std::int32_t task = -1;
    std::uint32_t iteration = 0;
    std::uint32_t total = 0;
    TimeNs time = 0;
  };
  // `n` becomes its key's latest; `at`: the events emitted before its line.
  void Note(std::int32_t key, const Noted& n, std::uint32_t at) {
    std::uint32_t& slot = SlotOf(key);
    // A key's first line in a chunk comes at random (a third of a 16k-task log's lines): its
    // order entry is written always and counted only then, without a branch on it (with SlotOf
    // inlined here: part_bench over 512 MB of the benchmark's padding, -0.003..-0.006 CPU-s of 0.115).
    OrderRoom();
    order_[order_size_] = {key, at};
    order_size_ += slot == kEmpty ? 1 : 0;
    slot = static_cast<std::uint32_t>(log_.size());
    log_.push_back(n);
  }
  // Asks for `key`'s slot ahead of its Note (the scan streams the chunk through the caches).
  void Prefetch(std::int32_t key) const {
    const auto& v = key >= -1 ? by_rank_ : by_task_;
    const std::size_t i = Slot(key);
    if (i < v.size()) __builtin_prefetch(&v[i], 1);
  }
  // `r` (its `at`: the events emitted before its line) becomes its key's latest record.
  void Update(const ProgressRecord& r) {
    const std::int32_t key = ProgressKey(r.rank, r.task);
    std::uint32_t& slot = SlotOf(key);
    if (slot == kEmpty) AddOrder({key, r.at});
    slot = kFull | static_cast<std::uint32_t>(full_.size());
    full_.push_back(r);
  }
  // A requeued job's next run: its lines start new records, the current ones are kept as they
  // are. Noted lines were read at `base` of the file, with `rank` and `local_rank`.
  void Close(std::uint64_t base, std::int32_t rank, std::int32_t local_rank) {
    closed_.reserve(closed_.size() + order_size_);
    constexpr std::size_t kAhead = 8;  // noted lines prefetched ahead of the one read
    for (std::size_t k = 0; k < order_size_; ++k) {
      if (k + kAhead < order_size_) {
        const std::uint32_t ahead = SlotOf(order_[k + kAhead].key);
        if ((ahead & kFull) == 0) __builtin_prefetch(&log_[ahead]);
      }
      const First& f = order_[k];
      std::uint32_t& slot = SlotOf(f.key);
      ProgressRecord r;
      if ((slot & kFull) != 0) {
        r = full_[slot & ~kFull];
      } else {
        const Noted& e = log_[slot];
        r = {.time = e.time, .iteration = e.iteration, .total = e.total, .offset = base + e.offset, .line = e.line,
             .length = e.length, .rank = rank, .local_rank = local_rank, .task = e.task};
      }
      r.at = f.at;
      r.seq = seq_++;
      closed_.push_back(r);
      slot = kEmpty;
    }
    order_size_ = 0;
    full_.clear();
    log_.clear();
  }
  // Every record, in the order they were made.
  std::vector<ProgressRecord> Take(std::uint64_t base, std::int32_t rank, std::int32_t local_rank) {
    Close(base, rank, local_rank);
    seq_ = 0;
    std::vector<ProgressRecord> out;
    out.swap(closed_);
    return out;
  }

 private:
  struct First {
    std::int32_t key;
    std::uint32_t at;
  };
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr std::uint32_t kFull = std::uint32_t{1} << 31;  // in a slot: an index in full_, not log_
  static constexpr std::size_t kMaxFlat = std::size_t{1} << 20;

  static std::size_t Slot(std::int32_t key) {
    return key >= -1 ? static_cast<std::size_t>(std::int64_t{key} + 1) : static_cast<std::size_t>(-2 - std::int64_t{key});
  }
  std::uint32_t& SlotOf(std::int32_t key) {
    auto& v = key >= -1 ? by_rank_ : by_task_;
    const std::size_t i = Slot(key);
    if (i < v.size()) [[likely]] return v[i];
    return NewSlot(key);
  }
  // SlotOf for a key past the flat arrays (out of line: SlotOf is inlined into Note).
  __attribute__((noinline)) std::uint32_t& NewSlot(std::int32_t key) {
    auto& v = key >= -1 ? by_rank_ : by_task_;
    const std::size_t i = Slot(key);
    if (i >= kMaxFlat) return spill_.try_emplace(key, kEmpty).first->second;
    v.resize(std::max<std::size_t>(std::bit_ceil(i + 1), 64), kEmpty);
    return v[i];
  }
  void OrderRoom() {
    if (order_size_ == order_.size()) order_.resize(std::max<std::size_t>(64, 2 * order_.size()));
  }
  void AddOrder(const First& f) {
    OrderRoom();
    order_[order_size_++] = f;
  }

  std::vector<std::uint32_t> by_rank_;  // [rank + 1]
  std::vector<std::uint32_t> by_task_;  // [task]
  std::unordered_map<std::int32_t, std::uint32_t> spill_;
  std::vector<First> order_;           // the current run's keys, in the order their first record came:
  std::size_t order_size_ = 0;         //   order_[0, order_size_)
  std::vector<Noted> log_;             // the current run's noted lines, in line order
  std::vector<ProgressRecord> full_;   // the current run's full records
  std::vector<ProgressRecord> closed_;
  std::uint32_t seq_ = 0;

  // The memory a destroyed table leaves to the next one on its thread: emptied vectors (their
  // capacity kept), every slot kEmpty.
  struct Spare {
    std::vector<std::uint32_t> by_rank, by_task;
    std::vector<First> order;
    std::vector<Noted> log;
    void Lend(ProgressTable* t) {
      t->by_rank_.swap(by_rank);
      t->by_task_.swap(by_task);
      t->order_.swap(order);
      t->log_.swap(log);
    }
    void Keep(ProgressTable* t) {
      if (t->log_.capacity() < log.capacity()) return;  // keep the larger memory
      t->log_.clear();
      std::fill(t->by_rank_.begin(), t->by_rank_.end(), kEmpty);  // a table destroyed before Take
      std::fill(t->by_task_.begin(), t->by_task_.end(), kEmpty);
      Lend(t);
    }
  };
  static Spare& Scratch() {
    thread_local Spare spare;
    return spare;
  }
};

}  // namespace denpex::engine
