// What worker processes print: NCCL communicator init lines (with NCCL_DEBUG=INFO), the last
// rank's iteration line at the end of a step, and the watchdog block before the abort. The
// values are decided here; their text is the formatter's business.
#include <algorithm>
#include <cmath>

#include "checkpoints.h"
#include "workers.h"

namespace denpex::sim {

// One communicator per process group the rank belongs to (size > 1), created at start-up in
// group-creation order; the NCCL version banner comes with the process's first communicator
// in which it is rank 0 (NCCL prints it once per process).
void Workers::EmitNcclInit(int rank, TimeNs t) {
  Rng rng(job_.seed, StreamId::kNcclInit, static_cast<std::uint64_t>(rank));
  bool banner_printed = false, first = true;
  sink_.Emit(NcclProcessInfo{rank, t});
  for (int k = 0; k < kNumPgKinds; ++k) {
    const auto kind = static_cast<PgKind>(k);
    if (job_.GroupSize(kind) < 2) continue;
    t += rng.UniformInt(20, 180) * kNsPerMs;
    if (!banner_printed && job_.GroupRank(rank, kind) == 0) {
      sink_.Emit(NcclVersionBanner{rank, t});
      banner_printed = true;
    }
    sink_.Emit(NcclCommInit{rank, t, kind, first});
    first = false;
  }
}

// Realism: the start-up warnings every rank prints (the TCPStore client's IPv6 attempt, the
// checkpoint loader's TypedStorage warning), a few hundred ms apart.
void Workers::EmitStartupWarnings(int rank, TimeNs t) {
  if (!job_.noise.benign_warnings) return;
  Rng rng(job_.seed, StreamId::kLineTiming, (1ULL << 32) + static_cast<std::uint64_t>(rank));
  sink_.Emit(
      BenignWarning{rank, t - rng.UniformInt(200, 900) * kNsPerMs, WarningKind::kSocketFamily});
  sink_.Emit(BenignWarning{rank, t + rng.UniformInt(1, 40) * kNsPerMs, WarningKind::kTypedStorage});
}

// deepspeed.init_distributed's lines (DeepSpeed's runner under mpirun or srun), as the rank's
// script reaches it a few milliseconds after its imports.
void Workers::EmitCommInit(int rank, TimeNs t) {
  Rng rng(job_.seed, StreamId::kLineTiming, (13ULL << 32) + static_cast<std::uint64_t>(rank));
  sink_.Emit(DeepSpeedLine{rank, t + rng.UniformInt(2, 40) * kNsPerMs, DeepSpeedNote::kCommInit, 0});
}

// Rank 0's lines of the save of the steps just done (scenario `checkpointing`), timed as the
// save's files are (checkpoints.cc): the newest save's finish line is missing when that save
// never finished.
void Workers::EmitSaveLines(int rank, TimeNs t) {
  const int iteration = step_[rank];
  const TimeNs took = SaveDuration((fault_.step - iteration) * job_.step_time + fault_.offset);
  sink_.Emit(CheckpointSave{rank, t + took / 8, iteration, false});
  const bool newest = iteration == fault_.step / job_.save_every * job_.save_every;
  if (newest && job_.newest_save_unfinished) return;
  sink_.Emit(CheckpointSave{rank, t + took, iteration, true});
}

// The logging rank (Megatron's last rank, DeepSpeed's rank 0) prints the trainer's lines
// every log_interval steps.
void Workers::EndStep(int rank, TimeNs t) {
  const int iteration = ++step_[rank];
  last_step_end_ = std::max(last_step_end_, t);
  if (job_.per_rank_timers && iteration % job_.log_interval == 0) EmitTimers(rank, t);
  AfterSlowStep(rank);
  if (rank == job_.LoggingRank()) EmitDeepSpeedNotes(rank, t, iteration);
  if (rank != job_.LoggingRank() || iteration % job_.log_interval != 0) return;
  const double elapsed_ms = static_cast<double>(t - last_log_time_) / job_.log_interval / kNsPerMs;
  const TrainerIteration line = IterationLine(iteration, t, elapsed_ms);
  last_iteration_ = iteration;
  last_elapsed_ms_ = elapsed_ms;
  last_log_time_ = t;
  sink_.Emit(line);
}

// The logging rank's line for `iteration`: the loss curve is a function of the iteration, so
// a run resumed from a checkpoint prints the same numbers again.
TrainerIteration Workers::IterationLine(int iteration, TimeNs t, double elapsed_ms) const {
  Rng rng(job_.seed, StreamId::kTrainer, static_cast<std::uint64_t>(iteration));
  const double it = iteration;
  TrainerIteration line{};
  line.rank = job_.LoggingRank();
  line.time = t;
  line.iteration = iteration;
  line.elapsed_ms = elapsed_ms;
  line.learning_rate = 1.5e-4 * std::min(1.0, it / 2000.0);
  line.loss = 2.1 + 8.6 * std::exp(-it / 450.0) + 0.03 * rng.Normal();
  line.grad_norm = 0.9 + 6.0 * std::exp(-it / 120.0) + 0.05 * std::fabs(rng.Normal());
  if (job_.trainer_log == v1::TRAINER_LOG_DEEPSPEED) {  // round(bytes / 2**30, 2), as printed
    line.mem_allocated_gb = std::round(100 * (38.0 + 0.4 * rng.Uniform())) / 100;
    line.max_mem_allocated_gb = std::round(100 * (61.0 + 0.1 * rng.Uniform())) / 100;
  }
  return line;
}

// DeepSpeed's rank-0 notes at the end of a step, before its step line: the fp16 loss scaler's
// overflow (realism: on about one step in four, the scale halves), and under ZeRO offload the
// `see_memory_usage` report whose host memory grows from about 55% to 97% at the fault step.
void Workers::EmitDeepSpeedNotes(int rank, TimeNs t, int iteration) {
  if (job_.trainer_log != v1::TRAINER_LOG_DEEPSPEED) return;
  Rng rng(job_.seed, StreamId::kTrainer, (1ULL << 40) + static_cast<std::uint64_t>(iteration));
  if (job_.noise.deepspeed_overflow && (iteration <= 2 || rng.Uniform() < 0.25)) {
    DeepSpeedLine o{rank, t - rng.UniformInt(2, 40) * kNsPerMs, DeepSpeedNote::kOverflow, iteration};
    o.loss_scale = loss_scale_;
    loss_scale_ = std::max(1.0, loss_scale_ / 2);
    sink_.Emit(o);
  }
  if (fault_.kind() != v1::FAULT_KIND_OFFLOAD_HOST_OOM) return;
  const double progress = std::min(1.0, iteration / std::max(1.0, static_cast<double>(fault_.step)));
  DeepSpeedLine m{rank, t - rng.UniformInt(1, 30) * kNsPerMs, DeepSpeedNote::kMemoryUsage, iteration};
  m.host_percent = std::round(10 * (55.0 + 41.5 * progress + 0.4 * rng.Uniform())) / 10;
  m.host_used_gb = std::round(100 * 2015.56 * m.host_percent / 100) / 100;
  m.mem_allocated_gb = std::round(100 * (38.0 + 0.4 * rng.Uniform())) / 100;
  sink_.Emit(m);
}

// Every rank's timers for the step it just finished: compute (its own kernels) and the wait
// in NCCL work (the rest of the step). A slow rank computes longest and waits least.
void Workers::EmitTimers(int rank, TimeNs t) {
  Rng rng(job_.seed, StreamId::kLineTiming,
          (2ULL << 32) + static_cast<std::uint64_t>(rank) * 4096 + static_cast<std::uint64_t>(step_[rank] % 4096));
  RankTimers r{};
  r.rank = rank;
  r.time = t + rng.UniformInt(200, 2000) * kNsPerUs;
  r.compute_ms = static_cast<double>(compute_ns_[rank]) / kNsPerMs;
  r.wait_ms = static_cast<double>(t - step_start_[rank] - compute_ns_[rank]) / kNsPerMs;
  r.fwd_share = 0.31 + 0.04 * rng.Uniform();
  r.optimizer_ms = 9.0 + 4.0 * rng.Uniform();
  r.slow = IsSlowed(rank);
  sink_.Emit(r);
}

void Workers::OnWatchdogFire(int rank, TimeNs t) {
  watchdog_armed_[rank] = 0;
  if (!alive_[rank] || waiting_[rank] < 0) return;
  if (enqueued_at_[rank] + job_.nccl_timeout > t) {  // its work completed meanwhile
    watchdog_armed_[rank] = 1;
    queue_.Push(enqueued_at_[rank] + job_.nccl_timeout, EventKind::kWatchdogCheck,
                static_cast<std::uint32_t>(rank));
    return;
  }
  const Op op = waiting_op_[rank];
  const auto kind = static_cast<int>(GroupKindOf(op));
  watchdog_fired_[rank] = 1;
  WatchdogTimeout w{};
  w.rank = rank;
  w.time = t;
  w.group = GroupKindOf(op);
  w.op = OpTypeOf(op);
  w.numel = NumelOf(op);
  w.numel_out = NumelOutOf(op);
  if (rank == fault_.rank && waiting_[rank] == mismatch_rendezvous_) {  // its odd collective
    w.op = mismatch_op_;
    w.numel = mismatch_numel_;
    w.numel_out = mismatch_numel_out_;
  }
  w.seq = seq_enqueued_[kind][rank];
  w.last_enqueued = seq_enqueued_[kind][rank];
  w.last_completed = seq_completed_[kind][rank];
  w.timeout_ms = job_.nccl_timeout / kNsPerMs;
  w.ran_for_ms = (t - enqueued_at_[rank]) / kNsPerMs;
  if (job_.dump_on_timeout && !dump_observed_[rank]) {  // the monitor wakes, dumps, aborts
    Rng rng(job_.seed, StreamId::kRankWatchdog, (1ULL << 32) + static_cast<std::uint64_t>(rank));
    w.dump_signal_delay = rng.UniformInt(50, 400) * kNsPerMs;
    w.dump_abort_delay = w.dump_signal_delay + rng.UniformInt(2, 6) * kNsPerMs;
    w.default_enqueued = seq_enqueued_[static_cast<int>(PgKind::kDefault)][rank];
    w.default_completed = seq_completed_[static_cast<int>(PgKind::kDefault)][rank];
  }
  w.dump_observed = dump_observed_[rank] != 0;
  const TimeNs later = React(rank, t, &w);
  sink_.Emit(w);
  ++watchdog_timeouts_;
  last_watchdog_fire_ = std::max(last_watchdog_fire_, t);
  if (w.dump_signal_delay > 0 && job_.flight_recorder.buffer_size > 0) {  // "preparing to dump"
    EmitFlightRecorder(rank, t + w.dump_signal_delay + kDumpWriteDelay, first_detector_ < 0);
  }
  if (job_.dump_on_timeout && first_detector_ < 0) SignalDump(rank, t);
  switch (w.reaction) {
    case WatchdogReaction::kNoHandling:
      stopped_[rank] = 1;  // logged only: its main thread stays blocked on the hung kernel
      return;
    case WatchdogReaction::kTearDown:
      if (later == t) return Die(rank, t, kExitSigabrt);
      break;
    case WatchdogReaction::kCleanUpOnly:
    case WatchdogReaction::kBlockingWait:
    case WatchdogReaction::kStuck:
      if (aftermath_.empty()) aftermath_.resize(static_cast<std::size_t>(job_.world));
      aftermath_[rank] = w;
      break;
  }
  stopped_[rank] = 1;  // its watchdog is down (or stuck); it waits for what comes next
  const bool raises = w.reaction == WatchdogReaction::kCleanUpOnly ||
                      w.reaction == WatchdogReaction::kBlockingWait;
  queue_.Push(later, EventKind::kWatchdogAbort,
              static_cast<std::uint32_t>(rank) | (raises ? kAbortRaised : 0u));
}

// How the rank's torch reacts to the timeout (timeouts.async_error_handling, blocking_wait,
// watchdog_stuck_fraction): fills the record's reaction and delays, and returns when what
// follows happens: the abort (tear-down: t, or after the flight-recorder dump), the main
// thread's raise, the heartbeat monitor's kill (t for mode 0, which never ends).
TimeNs Workers::React(int rank, TimeNs t, WatchdogTimeout* w) const {
  Rng rng(job_.seed, StreamId::kRankWatchdog, (3ULL << 32) + static_cast<std::uint64_t>(rank));
  const int mode = job_.async_error_handling;
  if (job_.blocking_wait) {
    w->reaction = WatchdogReaction::kBlockingWait;
  } else if (mode == 0) {
    w->reaction = WatchdogReaction::kNoHandling;
    return t;
  } else if ((mode == 1 || mode == 2) && rng.Uniform() < job_.watchdog_stuck_fraction) {
    w->reaction = WatchdogReaction::kStuck;
    // The monitor compares heartbeats once per timeout: the first check that finds none.
    w->heartbeat_delay = job_.heartbeat_timeout + static_cast<TimeNs>(
        rng.Uniform() * static_cast<double>(job_.heartbeat_timeout));
    w->pending_works = static_cast<int>(rng.UniformInt(1, 2));
    return t + w->heartbeat_delay;
  } else if (mode == 2) {
    w->reaction = WatchdogReaction::kCleanUpOnly;
  } else {
    w->reaction = WatchdogReaction::kTearDown;
    return w->dump_signal_delay > 0 ? t + w->dump_abort_delay : t;
  }
  // The main thread raises: at once in blocking wait, at its next NCCL call after the abort
  // in mode 2; the interpreter then unwinds and exits 1.
  w->raise_delay = (w->reaction == WatchdogReaction::kBlockingWait ? rng.UniformInt(1, 12)
                                                                    : rng.UniformInt(20, 400)) * kNsPerMs;
  return t + w->raise_delay;
}

// TORCH_NCCL_DUMP_ON_TIMEOUT: the first rank to time out writes its rank into the TCPStore;
// every other rank's heartbeat monitor (default_pg) polls the store every
// TORCH_NCCL_COORD_CHECK_MILSEC (1 s) and, unless its own watchdog fired first, reports the
// signal "from  rank <first>" and dumps.
void Workers::SignalDump(int rank, TimeNs t) {
  first_detector_ = rank;
  for (int r = 0; r < job_.world; ++r) {
    if (r == rank || !alive_[r]) continue;
    Rng rng(job_.seed, StreamId::kRankWatchdog, (4ULL << 32) + static_cast<std::uint64_t>(r));
    const TimeNs seen = t + rng.UniformInt(2, 1000) * kNsPerMs + rng.UniformInt(0, 999) * kNsPerUs;
    queue_.Push(seen, EventKind::kWatchdogAbort, static_cast<std::uint32_t>(r) | kAbortDumpObserved);
  }
}

void Workers::ObserveDump(int rank, TimeNs t) {
  if (!alive_[rank] || dump_observed_[rank] || watchdog_fired_[rank]) return;
  dump_observed_[rank] = 1;
  sink_.Emit(DumpSignalObserved{rank, t, first_detector_,
                                seq_enqueued_[static_cast<int>(PgKind::kDefault)][rank],
                                seq_completed_[static_cast<int>(PgKind::kDefault)][rank]});
  if (job_.flight_recorder.buffer_size > 0) EmitFlightRecorder(rank, t + kDumpWriteDelay, false);
}

void Workers::OnWatchdogAbort(std::uint32_t id, TimeNs t) {
  const int rank = static_cast<int>(id & kAbortRankMask);
  const std::uint32_t what = id & ~kAbortRankMask;
  if (what == kAbortDumpObserved) return ObserveDump(rank, t);
  if (what == kAbortExit) return Die(rank, t, kExitException);
  if (!alive_[rank]) return;  // torn down meanwhile: what it would have printed never came
  if (aftermath_.empty() || aftermath_[rank].reaction == WatchdogReaction::kTearDown) {
    return Die(rank, t, kExitSigabrt);  // after the flight-recorder dump
  }
  sink_.Emit(WatchdogAftermath{t, aftermath_[rank]});
  Rng rng(job_.seed, StreamId::kRankWatchdog, (5ULL << 32) + static_cast<std::uint64_t>(rank));
  if (what == kAbortRaised) {  // the interpreter unwinds, then exits 1
    queue_.Push(t + rng.UniformInt(150, 900) * kNsPerMs, EventKind::kWatchdogAbort,
                static_cast<std::uint32_t>(rank) | kAbortExit);
    return;
  }
  Die(rank, t + rng.UniformInt(25, 60) * kNsPerMs, kExitSigabrt);  // LOG(FATAL): abort()
}

}  // namespace denpex::sim
