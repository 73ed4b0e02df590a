// Which records' lines a truth may cite (see evidence.h).
#include "evidence.h"

#include <algorithm>

namespace denpex::sim {

CitationPlan PlanCitations(const Job& job, const FaultPlan& fault) {
  CitationPlan plan;
  plan.rank = fault.rank;
  plan.node = fault.node;
  plan.link_peer = fault.peer;
  if (fault.traits->scope != FaultScope::kRank) return plan;
  for (PgKind kind : {PgKind::kTensor, PgKind::kPipeline, PgKind::kData}) {
    const int uid = job.GroupUid(fault.rank, kind);
    for (int i = 0; i < job.GroupSize(kind); ++i)
      plan.watchdog_ranks.push_back(job.GroupMember(uid, i));
  }
  std::sort(plan.watchdog_ranks.begin(), plan.watchdog_ranks.end());
  plan.watchdog_ranks.erase(std::unique(plan.watchdog_ranks.begin(), plan.watchdog_ranks.end()),
                            plan.watchdog_ranks.end());
  return plan;
}

namespace {

EvidenceMarkers One(Cite what, int subject, CitedRow row = CitedRow::kFirst, bool first = false) {
  EvidenceMarkers m;
  m.Add({what, subject, row, first});
  return m;
}

}  // namespace

// The traceback's exception line; when the whole job raised (a checkpoint load: no fault rank),
// every rank's is marked and the truth cites the lowest rank's that survived.
EvidenceMarkers MarkersOf(const PythonException& r, const CitationPlan& plan, const Job&) {
  if (r.rank != plan.rank && plan.rank >= 0) return {};
  return One(Cite::kException, r.rank, CitedRow::kAt);
}

EvidenceMarkers MarkersOf(const SegfaultDump& r, const CitationPlan& plan, const Job&) {
  return r.rank == plan.rank ? One(Cite::kSegfault, r.rank) : EvidenceMarkers{};
}

EvidenceMarkers MarkersOf(const RankTimers& r, const CitationPlan& plan, const Job&) {
  return r.slow && r.rank == plan.rank ? One(Cite::kSlowTimers, r.rank, CitedRow::kFirst, true)
                                       : EvidenceMarkers{};
}

// The fault's own failure; a failed link's far end: its first report (over sockets, the far
// end may only see the connection closed).
EvidenceMarkers MarkersOf(const NcclIbError& r, const CitationPlan& plan, const Job&) {
  const bool cite = r.rank == plan.rank ? r.status == 12
                                        : r.rank == plan.link_peer && (r.status == 12 || r.socket);
  return cite ? One(Cite::kIbError, r.rank, CitedRow::kFirst, true) : EvidenceMarkers{};
}

EvidenceMarkers MarkersOf(const NcclSetupFailure& r, const CitationPlan& plan, const Job& job) {
  return !r.traceback && job.NodeOf(r.rank) == plan.node ? One(Cite::kSetupWarn, r.rank)
                                                         : EvidenceMarkers{};
}

EvidenceMarkers MarkersOf(const KernelMessage& r, const CitationPlan& plan, const Job&) {
  return r.cite && r.node == plan.node ? One(Cite::kKernel, r.node) : EvidenceMarkers{};
}

// The `RuntimeError: CUDA error:` line.
EvidenceMarkers MarkersOf(const CudaFailure& r, const CitationPlan& plan, const Job&) {
  return r.rank == plan.rank ? One(Cite::kException, r.rank, CitedRow::kAt) : EvidenceMarkers{};
}

EvidenceMarkers MarkersOf(const AgentSigterm& r, const CitationPlan& plan, const Job&) {
  return r.rank == plan.rank ? One(Cite::kAgentSigterm, r.rank) : EvidenceMarkers{};
}

// Where the initiator node's failure report names the failure and the root-cause rank.
EvidenceMarkers MarkersOf(const AgentFailureReport& r, const CitationPlan& plan, const Job&) {
  EvidenceMarkers m;
  if (r.node != plan.node) return m;
  m.Add({Cite::kAgentFailed, r.node, CitedRow::kReportFailed});
  m.Add({Cite::kAgentRootRank, r.node, CitedRow::kReportRootRank});
  return m;
}

EvidenceMarkers MarkersOf(const AgentRendezvousFailure& r, const CitationPlan& plan, const Job&) {
  return r.node == plan.node && !r.timed_out ? One(Cite::kRendezvous, r.node, CitedRow::kAt)
                                             : EvidenceMarkers{};
}

// Rank 0's traceback, the server's.
EvidenceMarkers MarkersOf(const StoreJoinTimeout& r, const CitationPlan&, const Job&) {
  return r.rank == 0 ? One(Cite::kStoreJoin, 0, CitedRow::kAt) : EvidenceMarkers{};
}

EvidenceMarkers MarkersOf(const RayActorDied& r, const CitationPlan&, const Job&) {
  EvidenceMarkers m;
  m.Add({Cite::kRayActorDied, r.rank, CitedRow::kRayError});
  m.Add({Cite::kRayCause, r.rank, CitedRow::kRayCause});
  return m;
}

EvidenceMarkers MarkersOf(const RayNodeDead& r, const CitationPlan&, const Job&) {
  return One(Cite::kRayGcs, r.node);
}

EvidenceMarkers MarkersOf(const RayletOomKill& r, const CitationPlan&, const Job&) {
  return One(Cite::kRaylet, r.node);
}

EvidenceMarkers MarkersOf(const SrunTaskExits& r, const CitationPlan& plan, const Job&) {
  const auto* end = r.ranks.begin() + r.count;
  return std::find(r.ranks.begin(), end, plan.rank) != end ? One(Cite::kSrunTask, plan.rank)
                                                           : EvidenceMarkers{};
}

EvidenceMarkers MarkersOf(const StepdCancelled& r, const CitationPlan&, const Job&) {
  return r.whole_job ? One(Cite::kStepdJob, 0, CitedRow::kFirst, true) : EvidenceMarkers{};
}

// The first line of each controller event.
EvidenceMarkers MarkersOf(const CtldLine& r, const CitationPlan&, const Job&) {
  return One(Cite::kCtld, static_cast<int>(r.event), CitedRow::kFirst, true);
}

// The first failure's block: its line that names the rank (or the node of a lost daemon).
EvidenceMarkers MarkersOf(const MpirunNotice& r, const CitationPlan&, const Job&) {
  if (r.notice == MpiNotice::kBindings) return {};
  return One(Cite::kMpirun, r.notice == MpiNotice::kLostDaemon ? r.node : r.rank, CitedRow::kAt,
             true);
}

// The fault node's ERROR line (or, for a lost node, ssh's timeout line) and pdsh's exit line for
// it.
EvidenceMarkers MarkersOf(const PdshNotice& r, const CitationPlan& plan, const Job&) {
  if (r.node != plan.node || r.node < 0) return {};
  if (r.kind == PdshNoticeKind::kLaunchError && plan.rank >= 0) return One(Cite::kPdsh, plan.rank);
  if (r.kind == PdshNoticeKind::kSshTimeout) return One(Cite::kPdsh, r.node);
  if (r.kind == PdshNoticeKind::kSshExit) return One(Cite::kPdshExit, r.node);
  return {};
}

EvidenceMarkers MarkersOf(const WatchdogTimeout& r, const CitationPlan& plan, const Job&) {
  const bool cited =
      std::binary_search(plan.watchdog_ranks.begin(), plan.watchdog_ranks.end(), r.rank);
  return cited ? One(Cite::kWatchdog, r.rank) : EvidenceMarkers{};
}

// Where the fault node's agent (or pod) log stops.
EvidenceMarkers MarkersOf(const NodeLost& r, const CitationPlan& plan, const Job&) {
  return r.node == plan.node ? One(Cite::kLastLine, r.node) : EvidenceMarkers{};
}

}  // namespace denpex::sim
