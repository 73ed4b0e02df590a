#include "analyze/platform.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/job_end.h"
#include "analyze/order.h"
#include "analyze/scoring.h"

namespace denpex::engine {
namespace {

// What Kubernetes said about one node (its pod).
struct PodWord {
  std::int32_t evicted = -1;     // `Warning Evicted pod/<pod> The node was low on resource: ...`
  std::int32_t pod_status = -1;  // describe: `Reason: Evicted` (pod) or `Reason: OOMKilled` (container)
  std::int32_t oom_killed = -1;  // describe `Reason: OOMKilled`, or node-problem-detector's `OOMKilling`
  std::int32_t oom_event = -1;   // the `OOMKilling` row
  std::int32_t not_ready = -1;   // `NodeNotReady node/<node> ... status is now: NodeNotReady`
  std::int32_t signalled = -1;   // torchrun: `Received Signals.SIGTERM death signal, shutting down workers`
};

std::vector<PodWord> CollectPodWords(const Incident& inc) {
  std::vector<PodWord> w(inc.nodes.size());
  for (const std::int32_t i : inc.OfKinds(
           {Kind::kAgentSignalled, Kind::kEvicted, Kind::kOomKilled, Kind::kNodeNotReady})) {
    const Event& e = inc.events[i];
    if (e.node < 0 || e.node >= static_cast<std::int32_t>(w.size())) continue;
    PodWord& p = w[e.node];
    auto first = [&](std::int32_t* slot) {
      if (*slot < 0) *slot = i;
    };
    if (e.family == Family::kTorchrun && e.kind == Kind::kAgentSignalled) first(&p.signalled);
    if (e.family != Family::kKubernetes) continue;
    // An event row (`Warning Evicted pod/<pod> ...`) or a pod's status: describe's `Reason:` line,
    // or the eviction message alone (describe's `Message:` line, a jsonpath of `.status.message`).
    const std::string_view text = inc.str(std::get<Note>(e.detail).text);
    const bool row = text.find(' ') != std::string_view::npos && !text.starts_with("Reason:") &&
                     !text.starts_with("reason: ") && !text.starts_with("The node was low on resource: ");
    switch (e.kind) {
      case Kind::kEvicted:
        first(row ? &p.evicted : &p.pod_status);
        break;
      case Kind::kOomKilled:
        first(&p.oom_killed);
        if (row) {
          first(&p.oom_event);
        } else {
          first(&p.pod_status);
        }
        break;
      case Kind::kNodeNotReady:
        if (inc.str(std::get<Note>(e.detail).text).find(" node/") != std::string_view::npos) first(&p.not_ready);
        break;
      default:
        break;
    }
  }
  return w;
}

// The one node with the word, or -1 (none, or several: not this rule).
template <typename Pick>
std::int32_t OnlyNode(const std::vector<PodWord>& w, Pick pick) {
  std::int32_t found = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(w.size()); ++n) {
    if (pick(w[n]) < 0) continue;
    if (found >= 0) return -1;
    found = n;
  }
  return found;
}

void PodLogEnd(const Incident& inc, std::int32_t node, v1::EvidenceRole role, Finding* f) {
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {
    const LogFile& file = inc.files[i];
    if (file.node == node && file.agent && file.last_line.line > 0) f->lines.push_back({i, file.last_line, role});
  }
}

// A node-level answer, in place of anything a check before wrote: `node`, the class and owner.
void NodeLevel(const Incident& inc, const JobFacts& facts, std::int32_t node,
               v1::FailureClass failure_class, v1::Owner owner, Finding* f) {
  Commit({.node = node, .failure_class = failure_class, .owner = owner, .confidence = 0.9}, f);
  f->evidence.clear();
  f->lines.clear();
  f->recovery.clear();
  const std::vector<std::int32_t> ranks = node < static_cast<std::int32_t>(facts.nodes.size()) ? facts.nodes[node].ranks
                                                                                                 : std::vector<std::int32_t>{};
  f->cascade = SummarizeCascade(inc, facts, ranks, node);
}

void Evicted(const Incident& inc, const JobFacts& facts, std::int32_t node, const PodWord& p, Finding* f) {
  NodeLevel(inc, facts, node, v1::FAILURE_CLASS_SCHEDULER_EVICTION, v1::OWNER_SCHEDULER, f);
  const std::string name = NodeName(inc, node);
  const Event& e = inc.events[p.evicted >= 0 ? p.evicted : p.pod_status];
  if (e.clock != Clock::kNone) f->time = e.time;
  f->evidence.push_back({p.evicted >= 0 ? p.evicted : p.pod_status, v1::EVIDENCE_ROLE_INITIATING});
  if (p.evicted >= 0 && p.pod_status >= 0) f->evidence.push_back({p.pod_status, v1::EVIDENCE_ROLE_CORROBORATING});
  if (p.signalled >= 0) f->evidence.push_back({p.signalled, v1::EVIDENCE_ROLE_CORROBORATING});
  f->reason =
      Say(ReasonId::kPodEvicted, {{"node", name},
                                  {"where", Where(inc, e)},
                                  {"stopped", std::to_string(f->cascade.secondary_ranks.size())}});
  f->recovery.push_back({"resubmit", name, Say(ReasonId::kFindMemoryUser, {{"node", name}})});
}

void OomKilled(const Incident& inc, const JobFacts& facts, std::int32_t node, const PodWord& p, Finding* f) {
  NodeLevel(inc, facts, node, v1::FAILURE_CLASS_HOST_OOM, v1::OWNER_HOST, f);
  const std::string name = NodeName(inc, node);
  const std::int32_t init = p.pod_status >= 0 ? p.pod_status : p.oom_killed;
  if (inc.events[init].clock != Clock::kNone) f->time = inc.events[init].time;
  f->evidence.push_back({init, v1::EVIDENCE_ROLE_INITIATING});
  if (p.oom_event >= 0 && p.oom_event != init) f->evidence.push_back({p.oom_event, v1::EVIDENCE_ROLE_CORROBORATING});
  PodLogEnd(inc, node, v1::EVIDENCE_ROLE_CORROBORATING, f);
  f->reason = Say(ReasonId::kPodOomKilled,
                  {{"node", name},
                   {"where", Where(inc, inc.events[init])},
                   {"stopped", std::to_string(f->cascade.secondary_ranks.size())}});
  f->recovery.push_back({"reduce_host_memory", name, Say(ReasonId::kLowerPodMemory)});
}

// Ray: the driver's first ActorDiedError, its fields (`pid:`, `ip:`) and its cause line, which
// follow it within a few lines of the same file.
struct ActorDeath {
  std::int32_t error = -1, cause = -1, node = -1, rank = -1;
  std::int64_t pid = 0;
};

// The node a Ray line names as the object it speaks of (the actor's `ip=`, the GCS's dead node's
// address), else its file's: in a file of many nodes' lines (the driver's log merged with the
// others) the file's node is not the actor's.
std::int32_t NamedNode(const Incident& inc, const Event& e) {
  if (e.host == kNoStr) return e.node;
  const std::string_view host = inc.str(e.host);
  const auto it = std::lower_bound(inc.nodes.begin(), inc.nodes.end(), host);
  return it != inc.nodes.end() && *it == host ? static_cast<std::int32_t>(it - inc.nodes.begin()) : e.node;
}

std::optional<ActorDeath> FirstActorDeath(const Incident& inc) {
  constexpr std::uint32_t kBlockLines = 12;
  ActorDeath d;
  const std::vector<std::int32_t> died = inc.OfKinds({Kind::kActorDied});
  if (died.empty()) return std::nullopt;
  d.error = died.front();
  const Event& head = inc.events[d.error];
  for (auto i = d.error + 1; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.file != head.file || e.line <= head.line) continue;
    if (e.line > head.line + kBlockLines) break;
    if (e.kind == Kind::kActorField) {
      if (const auto* w = std::get_if<WorkerSignalled>(&e.detail)) d.pid = w->pid;
      if (e.host != kNoStr) d.node = NamedNode(inc, e);
    } else if (e.kind == Kind::kActorCause && d.cause < 0) {
      d.cause = i;
      if (d.node < 0 && e.host != kNoStr) d.node = NamedNode(inc, e);
    }
  }
  // The trainer's worker table maps the actor's (node, pid) to its world rank.
  for (const std::int32_t i : inc.OfKinds({Kind::kRayWorker})) {
    const Event& e = inc.events[i];
    const auto* w = std::get_if<WorkerSignalled>(&e.detail);
    if (w && w->pid == d.pid && NamedNode(inc, e) == d.node && e.rank >= 0) d.rank = e.rank;
  }
  return d;
}

std::int32_t FirstOnNode(const Incident& inc, Kind kind, std::int32_t node) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    if (inc.events[i].kind == kind && NamedNode(inc, inc.events[i]) == node) return i;
  }
  return -1;
}

bool RayEndedJob(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::optional<ActorDeath> d = FirstActorDeath(inc);
  if (!d || d->node < 0) return false;
  // The actor's process ended in its own watchdog's abort (it timed out first): a victim of a
  // stalled peer, which the watchdog reports find.
  if (d->rank >= 0 && d->rank < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[d->rank].timeouts > 0) return false;
  const std::string_view cause = d->cause >= 0 ? inc.str(std::get<Note>(inc.events[d->cause].detail).text) : "";
  const std::string name = NodeName(inc, d->node);
  const Event& died = inc.events[d->error];
  if (cause.starts_with("The actor died because its node has died")) {
    JobFacts with = facts;
    with.nodes[d->node].lost = EventRefOf(FirstOnNode(inc, Kind::kRayNodeDead, d->node));
    DiagnoseNodeLoss(inc, with, d->node, f);
    f->evidence.push_back({d->error, v1::EVIDENCE_ROLE_CORROBORATING});
    f->reason = Say(ReasonId::kRayNodeDead, {{"node", name}});
    if (with.nodes[d->node].lost)
      f->reason.Add(ReasonId::kCitedInParentheses,
                    {{"where", Where(inc, inc.events[*with.nodes[d->node].lost])}});
    f->reason.Add(ReasonId::kRayActorDiedWithNode, {{"where", Where(inc, died)}});
    return true;
  }
  const std::int32_t raylet = FirstOnNode(inc, Kind::kRayletOomKills, d->node);
  const std::int32_t segv = FirstOnNode(inc, Kind::kFatalSignal, d->node);
  const bool low_memory =
      cause.find("running low on memory") != std::string_view::npos || raylet >= 0;
  const Answer answer{
      .rank = d->rank,
      .node = d->node,
      .local_rank = d->rank >= 0 && d->rank < static_cast<std::int32_t>(facts.ranks.size())
                        ? facts.ranks[d->rank].local_rank
                        : -1,
      .failure_class = low_memory  ? v1::FAILURE_CLASS_HOST_OOM
                       : segv >= 0 ? v1::FAILURE_CLASS_SEGFAULT
                                   : v1::FAILURE_CLASS_SIGNAL_KILL,
      .owner = low_memory  ? v1::OWNER_HOST
               : segv >= 0 ? v1::OWNER_APPLICATION
                           : v1::OWNER_UNKNOWN,
      .confidence = d->rank >= 0 ? 0.9 : 0.6};
  Commit(answer, f);
  if (died.clock != Clock::kNone) f->time = died.time;
  f->cascade = SummarizeCascade(
      inc, facts, d->rank >= 0 ? std::vector<std::int32_t>{d->rank} : std::vector<std::int32_t>{},
      d->node);
  f->reason = d->rank >= 0
                  ? Say(ReasonId::kRayRank, {{"rank", std::to_string(d->rank)},
                                             {"pid", std::to_string(d->pid)},
                                             {"node", name}})
                  : Say(ReasonId::kRayWorker, {{"pid", std::to_string(d->pid)}, {"node", name}});
  if (low_memory) {
    f->evidence.push_back({d->cause >= 0 ? d->cause : d->error, v1::EVIDENCE_ROLE_INITIATING});
    if (raylet >= 0) f->evidence.push_back({raylet, v1::EVIDENCE_ROLE_CORROBORATING});
    f->reason.Add(ReasonId::kRayMemoryMonitorKill, {{"where", Where(inc, died)}});
    f->recovery.push_back(
        {"reduce_host_memory", name, Say(ReasonId::kLowerRayMemory, {{"node", name}})});
  } else if (segv >= 0) {
    f->evidence.push_back({segv, v1::EVIDENCE_ROLE_INITIATING});
    f->evidence.push_back({d->error, v1::EVIDENCE_ROLE_CORROBORATING});
    f->reason.Add(ReasonId::kRaySegfault,
                  {{"segv", Where(inc, inc.events[segv])}, {"died", Where(inc, died)}});
    f->recovery.push_back(
        {"inspect_core_dump", name, Say(ReasonId::kReadCoreDump, {{"node", name}})});
  } else {
    f->evidence.push_back({d->error, v1::EVIDENCE_ROLE_INITIATING});
    f->reason.Add(ReasonId::kRayWorkerDied, {{"where", Where(inc, died)}});
    f->recovery.push_back(
        {"inspect_host_logs", name, Say(ReasonId::kCheckKernelLogForKill, {{"node", name}})});
  }
  return true;
}

std::string_view NoteText(const Incident& inc, const Event& e) {
  const auto* n = std::get_if<Note>(&e.detail);
  return n ? inc.str(n->text) : std::string_view();
}

bool RestartBudgetSpent(std::string_view row) {
  return row.find("ReachedMaxRestarts") != std::string_view::npos ||
         row.find("has failed because it has reached the specified backoff limit") != std::string_view::npos;
}

}  // namespace

// The number after `key` in `row` (`attempt 2`, `Restart Count:  2`), or 0.
std::int32_t NumberAfter(std::string_view row, std::string_view key) {
  const std::size_t at = row.find(key);
  if (at == std::string_view::npos) return 0;
  row.remove_prefix(at + key.size());
  while (!row.empty() && row.front() == ' ') row.remove_prefix(1);
  std::int32_t n = 0;
  std::from_chars(row.data(), row.data() + row.size(), n);
  return n;
}

// "once", "3 times": words for a blank.
Reason Times(std::int32_t n) {
  return n == 1 ? Say(ReasonId::kOnce) : Say(ReasonId::kTimes, {{"count", std::to_string(n)}});
}

void NoteRestarts(const Incident& inc, Finding* f) {
  std::int32_t restart = -1, last_restart = -1, unplaced = -1, end = -1, counted = -1;
  std::int32_t crash_loops = 0, attempts = 0, in_place = 0;
  for (const std::int32_t i :
       inc.OfKinds({Kind::kJobRestarting, Kind::kRestartCount, Kind::kCrashLoop, Kind::kJobFailed,
                    Kind::kFailedScheduling})) {
    const Event& e = inc.events[i];
    if (e.family != Family::kKubernetes) continue;
    const std::string_view row = NoteText(inc, e);
    if (e.kind == Kind::kJobRestarting) {  // JobSet: `restarting jobset, attempt K`
      if (restart < 0) restart = i;
      last_restart = i;
      attempts = std::max(attempts, std::max<std::int32_t>(1, NumberAfter(row, "attempt ")));
    }
    if (e.kind == Kind::kRestartCount && NumberAfter(row, "Restart Count:") > in_place) {
      in_place = NumberAfter(row, "Restart Count:");
      counted = i;
    }
    if (e.kind == Kind::kCrashLoop) ++crash_loops;
    if (e.kind == Kind::kJobFailed && RestartBudgetSpent(row)) end = i;
    // `kubectl get events`' row (it names the pod) over the describe table's copy.
    if (e.kind == Kind::kFailedScheduling && (unplaced < 0 || row.find(" pod/") != std::string_view::npos)) unplaced = i;
  }
  if (inc.later_attempt_files == 0 && restart < 0 && end < 0) return;
  Reason& note = f->reason;
  note.Add(ReasonId::kControllerRestarted);
  if (attempts > 0 && last_restart != restart) {
    note.Add(ReasonId::kRestartedTimesLast, {{"times", Times(attempts)},
                                             {"first", Where(inc, inc.events[restart])},
                                             {"last", Where(inc, inc.events[last_restart])}});
  } else if (attempts > 0) {
    note.Add(ReasonId::kRestartedTimes,
             {{"times", Times(attempts)}, {"first", Where(inc, inc.events[restart])}});
  } else if (in_place > 0) {
    note.Add(ReasonId::kRestartedInPlace, {{"times", Times(in_place)},
                                           {"count", std::to_string(in_place)},
                                           {"where", Where(inc, inc.events[counted])}});
  }
  const bool previous = std::any_of(inc.files.begin(), inc.files.end(), [](const LogFile& l) { return l.path.ends_with(".previous.log"); });
  const bool first_gone = previous && in_place >= 2;
  if (inc.later_attempt_files > 0) {
    const std::string files = std::to_string(inc.later_attempt_files);
    if (first_gone) {
      note.Add(ReasonId::kLastAttemptSetAside, {{"files", files}});
    } else {
      note.Add(
          attempts > 1 ? ReasonId::kRestartedAttemptsSetAside : ReasonId::kRestartedAttemptSetAside,
          {{"files", files}});
    }
  }
  note.Add(ReasonId::kPeriod);
  if (first_gone) {
    note.Add(ReasonId::kFirstAttemptGone,
             {{"attempt", std::to_string(in_place)}, {"attempts", std::to_string(in_place + 1)}});
  }
  if (unplaced >= 0) {
    const std::string_view row = NoteText(inc, inc.events[unplaced]);
    const std::size_t at = row.find("0/");
    note.Add(ReasonId::kReplacementUnplaced,
             {{"where", Where(inc, inc.events[unplaced])},
              {"row", std::string(at == std::string_view::npos ? row : row.substr(at))}});
    f->evidence.push_back({unplaced, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  if (crash_loops > 0) note.Add(ReasonId::kCrashLoops, {{"count", std::to_string(crash_loops)}});
  if (end >= 0) {
    note.Add(ReasonId::kRestartBudgetSpent, {{"where", Where(inc, inc.events[end])}});
    f->evidence.push_back({end, v1::EVIDENCE_ROLE_CONTEXT});
  }
}

namespace {

// Whether the kubelet's eviction (`word`) provably comes before (or with) every rank's own
// failure (its exit on its own, its own exception; analyze/order.h). A failure before it: the
// rank failed first. One nothing orders against it: no claim, and `f` says why.
bool EvictionFirst(const Incident& inc, const JobFacts& facts, std::int32_t word, Finding* f) {
  std::vector<std::int32_t> lines, ranks;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    for (const EventRef i : {OwnExit(facts, r) ? rf.exit_event : std::nullopt, rf.python_error}) {
      if (!i) continue;
      lines.push_back(*i);
      ranks.push_back(r);
    }
  }
  const std::vector<Order> order = OrderAgainst(inc, lines, word);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (order[k] == Order::kBefore) return false;
  }
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (order[k] != Order::kUnknown) continue;
    f->problems.push_back("the eviction (" + Where(inc, inc.events[word]) + ") cannot be ordered against rank " + std::to_string(ranks[k]) +
                          "'s own failure (" + Where(inc, inc.events[lines[k]]) +
                          "): the diagnosis does not claim the platform ended the job before any rank failed");
    return false;
  }
  return true;
}

}  // namespace

bool PlatformEndedJob(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (RayEndedJob(inc, facts, f)) return true;
  const std::vector<PodWord> words = CollectPodWords(inc);
  if (words.empty()) return false;
  if (const std::int32_t n = OnlyNode(words, [](const PodWord& p) { return p.pod_status >= 0 && p.evicted < 0 ? p.oom_killed : -1; });
      n >= 0) {
    OomKilled(inc, facts, n, words[n], f);
    return true;
  }
  if (const std::int32_t n = OnlyNode(words, [](const PodWord& p) { return p.evicted >= 0 ? p.evicted : p.pod_status >= 0 && p.oom_killed < 0 ? p.pod_status : -1; });
      n >= 0 && EvictionFirst(inc, facts, words[n].evicted >= 0 ? words[n].evicted : words[n].pod_status, f)) {
    Evicted(inc, facts, n, words[n], f);
    return true;
  }
  if (const std::int32_t n = OnlyNode(words, [](const PodWord& p) { return p.not_ready; }); n >= 0) {
    JobFacts with = facts;
    with.nodes[n].lost = words[n].not_ready;
    DiagnoseNodeLoss(inc, with, n, f);
    f->reason.Replace(ReasonId::kSlurmReportsNodeFailed, ReasonId::kKubernetesReportsNodeFailed);
    f->reason.Add(ReasonId::kPodDeletedAfterNotReady);
    return true;
  }
  return false;
}

}  // namespace denpex::engine
