// NCCL's "everyone must arrive" semantics, for collectives on a process group and for
// point-to-point transfers between adjacent pipeline stages (a "channel": SEND on one side,
// RECV on the other). A rendezvous instance completes for all members only when every member
// has arrived; the completion time is max(arrival) + the operation's cost (the caller adds
// the cost). Members issue operations on one rendezvous in the same order and block until
// each completes, so at most one instance per rendezvous is in flight: the state is O(1)
// (arrived count, last arrival, poisoned flag) and nothing is allocated per instance.
//
// Ids: process-group uids [0, NumGroups) first (uid == id), then the channels, pipeline by
// pipeline: id = NumGroups + pipeline * (pp - 1) + stage, joining stage and stage + 1.
#pragma once

#include <cstdint>
#include <vector>

#include "job.h"

namespace denpex::sim {

class Rendezvous {
 public:
  explicit Rendezvous(const Job& job);

  std::uint32_t GroupId(int rank, PgKind kind) const {
    return static_cast<std::uint32_t>(job_.GroupUid(rank, kind));
  }
  // The channel between `rank`'s stage and the next (toward_next) or previous stage.
  std::uint32_t ChannelId(int rank, bool toward_next) const {
    const int pipeline = rank % (job_.tp * job_.dp);
    const int stage = job_.PpRank(rank) - (toward_next ? 0 : 1);
    return static_cast<std::uint32_t>(num_groups_ + pipeline * (job_.pp - 1) + stage);
  }
  bool IsChannel(std::uint32_t id) const { return id >= static_cast<std::uint32_t>(num_groups_); }
  int Size(std::uint32_t id) const;
  int Member(std::uint32_t id, int i) const;  // ascending global rank

  // Records an arrival at time t. True when it completes the instance: every member has
  // arrived and none died after arriving.
  bool Arrive(std::uint32_t id, TimeNs t);
  TimeNs LastArrival(std::uint32_t id) const { return last_arrival_[id]; }
  // A member died while arrived: this instance can never complete.
  void Poison(std::uint32_t id) { poisoned_[id] = 1; }
  // The instance completed: ready for the next one.
  void Reset(std::uint32_t id) {
    arrived_[id] = 0;
    last_arrival_[id] = 0;
    poisoned_[id] = 0;
  }
  std::size_t count() const { return arrived_.size(); }

 private:
  const Job& job_;
  int num_groups_;
  std::vector<std::uint32_t> arrived_;
  std::vector<TimeNs> last_arrival_;
  std::vector<std::uint8_t> poisoned_;
};

}  // namespace denpex::sim
