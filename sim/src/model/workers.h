// The worker processes (one per rank): their training loop, their NCCL work and its
// watchdog, and their deaths. State is struct-of-arrays indexed by rank, so 131,072 ranks
// stay a few tens of MB and each event touches a few cache lines.
//
// Each rank runs a fixed program per step (built once per pipeline stage). With one
// microbatch (training.microbatches = 1):
//   [RECV from previous stage] [SEND to next stage]           forward activations
//   tp_rounds x (compute slice, TP ALLREDUCE)
//   [RECV from next stage] [SEND to previous stage]            backward gradients
//   DP sync, end of step (the logging rank prints the trainer's lines)
// The forward chain runs stage 0 -> pp-1 and the backward chain pp-1 -> 0, so every rank's
// operations are ordered consistently with one global order: the loop cannot deadlock.
// With M > 1 microbatches the step is Megatron's 1F1B schedule (with batched p2p): stage s
// runs W = min(pp - s - 1, M) warm-up forwards, then M - W rounds of (forward,
// send_forward_recv_backward, backward, send_backward_recv_forward), then W backwards; a
// forward is (recv activations, compute + TP all-reduce rounds, send activations), a
// backward the same toward the previous stage. Neighbouring stages issue their channel's
// operations in the same order, so it cannot deadlock either. The DP sync is an ALLREDUCE
// (DDP) or a _REDUCE_SCATTER_BASE of the gradients and an _ALLGATHER_BASE of the updated
// parameters (ZeRO/FSDP, training.data_parallel).
// Operations are synchronous: a rank waits in at most one NCCL operation at a time, which
// is the one its watchdog reports.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "event_queue.h"
#include "faults.h"
#include "job.h"
#include "records.h"
#include "rendezvous.h"
#include "rng.h"

namespace denpex::sim {

// Told when a worker process exits (the launcher listens), and when a whole node vanishes.
class WorkerExitListener {
 public:
  virtual ~WorkerExitListener() = default;
  virtual void OnWorkerExit(int rank, TimeNs time) = 0;
  virtual void OnNodeLost(int node, TimeNs time) = 0;
  // Kubernetes: the kubelet SIGTERMs the node's pod (FAULT_KIND_POD_EVICTION).
  virtual void OnNodeEvicted(int /*node*/, TimeNs /*time*/) {}
  // The c10d store's host lost its processes (FAULT_KIND_STORE_HOST_LOSS).
  virtual void OnStoreLost(int /*node*/, TimeNs /*time*/) {}
};

class Workers {
 public:
  Workers(const Job& job, const FaultPlan& fault, EventQueue& queue, RecordSink& sink);
  void set_exit_listener(WorkerExitListener* listener) { listener_ = listener; }

  void ScheduleStarts();
  void OnStart(int rank, TimeNs t);
  void OnResume(int rank, TimeNs t);
  void OnRendezvousDone(std::uint32_t id, TimeNs t);
  void OnWatchdogCheck(int rank, TimeNs t);
  void OnWatchdogFire(int rank, TimeNs t);
  // kWatchdogAbort's id: the rank, and what happens to it. Plain: SIGABRT after the
  // flight-recorder dump or the heartbeat monitor's report; kAbortRaised: the main thread raises
  // (traceback), then kAbortExit (exit 1); kAbortDumpObserved: its heartbeat monitor sees
  // another rank's dump signal.
  static constexpr std::uint32_t kAbortRankMask = (1u << 18) - 1;
  static constexpr std::uint32_t kAbortRaised = 1u << 18;
  static constexpr std::uint32_t kAbortDumpObserved = 1u << 19;
  static constexpr std::uint32_t kAbortExit = kAbortRaised | kAbortDumpObserved;  // exits 1
  void OnWatchdogAbort(std::uint32_t id, TimeNs t);
  // The fault fires (workers_faults.cc): `id` is the rank, or the node for a node fault.
  void OnFault(std::uint32_t id, TimeNs t);
  void OnExceptionExit(int rank, TimeNs t);        // the interpreter finished tearing down
  void OnStoreCheck(int rank, TimeNs t);  // its heartbeat monitor finds the c10d store gone
  void Terminate(int rank, TimeNs t);              // SIGTERM: exits without printing
  void Signal(int rank, TimeNs t, int exit_code);  // dies by a signal sent from outside

  bool alive(int rank) const { return alive_[rank] != 0; }
  int exit_code(int rank) const { return exit_code_[rank]; }
  TimeNs exit_time(int rank) const { return exit_time_[rank]; }
  TimeNs fault_time() const { return fault_time_; }
  int step(int rank) const { return step_[static_cast<std::size_t>(rank)]; }  // its current step
  void NoteFault(TimeNs t) { fault_time_ = t; }  // a fault the launcher saw (a rendezvous timeout)
  // The rank the kernel OOM killer took (host OOM), or -1.
  int oom_killed() const { return oom_killed_; }
  std::uint64_t watchdog_timeouts() const { return watchdog_timeouts_; }
  // NCCL set-up failure (workers_network.cc): does it hit this rank (its init fails)?
  bool SetupFails(int rank) const;
  // The last step end of any rank (the end of a run no process left: fail-slow collection).
  TimeNs last_step_end() const { return last_step_end_; }
  // The trainer's line for `iteration` (workers_output.cc); the last one printed and its pace.
  TrainerIteration IterationLine(int iteration, TimeNs t, double elapsed_ms) const;
  int last_iteration() const { return last_iteration_; }
  double last_elapsed_ms() const { return last_elapsed_ms_; }
  // The last watchdog timeout (mode 0: the hung job's logs are collected after it).
  TimeNs last_watchdog_fire() const { return last_watchdog_fire_; }
  // The rank's collectives on its TP group (DP when tp = 1) the mismatch hit, or -1.
  std::int64_t mismatch_seq() const { return mismatch_seq_; }
  // The RAS poller (scenario nccl_ras, workers_ras.cc): `ncclras` at `t` (kept or not, as
  // nccl_ras.queries says), and the kept polls handed to the sink, oldest first.
  void PollRas(TimeNs t);
  void EmitRasReports();
  bool AnyAlive() const;

 private:
  void ScheduleStoreJoinTimeout();  // FAULT_KIND_STORE_JOIN_TIMEOUT (workers_network.cc)
  void EmitHungMount(TimeNs raise);  // its node's kernel log under srun / mpirun
  enum class Op : std::uint8_t {
    kInit,
    kBarrier,
    kStepBegin,
    kRecvPrev,
    kSendNext,
    kCompute,
    kTpAllreduce,
    kRecvNext,
    kSendPrev,
    kDpAllreduce,
    kStepEnd,
    kSendNextRecvNext,  // 1F1B: send_forward_recv_backward (one batched p2p operation)
    kSendPrevRecvPrev,  // 1F1B: send_backward_recv_forward
    kDpReduceScatter,   // ZeRO/FSDP: gradients
    kDpAllgather,       // ZeRO/FSDP: updated parameters
  };
  static constexpr std::uint16_t kStepBeginPc = 2;  // after kInit, kBarrier
  // One NCCL operation of a step's program, at its nominal place (flight recorder).
  struct FrCycleOp {
    Op op;
    TimeNs offset;  // from the step's start to the enqueue, with no jitter and no waiting
    TimeNs cost;    // from the enqueue to the completion
    bool batched;   // a batched send+recv: three entries (send, recv, coalesced)
  };

  void BuildPrograms();
  std::vector<Op> OneMicrobatchProgram(int stage) const;
  std::vector<Op> OneFOneBProgram(int stage) const;
  void AppendPass(std::vector<Op>& p, int rounds) const;  // compute + TP all-reduce rounds
  const std::vector<Op>& ProgramOf(int rank) const;
  void Run(int rank, TimeNs t);
  void Enqueue(int rank, Op op, TimeNs t);
  void StartStep(int rank, TimeNs t);
  void EndStep(int rank, TimeNs t);
  void EmitNcclInit(int rank, TimeNs t);
  void EmitStartupWarnings(int rank, TimeNs t);
  void EmitCommInit(int rank, TimeNs t);  // DeepSpeed runner: init_distributed's lines (workers_output.cc)
  void Die(int rank, TimeNs t, int exit_code);
  void FireRankFault(int rank, TimeNs t);
  void RaiseEverywhere(TimeNs t);
  void FailLockWaiters(int builder, TimeNs t);
  void EmitSaveNotice(int rank, TimeNs t);
  void EmitSaveLines(int rank, TimeNs t);
  void EmitDeepSpeedNotes(int rank, TimeNs t, int iteration);
  void LoseNode(int node, TimeNs t);
  bool IsMismatchTarget(int rank, Op op) const;
  void ApplyMismatch(int rank, Op op, std::uint32_t rendezvous);
  TimeNs ComputeSlice(int rank);
  bool IsSlowed(int rank) const;  // fail-slow: the fault has fired and hits this rank
  void EmitTimers(int rank, TimeNs t);
  // The watchdog's reaction (workers_output.cc): fills it in, returns when the process ends.
  TimeNs React(int rank, TimeNs t, WatchdogTimeout* w) const;
  void SignalDump(int rank, TimeNs t);   // the first timed-out rank's TCPStore dump signal
  // The flight recorder (timeouts.flight_recorder, workers_fr.cc): the rank's dump of its ring
  // at `t`, rebuilt from its program, its groups' counters and its step times.
  void EmitFlightRecorder(int rank, TimeNs t, bool first_failed);
  static constexpr TimeNs kDumpWriteDelay = 2 * kNsPerMs;  // "preparing to dump" to the file
  FlightRecorderDump FlightRecorderOf(int rank, TimeNs t) const;
  void BuildFlightRecorderCycles();
  // RAS (workers_ras.cc): per stage and group kind, the launched collectives by type of the
  // operations before the first step and of one step's cycle (entry i: the first i).
  struct RasKindTable {
    std::vector<RasCounts> prefix, cycle;
  };
  void BuildRasTables();
  RasCounts RasCountsOf(int rank, int kind) const;
  NcclRasReport RasReportOf(TimeNs t) const;
  void ObserveDump(int rank, TimeNs t);  // another rank's heartbeat monitor finds it
  void AfterSlowStep(int rank);  // fail-slow: collection or stall once the slow steps are done
  // NIC failure (workers_network.cc): the failed NIC's rank and its peers across the node
  // boundary print IB completion errors and abort; their other peers see flushed work.
  void FailNic(int rank, TimeNs t);
  // IsLinkFault: only the link to one peer fails; each end reports it and aborts.
  void FailLink(int rank, TimeNs t, Rng& rng);
  void ResetLink(int rank, int peer, TimeNs t, Rng& rng);  // FailLink under NET/Socket
  void ReportLinkEnd(int rank, TimeNs at, int peer, bool send, Rng& rng);
  void ResetSockets(int rank, TimeNs t, Rng& rng);  // FailNic under NET/Socket
  void AbortOnNcclError(int rank, TimeNs t);
  void Warn(const NcclIbError& e);  // emit an NCCL WARN and remember the rank's last one
  // The c10d store's host lost (workers_network.cc): the node vanishes, the others' monitors see it.
  void LoseStoreHost(int node, TimeNs t);
  void FailSetup(int rank, TimeNs t);
  std::uint32_t RendezvousOf(int rank, Op op) const;
  static PgKind GroupKindOf(Op op);
  static OpType OpTypeOf(Op op);
  std::int64_t NumelOf(Op op) const;
  std::int64_t NumelOutOf(Op op) const;
  TimeNs CostOf(Op op) const;
  TimeNs TransferCost(std::uint32_t id, Op op) const;  // CostOf, slowed through a slow NIC

  const Job& job_;
  FaultPlan fault_;
  EventQueue& queue_;
  RecordSink& sink_;
  WorkerExitListener* listener_ = nullptr;
  Rendezvous rendezvous_;
  std::vector<std::vector<Op>> programs_;  // by pipeline stage
  double slice_mean_ = 0;                   // mean compute slice (ns)

  // Per-rank state (struct of arrays).
  std::vector<std::uint8_t> alive_;
  std::vector<std::uint8_t> stopped_;  // alive but no longer runs its program (hang, exiting)
  std::vector<std::uint16_t> pc_;
  std::vector<std::int32_t> step_;
  std::vector<std::int32_t> waiting_;  // rendezvous id the rank waits in, or -1
  std::vector<Op> waiting_op_;
  std::vector<TimeNs> enqueued_at_;
  std::vector<std::uint8_t> watchdog_armed_;
  std::vector<std::uint8_t> watchdog_fired_;  // its watchdog caught a timeout
  std::vector<std::uint8_t> dump_observed_;   // its monitor dumped on another rank's signal
  std::array<std::vector<std::int32_t>, kNumPgKinds> seq_enqueued_;
  std::array<std::vector<std::int32_t>, kNumPgKinds> seq_completed_;
  std::vector<Rng> compute_rng_;
  std::vector<std::int8_t> exit_code_;
  std::vector<TimeNs> exit_time_;
  std::vector<TimeNs> step_start_;  // per-rank timers: when the step began
  std::vector<TimeNs> compute_ns_;  // per-rank timers: compute time in the step so far

  TimeNs fault_time_ = -1;
  int oom_killed_ = -1;
  double loss_scale_ = 65536;  // DeepSpeed's fp16 dynamic loss scale (realism: overflow notices)
  // Collective mismatch: armed when the fault fires, applied to the rank's next collective.
  bool mismatch_armed_ = false;
  std::int64_t mismatch_seq_ = -1;
  OpType mismatch_op_ = OpType::kAllreduce;
  std::int64_t mismatch_numel_ = 0;
  std::int64_t mismatch_numel_out_ = 0;
  std::int32_t mismatch_rendezvous_ = -1;
  PgKind mismatch_group_ = PgKind::kDefault;       // the group of the collective it hit
  OpType mismatch_expected_ = OpType::kAllreduce;  // ... and what its peers launched there
  bool slow_active_ = false;  // fail-slow: the fault fired
  bool stall_pending_ = false;  // fail-slow with stall: the slow rank's next kernel never ends
  std::vector<int> nic_peers_;  // NIC failure: the failed NIC's peers across nodes (abort too)
  // Network faults: each reporting rank's latest NCCL WARN (its ncclGetLastError()).
  std::unordered_map<int, NcclIbError> last_warn_;
  TimeNs last_step_end_ = 0;
  TimeNs last_log_time_ = 0;  // the logging rank's previous iteration line
  int last_iteration_ = 0;
  double last_elapsed_ms_ = 0;
  std::uint64_t watchdog_timeouts_ = 0;
  int first_detector_ = -1;  // dump_on_timeout: the rank whose dump signal the others see
  TimeNs last_watchdog_fire_ = 0;
  // Flight recorder (empty without a trace buffer): per stage, the step's NCCL operations and the
  // step's nominal length; per rank, when its current and its previous step began.
  std::vector<std::vector<FrCycleOp>> fr_cycles_;
  std::vector<TimeNs> fr_cycle_ns_;
  std::vector<TimeNs> fr_step_start_, fr_prev_step_start_;
  // RAS (empty without nccl_ras): the counts tables by stage, and the polls kept so far.
  std::vector<std::array<RasKindTable, kNumPgKinds>> ras_tables_;
  std::deque<NcclRasReport> ras_polls_;
  // Per rank, the timeout whose aftermath is still to come (empty until a reaction needs it).
  std::vector<WatchdogTimeout> aftermath_;
};

}  // namespace denpex::sim
