// ProgressIndex: where each rank's (or srun task's) progress is kept, by ProgressKey
// (log_parser.h). Flat arrays, not a hash map: a 16k-task srun file alternates tasks on every
// progress line, and a hash lookup per line was a tenth of the whole parse. Keys beyond kMaxFlat
// (no real job) spill into a map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

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

}  // namespace denpex::engine
