// The srun launcher and Slurm's controller and step daemons (see slurm.h).
#include "slurm.h"

#include <algorithm>

namespace denpex::sim {

SlurmLauncher::SlurmLauncher(const Job& job, const FaultPlan& fault, EventQueue& queue,
                             RecordSink& sink, Workers& workers)
    : job_(job),
      fault_(fault),
      queue_(queue),
      sink_(sink),
      workers_(workers),
      rng_(job.seed, StreamId::kSlurm, 0),
      tasks_left_(job.world) {
  task_line_.assign(static_cast<std::size_t>(job.world), -1);
  report_pending_.assign(static_cast<std::size_t>(job.nodes), 0);
}

void SlurmLauncher::ScheduleStarts() {
  sink_.Emit(CtldLine{job_.start, CtldEvent::kAllocate, -1, 0});
  if (job_.requeue) sink_.Emit(BatchBanner{job_.start + rng_.UniformInt(50, 400) * kNsPerMs, 0, -1});
}

// slurmstepd tells srun about exits; tasks of a node that exit close together arrive in one
// message and are printed on one line per status.
void SlurmLauncher::OnWorkerExit(int rank, TimeNs t) {
  const int node = job_.NodeOf(rank);
  if (!report_pending_[node]) {
    report_pending_[node] = 1;
    queue_.Push(t + rng_.UniformInt(40, 120) * kNsPerMs, EventKind::kSrunReport,
                static_cast<std::uint32_t>(node));
  }
  TaskGone(t);
}

void SlurmLauncher::OnReport(int node, TimeNs t) {
  report_pending_[node] = 0;
  if (node == silent_node_) return;  // srun gave up on the node with its failure
  const int first = node * job_.gpus_per_node;
  std::vector<int> pending;
  for (int rank = first; rank < first + job_.gpus_per_node; ++rank) {
    if (!workers_.alive(rank) && task_line_[rank] < 0) pending.push_back(rank);
  }
  bool bad_exit = false;
  // The cgroup OOM killer's victim: slurmstepd notes the event, srun says "Out Of Memory".
  auto status = [&](int rank) {
    return rank == workers_.oom_killed() ? kExitOomKilled : workers_.exit_code(rank);
  };
  for (int rank : pending) {
    if (rank == workers_.oom_killed()) {
      sink_.Emit(SrunMessage{t - rng_.UniformInt(1, 20) * kNsPerMs, SrunNotice::kOomEvent, node});
    }
  }
  while (!pending.empty()) {  // one line per status, in order of the first rank's status
    SrunTaskExits line{};
    line.node = node;
    line.time = t;
    line.exit_code = status(pending[0]);
    std::vector<int> rest;
    for (int rank : pending) {
      if (status(rank) != line.exit_code) {
        rest.push_back(rank);
        continue;
      }
      line.ranks[line.count++] = rank;
      task_line_[rank] = task_lines_;
    }
    bad_exit = bad_exit || line.exit_code != 0;
    ++task_lines_;
    sink_.Emit(line);
    pending.swap(rest);
  }
  if (bad_exit && job_.kill_on_bad_exit && !step_cancelled_) {
    CancelStep(t + rng_.UniformInt(1, 5) * kNsPerMs, CancelReason::kNone, false);
  }
}

// Every node's slurmstepd prints its line and SIGTERMs its tasks; KillWait later it
// SIGKILLs what is left. A scheduler cancel also prints the batch step's "JOB" line.
void SlurmLauncher::CancelStep(TimeNs t, CancelReason reason, bool by_scheduler) {
  step_cancelled_ = true;
  cancelled_by_scheduler_ = by_scheduler;
  sink_.Emit(
      SrunMessage{t, by_scheduler ? SrunNotice::kStepAborted : SrunNotice::kTerminatingStep, -1});
  bool job_line = !by_scheduler;  // the batch host (first live node) prints the JOB line
  for (int node = 0; node < job_.nodes; ++node) {
    const TimeNs at = t + rng_.UniformInt(1, 30) * kNsPerMs;
    const TimeNs exits = at + rng_.UniformInt(100, 400) * kNsPerMs;
    const int first = node * job_.gpus_per_node;
    bool live = false;
    for (int rank = first; rank < first + job_.gpus_per_node; ++rank) {
      if (!workers_.alive(rank)) continue;
      live = true;
      queue_.Push(exits + rng_.UniformInt(0, 30) * kNsPerMs, EventKind::kTermDeath,
                  static_cast<std::uint32_t>(rank));
    }
    if (!live || node == silent_node_) continue;  // its slurmd never passes the kill on
    if (!job_line) sink_.Emit(StepdCancelled{node, at, reason, true});
    job_line = true;
    sink_.Emit(StepdCancelled{node, at, reason, false});
  }
  queue_.Push(t + job_.kill_wait, EventKind::kStepKill, 0);
}

void SlurmLauncher::OnJobFault(TimeNs t) {
  CtldEvent event = CtldEvent::kKillRequest;
  CancelReason reason = CancelReason::kNone;
  if (fault_.kind() == v1::FAULT_KIND_TIME_LIMIT) {
    event = CtldEvent::kTimeLimit;
    reason = CancelReason::kTimeLimit;
  } else if (fault_.kind() == v1::FAULT_KIND_PREEMPTION) {
    event = CtldEvent::kPreempted;
    reason = CancelReason::kPreemption;
  }
  sink_.Emit(CtldLine{t, event, -1, 0});
  CancelStep(t + rng_.UniformInt(5, 60) * kNsPerMs, reason, true);
}

// The controller pings a silent node: "not responding" after a third of SlurmdTimeout, DOWN
// after all of it; a job still running there is killed (or requeued).
void SlurmLauncher::OnNodeLost(int node, TimeNs t) {
  ScheduleControllerChecks(node, t);
  for (int i = 0; i < job_.gpus_per_node; ++i) TaskGone(t);
}

// Only slurmd went quiet: the controller's view is the same as for a lost node, but the
// node's ranks train on until the job is ended.
void SlurmLauncher::OnSlurmdSilent(int node, TimeNs t) {
  silent_node_ = node;
  ScheduleControllerChecks(node, t);
}

void SlurmLauncher::ScheduleControllerChecks(int node, TimeNs t) {
  const auto id = static_cast<std::uint32_t>(node);
  queue_.Push(t + job_.slurmd_timeout / 3 + rng_.UniformInt(0, 20'000) * kNsPerMs,
              EventKind::kSlurmNodeDown, id);
  queue_.Push(t + job_.slurmd_timeout + rng_.UniformInt(0, 20'000) * kNsPerMs,
              EventKind::kSlurmNodeDown, id | kDownPhaseBit);
}

void SlurmLauncher::OnControllerCheck(std::uint32_t id, TimeNs t) {
  const int node = static_cast<int>(id & ~kPhaseBits);
  switch (id & kPhaseBits) {
    case 0:
      sink_.Emit(CtldLine{t, CtldEvent::kNotResponding, node, 0});
      return;
    case kDownPhaseBit:
      return NodeDown(node, t);
    case kRespondPhaseBit:
      sink_.Emit(CtldLine{t, CtldEvent::kNowResponding, node, 0});
      return;
    default:
      return StartRequeuedRun(t);
  }
}

void SlurmLauncher::NodeDown(int node, TimeNs t) {
  sink_.Emit(CtldLine{t, CtldEvent::kSetDown, node, 0});
  if (node == silent_node_) {  // slurmd recovers; the node stays DOWN until an admin resumes it
    queue_.Push(t + rng_.UniformInt(30, 240) * kNsPerSec, EventKind::kSlurmNodeDown,
                static_cast<std::uint32_t>(node) | kRespondPhaseBit);
  }
  if (tasks_left_ == 0 || step_cancelled_) return;
  failed_node_ = node;
  requeued_ = job_.requeue;
  sink_.Emit(CtldLine{t, requeued_ ? CtldEvent::kRequeue : CtldEvent::kKillOnFailed, node, 0});
  const TimeNs at = t + rng_.UniformInt(5, 50) * kNsPerMs;
  sink_.Emit(SrunMessage{at, SrunNotice::kNodeFailure, node});
  CancelStep(at, CancelReason::kNodeFailure, true);
}

// The requeued job is eligible again after the credential lifetime (~2 min): a new
// allocation without the failed node; the batch script's banner, the checkpoint load and a
// few iterations of the new run follow in the same slurm-<jobid>.out.
void SlurmLauncher::StartRequeuedRun(TimeNs t) {
  sink_.Emit(CtldLine{t, CtldEvent::kReallocate, failed_node_, 0});
  TimeNs at = t + rng_.UniformInt(300, 1500) * kNsPerMs;
  sink_.Emit(BatchBanner{at, 1, failed_node_});
  const int saved = workers_.last_iteration() / 10 * 10;  // --save-interval 10
  at += rng_.UniformInt(40, 120) * kNsPerSec;             // start-up, NCCL init, checkpoint load
  sink_.Emit(CheckpointResumed{0, at, saved});
  const double elapsed_ms = workers_.last_elapsed_ms() > 0 ? workers_.last_elapsed_ms() : 1500.0;
  for (int k = 1; k <= 5; ++k) {
    const double first = k == 1 ? 4.0 : 1.0;  // the first iteration warms up
    at += static_cast<TimeNs>(elapsed_ms * first * static_cast<double>(kNsPerMs));
    const TrainerIteration line = workers_.IterationLine(saved + k, at, elapsed_ms * first);
    sink_.Emit(ResumedIteration{line, line.time});
  }
  end_time_ = at;
}

void SlurmLauncher::OnStepKill(TimeNs t) {
  for (int rank = 0; rank < job_.world; ++rank) {
    if (workers_.alive(rank)) workers_.Signal(rank, t, kExitSigkill);
  }
}

// The last task is gone: the batch script ends and the controller completes the job, or,
// requeued, schedules its next run.
void SlurmLauncher::TaskGone(TimeNs t) {
  if (--tasks_left_ > 0) return;
  end_time_ = t + rng_.UniformInt(50, 300) * kNsPerMs;
  if (requeued_) {
    queue_.Push(end_time_ + rng_.UniformInt(121, 180) * kNsPerSec, EventKind::kSlurmNodeDown,
                static_cast<std::uint32_t>(failed_node_) | kPhaseBits);
    return;
  }
  bool failed = false;
  for (int rank = 0; rank < job_.world && !failed; ++rank) failed = workers_.exit_code(rank) != 0;
  const int status = cancelled_by_scheduler_ ? kExitSigterm : failed ? 1 : 0;
  sink_.Emit(CtldLine{end_time_, CtldEvent::kJobComplete, -1, status});
  sink_.Emit(CtldLine{end_time_, CtldEvent::kJobDone, -1, 0});
}

}  // namespace denpex::sim
