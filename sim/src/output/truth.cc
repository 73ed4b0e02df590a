// Builds truth.json (see truth.h) from the model's final state and the writer's citations.
// The evidence rules per fault action are in EvidenceFor(); docs/truth_format.md states them.
#include "truth.h"

#include <algorithm>
#include <set>

#include "denpex/common/time.h"

namespace denpex::sim {

namespace {

// A line that did not survive (realism: its file is missing or cut) cannot be required.
void AddEvidence(const Citation* c, v1::EvidenceRole role, v1::Truth* truth) {
  if (c == nullptr || !c->intact) return;
  v1::Evidence* e = truth->add_evidence();
  e->set_file(c->line.file);
  e->set_line(static_cast<std::int32_t>(c->line.line));
  e->set_text(c->line.text);
  e->set_role(role);
}

// The earliest surviving watchdog block of a rank other than `except` (the first peer to
// time out whose line is in the incident).
const Citation* FirstPeerWatchdog(const IncidentWriter& writer, int except) {
  const Citation* best = nullptr;
  for (const Citation& c : writer.citations()) {
    if (c.what != Cite::kWatchdog || c.subject == except || !c.intact) continue;
    if (best == nullptr || c.time < best->time) best = &c;
  }
  return best;
}

// A job-wide exception: every rank raised the same error at about the same time, so no rank's
// line is more initiating than another's; the lowest surviving rank's is cited, and the next.
void JobExceptionEvidence(const IncidentWriter& w, v1::Truth* truth) {
  const Citation* first = nullptr;
  const Citation* second = nullptr;
  for (const Citation& c : w.citations()) {
    if (c.what != Cite::kException || !c.intact) continue;
    if (first == nullptr || c.subject < first->subject) {
      second = first;
      first = &c;
    } else if (second == nullptr || c.subject < second->subject) {
      second = &c;
    }
  }
  AddEvidence(first, v1::EVIDENCE_ROLE_INITIATING, truth);
  AddEvidence(second, v1::EVIDENCE_ROLE_CORROBORATING, truth);
}

// Fail-slow: the slow rank's (the slow node's first rank's) first timer line of a slowed step;
// when it then stalled, the first peer's watchdog timeout too.
void SlowdownEvidence(const TruthInputs& in, v1::Truth* truth) {
  AddEvidence(in.writer.Find(Cite::kSlowTimers, in.fault.rank), v1::EVIDENCE_ROLE_INITIATING, truth);
  if (in.fault.stall) {
    AddEvidence(FirstPeerWatchdog(in.writer, in.fault.rank), v1::EVIDENCE_ROLE_CONSEQUENCE, truth);
  }
}

// NCCL set-up: the WARN of the node's lowest failing rank whose line survived (realism may lose
// a rank's file; any of the node's WARNs is the same evidence).
const Citation* LowestSetupWarn(const TruthInputs& in) {
  const int first = in.fault.node * in.job.gpus_per_node;
  for (int rank = first; rank < first + in.job.gpus_per_node; ++rank) {
    const Citation* c = in.writer.Find(Cite::kSetupWarn, rank);
    if (c != nullptr && c->intact) return c;
  }
  return nullptr;
}

// A launcher that reports each rank's end (srun's `task N: <status>`, mpirun's first-failure
// block) adds `exit`, its line for the rank, to the rank's own lines; the rest of the evidence
// is the same under either. False for the faults the launcher itself tells (node loss, the
// scheduler's decisions), left to the caller.
bool RankEvidence(const TruthInputs& in, Cite exit, v1::Truth* truth) {
  const IncidentWriter& w = in.writer;
  const int rank = in.fault.rank;
  constexpr auto kInit = v1::EVIDENCE_ROLE_INITIATING;
  constexpr auto kCorr = v1::EVIDENCE_ROLE_CORROBORATING;
  switch (in.fault.action()) {
    case FaultAction::kSigkill:
      AddEvidence(w.Find(exit, rank), kInit, truth);
      return true;
    case FaultAction::kSegfault:
      AddEvidence(w.Find(Cite::kSegfault, rank), kInit, truth);
      AddEvidence(w.Find(exit, rank), kCorr, truth);
      return true;
    case FaultAction::kException:
      AddEvidence(w.Find(Cite::kException, rank), kInit, truth);
      AddEvidence(w.Find(exit, rank), kCorr, truth);
      return true;
    case FaultAction::kHang:
      AddEvidence(FirstPeerWatchdog(w, rank), v1::EVIDENCE_ROLE_CONSEQUENCE, truth);
      return true;
    case FaultAction::kMismatch:
      AddEvidence(w.Find(Cite::kWatchdog, rank), kInit, truth);
      AddEvidence(FirstPeerWatchdog(w, rank), kCorr, truth);
      return true;
    case FaultAction::kCudaError:
      AddEvidence(w.Find(Cite::kException, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kKernel, in.fault.node), kInit, truth);
      AddEvidence(w.Find(exit, rank), kCorr, truth);
      return true;
    case FaultAction::kHostOom:
      AddEvidence(w.Find(Cite::kKernel, in.fault.node), kInit, truth);
      AddEvidence(w.Find(exit, rank), kInit, truth);
      return true;
    case FaultAction::kSlowdown:
      SlowdownEvidence(in, truth);
      return true;
    case FaultAction::kNicFailure:
      AddEvidence(w.Find(Cite::kIbError, rank), kInit, truth);
      return true;
    case FaultAction::kNcclSetup:
      AddEvidence(LowestSetupWarn(in), kInit, truth);
      return true;
    case FaultAction::kJobException:
      JobExceptionEvidence(w, truth);
      return true;
    case FaultAction::kNodeLoss:
    case FaultAction::kSlurmdSilent:
    case FaultAction::kSchedulerCancel:
    case FaultAction::kEvict:
    case FaultAction::kRendezvousTimeout:
    case FaultAction::kStoreJoinTimeout:
      return false;
  }
  return false;
}

// FAULT_KIND_STORE_JOIN_TIMEOUT (pdsh, srun, mpirun): the node's ranks printed nothing; rank 0's
// server counts the clients that never joined.
void StoreJoinEvidence(const TruthInputs& in, v1::Truth* truth) {
  AddEvidence(in.writer.Find(Cite::kStoreJoin, 0), v1::EVIDENCE_ROLE_CORROBORATING, truth);
  // srun, mpirun: the node's kernel saw its tasks hang (khungtaskd's first report), when it did.
  AddEvidence(in.writer.Find(Cite::kKernel, in.fault.node), v1::EVIDENCE_ROLE_INITIATING, truth);
}

// The srun launcher reports ranks in slurm-<jobid>.out, and the controller logs node and
// scheduler events in slurmctld.log.
void SrunEvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  if (RankEvidence(in, Cite::kSrunTask, truth)) return;
  const IncidentWriter& w = in.writer;
  auto ctld = [&](CtldEvent e) { return w.Find(Cite::kCtld, static_cast<int>(e)); };
  const FaultAction action = in.fault.action();
  if (action == FaultAction::kNodeLoss || action == FaultAction::kSlurmdSilent) {  // and, later, "Node <host> now responding"
    AddEvidence(ctld(CtldEvent::kSetDown), v1::EVIDENCE_ROLE_INITIATING, truth);
    AddEvidence(ctld(CtldEvent::kKillOnFailed), v1::EVIDENCE_ROLE_CORROBORATING, truth);
    AddEvidence(ctld(CtldEvent::kRequeue), v1::EVIDENCE_ROLE_CORROBORATING, truth);
  } else if (action == FaultAction::kStoreJoinTimeout) {
    StoreJoinEvidence(in, truth);
  } else if (action == FaultAction::kSchedulerCancel) {
    const Citation* c = ctld(CtldEvent::kTimeLimit);
    if (c == nullptr) c = ctld(CtldEvent::kKillRequest);
    if (c == nullptr) c = ctld(CtldEvent::kPreempted);
    AddEvidence(c, v1::EVIDENCE_ROLE_INITIATING, truth);
    AddEvidence(w.Find(Cite::kStepdJob, 0), v1::EVIDENCE_ROLE_CORROBORATING, truth);
  }  // eviction: Kubernetes'; a rendezvous timeout: torchrun's
}

// mpirun names the first rank that failed (or the node whose daemon it lost) in mpirun.out.
void MpirunEvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  if (RankEvidence(in, Cite::kMpirun, truth)) return;
  if (in.fault.action() == FaultAction::kNodeLoss) {
    AddEvidence(in.writer.Find(Cite::kMpirun, in.fault.node), v1::EVIDENCE_ROLE_INITIATING, truth);
  } else if (in.fault.action() == FaultAction::kStoreJoinTimeout) {
    StoreJoinEvidence(in, truth);
  }  // the scheduler's, Kubernetes' or torchrun's faults: none under mpirun
}

// DeepSpeed over pdsh: the fault node's launch.py says a child failed (not which: it names its
// last spawned command) and with what return code; a lost node is ssh's timeout and pdsh's 255.
void PdshEvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  if (RankEvidence(in, Cite::kPdsh, truth)) return;
  if (in.fault.action() == FaultAction::kNodeLoss) {
    AddEvidence(in.writer.Find(Cite::kPdsh, in.fault.node), v1::EVIDENCE_ROLE_INITIATING, truth);
    AddEvidence(in.writer.Find(Cite::kPdshExit, in.fault.node), v1::EVIDENCE_ROLE_CORROBORATING, truth);
  } else if (in.fault.action() == FaultAction::kStoreJoinTimeout) {
    StoreJoinEvidence(in, truth);
  }  // the scheduler's, Kubernetes' or torchrun's faults: none under pdsh
}

void AddKube(const CitedLine& c, v1::EvidenceRole role, v1::Truth* truth) {
  if (c.line == 0) return;
  v1::Evidence* e = truth->add_evidence();
  e->set_file(c.file);
  e->set_line(static_cast<std::int32_t>(c.line));
  e->set_text(c.text);
  e->set_role(role);
}

// Kubernetes' own word on the pod or node the fault hit; false for faults it says nothing about.
bool KubeEvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  if (in.kube == nullptr) return false;
  const KubeCitations& k = *in.kube;
  switch (in.fault.kind()) {
    case v1::FAULT_KIND_POD_OOMKILLED:
      AddKube(k.pod_reason, v1::EVIDENCE_ROLE_INITIATING, truth);
      AddKube(k.oom_event, v1::EVIDENCE_ROLE_CORROBORATING, truth);
      return true;
    case v1::FAULT_KIND_POD_EVICTION:
      AddKube(k.evicted, v1::EVIDENCE_ROLE_INITIATING, truth);
      AddKube(k.pod_reason, v1::EVIDENCE_ROLE_CORROBORATING, truth);
      return true;
    case v1::FAULT_KIND_NODE_LOSS:
      AddKube(k.not_ready, v1::EVIDENCE_ROLE_INITIATING, truth);
      AddEvidence(in.writer.Find(Cite::kLastLine, in.fault.node), v1::EVIDENCE_ROLE_CORROBORATING, truth);
      return true;
    default:
      return false;
  }
}

// Ray: the driver's ActorDiedError names the dead actor (its pid and ip), its cause line says
// why; the GCS's verdict on a lost node; the raylet's memory-monitor summary.
void RayEvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  const IncidentWriter& w = in.writer;
  const int rank = in.fault.rank;
  constexpr auto kInit = v1::EVIDENCE_ROLE_INITIATING;
  constexpr auto kCorr = v1::EVIDENCE_ROLE_CORROBORATING;
  switch (in.fault.kind()) {
    case v1::FAULT_KIND_NODE_LOSS:
      AddEvidence(w.Find(Cite::kRayGcs, in.fault.node), kInit, truth);
      AddEvidence(w.Find(Cite::kRayActorDied, rank), kCorr, truth);
      return;
    case v1::FAULT_KIND_RAY_OOM_KILL:
      AddEvidence(w.Find(Cite::kRayCause, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kRaylet, in.fault.node), kCorr, truth);
      return;
    case v1::FAULT_KIND_SIGSEGV:
      AddEvidence(w.Find(Cite::kSegfault, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kRayActorDied, rank), kCorr, truth);
      return;
    case v1::FAULT_KIND_EXCEPTION:  // its own traceback; the driver's RayTaskError relays it
      AddEvidence(w.Find(Cite::kException, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kRayActorDied, rank), kCorr, truth);
      return;
    case v1::FAULT_KIND_HANG:  // silent: its peers' watchdogs say it; the driver names a victim
      AddEvidence(FirstPeerWatchdog(w, rank), v1::EVIDENCE_ROLE_CONSEQUENCE, truth);
      return;
    default:
      AddEvidence(w.Find(Cite::kRayActorDied, rank), kInit, truth);
      return;
  }
}

void EvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  if (in.fault.kind() == v1::FAULT_KIND_SLOW_NIC) {  // its port's counters name it, not the timers
    if (in.nic != nullptr) AddKube(*in.nic, v1::EVIDENCE_ROLE_INITIATING, truth);
    return;
  }
  if (IsLinkFault(in.fault.kind())) {  // both ends' WARNs (any launcher), and its port's counters
    AddEvidence(in.writer.Find(Cite::kIbError, in.fault.rank), v1::EVIDENCE_ROLE_INITIATING, truth);
    if (in.nic != nullptr && !in.nic->file.empty()) AddKube(*in.nic, v1::EVIDENCE_ROLE_INITIATING, truth);
    AddEvidence(in.writer.Find(Cite::kIbError, in.fault.peer), v1::EVIDENCE_ROLE_CORROBORATING, truth);
    return;
  }
  if (in.job.launcher == v1::LAUNCHER_SRUN) return SrunEvidenceFor(in, truth);
  if (in.job.launcher == v1::LAUNCHER_MPIRUN) return MpirunEvidenceFor(in, truth);
  if (in.job.launcher == v1::LAUNCHER_PDSH) return PdshEvidenceFor(in, truth);
  if (in.job.launcher == v1::LAUNCHER_RAY) return RayEvidenceFor(in, truth);
  if (in.kube != nullptr) {  // kubernetes.restarts: the Pending replacement, and why the job ended
    AddKube(in.kube->unplaced, v1::EVIDENCE_ROLE_CORROBORATING, truth);
    AddKube(in.kube->job_end, v1::EVIDENCE_ROLE_CONTEXT, truth);
  }
  if (KubeEvidenceFor(in, truth)) return;
  const IncidentWriter& w = in.writer;
  const int rank = in.fault.rank, node = in.fault.node;
  constexpr auto kInit = v1::EVIDENCE_ROLE_INITIATING;
  constexpr auto kCorr = v1::EVIDENCE_ROLE_CORROBORATING;
  switch (in.fault.action()) {
    case FaultAction::kSigkill:
      AddEvidence(w.Find(Cite::kAgentFailed, node), kInit, truth);
      AddEvidence(w.Find(Cite::kAgentRootRank, node), kInit, truth);
      return;
    case FaultAction::kSegfault:
      AddEvidence(w.Find(Cite::kSegfault, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kAgentFailed, node), kCorr, truth);
      return;
    case FaultAction::kException:
      AddEvidence(w.Find(Cite::kException, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kAgentFailed, node), kCorr, truth);
      return;
    case FaultAction::kHang:
      AddEvidence(FirstPeerWatchdog(w, rank), v1::EVIDENCE_ROLE_CONSEQUENCE, truth);
      AddEvidence(w.Find(Cite::kAgentSigterm, rank), kCorr, truth);
      return;
    case FaultAction::kMismatch:
      AddEvidence(w.Find(Cite::kWatchdog, rank), kInit, truth);
      AddEvidence(FirstPeerWatchdog(w, rank), kCorr, truth);
      return;
    case FaultAction::kCudaError:
      AddEvidence(w.Find(Cite::kException, rank), kInit, truth);
      AddEvidence(w.Find(Cite::kKernel, node), kInit, truth);
      AddEvidence(w.Find(Cite::kAgentFailed, node), kCorr, truth);
      AddEvidence(w.Find(Cite::kAgentRootRank, node), kCorr, truth);
      return;
    case FaultAction::kHostOom:  // killed silently: the agent's report names it, the kernel says why
      AddEvidence(w.Find(Cite::kKernel, node), kInit, truth);
      AddEvidence(w.Find(Cite::kAgentFailed, node), kInit, truth);
      AddEvidence(w.Find(Cite::kAgentRootRank, node), kInit, truth);
      return;
    case FaultAction::kNodeLoss:
      AddEvidence(w.Find(Cite::kLastLine, node), kCorr, truth);
      return;
    case FaultAction::kSlowdown:
      return SlowdownEvidence(in, truth);
    case FaultAction::kNicFailure:
      AddEvidence(in.writer.Find(Cite::kIbError, in.fault.rank), v1::EVIDENCE_ROLE_INITIATING, truth);
      return;
    case FaultAction::kNcclSetup:
      AddEvidence(LowestSetupWarn(in), v1::EVIDENCE_ROLE_INITIATING, truth);
      return;
    case FaultAction::kRendezvousTimeout:  // the agent that never joined says why
      AddEvidence(w.Find(Cite::kRendezvous, node), kInit, truth);
      return;
    case FaultAction::kStoreJoinTimeout:  // the launchers' (StoreJoinEvidence)
      return;
    case FaultAction::kJobException:
      return JobExceptionEvidence(w, truth);
    case FaultAction::kSchedulerCancel:
    case FaultAction::kSlurmdSilent:  // srun only
    case FaultAction::kEvict:
      return;
  }
}

// The ranks hit by the fault itself: the rank, or every rank of the lost node, or the node's
// ranks whose NCCL set-up failed (all of them for a bootstrap failure, the two given one GPU
// for a duplicate GPU: the node's other ranks wait and time out like everyone else's).
bool IsInitiating(const TruthInputs& in, int rank) {
  switch (in.fault.traits->scope) {
    case FaultScope::kRank:  // a failed link has two ends
      return rank == in.fault.rank || (IsLinkFault(in.fault.kind()) && rank == in.fault.peer);
    case FaultScope::kNode:  // a node the controller only declared failed kept its ranks running
      if (in.fault.action() == FaultAction::kNcclSetup) return in.model.workers().SetupFails(rank);
      return in.fault.action() != FaultAction::kSlurmdSilent && in.job.NodeOf(rank) == in.fault.node;
    case FaultScope::kJob:  // every rank raised on its own: no rank failed because of another
      return in.fault.action() == FaultAction::kJobException;
  }
  return false;
}

// srun's task lines that name an initiating rank: the initiator's own reports, not secondary
// errors (a node-scope fault can fail two ranks of its node: duplicate GPU).
std::int64_t InitiatorTaskLines(const TruthInputs& in) {
  std::set<int> lines;
  for (int rank = 0; rank < in.job.world; ++rank) {
    const int line = in.model.slurm().task_line(rank);
    if (line >= 0 && IsInitiating(in, rank)) lines.insert(line);
  }
  return static_cast<std::int64_t>(lines.size());
}

// Every other rank that died is a consequence. Secondary errors: each watchdog timeout line
// (but the initiator's own, when it is the evidence), each launcher report that is not
// the initiator's: torchrun agent failure reports on other nodes (a failure table, or the
// agent's own RendezvousConnectionError / RendezvousTimeoutError traceback), DeepSpeed
// launch.py's `exits with return code` ERROR line on other nodes (pdsh), srun task-exit lines
// that name no initiating rank; and each worker's store connection reset (a lost c10d store,
// torch >= 2.4; not the heartbeat monitor's dump-signal lines, which precede the rank's own
// timeout).
void FillCascade(const TruthInputs& in, v1::Truth* truth) {
  v1::Cascade* cascade = truth->mutable_cascade();
  const Workers& workers = in.model.workers();
  for (int rank = 0; rank < in.job.world; ++rank) {
    if (!IsInitiating(in, rank) && !workers.alive(rank)) cascade->add_secondary_ranks(rank);
  }
  if (in.fault.action() == FaultAction::kJobException) return;  // no cascade: nothing secondary
  std::int64_t errors = static_cast<std::int64_t>(workers.watchdog_timeouts());
  if (in.fault.rank >= 0 && in.writer.Find(Cite::kWatchdog, in.fault.rank) != nullptr) --errors;
  if (in.job.launcher == v1::LAUNCHER_SRUN) {
    errors += in.model.slurm().task_lines() - InitiatorTaskLines(in);
  } else if (in.job.launcher == v1::LAUNCHER_PDSH) {
    for (int node = 0; node < in.job.nodes; ++node) {
      if (node != in.fault.node && in.model.pdsh().reported(node)) ++errors;
    }
  } else {
    for (int node = 0; node < in.job.nodes; ++node) {
      if (node != in.fault.node && in.model.launcher().reported(node)) ++errors;
    }
  }
  errors += static_cast<std::int64_t>(in.writer.stats().store_resets);
  cascade->set_secondary_errors(static_cast<std::int32_t>(errors));
  cascade->set_grouped_errors(static_cast<std::int32_t>(errors));
}

std::string Who(const TruthInputs& in) {
  switch (in.fault.traits->scope) {
    case FaultScope::kRank:
      return "Rank " + std::to_string(in.fault.rank) + " on " + in.job.NodeName(in.fault.node);
    case FaultScope::kNode:
      return "Node " + in.job.NodeName(in.fault.node);
    case FaultScope::kJob:
      return "The job";
  }
  return "";
}

void FillRecovery(const TruthInputs& in, v1::Truth* truth) {
  const FaultTraits& traits = *in.fault.traits;
  std::string text(traits.recovery_text);
  const std::size_t at = text.find("{who}");
  if (at != std::string::npos) text.replace(at, 5, Who(in));
  v1::Recovery* recovery = truth->mutable_recovery();
  v1::Precondition* first = recovery->add_preconditions();
  first->set_action(std::string(traits.recovery_action));
  if (in.fault.node >= 0) first->set_target(in.job.NodeName(in.fault.node));
  first->set_text(text);
  v1::Precondition* restart = recovery->add_preconditions();
  restart->set_action("restart_job");
  if (traits.action == FaultAction::kSlowdown && !in.fault.stall) {
    restart->set_text(
        "The job is still running, slowed to the pace of its slowest rank; restart it from its "
        "latest checkpoint once the slow hardware is excluded.");
    return;
  }
  if (in.job.requeue && traits.scope == FaultScope::kNode) {
    restart->set_action("verify_requeued_run");
    restart->set_text(
        "Slurm requeued the job (--requeue) and its next run resumed from the latest "
        "checkpoint on a new allocation without the failed node; confirm it is making progress.");
    return;
  }
  restart->set_text(
      "Every other rank failed as a consequence (NCCL watchdog timeouts and launcher "
      "teardown); restart the job from its latest checkpoint.");
}

void FillInitiator(const TruthInputs& in, TimeNs fault_time, v1::Truth* truth) {
  v1::Initiator* init = truth->mutable_initiator();
  const bool rank_known = in.fault.traits->scope == FaultScope::kRank;
  init->set_rank(rank_known ? in.fault.rank : -1);
  if (in.fault.node >= 0) init->set_node(in.job.NodeName(in.fault.node));
  init->set_local_rank(rank_known ? in.job.LocalRank(in.fault.rank) : -1);
  init->set_time(FormatRfc3339(fault_time));
  init->set_failure_class(in.fault.traits->failure_class);
  init->set_confidence(1.0);
  truth->set_owner(in.fault.traits->owner);
}

// truth.job.launcher as docs/truth_format.md names it ("" for a launcher it does not name).
std::string LauncherName(v1::Launcher launcher) {
  switch (launcher) {
    case v1::LAUNCHER_TORCHRUN:
      return "torchrun";
    case v1::LAUNCHER_SRUN:
      return "srun";
    case v1::LAUNCHER_KUBERNETES:
      return "kubernetes";
    case v1::LAUNCHER_RAY:
      return "ray";
    case v1::LAUNCHER_MPIRUN:
      return "mpirun";
    case v1::LAUNCHER_PDSH:
      return "pdsh";
    default:
      return "";
  }
}

}  // namespace

// IsLinkFault: the link's two ends, the fault's rank (the end that failed first) as end a; each
// end's HCA is the port of its GPU's rail (`mlx5_<local rank>`), or under NCCL's socket
// transport the interface its NET/Socket line names (`ib0`, `eth0` on RoCE; every rank of the
// node). A socket link whose two ends saw the reset at once (odd variants) has no first end:
// `ordered` false.
void FillLink(const TruthInputs& in, v1::Truth* truth) {
  if (!IsLinkFault(in.fault.kind()) || in.fault.peer < 0) return;
  const bool socket = in.fault.kind() == v1::FAULT_KIND_SOCKET_LINK_FAILURE;
  auto hca = [&](int rank) { return socket ? std::string(in.job.roce ? "eth0" : "ib0") : "mlx5_" + std::to_string(in.job.LocalRank(rank)); };
  v1::Link* link = truth->mutable_link();
  link->set_node_a(in.job.NodeName(in.job.NodeOf(in.fault.rank)));
  link->set_hca_a(hca(in.fault.rank));
  link->set_rank_a(in.fault.rank);
  link->set_node_b(in.job.NodeName(in.job.NodeOf(in.fault.peer)));
  link->set_hca_b(hca(in.fault.peer));
  link->set_rank_b(in.fault.peer);
  link->set_ordered(!socket || in.fault.variant % 2 == 0);
}

v1::Truth BuildTruth(const TruthInputs& in) {
  v1::Truth truth;
  const TimeNs fault_time = in.model.workers().fault_time();
  truth.set_scenario(in.scenario.name());
  truth.set_seed(in.job.seed);
  truth.set_verdict(v1::VERDICT_DIAGNOSED);
  FillInitiator(in, fault_time, &truth);
  FillCascade(in, &truth);
  EvidenceFor(in, &truth);
  truth.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_NOT_EVALUATED);
  FillRecovery(in, &truth);
  FillLink(in, &truth);
  v1::InjectedEvent* event = truth.add_events();
  event->set_kind(v1::FaultKind_Name(in.fault.kind()));
  event->set_rank(in.fault.traits->scope == FaultScope::kRank ? in.fault.rank : -1);
  if (in.fault.node >= 0) event->set_node(in.job.NodeName(in.fault.node));
  event->set_time(FormatRfc3339(fault_time));
  event->set_step(in.fault.step);
  v1::JobFacts* facts = truth.mutable_job();
  facts->set_world_size(in.job.world);
  facts->set_nodes(in.job.nodes);
  facts->set_gpus_per_node(in.job.gpus_per_node);
  facts->set_start_time(FormatRfc3339(in.job.start));
  facts->set_fault_time(FormatRfc3339(fault_time));
  facts->set_end_time(FormatRfc3339(in.outcome.end_time));
  facts->set_launcher(LauncherName(in.job.launcher));
  return truth;
}

}  // namespace denpex::sim
