// Builds truth.json (see truth.h) from the model's final state and the writer's citations.
// The evidence rules are one table, kRules; docs/truth_format.md states them.
#include "truth.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>

#include "denpex/common/time.h"

namespace denpex::sim {

namespace {

// --- Evidence: one table of rules ---------------------------------------------------------------

// Which launcher reports the job's end (the rows below apply to some of them). Torchrun's agents
// under Kubernetes are kKube when the kubectl files are in the truth's hands.
enum Family : std::uint8_t {
  kTorchrun = 1 << 0,
  kKube = 1 << 1,
  kSrun = 1 << 2,
  kMpirun = 1 << 3,
  kPdsh = 1 << 4,
  kRay = 1 << 5,
};
constexpr std::uint8_t kAgents = kTorchrun | kKube;      // torchrun's failure report
constexpr std::uint8_t kBare = kSrun | kMpirun | kPdsh;  // a launcher line per rank's end
constexpr std::uint8_t kAnyLauncher = kAgents | kBare | kRay;

std::uint8_t FamilyOf(const TruthInputs& in) {
  switch (in.job.launcher) {
    case v1::LAUNCHER_SRUN:
      return kSrun;
    case v1::LAUNCHER_MPIRUN:
      return kMpirun;
    case v1::LAUNCHER_PDSH:
      return kPdsh;
    case v1::LAUNCHER_RAY:
      return kRay;
    default:
      return in.kube != nullptr ? kKube : kTorchrun;
  }
}

// How a cited line is found: a line the writer remembered (of a kind, about the fault's rank,
// node, far end, rank 0 or a controller event), or a pick among them, or a line of the files
// written after the run (kubectl's, the IB counters).
enum class Pick : std::uint8_t {
  kLine,
  kExit,             // the bare-metal launcher's line for the rank's end (srun, mpirun, pdsh)
  kPeerWatchdog,     // the earliest surviving watchdog block of a rank other than the fault's
  kStallWatchdog,    // kPeerWatchdog when the slowed rank then stalled
  kSetupWarn,        // the fault node's lowest failing rank's surviving NCCL set-up WARN
  kLowestException,  // a job-wide exception: the lowest surviving rank's line
  kNextException,    // ... and the next surviving rank's
  kCtldCancel,       // slurmctld's time limit, else its kill request, else the preemption
  kNic,              // the port's counter line in <host>/ib_counters.log, when collected
  kKubeEvicted,      // events.txt's `Evicted` row
  kKubePodReason,    // describe's `Reason: Evicted` / `Reason: OOMKilled`
  kKubeOomEvent,     // events.txt's `OOMKilling` row
  kKubeNotReady,     // events.txt's `NodeNotReady node/<node>` row
  kKubeUnplaced,     // events.txt's `FailedScheduling` row of the Pending replacement (restarts)
  kKubeJobEnd,       // events.txt's row that says the restart budget ran out (restarts)
};
enum class Who : std::uint8_t { kRank, kNode, kPeer, kZero, kCtld };

struct Cited {
  Pick pick = Pick::kLine;
  v1::EvidenceRole role = v1::EVIDENCE_ROLE_UNSPECIFIED;  // unspecified: no line (end of row)
  Cite cite = Cite::kException;                           // kLine
  Who who = Who::kRank;                                   // kLine
  CtldEvent event = CtldEvent::kAllocate;                 // Who::kCtld
};

constexpr auto kI = v1::EVIDENCE_ROLE_INITIATING;
constexpr auto kC = v1::EVIDENCE_ROLE_CORROBORATING;
constexpr auto kQ = v1::EVIDENCE_ROLE_CONSEQUENCE;
constexpr auto kX = v1::EVIDENCE_ROLE_CONTEXT;

constexpr Cited Line(Cite cite, Who who, v1::EvidenceRole role) {
  return {Pick::kLine, role, cite, who};
}
constexpr Cited Ctld(CtldEvent event, v1::EvidenceRole role) {
  return {Pick::kLine, role, Cite::kCtld, Who::kCtld, event};
}
constexpr Cited By(Pick pick, v1::EvidenceRole role) { return {pick, role}; }

// A rule: the faults it is for (launchers, and a kind, an action or a registry rule; unset: any)
// and the lines the truth cites, in order. The first rule that matches decides, unless it says
// `more`: the rules after it add their lines too.
struct Rule {
  std::uint8_t families;
  v1::FaultKind kind = v1::FAULT_KIND_UNSPECIFIED;
  std::optional<FaultAction> action;
  FaultRule rule = kNoRules;
  bool more = false;
  std::array<Cited, 4> lines{};
};

constexpr Rule ForKind(std::uint8_t families, v1::FaultKind kind, std::array<Cited, 4> lines) {
  return {families, kind, std::nullopt, kNoRules, false, lines};
}
constexpr Rule ForAction(std::uint8_t families, FaultAction action, std::array<Cited, 4> lines) {
  return {families, v1::FAULT_KIND_UNSPECIFIED, action, kNoRules, false, lines};
}

using A = FaultAction;
using W = Who;

// docs/truth_format.md, "Per fault kind", states these rules.
constexpr Rule kRules[] = {
    // The network's faults, under any launcher: a slow port's counters name it, not the timers;
    // a failed link's two ends' WARNs and its port's counters.
    ForKind(kAnyLauncher, v1::FAULT_KIND_SLOW_NIC, {By(Pick::kNic, kI)}),
    {kAnyLauncher,
     v1::FAULT_KIND_UNSPECIFIED,
     std::nullopt,
     kLink,
     false,
     {Line(Cite::kIbError, W::kRank, kI), By(Pick::kNic, kI), Line(Cite::kIbError, W::kPeer, kC)}},
    // Kubernetes: the Pending replacement and why the job ended (kubernetes.restarts), then its
    // own word on the pod or node the fault hit.
    {kKube,
     v1::FAULT_KIND_UNSPECIFIED,
     std::nullopt,
     kNoRules,
     true,
     {By(Pick::kKubeUnplaced, kC), By(Pick::kKubeJobEnd, kX)}},
    ForKind(kKube, v1::FAULT_KIND_POD_OOMKILLED,
            {By(Pick::kKubePodReason, kI), By(Pick::kKubeOomEvent, kC)}),
    ForKind(kKube, v1::FAULT_KIND_POD_EVICTION,
            {By(Pick::kKubeEvicted, kI), By(Pick::kKubePodReason, kC)}),
    ForKind(kKube, v1::FAULT_KIND_NODE_LOSS,
            {By(Pick::kKubeNotReady, kI), Line(Cite::kLastLine, W::kNode, kC)}),
    // The rank's own lines, the same under every launcher but Ray's.
    ForAction(kBare | kAgents, A::kMismatch,
              {Line(Cite::kWatchdog, W::kRank, kI), By(Pick::kPeerWatchdog, kC)}),
    ForAction(kBare | kAgents, A::kSlowdown,
              {Line(Cite::kSlowTimers, W::kRank, kI), By(Pick::kStallWatchdog, kQ)}),
    ForAction(kBare | kAgents, A::kNicFailure, {Line(Cite::kIbError, W::kRank, kI)}),
    ForAction(kBare | kAgents, A::kNcclSetup, {By(Pick::kSetupWarn, kI)}),
    ForAction(kBare | kAgents, A::kJobException,
              {By(Pick::kLowestException, kI), By(Pick::kNextException, kC)}),
    // srun, mpirun and pdsh report each rank's end: their line for it beside the rank's own.
    ForAction(kBare, A::kSigkill, {By(Pick::kExit, kI)}),
    ForAction(kBare, A::kSegfault, {Line(Cite::kSegfault, W::kRank, kI), By(Pick::kExit, kC)}),
    ForAction(kBare, A::kException, {Line(Cite::kException, W::kRank, kI), By(Pick::kExit, kC)}),
    ForAction(kBare, A::kHang, {By(Pick::kPeerWatchdog, kQ)}),
    ForAction(kBare, A::kCudaError,
              {Line(Cite::kException, W::kRank, kI), Line(Cite::kKernel, W::kNode, kI),
               By(Pick::kExit, kC)}),
    ForAction(kBare, A::kHostOom, {Line(Cite::kKernel, W::kNode, kI), By(Pick::kExit, kI)}),
    // The node's ranks never joined the static store: rank 0's server counts them; srun, mpirun:
    // the node's kernel saw its tasks hang (khungtaskd's first report), when it did.
    ForAction(kBare, A::kStoreJoinTimeout,
              {Line(Cite::kStoreJoin, W::kZero, kC), Line(Cite::kKernel, W::kNode, kI)}),
    // The launchers' own word on a node or the job (slurmctld.log, mpirun.out, deepspeed.log).
    ForAction(kSrun, A::kNodeLoss,
              {Ctld(CtldEvent::kSetDown, kI), Ctld(CtldEvent::kKillOnFailed, kC),
               Ctld(CtldEvent::kRequeue, kC)}),
    ForAction(kSrun, A::kSlurmdSilent,
              {Ctld(CtldEvent::kSetDown, kI), Ctld(CtldEvent::kKillOnFailed, kC),
               Ctld(CtldEvent::kRequeue, kC)}),
    ForAction(kSrun, A::kSchedulerCancel,
              {By(Pick::kCtldCancel, kI), Line(Cite::kStepdJob, W::kZero, kC)}),
    ForAction(kMpirun, A::kNodeLoss, {Line(Cite::kMpirun, W::kNode, kI)}),
    ForAction(kPdsh, A::kNodeLoss,
              {Line(Cite::kPdsh, W::kNode, kI), Line(Cite::kPdshExit, W::kNode, kC)}),
    // Ray: the driver's ActorDiedError names the dead actor, its cause line says why; the GCS's
    // verdict on a lost node; the raylet's memory-monitor summary. A hang is silent: its peers'
    // watchdogs say it (the driver names a victim).
    ForKind(kRay, v1::FAULT_KIND_NODE_LOSS,
            {Line(Cite::kRayGcs, W::kNode, kI), Line(Cite::kRayActorDied, W::kRank, kC)}),
    ForKind(kRay, v1::FAULT_KIND_RAY_OOM_KILL,
            {Line(Cite::kRayCause, W::kRank, kI), Line(Cite::kRaylet, W::kNode, kC)}),
    ForKind(kRay, v1::FAULT_KIND_SIGSEGV,
            {Line(Cite::kSegfault, W::kRank, kI), Line(Cite::kRayActorDied, W::kRank, kC)}),
    ForKind(kRay, v1::FAULT_KIND_EXCEPTION,
            {Line(Cite::kException, W::kRank, kI), Line(Cite::kRayActorDied, W::kRank, kC)}),
    ForKind(kRay, v1::FAULT_KIND_HANG, {By(Pick::kPeerWatchdog, kQ)}),
    ForKind(kRay, v1::FAULT_KIND_UNSPECIFIED, {Line(Cite::kRayActorDied, W::kRank, kI)}),
    // Torchrun's agents: the failure report's `failed (exitcode: ...)` line and its root-cause
    // `rank :` line; a killed rank's own SIGTERM; where a lost node's agent stops.
    ForAction(kAgents, A::kSigkill,
              {Line(Cite::kAgentFailed, W::kNode, kI), Line(Cite::kAgentRootRank, W::kNode, kI)}),
    ForAction(kAgents, A::kSegfault,
              {Line(Cite::kSegfault, W::kRank, kI), Line(Cite::kAgentFailed, W::kNode, kC)}),
    ForAction(kAgents, A::kException,
              {Line(Cite::kException, W::kRank, kI), Line(Cite::kAgentFailed, W::kNode, kC)}),
    ForAction(kAgents, A::kHang,
              {By(Pick::kPeerWatchdog, kQ), Line(Cite::kAgentSigterm, W::kRank, kC)}),
    ForAction(kAgents, A::kCudaError,
              {Line(Cite::kException, W::kRank, kI), Line(Cite::kKernel, W::kNode, kI),
               Line(Cite::kAgentFailed, W::kNode, kC), Line(Cite::kAgentRootRank, W::kNode, kC)}),
    // Killed silently: the agent's report names it, the kernel says why.
    ForAction(kAgents, A::kHostOom,
              {Line(Cite::kKernel, W::kNode, kI), Line(Cite::kAgentFailed, W::kNode, kI),
               Line(Cite::kAgentRootRank, W::kNode, kI)}),
    ForAction(kAgents, A::kNodeLoss, {Line(Cite::kLastLine, W::kNode, kC)}),
    ForAction(kAgents, A::kRendezvousTimeout,
              {Line(Cite::kRendezvous, W::kNode, kI)}),  // the agent that never joined
};

bool Matches(const Rule& rule, const TruthInputs& in, std::uint8_t family) {
  if ((rule.families & family) == 0) return false;
  if (rule.kind != v1::FAULT_KIND_UNSPECIFIED && rule.kind != in.fault.kind()) return false;
  if (rule.action && *rule.action != in.fault.action()) return false;
  return rule.rule == kNoRules || in.fault.traits->Has(rule.rule);
}

// A line that did not survive (realism: its file is missing or cut) cannot be required.
void AddEvidence(const Citation* c, v1::EvidenceRole role, v1::Truth* truth) {
  if (c == nullptr || !c->intact) return;
  v1::Evidence* e = truth->add_evidence();
  e->set_file(c->line.file);
  e->set_line(static_cast<std::int32_t>(c->line.line));
  e->set_text(c->line.text);
  e->set_role(role);
}

// A line of the files written after the run (line 0: none).
void AddLine(const CitedLine* c, v1::EvidenceRole role, v1::Truth* truth) {
  if (c == nullptr || c->line == 0) return;
  v1::Evidence* e = truth->add_evidence();
  e->set_file(c->file);
  e->set_line(static_cast<std::int32_t>(c->line));
  e->set_text(c->text);
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
// line is more initiating than another's; the lowest surviving rank's is cited (`which` 0), and
// the next (1).
const Citation* LowestException(const IncidentWriter& w, int which) {
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
  return which == 0 ? first : second;
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

int SubjectOf(const TruthInputs& in, const Cited& c) {
  switch (c.who) {
    case Who::kRank:
      return in.fault.rank;
    case Who::kNode:
      return in.fault.node;
    case Who::kPeer:
      return in.fault.peer;
    case Who::kZero:
      return 0;
    case Who::kCtld:
      return static_cast<int>(c.event);
  }
  return -1;
}

Cite ExitCite(v1::Launcher launcher) {
  if (launcher == v1::LAUNCHER_MPIRUN) return Cite::kMpirun;
  if (launcher == v1::LAUNCHER_PDSH) return Cite::kPdsh;
  return Cite::kSrunTask;
}

void AddCited(const TruthInputs& in, const Cited& c, v1::Truth* truth) {
  const IncidentWriter& w = in.writer;
  const KubeCitations* k = in.kube;
  switch (c.pick) {
    case Pick::kLine:
      return AddEvidence(w.Find(c.cite, SubjectOf(in, c)), c.role, truth);
    case Pick::kExit:
      return AddEvidence(w.Find(ExitCite(in.job.launcher), in.fault.rank), c.role, truth);
    case Pick::kStallWatchdog:
      if (!in.fault.stall) return;
      [[fallthrough]];
    case Pick::kPeerWatchdog:
      return AddEvidence(FirstPeerWatchdog(w, in.fault.rank), c.role, truth);
    case Pick::kSetupWarn:
      return AddEvidence(LowestSetupWarn(in), c.role, truth);
    case Pick::kLowestException:
      return AddEvidence(LowestException(w, 0), c.role, truth);
    case Pick::kNextException:
      return AddEvidence(LowestException(w, 1), c.role, truth);
    case Pick::kCtldCancel:
      for (CtldEvent e : {CtldEvent::kTimeLimit, CtldEvent::kKillRequest, CtldEvent::kPreempted}) {
        if (const Citation* line = w.Find(Cite::kCtld, static_cast<int>(e)))
          return AddEvidence(line, c.role, truth);
      }
      return;
    case Pick::kNic:
      return AddLine(in.nic, c.role, truth);
    case Pick::kKubeEvicted:
      return AddLine(k ? &k->evicted : nullptr, c.role, truth);
    case Pick::kKubePodReason:
      return AddLine(k ? &k->pod_reason : nullptr, c.role, truth);
    case Pick::kKubeOomEvent:
      return AddLine(k ? &k->oom_event : nullptr, c.role, truth);
    case Pick::kKubeNotReady:
      return AddLine(k ? &k->not_ready : nullptr, c.role, truth);
    case Pick::kKubeUnplaced:
      return AddLine(k ? &k->unplaced : nullptr, c.role, truth);
    case Pick::kKubeJobEnd:
      return AddLine(k ? &k->job_end : nullptr, c.role, truth);
  }
}

// The lines of the first rule that matches (and of those a `more` rule lets through).
void EvidenceFor(const TruthInputs& in, v1::Truth* truth) {
  const std::uint8_t family = FamilyOf(in);
  for (const Rule& rule : kRules) {
    if (!Matches(rule, in, family)) continue;
    for (const Cited& c : rule.lines) {
      if (c.role != v1::EVIDENCE_ROLE_UNSPECIFIED) AddCited(in, c, truth);
    }
    if (!rule.more) return;
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
