// The torchrun agents' behaviour (see launcher.h): banner, grid polls, teardown, report.
#include "launcher.h"

#include <algorithm>

namespace denpex::sim {

Launcher::Launcher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers)
    : job_(job), queue_(queue), sink_(sink), workers_(workers) {
  const auto n = static_cast<std::size_t>(job.nodes);
  phase_.assign(n, Phase::kMonitoring);
  poll_pending_.assign(n, 0);
  reported_.assign(n, 0);
  lost_.assign(n, 0);
  exit_time_.assign(n, -1);
  report_.resize(n);
  rng_.reserve(n);
  for (std::size_t node = 0; node < n; ++node) rng_.emplace_back(job.seed, StreamId::kAgent, node);
}

void Launcher::ScheduleStarts() {
  for (int node = 0; node < job_.nodes; ++node) {
    queue_.Push(job_.agent_start[node], EventKind::kAgentStart, static_cast<std::uint32_t>(node));
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
  AgentFailureReport& report = report_[node];
  report.time = t;
  reported_[node] = 1;
  sink_.Emit(report);
  queue_.Push(t + rng_[node].UniformInt(30, 120) * kNsPerMs, EventKind::kAgentExit,
              static_cast<std::uint32_t>(node));
}

// The agent vanished with its node: no report, no exit line.
void Launcher::OnNodeLost(int node, TimeNs t) {
  phase_[node] = Phase::kExited;
  lost_[node] = 1;
  exit_time_[node] = t;
  sink_.Emit(NodeLost{node, t});
}

void Launcher::OnAgentExit(int node, TimeNs t) {
  if (lost_[node]) return;
  phase_[node] = Phase::kExited;
  exit_time_[node] = t;
  sink_.Emit(AgentExit{node, t});
}

}  // namespace denpex::sim
