#include "incident/incident.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace denpex::engine {

std::vector<std::int32_t> Incident::OfKinds(std::initializer_list<Kind> kinds) const {
  std::vector<std::int32_t> out;
  // Not indexed, or indexed for other events: read them whole.
  if (by_kind_.empty() || indexed_data_ != events.data() || indexed_size_ != events.size()) {
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (std::find(kinds.begin(), kinds.end(), events[i].kind) != kinds.end())
        out.push_back(static_cast<std::int32_t>(i));
    }
    return out;
  }
  for (const Kind k : kinds) {
    const auto& of = by_kind_[static_cast<std::size_t>(k)];
    const auto middle = static_cast<std::ptrdiff_t>(out.size());
    out.insert(out.end(), of.begin(), of.end());
    std::inplace_merge(out.begin(), out.begin() + middle, out.end());
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());  // a kind named twice
  return out;
}

void Incident::IndexKinds() {
  // The events in blocks of a fixed size: each block counts its events of each kind, which gives
  // each block its place in each kind's list (after the blocks before it), where it then writes
  // its indices. Blocks run in parallel; the lists are in event order whatever the thread count.
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  constexpr std::size_t kKinds = 256;  // Kind is a uint8_t
  const std::size_t blocks = (events.size() + kBlock - 1) / kBlock;
  using PerKind = std::array<std::int32_t, kKinds>;
  std::vector<PerKind> at(blocks);  // by block: its count of each kind, then its place in each list
  // The kinds, read from the events once: the scatter reads these bytes, not the events again.
  std::vector<std::uint8_t> kinds(events.size());
  const auto each_block = [&](auto&& f) {
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
      const std::size_t end = std::min(events.size(), (b + 1) * kBlock);
      for (std::size_t i = b * kBlock; i < end; ++i) f(b, i);
    });
  };
  each_block([&](std::size_t b, std::size_t i) {
    kinds[i] = static_cast<std::uint8_t>(events[i].kind);
    ++at[b][kinds[i]];
  });
  by_kind_.assign(kKinds, {});
  for (std::size_t k = 0; k < kKinds; ++k) {
    std::int32_t total = 0;
    for (PerKind& block : at) total += std::exchange(block[k], total);
    by_kind_[k].resize(static_cast<std::size_t>(total));
  }
  each_block([&](std::size_t b, std::size_t i) {
    by_kind_[kinds[i]][static_cast<std::size_t>(at[b][kinds[i]]++)] = static_cast<std::int32_t>(i);
  });
  indexed_data_ = events.data();
  indexed_size_ = events.size();
}

}  // namespace denpex::engine
