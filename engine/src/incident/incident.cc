#include "incident/incident.h"

#include <algorithm>

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
  by_kind_.assign(256, {});  // Kind is a uint8_t
  for (std::size_t i = 0; i < events.size(); ++i)
    by_kind_[static_cast<std::size_t>(events[i].kind)].push_back(static_cast<std::int32_t>(i));
  indexed_data_ = events.data();
  indexed_size_ = events.size();
}

}  // namespace denpex::engine
