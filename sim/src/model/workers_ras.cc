// The operator's RAS poller (scenario `nccl_ras`): what `ncclras` sees of the job at each poll.
// RAS counts, per communicator rank, the collectives it has launched by type; the model keeps
// per rank only its groups' enqueue counters (the numbers the watchdog and the flight recorder
// print), so the types are rebuilt from the rank's program: each group kind's operations are the
// operations before the first step (the barrier on the world communicator) and then the same
// cycle every step. The mismatch fault's rank launched one operation of another type (or under
// another type's number, a skipped one) where its peers launched theirs.
#include <algorithm>

#include "workers.h"

namespace denpex::sim {

namespace {

// RAS's keepalive gives up on a silent peer after RAS_STUCK_TIMEOUT (20 s): until then a vanished
// node's processes are only missing, then dead.
constexpr TimeNs kRasStuckTimeout = 20 * kNsPerSec;
// Without nccl_ras.queries: the most polls the file keeps from the fault on.
constexpr std::size_t kMaxRasPolls = 64;

int RasFuncOf(OpType type) {
  switch (type) {
    case OpType::kAllreduce:
      return static_cast<int>(RasFunc::kAllReduce);
    case OpType::kAllgatherBase:
      return static_cast<int>(RasFunc::kAllGather);
    case OpType::kReduceScatterBase:
      return static_cast<int>(RasFunc::kReduceScatter);
    default:
      return -1;  // send, recv: not counted
  }
}

RasCounts Plus(RasCounts a, const RasCounts& b, std::int32_t times = 1) {
  for (int f = 0; f < kNumRasFuncs; ++f) a[f] += times * b[f];
  return a;
}

}  // namespace

// Per stage and group kind: the running counts of the operations before the first step, and of
// one step's cycle (entry i: the first i operations of that kind).
void Workers::BuildRasTables() {
  ras_tables_.assign(static_cast<std::size_t>(job_.pp), {});
  for (int stage = 0; stage < job_.pp; ++stage) {
    const std::vector<Op>& program = programs_[stage];
    for (int k = 0; k < kNumPgKinds; ++k) {
      RasKindTable& table = ras_tables_[stage][k];
      table.prefix.assign(1, RasCounts{});
      table.cycle.assign(1, RasCounts{});
      for (std::size_t pc = 1; pc < program.size(); ++pc) {
        const Op op = program[pc];
        if (op == Op::kCompute || op == Op::kStepBegin || op == Op::kStepEnd) continue;
        if (static_cast<int>(GroupKindOf(op)) != k) continue;
        std::vector<RasCounts>& into = pc < kStepBeginPc ? table.prefix : table.cycle;
        RasCounts next = into.back();
        if (const int f = RasFuncOf(OpTypeOf(op)); f >= 0) ++next[f];
        into.push_back(next);
      }
    }
  }
}

RasCounts Workers::RasCountsOf(int rank, int kind) const {
  const RasKindTable& table = ras_tables_[job_.PpRank(rank)][kind];
  const std::int64_t n = seq_enqueued_[kind][rank];
  const auto prefix = static_cast<std::int64_t>(table.prefix.size()) - 1;
  const auto cycle = static_cast<std::int64_t>(table.cycle.size()) - 1;
  RasCounts c{};
  if (n <= prefix || cycle == 0) {
    c = table.prefix[static_cast<std::size_t>(std::min(n, prefix))];
  } else {
    const std::int64_t m = n - prefix;
    c = Plus(table.prefix.back(), table.cycle.back(), static_cast<std::int32_t>(m / cycle));
    c = Plus(c, table.cycle[static_cast<std::size_t>(m % cycle)]);
  }
  if (rank == fault_.rank && mismatch_seq_ > 0 && kind == static_cast<int>(mismatch_group_) &&
      n >= mismatch_seq_) {
    const int expected = RasFuncOf(mismatch_expected_), odd = RasFuncOf(mismatch_op_);
    if (expected >= 0) --c[expected];
    if (odd >= 0) ++c[odd];
  }
  return c;
}

NcclRasReport Workers::RasReportOf(TimeNs t) const {
  const auto n = static_cast<std::size_t>(job_.world);
  NcclRasReport r{t};
  r.process.resize(n);
  r.counts.resize(n * kNumPgKinds);
  const int mode = job_.async_error_handling;
  r.answered = false;
  for (int rank = 0; rank < job_.world; ++rank) {
    const bool started = seq_enqueued_[static_cast<int>(PgKind::kDefault)][rank] > 0;
    RasProcess p = RasProcess::kRunning;
    if (!alive_[rank]) {
      p = exit_code_[rank] == kExitNodeLost && t - exit_time_[rank] < kRasStuckTimeout
              ? RasProcess::kUnresponsive
              : RasProcess::kDead;
    } else if (!started) {
      p = RasProcess::kUnresponsive;
    } else if (watchdog_fired_[rank] && (mode == 1 || mode == 2)) {
      p = RasProcess::kAborted;
    }
    r.process[static_cast<std::size_t>(rank)] = p;
    if (job_.NodeOf(rank) == 0 && alive_[rank] && started) r.answered = true;
    for (int k = 0; k < kNumPgKinds; ++k) {
      r.counts[static_cast<std::size_t>(rank) * kNumPgKinds + static_cast<std::size_t>(k)] =
          RasCountsOf(rank, k);
    }
  }
  return r;
}

bool Workers::AnyAlive() const {
  return std::any_of(alive_.begin(), alive_.end(), [](std::uint8_t a) { return a != 0; });
}

// Without nccl_ras.queries the polls before the fault matter only as the last one before it
// (kept in case none follows); with it, the last `queries` polls.
void Workers::PollRas(TimeNs t) {
  if (ras_tables_.empty()) BuildRasTables();
  ras_polls_.push_back(RasReportOf(t));
  if (job_.nccl_ras.queries > 0) {
    while (ras_polls_.size() > static_cast<std::size_t>(job_.nccl_ras.queries))
      ras_polls_.pop_front();
    return;
  }
  while (ras_polls_.size() >= 2 && (fault_time_ < 0 || ras_polls_[1].time <= fault_time_)) {
    ras_polls_.pop_front();
  }
  while (ras_polls_.size() > kMaxRasPolls) ras_polls_.pop_front();
}

void Workers::EmitRasReports() {
  if (job_.nccl_ras.queries == 0 && ras_polls_.size() >= 2 && fault_time_ >= 0 &&
      ras_polls_.front().time < fault_time_) {
    ras_polls_.pop_front();  // a poll from the fault on follows it
  }
  for (NcclRasReport& r : ras_polls_) sink_.Emit(std::move(r));
  ras_polls_.clear();
}

}  // namespace denpex::sim
