// JobFacts: what each rank and each node did, as its logs and its torchrun agent tell it, and
// what the job as a whole showed, one struct per concern (the world, the watchdog wave, workers
// no rank could be given to, the scheduler). Built once from the Incident (CollectFacts, which
// places ranks on nodes through analyze/placement.h); the strategies read it. A line a fact
// points at is an EventRef: none when no line said it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "denpex/v1/vocabulary.pb.h"
#include "incident/incident.h"

namespace denpex::engine {

// A line the facts point at, by its index in Incident::events; nullopt when no line said it.
using EventRef = std::optional<std::int32_t>;
// `index` as an EventRef: none when negative (the -1 of a search that found nothing).
inline EventRef EventRefOf(std::int32_t index) {
  return index >= 0 ? EventRef(index) : std::nullopt;
}

struct RankFacts {
  std::int32_t node = -1;        // index into Incident::nodes
  std::int32_t local_rank = -1;
  bool has_log = false;          // a rank_<R>.log file or `[rank<R>]:` lines
  EventRef first_timeout;        // its earliest watchdog timeout
  std::int32_t timeouts = 0;
  EventRef exit_event;  // the agent's word that it exited: `failed` line or table entry
  std::int32_t exit_code = 0;
  TimeNs exit_time = 0;
  // exit_time is the exit line's own (or an anchored borrowed one, HasOwnTime): false for an
  // untimed line (srun's `task N: Killed`, mpirun's report), whose time is 0 or whatever line
  // came before it; such an exit is never ordered against the wave.
  bool exit_timed = false;
  EventRef table_entry;   // the ChildFailedError entry naming it
  EventRef python_error;  // the first exception line of its own Python traceback(s)
  // The exception that one re-raised: `X: Caught X in DataLoader worker process N.` is followed
  // by the worker's `Original Traceback` and its own `X: ...` line, the error that happened.
  EventRef reraised;
  // That exception is the DataLoader's pin-memory thread's, and the error it re-raised is an out
  // of memory: page-locked (pinned) host memory could not be allocated.
  bool pinned_oom = false;
  // Its first error about a peer (gloo `Connection closed by peer`, a NCCL error, the watchdog's
  // abort): it failed because another rank did.
  EventRef peer_error;
  // The local rank whose JIT extension build it waited on (torch's build lock): its ImportError
  // of the extension's .so (`cannot open shared object file`) is that build's failure, not its
  // own (MarkBuildWaiters; python_error is then none and peer_error the ImportError).
  std::int32_t waited_on = -1;
  bool torn_down = false;  // its agent SIGTERMed it after another local worker had failed
  std::int64_t pid = 0;     // as its agent's `failed` line or table entry, or its NCCL `host:pid:tid`, names it
  // Its agent's `Sending process <pid> closing signal SIGTERM`: it was still running when the
  // agent tore its node's workers down (MapSignalledPids in facts.cc).
  EventRef signalled;
  // Host evidence of why it died (the kernel OOM killer of its pid, srun's `Out Of Memory` of its
  // task): the event, and the class and owner it stands for (HostCauseOf).
  EventRef host_cause;
  v1::FailureClass host_class = v1::FAILURE_CLASS_UNSPECIFIED;
  v1::Owner host_owner = v1::OWNER_UNSPECIFIED;
};

struct NodeFacts {
  std::vector<std::int32_t> ranks;   // global ranks, sorted
  bool agent_log = false;
  EventRef first_failure;            // the agent's first `failed (exitcode` line
  std::int32_t failed_rank = -1;     // the global rank that line names, when it can be mapped
  std::int32_t signalled = 0;        // `Sending process P closing signal` lines
  std::vector<std::int32_t> sigterms;  // those lines (event indices, SIGKILL's excluded)
  std::int32_t forced_kills = 0;     // `Unable to shutdown process P via 15, forcefully exitting via 9`
  EventRef exit_barrier;             // its agent's `Error waiting on exit barrier`
  // DeepSpeed launch.py's `nnodes=N, num_local_procs=P, node_rank=K` (pdsh prefix names the node),
  // or its torchrun agent's rendezvous result (`global_ranks=[G, ...]`, LOGLEVEL=INFO): its ranks
  // are first_rank .. first_rank + local_procs - 1 (first_rank = K*P, or G); -1 when unknown.
  std::int32_t first_rank = -1;
  std::int32_t local_procs = -1;
  bool agent_ranks = false;  // stated by its torchrun agent: its silent ranks are placed on it
  std::vector<std::int32_t> reports; // agent failure reports: one event index each
  EventRef lost;                     // a Slurm (or mpirun, pdsh, ssh) word that the node failed
  // slurmctld's view of it: first `not responding`, `setting DOWN`, the job's kill or requeue on
  // it, and `now responding` (its slurmd answered again).
  EventRef not_responding;
  EventRef down;
  EventRef job_ended;
  EventRef responding;
};

// The watchdog wave and the other errors ranks reported about their peers: what the wait
// analysis and the cascade read.
struct WaveFacts {
  std::vector<std::int32_t> timeouts;  // watchdog timeout events by (printed time, rank)
  // Watchdog timeouts no global rank could be given to (a torch <= 2.1 pod's lines carry only
  // the local rank, and nothing on its node names its first rank; torch <= 2.1 under pdsh):
  // a rank placed on no node may have printed one of them, so it is not known to be silent.
  // Event indices, in event order; they are secondary errors all the same (cascade.cc).
  std::vector<std::int32_t> unranked_timeouts;
  // Printed (after ApplyOffsets: aligned) time of the earliest watchdog timeout (ranked or not)
  // that carries a time; nullopt when none does (torch <= 2.1's c10 lines under srun or pdsh): an
  // untimed wave says nothing about when it began, so nothing can be ordered against it.
  std::optional<TimeNs> start;
  std::int32_t peer_reporters = 0;  // ranks with a peer error (gloo, NCCL) but no watchdog timeout
  // gloo (no watchdog, no sequence numbers): ranks whose first peer error is a gloo timeout (a
  // peer alive but silent) or a closed / reset connection (a peer gone).
  std::int32_t gloo_timeouts = 0;
  std::int32_t gloo_closed = 0;
};

// What workers printed that no global rank could be given to.
struct UnrankedFacts {
  // Files holding workers' lines that no rank could be given to: a pod's `kubectl logs` (or a
  // torchrun --tee console) with `[default<L>]:` tags where no line names a rank (torch <= 2.4
  // prints no per-rank line at start; a worker that waited quietly prints none later). Their
  // workers logged, unnamed (at least one each): a rank placed on no node may be one of them,
  // so it is not known to be silent, and "every logged rank raised" counts them.
  std::int32_t worker_files = 0;
  // Errors a process raised itself (a traceback's ValueError) that carry no rank: on a console
  // the workers share with their agent, one of its workers raised it. Event indices.
  std::vector<std::int32_t> own_errors;
};

// What the scheduler (Slurm: srun, slurmstepd, slurmctld, the batch script) said about the job.
struct SchedulerFacts {
  // The scheduler's word that it ended the job (slurmctld, or slurmstepd with a reason).
  EventRef end;
  v1::FailureClass end_class = v1::FAILURE_CLASS_UNSPECIFIED;
  std::vector<std::int32_t> srun_reports;  // `srun: error: <host>: task…` lines, in file order
  // A torchrun agent's lines are in hand (sbatch + srun + torchrun): srun's tasks are the
  // agents, so its `task N: Exited with exit code 1` is agent N's exit, not rank N's.
  bool tasks_are_agents = false;
  // Those tasks' lines then (`srun: error: <host>: task 1: Killed`): each is an agent's end.
  std::vector<std::int32_t> agent_task_exits;
  // A requeued job (sbatch --requeue): the scheduler's word of it (slurmctld's requeue,
  // slurmstepd's `DUE TO JOB REQUEUE`), the first line of the next run in its output file (a
  // batch script's `SLURM_RESTART_COUNT=<n>`, n >= 1) and the highest restart count printed
  // (0 when not seen).
  EventRef requeue;
  EventRef next_run;
  // slurmstepd's `*** JOB N ON <node> CANCELLED AT <time> DUE TO JOB REQUEUE ***` (the first
  // one): the requeue ended the run there. With no node failure it is the scheduler's own
  // decision (`scontrol requeue`): then it is also `end`, class SCHEDULER_CANCEL, and `requeued`
  // is set (FinishRequeue in facts.cc).
  EventRef requeue_banner;
  bool requeued = false;
  std::int32_t restart_count = 0;
};

// How many ranks the job has: those heard from, and the world size the logs state.
struct WorldFacts {
  std::int32_t ranks_seen = 0;  // ranks with a log of their own
  // The world size the logs state (analyze/world_size.h; 0: none): `ranks` holds that many
  // ranks, the highest ones silent when their logs are missing.
  std::int32_t stated = 0;
  // What the report says about it: a conflict, a statement left unused, the ranks never heard from.
  std::vector<std::string> notes;
};

struct JobFacts {
  std::vector<RankFacts> ranks;  // by global rank: 0 .. world size - 1
  std::vector<NodeFacts> nodes;  // parallel to Incident::nodes
  WorldFacts world;
  WaveFacts wave;
  UnrankedFacts unranked;
  SchedulerFacts scheduler;
  // DeepSpeed see_memory_usage: the report of the fullest host memory (latest among equals).
  EventRef host_memory;

  // Watchdog timeouts tied to a rank: what the wait analysis can read.
  bool HasWave() const { return !wave.timeouts.empty(); }
  // A watchdog wave, whether or not its timeouts could be tied to a rank (a layout that lost the
  // file names the ranks' lines relied on keeps the timeouts, unranked): the ranks failed in
  // one, so an exit by SIGABRT is the watchdog's, and a launcher exit is ordered against it.
  bool WaveSeen() const { return !wave.timeouts.empty() || !wave.unranked_timeouts.empty(); }
  // The watchdog timeouts of the wave, ranked or not (event indices).
  std::vector<std::int32_t> WaveTimeouts() const {
    std::vector<std::int32_t> all = wave.timeouts;
    all.insert(all.end(), wave.unranked_timeouts.begin(), wave.unranked_timeouts.end());
    return all;
  }
  void EnsureRank(std::int32_t rank) {
    if (rank >= static_cast<std::int32_t>(ranks.size())) ranks.resize(rank + 1);
  }
};

JobFacts CollectFacts(const Incident& inc);

// An exception whose message says it ran out of memory (a failed pin of host memory, kPinMemory,
// is then PINNED_OOM: RankFacts::pinned_oom).
bool SaysOutOfMemory(const Incident& inc, const Event& e);

// An error a rank raised itself, as opposed to one it reported about its peers (a watchdog
// abort, a NCCL or gloo error after a peer died).
bool IsOwnError(const Incident& inc, const Event& e);
// An error a rank reported about its peers (it failed because another rank did): gloo's closed
// or timed-out pair, a NCCL error, the watchdog's abort of a collective.
bool IsPeerError(const Event& e);
// The stream a file's lines belong to: the live piece of a rotated log (`X.log` for `X.log.1`),
// else the file itself. A stream's events are in its order (ingest's OrderRotatedStreams).
std::uint32_t StreamOf(const Incident& inc, std::uint32_t file);
// Event `a` comes before event `b` in one stream: an earlier line of the same file, or a line
// of an older piece of the same rotated log.
bool BeforeInStream(const Incident& inc, std::int32_t a, std::int32_t b);

// Lines a borrowed stamp may come from and still stand for the event's time (AnchoredTime).
inline constexpr std::uint32_t kAnchorLines = 16;

// Whether event `i` has a time of its own: its line's stamp, or one it borrowed (Event::
// time_borrowed) from an anchor: the nearest earlier event of its file with a stamp of its own
// is that stamp's line (same time), lies at most kAnchorLines lines before it, belongs to the
// same stream (the same rank, or a file of one process: rank_<R>.log, a log dir's `<L>/`
// file, an agent's console) and is itself an error of that stream (the traceback's stamped
// first line, the agent's `failed` line), not routine output written minutes earlier. A
// borrowed time is only a lower bound (torch <= 2.3's c10 watchdog line after a pdsh console's
// launcher line, or after the rank's last iteration line 10 minutes before): unanchored, it is
// kept out of every earliest-time decision.
bool HasOwnTime(const Incident& inc, std::int32_t i);

// The earliest time_of(event) over the watchdog timeouts that have a time of their own
// (HasOwnTime); nullopt when none does. Untimed lines hold time 0.
template <class TimeOf>
std::optional<TimeNs> EarliestTimed(const Incident& inc, const std::vector<std::int32_t>& timeouts, TimeOf time_of) {
  std::optional<TimeNs> first;
  VisitEvents(inc, timeouts, [&](std::int32_t i) {
    if (!HasOwnTime(inc, i)) return;
    const TimeNs t = time_of(inc.events[i]);
    if (!first || t < *first) first = t;
  });
  return first;
}

// The class and owner a host-level event stands for when it names a rank's process (by pid, or
// by its task): the kernel OOM killer and Slurm's OOM notice -> host OOM, owner host. Add rows
// here (Xid, ...) to let more kernel evidence classify the initiator. False for other events.
bool HostCauseOf(const Event& e, v1::FailureClass* cls, v1::Owner* owner);

// Global ranks of an srun task list (`2,4-5,7`); empty when it does not parse.
std::vector<std::int32_t> ParseTaskList(std::string_view tasks);
// Exit code srun's status stands for: `Killed` -9, `Aborted` -6, `Exited` (its code), ...
std::int32_t SrunExitCode(std::string_view reason, std::int32_t exited_code);

// Exit codes as torchrun prints them (negative: killed by that signal).
inline constexpr std::int32_t kExitException = 1;  // Python's exit status after an uncaught exception
inline constexpr std::int32_t kExitSigabrt = -6;
inline constexpr std::int32_t kExitSigkill = -9;
inline constexpr std::int32_t kExitSigterm = -15;

}  // namespace denpex::engine
