// The engine strategy. Reasons about who stopped participating, not about who complained
// first: launcher exits and group progress are scored (scoring.h), the leader is named only
// when it clearly leads, and everything cited is a line an operator can open.
#include "analyze/participation.h"

#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <map>
#include <set>

#include "analyze/cascade.h"
#include "analyze/clocks.h"
#include "analyze/describe.h"
#include "analyze/detectors.h"
#include "analyze/facts.h"
#include "analyze/fail_slow.h"
#include "analyze/groups.h"
#include "analyze/hardware.h"
#include "analyze/ib_ports.h"
#include "analyze/job_end.h"
#include "analyze/mismatch.h"
#include "analyze/network.h"
#include "analyze/partial.h"
#include "analyze/placement.h"
#include "analyze/platform.h"
#include "analyze/scoring.h"
#include "analyze/store.h"
#include "analyze/straggler.h"
#include "analyze/strategies.h"
#include "analyze/unranked.h"
#include "analyze/wait_graph.h"
#include "stages.h"

namespace denpex::engine {
namespace {

constexpr std::size_t kMaxCandidates = 10;
constexpr std::size_t kMaxEvidence = 10;
constexpr std::size_t kMaxWaiterCitations = 3;

// The earliest report, per group, of a rank blocked directly on `rank`.
std::vector<std::int32_t> DirectWaiters(const Analysis& a, std::int32_t rank) {
  std::vector<std::int32_t> events;
  for (const ProcessGroup& g : a.groups) {
    auto at = std::find(g.members.begin(), g.members.end(), rank);
    if (at == g.members.end()) continue;
    const auto k = static_cast<std::int32_t>(at - g.members.begin());
    std::int32_t best = -1;
    for (const GroupReport& rep : g.reports) {
      if (!WaitsOn(g, rep, k)) continue;
      if (best < 0 || a.inc.events[rep.event].time < a.inc.events[best].time) best = rep.event;
    }
    if (best >= 0) events.push_back(best);
  }
  std::sort(events.begin(), events.end(), [&](auto x, auto y) {
    return std::tie(a.inc.events[x].time, x) < std::tie(a.inc.events[y].time, y);
  });
  return events;
}

// gloo: every rank's first error about a peer, in file order of the ranks.
std::vector<std::int32_t> GlooReporters(const Analysis& a) {
  std::vector<std::int32_t> out;
  for (const RankFacts& r : a.facts.ranks) {
    if (r.peer_error && a.inc.events[*r.peer_error].family == Family::kGloo)
      out.push_back(*r.peer_error);
  }
  return out;
}

// When the collectives `rank` never joined were started: the printed time of a waiter's
// timeout minus how long it had been running. A waiter's line that only borrowed the time of
// whatever stamped line came before it (an untimed c10 line after another process's or another
// file's lines, as in a merged or aggregated log) says nothing of when it timed out: only its
// own or an anchored stamp counts (HasOwnTime).
std::optional<TimeNs> StallTime(const Analysis& a, std::int32_t rank) {
  std::optional<TimeNs> t;
  for (std::int32_t i : DirectWaiters(a, rank)) {
    const Event& e = a.inc.events[i];
    if (!HasOwnTime(a.inc, i)) continue;
    const auto& w = std::get<WatchdogTimeout>(e.detail);
    const TimeNs started = a.clocks.Aligned(e) - std::max<std::int64_t>(w.ran_for_ms, 0) * kNsPerMs;
    if (!t || started < *t) t = started;
  }
  return t;
}

// True when its agent had to SIGKILL it after SIGTERM: every worker the agent tore down on its
// node (this one among them) outlived the SIGTERM.
bool Unresponsive(const JobFacts& facts, std::int32_t rank) {
  const RankFacts& r = facts.ranks[rank];
  if (!r.torn_down || r.node < 0 || facts.nodes[r.node].forced_kills == 0) return false;
  std::int32_t torn = 0;
  for (std::int32_t o : facts.nodes[r.node].ranks) torn += facts.ranks[o].torn_down ? 1 : 0;
  return facts.nodes[r.node].forced_kills >= torn;
}

// gloo: when the silent rank stopped, from the earliest peer that timed out on it. A traceback
// line has no time of its own; the one it borrowed is the reporter's last line before the
// wait, which is when the collective it waited in began.
std::optional<TimeNs> GlooStallTime(const Analysis& a) {
  std::optional<TimeNs> t;
  for (const RankFacts& r : a.facts.ranks) {
    if (!r.peer_error) continue;
    const Event& e = a.inc.events[*r.peer_error];
    if (e.kind != Kind::kGlooTimeout || e.clock == Clock::kNone || !e.time_borrowed) continue;
    const TimeNs at = a.clocks.Aligned(e);
    if (!t || at < *t) t = at;
  }
  return t;
}

bool Stamped(const Event& e) { return e.clock != Clock::kNone && !e.time_borrowed; }

// The scheduler's stamped reaction to an untimed exit line (srun's `task N: Killed`): the first
// Slurm line after it in the same file that carries its own time (slurmstepd's `CANCELLED AT`,
// once srun killed the step on that exit).
std::optional<TimeNs> SchedulerReaction(const Analysis& a, const Event& exit) {
  const Event* best = nullptr;
  for (const Event& e : a.inc.events) {
    if (e.file != exit.file || e.line <= exit.line || e.family != Family::kSlurm || !Stamped(e)) continue;
    if (e.kind == Kind::kJobAllocated) continue;  // an allocation (a merged slurmctld log's) reacts to nothing
    if (best == nullptr || e.line < best->line) best = &e;
  }
  if (best == nullptr) return std::nullopt;
  return a.clocks.Aligned(*best);
}

// When a rank that exited on its own died. Its exit line's own time (the agent's `failed` line,
// `denpex run`'s); else its table entry's (torch 1.13's agent lines carry none); else the host's
// word on it (the kernel OOM killer of its pid); else when the collectives it never joined began;
// else the scheduler's stamped reaction to it. An untimed line (srun's task exit) only borrowed
// the time of whatever line came before it: never its time.
std::optional<TimeNs> ExitTime(const Analysis& a, std::int32_t rank) {
  const RankFacts& r = a.facts.ranks[rank];
  const Event& exit = a.inc.events[*r.exit_event];
  if (r.exit_timed) return r.exit_time;  // its own stamp (or an anchored one: HasOwnTime)
  if (r.table_entry && Stamped(a.inc.events[*r.table_entry]))
    return a.clocks.Aligned(a.inc.events[*r.table_entry]);
  if (r.host_cause && Stamped(a.inc.events[*r.host_cause]))
    return a.clocks.Aligned(a.inc.events[*r.host_cause]);
  if (auto t = StallTime(a, rank)) return t;
  return SchedulerReaction(a, exit);
}

// The errors of their own that processes of `rank`'s node printed and no line ties to a rank (a
// layout that lost the file names a rank's lines relied on): on its node, or on no node in the
// file that reported its exit, or in a file that names no node at all and not after its exit (a
// per-rank file that lost its path: a log stream of a shipper's export, a paste; its worker may
// have run on this node; such a file counts once, as one process's). One such error is the one
// its exit stands for; with several, several processes raised, and which failed first is not
// known.
struct NodeErrors {
  std::int32_t first = -1;  // the earliest (event index); -1: none
  std::int32_t count = 0;
  bool nodeless = false;  // some of them only in a file that names no node
};
NodeErrors UnrankedErrorsOfNode(const Analysis& a, std::int32_t rank) {
  const RankFacts& r = a.facts.ranks[rank];
  NodeErrors out;
  if (!r.exit_event) return out;
  const Event& exit = a.inc.events[*r.exit_event];
  const std::uint32_t console = StreamOf(a.inc, exit.file);
  std::vector<bool> nodeless_counted;  // per stream (file), once one of its errors is counted
  for (std::int32_t i : a.facts.unranked.own_errors) {
    const Event& e = a.inc.events[i];
    const bool of_node = r.node >= 0 && e.node == r.node;
    const bool of_console = e.node < 0 && StreamOf(a.inc, e.file) == console;
    const bool of_no_node = e.node < 0 && a.inc.files[e.file].node < 0 &&
                            !(Stamped(e) && Stamped(exit) &&
                              a.clocks.Aligned(e) > a.clocks.Aligned(exit) + kSkewWindow);
    if (!of_node && !of_console && !of_no_node) continue;
    if (!of_node && !of_console) {
      const std::uint32_t stream = StreamOf(a.inc, e.file);
      if (nodeless_counted.empty()) nodeless_counted.resize(a.inc.files.size());
      if (nodeless_counted[stream]) continue;  // that process's error is counted
      nodeless_counted[stream] = true;
      out.nodeless = true;
    }
    if (out.first < 0) out.first = i;
    ++out.count;
  }
  return out;
}

// Its exit (an error code) is all that names the rank, and its node's processes printed several
// errors no line ties to a rank: the worker its agent saw exit first need not be the one that
// failed first (a JIT build's failure and its waiters' ImportErrors; a pin-memory thread's error
// and its re-raise). The answer is its node.
bool ExitAmongUnrankedErrors(const Analysis& a, std::int32_t rank) {
  const RankFacts& r = a.facts.ranks[rank];
  return OwnExit(a.facts, rank) && !r.python_error && r.exit_code > 0 && !r.host_cause &&
         UnrankedErrorsOfNode(a, rank).count >= 2;
}

// NCCL RAS found the rank's process dead (not only silent).
bool RasDead(const Analysis& a, std::int32_t rank) {
  const RasBlocker* b = a.ras.RootOf(rank);
  return b != nullptr && b->why == RasBlocker::Why::kGone &&
         std::get<RasRank>(a.inc.events[b->event].detail).why == RasRank::Why::kDead;
}

void Classify(const Analysis& a, std::int32_t rank, Finding* f) {
  const RankFacts& r = a.facts.ranks[rank];
  if (const Mismatch* m = a.MismatchOf(rank)) {
    const Event& e = a.inc.events[m->event];
    f->failure_class = v1::FAILURE_CLASS_COLLECTIVE_MISMATCH;
    f->owner = v1::OWNER_APPLICATION;
    if (const auto* w = std::get_if<WatchdogTimeout>(&e.detail); w && e.clock != Clock::kNone) {
      f->time = e.time - std::max<std::int64_t>(w->ran_for_ms, 0) * kNsPerMs;
    } else if (e.clock != Clock::kNone) {
      f->time = e.time;  // a Flight Recorder entry: when it was enqueued
    }
  } else if (OwnExit(a.facts, rank)) {
    f->time = ExitTime(a, rank);
    if (r.host_cause) {  // the host says why (the kernel OOM killer of its pid, ...)
      f->failure_class = r.host_class;
      f->owner = r.host_owner;
    } else if (r.exit_code == -11 || r.exit_code == -7) {
      f->failure_class = v1::FAILURE_CLASS_SEGFAULT;
      f->owner = v1::OWNER_APPLICATION;
    } else if (r.exit_code > 0) {
      f->failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION;
      f->owner = v1::OWNER_APPLICATION;
      if (r.python_error) {
        ClassOfOwnError(a.inc, a.inc.events[*r.python_error], &f->failure_class, &f->owner);
      } else if (const NodeErrors node = UnrankedErrorsOfNode(a, rank); node.count == 1) {
        // It printed no error that names it, but its node's processes printed one that names no
        // rank: the error its exit stands for.
        const Event& e = a.inc.events[node.first];
        ClassOfOwnError(a.inc, e, &f->failure_class, &f->owner);
        // A pin of host memory that failed for want of it (as RankFacts::pinned_oom reads it).
        if (e.kind == Kind::kPinMemory && SaysOutOfMemory(a.inc, e))
          f->failure_class = v1::FAILURE_CLASS_PINNED_OOM;
      } else if (node.count > 1) {
        f->failure_class = v1::FAILURE_CLASS_UNSPECIFIED;  // not known which is its
      }
      if (r.pinned_oom) f->failure_class = v1::FAILURE_CLASS_PINNED_OOM;
    } else {
      f->failure_class = v1::FAILURE_CLASS_SIGNAL_KILL;  // the logs do not say who sent it
      f->owner = v1::OWNER_UNKNOWN;
    }
  } else if (r.python_error) {
    f->failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION;
    f->owner = v1::OWNER_APPLICATION;
    ClassOfOwnError(a.inc, a.inc.events[*r.python_error], &f->failure_class, &f->owner);
    if (r.pinned_oom) f->failure_class = v1::FAILURE_CLASS_PINNED_OOM;
    f->time = StallTime(a, rank);
  } else if (RasDead(a, rank)) {
    // NCCL RAS found its process gone, and no line says how: it died unseen.
    f->failure_class = v1::FAILURE_CLASS_SIGNAL_KILL;
    f->owner = v1::OWNER_UNKNOWN;
  } else if (!a.facts.WaveSeen() && a.facts.wave.gloo_timeouts == 0 &&
             a.facts.wave.gloo_closed > 0) {
    // Its peers lost the connection to it (gloo), and nothing says it exited: it died unseen.
    f->failure_class = v1::FAILURE_CLASS_SIGNAL_KILL;
    f->owner = v1::OWNER_UNKNOWN;
  } else {
    f->failure_class = v1::FAILURE_CLASS_HANG;  // silent, and no word that it exited: alive, stuck
    // A worker that outlived its agent's SIGTERM (`Unable to shutdown process ... via 15`) was
    // stopped or in uninterruptible sleep: not the application's own code at work.
    f->owner = Unresponsive(a.facts, rank) ? v1::OWNER_UNKNOWN : v1::OWNER_APPLICATION;
    f->time = StallTime(a, rank);
    if (!f->time) f->time = GlooStallTime(a);
  }
}

// The kernel's word on the rank's GPU (an Xid burst) replaces what its exit alone says when it
// explains it: a CUDA error (one whose message names a GPU fault too: the Xid says which GPU and
// how to recover), a hang, a kill or a crash. A Python exception, a CUDA OOM or a host OOM
// (facts' host evidence) is not the GPU's doing, whatever the kernel logged.
std::optional<KernelCause> KernelCauseOf(const Analysis& a, std::int32_t rank, Finding* f) {
  switch (f->failure_class) {
    case v1::FAILURE_CLASS_CUDA_ERROR: case v1::FAILURE_CLASS_HANG: case v1::FAILURE_CLASS_SIGNAL_KILL:
    case v1::FAILURE_CLASS_SEGFAULT: case v1::FAILURE_CLASS_GPU_ECC: case v1::FAILURE_CLASS_GPU_NVLINK:
      break;
    default:
      return std::nullopt;
  }
  auto c = FindKernelCause(a.inc, a.facts, a.clocks, rank, f->time);
  if (!c) return std::nullopt;
  f->failure_class = c->failure_class;
  f->owner = c->owner;
  return c;
}

// "3 of the 24 ranks that timed out were waiting on it in 2 process groups"; empty when none were.
Reason WaitersPhrase(const Analysis& a, std::int32_t rank) {
  const std::int32_t n = a.waits.explains[rank];
  if (n == 0) return {};
  return Say(ReasonId::kWaitingOnIt,
             {{"waiting", std::to_string(n)},
              {"reporters", std::to_string(a.waits.reporters)},
              {"groups", Count(a.waits.blocking_groups[rank], "process group")}});
}

// The sentence's end: "." alone, or `then` with the waiters phrase and its ".".
Reason EndWithWaiters(const Reason& waiting, ReasonId then) {
  return waiting.parts.empty() ? Say(ReasonId::kPeriod) : Say(then, {{"waiting", waiting}});
}

// "Rank 3 (gpu-0001, local rank 3)".
Reason Who(const Analysis& a, std::int32_t rank) {
  const RankFacts& r = a.facts.ranks[rank];
  if (r.local_rank < 0) {
    return Say(ReasonId::kRankOfNode,
               {{"rank", std::to_string(rank)}, {"node", NodeName(a.inc, r.node)}});
  }
  return Say(ReasonId::kRankOfNodeLocal, {{"rank", std::to_string(rank)},
                                          {"node", NodeName(a.inc, r.node)},
                                          {"local_rank", std::to_string(r.local_rank)}});
}

// The type of the rank's own Python error (r.python_error is set).
std::string ErrorType(const Analysis& a, const RankFacts& r) {
  return std::string(a.inc.str(std::get<PythonError>(a.inc.events[*r.python_error].detail).type));
}

// A rank that exited on its own: how, when, after what, against the wave.
Reason OwnExitReason(const Analysis& a, std::int32_t rank, const Finding& f, const Reason& who,
                     const Reason& waiting) {
  const RankFacts& r = a.facts.ranks[rank];
  Reason s = Say(ReasonId::kExitedWith, {{"who", who}, {"exit", ExitPhrase(r.exit_code)}});
  if (f.time) s.Add(ReasonId::kAtTime, {{"time", ClockTime(*f.time)}});
  if (r.host_cause) {
    s.Add(ReasonId::kHostSaysWhy, {{"where", Where(a.inc, a.inc.events[*r.host_cause])}});
  }
  const NodeErrors node =
      !r.python_error && r.exit_code > 0 ? UnrankedErrorsOfNode(a, rank) : NodeErrors{};
  if (r.python_error) {
    s.Add(ReasonId::kAfterRaising, {{"error", ErrorType(a, r)}});
  } else if (node.count == 1) {
    s.Add(node.nodeless ? ReasonId::kNodelessLogPrintedUnrankedError
                        : ReasonId::kNodePrintedUnrankedError,
          {{"where", Where(a.inc, a.inc.events[node.first])}});
  } else if (node.count > 1) {
    s.Add(
        node.nodeless ? ReasonId::kNodelessLogsPrintedUnrankedErrors
                      : ReasonId::kNodePrintedUnrankedErrors,
        {{"count", std::to_string(node.count)}, {"where", Where(a.inc, a.inc.events[node.first])}});
  } else {
    s.Add(ReasonId::kWithoutPrintingError);
  }
  if (!r.exit_timed) {
    // an untimed exit line (srun's, mpirun's): not ordered against the wave
  } else if (a.facts.wave.start && r.exit_time < *a.facts.wave.start - kSkewWindow) {
    s.Add(ReasonId::kBeforeFirstTimeout,
          {{"seconds", std::to_string((*a.facts.wave.start - r.exit_time) / kNsPerSec)}});
  } else if (a.facts.wave.start && r.exit_time <= *a.facts.wave.start + kSkewWindow) {
    s.Add(ReasonId::kWithinSkewOfFirstTimeout);
  }
  s.Add(ReasonId::kThenTimedOutOrTornDown,
        {{"ranks", std::to_string(f.cascade.secondary_ranks.size())}});
  s.Add(EndWithWaiters(waiting, ReasonId::kAndWaiting));
  return s;
}

const FrCollective* FrEntryOf(const Analysis& a, std::int32_t event) {
  return event < 0 ? nullptr : std::get_if<FrCollective>(&a.inc.events[event].detail);
}

// "0 (default_pg)": a Flight Recorder entry's process group as its dump names it.
std::string GroupName(const Analysis& a, const FrCollective& c) {
  std::string out(a.inc.str(c.pg));
  if (c.pg_desc != kNoStr) out += " (" + std::string(a.inc.str(c.pg_desc)) + ")";
  return out;
}

// What the dumps say of a rank they name as where the waits end, other than an odd collective
// (DiagnosedReason says that one): never joined, or no dump. Cites the lines.
void FlightRecorderPhrase(const Analysis& a, std::int32_t rank, Finding* f) {
  const FrBlocker* b = a.recorder.RootOf(rank);
  if (b == nullptr || b->why == FrBlocker::Why::kOddCollective) return;
  const FrCollective* waiter = FrEntryOf(a, b->waiter);
  if (waiter == nullptr) return;
  const std::vector<ReasonArg> common = {{"seq", std::to_string(waiter->seq)},
                                         {"pg", GroupName(a, *waiter)},
                                         {"op", std::string(a.inc.str(waiter->op))},
                                         {"waiting", std::to_string(b->waiting)},
                                         {"waiter", Where(a.inc, a.inc.events[b->waiter])}};
  if (b->why == FrBlocker::Why::kNeverJoined) {
    std::vector<ReasonArg> args = common;
    args.push_back({"where", Where(a.inc, a.inc.events[b->own])});
    f->reason.Add(ReasonId::kFrNeverJoined, std::move(args));
    f->evidence.push_back({b->own, v1::EVIDENCE_ROLE_INITIATING});
  } else {
    f->reason.Add(ReasonId::kFrNoDump, common);
  }
  f->evidence.push_back({b->waiter, v1::EVIDENCE_ROLE_CORROBORATING});
}

// What the RAS reports say of a rank they single out; cites the lines.
void RasPhrase(const Analysis& a, std::int32_t rank, Finding* f) {
  const RasBlocker* b = a.ras.RootOf(rank);
  if (b == nullptr) return;
  const Event& e = a.inc.events[b->event];
  const RasRank& r = std::get<RasRank>(e.detail);
  const std::string where = Where(a.inc, e);
  f->evidence.push_back({b->event, v1::EVIDENCE_ROLE_INITIATING});
  if (b->why == RasBlocker::Why::kGone) {
    const std::string node = r.node == kNoStr ? "an unknown node" : std::string(a.inc.str(r.node));
    f->reason.Add(r.why == RasRank::Why::kDead ? ReasonId::kRasDead : ReasonId::kRasSilent,
                  {{"where", where}, {"pid", std::to_string(r.pid)}, {"node", node}});
    return;
  }
  if (b->why == RasBlocker::Why::kOdd) {
    const Event& ahead = a.inc.events[b->ahead];
    const RasRank& up = std::get<RasRank>(ahead.detail);
    f->reason.Add(ReasonId::kRasOdd, {{"where", where},
                                      {"op", std::string(a.inc.str(r.op))},
                                      {"count", std::to_string(r.count)},
                                      {"common", std::to_string(r.common)},
                                      {"ahead_op", std::string(a.inc.str(up.op))},
                                      {"ahead_count", std::to_string(up.count)},
                                      {"ahead_common", std::to_string(up.common)},
                                      {"ahead_where", Where(a.inc, ahead)}});
    return;
  }
  f->reason.Add(ReasonId::kRasBehind, {{"where", where},
                                       {"count", std::to_string(r.count)},
                                       {"op", std::string(a.inc.str(r.op))},
                                       {"hash", std::string(a.inc.str(r.hash))},
                                       {"size", std::to_string(r.comm_size)},
                                       {"common", std::to_string(r.common)}});
  if (b->why == RasBlocker::Why::kStuck) {
    f->evidence.push_back({b->earlier, v1::EVIDENCE_ROLE_CORROBORATING});
    f->reason.Add(ReasonId::kRasStuck, {{"count", std::to_string(r.count)},
                                        {"earlier", Where(a.inc, a.inc.events[b->earlier])}});
  }
}

Reason DiagnosedReason(const Analysis& a, std::int32_t rank, const Finding& f) {
  const RankFacts& r = a.facts.ranks[rank];
  const Reason who = Who(a, rank);
  const Reason waiting = WaitersPhrase(a, rank);
  if (const Mismatch* m = a.MismatchOf(rank); m && FrEntryOf(a, m->event)) {
    const FrCollective& own = *FrEntryOf(a, m->event);
    const FrCollective& peer = *FrEntryOf(a, m->peer_event);
    const FrBlocker* b = a.recorder.RootOf(rank);
    return Say(ReasonId::kFrOddCollective,
               {{"who", who},
                {"op", std::string(a.inc.str(own.op))},
                {"sizes", std::string(a.inc.str(own.sizes))},
                {"dtypes", std::string(a.inc.str(own.dtypes))},
                {"seq", std::to_string(own.seq)},
                {"pg", GroupName(a, own)},
                {"where", Where(a.inc, a.inc.events[m->event])},
                {"peers", std::to_string(b ? b->waiting : 1)},
                {"peer_op", std::string(a.inc.str(peer.op))},
                {"peer_sizes", std::string(a.inc.str(peer.sizes))},
                {"peer_dtypes", std::string(a.inc.str(peer.dtypes))},
                {"peer_where", Where(a.inc, a.inc.events[m->peer_event])}});
  }
  // NCCL RAS's odd counts: RasPhrase says what the report shows.
  if (const Mismatch* m = a.MismatchOf(rank);
      m && std::holds_alternative<RasRank>(a.inc.events[m->event].detail)) {
    return Say(ReasonId::kRasMismatch, {{"who", who}});
  }
  if (const Mismatch* m = a.MismatchOf(rank)) {
    const auto& own = std::get<WatchdogTimeout>(a.inc.events[m->event].detail);
    const auto& peer = std::get<WatchdogTimeout>(a.inc.events[m->peer_event].detail);
    return Say(ReasonId::kCollectiveMismatch, {{"who", who},
                                               {"op", std::string(a.inc.str(own.op))},
                                               {"elements", std::to_string(own.numel_in)},
                                               {"seq", std::to_string(own.seq)},
                                               {"peer_op", std::string(a.inc.str(peer.op))},
                                               {"peer_elements", std::to_string(peer.numel_in)}});
  }
  if (OwnExit(a.facts, rank) && a.inc.events[*r.exit_event].kind == Kind::kRayTaskError) {
    const Event& e = a.inc.events[*r.exit_event];
    Reason s =
        Say(ReasonId::kRayTrainingFunctionRaised,
            {{"who", who},
             {"error", r.python_error
                           ? ErrorType(a, r)
                           : std::string(a.inc.str(std::get<WorkerSignalled>(e.detail).signal))},
             {"where", Where(a.inc, e)},
             {"others", std::to_string(f.cascade.secondary_ranks.size())}});
    s.Add(EndWithWaiters(waiting, ReasonId::kSemicolonWaiting));
    return s;
  }
  if (OwnExit(a.facts, rank)) return OwnExitReason(a, rank, f, who, waiting);
  if (waiting.parts.empty() &&
      a.facts.wave.gloo_timeouts + a.facts.wave.gloo_closed > 0) {  // gloo: no groups, no SeqNum
    Reason s = Say(ReasonId::kNothingAboutPeersGloo,
                   {{"who", who},
                    {"timeouts", std::to_string(a.facts.wave.gloo_timeouts)},
                    {"closed", std::to_string(a.facts.wave.gloo_closed)}});
    if (Unresponsive(a.facts, rank)) s.Add(ReasonId::kSigtermDidNotEndIt);
    if (f.time) s.Add(ReasonId::kStoppedParticipatingAt, {{"time", ClockTime(*f.time)}});
    s.Add(ReasonId::kPeriod);
    return s;
  }
  Reason s = Say(ReasonId::kNoTimeoutOfItsOwn, {{"who", who}});
  if (!waiting.parts.empty()) {
    s.Add(ReasonId::kWhileWaiting, {{"waiting", waiting}});
  } else {
    // A rank whose waits end at local peers it made stop (a failed build they waited on).
    if (r.python_error) s.Add(ReasonId::kAndRaised, {{"error", ErrorType(a, r)}});
    // The timeouts name no group it blocks (e.g. torch <= 2.2 without [PG ...]).
    if (a.waits.reporters > 0)
      s.Add(ReasonId::kWhileRanksTimedOut, {{"ranks", Count(a.waits.reporters, "rank")}});
  }
  if (f.time) s.Add(ReasonId::kStoppedParticipatingAt, {{"time", ClockTime(*f.time)}});
  s.Add(ReasonId::kPeriod);
  return s;
}

void DiagnosedRecovery(const Analysis& a, std::int32_t rank, const std::optional<KernelCause>& cause, Finding* f) {
  const RankFacts& r = a.facts.ranks[rank];
  const std::string node = NodeName(a.inc, r.node);
  const std::string rk = "rank " + std::to_string(rank);  // the step's target
  if (cause && !cause->recovery.empty()) {
    f->recovery.insert(f->recovery.end(), cause->recovery.begin(), cause->recovery.end());
    return;
  }
  // The blanks every step may fill: its node, " around <time>", the rank, " (<its error's line>)".
  const Reason at =
      f->time ? Say(ReasonId::kAroundTime, {{"time", ClockTime(*f->time)}}) : Reason();
  const Reason own = r.python_error ? Say(ReasonId::kCitedInParentheses,
                                          {{"where", Where(a.inc, a.inc.events[*r.python_error])}})
                                    : Reason();
  const std::vector<ReasonArg> args = {
      {"node", node}, {"at", at}, {"rank", std::to_string(rank)}, {"own", own}};
  if (f->failure_class == v1::FAILURE_CLASS_UNSPECIFIED && r.python_error &&
      a.inc.events[*r.python_error].family == Family::kCuda) {
    f->recovery.push_back({"inspect_host_logs", node, Say(ReasonId::kReadKernelLogForXid, args)});
    return;
  }
  switch (f->failure_class) {
    case v1::FAILURE_CLASS_CUDA_ERROR:
      f->recovery.push_back({"fix_application", rk, Say(ReasonId::kFindCudaErrorKernel, args)});
      break;
    case v1::FAILURE_CLASS_CUDA_OOM:
      f->recovery.push_back({"fix_application", rk, Say(ReasonId::kLowerGpuMemory, args)});
      break;
    case v1::FAILURE_CLASS_SIGNAL_KILL: {
      std::vector<ReasonArg> with_exit = args;
      with_exit.emplace_back("exit", ExitPhrase(r.exit_code));
      f->recovery.push_back(
          {"inspect_host_logs", node, Say(ReasonId::kCheckKernelLogForKiller, with_exit)});
      break;
    }
    case v1::FAILURE_CLASS_PINNED_OOM:
      f->recovery.push_back({"reduce_pinned_memory", rk, Say(ReasonId::kLowerPinnedMemory, args)});
      break;
    case v1::FAILURE_CLASS_HOST_OOM:
      f->recovery.push_back({"reduce_host_memory", rk, Say(ReasonId::kLowerRankHostMemory, args)});
      break;
    case v1::FAILURE_CLASS_GPU_ECC: case v1::FAILURE_CLASS_GPU_NVLINK:  // the CUDA error's own message, no Xid read
      f->recovery.push_back({"drain_node", node, Say(ReasonId::kDrainNodeOfCudaError, args)});
      break;
    case v1::FAILURE_CLASS_SEGFAULT:
      f->recovery.push_back({"inspect_core_dump", rk, Say(ReasonId::kReadRankCoreDump, args)});
      break;
    case v1::FAILURE_CLASS_COLLECTIVE_MISMATCH:
      f->recovery.push_back({"fix_application", rk, Say(ReasonId::kFixMismatchedCollective, args)});
      break;
    case v1::FAILURE_CLASS_PYTHON_EXCEPTION:
      f->recovery.push_back({"fix_application", rk, Say(ReasonId::kFixRankException, args)});
      break;
    default:
      f->recovery.push_back({"inspect_rank", rk, Say(ReasonId::kTakeRankStack, args)});
  }
}

// Host memory at or above this share (DeepSpeed see_memory_usage) is cited beside a host OOM.
constexpr float kHostMemoryPressure = 90;

// The memory tier a memory class stands for, as the reason's last sentence (none for the others).
std::optional<ReasonId> TierPhrase(v1::FailureClass c) {
  switch (c) {
    case v1::FAILURE_CLASS_CUDA_OOM:
      return ReasonId::kTierHbm;
    case v1::FAILURE_CLASS_HOST_OOM:
      return ReasonId::kTierHost;
    case v1::FAILURE_CLASS_PINNED_OOM:
      return ReasonId::kTierPinned;
    default:
      return std::nullopt;
  }
}

// srun's, mpirun's, Ray's or `denpex run`'s word on a rank's end (not a torchrun agent's).
bool IsRunnersWordOnExit(const Event& e) {
  return e.family == Family::kSlurm || e.family == Family::kBareMetal ||
         e.kind == Kind::kRayTaskError || e.kind == Kind::kProcessExit;
}

// The rank's node's first DeepSpeed launcher exit (`... exits with return code = N`), if any.
EventRef NodeLauncherExit(const Analysis& a, const RankFacts& r) {
  if (r.node < 0) return std::nullopt;
  const EventRef first = a.facts.nodes[r.node].first_failure;
  return first && a.inc.events[*first].kind == Kind::kLauncherExit ? first : std::nullopt;
}

// The rank's local peers that waited on its failed JIT extension build (RankFacts::waited_on).
std::vector<std::int32_t> BuildWaiters(const Analysis& a, std::int32_t rank) {
  std::vector<std::int32_t> out;
  const RankFacts& r = a.facts.ranks[rank];
  if (r.node < 0) return out;
  for (std::int32_t other : a.facts.nodes[r.node].ranks) {
    if (a.facts.ranks[other].waited_on == rank) out.push_back(other);
  }
  return out;
}

// Cites the build waiters' consequences: the node agent's first failure when it names one of them
// (it ended first, after the build gave up), and the first waiter's ImportError; says so.
void CiteBuildWaiters(const Analysis& a, std::int32_t rank, Finding* f) {
  const std::vector<std::int32_t> waiters = BuildWaiters(a, rank);
  if (waiters.empty()) return;
  const NodeFacts& n = a.facts.nodes[a.facts.ranks[rank].node];
  if (n.failed_rank >= 0 && a.facts.ranks[n.failed_rank].waited_on == rank) {
    f->evidence.push_back({*n.first_failure, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->evidence.push_back(
      {*a.facts.ranks[waiters.front()].peer_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->reason.Add(ReasonId::kBuildWaiters, {{"count", std::to_string(waiters.size())}});
}

void Diagnose(const Analysis& a, Finding* f, std::int32_t chosen = -1) {
  const RankScore& top = chosen < 0 ? a.scores.front()
                                    : *std::find_if(a.scores.begin(), a.scores.end(), [&](const RankScore& s) { return s.rank == chosen; });
  const double second = chosen >= 0 ? top.total() / kLeadRatio : a.scores.size() > 1 ? a.scores[1].total() : 0;
  const std::int32_t rank = top.rank;
  const RankFacts& r = a.facts.ranks[rank];
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = rank;
  f->node = r.node;
  f->local_rank = r.local_rank;
  Classify(a, rank, f);
  const std::optional<KernelCause> cause = KernelCauseOf(a, rank, f);
  const bool gpu_or_code =
      !cause && f->failure_class == v1::FAILURE_CLASS_CUDA_ERROR && r.python_error &&
      CudaErrorUndetermined(a.inc, a.facts, a.clocks, rank, a.inc.events[*r.python_error]);
  if (gpu_or_code) {  // the class is left open: only the kernel's word on the rank's own GPU would tell
    f->failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
    f->owner = v1::OWNER_UNKNOWN;
  }
  // A rank known only from its peers (no line of its own, no node: its node's files are absent)
  // never joined their collective; whether it hung or issued another one (a mismatched or
  // skipped collective) only its own watchdog line would tell: the class is left open.
  const FrBlocker* dumped = a.recorder.RootOf(rank);
  const RasBlocker* reported = a.ras.RootOf(rank);
  const bool ras_behind = reported != nullptr && (reported->why == RasBlocker::Why::kBehind ||
                                                  reported->why == RasBlocker::Why::kStuck);
  if (f->failure_class == v1::FAILURE_CLASS_HANG && !r.has_log && r.node < 0 && !ras_behind &&
      (dumped == nullptr || dumped->why != FrBlocker::Why::kNeverJoined)) {
    f->failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
    f->owner = v1::OWNER_UNKNOWN;
  }
  const double support = top.launcher > 0 && top.progress > 0 ? 0.95
                         : top.launcher > 0                   ? 0.85
                                                              : 0.6 + 0.3 * a.waits.explains[rank] / std::max(1, a.waits.reporters);
  f->confidence = (1 - second / top.total()) * support;
  f->cascade = SummarizeCascade(a.inc, a.facts, {rank}, r.node);

  if (r.node >= 0 && a.facts.nodes[r.node].failed_rank == rank) {
    f->evidence.push_back({*a.facts.nodes[r.node].first_failure, v1::EVIDENCE_ROLE_INITIATING});
  }
  if (r.table_entry) f->evidence.push_back({*r.table_entry, v1::EVIDENCE_ROLE_INITIATING});
  // A DataLoader worker's error re-raised in the main process: the worker's own line is the error.
  if (r.python_error)
    f->evidence.push_back(
        {r.reraised ? *r.reraised : *r.python_error, v1::EVIDENCE_ROLE_INITIATING});
  // DeepSpeed's launch.py names no rank (`<its last command> exits with return code = N`): its
  // node's first such line, after the rank's own error, says the node's launcher ended on it.
  if (const EventRef launch = NodeLauncherExit(a, r); launch && r.python_error) {
    f->evidence.push_back({*launch, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  if (r.host_cause && r.host_cause != r.exit_event && OwnExit(a.facts, rank))
    f->evidence.push_back({*r.host_cause, v1::EVIDENCE_ROLE_INITIATING});
  if (const Mismatch* m = a.MismatchOf(rank)) {
    f->evidence.push_back({m->event, v1::EVIDENCE_ROLE_INITIATING});
    f->evidence.push_back({m->peer_event, v1::EVIDENCE_ROLE_CORROBORATING});
  } else if (r.exit_event && IsRunnersWordOnExit(a.inc.events[*r.exit_event])) {
    f->evidence.push_back({*r.exit_event, v1::EVIDENCE_ROLE_INITIATING});
  }
  if (cause) {
    if (cause->initiating >= 0 && cause->initiating != r.exit_event) f->evidence.push_back({cause->initiating, v1::EVIDENCE_ROLE_INITIATING});
    for (std::int32_t i : cause->related) f->evidence.push_back({i, v1::EVIDENCE_ROLE_CORROBORATING});
    f->lines.insert(f->lines.end(), cause->lines.begin(), cause->lines.end());
    if (!cause->application()) f->gpu = cause->gpu;
  }
  if (r.reraised && r.python_error)
    f->evidence.push_back({*r.python_error, v1::EVIDENCE_ROLE_CORROBORATING});
  // Its agent SIGTERMed it at the teardown: it was still running (a hang, not a death).
  if (r.signalled && !OwnExit(a.facts, rank))
    f->evidence.push_back({*r.signalled, v1::EVIDENCE_ROLE_CORROBORATING});
  auto waiters = DirectWaiters(a, rank);
  if (waiters.empty() && top.progress > 0) waiters = GlooReporters(a);
  for (std::size_t i = 0; i < waiters.size() && i < kMaxWaiterCitations; ++i) {
    f->evidence.push_back({waiters[i], v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->reason = DiagnosedReason(a, rank, *f);
  if (ExitAmongUnrankedErrors(a, rank)) {
    f->rank = -1;
    f->local_rank = -1;
    const NodeErrors node = UnrankedErrorsOfNode(a, rank);
    f->evidence.push_back({node.first, v1::EVIDENCE_ROLE_CORROBORATING});
    f->reason.Add(node.nodeless ? ReasonId::kNodeIsTheAnswerNodeless : ReasonId::kNodeIsTheAnswer,
                  {{"rank", std::to_string(rank)}});
  }
  CiteBuildWaiters(a, rank, f);
  FlightRecorderPhrase(a, rank, f);
  RasPhrase(a, rank, f);
  if (cause) f->reason.Add(ReasonId::kThenSentence, {{"sentence", cause->phrase}});
  if (gpu_or_code) {
    f->reason.Add(ReasonId::kGpuOrCode, {{"where", Where(a.inc, a.inc.events[*r.python_error])},
                                         {"node", NodeName(a.inc, r.node)}});
  }
  if (const auto tier = TierPhrase(f->failure_class)) f->reason.Add(*tier);
  if (f->failure_class == v1::FAILURE_CLASS_HOST_OOM && a.facts.host_memory) {
    const Event& m = a.inc.events[*a.facts.host_memory];
    const auto& hm = std::get<HostMemory>(m.detail);
    if (hm.percent >= kHostMemoryPressure) {
      f->evidence.push_back({*a.facts.host_memory, v1::EVIDENCE_ROLE_CORROBORATING});
      f->reason.Add(
          ReasonId::kHostMemoryAt,
          {{"percent", std::to_string(static_cast<int>(hm.percent))}, {"where", Where(a.inc, m)}});
    }
  }
  DiagnosedRecovery(a, rank, cause, f);
}

// Among candidates the scores cannot separate, the one whose blocked collectives were started
// clearly first (aligned clocks): the stall spread from it. -1 when none leads by kStallLead.
std::int32_t FirstToStall(const Analysis& a, const std::vector<std::int32_t>& tied) {
  std::int32_t first = -1;
  std::optional<TimeNs> best, runner_up;
  for (std::int32_t r : tied) {
    const auto t = StallTime(a, r);
    if (!t) return -1;  // one of them cannot be placed in time
    if (!best || *t < *best) {
      runner_up = best;
      best = t;
      first = r;
    } else if (!runner_up || *t < *runner_up) {
      runner_up = t;
    }
  }
  return runner_up && *runner_up - *best > kStallLead ? first : -1;
}

// True when some collective waits on `rank` alone: every other member of its group reported
// a timeout in it (or a later one), so `rank` is the one member that never joined. A silent
// rank its agent tore down is presumed to wait like its peers and so ties with the one that
// stopped; this tells them apart, since a rank waiting in one collective cannot be the only
// member missing from another that all its peers had reached.
bool SoleBlocker(const Analysis& a, std::int32_t rank) {
  for (const ProcessGroup& g : a.groups) {
    const auto at = std::find(g.members.begin(), g.members.end(), rank);
    if (at == g.members.end()) continue;
    const auto k = static_cast<std::int32_t>(at - g.members.begin());
    std::set<std::int64_t> seen;
    for (const GroupReport& rep : g.reports) {
      if (!seen.insert(rep.seq).second || !WaitsOn(g, rep, k)) continue;
      std::int32_t blockers = 0;
      for (std::int32_t j = 0; j < static_cast<std::int32_t>(g.members.size()) && blockers < 2; ++j) {
        blockers += WaitsOn(g, rep, j) ? 1 : 0;
      }
      if (blockers == 1) return true;
    }
  }
  return false;
}

// Among candidates the scores cannot separate, the only one that is the sole blocker of a
// collective; -1 when none or several are. A rank with no log of its own is never that one: its
// silence is not seen, so it may as well have been waiting in a group whose other members' logs
// are missing too (a node's tensor-parallel peers, all gone with their node's logs).
std::int32_t OnlySoleBlocker(const Analysis& a, const std::vector<std::int32_t>& tied) {
  std::int32_t found = -1;
  for (std::int32_t r : tied) {
    if (!SoleBlocker(a, r)) continue;
    if (!a.facts.ranks[r].has_log) return -1;
    if (found >= 0) return -1;
    found = r;
  }
  return found;
}

// Watchdog timeouts no global rank could be given to (a torch <= 2.1 pod's or log dir's lines
// carry only the local rank, and no line of that node names its first rank): the groups they
// belong to are incomplete. A sentence for an INCONCLUSIVE reason; empty when there are none.
Reason UnrankedNote(const Analysis& a) {
  const auto n = a.facts.wave.unranked_timeouts.size();
  if (n == 0) return {};
  return Say(ReasonId::kUnrankedTimeoutsNote, {{"count", std::to_string(n)}});
}

// A rank that no line places on a node is "silent" only as far as the logs with ranks go: when
// some watchdog timeouts could not be tied to a global rank (UnrankedNote), one of them may be
// its own; when some files hold workers no line names (UnrankedFacts::worker_files), it may
// be one of them. Such ranks are no candidates then (the ranks the engine could place still are).
// Returns the best score among the ranks dropped (0 when none): a rank left out is unknown, not
// cleared, so a placed rank that does not lead it does not lead.
double DropUnplacedWhenTimeoutsAreUnranked(const JobFacts& facts, std::vector<RankScore>* scores) {
  if (facts.wave.unranked_timeouts.empty() && facts.unranked.worker_files == 0) return 0;
  double dropped = 0;
  for (const RankScore& s : *scores) {
    if (facts.ranks[s.rank].node < 0) dropped = std::max(dropped, s.total());
  }
  std::erase_if(*scores, [&](const RankScore& s) { return facts.ranks[s.rank].node < 0; });
  return dropped;
}

// The leading rank only stopped participating, and fewer than kLeastWaitShare of the ranks that
// timed out waited on it: the wave did not start from it (victims-only: the rank it did start
// from is not in the logs in hand).
bool FewWaitOnIt(const Analysis& a) {
  const RankScore& top = a.scores.front();
  if (top.launcher > 0 || top.mismatch > 0 || !a.facts.HasWave() || a.waits.reporters == 0) return false;
  const auto rank = static_cast<std::size_t>(top.rank);
  const std::int32_t waiting = rank < a.waits.explains.size() ? a.waits.explains[rank] : 0;
  return waiting > 0 && waiting < kLeastWaitShare * a.waits.reporters;
}

void FewWaiters(const Analysis& a, Finding* f) {
  const std::int32_t rank = a.scores.front().rank;
  f->verdict = v1::VERDICT_INCONCLUSIVE;
  f->owner = v1::OWNER_UNKNOWN;
  f->cascade = SummarizeCascade(a.inc, a.facts, {}, -1);
  f->reason = Say(ReasonId::kFewWaitOnLeader,
                  {{"rank", std::to_string(rank)},
                   {"waiting", std::to_string(a.waits.explains[static_cast<std::size_t>(rank)])},
                   {"reporters", std::to_string(a.waits.reporters)}});
  f->reason.Add(UnrankedNote(a));
  f->recovery.push_back({"collect_logs", "", Say(ReasonId::kCollectLogsOfWaitedOnRank)});
}

// A link failed under some process no line names (UnrankedLinkError), and the leading ranks only
// stopped participating: they may be the link's victims.
void UnplacedLinkError(const Analysis& a, std::int32_t link, Finding* f) {
  f->verdict = v1::VERDICT_INCONCLUSIVE;
  f->owner = v1::OWNER_UNKNOWN;
  f->cascade = SummarizeCascade(a.inc, a.facts, {}, -1);
  f->evidence.push_back({link, v1::EVIDENCE_ROLE_CORROBORATING});
  const Event& e = a.inc.events[link];
  const Reason on =
      e.node >= 0 ? Say(ReasonId::kOnNode, {{"node", NodeName(a.inc, e.node)}}) : Reason();
  f->reason = Say(
      ReasonId::kUnplacedLinkError,
      {{"where", Where(a.inc, e)}, {"on", on}, {"rank", std::to_string(a.scores.front().rank)}});
  f->recovery.push_back({"collect_logs", e.node >= 0 ? NodeName(a.inc, e.node) : std::string(),
                         Say(ReasonId::kCollectRankTiedLogs)});
}

// The placed ranks left do not lead a rank no line places, which could not be kept as a
// candidate (some timeouts or workers carry no global rank): the logs name no initiator.
void UnplacedMayLead(const Analysis& a, Finding* f) {
  f->verdict = v1::VERDICT_INCONCLUSIVE;
  f->owner = v1::OWNER_UNKNOWN;
  f->cascade = SummarizeCascade(a.inc, a.facts, {}, -1);
  f->reason = Say(ReasonId::kUnplacedMayLead, {{"rank", std::to_string(a.scores.front().rank)}});
  f->reason.Add(UnrankedNote(a));
  f->recovery.push_back({"collect_logs", "", Say(ReasonId::kCollectLogsOfUnplacedNodes)});
}

// "on 3 nodes", "on 1 node and one no line places", "on no node any line places".
Reason OnNodes(const std::set<std::int32_t>& nodes) {
  const auto known = static_cast<std::int64_t>(std::count_if(nodes.begin(), nodes.end(), [](std::int32_t n) { return n >= 0; }));
  if (known == 0) return Say(ReasonId::kOnNoPlacedNode);
  return Say(nodes.contains(-1) ? ReasonId::kOnNodesAndUnplaced : ReasonId::kOnNodes,
             {{"nodes", Count(known, "node")}});
}

// The top candidates cannot be told apart: say so, name them and their node.
void Undecided(const Analysis& a, Finding* f) {
  const double top = a.scores.front().total();
  std::vector<std::int32_t> tied;
  std::set<std::int32_t> nodes;
  for (const RankScore& s : a.scores) {
    if (s.total() * kLeadRatio < top) break;
    tied.push_back(s.rank);
    nodes.insert(a.facts.ranks[s.rank].node);
  }
  f->verdict = v1::VERDICT_INCONCLUSIVE;
  f->owner = v1::OWNER_UNKNOWN;
  f->confidence = 0.6 / tied.size();
  f->cascade = SummarizeCascade(a.inc, a.facts, tied, nodes.size() == 1 ? *nodes.begin() : -1);
  for (std::int32_t r : tied) {
    const auto t = StallTime(a, r);
    if (t && (!f->time || *t < *f->time)) f->time = t;
  }
  const auto waiters = DirectWaiters(a, tied.front());
  for (std::size_t i = 0; i < waiters.size() && i < kMaxWaiterCitations; ++i) {
    f->evidence.push_back({waiters[i], v1::EVIDENCE_ROLE_CORROBORATING});
  }
  if (nodes.size() == 1 && *nodes.begin() >= 0) {
    const std::int32_t node = *nodes.begin();
    const std::string name = NodeName(a.inc, node);
    f->node = node;
    f->reason = Say(a.facts.nodes[node].agent_log ? ReasonId::kTiedOnNodeAgentLog
                                                  : ReasonId::kTiedOnNodeNoAgentLog,
                    {{"ranks", RankList(tied)}, {"node", name}});
    f->recovery.push_back(
        {"collect_logs", name,
         Say(ReasonId::kCollectLogsOfTiedNode, {{"node", name}, {"ranks", RankList(tied)}})});
    return;
  }
  const bool unheard = std::all_of(tied.begin(), tied.end(), [&](std::int32_t r) { return !a.facts.ranks[r].has_log; });
  if (nodes.size() == 1 && unheard) {  // no node: ranks the stated world size or the groups' members add
    std::int32_t highest_logged = -1;
    for (std::size_t r = 0; r < a.facts.ranks.size(); ++r) {
      if (a.facts.ranks[r].has_log) highest_logged = static_cast<std::int32_t>(r);
    }
    const bool above = *std::min_element(tied.begin(), tied.end()) > highest_logged;
    const Reason why =
        a.facts.world.stated > 0
            ? Say(ReasonId::kWorldSizeStated, {{"size", std::to_string(a.facts.world.stated)}})
            : Say(above ? ReasonId::kNamedAsMembersAboveLogged : ReasonId::kNamedAsMembers);
    f->reason = Say(ReasonId::kNeverHeardFrom, {{"ranks", RankList(tied)}, {"why", why}});
    f->reason.Add(UnrankedNote(a));
    f->recovery.push_back(
        {"collect_logs", "", Say(ReasonId::kFindNodeOfRanks, {{"ranks", RankList(tied)}})});
    return;
  }
  f->reason = Say(ReasonId::kTiedOnNodes, {{"ranks", RankList(tied)}, {"nodes", OnNodes(nodes)}});
  f->reason.Add(UnrankedNote(a));
  f->recovery.push_back(
      {"collect_logs", "", Say(ReasonId::kCollectLogsOfTiedNodes, {{"ranks", RankList(tied)}})});
}

// Timeouts whose line names no process group (torch <= 2.2: `[Rank N]` only) that no inferred
// group holds: their collectives could not be split into groups (groups.cc, UnnamedGroups).
std::int32_t UngroupedUnnamedTimeouts(const Analysis& a) {
  std::set<std::int32_t> placed;
  for (const ProcessGroup& g : a.groups) {
    if (g.members.empty()) continue;
    for (const GroupReport& r : g.reports) placed.insert(r.event);
  }
  std::int32_t n = 0;
  for (std::int32_t i : a.facts.wave.timeouts) {
    const auto& w = std::get<WatchdogTimeout>(a.inc.events[i].detail);
    n += w.pg == kNoStr && w.pg_desc == kNoStr && placed.count(i) == 0 ? 1 : 0;
  }
  return n;
}

// Watchdog timeouts were logged but none carries a global rank (torch <= 2.2 under DeepSpeed's
// pdsh launcher: `<host>: [E ProcessGroupNCCL.cpp:475] [Rank N] ...`, N the rank within an
// unnamed group, no `[rank<G>]:` prefix, no local-rank tag, one combined output): say what is
// missing. Their hosts still count them per node: the one node with fewer than every other
// node is named as where a rank may have stayed silent (a pointer, not a verdict).
Reason UnrankedOnlyReason(const Analysis& a) {
  std::map<std::int32_t, std::int64_t> per_node;
  for (std::int32_t i : a.facts.wave.unranked_timeouts) ++per_node[a.inc.events[i].node];
  Reason out =
      Say(ReasonId::kUnrankedTimeoutsOnly,
          {{"timeouts", Count(static_cast<std::int64_t>(a.facts.wave.unranked_timeouts.size()),
                              "watchdog timeout")}});
  std::map<std::int64_t, std::vector<std::int32_t>> by_count;
  for (const auto& [node, n] : per_node) {
    if (node >= 0) by_count[n].push_back(node);
  }
  if (per_node.contains(-1) || by_count.size() != 2 || by_count.begin()->second.size() != 1 || by_count.rbegin()->second.size() < 2) {
    return out;
  }
  const std::int32_t node = by_count.begin()->second.front();
  out.Add(ReasonId::kFewerTimeoutsOnNode,
          {{"node", NodeName(a.inc, node)},
           {"count", std::to_string(by_count.begin()->first)},
           {"others", std::to_string(by_count.rbegin()->second.size())},
           {"usual", std::to_string(by_count.rbegin()->first)}});
  return out;
}

// Workers sharing their agent's console exited with an error code, and no line there says which
// rank printed which: one of them raised an error of its own (`own`, -1 when none is recognised)
// and one's last error is about a peer, the one line every failed worker of the console was given.
Reason SharedConsoleReason(const Analysis& a, const std::vector<std::int32_t>& failed,
                           std::int32_t own, Finding* f) {
  std::string ranks, exits;
  for (std::int32_t r : failed) {
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    exits += (exits.empty() ? "" : ", ") + Where(a.inc, a.inc.events[*a.facts.ranks[r].exit_event]);
  }
  const std::int32_t peer = *a.facts.ranks[failed.front()].peer_error;
  Reason s = Say(ReasonId::kSharedConsoleRanks, {{"ranks", ranks}, {"exits", exits}});
  if (own >= 0) {
    const Event& e = a.inc.events[own];
    s.Add(ReasonId::kOneOfThemRaised,
          {{"error", std::string(a.inc.str(std::get<PythonError>(e.detail).type))},
           {"where", Where(a.inc, e)}});
    f->evidence.push_back({own, v1::EVIDENCE_ROLE_CORROBORATING});
  } else {
    s.Add(ReasonId::kNoOwnErrorThere);
  }
  f->evidence.push_back({peer, v1::EVIDENCE_ROLE_CONSEQUENCE});
  s.Add(ReasonId::kLastErrorAboutPeer, {{"where", Where(a.inc, a.inc.events[peer])}});
  return s;
}

// Says that the only failures are victims', and which worker its agent had to SIGKILL (the one
// that outlived SIGTERM: stopped or stuck, a suspect whose rank no line names).
Reason VictimsOnlyReason(const Analysis& a, const std::vector<std::int32_t>& victims, Finding* f) {
  if (OnePeerErrorForAll(a.facts, victims)) return SharedConsoleReason(a, victims, UnrankedOwnErrorBefore(a.inc, a.facts, victims.front()), f);
  Reason s;
  for (std::int32_t r : victims) {
    const RankFacts& rf = a.facts.ranks[r];
    s.Add(ReasonId::kVictimExit, {{"rank", std::to_string(r)},
                                  {"exit", ExitPhrase(rf.exit_code)},
                                  {"where", Where(a.inc, a.inc.events[*rf.exit_event])},
                                  {"peer", Where(a.inc, a.inc.events[*rf.peer_error])}});
    f->evidence.push_back({*rf.peer_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  }
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(a.inc.events.size()); ++i) {
    const Event& e = a.inc.events[i];
    const auto* ws = std::get_if<WorkerSignalled>(&e.detail);
    if (ws == nullptr || e.family != Family::kTorchrun || a.inc.str(ws->signal) != "SIGKILL") continue;
    s.Add(ReasonId::kAgentSigkilledWorker, {{"where", Where(a.inc, e)}});
    f->evidence.push_back({i, v1::EVIDENCE_ROLE_CORROBORATING});
    break;
  }
  s.Add(ReasonId::kInitiatorNotDetermined);
  return s;
}

void NoCandidate(const Analysis& a, Finding* f) {
  f->verdict = v1::VERDICT_INCONCLUSIVE;
  f->owner = v1::OWNER_UNKNOWN;
  f->cascade = SummarizeCascade(a.inc, a.facts, {}, -1);
  if (const std::vector<std::int32_t> victims = PeerErrorExits(a.facts); !a.facts.HasWave() && !victims.empty()) {
    f->reason = VictimsOnlyReason(a, victims, f);
    return;
  }
  if (!a.facts.HasWave() && !a.facts.wave.unranked_timeouts.empty()) {
    f->reason = UnrankedOnlyReason(a);
    return;
  }
  f->reason = a.facts.HasWave() ? Say(ReasonId::kNoOneStandsOut,
                                      {{"reporters", std::to_string(a.waits.reporters)}})
                                : Say(ReasonId::kNothingStopped);
  if (const std::int32_t unnamed = a.facts.HasWave() ? UngroupedUnnamedTimeouts(a) : 0; unnamed > 0) {
    f->reason.Add(ReasonId::kUngroupedUnnamedTimeouts, {{"count", std::to_string(unnamed)}});
  }
  if (a.facts.HasWave()) f->reason.Add(UnrankedNote(a));
  // A rank one RAS report shows behind, and nothing else: named as the one to look at, not
  // committed (one snapshot cannot tell a stuck rank from a late one).
  for (const RasBlocker& b : a.ras.roots) {
    if (b.why != RasBlocker::Why::kBehind) continue;
    const Event& e = a.inc.events[b.event];
    const RasRank& r = std::get<RasRank>(e.detail);
    f->reason.Add(ReasonId::kRasBehindOnce, {{"rank", std::to_string(b.rank)},
                                             {"where", Where(a.inc, e)},
                                             {"count", std::to_string(r.count)},
                                             {"op", std::string(a.inc.str(r.op))},
                                             {"common", std::to_string(r.common)}});
    f->evidence.push_back({b.event, v1::EVIDENCE_ROLE_CORROBORATING});
    break;
  }
}

// One representative secondary error of each kind, after what is already cited.
// The first peer's watchdog timeout: the earliest by printed time. Untimed lines (torch <= 2.3
// c10 lines borrow their neighbours' times, so their order is the files') say nothing about
// who timed out first; then a rank on the initiator's node leads, blocked directly on it (its
// tensor-parallel peers); among those, one file's order (srun's single output) is the order
// they were printed in.
std::int32_t FirstPeerTimeout(const Analysis& a, const Finding& f) {
  std::int32_t first = -1, near = -1;
  for (std::int32_t i : a.facts.wave.timeouts) {
    const Event& e = a.inc.events[i];
    if (e.rank == f.rank) continue;
    if (first < 0) {
      first = i;
      if (f.node < 0 || (e.clock != Clock::kNone && !e.time_borrowed)) return first;
    }
    if (a.facts.ranks[e.rank].node != f.node) continue;
    const Event* n = near >= 0 ? &a.inc.events[near] : nullptr;
    if (n == nullptr || (n->file == e.file && e.line < n->line)) near = i;
  }
  return near >= 0 ? near : first;
}

void AddConsequences(const Analysis& a, Finding* f) {
  auto cited = [&](std::int32_t e) {
    return std::any_of(f->evidence.begin(), f->evidence.end(), [&](const Citation& c) { return c.event == e; });
  };
  if (const std::int32_t i = FirstPeerTimeout(a, *f); i >= 0 && !cited(i)) f->evidence.push_back({i, v1::EVIDENCE_ROLE_CONSEQUENCE});
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(a.facts.nodes.size()); ++n) {
    if (n == f->node || a.facts.nodes[n].reports.empty()) continue;
    if (cited(a.facts.nodes[n].reports.front())) break;
    f->evidence.push_back({a.facts.nodes[n].reports.front(), v1::EVIDENCE_ROLE_CONSEQUENCE});
    break;
  }
  if (f->evidence.size() > kMaxEvidence) f->evidence.resize(kMaxEvidence);
}

// Scores tie, but one candidate's collectives stalled clearly first: name it, and say why.
void DiagnoseFirstToStall(const Analysis& a, std::int32_t rank, Finding* f) {
  Diagnose(a, f, rank);
  f->reason.Add(ReasonId::kStartedFirst, {{"rank", std::to_string(rank)}});
}

// Scores tie, but only one candidate is the sole member missing from a collective.
void DiagnoseSoleBlocker(const Analysis& a, std::int32_t rank, Finding* f) {
  Diagnose(a, f, rank);
  f->reason.Add(ReasonId::kSoleBlocker, {{"rank", std::to_string(rank)}});
}

// The ranks that lead: the top one when it clearly leads, else every rank within the lead ratio.
std::vector<std::int32_t> Leaders(const Analysis& a, bool leads) {
  std::vector<std::int32_t> out;
  for (const RankScore& s : a.scores) {
    if (!out.empty() && (leads || s.total() * kLeadRatio < a.scores.front().total())) break;
    out.push_back(s.rank);
  }
  return out;
}

// A straggler found from the timers is the initiator when nothing else explains the incident:
// no rank failed at all, or the rank the others waited on is a slow one that then stalled (it
// did not exit or raise on its own, and issued no odd collective).
bool StragglerExplains(const Analysis& a, const Straggler& s, bool leads, std::int32_t lost) {
  if (lost >= 0) return false;
  if (a.scores.empty()) return true;
  for (std::int32_t r : Leaders(a, leads)) {
    const bool slow = std::find(s.ranks.begin(), s.ranks.end(), r) != s.ranks.end() ||
                      (s.whole_node && a.facts.ranks[r].node == s.node);
    if (!slow) continue;
    return !OwnExit(a.facts, r) && !a.facts.ranks[r].python_error && a.MismatchOf(r) == nullptr;
  }
  return false;
}

void DiagnoseStalledStraggler(const Analysis& a, const Straggler& s, Finding* f) {
  DiagnoseFailSlow(a.inc, a.facts, s, f);
  const std::int32_t lead = s.whole_node ? s.ranks.front() : s.lead();
  const Reason waiting = WaitersPhrase(a, lead);
  if (!waiting.parts.empty())
    f->reason.Add(ReasonId::kThenStoppedParticipating, {{"waiting", waiting}});
  const auto waiters = DirectWaiters(a, lead);
  for (std::size_t i = 0; i < waiters.size() && i < kMaxWaiterCitations; ++i) {
    f->evidence.push_back({waiters[i], v1::EVIDENCE_ROLE_CORROBORATING});
  }
}

}  // namespace

Analysis BuildAnalysis(const Incident& inc, JobFacts facts, const Incident* control) {
  Analysis a{.inc = inc, .control = control, .facts = std::move(facts)};
  // The mismatch search reads only the events and the wave's timeouts, which nothing below
  // changes: it runs beside the clocks, the groups and the wait analysis (its result is the same
  // whichever thread runs it, or when one thread runs both).
  std::vector<Mismatch> mismatches;
  tbb::task_group beside;
  beside.run([&inc, &timeouts = a.facts.wave.timeouts, &mismatches] {
    Stage stage("FindMismatches");
    mismatches = FindMismatches(inc, timeouts);
  });
  Stage stage("AlignClocks");
  a.clocks = AlignClocks(inc, a.facts);
  ApplyOffsets(inc, a.clocks, &a.facts);
  stage.End();

  Stage groups("InferGroups");
  a.groups = InferGroups(inc, a.facts);
  groups.End();
  for (const auto& g : a.groups) {
    for (std::int32_t m : g.members) a.facts.EnsureRank(m);  // silent members beyond the logs
  }
  a.recorder = AnalyzeFlightRecorder(inc);
  for (const FrBlocker& b : a.recorder.roots) a.facts.EnsureRank(b.rank);
  a.ras = AnalyzeNcclRas(inc);
  for (const RasBlocker& b : a.ras.roots) a.facts.EnsureRank(b.rank);
  PlaceUnloggedRanks(&a.facts);
  Stage waits("AnalyzeWaits");
  a.waits = AnalyzeWaits(a.facts, a.groups);
  waits.End();
  beside.wait();
  a.mismatches = std::move(mismatches);
  for (const FrBlocker& b : a.recorder.roots) {
    if (b.why == FrBlocker::Why::kOddCollective && a.MismatchOf(b.rank) == nullptr)
      a.mismatches.push_back({.rank = b.rank, .event = b.own, .peer_event = b.waiter});
  }
  for (const RasBlocker& b : a.ras.roots) {
    if (b.why == RasBlocker::Why::kOdd && a.MismatchOf(b.rank) == nullptr)
      a.mismatches.push_back({.rank = b.rank, .event = b.event, .peer_event = b.ahead});
  }
  std::vector<std::int32_t> odd;
  for (const Mismatch& m : a.mismatches) odd.push_back(m.rank);
  Stage scores("ScoreRanks");
  a.scores = ScoreRanks(a.facts, a.waits, odd, a.recorder, a.ras);
  a.unplaced = DropUnplacedWhenTimeoutsAreUnranked(a.facts, &a.scores);
  a.leads = a.scores.size() == 1 ||
            (!a.scores.empty() && a.scores[1].total() * kLeadRatio < a.scores[0].total());
  a.lost_node = LostNode(inc, a.facts, Leaders(a, a.leads));
  scores.End();
  Stage slow("FindFailSlow");
  a.straggler = FindFailSlow(inc, a.facts, control);
  return a;
}

bool AnswerStalledStraggler(const Analysis& a, Finding* f) {
  if (!a.straggler || !StragglerExplains(a, *a.straggler, a.leads, a.lost_node)) return false;
  DiagnoseStalledStraggler(a, *a.straggler, f);
  return true;
}

bool AnswerNoCandidate(const Analysis& a, Finding* f) {
  if (!a.scores.empty()) return false;
  NoCandidate(a, f);
  return true;
}

bool AnswerUnplacedMayLead(const Analysis& a, Finding* f) {
  if (a.scores.empty() || a.unplaced * kLeadRatio < a.scores.front().total()) return false;
  UnplacedMayLead(a, f);
  return true;
}

bool AnswerUnplacedLinkError(const Analysis& a, Finding* f) {
  if (a.scores.empty()) return false;
  const std::int32_t warn = UnrankedLinkError(a.inc);
  if (warn < 0 || a.scores.front().launcher != 0) return false;
  UnplacedLinkError(a, warn, f);
  return true;
}

bool AnswerFewWaiters(const Analysis& a, Finding* f) {
  if (a.scores.empty() || !FewWaitOnIt(a)) return false;
  FewWaiters(a, f);
  return true;
}

bool AnswerLeader(const Analysis& a, Finding* f) {
  if (!a.leads) return false;
  Diagnose(a, f);
  return true;
}

bool AnswerSoleBlocker(const Analysis& a, Finding* f) {
  const std::int32_t sole = OnlySoleBlocker(a, Leaders(a, false));
  if (sole < 0) return false;
  DiagnoseSoleBlocker(a, sole, f);
  return true;
}

bool AnswerFirstToStall(const Analysis& a, Finding* f) {
  const std::int32_t first = FirstToStall(a, Leaders(a, false));
  if (first < 0) return false;
  DiagnoseFirstToStall(a, first, f);
  return true;
}

// The tied candidates share one node, each an exit with an error code that only its agent names,
// while the node's processes printed several errors no line ties to a rank (a log dir's `<L>/`
// folders renamed): which worker failed first is not known, its node is. The answer is the node,
// as for one such exit.
bool AnswerTiedExitsOfOneNode(const Analysis& a, Finding* f) {
  if (a.scores.empty()) return false;
  const double top = a.scores.front().total();
  std::int32_t node = -1;
  for (const RankScore& s : a.scores) {
    if (s.total() * kLeadRatio < top) break;
    const std::int32_t n = a.facts.ranks[s.rank].node;
    if (n < 0 || (node >= 0 && n != node) || !ExitAmongUnrankedErrors(a, s.rank)) return false;
    node = n;
  }
  Diagnose(a, f,
           a.scores.front().rank);  // chosen among the tied: confidence as for the others so chosen
  return true;
}

bool AnswerUndecided(const Analysis& a, Finding* f) {
  if (a.scores.empty()) return false;
  Undecided(a, f);
  return true;
}

// Facts first; the rows that need no wait analysis; the wait analysis; the rows after it (the
// first that answers decides: detectors.cc); then what every answer after the wait analysis gets.
Finding AnalyzeParticipation(const Incident& inc, const Incident* control) {
  Stage stage("CollectFacts");
  JobFacts facts = CollectFacts(inc);
  stage.End();
  Finding f;
  f.strategy = "engine";
  f.ranks_seen = facts.world.ranks_seen;
  f.world_size = static_cast<std::int32_t>(facts.ranks.size());
  f.problems = facts.world.notes;
  Stage before("DetectorsBeforeWaits");
  for (const FactsDetector& d : DetectorsBeforeWaits()) {
    if (d.diagnose(inc, facts, &f)) return f;
  }
  before.End();
  Stage build("BuildAnalysis");
  const Analysis a = BuildAnalysis(inc, std::move(facts), control);
  build.End();
  Stage after("DetectorsAfterWaits");
  f.world_size = static_cast<std::int32_t>(a.facts.ranks.size());
  f.clock_offsets = a.clocks.by_node;
  for (std::size_t i = 0; i < a.scores.size() && i < kMaxCandidates; ++i) {
    const RankScore& s = a.scores[i];
    f.candidates.push_back({s.rank, a.facts.ranks[s.rank].node, s.total()});
  }
  for (const AnalysisDetector& d : DetectorsAfterWaits()) {
    if (!d.diagnose(a, &f)) continue;
    if (d.complete) return f;
    break;
  }
  AddConsequences(a, &f);
  if (f.failure_class == v1::FAILURE_CLASS_STRAGGLER && f.cascade.secondary_ranks.empty()) {
    f.recovery.push_back({"restart_job", "", Say(ReasonId::kRestartWithoutSlowHardware)});
    return f;
  }
  f.recovery.push_back({"restart_job", "", Say(ReasonId::kRestartWholeJob)});
  NoteRequeue(inc, a.facts, &f);
  NoteRestarts(inc, &f);
  return f;
}

}  // namespace denpex::engine
