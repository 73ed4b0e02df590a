// Rendezvous bookkeeping (see rendezvous.h): sizes, members and the arrival rule.
#include "rendezvous.h"

#include <algorithm>

namespace denpex::sim {

Rendezvous::Rendezvous(const Job& job) : job_(job), num_groups_(job.NumGroups()) {
  const std::size_t channels =
      static_cast<std::size_t>(job.world / job.pp) * static_cast<std::size_t>(job.pp - 1);
  const std::size_t n = static_cast<std::size_t>(num_groups_) + channels;
  arrived_.assign(n, 0);
  last_arrival_.assign(n, 0);
  poisoned_.assign(n, 0);
}

int Rendezvous::Size(std::uint32_t id) const {
  return IsChannel(id) ? 2 : job_.GroupSize(job_.KindOfGroup(static_cast<int>(id)));
}

int Rendezvous::Member(std::uint32_t id, int i) const {
  if (!IsChannel(id)) return job_.GroupMember(static_cast<int>(id), i);
  const int index = static_cast<int>(id) - num_groups_;
  const int pipeline = index / (job_.pp - 1);
  const int stage = index % (job_.pp - 1) + i;
  return pipeline + stage * job_.tp * job_.dp;
}

bool Rendezvous::Arrive(std::uint32_t id, TimeNs t) {
  last_arrival_[id] = std::max(last_arrival_[id], t);
  ++arrived_[id];
  return poisoned_[id] == 0 && arrived_[id] == static_cast<std::uint32_t>(Size(id));
}

}  // namespace denpex::sim
