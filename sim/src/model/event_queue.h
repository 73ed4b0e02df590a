// The simulator's single pending-event set: a binary heap ordered by (time, insertion
// sequence), so events at the same nanosecond run in the order they were scheduled and the
// run is reproducible. An event is 16 bytes: its time and one word holding the sequence
// number (high 40 bits), the kind (4 bits) and the id it applies to (20 bits: a rank, node,
// rendezvous or fault index). The model decodes the kind and id; the queue knows nothing else.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "denpex/common/time.h"

namespace denpex::sim {

enum class EventKind : std::uint8_t {
  kRankStart,       // id: rank; the worker process starts (NCCL init, first barrier)
  kRankResume,      // id: rank; a compute slice ended
  kRendezvousDone,  // id: rendezvous; the collective / p2p transfer completes for everyone
  kFault,           // id: rank (node for node faults; 0 for job faults); the fault fires
  kRankExit,        // id: rank; a rank that raised finishes exiting (exit code 1)
  kWatchdogCheck,   // id: rank; the rank's oldest pending work reaches its timeout
  kWatchdogFire,    // id: rank; the watchdog's poll notices it and aborts the process
  kTermDeath,       // id: rank; a worker the agent sent SIGTERM exits
  kAgentStart,      // id: node; torchrun starts (banner)
  kAgentPoll,       // id: node; the agent's monitor loop looks at its workers
  kAgentReport,     // id: node; all workers are gone: the agent reports and raises
  kAgentExit,       // id: node; the agent process exits
  kSrunReport,      // id: node; srun prints the node's task exits
  kSlurmNodeDown,   // id: node (| phase bit); slurmctld finds the node silent / sets it DOWN
  kStepKill,        // id: 0; KillWait is over: SIGKILL the step's remaining tasks
  kWatchdogAbort,   // id: rank; the flight-recorder dump is over: the watchdog aborts
  kPodSignal,       // id: node; Kubernetes: the kubelet SIGTERMs the pod's torchrun (cleanup)
  kRayDriver,       // id: 0 the trainer lists its workers, 1 the driver learns an actor died
  kRayNodeDead,     // id: node; Ray's GCS marks a silent node dead (missed heartbeats)
  kStoreCheck,      // id: rank; its heartbeat monitor polls the c10d store, which is gone
  kAgentStoreError, // id: node; the agent's monitor loop finds the c10d store gone (or its rendezvous fails)
  kLaunchPoll,      // id: node; DeepSpeed's launch.py polls its children (once a second)
  kLaunchDone,      // id: node; launch.py's children are gone: its ERROR line, exit, pdsh's line
  kSshTimeout,      // id: node; ssh's ServerAlive probes to a dead node ran out
};

inline constexpr std::uint32_t kMaxEventId = (1u << 20) - 1;

struct Event {
  TimeNs time;
  std::uint64_t order;  // seq << 25 | kind << 20 | id

  EventKind kind() const { return static_cast<EventKind>((order >> 20) & 0x1f); }
  std::uint32_t id() const { return static_cast<std::uint32_t>(order & kMaxEventId); }
};

class EventQueue {
 public:
  void Push(TimeNs time, EventKind kind, std::uint32_t id) {
    const std::uint64_t order =
        (next_seq_++ << 25) | (static_cast<std::uint64_t>(kind) << 20) | (id & kMaxEventId);
    heap_.push_back({time, order});
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.front(); }
  Event Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  std::size_t size() const { return heap_.size(); }

 private:
  // std heap functions build a max-heap; "later" as less-than puts the earliest on top.
  static bool Later(const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.order > b.order;
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace denpex::sim
