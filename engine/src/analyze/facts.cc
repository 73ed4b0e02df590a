#include "analyze/facts.h"

#include <oneapi/tbb/parallel_sort.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "analyze/placement.h"
#include "ingest/identity.h"

namespace denpex::engine {

namespace {

// UnrankedFacts::worker_files.
std::int32_t UnnamedWorkerFiles(const Incident& inc) {
  const auto worker_file = [](const LogFile& f) {
    return f.readable && f.local_tags && f.prefix_ranks.empty() && f.own_rank < 0 &&
           !f.later_attempt && f.rotated_into < 0;
  };
  // The pass over the events only when some file may count.
  if (std::none_of(inc.files.begin(), inc.files.end(), worker_file)) return 0;
  std::vector<char> named(inc.files.size(), 0);
  for (const Event& e : inc.events) {
    if (e.rank >= 0) named[e.file] = 1;
  }
  std::int32_t n = 0;
  for (std::size_t i = 0; i < inc.files.size(); ++i)
    n += worker_file(inc.files[i]) && !named[i] ? 1 : 0;
  return n;
}

// The event is the last line of a file cut mid-line: its text stops short, so what it was
// (`what():  [PG ID 12` of a watchdog abort, `Exception` of `Exception raised from ...`) is
// not known.
bool CutShort(const Incident& inc, const Event& e) {
  const LogFile& f = inc.files[e.file];
  return f.cut && e.line == f.last_line.line;
}

}  // namespace

bool IsOwnError(const Incident& inc, const Event& e) {
  const auto* error = std::get_if<PythonError>(&e.detail);
  if (error == nullptr || error->chained || CutShort(inc, e)) return false;
  switch (e.family) {
    case Family::kPython: case Family::kCuda: case Family::kCudaOom: case Family::kFsdp: case Family::kHostOom:
    case Family::kDeepSpeed:
      return true;
    default:
      return false;
  }
}

namespace {

// `wrapper` is torch's ExceptionWrapper re-raising `e` in the main process: its message is
// `Caught <type> in DataLoader worker process N.` (or `in replica N on device D`), and `e`, the
// end of the `Original Traceback` that follows, is the error of that type.
bool Reraises(const Incident& inc, const Event& wrapper, const Event& e) {
  const std::string_view msg = inc.str(std::get<PythonError>(wrapper.detail).message);
  std::string_view type = inc.str(std::get<PythonError>(e.detail).type);
  if (const auto dot = type.rfind('.'); dot != std::string_view::npos) type.remove_prefix(dot + 1);
  return wrapper.file == e.file && e.line > wrapper.line && msg.starts_with("Caught ") &&
         msg.substr(7).starts_with(type) && msg.substr(7 + type.size()).starts_with(" in ");
}

std::int32_t NodeNamed(const Incident& inc, StrId host) { return host == kNoStr ? -1 : NodeOfHost(inc, inc.str(host)); }

// slurmctld's and srun's words about one node (reason as RecogniseSlurm interns it).
void CollectNodeFailure(std::int32_t index, std::string_view reason, NodeFacts* node) {
  if (reason == "RESPONDING") {
    if (!node->responding) node->responding = index;
    return;
  }
  if (!node->lost) node->lost = index;
  if (reason == "NOT RESPONDING" && !node->not_responding) node->not_responding = index;
  if (reason == "DOWN" && !node->down) node->down = index;
  if ((reason == "KILLED ON FAILED NODE" || reason == "REQUEUED") && !node->job_ended)
    node->job_ended = index;
  // pdsh's `ssh exited with exit code 255` after ssh's own word (a timeout, a closed session):
  // the launcher's session to the node is over.
  if (reason == "SSH FAILED" && node->lost != index && !node->job_ended) node->job_ended = index;
}

// The controller's own line (`Time limit exhausted for JobId=`, no host) is the decision;
// slurmstepd's `CANCELLED AT` (with its host) only relays it. Files are read in name order, so
// `slurm-<jobid>.out` comes before `slurmctld.log`: a later controller line takes the place.
bool ControllerOverStepd(const Incident& inc, const JobFacts& jf, const SlurmNote& n) {
  if (n.node != kNoStr) return false;
  const auto* held = std::get_if<SlurmNote>(&inc.events[*jf.scheduler.end].detail);
  return held != nullptr && held->node != kNoStr;
}

// Slurm: srun's word on each task's end (with the task's host), the controller's or stepd's
// word that the scheduler ended the job, and that a node failed.
void CollectSlurm(const Incident& inc, std::int32_t index, const SlurmNote& n, JobFacts* jf) {
  const Event& e = inc.events[index];
  const std::string_view reason = inc.str(n.reason);
  if (e.kind == Kind::kTaskExit || e.kind == Kind::kSlurmOom) {
    if (jf->scheduler.tasks_are_agents) {  // an agent's exit: its workers' own lines tell theirs
      jf->scheduler.agent_task_exits.push_back(index);
      return;
    }
    jf->scheduler.srun_reports.push_back(index);
    const std::int32_t node = NodeNamed(inc, n.node);
    for (std::int32_t r : ParseTaskList(inc.str(n.tasks))) {
      jf->EnsureRank(r);
      RankFacts& rf = jf->ranks[r];
      SetNode(&rf, node);
      if (rf.exit_event) continue;
      rf.exit_event = index;
      rf.exit_code = SrunExitCode(reason, n.exit_code);
      rf.exit_time = e.time;
      rf.torn_down = rf.exit_code == kExitSigterm;  // srun's teardown after another task ended
      if (!rf.host_cause && HostCauseOf(e, &rf.host_class, &rf.host_owner)) rf.host_cause = index;
    }
  } else if (e.kind == Kind::kNodeFailure || e.kind == Kind::kNodeResponding) {
    const std::int32_t node = NodeNamed(inc, n.node);
    if (node >= 0) CollectNodeFailure(index, reason, &jf->nodes[node]);
    if (reason == "REQUEUED" && !jf->scheduler.requeue) jf->scheduler.requeue = index;
  } else if (e.kind == Kind::kRequeue && n.exit_code > 0) {  // a later run's `SLURM_RESTART_COUNT=<n>`
    if (!jf->scheduler.next_run) jf->scheduler.next_run = index;
    jf->scheduler.restart_count = std::max(jf->scheduler.restart_count, n.exit_code);
  } else if (e.kind == Kind::kRequeue) {  // slurmctld's `Requeuing JobId=`
    if (!jf->scheduler.requeue) jf->scheduler.requeue = index;
  } else if (e.kind == Kind::kCancelled && reason == "JOB REQUEUE") {
    if (!jf->scheduler.requeue_banner) jf->scheduler.requeue_banner = index;
  } else if (e.kind == Kind::kCancelled &&
             (!jf->scheduler.end || ControllerOverStepd(inc, *jf, n))) {
    v1::FailureClass c = v1::FAILURE_CLASS_UNSPECIFIED;
    if (reason == "TIME LIMIT") c = v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT;
    if (reason == "PREEMPTION") c = v1::FAILURE_CLASS_SCHEDULER_PREEMPTION;
    if (reason == "CANCELLED" && n.node == kNoStr) c = v1::FAILURE_CLASS_SCHEDULER_CANCEL;  // slurmctld's kill RPC
    if (c == v1::FAILURE_CLASS_UNSPECIFIED) return;  // srun's own termination, or a node failure
    jf->scheduler.end = index;
    jf->scheduler.end_class = c;
  }
}

void CollectEvent(const Incident& inc, std::int32_t index, JobFacts* jf) {
  const Event& e = inc.events[index];
  const std::int32_t node = e.node;
  if (e.rank >= 0) jf->EnsureRank(e.rank);
  if (const auto* sn = std::get_if<SlurmNote>(&e.detail)) {
    CollectSlurm(inc, index, *sn, jf);
    return;
  }
  if (e.rank < 0 && IsOwnError(inc, e)) jf->unranked.own_errors.push_back(index);
  // A rank's own line that names its host (NCCL `host:pid:tid`, a pdsh prefix) places it; NCCL's
  // `host:pid:tid` also names its process. So does any line of a file that is one machine's by
  // its lines; an agent's console's workers' lines only as PlaceConsoleWorkers (placement.cc) says.
  if (e.rank >= 0 && e.node >= 0 && !inc.files[e.file].agent) SetNode(&jf->ranks[e.rank], e.node);
  if (e.rank >= 0 && !inc.files[e.file].agent && jf->ranks[e.rank].pid == 0) jf->ranks[e.rank].pid = NcclPid(e);
  if (std::holds_alternative<WatchdogTimeout>(e.detail) && e.rank >= 0) {
    jf->ranks[e.rank].timeouts += 1;
    jf->wave.timeouts.push_back(index);
  } else if (IsPeerError(e) && e.rank >= 0) {
    RankFacts& r = jf->ranks[e.rank];
    if (r.peer_error) return;
    r.peer_error = index;
    if (e.family == Family::kGloo)
      (e.kind == Kind::kGlooTimeout ? jf->wave.gloo_timeouts : jf->wave.gloo_closed) += 1;
  } else if (IsOwnError(inc, e) && e.rank >= 0) {
    RankFacts& r = jf->ranks[e.rank];
    if (!r.python_error) {
      r.python_error = index;
      // A direct pin's own CUDA error (its traceback ends in a pin_memory frame).
      if (e.kind == Kind::kPinMemory) r.pinned_oom = SaysOutOfMemory(inc, e);
    } else if (inc.events[*r.python_error].kind == Kind::kPinMemory) {
      r.pinned_oom = r.pinned_oom || SaysOutOfMemory(inc, e);
    } else if (!r.reraised && Reraises(inc, inc.events[*r.python_error], e)) {
      r.reraised = index;
    }
  } else if (const auto* hm = std::get_if<HostMemory>(&e.detail)) {
    const EventRef best = jf->host_memory;
    if (!best || hm->percent >= std::get<HostMemory>(inc.events[*best].detail).percent)
      jf->host_memory = index;
  } else if (e.kind == Kind::kProcessExit) {
    // `denpex run`'s word on the process it wraps: the rank's own exit, with a time.
    if (e.rank < 0) return;
    const auto& wf = std::get<WorkerFailed>(e.detail);
    RankFacts& r = jf->ranks[e.rank];
    if (wf.exit_code == 0 || r.exit_event) return;
    r.exit_event = index;
    r.exit_code = wf.exit_code;
    r.exit_time = e.time;
    if (r.pid == 0) r.pid = wf.pid;
  } else if (e.kind == Kind::kProcessSignalled) {
    if (e.rank >= 0) jf->ranks[e.rank].torn_down = true;  // stopped from outside (a teardown), not failed on its own
  } else if (const auto* fe = std::get_if<FailureEntry>(&e.detail)) {
    RankFacts& r = jf->ranks[e.rank];
    SetNode(&r, node >= 0 ? node : NodeOfHost(inc, inc.str(fe->host)));
    if (r.local_rank < 0) r.local_rank = fe->local_rank;
    if (r.pid == 0) r.pid = fe->pid;
    if (!r.table_entry || fe->root_cause) r.table_entry = index;
  } else if (std::holds_alternative<WorkerFailed>(e.detail) && node >= 0) {
    NodeFacts& n = jf->nodes[node];
    if (!n.first_failure) n.first_failure = index;
    n.reports.push_back(index);
  } else if (const auto* ws = std::get_if<WorkerSignalled>(&e.detail); ws && node >= 0 && e.family == Family::kTorchrun) {
    // `Unable to shutdown process P via 15, forcefully exitting via 9` follows the SIGTERM line
    // of the same worker: a second word about one teardown, the worker did not react to SIGTERM.
    const bool forced = inc.str(ws->signal) == "SIGKILL";
    (forced ? jf->nodes[node].forced_kills : jf->nodes[node].signalled) += 1;
    if (!forced) jf->nodes[node].sigterms.push_back(index);
  } else if (const auto* nl = std::get_if<NodeLayout>(&e.detail); nl && node >= 0 && jf->nodes[node].first_rank < 0) {
    jf->nodes[node].first_rank = nl->First();
    jf->nodes[node].local_procs = nl->local_procs;
    jf->nodes[node].agent_ranks = e.kind == Kind::kAgentRanks;
  } else if (e.kind == Kind::kExitBarrier && node >= 0 && !jf->nodes[node].exit_barrier) {
    jf->nodes[node].exit_barrier = index;
  }
}

// The node's rank at `local_rank`. Two agents under one host name (containers that all call
// themselves `host-0`) make one node with two ranks at each local rank: the worker's pid (the
// `failed` line's, its table entry's) tells them apart, and no match names none.
std::int32_t GlobalRankOf(const JobFacts& jf, const NodeFacts& n, std::int32_t local_rank, std::int64_t pid) {
  std::int32_t found = -1, same_local = 0;
  for (std::int32_t r : n.ranks) {
    if (jf.ranks[r].local_rank != local_rank) continue;
    if (++same_local == 1) found = r;
    if (pid != 0 && jf.ranks[r].pid == pid) return r;
  }
  return same_local == 1 ? found : -1;
}

// A worker that shares its agent's console (`torchrun ... > train.log 2>&1`) prints its traceback
// there unprefixed: no line gives it a rank. A gloo / NCCL error about a peer in that file,
// before the agent's word that a rank exited with an error code, may be that rank's own last
// word: it timed out waiting on a peer (a victim). Such a rank's exit is not known to be its own
// doing, so it is given that peer error (OwnExit then does not count it); every such rank of the
// file gets it, since the unprefixed lines do not say which one printed it.
void AttributeUnprefixedPeerErrors(const Incident& inc, JobFacts* jf) {
  for (RankFacts& r : jf->ranks) {
    if (!r.exit_event || r.exit_code <= 0 || r.python_error || r.peer_error || r.timeouts > 0)
      continue;
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
      const Event& e = inc.events[i];
      if (e.rank >= 0 || !IsPeerError(e) || !BeforeInStream(inc, i, *r.exit_event)) continue;
      r.peer_error = i;
      if (e.family == Family::kGloo)
        (e.kind == Kind::kGlooTimeout ? jf->wave.gloo_timeouts : jf->wave.gloo_closed) += 1;
      break;
    }
  }
}

// What the agents said about their workers: who exited first, with what code, and who was
// torn down after it. `entries`: the events of their failure tables, in event order.
void ApplyLauncherEvidence(const Incident& inc, const std::vector<std::int32_t>& entries,
                           JobFacts* jf) {
  for (const std::int32_t i : entries) {
    const Event& e = inc.events[i];
    const auto* fe = std::get_if<FailureEntry>(&e.detail);
    // an entry whose exit code is not said (a table cut before it, or a field read alone): torchrun
    // lists only workers that failed, but how is not known
    if (jf->ranks[e.rank].exit_event || fe->exit_code == 0) continue;
    RankFacts& r = jf->ranks[e.rank];
    r.exit_event = i;
    r.exit_code = fe->exit_code;
    r.exit_time = e.time;
  }
  for (NodeFacts& n : jf->nodes) {
    if (!n.first_failure && n.signalled > 0) {
      // The agent itself was told to stop (Kubernetes deleting the pod, a scancel) and SIGTERMed
      // its workers before any failed: each one with no word of its own was stopped from outside.
      for (std::int32_t r : n.ranks) {
        RankFacts& o = jf->ranks[r];
        o.torn_down |= !o.exit_event && o.timeouts == 0;
      }
    }
    if (!n.first_failure) continue;
    const Event& e = inc.events[*n.first_failure];
    const auto& wf = std::get<WorkerFailed>(e.detail);
    n.failed_rank = GlobalRankOf(*jf, n, wf.local_rank, wf.pid);
    if (n.failed_rank < 0) continue;
    RankFacts& r = jf->ranks[n.failed_rank];
    if (r.pid == 0) r.pid = wf.pid;
    if (!r.exit_event || inc.events[*r.exit_event].kind != Kind::kProcessExit) {
      r.exit_event = *n.first_failure;  // finer time than the table's one-second stamp
      r.exit_code = wf.exit_code;
      r.exit_time = e.time;
    }
    if (n.signalled == 0) continue;
    for (std::int32_t other : n.ranks) {
      RankFacts& o = jf->ranks[other];
      if (other != n.failed_rank && (!o.exit_event || o.exit_code == kExitSigterm))
        o.torn_down = true;
    }
  }
}

// Ray: the driver's `RayTaskError` names the worker whose training function raised by its
// (ip, pid), which the trainer's worker table maps to a rank: Ray's word on that rank's end, as
// torchrun's `failed (exitcode: 1)` is. After the driver's first failure (that, or an
// ActorDiedError) it shuts the worker group down: a worker with no word of its own was stopped
// from outside, like one its torchrun agent SIGTERMed.
void ApplyRayDriver(const Incident& inc, JobFacts* jf) {
  std::map<std::pair<std::int32_t, std::int64_t>, std::int32_t> table;  // (node, pid) -> rank
  std::int32_t failure = -1;
  const std::vector<std::int32_t> ray =
      inc.OfKinds({Kind::kRayWorker, Kind::kRayTaskError, Kind::kActorDied});
  for (const std::int32_t i : ray) {
    const Event& e = inc.events[i];
    const auto* w = std::get_if<WorkerSignalled>(&e.detail);
    if (e.kind == Kind::kRayWorker && w && e.rank >= 0) table[{e.node, w->pid}] = e.rank;
    if ((e.kind == Kind::kRayTaskError || e.kind == Kind::kActorDied) && failure < 0) failure = i;
  }
  if (failure < 0) return;
  for (const std::int32_t i : ray) {
    const Event& e = inc.events[i];
    if (i < failure || e.kind != Kind::kRayTaskError) continue;
    const auto it = table.find({e.node, std::get<WorkerSignalled>(e.detail).pid});
    if (it == table.end() || it->second >= static_cast<std::int32_t>(jf->ranks.size())) continue;
    RankFacts& r = jf->ranks[it->second];
    if (r.exit_event) continue;
    r.exit_event = i;
    r.exit_code = kExitException;
    r.exit_time = e.time;
    r.pid = std::get<WorkerSignalled>(e.detail).pid;
  }
  for (RankFacts& r : jf->ranks) r.torn_down |= !r.exit_event && r.timeouts == 0 && !r.python_error;
}

std::int64_t SignalledPid(const Incident& inc, std::int32_t event) {
  return std::get<WorkerSignalled>(inc.events[event].detail).pid;
}

void MarkSignalled(const Incident& inc, std::int32_t rank, std::int32_t event, JobFacts* jf) {
  RankFacts& r = jf->ranks[rank];
  if (r.signalled) return;
  r.signalled = event;
  r.pid = SignalledPid(inc, event);
}

// Maps `lines` (SIGTERM events in file order) onto `ranks` (sorted by local rank) one to one in
// order, when there are as many of each and no rank's known pid says otherwise.
void MapInOrder(const Incident& inc, const std::vector<std::int32_t>& lines, const std::vector<std::int32_t>& ranks,
                JobFacts* jf) {
  if (lines.empty() || lines.size() != ranks.size()) return;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankFacts& rf = jf->ranks[ranks[i]];
    if (rf.local_rank < 0 || (i > 0 && jf->ranks[ranks[i - 1]].local_rank >= rf.local_rank)) return;
    if (rf.signalled || (rf.pid != 0 && rf.pid != SignalledPid(inc, lines[i]))) return;
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) MarkSignalled(inc, ranks[i], lines[i], jf);
}

// When the table is lost (a truncated agent log), workers of known pid still split the lines:
// torchrun spawns its workers in local-rank order, so their pids rise with the local rank, and
// the lines between two known pids are the workers between their local ranks (when as many).
void MapBetweenKnownPids(const Incident& inc, const NodeFacts& n, const std::vector<std::int32_t>& lines,
                         const std::vector<std::int32_t>& running, JobFacts* jf) {
  std::vector<std::pair<std::int32_t, std::int64_t>> known = {{-1, 0}};  // (local rank, pid), sentinels at both ends
  for (std::int32_t r : n.ranks) {
    if (jf->ranks[r].pid > 0 && jf->ranks[r].local_rank >= 0) known.emplace_back(jf->ranks[r].local_rank, jf->ranks[r].pid);
  }
  std::sort(known.begin(), known.end());
  known.emplace_back(std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int64_t>::max());
  for (std::size_t k = 1; k < known.size(); ++k) {
    if (known[k].second <= known[k - 1].second) return;  // pids do not rise with the local rank
  }
  // Segment k lies strictly between known[k - 1] and known[k], in pid and in local rank: each line
  // and rank found in it by a search (a console of many agents holds thousands of each).
  const auto segment = [&](auto value, auto key) {
    const auto it = std::lower_bound(known.begin(), known.end(), value,
                                     [&](const auto& p, auto v) { return key(p) < v; });
    const auto k = static_cast<std::size_t>(it - known.begin());
    return k > 0 && k < known.size() && key(known[k - 1]) < value && value < key(*it) ? k : 0;
  };
  std::vector<std::vector<std::int32_t>> segment_lines(known.size()), segment_ranks(known.size());
  for (std::int32_t i : lines) {
    segment_lines[segment(SignalledPid(inc, i), [](const auto& p) { return p.second; })].push_back(
        i);
  }
  for (std::int32_t r : running) {
    segment_ranks[segment(jf->ranks[r].local_rank, [](const auto& p) { return p.first; })]
        .push_back(r);
  }
  for (std::size_t k = 1; k < known.size(); ++k)
    MapInOrder(inc, segment_lines[k], segment_ranks[k], jf);
}

// Which worker each `Sending process <pid> closing signal SIGTERM` of an agent names. A pid the
// worker's own lines or the agent's table gave ties it directly. Otherwise torchrun's order does:
// its agent SIGTERMs the workers still running in local-rank order (torch's SubprocessContext
// walks them by local rank), and those not running are the ones its ChildFailedError table (or
// its `failed` line) names; the order is used when the node's ranks are exactly its SIGTERM
// lines plus those, else between workers of known pid (MapBetweenKnownPids).
void MapSignalledPids(const Incident& inc, JobFacts* jf) {
  for (NodeFacts& n : jf->nodes) {
    if (n.sigterms.empty()) continue;
    std::vector<std::int32_t> lines = n.sigterms;
    std::sort(lines.begin(), lines.end(), [&](std::int32_t x, std::int32_t y) {
      return std::tie(inc.events[x].file, inc.events[x].line) < std::tie(inc.events[y].file, inc.events[y].line);
    });
    // A line's worker by its pid: the node's ranks of known pid in a pid index (a console of many
    // agents: 16 k lines and ranks on one node, not 16 k × 16 k comparisons).
    std::vector<std::pair<std::int64_t, std::int32_t>> by_pid;  // within a pid, in n.ranks' order
    for (std::int32_t r : n.ranks) {
      if (jf->ranks[r].pid > 0) by_pid.emplace_back(jf->ranks[r].pid, r);
    }
    std::stable_sort(by_pid.begin(), by_pid.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::int32_t i : lines) {
      const std::int64_t pid = SignalledPid(inc, i);
      auto it = std::lower_bound(by_pid.begin(), by_pid.end(), pid,
                                 [](const auto& p, std::int64_t v) { return p.first < v; });
      for (; pid > 0 && it != by_pid.end() && it->first == pid; ++it)
        MarkSignalled(inc, it->second, i, jf);
    }
    std::vector<std::int32_t> running;  // its ranks neither its table nor its `failed` line names, by local rank
    for (std::int32_t r : n.ranks) {
      if (!jf->ranks[r].table_entry && r != n.failed_rank) running.push_back(r);
    }
    std::sort(running.begin(), running.end(),
              [&](std::int32_t x, std::int32_t y) { return jf->ranks[x].local_rank < jf->ranks[y].local_rank; });
    if (lines.size() == running.size()) {
      MapInOrder(inc, lines, running, jf);
    } else {
      MapBetweenKnownPids(inc, n, lines, running, jf);
    }
  }
}

// An agent log whose `failed` line is missing still counts one report per table (`entries` as
// ApplyLauncherEvidence's).
void CountTableOnlyReports(const Incident& inc, const std::vector<std::int32_t>& entries,
                           JobFacts* jf) {
  for (const std::int32_t i : entries) {
    const Event& e = inc.events[i];
    const auto* fe = std::get_if<FailureEntry>(&e.detail);
    const std::int32_t node = e.node;
    if (fe->root_cause && node >= 0 && !jf->nodes[node].first_failure) {
      jf->nodes[node].reports.push_back(i);
    }
  }
}

// Kernel evidence about a process (the OOM killer's `Killed process P`) explains the death of
// the rank whose agent named that pid, on the node whose kernel log printed it. A kill of a pid
// no line of the job names is of an unknown process (a shared node runs others: analyze/
// scope.h): alone it explains no rank's death, but it corroborates the one rank of that node
// killed by SIGKILL whose pid is unknown when srun already said that task ran out of memory
// (`task N: Out Of Memory`). A kill with no pid explains the one rank of that node killed by
// SIGKILL, when there is exactly one.
// The one rank of the job whose pid is `pid`; -1 when none or several (pids repeat across nodes).
std::int32_t OnlyRankWithPid(const JobFacts& jf, std::int64_t pid) {
  if (pid <= 0) return -1;
  std::int32_t found = -1;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(jf.ranks.size()); ++r) {
    if (jf.ranks[r].pid != pid) continue;
    if (found >= 0) return -1;
    found = r;
  }
  return found;
}

// Whether a rank's node may be the host `node` names: its node is that one, or an agent's
// console that names no host (`the node of <file>`, which may be any host).
bool MayBeOn(const Incident& inc, const RankFacts& rf, std::int32_t node) {
  return rf.node == node || (rf.node >= 0 && NodeHost(inc.nodes[static_cast<std::size_t>(rf.node)]).empty());
}

void ApplyHostEvidence(const Incident& inc, JobFacts* jf) {
  for (const std::int32_t i :
       inc.OfKinds({Kind::kOomKill, Kind::kSlurmOom})) {  // HostCauseOf's kinds
    const Event& e = inc.events[i];
    v1::FailureClass cls;
    v1::Owner owner;
    const auto* kill = std::get_if<OomKill>(&e.detail);
    // A bare `dmesg` names no host: in a job of one node it is that node's, and then only its
    // pid, on a rank killed by SIGKILL, ties it to a rank. Where no line names any node (a
    // console merged with the kernel's lines, `host : localhost`), the ranks no node holds are
    // the ones it may speak of, on the same terms.
    const bool hostless = e.node < 0 && jf->nodes.size() <= 1;
    const std::int32_t node = hostless ? 0 : e.node;
    if (!kill || !HostCauseOf(e, &cls, &owner)) continue;
    if (node < 0) {
      // A bare `dmesg` of a job of several nodes, in a file placed on none (a merged or flat
      // collection): only its pid ties it, to the one rank of the job with that pid, killed by
      // SIGKILL.
      const std::int32_t r = OnlyRankWithPid(*jf, kill->pid);
      if (r < 0 || jf->ranks[r].exit_code != kExitSigkill || jf->ranks[r].torn_down ||
          jf->ranks[r].host_cause)
        continue;
      jf->ranks[r].host_cause = i;
      jf->ranks[r].host_class = cls;
      jf->ranks[r].host_owner = owner;
      continue;
    }
    std::vector<std::int32_t> unplaced;  // with no node known at all: every rank
    if (jf->nodes.empty()) {
      for (std::int32_t r = 0; r < static_cast<std::int32_t>(jf->ranks.size()); ++r) unplaced.push_back(r);
    }
    std::int32_t match = -1, killed = -1, killed_count = 0;
    for (std::int32_t r : jf->nodes.empty() ? unplaced : jf->nodes[node].ranks) {
      const RankFacts& rf = jf->ranks[r];
      if (kill->pid > 0 && rf.pid == kill->pid) match = r;
      if (rf.exit_event && rf.exit_code == kExitSigkill && !rf.torn_down) {
        killed = r;
        ++killed_count;
      }
    }
    const bool srun_oom = killed_count == 1 && jf->ranks[killed].pid == 0 &&
                          jf->ranks[killed].host_cause &&
                          inc.events[*jf->ranks[killed].host_cause].kind == Kind::kSlurmOom;
    if (match < 0 && killed_count == 1 && (kill->pid <= 0 || srun_oom) && !hostless) match = killed;
    if (hostless && match >= 0 && jf->ranks[match].exit_code != kExitSigkill) match = -1;
    // A kernel log placed on a named host (a journal's `<host> kernel:` lines) and an agent's
    // console that names none (`host : localhost`): the pid ties the kill to the one rank of the
    // job with it, killed by SIGKILL, when that rank's console may be on that host.
    if (const std::int32_t r = OnlyRankWithPid(*jf, kill->pid);
        match < 0 && r >= 0 && MayBeOn(inc, jf->ranks[r], node) && jf->ranks[r].exit_code == kExitSigkill && !jf->ranks[r].torn_down) {
      match = r;
    }
    // The kernel's line says more than srun's `Out Of Memory` (which pid, how much memory): it
    // takes that one's place; srun's line stays cited as the rank's exit.
    if (match < 0) continue;
    const EventRef had = jf->ranks[match].host_cause;
    if (had && inc.events[*had].kind != Kind::kSlurmOom) continue;
    RankFacts& rf = jf->ranks[match];
    rf.host_cause = i;
    rf.host_class = cls;
    rf.host_owner = owner;
  }
}

}  // namespace

bool HostCauseOf(const Event& e, v1::FailureClass* cls, v1::Owner* owner) {
  struct Row {
    Kind kind;
    v1::FailureClass cls;
    v1::Owner owner;
  };
  static constexpr Row kRows[] = {
      {Kind::kOomKill, v1::FAILURE_CLASS_HOST_OOM, v1::OWNER_HOST},   // kernel: `Killed process P (comm)`
      {Kind::kSlurmOom, v1::FAILURE_CLASS_HOST_OOM, v1::OWNER_HOST},  // srun: `task N: Out Of Memory`
  };
  for (const Row& row : kRows) {
    if (row.kind != e.kind) continue;
    *cls = row.cls;
    *owner = row.owner;
    return true;
  }
  return false;
}

std::vector<std::int32_t> ParseTaskList(std::string_view tasks) {
  std::vector<std::int32_t> out;
  std::int64_t lo = -1, cur = -1;
  auto flush = [&] {
    if (cur < 0) return;
    for (std::int64_t r = lo < 0 ? cur : lo; r <= cur && r <= kMaxRank && out.size() <= kMaxRank; ++r) {
      out.push_back(static_cast<std::int32_t>(r));
    }
    lo = cur = -1;
  };
  for (char c : tasks) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > kMaxRank) return {};
    } else if (c == '-' && cur >= 0) {
      lo = cur;
      cur = -1;
    } else if (c == ',') {
      flush();
    } else {
      return {};
    }
  }
  flush();
  return out;
}

std::int32_t SrunExitCode(std::string_view reason, std::int32_t exited_code) {
  if (reason == "Exited") return exited_code;
  if (reason == "Killed" || reason == "Out Of Memory") return kExitSigkill;
  if (reason == "Aborted") return kExitSigabrt;
  if (reason == "Terminated") return kExitSigterm;
  if (reason == "Segmentation fault") return -11;
  if (reason == "Bus error") return -7;
  return -1;
}

namespace {

// `RuntimeError: Error building extension 'cpu_adam'` -> "cpu_adam"; empty for other messages.
std::string_view FailedExtension(std::string_view msg) {
  constexpr std::string_view kBuild = "Error building extension '";
  const std::size_t at = msg.find(kBuild);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = msg.substr(at + kBuild.size());
  return rest.substr(0, rest.find('\''));
}

// torch.utils.cpp_extension builds an op once per build directory: one process takes the
// directory's lock (FileBaton) and runs ninja, the node's other processes wait and then import
// the built .so. When the build fails, each waiter raises `ImportError: <dir>/<op>/<op>.so:
// cannot open shared object file`: a consequence of the builder's `Error building extension
// '<op>'` on the same node, whatever the order their exits were observed in.
void MarkBuildWaiters(const Incident& inc, JobFacts* jf) {
  auto message = [&](std::int32_t event) { return inc.str(std::get<PythonError>(inc.events[event].detail).message); };
  for (std::int32_t builder = 0; builder < static_cast<std::int32_t>(jf->ranks.size()); ++builder) {
    const RankFacts& b = jf->ranks[builder];
    if (!b.python_error || b.node < 0) continue;
    const std::string_view op = FailedExtension(message(*b.python_error));
    if (op.empty()) continue;
    std::string so(1, '/');  // "/<op>.so: cannot open shared object file"
    so.append(op).append(".so: cannot open shared object file");
    for (std::int32_t other : jf->nodes[b.node].ranks) {
      RankFacts& w = jf->ranks[other];
      if (other == builder || !w.python_error || w.waited_on >= 0) continue;
      if (message(*w.python_error).find(so) == std::string_view::npos) continue;
      w.waited_on = builder;
      w.peer_error = w.python_error;
      w.python_error.reset();
    }
  }
}

}  // namespace

std::uint32_t StreamOf(const Incident& inc, std::uint32_t file) {
  const std::int32_t live = inc.files[file].rotated_into;
  return live >= 0 ? static_cast<std::uint32_t>(live) : file;
}

bool BeforeInStream(const Incident& inc, std::int32_t a, std::int32_t b) {
  const Event& x = inc.events[a];
  const Event& y = inc.events[b];
  if (x.file == y.file) return x.line < y.line;
  return StreamOf(inc, x.file) == StreamOf(inc, y.file) && a < b;  // a stream's pieces: in its order
}

bool SaysOutOfMemory(const Incident& inc, const Event& e) {
  const auto* error = std::get_if<PythonError>(&e.detail);
  return error != nullptr &&
         inc.str(error->message).find("out of memory") != std::string_view::npos;
}

bool IsPeerError(const Event& e) {
  return e.family == Family::kGloo || e.kind == Kind::kNcclError || e.kind == Kind::kWatchdogTerminated ||
         e.kind == Kind::kSocketError || e.kind == Kind::kIbCompletionError;
}

bool HasOwnTime(const Incident& inc, std::int32_t i) {
  const Event& e = inc.events[i];
  if (e.clock == Clock::kNone) return false;
  if (!e.time_borrowed) return true;
  const LogFile& f = inc.files[e.file];
  const bool one_stream = f.own_rank >= 0 || f.local_rank >= 0 || f.agent;
  for (std::int32_t j = i - 1; j >= 0; --j) {
    const Event& p = inc.events[j];
    if (p.file != e.file || p.line + kAnchorLines < e.line) return false;
    if (p.clock == Clock::kNone || p.time_borrowed) continue;
    const bool same_stream = one_stream || (e.rank >= 0 && p.rank == e.rank);
    return same_stream && p.time == e.time && p.signature != kNoStr;
  }
  return false;
}

// A requeue banner with no node failure anywhere in the logs (`scontrol requeue`, not Slurm's
// requeue of a job whose node failed): the scheduler ended the run, as a cancel does. Whether a
// rank failed before it is the strategy's to judge (SchedulerEndedJob).
// The class is a cancel only where slurmctld's log is in hand (its `Requeuing JobId=` line): a
// preemption in PreemptMode=REQUEUE prints the same banner, and the controller's own
// `preempted JobId=` line, read first, would have made it a preemption. The banner alone leaves
// the class open.
void FinishRequeue(JobFacts* jf) {
  if (!jf->scheduler.requeue_banner) return;
  const bool controller = jf->scheduler.requeue.has_value();
  if (!jf->scheduler.requeue) jf->scheduler.requeue = jf->scheduler.requeue_banner;
  const bool node_failed = std::any_of(jf->nodes.begin(), jf->nodes.end(),
                                       [](const NodeFacts& n) { return n.lost.has_value(); });
  if (node_failed || jf->scheduler.end) return;
  jf->scheduler.end = jf->scheduler.requeue_banner;
  jf->scheduler.end_class =
      controller ? v1::FAILURE_CLASS_SCHEDULER_CANCEL : v1::FAILURE_CLASS_UNSPECIFIED;
  jf->scheduler.requeued = true;
}

namespace {

// The ranks of a big job's events come in no order: CollectFacts has the facts of the rank of
// the event this many ahead fetched into the cache while it reads the current one (a 131k-rank
// job's RankFacts are 17 MB; a cache miss per event was most of its pass, ~20 ms).
constexpr std::int32_t kPrefetchAhead = 16;

void PrefetchRank(const JobFacts& jf, std::int32_t rank) {
  if (rank < 0 || rank >= static_cast<std::int32_t>(jf.ranks.size())) return;
  const auto* first = reinterpret_cast<const char*>(jf.ranks.data() + rank);
  __builtin_prefetch(first);
  __builtin_prefetch(first + sizeof(RankFacts) - 1);  // it may span two cache lines
}

}  // namespace

JobFacts CollectFacts(const Incident& inc) {
  JobFacts jf;
  jf.nodes.resize(inc.nodes.size());
  jf.unranked.worker_files = UnnamedWorkerFiles(inc);
  jf.scheduler.tasks_are_agents =
      std::any_of(inc.files.begin(), inc.files.end(), [](const LogFile& f) { return f.agent; });
  PlaceRanksByFiles(inc, &jf);
  std::vector<std::int32_t> table_entries;  // the agents' failure tables' events
  const auto events = static_cast<std::int32_t>(inc.events.size());
  for (std::int32_t i = 0; i < events; ++i) {
    if (i + kPrefetchAhead < events) PrefetchRank(jf, inc.events[i + kPrefetchAhead].rank);
    CollectEvent(inc, i, &jf);
    const Event& e = inc.events[i];
    if (e.rank < 0 && std::holds_alternative<WatchdogTimeout>(e.detail))
      jf.wave.unranked_timeouts.push_back(i);
    if (std::holds_alternative<FailureEntry>(e.detail)) table_entries.push_back(i);
  }
  PlaceRanksByLayout(inc, &jf);
  MarkBuildWaiters(inc, &jf);
  ApplyLauncherEvidence(inc, table_entries, &jf);
  AttributeUnprefixedPeerErrors(inc, &jf);
  ApplyRayDriver(inc, &jf);
  MapSignalledPids(inc, &jf);
  ApplyHostEvidence(inc, &jf);
  CountTableOnlyReports(inc, table_entries, &jf);
  FinishRequeue(&jf);

  {  // by (time, rank, index): the keys read once, not per comparison (150 k timeouts at 131k
     // ranks)
    std::vector<std::tuple<TimeNs, std::int32_t, std::int32_t>> keys;
    keys.reserve(jf.wave.timeouts.size());
    for (std::int32_t i : jf.wave.timeouts)
      keys.emplace_back(inc.events[i].time, inc.events[i].rank, i);
    tbb::parallel_sort(keys.begin(), keys.end());  // no two keys equal: one order
    for (std::size_t k = 0; k < keys.size(); ++k) jf.wave.timeouts[k] = std::get<2>(keys[k]);
  }
  for (std::int32_t i : jf.wave.timeouts) {
    RankFacts& r = jf.ranks[inc.events[i].rank];
    if (!r.first_timeout) r.first_timeout = i;
  }
  // An error a rank printed after its own watchdog timeout, in the same stream, is the watchdog's
  // teardown (a cut `Exception raised from checkTimeout` reads as a bare `Exception`) or the main
  // thread's error once its collective failed: the rank was waiting on a peer, so it is not the
  // rank's own failure.
  for (RankFacts& r : jf.ranks) {
    if (r.python_error && r.first_timeout && BeforeInStream(inc, *r.first_timeout, *r.python_error))
      r.python_error.reset();
  }
  jf.wave.start = EarliestTimed(inc, jf.WaveTimeouts(), [](const Event& e) { return e.time; });
  {  // srun's one line names the exit of many tasks: looked at once for each run of them
    EventRef looked;
    bool timed = false;
    for (RankFacts& r : jf.ranks) {
      if (r.exit_event && r.exit_event != looked) {
        looked = r.exit_event;
        timed = HasOwnTime(inc, *looked);
      }
      r.exit_timed = r.exit_event && timed;
    }
  }
  for (const RankFacts& r : jf.ranks) {
    jf.world.ranks_seen += r.has_log ? 1 : 0;
    jf.wave.peer_reporters += r.peer_error && r.timeouts == 0 ? 1 : 0;
  }
  return jf;
}

}  // namespace denpex::engine
