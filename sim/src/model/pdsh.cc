// DeepSpeed's launcher over pdsh (see pdsh.h).
#include "pdsh.h"

#include <algorithm>

namespace denpex::sim {

int SshExitStatus(int return_code) { return return_code & 0xff; }

PdshLauncher::PdshLauncher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers, int silent_node)
    : job_(job), queue_(queue), sink_(sink), workers_(workers), silent_node_(silent_node), nodes_left_(job.nodes) {
  const auto n = static_cast<std::size_t>(job.nodes);
  phase_.assign(n, Phase::kRunning);
  poll_pending_.assign(n, 0);
  return_code_.assign(n, 0);
  next_kill_.assign(n, 0);
  rng_.reserve(n);
  for (std::size_t node = 0; node < n; ++node) rng_.emplace_back(job.seed, StreamId::kPdsh, node);
}

// The runner logs its pdsh command line just before the fan-out; each node's launch.py logs
// its start-up lines as ssh starts it (the node's agent_start).
void PdshLauncher::Start() {
  const TimeNs first = *std::min_element(job_.agent_start.begin(), job_.agent_start.end());
  sink_.Emit(PdshNotice{first - 350 * kNsPerMs, PdshNoticeKind::kRunner, -1, 0});
  for (int node = 0; node < job_.nodes; ++node) {
    if (node != silent_node_) sink_.Emit(PdshNotice{job_.agent_start[node], PdshNoticeKind::kLaunch, node, 0});
  }
}

void PdshLauncher::StartRunnerOnly() {
  const TimeNs first = *std::min_element(job_.agent_start.begin(), job_.agent_start.end());
  sink_.Emit(PdshNotice{std::max(job_.start + 20 * kNsPerMs, first - 150 * kNsPerMs), PdshNoticeKind::kRunner, -1, 0});
}

// launch.py's loop polls every child, then sleeps a second: a failure is seen within ~1 s.
// While it kills its node's children one by one, each one's end lets it go on to the next.
void PdshLauncher::OnWorkerExit(int rank, TimeNs t) {
  const int node = job_.NodeOf(rank);
  if (phase_[node] == Phase::kKilling && rank == node * job_.gpus_per_node + next_kill_[node] - 1) {
    return KillNext(node, t + rng_[node].UniformInt(1, 3) * kNsPerMs);
  }
  if (phase_[node] != Phase::kRunning || poll_pending_[node] || workers_.exit_code(rank) == 0) return;
  poll_pending_[node] = 1;
  queue_.Push(t + rng_[node].UniformInt(5, 1000) * kNsPerMs, EventKind::kLaunchPoll, static_cast<std::uint32_t>(node));
}

// sigkill_handler: "Killing subprocess <pid>" for every child (the dead one too), each
// terminated in turn (SIGTERM; the training processes die at once, silently, and psutil waits
// for each), then the ERROR line with the first failed child's return code, and sys.exit(rc).
void PdshLauncher::OnPoll(int node, TimeNs t) {
  poll_pending_[node] = 0;
  if (phase_[node] != Phase::kRunning) return;
  phase_[node] = Phase::kKilling;
  const int first = node * job_.gpus_per_node;
  TimeNs earliest = -1;
  for (int rank = first; rank < first + job_.gpus_per_node; ++rank) {
    if (workers_.alive(rank) || workers_.exit_code(rank) == 0) continue;
    if (earliest < 0 || workers_.exit_time(rank) < earliest) {
      earliest = workers_.exit_time(rank);
      return_code_[node] = workers_.exit_code(rank);
    }
  }
  next_kill_[node] = 0;
  KillNext(node, t);
}

// Prints the next child's "Killing subprocess" line and SIGTERMs it (it dies silently 20-400 ms
// later: OnWorkerExit goes on); a child already gone is passed at once.
void PdshLauncher::KillNext(int node, TimeNs t) {
  const int first = node * job_.gpus_per_node;
  while (next_kill_[node] < job_.gpus_per_node) {
    const int rank = first + next_kill_[node]++;
    sink_.Emit(PdshNotice{t, PdshNoticeKind::kKilling, node, job_.LocalRank(rank)});
    t += rng_[node].UniformInt(1, 4) * kNsPerMs;  // psutil's process-tree walk
    if (workers_.alive(rank)) {
      queue_.Push(t + rng_[node].UniformInt(20, 400) * kNsPerMs, EventKind::kTermDeath, static_cast<std::uint32_t>(rank));
      return;
    }
  }
  queue_.Push(t + rng_[node].UniformInt(1, 5) * kNsPerMs, EventKind::kLaunchDone, static_cast<std::uint32_t>(node));
}

void PdshLauncher::OnDone(int node, TimeNs t) {
  if (phase_[node] != Phase::kKilling) return;
  phase_[node] = Phase::kExited;
  sink_.Emit(PdshNotice{t, PdshNoticeKind::kLaunchError, node, return_code_[node]});
  const TimeNs exit = t + rng_[node].UniformInt(30, 250) * kNsPerMs;  // interpreter exit, ssh's teardown
  sink_.Emit(PdshNotice{exit, PdshNoticeKind::kSshExit, node, SshExitStatus(return_code_[node])});
  NodeEnded(exit);
}

// The host is gone under the session: nothing arrives until ssh's ServerAlive probes (sent
// every interval once the session is idle) go unanswered `count` times.
void PdshLauncher::OnNodeLost(int node, TimeNs t) {
  if (phase_[node] == Phase::kExited || phase_[node] == Phase::kLost) return;
  phase_[node] = Phase::kLost;
  const TimeNs interval = job_.ssh_alive_interval;
  const TimeNs at = t + rng_[node].UniformInt(0, interval / kNsPerMs) * kNsPerMs + interval * job_.ssh_alive_count;
  queue_.Push(at, EventKind::kSshTimeout, static_cast<std::uint32_t>(node));
}

void PdshLauncher::OnSshTimeout(int node, TimeNs t) {
  sink_.Emit(PdshNotice{t, PdshNoticeKind::kSshTimeout, node, 255});
  sink_.Emit(PdshNotice{t + rng_[node].UniformInt(1, 20) * kNsPerMs, PdshNoticeKind::kSshExit, node, 255});
  NodeEnded(t);
}

// pdsh returns once every ssh has; the runner exits with its status (pdsh -S: the largest).
void PdshLauncher::NodeEnded(TimeNs t) {
  if (--nodes_left_ == 0) end_time_ = t + rng_[0].UniformInt(20, 300) * kNsPerMs;
}

}  // namespace denpex::sim
