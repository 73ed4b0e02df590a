#include "analyze/job_end.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/hardware.h"
#include "analyze/order.h"
#include "analyze/scoring.h"
#include "ingest/identity.h"

namespace denpex::engine {
namespace {

// What the scheduler did: "ended the job at its time limit", ...
ReasonId ClassPhrase(v1::FailureClass c) {
  switch (c) {
    case v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT:
      return ReasonId::kEndedAtTimeLimit;
    case v1::FAILURE_CLASS_SCHEDULER_PREEMPTION:
      return ReasonId::kPreempted;
    default:
      return ReasonId::kCancelled;
  }
}

// The first slurmstepd `CANCELLED` line: what every node saw of the scheduler's decision.
std::int32_t FirstStepdCancel(const Incident& inc) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    const auto* n = std::get_if<SlurmNote>(&e.detail);
    if (n && e.kind == Kind::kCancelled && n->node != kNoStr) return i;
  }
  return -1;
}

bool AllSilent(const JobFacts& facts, const NodeFacts& node) {
  return !node.ranks.empty() && std::all_of(node.ranks.begin(), node.ranks.end(), [&](std::int32_t r) {
           const RankFacts& rf = facts.ranks[r];
           return rf.timeouts == 0 && !rf.exit_event && !rf.python_error;
         });
}

// The agent log of `node` exists and stops with no failure report and no SIGTERM, while some
// other node's agent reported a failure.
bool AgentLogStops(const JobFacts& facts, std::int32_t node) {
  const NodeFacts& n = facts.nodes[node];
  if (!n.agent_log || !n.reports.empty() || n.signalled > 0) return false;
  return std::any_of(facts.nodes.begin(), facts.nodes.end(), [](const NodeFacts& o) { return !o.reports.empty(); });
}

// The last training-progress line (trainer iteration) of the run that failed: a later run of a
// requeued job (after `next_run` in the same file) does not count. -1 when there is none.
std::int32_t LastProgress(const Incident& inc, const JobFacts& facts) {
  const Event* boundary =
      facts.scheduler.next_run ? &inc.events[*facts.scheduler.next_run] : nullptr;
  std::int32_t best = -1;
  for (const std::int32_t i : inc.OfKinds({Kind::kIteration})) {
    const Event& e = inc.events[i];
    if (e.clock == Clock::kNone) continue;
    if (boundary != nullptr && e.file == boundary->file && e.line > boundary->line) continue;
    if (best < 0 || e.time > inc.events[best].time) best = i;
  }
  return best;
}

// The one node slurmctld found silent (-1 when none or several).
std::int32_t ControllerFailedNode(const JobFacts& facts) {
  std::int32_t node = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (!facts.nodes[n].not_responding && !facts.nodes[n].down) continue;
    if (node >= 0) return -1;
    node = n;
  }
  return node;
}

bool AnyRankFailed(const JobFacts& facts) {
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    if (OwnExit(facts, r) || facts.ranks[r].python_error) return true;
  }
  return false;
}

// Every line of a rank's failure (its exit, its own error, its error about a peer, its first
// watchdog timeout).
std::vector<std::int32_t> FailureLines(const JobFacts& facts, std::vector<std::int32_t>* ranks) {
  std::vector<std::int32_t> lines;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    for (const EventRef i : {rf.exit_event, rf.python_error, rf.peer_error, rf.first_timeout}) {
      if (!i) continue;
      lines.push_back(*i);
      ranks->push_back(r);
    }
  }
  return lines;
}

// Whether the scheduler's word that it ended the job provably comes before (or with) every
// rank's failure line (analyze/order.h). A failure line before it: a rank failed first. One
// that nothing orders against it: the claim cannot be made, and `f` says why.
bool FailuresFollow(const Incident& inc, const JobFacts& facts, Finding* f) {
  std::vector<std::int32_t> ranks;
  const std::vector<std::int32_t> lines = FailureLines(facts, &ranks);
  const std::vector<Order> order = OrderAgainst(inc, lines, *facts.scheduler.end);
  std::int32_t unknown = -1, unordered = 0;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (order[k] == Order::kBefore) return false;
    if (order[k] != Order::kUnknown) continue;
    ++unordered;
    if (unknown < 0) unknown = static_cast<std::int32_t>(k);
  }
  if (unknown < 0) return true;
  const Event& end = inc.events[*facts.scheduler.end];
  const Event& first = inc.events[lines[static_cast<std::size_t>(unknown)]];
  f->problems.push_back(
      "the scheduler's word that it ended the job (" + Where(inc, end) +
      (end.clock != Clock::kNone ? " at " + ClockTime(end.time) : ", no time") + ") cannot be ordered against rank " +
      std::to_string(ranks[static_cast<std::size_t>(unknown)]) + "'s failure (" + Where(inc, first) +
      ": no time of its own, and no stamped line of its file bounds it" +
      (unordered > 1 ? "; " + std::to_string(unordered - 1) + " more failure lines alike" : "") +
      "): the diagnosis does not claim the scheduler ended the job before any rank failed");
  return false;
}

}  // namespace

bool SchedulerFailedNode(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::int32_t node = ControllerFailedNode(facts);
  if (node < 0 || AnyRankFailed(facts)) return false;
  const NodeFacts& n = facts.nodes[node];
  const Event& silent = inc.events[n.not_responding ? *n.not_responding : *n.down];
  const std::int32_t progress = LastProgress(inc, facts);
  if (silent.clock == Clock::kNone || progress < 0) return false;
  const Event& last = inc.events[progress];
  // A lost host stops the job's progress at once (its peers block on it); a silent slurmd does not.
  if (last.time <= silent.time) return false;
  const TimeNs ended =
      n.down && inc.events[*n.down].clock != Clock::kNone ? inc.events[*n.down].time : silent.time;
  // A wave before the loss (or one with no time to order it by) says something else failed first.
  if (facts.WaveSeen() && (!facts.wave.start || *facts.wave.start < ended - kSkewWindow))
    return false;
  const std::string name = NodeName(inc, node);
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE,
          .owner = v1::OWNER_SCHEDULER,
          .confidence = n.responding ? 0.9 : 0.8},
         f);
  f->time = silent.time;
  f->evidence.push_back({n.down ? *n.down : *n.not_responding, v1::EVIDENCE_ROLE_INITIATING});
  if (n.job_ended) f->evidence.push_back({*n.job_ended, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({progress, v1::EVIDENCE_ROLE_CORROBORATING});
  if (n.responding) f->evidence.push_back({*n.responding, v1::EVIDENCE_ROLE_CORROBORATING});
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->reason = Say(ReasonId::kSlurmFailedLiveNode, {{"node", name},
                                                   {"silent", Where(inc, silent)},
                                                   {"silent_time", ClockTime(silent.time)},
                                                   {"last_time", ClockTime(last.time)},
                                                   {"last", Where(inc, last)}});
  if (n.responding)
    f->reason.Add(ReasonId::kSlurmdAnsweredAgain,
                  {{"where", Where(inc, inc.events[*n.responding])}});
  f->reason.Add(ReasonId::kSlurmdNotHostFailed,
                {{"ended", std::to_string(f->cascade.secondary_ranks.size())}});
  f->recovery.push_back({"resume_node", name, Say(ReasonId::kResumeNode, {{"node", name}})});
  return true;
}

void NoteRequeue(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!facts.scheduler.requeue && !facts.scheduler.next_run) return;
  const std::int32_t word =
      facts.scheduler.requeue ? *facts.scheduler.requeue : *facts.scheduler.next_run;
  const bool cited = std::any_of(f->evidence.begin(), f->evidence.end(), [&](const Citation& c) { return c.event == word; });
  if (!cited) f->evidence.push_back({word, v1::EVIDENCE_ROLE_CONTEXT});
  f->reason.Add(ReasonId::kRequeued, {{"where", Where(inc, inc.events[word])}});
  if (facts.scheduler.next_run) {
    f->reason.Add(ReasonId::kRequeuedNextRun,
                  {{"count", std::to_string(facts.scheduler.restart_count)},
                   {"where", Where(inc, inc.events[*facts.scheduler.next_run])}});
  }
  f->reason.Add(ReasonId::kDiagnosisOfFailedRun);
  for (Action& p : f->recovery) {
    if (p.action != "restart_job") continue;
    p.action = "verify_requeued_run";
    p.text = Say(ReasonId::kVerifyRequeuedRun);
  }
}

bool SchedulerEndedJob(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!facts.scheduler.end) return false;
  const Event& end = inc.events[*facts.scheduler.end];
  const bool timed = end.clock != Clock::kNone;
  if (!FailuresFollow(inc, facts, f)) return false;
  if (facts.WaveSeen() &&
      (!timed || !facts.wave.start || *facts.wave.start < end.time - kSkewWindow))
    return false;
  Commit(
      {.failure_class = facts.scheduler.end_class, .owner = v1::OWNER_SCHEDULER, .confidence = 0.9},
      f);
  if (timed) f->time = end.time;
  f->evidence.push_back({*facts.scheduler.end, v1::EVIDENCE_ROLE_INITIATING});
  if (const std::int32_t stepd = FirstStepdCancel(inc);
      stepd >= 0 && stepd != *facts.scheduler.end) {
    f->evidence.push_back({stepd, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  if (facts.scheduler.requeued && facts.scheduler.requeue &&
      facts.scheduler.requeue != facts.scheduler.end) {
    f->evidence.push_back({*facts.scheduler.requeue,
                           v1::EVIDENCE_ROLE_CORROBORATING});  // slurmctld's `Requeuing JobId=`
  }
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->reason = Say(ReasonId::kTheScheduler);
  f->reason.Add(facts.scheduler.requeued ? ReasonId::kEndedByRequeue
                                         : ClassPhrase(facts.scheduler.end_class));
  const std::string ended = std::to_string(f->cascade.secondary_ranks.size());
  if (timed) {
    f->reason.Add(ReasonId::kBeforeAnyRankFailedAt,
                  {{"where", Where(inc, end)}, {"time", ClockTime(end.time)}, {"ended", ended}});
  } else {
    f->reason.Add(ReasonId::kBeforeAnyRankFailed, {{"where", Where(inc, end)}, {"ended", ended}});
  }
  if (facts.scheduler.requeued && facts.scheduler.end_class == v1::FAILURE_CLASS_SCHEDULER_CANCEL) {
    f->reason.Add(ReasonId::kRequeuedByScontrol);
  } else if (facts.scheduler.requeued) {
    f->reason.Add(ReasonId::kRequeueClassOpen);
  }
  if (facts.scheduler.requeued) {
    f->recovery.push_back({"verify_requeued_run", "", Say(ReasonId::kVerifyRequeuedJob)});
    return true;
  }
  f->recovery.push_back({"adjust_allocation", "",
                         Say(facts.scheduler.end_class == v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT
                                 ? ReasonId::kResubmitLongerLimit
                                 : ReasonId::kResubmit)});
  return true;
}

std::int32_t LostNode(const Incident& inc, const JobFacts& facts, const std::vector<std::int32_t>& leaders) {
  (void)inc;
  std::set<std::int32_t> nodes;
  for (std::int32_t r : leaders) nodes.insert(r < static_cast<std::int32_t>(facts.ranks.size()) ? facts.ranks[r].node : -1);
  std::int32_t node = nodes.size() == 1 ? *nodes.begin() : -1;
  if (node < 0) {  // no rank leads: the launcher (Slurm, mpirun) names the lost node
    if (!nodes.empty() && nodes != std::set<std::int32_t>{-1}) return -1;
    for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
      if (facts.nodes[n].lost) {
        if (node >= 0) return -1;  // two nodes lost: not this rule
        node = n;
      }
    }
    // Its ranks, where a line ties them to it (mpirun's binding report), said nothing of their own.
    return node >= 0 && (facts.nodes[node].ranks.empty() || AllSilent(facts, facts.nodes[node])) ? node : -1;
  }
  const NodeFacts& n = facts.nodes[node];
  if (!AllSilent(facts, n)) return -1;
  return n.lost || AgentLogStops(facts, node) ? node : -1;
}

std::int32_t LostAgent(const JobFacts& facts) {
  const bool rank_failed =
      std::any_of(facts.ranks.begin(), facts.ranks.end(), [](const RankFacts& r) {
        return r.timeouts > 0 || r.peer_error || r.python_error || r.exit_event;
      });
  if (rank_failed) return -1;
  std::int32_t waited = 0, lost = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    const NodeFacts& node = facts.nodes[n];
    if (node.exit_barrier) {
      ++waited;
    } else if (node.agent_log && node.reports.empty() && node.signalled == 0) {
      if (lost >= 0) return -1;  // two agents silent: not this rule
      lost = n;
    }
  }
  return waited > 0 ? lost : -1;
}

std::int32_t KilledAgentTask(const Incident& inc, const JobFacts& facts) {
  if (facts.scheduler.end) return -1;  // the scheduler's kill explains a task's SIGKILL
  std::int32_t killed = -1;
  for (const std::int32_t i : facts.scheduler.agent_task_exits) {
    const auto& n = std::get<SlurmNote>(inc.events[i].detail);
    if (SrunExitCode(inc.str(n.reason), n.exit_code) != kExitSigkill) continue;
    if (killed >= 0) return -1;  // two agents killed: not this rule
    killed = i;
  }
  if (killed < 0 || NodeOfHost(inc, inc.str(std::get<SlurmNote>(inc.events[killed].detail).node)) < 0) return -1;
  bool lost_peer = false;
  for (const RankFacts& r : facts.ranks) {
    if (r.python_error || r.host_cause || r.exit_code == kExitSigkill) return -1;
    if (r.exit_event && !r.peer_error && r.timeouts == 0 && !r.torn_down)
      return -1;  // an exit of its own
    lost_peer = lost_peer || r.peer_error || r.timeouts > 0;
  }
  return lost_peer ? killed : -1;
}

void DiagnoseKilledAgentTask(const Incident& inc, const JobFacts& facts, std::int32_t task_line, Finding* f) {
  const Event& line = inc.events[task_line];
  const auto& note = std::get<SlurmNote>(line.detail);
  const std::int32_t node = NodeOfHost(inc, inc.str(note.node));
  const std::string name = NodeName(inc, node);
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_NODE_LOSS,
          .owner = v1::OWNER_HOST,
          .confidence = 0.7},
         f);
  f->evidence.push_back({task_line, v1::EVIDENCE_ROLE_INITIATING});
  std::int32_t victims = 0;
  for (const RankFacts& r : facts.ranks) {
    const EventRef first = r.peer_error ? r.peer_error : r.first_timeout;
    if (!first) continue;
    if (victims++ == 0) f->evidence.push_back({*first, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->reason = Say(ReasonId::kKilledAgentTask, {{"task", std::string(inc.str(note.tasks))},
                                               {"node", name},
                                               {"where", Where(inc, line)},
                                               {"victims", std::to_string(victims)}});
  f->recovery.push_back(
      {"inspect_host_logs", name, Say(ReasonId::kCheckKilledTask, {{"node", name}})});
}

void DiagnoseLostAgent(const Incident& inc, const JobFacts& facts, std::int32_t node, Finding* f) {
  const std::string name = NodeName(inc, node);
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_NODE_LOSS,
          .owner = v1::OWNER_UNKNOWN,
          .confidence = 0.7},
         f);
  std::int32_t barrier = -1;
  for (const NodeFacts& n : facts.nodes) {
    if (n.exit_barrier && (barrier < 0 || *n.exit_barrier < barrier)) barrier = *n.exit_barrier;
  }
  f->evidence.push_back({barrier, v1::EVIDENCE_ROLE_CORROBORATING});
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its agent's log stops
    const LogFile& file = inc.files[i];
    if (file.node == node && file.agent && file.last_line.line > 0) {
      f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_INITIATING});
    }
  }
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  f->reason = Say(ReasonId::kLostAgent, {{"node", name},
                                         {"waiter", NodeName(inc, inc.events[barrier].node)},
                                         {"barrier", Where(inc, inc.events[barrier])}});
  f->recovery.push_back(
      {"inspect_host_logs", name, Say(ReasonId::kCheckLostAgent, {{"node", name}})});
}

namespace {

// Who said the node failed: the scheduler, or a bare-metal launcher (mpirun's lost daemon,
// pdsh's and ssh's lost session).
ReasonId LostWord(const Event& word) {
  return word.family == Family::kBareMetal ? ReasonId::kLauncherLostNode
                                           : ReasonId::kSlurmReportsNodeFailed;
}

}  // namespace

void DiagnoseNodeLoss(const Incident& inc, const JobFacts& facts, std::int32_t node, Finding* f) {
  const NodeFacts& n = facts.nodes[node];
  const std::string name = NodeName(inc, node);
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_NODE_LOSS,
          .owner = v1::OWNER_HOST,
          .confidence = n.lost ? 0.9 : 0.8},
         f);
  f->evidence.clear();
  f->lines.clear();
  const EventRef word = n.down ? n.down : n.lost;  // the controller's DOWN, else any Slurm word
  if (word) {
    f->evidence.push_back({*word, v1::EVIDENCE_ROLE_INITIATING});
    if (inc.events[*word].clock != Clock::kNone) f->time = inc.events[*word].time;
  }
  // The job's progress stopped with the node, minutes before the controller gave up on it.
  if (const std::int32_t last = LastProgress(inc, facts); last >= 0 && f->time && inc.events[last].time < *f->time) {
    f->time = inc.events[last].time;
  }
  if (n.job_ended) f->evidence.push_back({*n.job_ended, v1::EVIDENCE_ROLE_CORROBORATING});
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its agent's log stops
    const LogFile& file = inc.files[i];
    if (file.node == node && file.agent && file.last_line.line > 0) {
      f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_CORROBORATING});
    }
  }
  f->cascade = SummarizeCascade(inc, facts, n.ranks, node);
  if (n.ranks.empty()) {
    f->reason = Say(ReasonId::kNodeLostItsRanks, {{"node", name}});
  } else {
    f->reason = Say(ReasonId::kNodeLostAllRanks,
                    {{"node", name}, {"ranks", std::to_string(n.ranks.size())}});
  }
  if (word) {
    f->reason.Add(LostWord(inc.events[*word]), {{"where", Where(inc, inc.events[*word])}});
  } else {
    f->reason.Add(ReasonId::kAgentLogStops);
  }
  f->recovery.clear();
  f->recovery.push_back({"drain_node", name, Say(ReasonId::kDrainNode, {{"node", name}})});
}

namespace {

// Share of the logged ranks that must have raised the same error for the job to have failed as
// one: a few files may be missing or cut before the traceback.
constexpr double kJobWideShare = 0.8;
constexpr std::size_t kJobWideCitations = 3;

// The logged ranks' own errors with the most common signature, lowest rank first (they were
// raised together: no rank's is more initiating than another's).
std::vector<std::int32_t> CommonOwnErrors(const Incident& inc, const JobFacts& facts, std::int32_t* logged) {
  std::map<StrId, std::vector<std::int32_t>> by_signature;
  *logged = facts.unranked.worker_files;  // they logged too, unnamed
  for (const RankFacts& r : facts.ranks) {
    // A rank that raised left a log wherever its lines sit: srun's combined --label output of
    // torch <= 2.1 names the task on each line, never a `[rank<G>]:` prefix or a rank_<R>.log.
    if (!r.has_log && !r.python_error) continue;
    ++*logged;
    if (r.python_error)
      by_signature[inc.events[*r.python_error].signature].push_back(*r.python_error);
  }
  std::vector<std::int32_t> best;
  for (auto& [signature, events] : by_signature) {
    if (events.size() > best.size()) best = std::move(events);
  }
  std::sort(best.begin(), best.end(), [&](std::int32_t a, std::int32_t b) {
    return std::tie(inc.events[a].rank, a) < std::tie(inc.events[b].rank, b);
  });
  return best;
}

// The same error on the workers of (nearly) every node, where no line ties the errors to ranks (a
// layout that lost the `rank_<R>.log` names; torch <= 2.1's lines carry no rank): counted by node,
// not by error, so that a traceback printed twice (a worker's stderr and its error.json) counts
// once. Only where nothing says a rank failed because of another: no peer error of any rank, no
// exit its agent saw by a signal. The errors of the most common signature, first first; empty when
// they do not cover kJobWideShare of the nodes with workers (two at least).
std::vector<std::int32_t> CommonUnrankedErrors(const Incident& inc, const JobFacts& facts,
                                               std::int32_t* covered, std::int32_t* worker_nodes,
                                               bool* per_agent) {
  if (facts.unranked.own_errors.empty() || facts.wave.peer_reporters > 0 ||
      facts.wave.gloo_timeouts + facts.wave.gloo_closed > 0)
    return {};
  std::int32_t exits = 0;
  for (const RankFacts& r : facts.ranks) {
    if (r.peer_error || (r.exit_event && r.exit_code <= 0)) return {};
    exits += r.exit_event ? 1 : 0;
  }
  if (exits < 2)
    return {};  // the agents saw workers exit on their own (not pods killed around them)
  for (const Event& e : inc.events) {
    if (e.rank < 0 && IsPeerError(e)) return {};
  }
  std::map<StrId, std::vector<std::int32_t>> by_signature;
  for (std::int32_t i : facts.unranked.own_errors) {
    // torchrun's own exceptions (its SignalException when the platform stopped it) are the
    // launcher's, raised around the workers, not by them.
    if (inc.str(std::get<PythonError>(inc.events[i].detail).type)
            .starts_with("torch.distributed.elastic."))
      continue;
    by_signature[inc.events[i].signature].push_back(i);
  }
  std::vector<std::int32_t> best;
  for (auto& [signature, events] : by_signature) {
    if (events.size() > best.size()) best = std::move(events);
  }
  // Where an error was printed: its node, or its file's stream where no line of the file names
  // one (an agent's console merged with a kernel log). Every node with an agent or ranks, and
  // every such console, had workers. A node several agents' consoles share (one host name on
  // several agents: containers, a cluster's consoles under one name) counts once per agent, and
  // an error in a torchrun log dir's `<L>/` folder there is its tree's (`attempt_N/`: one
  // agent's workers), so that the same error from every agent is the job's there too.
  std::map<std::int32_t, std::int32_t> agents_on;  // node -> its agents' consoles
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {
    const LogFile& f = inc.files[i];
    if (f.agent && f.node >= 0 && StreamOf(inc, i) == i) ++agents_on[f.node];
  }
  std::map<std::int32_t, std::set<std::string_view>>
      trees;  // node -> the log dir trees of its errors
  std::set<std::int32_t> places;
  for (std::int32_t i : best) {
    const Event& e = inc.events[i];
    const LogFile& f = inc.files[e.file];
    const auto it = e.node >= 0 ? agents_on.find(e.node) : agents_on.end();
    if (it != agents_on.end() && it->second >= 2 && f.local_rank >= 0) {
      trees[e.node].insert(FolderOf(FolderOf(f.path)));
    } else {
      places.insert(e.node >= 0 ? e.node : -1 - static_cast<std::int32_t>(StreamOf(inc, e.file)));
    }
  }
  *covered = static_cast<std::int32_t>(places.size());
  for (const auto& [node, dirs] : trees) {
    const std::int32_t held =
        places.contains(node) ? 1 : 0;  // its console's errors: one of its agents
    *covered += std::min(agents_on[node], static_cast<std::int32_t>(dirs.size()) + held) - held;
  }
  *worker_nodes = 0;
  for (std::size_t n = 0; n < facts.nodes.size(); ++n) {
    const NodeFacts& node = facts.nodes[n];
    const auto it = agents_on.find(static_cast<std::int32_t>(n));
    if (!node.agent_log && node.ranks.empty()) continue;
    *worker_nodes += it == agents_on.end() ? 1 : std::max(1, it->second);
    *per_agent |= it != agents_on.end() && it->second >= 2;
  }
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {
    *worker_nodes += inc.files[i].agent && inc.files[i].node < 0 && StreamOf(inc, i) == i ? 1 : 0;
  }
  if (*covered < 2 || *covered < kJobWideShare * *worker_nodes) return {};
  return best;
}

}  // namespace

bool JobWideError(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (facts.WaveSeen()) return false;
  std::int32_t logged = 0;
  std::vector<std::int32_t> errors = CommonOwnErrors(inc, facts, &logged);
  auto n = static_cast<std::int32_t>(errors.size());
  std::int32_t covered = 0, worker_nodes = 0;
  bool per_agent = false;  // a node of several agents counted once per agent
  if (n < 2 || n < kJobWideShare * logged) {
    if (n > 0) return false;  // ranked errors that are not the job's: they decide
    errors = CommonUnrankedErrors(inc, facts, &covered, &worker_nodes, &per_agent);
    n = static_cast<std::int32_t>(errors.size());
    if (n == 0) return false;
    std::sort(errors.begin(), errors.end());
    logged = n;  // the confidence below: the nodes' share stands for the ranks'
  }
  const Event& first = inc.events[errors.front()];
  Commit({.failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION,
          .owner = v1::OWNER_APPLICATION,
          .confidence = 0.95 * n / logged},
         f);
  ClassOfOwnError(inc, first, &f->failure_class, &f->owner);
  for (std::int32_t i : errors) {  // when it failed: the earliest of them
    const Event& e = inc.events[i];
    // An unranked error's borrowed stamp is another process's line (a kernel log's, merged before
    // it).
    if (covered > 0 && !HasOwnTime(inc, i)) continue;
    if (e.clock != Clock::kNone && (!f->time || e.time < *f->time)) f->time = e.time;
  }
  for (std::size_t i = 0; i < errors.size() && i < kJobWideCitations; ++i) {
    f->evidence.push_back({errors[i], i == 0 ? v1::EVIDENCE_ROLE_INITIATING : v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->cascade.groups.push_back({.signature = first.signature,
                               .family = std::string(FamilyName(first.family)),
                               .count = n,
                               .ranks = covered > 0 ? 0 : n,
                               .first_time = f->time.value_or(0),
                               .timed = f->time.has_value()});
  const auto& err = std::get<PythonError>(first.detail);
  const bool load = f->failure_class == v1::FAILURE_CLASS_CHECKPOINT_LOAD;
  if (covered > 0) {
    f->confidence = 0.95 * covered / worker_nodes;
    f->reason = Say(ReasonId::kJobWideUnrankedError, {{"covered", std::to_string(covered)},
                                                      {"nodes", std::to_string(worker_nodes)},
                                                      {"places", per_agent ? "agents" : "nodes"},
                                                      {"error", std::string(inc.str(err.type))},
                                                      {"where", Where(inc, first)},
                                                      {"errors", std::to_string(n)}});
  } else {
    f->reason = Say(ReasonId::kJobWideError, {{"raised", std::to_string(n)},
                                              {"logged", std::to_string(logged)},
                                              {"error", std::string(inc.str(err.type))},
                                              {"where", Where(inc, first)}});
  }
  if (load) f->reason.Add(ReasonId::kLoadingCheckpoint);
  f->reason.Add(ReasonId::kFailedAsWhole);
  f->recovery.push_back(
      load ? Action{"fix_checkpoint_config", "",
                    Say(ReasonId::kFixCheckpointConfig, {{"where", Where(inc, first)}})}
           : Action{"fix_application", "",
                    Say(ReasonId::kFixSameException, {{"where", Where(inc, first)}})});
  return true;
}

}  // namespace denpex::engine
