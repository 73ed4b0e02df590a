// The evidence a truth may cite, decided by the model: which records' lines are about the fault
// (its rank, its node, a failed link's far end, the peers whose watchdogs may be cited, rank 0's
// store, the controller's events) and which of a record's lines is the one to cite. The writer
// only says where a marked line landed and whether it survived (output/writer.h `Citation`); the
// truth picks among the marked lines by its table of rules (output/truth.cc `kRules`).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "faults.h"
#include "job.h"
#include "records.h"

namespace denpex::sim {

// The kinds of lines a truth may cite.
enum class Cite : std::uint8_t {
  kAgentFailed,    // subject node: "... failed (exitcode: ...) local_rank: ..."
  kAgentRootRank,  // subject node: "  rank      : <G> (local_rank: <lr>)" of the root cause
  kAgentSigterm,   // subject rank: "Sending process <pid> closing signal SIGTERM"
  kException,      // subject rank: the exception line of its Python traceback
  kSegfault,       // subject rank: "Fatal Python error: Segmentation fault"
  kWatchdog,       // subject rank: the first line of its watchdog block
  kLastLine,       // subject node: the last line its agent wrote before the node vanished
  kSrunTask,       // subject rank: the "srun: error: <host>: task(s) ...: <status>" line with it
  kCtld,           // subject CtldEvent: the controller's line (the first of each event)
  kStepdJob,       // subject 0: the first "*** JOB J ON ... CANCELLED AT ... ***" line
  kKernel,         // subject node: the fault's initiating kern.log line (Xid, OOM kill)
  kSlowTimers,     // subject rank: its first per-rank timer line of a slowed step
  kIbError,    // subject rank (the fault's, a failed link's far end): its first NCCL IB completion
               // error (status 12)
  kSetupWarn,  // subject rank: the NCCL set-up WARN of a failing rank of the fault's node
  kMpirun,     // subject rank (node for a lost daemon): mpirun's line naming it
  kPdsh,       // subject rank: its node's launch.py `exits with return code` line; subject
               // node (node loss): ssh's `Timeout, server <host> not responding.`
  kPdshExit,   // subject node: pdsh's `ssh exited with exit code <n>` line for it
  kStoreJoin,  // subject 0: rank 0's `DistStoreError: Timed out after ... clients joined.`
  kRayActorDied,  // subject rank: the driver's `ray.exceptions.ActorDiedError: ...` line
  kRayCause,      // subject rank: the cause line after it
  kRayGcs,        // subject node: the GCS's `... has been marked dead ...` line
  kRaylet,        // subject node: the raylet's memory-monitor summary in driver.log
  kRendezvous,    // subject node: its agent's RendezvousConnectionError (it never joined)
};

// Whose lines to mark: the fault's rank and node, and the ranks whose watchdog blocks may be
// cited (sorted). Everything else is not marked, so the writer's memory stays small at any scale.
struct CitationPlan {
  int rank = -1;
  int node = -1;
  int link_peer = -1;  // IsLinkFault: the far end (its first IB error or socket WARN is cited too)
  std::vector<int> watchdog_ranks;
};

// The fault's own lines, and the watchdog blocks of every rank that shares a process group with
// the initiator (the first of them to time out is cited).
CitationPlan PlanCitations(const Job& job, const FaultPlan& fault);

// Which of a record's lines is cited: its first, or one the formatter places (formatter.h: the
// single offset a Format returns, or a field of ReportLineOffsets / RayLineOffsets).
enum class CitedRow : std::uint8_t {
  kFirst,
  kAt,
  kReportFailed,
  kReportRootRank,
  kRayError,
  kRayCause
};

// One line of a record the truth may cite. `first`: only the first such line of that kind and
// subject is kept (a rank's first IB error, the first line of each controller event).
struct EvidenceMarker {
  Cite what = Cite::kException;
  int subject = 0;
  CitedRow row = CitedRow::kFirst;
  bool first = false;
};

// A record's marked lines (at most two).
struct EvidenceMarkers {
  std::array<EvidenceMarker, 2> marks{};
  int count = 0;

  void Add(EvidenceMarker m) { marks[static_cast<std::size_t>(count++)] = m; }
  const EvidenceMarker* begin() const { return marks.data(); }
  const EvidenceMarker* end() const { return marks.data() + count; }
};

// The lines of `r` a truth may cite under `plan`; records not listed mark none.
template <typename R>
EvidenceMarkers MarkersOf(const R&, const CitationPlan&, const Job&) {
  return {};
}
EvidenceMarkers MarkersOf(const PythonException& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const SegfaultDump& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const RankTimers& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const NcclIbError& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const NcclSetupFailure& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const KernelMessage& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const CudaFailure& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const AgentSigterm& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const AgentFailureReport& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const AgentRendezvousFailure& r, const CitationPlan& plan,
                          const Job& job);
EvidenceMarkers MarkersOf(const StoreJoinTimeout& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const RayActorDied& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const RayNodeDead& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const RayletOomKill& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const SrunTaskExits& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const StepdCancelled& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const CtldLine& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const MpirunNotice& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const PdshNotice& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const WatchdogTimeout& r, const CitationPlan& plan, const Job& job);
EvidenceMarkers MarkersOf(const NodeLost& r, const CitationPlan& plan, const Job& job);

}  // namespace denpex::sim
