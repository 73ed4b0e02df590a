// The Ray launcher's behaviour (see ray.h).
#include "ray.h"

#include <algorithm>

namespace denpex::sim {

RayLauncher::RayLauncher(const Job& job, const FaultPlan& fault, EventQueue& queue, RecordSink& sink,
                         Workers& workers)
    : job_(job), fault_(fault), queue_(queue), sink_(sink), workers_(workers), rng_(job.seed, StreamId::kAgent, 1u << 30) {}

void RayLauncher::ScheduleStarts() { queue_.Push(job_.start + 1'200 * kNsPerMs, EventKind::kRayDriver, 0); }

void RayLauncher::OnWorkerExit(int rank, TimeNs t) {
  if (detected_ || first_rank_ >= 0) return;
  first_rank_ = rank;
  queue_.Push(t + rng_.UniformInt(20, 300) * kNsPerMs, EventKind::kRayDriver, 1);
}

// The node's actors die with it, but only the GCS's verdict tells the driver.
void RayLauncher::OnNodeLost(int node, TimeNs t) {
  queue_.Push(t + rng_.UniformInt(15'000, 45'000) * kNsPerMs, EventKind::kRayNodeDead, static_cast<std::uint32_t>(node));
}

void RayLauncher::OnDriver(std::uint32_t id, TimeNs t) {
  if (id == 0) {
    sink_.Emit(RayWorkerTable{t});
    return;
  }
  RayDeath cause = RayDeath::kWorkerDied;
  if (fault_.kind() == v1::FAULT_KIND_RAY_OOM_KILL) cause = RayDeath::kMemoryMonitor;
  // The training function raised: the actor lives, ray.get returns its RayTaskError.
  if (workers_.exit_code(first_rank_) == kExitException) cause = RayDeath::kTaskError;
  Detect(t, first_rank_, cause);
}

void RayLauncher::OnNodeDead(int node, TimeNs t) {
  sink_.Emit(RayNodeDead{node, t});
  Detect(t + rng_.UniformInt(50, 500) * kNsPerMs, node * job_.gpus_per_node, RayDeath::kNodeDied);
}

// The driver prints the error (the raylet's OOM summary first, when its memory monitor killed
// the worker), then shuts the worker group down: Ray Train asks each actor to terminate and
// gives them 5 s of patience (WorkerGroup.shutdown), but an actor busy in its training function
// cannot run the request, so it is killed when the patience runs out.
void RayLauncher::Detect(TimeNs t, int rank, RayDeath cause) {
  if (detected_ || rank < 0) return;
  detected_ = true;
  if (cause == RayDeath::kMemoryMonitor) sink_.Emit(RayletOomKill{job_.NodeOf(rank), t - rng_.UniformInt(5, 15) * kNsPerMs});
  sink_.Emit(RayActorDied{rank, t, cause, fault_.variant, AppErrorOf(fault_.kind())});
  end_time_ = t;
  for (int r = 0; r < job_.world; ++r) {
    if (!workers_.alive(r)) continue;
    const TimeNs death = t + rng_.UniformInt(5'000, 5'400) * kNsPerMs;
    queue_.Push(death, EventKind::kTermDeath, static_cast<std::uint32_t>(r));  // alive (and timing out) until then
    end_time_ = std::max(end_time_, death);
  }
}

}  // namespace denpex::sim
