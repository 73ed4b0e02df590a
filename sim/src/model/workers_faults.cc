// What the workers do when a rank or node fault fires (see faults.h for the registry): die
// silently, dump a segfault, raise, hang, issue a mismatched collective, vanish with the node.
// Job-wide faults (the scheduler's) are the launcher's business, not the workers'.
#include "workers.h"

#include "gpu_faults.h"

namespace denpex::sim {

void Workers::OnFault(std::uint32_t id, TimeNs t) {
  if (fault_.action() == FaultAction::kNcclSetup) return;  // it struck at init (FailSetup)
  if (fault_.action() == FaultAction::kSlowdown) {
    slow_active_ = true;  // ComputeSlice reads it; AfterSlowStep ends the run
    return;
  }
  if (fault_.action() == FaultAction::kJobException) {
    RaiseEverywhere(t);
  } else if (fault_.action() == FaultAction::kEvict) {
    fault_time_ = t;
    if (listener_ != nullptr) listener_->OnNodeEvicted(static_cast<int>(id), t);
  } else if (fault_.kind() == v1::FAULT_KIND_STORE_HOST_LOSS) {
    LoseStoreHost(static_cast<int>(id), t);
  } else if (fault_.traits->scope == FaultScope::kNode) {
    LoseNode(static_cast<int>(id), t);
  } else {
    FireRankFault(static_cast<int>(id), t);
  }
}

void Workers::FireRankFault(int rank, TimeNs t) {
  if (!alive_[rank]) return;
  Rng rng(job_.seed, StreamId::kFaultBehaviour, static_cast<std::uint64_t>(rank));
  switch (fault_.action()) {
    case FaultAction::kSigkill:
      Die(rank, t, kExitSigkill);
      return;
    case FaultAction::kSegfault:
      sink_.Emit(SegfaultDump{rank, t, fault_.variant});
      Die(rank, t + rng.UniformInt(50, 400) * kNsPerUs, kExitSigsegv);
      return;
    case FaultAction::kException:
      // The traceback is printed at once; the interpreter then tears down (atexit handlers,
      // NCCL communicator destructors) before the process exits with status 1.
      EmitSaveNotice(rank, t);
      sink_.Emit(PythonException{rank, t, fault_.variant, AppErrorOf(fault_.kind())});
      stopped_[rank] = 1;
      queue_.Push(t + rng.UniformInt(300, 1500) * kNsPerMs, EventKind::kRankExit,
                  static_cast<std::uint32_t>(rank));
      if (NodeJitBuildFailure(fault_)) FailLockWaiters(rank, t);
      return;
    case FaultAction::kHang:
      stopped_[rank] = 1;
      return;
    case FaultAction::kMismatch:
      mismatch_armed_ = true;
      return;
    case FaultAction::kCudaError: {
      // The CUDA error surfaces at the rank's next synchronisation; the interpreter then
      // tears down as after any exception. The kernel lines span the fault to the exit.
      const TimeNs raise_at = t + rng.UniformInt(5, 400) * kNsPerMs;
      const TimeNs exit_at = raise_at + rng.UniformInt(300, 1500) * kNsPerMs;
      EmitFaultKernelLines(job_, fault_, rank, t, exit_at, sink_);
      sink_.Emit(CudaFailure{rank, raise_at, CudaFailureOf(fault_), fault_.variant});
      stopped_[rank] = 1;
      queue_.Push(exit_at, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
      return;
    }
    case FaultAction::kHostOom:
      // The kernel picks the rank's process (the largest RSS) and SIGKILLs it.
      EmitSaveNotice(rank, t);
      EmitOomKill(job_, rank, t, sink_);
      oom_killed_ = rank;
      Die(rank, t + rng.UniformInt(3, 45) * kNsPerMs, kExitSigkill);
      return;
    case FaultAction::kNicFailure:
      FailNic(rank, t);
      return;
    case FaultAction::kNodeLoss:
    case FaultAction::kSchedulerCancel:
    case FaultAction::kSlowdown:
    case FaultAction::kNcclSetup:
    case FaultAction::kSlurmdSilent:
    case FaultAction::kJobException:
    case FaultAction::kEvict:
    case FaultAction::kRendezvousTimeout:
    case FaultAction::kStoreJoinTimeout:
      return;  // not handled here
  }
}

// Fail-slow ends in one of two ways once the slow steps are done: the logs are collected from
// the running job (every rank stops at the same step: nothing more is printed), or the slow
// rank's GPU stalls for good (it issues nothing more; its peers' watchdogs fire later).
void Workers::AfterSlowStep(int rank) {
  if (fault_.action() != FaultAction::kSlowdown || fault_time_ < 0) return;
  if (step_[rank] < fault_.step + fault_.slow_steps) return;
  if (!fault_.stall) {
    stopped_[rank] = 1;
  } else if (rank == fault_.rank) {
    stall_pending_ = true;  // Run stops it in its next compute slice
  }
}

// A checkpoint load: every rank runs the same code on the same files, so every rank raises the
// same error within a few hundred ms (file-system latency), and exits after teardown.
void Workers::RaiseEverywhere(TimeNs t) {
  for (int rank = 0; rank < job_.world; ++rank) {
    if (!alive_[rank]) continue;
    Rng rng(job_.seed, StreamId::kFaultBehaviour, static_cast<std::uint64_t>(rank));
    const TimeNs at = t + rng.UniformInt(0, 400'000) * kNsPerUs / 1000;
    sink_.Emit(PythonException{rank, at, fault_.variant, AppErrorOf(fault_.kind())});
    stopped_[rank] = 1;
    queue_.Push(at + rng.UniformInt(300, 1500) * kNsPerMs, EventKind::kRankExit,
                static_cast<std::uint32_t>(rank));
  }
}

// The node's other ranks waited on torch's extension build lock (FileBaton polls every 0.1 s)
// while `builder` ran ninja; when the failed build releases it they import the .so it never
// wrote and raise ImportError, then exit after teardown.
void Workers::FailLockWaiters(int builder, TimeNs t) {
  const int first = job_.NodeOf(builder) * job_.gpus_per_node;
  for (int rank = first; rank < first + job_.gpus_per_node && rank < job_.world; ++rank) {
    if (rank == builder || !alive_[rank] || stopped_[rank]) continue;
    Rng rng(job_.seed, StreamId::kFaultBehaviour, static_cast<std::uint64_t>(rank));
    const TimeNs at = t + rng.UniformInt(20, 400) * kNsPerMs;
    sink_.Emit(PythonException{rank, at, fault_.variant, AppError::kExtensionImport});
    stopped_[rank] = 1;
    queue_.Push(at + rng.UniformInt(300, 1500) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
  }
}

// The saving rank's DeepSpeed notice just before a checkpoint save runs out of memory.
void Workers::EmitSaveNotice(int rank, TimeNs t) {
  const bool save = fault_.kind() == v1::FAULT_KIND_SAVE_OOM_HOST || fault_.kind() == v1::FAULT_KIND_SAVE_OOM_HBM;
  if (!save || job_.trainer_log != v1::TRAINER_LOG_DEEPSPEED) return;
  DeepSpeedLine line{rank, t - 850 * kNsPerMs, DeepSpeedNote::kSaving, step_[rank]};
  sink_.Emit(line);
}

void Workers::OnExceptionExit(int rank, TimeNs t) {
  if (fault_.action() == FaultAction::kNicFailure) return AbortOnNcclError(rank, t);
  Die(rank, t, kExitException);
}

// Every process of the node vanishes at the same instant, its agent with it: nothing more is
// written, and what sat in buffers is gone.
void Workers::LoseNode(int node, TimeNs t) {
  const int first = node * job_.gpus_per_node;
  for (int rank = first; rank < first + job_.gpus_per_node; ++rank) Die(rank, t, kExitNodeLost);
  if (listener_ != nullptr) listener_->OnNodeLost(node, t);
}

// The collective the mismatch hits: the rank's next TP all-reduce (DP when tp = 1, a
// pipeline send when the job has neither); a skipped one is ZeRO's gradient reduce-scatter.
bool Workers::IsMismatchTarget(int, Op op) const {
  if (fault_.traits->odd_collective == OddCollective::kSkipped) return op == Op::kDpReduceScatter;
  if (job_.tp > 1) return op == Op::kTpAllreduce;
  if (job_.dp > 1) return op == Op::kDpAllreduce || op == Op::kDpReduceScatter;
  return op == Op::kSendNext || op == Op::kSendPrev || op == Op::kSendNextRecvNext ||
         op == Op::kSendPrevRecvPrev;
}

// Variant 0: a different op (an all-gather where the peers all-reduce); variant 1: the same
// op with a different element count; skipped: the group's next collective (the all-gather after
// ZeRO's reduce-scatter), under the same SeqNum. Either way the instance can never complete: NCCL
// hangs.
void Workers::ApplyMismatch(int rank, Op op, std::uint32_t rendezvous) {
  mismatch_armed_ = false;
  mismatch_rendezvous_ = static_cast<std::int32_t>(rendezvous);
  mismatch_seq_ = seq_enqueued_[static_cast<int>(GroupKindOf(op))][rank];
  mismatch_group_ = GroupKindOf(op);
  mismatch_expected_ = OpTypeOf(op);
  const std::int64_t numel = NumelOf(op);
  if (fault_.traits->odd_collective == OddCollective::kSkipped) {
    const Op next = Op::kDpAllgather;  // ZeRO's step ends reduce-scatter, then all-gather
    mismatch_op_ = OpTypeOf(next);
    mismatch_numel_ = NumelOf(next);
    mismatch_numel_out_ = NumelOutOf(next);
  } else if (fault_.variant % 2 == 0 && OpTypeOf(op) == OpType::kAllreduce) {
    mismatch_op_ = OpType::kAllgatherBase;
    mismatch_numel_ = numel / job_.GroupSize(GroupKindOf(op));
    mismatch_numel_out_ = mismatch_numel_ * job_.GroupSize(GroupKindOf(op));
  } else {
    mismatch_op_ = OpTypeOf(op);
    mismatch_numel_ = numel + 4096 * (1 + fault_.variant % 7);
    mismatch_numel_out_ = NumelOutOf(op) + 4096 * (1 + fault_.variant % 7);
  }
  rendezvous_.Poison(rendezvous);
}

}  // namespace denpex::sim
