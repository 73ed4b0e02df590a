// mpirun's behaviour (see mpirun.h): the first failure aborts the job.
#include "mpirun.h"

namespace denpex::sim {

MpirunLauncher::MpirunLauncher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers)
    : job_(job), queue_(queue), sink_(sink), workers_(workers), rng_(job.seed, StreamId::kMpirun, 0),
      ranks_left_(job.world) {}

// The daemons start their ranks 0.2-1.5 s after mpirun (ssh fan-out), each printing its
// node's binding lines before the first rank's output.
void MpirunLauncher::Start() {
  if (!job_.report_bindings) return;
  for (int node = 0; node < job_.nodes; ++node) {
    const TimeNs at = job_.start + Rng(job_.seed, StreamId::kMpirun, 1 + static_cast<std::uint64_t>(node)).UniformInt(200, 1500) * kNsPerMs;
    sink_.Emit(MpirunNotice{at, MpiNotice::kBindings, node * job_.gpus_per_node, node, 0});
  }
}

// The orted sees its child exit and tells the HNP; the first non-zero exit (or signal) aborts.
void MpirunLauncher::OnWorkerExit(int rank, TimeNs t) {
  if (--ranks_left_ == 0) end_time_ = t + rng_.UniformInt(20, 200) * kNsPerMs;
  if (aborting_ || workers_.exit_code(rank) == 0) return;
  const TimeNs at = t + rng_.UniformInt(5, 80) * kNsPerMs;
  const int code = workers_.exit_code(rank);
  sink_.Emit(MpirunNotice{at, code < 0 ? MpiNotice::kSignal : MpiNotice::kExitCode, rank, job_.NodeOf(rank), code});
  Abort(at);
}

// Nothing reaches mpirun when a host dies: its TCP connection to the node's orted only times
// out (keepalive: 300 s idle, then probes 20 s apart).
void MpirunLauncher::OnNodeLost(int node, TimeNs t) {
  ranks_left_ -= job_.gpus_per_node;
  const TimeNs at = t + (300 + rng_.UniformInt(20, 180)) * kNsPerSec;
  queue_.Push(at, EventKind::kSrunReport, static_cast<std::uint32_t>(node));
}

void MpirunLauncher::OnDaemonLost(int node, TimeNs t) {
  if (aborting_) return;
  sink_.Emit(MpirunNotice{t, MpiNotice::kLostDaemon, -1, node, 0});
  Abort(t);
}

// SIGTERM to every live rank (they exit silently), SIGKILL to what is left a few seconds on.
void MpirunLauncher::Abort(TimeNs t) {
  aborting_ = true;
  for (int rank = 0; rank < job_.world; ++rank) {
    if (!workers_.alive(rank)) continue;
    queue_.Push(t + rng_.UniformInt(30, 600) * kNsPerMs, EventKind::kTermDeath, static_cast<std::uint32_t>(rank));
  }
  queue_.Push(t + 5 * kNsPerSec, EventKind::kStepKill, 0);
}

void MpirunLauncher::OnKill(TimeNs t) {
  for (int rank = 0; rank < job_.world; ++rank) {
    if (workers_.alive(rank)) workers_.Signal(rank, t, kExitSigkill);
  }
}

}  // namespace denpex::sim
