// The flight recorder's ring (TORCH_NCCL_TRACE_BUFFER_SIZE, timeouts.flight_recorder): what a
// rank's dump holds when its heartbeat monitor dumps. The model keeps no per-operation history
// (a 131,072-rank job would need gigabytes); the ring is rebuilt at the dump from what the rank
// has: its program (the same operations every step), its groups' sequence counters (the
// numbers its watchdog lines print), when its current and previous steps began, and when it
// enqueued the work it waits in. Operations of earlier steps are placed at the program's
// nominal offsets scaled to the rank's last step; the newest operation is placed exactly.
#include <algorithm>

#include "workers.h"

namespace denpex::sim {

// The watchdog thread's loop sleeps 100 ms between passes over its work list; a completed work
// is retired (and its entry's completion discovered) on the next pass.
inline constexpr TimeNs kWatchdogPass = 100 * kNsPerMs;

// Per pipeline stage, the NCCL operations of one step, in program order, at the offsets the
// step's compute slices and transfers give them with no jitter and no waiting.
void Workers::BuildFlightRecorderCycles() {
  fr_cycles_.assign(static_cast<std::size_t>(job_.pp), {});
  fr_cycle_ns_.assign(static_cast<std::size_t>(job_.pp), 0);
  for (int stage = 0; stage < job_.pp; ++stage) {
    TimeNs at = 0;
    const std::vector<Op>& program = programs_[stage];
    for (std::size_t pc = kStepBeginPc; pc < program.size(); ++pc) {
      const Op op = program[pc];
      if (op == Op::kCompute) {
        at += static_cast<TimeNs>(slice_mean_);
      } else if (op != Op::kStepBegin && op != Op::kStepEnd) {
        const bool batched = op == Op::kSendNextRecvNext || op == Op::kSendPrevRecvPrev;
        fr_cycles_[stage].push_back({op, at, CostOf(op), batched});
        at += CostOf(op);
      }
    }
    fr_cycle_ns_[stage] = std::max<TimeNs>(at, 1);
  }
  const auto n = static_cast<std::size_t>(job_.world);
  fr_step_start_.assign(n, -1);
  fr_prev_step_start_.assign(n, -1);
}

void Workers::EmitFlightRecorder(int rank, TimeNs t, bool first_failed) {
  FlightRecorderDump dump = FlightRecorderOf(rank, t);
  dump.first_failed = first_failed;
  sink_.Emit(std::move(dump));
}

// The ring at `t`: the rank's last buffer_size entries, oldest first. Operation #j (1-based, in
// the order the rank enqueued them) is the barrier for j = 1, else the ((j - 2) % C)-th NCCL
// operation of step (j - 2) / C (C per step); #E, E the sum of the groups' enqueued counters,
// is the newest. An operation has completed when its sequence number is at most its group's
// completed counter.
FlightRecorderDump Workers::FlightRecorderOf(int rank, TimeNs t) const {
  FlightRecorderDump dump{rank, t};
  const int stage = job_.PpRank(rank);
  const std::vector<FrCycleOp>& cycle = fr_cycles_[stage];
  const auto per_step = static_cast<std::int64_t>(cycle.size());
  std::int64_t batched_per_step = 0;
  for (const FrCycleOp& c : cycle) batched_per_step += c.batched ? 1 : 0;

  std::array<std::int64_t, kNumPgKinds> seq{}, completed{};
  std::int64_t enqueued = 0;
  for (int k = 0; k < kNumPgKinds; ++k) {
    seq[k] = seq_enqueued_[k][rank];
    completed[k] = seq_completed_[k][rank];
    enqueued += seq[k];
  }
  // Entries recorded so far (each batched operation adds two), and the pipeline group's.
  auto batched_before = [&](std::int64_t j) {  // batched operations among #2 .. #j
    if (j < 2 || per_step == 0) return std::int64_t{0};
    const std::int64_t steps = (j - 2 + 1) / per_step, rest = (j - 2 + 1) % per_step;
    std::int64_t n = steps * batched_per_step;
    for (std::int64_t i = 0; i < rest; ++i) n += cycle[static_cast<std::size_t>(i)].batched ? 1 : 0;
    return n;
  };
  std::int64_t record_id = enqueued + 2 * batched_before(enqueued) - 1;
  std::int64_t pp_op_id = seq[static_cast<int>(PgKind::kPipeline)] + 2 * batched_before(enqueued);

  // Step times: the rank's current step began at fr_step_start_, the one before it D earlier.
  const TimeNs nominal = fr_cycle_ns_[stage];
  const TimeNs cur_start = fr_step_start_[rank] >= 0 ? fr_step_start_[rank] : t;
  const TimeNs step_ns = fr_prev_step_start_[rank] >= 0 ? cur_start - fr_prev_step_start_[rank]
                                                        : std::max(nominal, job_.step_time);
  const int cur_step = step_[rank];
  const double scale = static_cast<double>(step_ns) / static_cast<double>(nominal);
  // The current step's operations are placed so that the newest enqueue lands where it was.
  double cur_scale = scale;
  if (enqueued >= 2 && per_step > 0 && (enqueued - 2) / per_step == cur_step &&
      waiting_[rank] >= 0) {
    const TimeNs offset = cycle[static_cast<std::size_t>((enqueued - 2) % per_step)].offset;
    if (offset > 0)
      cur_scale = static_cast<double>(enqueued_at_[rank] - cur_start) / static_cast<double>(offset);
  }
  Rng rng(job_.seed, StreamId::kFlightRecorder, static_cast<std::uint64_t>(rank));
  const TimeNs phase = rng.UniformInt(0, kWatchdogPass);
  auto discovered = [&](TimeNs done) {  // the watchdog's next pass after `done`
    const TimeNs passes = (done - phase + kWatchdogPass - 1) / kWatchdogPass;
    return phase + std::max<TimeNs>(passes, 0) * kWatchdogPass + rng.UniformInt(2, 40) * kNsPerUs;
  };

  const int buffer = job_.flight_recorder.buffer_size;
  std::vector<FrEntry>& out = dump.entries;
  out.reserve(static_cast<std::size_t>(std::min<std::int64_t>(buffer, record_id + 1)));
  for (std::int64_t j = enqueued; j >= 1 && static_cast<int>(out.size()) < buffer; --j) {
    Op op = Op::kBarrier;
    TimeNs created = 0, cost = job_.workload.barrier_cost;
    if (j >= 2 && per_step > 0) {
      const std::int64_t step = (j - 2) / per_step;
      const FrCycleOp& c = cycle[static_cast<std::size_t>((j - 2) % per_step)];
      op = c.op;
      const double s = step == cur_step ? cur_scale : scale;
      created = cur_start - (cur_step - step) * step_ns +
                static_cast<TimeNs>(static_cast<double>(c.offset) * s);
      cost = static_cast<TimeNs>(static_cast<double>(c.cost) * s);
    } else {
      created = cur_start - cur_step * step_ns - 2 * cost;
    }
    if (j == enqueued && waiting_[rank] >= 0) created = enqueued_at_[rank];
    const PgKind group = GroupKindOf(op);
    const int k = static_cast<int>(group);
    FrEntry e{};
    e.group = group;
    e.seq = seq[k];
    e.created = created;
    e.numel_in = NumelOf(op);
    e.numel_out = NumelOutOf(op);
    e.op = OpTypeOf(op) == OpType::kReduceScatterBase ? FrOp::kReduceScatterBase
           : OpTypeOf(op) == OpType::kAllgatherBase   ? FrOp::kAllgatherBase
                                                      : FrOp::kAllreduce;
    if (j == enqueued && rank == fault_.rank && waiting_[rank] >= 0 &&
        waiting_[rank] == mismatch_rendezvous_) {  // the odd collective
      e.op = mismatch_op_ == OpType::kAllgatherBase       ? FrOp::kAllgatherBase
             : mismatch_op_ == OpType::kReduceScatterBase ? FrOp::kReduceScatterBase
                                                          : FrOp::kAllreduce;
      e.numel_in = mismatch_numel_;
      e.numel_out = mismatch_numel_out_;
    }
    if (seq[k] <= completed[k]) {
      // Retired by the watchdog's next pass; one that completed since is found by the dump.
      e.completed = discovered(created + cost);
      e.retired = e.completed < t;
      if (!e.retired) e.completed = t - rng.UniformInt(20, 300) * kNsPerUs;
      if (job_.flight_recorder.timing) {
        e.started = e.completed - rng.UniformInt(100, 900);
        if (e.retired) e.duration_ms = static_cast<float>(static_cast<double>(cost) / kNsPerMs);
      }
    } else if (job_.flight_recorder.timing && j == enqueued && waiting_[rank] >= 0) {
      e.started = t - rng.UniformInt(50, 400) * kNsPerUs;  // the dump queried its start event
    }
    // Group ranks of the pipeline peers (members sorted by global rank = stage order).
    const int me = job_.GroupRank(rank, PgKind::kPipeline);
    auto push = [&](FrOp what, int peer) {
      FrEntry x = e;
      x.op = what;
      x.peer = peer;
      if (group == PgKind::kPipeline) x.op_id = pp_op_id--;
      if (what == FrOp::kCoalesced) x.numel_in = x.numel_out = 0;
      x.record_id = record_id--;
      out.push_back(x);
    };
    e.op_id = seq[k];
    switch (op) {
      case Op::kSendNext:
        push(FrOp::kSend, me + 1);
        break;
      case Op::kSendPrev:
        push(FrOp::kSend, me - 1);
        break;
      case Op::kRecvPrev:
        push(FrOp::kRecv, me - 1);
        break;
      case Op::kRecvNext:
        push(FrOp::kRecv, me + 1);
        break;
      case Op::kSendNextRecvNext:  // newest first: coalesced, recv, send
        push(FrOp::kCoalesced, -1);
        push(FrOp::kRecv, me + 1);
        push(FrOp::kSend, me + 1);
        break;
      case Op::kSendPrevRecvPrev:
        push(FrOp::kCoalesced, -1);
        push(FrOp::kRecv, me - 1);
        push(FrOp::kSend, me - 1);
        break;
      default:
        push(e.op, -1);
        break;
    }
    --seq[k];
  }
  if (static_cast<int>(out.size()) > buffer) out.resize(static_cast<std::size_t>(buffer));
  std::reverse(out.begin(), out.end());

  for (int k = 0; k < kNumPgKinds; ++k) {
    if (seq_enqueued_[k][rank] == 0) continue;  // never recorded: not in pg_status
    FrGroupStatus g{static_cast<PgKind>(k)};
    g.last_enqueued = seq_enqueued_[k][rank];
    g.last_completed = seq_completed_[k][rank] > 0 ? seq_completed_[k][rank] : -1;
    if (job_.flight_recorder.timing) {
      const bool in_it =
          waiting_[rank] >= 0 && static_cast<int>(GroupKindOf(waiting_op_[rank])) == k;
      g.last_started = in_it ? g.last_enqueued : g.last_completed;
    }
    dump.groups.push_back(g);
  }
  return dump;
}

}  // namespace denpex::sim
