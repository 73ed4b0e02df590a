// The event loop (see model.h): schedules the processes' starts, dispatches events by kind
// to the workers or the agents, stops at the safety horizon; and the fault's resolution.
#include "model.h"

#include <algorithm>

namespace denpex::sim {

Model::Model(const Job& job, const FaultPlan& fault, RecordSink& sink)
    : job_(job),
      fault_(fault),
      workers_(job, fault, queue_, sink),
      launcher_(job, queue_, sink, workers_, fault.kind() == v1::FAULT_KIND_POD_OOMKILLED,
                fault.action() == FaultAction::kRendezvousTimeout ? fault.node : -1),
      slurm_(job, fault, queue_, sink, workers_),
      mpirun_(job, queue_, sink, workers_),
      pdsh_(job, queue_, sink, workers_, fault.action() == FaultAction::kStoreJoinTimeout ? fault.node : -1),
      ray_(job, fault, queue_, sink, workers_) {
  if (job.launcher == v1::LAUNCHER_SRUN) {
    workers_.set_exit_listener(&slurm_);
  } else if (job.launcher == v1::LAUNCHER_MPIRUN) {
    workers_.set_exit_listener(&mpirun_);
  } else if (job.launcher == v1::LAUNCHER_PDSH) {
    workers_.set_exit_listener(&pdsh_);
  } else if (job.launcher == v1::LAUNCHER_RAY) {
    workers_.set_exit_listener(&ray_);
  } else {
    workers_.set_exit_listener(&launcher_);
  }
}

// Far beyond any plausible end: the steps up to the fault (each generously pp + 2 compute
// times long), then a few watchdog timeouts and SIGTERM graces, then ten minutes. Computed
// in double and capped, so extreme scenarios cannot overflow it.
TimeNs Model::Horizon() const {
  const double slow = static_cast<double>(fault_.slow_steps) * fault_.slowdown;  // fail-slow
  const double steps = (static_cast<double>(fault_.step + 10) + slow) *
                       static_cast<double>(job_.step_time) * static_cast<double>(job_.pp + 2);
  const double horizon = static_cast<double>(job_.start) + 660.0 * kNsPerSec + steps +
                         4.0 * static_cast<double>(job_.nccl_timeout + job_.sigterm_grace +
                                                   job_.kill_wait + job_.slurmd_timeout);
  return horizon < 4e18 ? static_cast<TimeNs>(horizon) : static_cast<TimeNs>(4e18);
}

Outcome Model::Run(const ModelProgress& progress) {
  workers_.ScheduleStarts();
  if (job_.deepspeed_runner) pdsh_.StartRunnerOnly();  // `deepspeed --launcher openmpi|slurm`
  if (job_.launcher == v1::LAUNCHER_SRUN) {
    slurm_.ScheduleStarts();
  } else if (job_.launcher == v1::LAUNCHER_RAY) {
    ray_.ScheduleStarts();
  } else if (job_.launcher == v1::LAUNCHER_PDSH) {
    pdsh_.Start();  // each node's launch.py starts its ranks (at its agent_start)
  } else if (job_.launcher != v1::LAUNCHER_MPIRUN) {
    launcher_.ScheduleStarts();
  } else {
    mpirun_.Start();  // mpirun starts the ranks itself; its daemons report their bindings
  }
  Outcome out;
  const TimeNs horizon = Horizon();
  // nccl_ras: the poller runs beside the job and changes nothing in it; the job's state between
  // two events is what a poll between them sees (the events at a poll's instant before it).
  const TimeNs every = job_.nccl_ras.every;
  TimeNs next_poll = every > 0 ? job_.start : -1;
  while (!queue_.empty()) {
    if (queue_.top().time > horizon) {
      out.reached_horizon = true;
      break;
    }
    while (next_poll >= 0 && next_poll < queue_.top().time) {
      workers_.PollRas(next_poll);
      next_poll += every;
    }
    Dispatch(queue_.Pop());
    ++out.events;
    if (progress && out.events % kProgressEvery == 0 && !queue_.empty()) {
      progress({.now = queue_.top().time,
                .events = out.events,
                .step = workers_.step(0),
                .fault_time = workers_.fault_time()});
    }
  }
  // A run nothing ended (fail-slow logs collected from the running job) ends at its last step.
  out.end_time = out.reached_horizon ? horizon : workers_.last_step_end();
  for (int rank = 0; rank < job_.world; ++rank)
    out.end_time = std::max(out.end_time, workers_.exit_time(rank));
  for (int node = 0; node < job_.nodes; ++node)
    out.end_time = std::max(out.end_time, launcher_.exit_time(node));
  out.end_time = std::max(out.end_time, slurm_.end_time());
  out.end_time = std::max(out.end_time, mpirun_.end_time());
  out.end_time = std::max(out.end_time, pdsh_.end_time());
  out.end_time = std::max(out.end_time, ray_.end_time());
  // A job left hanging (async error handling 0) is collected a while after its last timeout.
  if (job_.async_error_handling == 0 && workers_.last_watchdog_fire() > 0) {
    out.end_time = std::max(out.end_time, workers_.last_watchdog_fire() + 60 * kNsPerSec);
  }
  // The poller's last polls: the processes still alive at the end until the job is torn down.
  if (next_poll >= 0) {
    for (; next_poll <= out.end_time && workers_.AnyAlive(); next_poll += every) {
      workers_.PollRas(next_poll);
    }
    workers_.EmitRasReports();
  }
  return out;
}

void Model::Dispatch(const Event& e) {
  const auto id = static_cast<int>(e.id());
  switch (e.kind()) {
    case EventKind::kRankStart:
      workers_.OnStart(id, e.time);
      break;
    case EventKind::kRankResume:
      workers_.OnResume(id, e.time);
      break;
    case EventKind::kRendezvousDone:
      workers_.OnRendezvousDone(e.id(), e.time);
      break;
    case EventKind::kFault:
      if (fault_.traits->scope == FaultScope::kJob && fault_.action() != FaultAction::kJobException) {
        slurm_.OnJobFault(e.time);
      } else if (fault_.action() == FaultAction::kSlurmdSilent) {
        slurm_.OnSlurmdSilent(id, e.time);
      } else {
        workers_.OnFault(e.id(), e.time);
      }
      break;
    case EventKind::kRankExit:
      workers_.OnExceptionExit(id, e.time);
      break;
    case EventKind::kWatchdogCheck:
      workers_.OnWatchdogCheck(id, e.time);
      break;
    case EventKind::kWatchdogFire:
      workers_.OnWatchdogFire(id, e.time);
      break;
    case EventKind::kTermDeath:
      workers_.Terminate(id, e.time);
      break;
    case EventKind::kSrunReport:  // under mpirun: the HNP's word that a node's orted is gone
      if (job_.launcher == v1::LAUNCHER_MPIRUN) {
        mpirun_.OnDaemonLost(id, e.time);
      } else {
        slurm_.OnReport(id, e.time);
      }
      break;
    case EventKind::kSlurmNodeDown:
      slurm_.OnControllerCheck(e.id(), e.time);
      break;
    case EventKind::kWatchdogAbort:
      workers_.OnWatchdogAbort(e.id(), e.time);
      break;
    case EventKind::kStepKill:
      if (job_.launcher == v1::LAUNCHER_MPIRUN) {
        mpirun_.OnKill(e.time);
      } else {
        slurm_.OnStepKill(e.time);
      }
      break;
    case EventKind::kAgentStart:
      launcher_.OnAgentStart(id, e.time);
      break;
    case EventKind::kAgentPoll:
      launcher_.OnPoll(id, e.time);
      break;
    case EventKind::kAgentReport:
      launcher_.OnReport(id, e.time);
      break;
    case EventKind::kAgentExit:
      launcher_.OnAgentExit(id, e.time);
      break;
    case EventKind::kPodSignal:
      launcher_.OnPodSignal(id, e.time);
      break;
    case EventKind::kRayDriver:
      ray_.OnDriver(e.id(), e.time);
      break;
    case EventKind::kRayNodeDead:
      ray_.OnNodeDead(id, e.time);
      break;
    case EventKind::kStoreCheck:
      workers_.OnStoreCheck(id, e.time);
      break;
    case EventKind::kAgentStoreError:
      launcher_.OnStoreError(id, e.time);
      break;
    case EventKind::kLaunchPoll:
      pdsh_.OnPoll(id, e.time);
      break;
    case EventKind::kLaunchDone:
      pdsh_.OnDone(id, e.time);
      break;
    case EventKind::kSshTimeout:
      pdsh_.OnSshTimeout(id, e.time);
      break;
  }
}

}  // namespace denpex::sim
