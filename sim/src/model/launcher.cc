// The torchrun agents' behaviour (see launcher.h): banner, grid polls, teardown, report.
#include "launcher.h"

#include <algorithm>

namespace denpex::sim {

Launcher::Launcher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers,
                   bool oom_group_kill, int rendezvous_node)
    : job_(job),
      queue_(queue),
      sink_(sink),
      workers_(workers),
      oom_group_kill_(oom_group_kill),
      rendezvous_node_(rendezvous_node) {
  const auto n = static_cast<std::size_t>(job.nodes);
  phase_.assign(n, Phase::kMonitoring);
  poll_pending_.assign(n, 0);
  reported_.assign(n, 0);
  lost_.assign(n, 0);
  exit_time_.assign(n, -1);
  report_.resize(n);
  signalled_.assign(n, 0);
  store_failed_.assign(n, 0);
  pod_end_.assign(n, PodEnd::kRunning);
  signal_time_.assign(n, -1);
  rng_.reserve(n);
  for (std::size_t node = 0; node < n; ++node) rng_.emplace_back(job.seed, StreamId::kAgent, node);
}

void Launcher::ScheduleStarts() {
  for (int node = 0; node < job_.nodes; ++node) {
    queue_.Push(job_.agent_start[node], EventKind::kAgentStart, static_cast<std::uint32_t>(node));
    if (rendezvous_node_ < 0) continue;
    // The unreachable node's TCPStore client gives up after its 60 s connect timeout; the others
    // wait out the rendezvous join timeout (torchrun's rdzv_configs default, 900 s).
    const TimeNs wait = (node == rendezvous_node_ ? 60 : 900) * kNsPerSec + rng_[node].UniformInt(1, 400) * kNsPerMs;
    queue_.Push(job_.agent_start[node] + wait, EventKind::kAgentStoreError, static_cast<std::uint32_t>(node));
  }
}

void Launcher::OnAgentStart(int node, TimeNs t) { sink_.Emit(AgentBanner{node, t}); }

TimeNs Launcher::NextPollAfter(int node, TimeNs t) const {
  const TimeNs phase = job_.agent_start[node];
  const TimeNs k = t < phase ? 0 : (t - phase) / job_.monitor_interval + 1;
  return phase + k * job_.monitor_interval;
}

void Launcher::OnWorkerExit(int rank, TimeNs t) {
  const int node = job_.NodeOf(rank);
  if (phase_[node] != Phase::kMonitoring || poll_pending_[node]) return;
  poll_pending_[node] = 1;
  queue_.Push(NextPollAfter(node, t), EventKind::kAgentPoll, static_cast<std::uint32_t>(node));
}

// Records every exited worker in local-rank order (torch keeps failures in a dict filled in
// that order, and all failures of one poll share its one-second timestamp, so the first is
// the root cause), then SIGTERMs the live ones and waits for them.
void Launcher::OnPoll(int node, TimeNs t) {
  poll_pending_[node] = 0;
  if (phase_[node] != Phase::kMonitoring) return;
  phase_[node] = Phase::kStopping;
  AgentFailureReport& report = report_[node];
  report.node = node;
  report.poll_time = t;
  report.failure_count = 0;
  const int first = node * job_.gpus_per_node;
  for (int rank = first; rank < first + job_.gpus_per_node; ++rank) {
    if (!workers_.alive(rank))
      report.failures[report.failure_count++] = {rank, workers_.exit_code(rank)};
  }
  StopWorkers(node, t);
}

void Launcher::StopWorkers(int node, TimeNs t) {
  const int first = node * job_.gpus_per_node;
  Rng& rng = rng_[node];
  TimeNs all_gone = t;
  TimeNs print = t;
  for (int rank = first; rank < first + job_.gpus_per_node; ++rank) {
    if (!workers_.alive(rank)) continue;
    print += rng.UniformInt(80, 400) * kNsPerUs;
    sink_.Emit(AgentSigterm{node, print, rank});
    const TimeNs death = print + std::min(rng.UniformInt(50, 500) * kNsPerMs, job_.sigterm_grace);
    queue_.Push(death, EventKind::kTermDeath, static_cast<std::uint32_t>(rank));
    all_gone = std::max(all_gone, death);
  }
  queue_.Push(all_gone + rng.UniformInt(2, 20) * kNsPerMs, EventKind::kAgentReport,
              static_cast<std::uint32_t>(node));
}

void Launcher::OnReport(int node, TimeNs t) {
  if (lost_[node]) return;
  if (signalled_[node]) {
    sink_.Emit(AgentSignalled{node, t, true});
  } else if (store_failed_[node]) {
    reported_[node] = 1;  // its traceback is one secondary error
    sink_.Emit(AgentStoreFailure{node, t});
  } else {
    AgentFailureReport& report = report_[node];
    report.time = t;
    reported_[node] = 1;
    sink_.Emit(report);
  }
  queue_.Push(t + rng_[node].UniformInt(30, 120) * kNsPerMs, EventKind::kAgentExit,
              static_cast<std::uint32_t>(node));
}

// The agent vanished with its node: no report, no exit line.
void Launcher::OnNodeLost(int node, TimeNs t) {
  phase_[node] = Phase::kExited;
  lost_[node] = 1;
  exit_time_[node] = t;
  sink_.Emit(NodeLost{node, t});
  if (!kubernetes()) return;
  if (oom_group_kill_) {
    PodFailed(node, t, PodEnd::kOomKilled);  // the container exits 137 at once
  } else {
    // The node controller marks the node NotReady after its grace period (40 s), the taint
    // manager deletes its pods after the 300 s toleration: only then does the job see it.
    PodFailed(node, t + 340 * kNsPerSec + rng_[node].UniformInt(0, 5'000) * kNsPerMs, PodEnd::kNodeLost);
  }
}

// torchrun's SignalException handler: the warning, SIGTERM to the workers, and once they are
// gone the traceback and the exit (OnReport). A pod already stopping ignores it.
void Launcher::OnNodeEvicted(int node, TimeNs t) {
  pod_end_[node] = PodEnd::kEvicted;
  OnPodSignal(node, t);
}

void Launcher::OnPodSignal(int node, TimeNs t) {
  if (phase_[node] != Phase::kMonitoring || lost_[node]) return;
  if (pod_end_[node] == PodEnd::kRunning) pod_end_[node] = PodEnd::kDeleted;
  phase_[node] = Phase::kStopping;
  signalled_[node] = 1;
  signal_time_[node] = t;
  sink_.Emit(AgentSignalled{node, t, false});
  StopWorkers(node, t);
}

void Launcher::OnStoreLost(int node, TimeNs t) {
  for (int other = 0; other < job_.nodes; ++other) {
    if (other == node || phase_[other] != Phase::kMonitoring) continue;
    queue_.Push(NextPollAfter(other, t) + rng_[other].UniformInt(1, 30) * kNsPerMs, EventKind::kAgentStoreError,
                static_cast<std::uint32_t>(other));
  }
}

void Launcher::OnRendezvousFailed(int node, TimeNs t) {
  if (phase_[node] != Phase::kMonitoring) return;
  phase_[node] = Phase::kStopping;
  const bool timed_out = node != rendezvous_node_;
  if (!timed_out) workers_.NoteFault(t);
  reported_[node] = timed_out ? 1 : 0;  // each other agent's timeout is one secondary error
  sink_.Emit(AgentRendezvousFailure{node, t, timed_out});
  queue_.Push(t + rng_[node].UniformInt(30, 120) * kNsPerMs, EventKind::kAgentExit, static_cast<std::uint32_t>(node));
}

// The agent's run() stops its workers on the way out (its `finally`), then the exception ends it.
void Launcher::OnStoreError(int node, TimeNs t) {
  if (rendezvous_node_ >= 0) return OnRendezvousFailed(node, t);
  if (phase_[node] != Phase::kMonitoring || lost_[node]) return;
  phase_[node] = Phase::kStopping;
  store_failed_[node] = 1;
  StopWorkers(node, t);
}

// The controller (PyTorchJob, JobSet with backoffLimit 0) sees a pod fail, marks the job failed
// and deletes the other pods: their kubelets SIGTERM each torchrun a moment later.
// A PyTorchJob with restartPolicy OnFailure (kubernetes.restarts) deletes nothing: the kubelet
// restarts each failed container in place, and the other pods fail on their own.
void Launcher::PodFailed(int node, TimeNs t, PodEnd how) {
  if (pod_end_[node] == PodEnd::kRunning || how != PodEnd::kError) pod_end_[node] = how;
  if (job_failed_ >= 0 || (job_.KubeRestartsInPlace() && first_failed_pod_ >= 0)) return;
  first_failed_pod_ = node;
  if (job_.KubeRestartsInPlace()) return;
  Rng& rng = rng_[node];
  job_failed_ = t + rng.UniformInt(200, 2'500) * kNsPerMs;
  for (int other = 0; other < job_.nodes; ++other) {
    if (other == node) continue;
    queue_.Push(job_failed_ + rng.UniformInt(50, 900) * kNsPerMs, EventKind::kPodSignal,
                static_cast<std::uint32_t>(other));
  }
}

void Launcher::OnAgentExit(int node, TimeNs t) {
  if (lost_[node]) return;
  phase_[node] = Phase::kExited;
  exit_time_[node] = t;
  sink_.Emit(AgentExit{node, t});
  if (!kubernetes()) return;
  if (node == rendezvous_node_ && job_.kube_attempt > 0) return;  // a restart's Pending pod: it never ran
  if (pod_end_[node] == PodEnd::kRunning) pod_end_[node] = PodEnd::kError;
  if (pod_end_[node] != PodEnd::kDeleted) PodFailed(node, t, pod_end_[node]);
}

}  // namespace denpex::sim
