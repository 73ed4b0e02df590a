// The worker processes' training loop and NCCL operations (see workers.h). What they print
// (NCCL init lines, iteration lines, the watchdog block) is in workers_output.cc.
#include "workers.h"

#include <algorithm>

#include "gpu_faults.h"

namespace denpex::sim {

Workers::Workers(const Job& job, const FaultPlan& fault, EventQueue& queue, RecordSink& sink)
    : job_(job), fault_(fault), queue_(queue), sink_(sink), rendezvous_(job) {
  const auto n = static_cast<std::size_t>(job.world);
  alive_.assign(n, 1);
  stopped_.assign(n, 0);
  pc_.assign(n, 0);
  step_.assign(n, 0);
  waiting_.assign(n, -1);
  waiting_op_.assign(n, Op::kInit);
  enqueued_at_.assign(n, 0);
  watchdog_armed_.assign(n, 0);
  watchdog_fired_.assign(n, 0);
  dump_observed_.assign(n, 0);
  for (int k = 0; k < kNumPgKinds; ++k) {
    seq_enqueued_[k].assign(n, 0);
    seq_completed_[k].assign(n, 0);
  }
  compute_rng_.reserve(n);
  for (std::size_t r = 0; r < n; ++r)
    compute_rng_.emplace_back(job.seed, StreamId::kRankCompute, r);
  exit_code_.assign(n, 0);
  exit_time_.assign(n, -1);
  if (job.per_rank_timers) {
    step_start_.assign(n, 0);
    compute_ns_.assign(n, 0);
  }
  BuildPrograms();
  if (job.flight_recorder.buffer_size > 0) BuildFlightRecorderCycles();
}

void Workers::BuildPrograms() {
  programs_.resize(static_cast<std::size_t>(job_.pp));
  for (int stage = 0; stage < job_.pp; ++stage) {
    programs_[stage] = job_.microbatches > 1 ? OneFOneBProgram(stage) : OneMicrobatchProgram(stage);
  }
  int slices = 0;
  for (Op op : programs_[0]) slices += op == Op::kCompute ? 1 : 0;
  slice_mean_ = static_cast<double>(job_.step_time) / std::max(1, slices);
}

void Workers::AppendPass(std::vector<Op>& p, int rounds) const {
  for (int i = 0; i < rounds; ++i) {
    p.push_back(Op::kCompute);
    if (job_.tp > 1) p.push_back(Op::kTpAllreduce);
  }
}

// The DP sync closes the step: DDP all-reduces the gradients; ZeRO/FSDP reduce-scatters them
// and all-gathers the updated parameter shards.
std::vector<Workers::Op> Workers::OneMicrobatchProgram(int stage) const {
  const bool has_prev = stage > 0, has_next = stage < job_.pp - 1;
  std::vector<Op> p = {Op::kInit, Op::kBarrier, Op::kStepBegin};
  if (has_prev) p.push_back(Op::kRecvPrev);
  if (has_next) p.push_back(Op::kSendNext);
  AppendPass(p, job_.tp_rounds);
  if (has_next) p.push_back(Op::kRecvNext);
  if (has_prev) p.push_back(Op::kSendPrev);
  if (job_.dp > 1 && job_.zero) p.insert(p.end(), {Op::kDpReduceScatter, Op::kDpAllgather});
  if (job_.dp > 1 && !job_.zero) p.push_back(Op::kDpAllreduce);
  p.push_back(Op::kStepEnd);
  return p;
}

// Megatron's forward_backward_pipelining_without_interleaving, op for op (batched p2p).
std::vector<Workers::Op> Workers::OneFOneBProgram(int stage) const {
  const bool first = stage == 0, last = stage == job_.pp - 1;
  const int m = job_.microbatches;
  const int warmup = std::min(job_.pp - stage - 1, m);
  const int steady = m - warmup;
  const int forward_rounds = std::max(1, job_.tp_rounds / 2);
  const int backward_rounds = std::max(1, job_.tp_rounds - forward_rounds);
  std::vector<Op> p = {Op::kInit, Op::kBarrier, Op::kStepBegin};
  for (int i = 0; i < warmup; ++i) {
    if (!first) p.push_back(Op::kRecvPrev);  // recv_forward
    AppendPass(p, forward_rounds);
    if (!last) p.push_back(Op::kSendNext);  // send_forward
  }
  if (steady > 0 && !first) p.push_back(Op::kRecvPrev);
  for (int i = 0; i < steady; ++i) {
    AppendPass(p, forward_rounds);
    if (!last) p.push_back(Op::kSendNextRecvNext);
    AppendPass(p, backward_rounds);
    if (!first) p.push_back(i == steady - 1 ? Op::kSendPrev : Op::kSendPrevRecvPrev);
  }
  for (int i = 0; i < warmup; ++i) {
    if (!last) p.push_back(Op::kRecvNext);  // recv_backward
    AppendPass(p, backward_rounds);
    if (!first) p.push_back(Op::kSendPrev);  // send_backward
  }
  if (job_.dp > 1 && job_.zero) p.insert(p.end(), {Op::kDpReduceScatter, Op::kDpAllgather});
  if (job_.dp > 1 && !job_.zero) p.push_back(Op::kDpAllreduce);
  p.push_back(Op::kStepEnd);
  return p;
}

const std::vector<Workers::Op>& Workers::ProgramOf(int rank) const {
  return programs_[job_.PpRank(rank)];
}

void Workers::ScheduleStarts() {
  if (fault_.action() == FaultAction::kRendezvousTimeout) return;  // the rendezvous never completes
  if (fault_.action() == FaultAction::kStoreJoinTimeout) return ScheduleStoreJoinTimeout();
  // Python imports, model construction: a few seconds after torchrun spawned the worker.
  for (int rank = 0; rank < job_.world; ++rank) {
    Rng rng(job_.seed, StreamId::kRankStart, static_cast<std::uint64_t>(rank));
    const TimeNs t = job_.agent_start[job_.NodeOf(rank)] + rng.UniformInt(3'000, 6'000) * kNsPerMs;
    queue_.Push(t, EventKind::kRankStart, static_cast<std::uint32_t>(rank));
  }
}

void Workers::OnStart(int rank, TimeNs t) {
  if (!alive_[rank]) return;
  const bool joins_only = fault_.action() == FaultAction::kStoreJoinTimeout;  // waits in the TCPStore (kStoreCheck)
  if (!joins_only) EmitStartupWarnings(rank, t);
  if (job_.deepspeed_runner) EmitCommInit(rank, t);
  if (joins_only) return;
  if (SetupFails(rank)) return FailSetup(rank, t);
  if (job_.nccl_debug_info) EmitNcclInit(rank, t);
  Run(rank, t);
}

void Workers::OnResume(int rank, TimeNs t) {
  if (!alive_[rank] || stopped_[rank]) return;
  ++pc_[rank];
  Run(rank, t);
}

// Executes the rank's program from its pc until an operation takes time (compute: a resume
// event) or blocks (a rendezvous: resumed by its completion).
void Workers::Run(int rank, TimeNs t) {
  const std::vector<Op>& program = ProgramOf(rank);
  while (true) {
    const Op op = program[pc_[rank]];
    switch (op) {
      case Op::kInit:  // NCCL communicators being created (the init lines were printed)
        queue_.Push(t + kNsPerSec, EventKind::kRankResume, static_cast<std::uint32_t>(rank));
        return;
      case Op::kCompute: {
        if (stall_pending_ && rank == fault_.rank) {  // fail-slow: the GPU stalls mid-step
          stall_pending_ = false;
          stopped_[rank] = 1;
          return;
        }
        const TimeNs slice = ComputeSlice(rank);
        if (job_.per_rank_timers) compute_ns_[rank] += slice;
        queue_.Push(t + slice, EventKind::kRankResume, static_cast<std::uint32_t>(rank));
        return;
      }
      case Op::kStepBegin:
        StartStep(rank, t);
        ++pc_[rank];
        continue;
      case Op::kStepEnd:
        EndStep(rank, t);
        pc_[rank] = kStepBeginPc;
        if (stopped_[rank]) return;  // fail-slow: collected, or the slow rank stalled
        continue;
      default:
        if (op == Op::kBarrier && job_.noise.barrier_device_warning) {
          sink_.Emit(BenignWarning{rank, t, WarningKind::kBarrierDevice});
        }
        Enqueue(rank, op, t);
        return;
    }
  }
}

// The rank enqueues NCCL work and waits for it: its sequence number on the group advances,
// its watchdog covers it, and the rendezvous completes when the last member arrives.
void Workers::Enqueue(int rank, Op op, TimeNs t) {
  const auto kind = static_cast<int>(GroupKindOf(op));
  ++seq_enqueued_[kind][rank];
  const std::uint32_t id = RendezvousOf(rank, op);
  if (mismatch_armed_ && rank == fault_.rank && IsMismatchTarget(rank, op)) {
    ApplyMismatch(rank, op, id);
  }
  waiting_[rank] = static_cast<std::int32_t>(id);
  waiting_op_[rank] = op;
  enqueued_at_[rank] = t;
  if (!watchdog_armed_[rank]) {
    watchdog_armed_[rank] = 1;
    queue_.Push(t + job_.nccl_timeout, EventKind::kWatchdogCheck, static_cast<std::uint32_t>(rank));
  }
  if (rendezvous_.Arrive(id, t)) {
    queue_.Push(rendezvous_.LastArrival(id) + TransferCost(id, op), EventKind::kRendezvousDone, id);
  }
}

void Workers::OnRendezvousDone(std::uint32_t id, TimeNs t) {
  rendezvous_.Reset(id);
  const int size = rendezvous_.Size(id);
  for (int i = 0; i < size; ++i) {
    const int m = rendezvous_.Member(id, i);
    if (!alive_[m]) continue;  // died in the last microseconds of the transfer
    const auto kind = static_cast<int>(GroupKindOf(waiting_op_[m]));
    seq_completed_[kind][m] = seq_enqueued_[kind][m];
    waiting_[m] = -1;
    if (stopped_[m]) continue;  // hung: the work completed, but it issues nothing more
    ++pc_[m];
    Run(m, t);
  }
}

// The fault is timed from the step start of the rank it hits (a node's first rank, rank 0
// for a job-wide fault).
void Workers::StartStep(int rank, TimeNs t) {
  const bool job_fault = fault_.traits->scope == FaultScope::kJob;
  const int trigger = job_fault ? 0 : fault_.rank;
  if (rank == trigger && step_[rank] == fault_.step && fault_time_ < 0) {
    fault_time_ = t + fault_.offset;
    const int id = job_fault ? 0 : fault_.traits->scope == FaultScope::kNode ? fault_.node : rank;
    queue_.Push(fault_time_, EventKind::kFault, static_cast<std::uint32_t>(id));
  }
  if (rank == 0 && job_.save_every > 0 && step_[rank] > 0 && step_[rank] % job_.save_every == 0 &&
      step_[rank] <= fault_.step) {
    EmitSaveLines(rank, t);
  }
  if (rank == job_.LoggingRank() && step_[rank] == 0) last_log_time_ = t;  // the first interval
  if (!fr_step_start_.empty()) {
    fr_prev_step_start_[rank] = fr_step_start_[rank];
    fr_step_start_[rank] = t;
  }
  if (job_.per_rank_timers) {
    step_start_[rank] = t;
    compute_ns_[rank] = 0;
  }
  // Realism: the loud rank runs with PYTHONWARNINGS=always, so its warning repeats each step.
  if (rank == job_.noise.loud_rank) {
    sink_.Emit(BenignWarning{rank, t, WarningKind::kAutogradFallback});
  }
}

// The watchdog: one pending check per rank at its current work's deadline. A check that
// finds the rank past the deadline in the same work schedules the abort after the
// watchdog's poll delay; otherwise it re-arms for the work the rank is in now (if any).
void Workers::OnWatchdogCheck(int rank, TimeNs t) {
  watchdog_armed_[rank] = 0;
  if (!alive_[rank] || waiting_[rank] < 0) return;
  const TimeNs deadline = enqueued_at_[rank] + job_.nccl_timeout;
  if (deadline > t) {
    watchdog_armed_[rank] = 1;
    queue_.Push(deadline, EventKind::kWatchdogCheck, static_cast<std::uint32_t>(rank));
    return;
  }
  Rng rng(job_.seed, StreamId::kRankWatchdog, static_cast<std::uint64_t>(rank));
  watchdog_armed_[rank] = 1;
  queue_.Push(t + rng.UniformInt(0, 100 * kNsPerMs), EventKind::kWatchdogFire,
              static_cast<std::uint32_t>(rank));
}

void Workers::Terminate(int rank, TimeNs t) { Die(rank, t, kExitSigterm); }

void Workers::Signal(int rank, TimeNs t, int exit_code) { Die(rank, t, exit_code); }

void Workers::Die(int rank, TimeNs t, int exit_code) {
  if (!alive_[rank]) return;
  alive_[rank] = 0;
  exit_code_[rank] = static_cast<std::int8_t>(exit_code);
  exit_time_[rank] = t;
  // Work it had joined can no longer complete: its GPU kernels are gone with it.
  if (waiting_[rank] >= 0) rendezvous_.Poison(static_cast<std::uint32_t>(waiting_[rank]));
  sink_.Emit(WorkerExit{rank, t, exit_code});
  if (exit_code == kExitSigkill) EmitKillCleanup(job_, rank, t, sink_);  // the driver's Xid 45
  if (listener_ != nullptr && exit_code != kExitNodeLost) listener_->OnWorkerExit(rank, t);
}

TimeNs Workers::ComputeSlice(int rank) {
  const double mean = slice_mean_;
  double factor = std::max(0.1, 1.0 + job_.compute_jitter * compute_rng_[rank].Normal());
  if (IsSlowed(rank) && fault_.kind() != v1::FAULT_KIND_SLOW_NIC) factor *= fault_.slowdown;
  return static_cast<TimeNs>(mean * factor);
}

// FAULT_KIND_SLOW_NIC: the slow port carries the rank's DP ring and its pipeline transfers (its
// TP peers are on its node, over NVLink): those take `slowdown` times longer.
TimeNs Workers::TransferCost(std::uint32_t id, Op op) const {
  const TimeNs cost = CostOf(op);
  if (!slow_active_ || fault_.kind() != v1::FAULT_KIND_SLOW_NIC) return cost;
  const int r = fault_.rank;
  const int stage = job_.PpRank(r);
  const bool via_nic = (job_.dp > 1 && id == rendezvous_.GroupId(r, PgKind::kData)) ||
                       (stage + 1 < job_.pp && id == rendezvous_.ChannelId(r, true)) ||
                       (stage > 0 && id == rendezvous_.ChannelId(r, false));
  return via_nic ? static_cast<TimeNs>(static_cast<double>(cost) * fault_.slowdown) : cost;
}

bool Workers::IsSlowed(int rank) const {
  if (!slow_active_) return false;
  return fault_.traits->scope == FaultScope::kNode ? job_.NodeOf(rank) == fault_.node
                                                   : rank == fault_.rank;
}

std::uint32_t Workers::RendezvousOf(int rank, Op op) const {
  switch (op) {
    case Op::kRecvPrev:
    case Op::kSendPrev:
    case Op::kSendPrevRecvPrev:
      return rendezvous_.ChannelId(rank, /*toward_next=*/false);
    case Op::kRecvNext:
    case Op::kSendNext:
    case Op::kSendNextRecvNext:
      return rendezvous_.ChannelId(rank, /*toward_next=*/true);
    default:
      return rendezvous_.GroupId(rank, GroupKindOf(op));
  }
}

PgKind Workers::GroupKindOf(Op op) {
  switch (op) {
    case Op::kTpAllreduce:
      return PgKind::kTensor;
    case Op::kDpAllreduce:
    case Op::kDpReduceScatter:
    case Op::kDpAllgather:
      return PgKind::kData;
    case Op::kRecvPrev:
    case Op::kSendNext:
    case Op::kRecvNext:
    case Op::kSendPrev:
    case Op::kSendNextRecvNext:
    case Op::kSendPrevRecvPrev:
      return PgKind::kPipeline;
    default:
      return PgKind::kDefault;
  }
}

OpType Workers::OpTypeOf(Op op) {
  switch (op) {
    case Op::kSendNext:
    case Op::kSendPrev:
      return OpType::kSend;
    case Op::kRecvPrev:
    case Op::kRecvNext:
    case Op::kSendNextRecvNext:  // a batched send+recv waits on its receive
    case Op::kSendPrevRecvPrev:
      return OpType::kRecv;
    case Op::kDpReduceScatter:
      return OpType::kReduceScatterBase;
    case Op::kDpAllgather:
      return OpType::kAllgatherBase;
    default:
      return OpType::kAllreduce;  // a barrier is an all-reduce of one element
  }
}

// ZeRO/FSDP's flat buffers: the reduce-scatter takes the whole bucket in and leaves a
// 1/dp shard; the all-gather takes the shard in and gives the bucket out.
std::int64_t Workers::NumelOf(Op op) const {
  if (op == Op::kDpAllgather) return job_.workload.dp_numel / job_.dp;
  switch (GroupKindOf(op)) {
    case PgKind::kTensor:
      return job_.workload.tp_numel;
    case PgKind::kData:
      return job_.workload.dp_numel;
    case PgKind::kPipeline:
      return job_.workload.p2p_numel;
    case PgKind::kDefault:
      return job_.workload.barrier_numel;
  }
  return 0;
}

std::int64_t Workers::NumelOutOf(Op op) const {
  if (op == Op::kDpReduceScatter) return job_.workload.dp_numel / job_.dp;
  if (op == Op::kDpAllgather) return job_.workload.dp_numel;
  return NumelOf(op);
}

TimeNs Workers::CostOf(Op op) const {
  switch (GroupKindOf(op)) {
    case PgKind::kTensor:
      return job_.workload.tp_cost;
    case PgKind::kData:
      return job_.workload.dp_cost;
    case PgKind::kPipeline:
      return job_.workload.p2p_cost;
    case PgKind::kDefault:
      return job_.workload.barrier_cost;
  }
  return 0;
}

}  // namespace denpex::sim
