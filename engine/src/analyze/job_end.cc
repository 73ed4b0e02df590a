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

namespace denpex::engine {
namespace {

std::string ClassPhrase(v1::FailureClass c) {
  switch (c) {
    case v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT: return "ended the job at its time limit";
    case v1::FAILURE_CLASS_SCHEDULER_PREEMPTION: return "preempted the job";
    default: return "cancelled the job";
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
           return rf.timeouts == 0 && rf.exit_event < 0 && rf.python_error < 0;
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
  const Event* boundary = facts.next_run >= 0 ? &inc.events[facts.next_run] : nullptr;
  std::int32_t best = -1;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.kind != Kind::kIteration || e.clock == Clock::kNone) continue;
    if (boundary != nullptr && e.file == boundary->file && e.line > boundary->line) continue;
    if (best < 0 || e.time > inc.events[best].time) best = i;
  }
  return best;
}

// The one node slurmctld found silent (-1 when none or several).
std::int32_t ControllerFailedNode(const JobFacts& facts) {
  std::int32_t node = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (facts.nodes[n].not_responding < 0 && facts.nodes[n].down < 0) continue;
    if (node >= 0) return -1;
    node = n;
  }
  return node;
}

bool AnyRankFailed(const JobFacts& facts) {
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    if (OwnExit(facts, r) || facts.ranks[r].python_error >= 0) return true;
  }
  return false;
}

// Every line of a rank's failure (its exit, its own error, its error about a peer, its first
// watchdog timeout).
std::vector<std::int32_t> FailureLines(const JobFacts& facts, std::vector<std::int32_t>* ranks) {
  std::vector<std::int32_t> lines;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    for (const std::int32_t i : {rf.exit_event, rf.python_error, rf.peer_error, rf.first_timeout}) {
      if (i < 0) continue;
      lines.push_back(i);
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
  const std::vector<Order> order = OrderAgainst(inc, lines, facts.scheduler_end);
  std::int32_t unknown = -1, unordered = 0;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (order[k] == Order::kBefore) return false;
    if (order[k] != Order::kUnknown) continue;
    ++unordered;
    if (unknown < 0) unknown = static_cast<std::int32_t>(k);
  }
  if (unknown < 0) return true;
  const Event& end = inc.events[facts.scheduler_end];
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
  const Event& silent = inc.events[n.not_responding >= 0 ? n.not_responding : n.down];
  const std::int32_t progress = LastProgress(inc, facts);
  if (silent.clock == Clock::kNone || progress < 0) return false;
  const Event& last = inc.events[progress];
  // A lost host stops the job's progress at once (its peers block on it); a silent slurmd does not.
  if (last.time <= silent.time) return false;
  const TimeNs ended = n.down >= 0 && inc.events[n.down].clock != Clock::kNone ? inc.events[n.down].time : silent.time;
  // A wave before the loss (or one with no time to order it by) says something else failed first.
  if (facts.HasWave() && (!facts.wave_start || *facts.wave_start < ended - kSkewWindow)) return false;
  const std::string name = NodeName(inc, node);
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = node;
  f->failure_class = v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE;
  f->owner = v1::OWNER_SCHEDULER;
  f->confidence = n.responding >= 0 ? 0.9 : 0.8;
  f->time = silent.time;
  f->evidence.push_back({n.down >= 0 ? n.down : n.not_responding, v1::EVIDENCE_ROLE_INITIATING});
  if (n.job_ended >= 0) f->evidence.push_back({n.job_ended, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({progress, v1::EVIDENCE_ROLE_CORROBORATING});
  if (n.responding >= 0) f->evidence.push_back({n.responding, v1::EVIDENCE_ROLE_CORROBORATING});
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->reason = "Slurm declared " + name + " failed and ended the job, but the node was not lost: slurmctld found it not responding (" +
              Where(inc, silent) + " at " + ClockTime(silent.time) + ") while the job kept training until " + ClockTime(last.time) +
              " (" + Where(inc, last) + "), and no rank failed on its own" +
              (n.responding >= 0 ? "; its slurmd answered again later (" + Where(inc, inc.events[n.responding]) + ")" : "") +
              ". The node's slurmd or the controller's path to it failed, not the host; " +
              std::to_string(f->cascade.secondary_ranks.size()) + " ranks were ended by the scheduler.";
  f->recovery.push_back({"resume_node", name,
                         "`scontrol show node " + name + "` shows it DOWN (Reason=Not responding): check slurmd and munge on " + name +
                             " and the controller's network path to it, then return it with `scontrol update NodeName=" + name +
                             " State=RESUME` (or leave it out of the restart); the host and its GPUs need no repair."});
  return true;
}

void NoteRequeue(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (facts.requeue < 0 && facts.next_run < 0) return;
  const std::int32_t word = facts.requeue >= 0 ? facts.requeue : facts.next_run;
  const bool cited = std::any_of(f->evidence.begin(), f->evidence.end(), [&](const Citation& c) { return c.event == word; });
  if (!cited) f->evidence.push_back({word, v1::EVIDENCE_ROLE_CONTEXT});
  f->reason += " Slurm requeued the job (" + Where(inc, inc.events[word]) + ")";
  if (facts.next_run >= 0) {
    f->reason += " and its next run (SLURM_RESTART_COUNT=" + std::to_string(facts.restart_count) + ") started in the same output (" +
                 Where(inc, inc.events[facts.next_run]) + ")";
  }
  f->reason += "; this diagnosis is of the run that failed.";
  for (Action& p : f->recovery) {
    if (p.action != "restart_job") continue;
    p.action = "verify_requeued_run";
    p.text = "Slurm restarted the job by itself (--requeue): confirm the requeued run resumed from the newest checkpoint that verifies, "
             "runs without the failed node, and makes progress; no manual restart is needed.";
  }
}

bool SchedulerEndedJob(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (facts.scheduler_end < 0) return false;
  const Event& end = inc.events[facts.scheduler_end];
  const bool timed = end.clock != Clock::kNone;
  if (!FailuresFollow(inc, facts, f)) return false;
  if (facts.HasWave() && (!timed || !facts.wave_start || *facts.wave_start < end.time - kSkewWindow)) return false;
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->failure_class = facts.scheduler_class;
  f->owner = v1::OWNER_SCHEDULER;
  f->confidence = 0.9;
  if (timed) f->time = end.time;
  f->evidence.push_back({facts.scheduler_end, v1::EVIDENCE_ROLE_INITIATING});
  if (const std::int32_t stepd = FirstStepdCancel(inc); stepd >= 0 && stepd != facts.scheduler_end) {
    f->evidence.push_back({stepd, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  if (facts.scheduler_requeued && facts.requeue >= 0 && facts.requeue != facts.scheduler_end) {
    f->evidence.push_back({facts.requeue, v1::EVIDENCE_ROLE_CORROBORATING});  // slurmctld's `Requeuing JobId=`
  }
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  const std::string phrase = facts.scheduler_requeued ? "ended the run by requeuing the job" : ClassPhrase(facts.scheduler_class);
  f->reason = "The scheduler " + phrase + " (" + Where(inc, end) + (timed ? " at " + ClockTime(end.time) : "") +
              ") before any rank failed; " + std::to_string(f->cascade.secondary_ranks.size()) + " ranks were ended by it.";
  if (facts.scheduler_requeued && facts.scheduler_class == v1::FAILURE_CLASS_SCHEDULER_CANCEL) {
    f->reason += " No node failure is reported: the requeue was an `scontrol requeue` (an administrator's or the "
                 "user's), not Slurm's answer to a failed node; the job waits to run again.";
  } else if (facts.scheduler_requeued) {
    f->reason += " No node failure is reported, and without slurmctld.log the banner does not tell an `scontrol requeue` "
                 "from a preemption under PreemptMode=REQUEUE: the class is left open; the job waits to run again.";
  }
  if (facts.scheduler_requeued) {
    f->recovery.push_back({"verify_requeued_run", "",
                           "Slurm requeued the job: confirm its next run resumes from the newest checkpoint that verifies and makes "
                           "progress; nothing in the ranks failed, so no code or hardware needs fixing first."});
    return true;
  }
  f->recovery.push_back({"adjust_allocation", "",
                         facts.scheduler_class == v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT
                             ? "Resubmit with a longer time limit, or checkpoint more often than the time left after the last checkpoint."
                             : "Resubmit the job; nothing in the ranks failed, so no code or hardware needs fixing first."});
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
      if (facts.nodes[n].lost >= 0) {
        if (node >= 0) return -1;  // two nodes lost: not this rule
        node = n;
      }
    }
    // Its ranks, where a line ties them to it (mpirun's binding report), said nothing of their own.
    return node >= 0 && (facts.nodes[node].ranks.empty() || AllSilent(facts, facts.nodes[node])) ? node : -1;
  }
  const NodeFacts& n = facts.nodes[node];
  if (!AllSilent(facts, n)) return -1;
  return n.lost >= 0 || AgentLogStops(facts, node) ? node : -1;
}

std::int32_t LostAgent(const JobFacts& facts) {
  const bool rank_failed = std::any_of(facts.ranks.begin(), facts.ranks.end(), [](const RankFacts& r) {
    return r.timeouts > 0 || r.peer_error >= 0 || r.python_error >= 0 || r.exit_event >= 0;
  });
  if (rank_failed) return -1;
  std::int32_t waited = 0, lost = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    const NodeFacts& node = facts.nodes[n];
    if (node.exit_barrier >= 0) {
      ++waited;
    } else if (node.agent_log && node.reports.empty() && node.signalled == 0) {
      if (lost >= 0) return -1;  // two agents silent: not this rule
      lost = n;
    }
  }
  return waited > 0 ? lost : -1;
}

std::int32_t KilledAgentTask(const Incident& inc, const JobFacts& facts) {
  if (facts.scheduler_end >= 0) return -1;  // the scheduler's kill explains a task's SIGKILL
  std::int32_t killed = -1;
  for (const std::int32_t i : facts.agent_task_exits) {
    const auto& n = std::get<SlurmNote>(inc.events[i].detail);
    if (SrunExitCode(inc.str(n.reason), n.exit_code) != kExitSigkill) continue;
    if (killed >= 0) return -1;  // two agents killed: not this rule
    killed = i;
  }
  if (killed < 0 || NodeOfHost(inc, inc.str(std::get<SlurmNote>(inc.events[killed].detail).node)) < 0) return -1;
  bool lost_peer = false;
  for (const RankFacts& r : facts.ranks) {
    if (r.python_error >= 0 || r.host_cause >= 0 || r.exit_code == kExitSigkill) return -1;
    if (r.exit_event >= 0 && r.peer_error < 0 && r.timeouts == 0 && !r.torn_down) return -1;  // an exit of its own
    lost_peer = lost_peer || r.peer_error >= 0 || r.timeouts > 0;
  }
  return lost_peer ? killed : -1;
}

void DiagnoseKilledAgentTask(const Incident& inc, const JobFacts& facts, std::int32_t task_line, Finding* f) {
  const Event& line = inc.events[task_line];
  const auto& note = std::get<SlurmNote>(line.detail);
  const std::int32_t node = NodeOfHost(inc, inc.str(note.node));
  const std::string name = NodeName(inc, node);
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = node;
  f->failure_class = v1::FAILURE_CLASS_NODE_LOSS;
  f->owner = v1::OWNER_HOST;
  f->confidence = 0.7;
  f->evidence.push_back({task_line, v1::EVIDENCE_ROLE_INITIATING});
  std::int32_t victims = 0;
  for (const RankFacts& r : facts.ranks) {
    const std::int32_t first = r.peer_error >= 0 ? r.peer_error : r.first_timeout;
    if (first < 0) continue;
    if (victims++ == 0) f->evidence.push_back({first, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->reason = "The torchrun agent of srun task " + std::string(inc.str(note.tasks)) + " on " + name +
              " was killed by SIGKILL with its workers (" + Where(inc, line) +
              "): it reported no failure of its own, no worker raised or was killed alone, and " + std::to_string(victims) +
              " ranks lost their peer and failed as a consequence. An agent killed whole is the loss of its node (power, kernel, "
              "the OOM killer, an operator's kill of the whole process tree).";
  f->recovery.push_back({"inspect_host_logs", name,
                         "Check " + name + " for what killed srun's task (the kernel log for the OOM killer or a panic, the node's "
                             "power and BMC event log, an operator's kill) before returning it to service; restart the job without it if "
                             "it was lost."});
}

void DiagnoseLostAgent(const Incident& inc, const JobFacts& facts, std::int32_t node, Finding* f) {
  const std::string name = NodeName(inc, node);
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = node;
  f->failure_class = v1::FAILURE_CLASS_NODE_LOSS;
  f->owner = v1::OWNER_UNKNOWN;
  f->confidence = 0.7;
  std::int32_t barrier = -1;
  for (const NodeFacts& n : facts.nodes) {
    if (n.exit_barrier >= 0 && (barrier < 0 || n.exit_barrier < barrier)) barrier = n.exit_barrier;
  }
  f->evidence.push_back({barrier, v1::EVIDENCE_ROLE_CORROBORATING});
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its agent's log stops
    const LogFile& file = inc.files[i];
    if (file.node == node && file.agent && file.last_line.line > 0) {
      f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_INITIATING});
    }
  }
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  f->reason = "The torchrun agent of " + name + " was lost: no rank failed, the agent of " +
              NodeName(inc, inc.events[barrier].node) + " timed out in the exit barrier waiting for it (" +
              Where(inc, inc.events[barrier]) + "), and " + name + "'s agent log stops with no word after its start.";
  f->recovery.push_back({"inspect_host_logs", name,
                         "Check " + name + " for what ended its torchrun agent (the kernel log for the OOM killer, the "
                             "scheduler's or an operator's kill) and for orphaned workers still running there before restarting."});
}

namespace {

// Who said the node failed: the scheduler, or a bare-metal launcher (mpirun's lost daemon,
// pdsh's and ssh's lost session).
std::string LostWord(const Event& word) {
  return word.family == Family::kBareMetal ? "its launcher lost its session to the node" : "Slurm reports the node failed";
}

}  // namespace

void DiagnoseNodeLoss(const Incident& inc, const JobFacts& facts, std::int32_t node, Finding* f) {
  const NodeFacts& n = facts.nodes[node];
  const std::string name = NodeName(inc, node);
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = node;
  f->failure_class = v1::FAILURE_CLASS_NODE_LOSS;
  f->owner = v1::OWNER_HOST;
  f->confidence = n.lost >= 0 ? 0.9 : 0.8;
  f->evidence.clear();
  f->lines.clear();
  const std::int32_t word = n.down >= 0 ? n.down : n.lost;  // the controller's DOWN, else any Slurm word
  if (word >= 0) {
    f->evidence.push_back({word, v1::EVIDENCE_ROLE_INITIATING});
    if (inc.events[word].clock != Clock::kNone) f->time = inc.events[word].time;
  }
  // The job's progress stopped with the node, minutes before the controller gave up on it.
  if (const std::int32_t last = LastProgress(inc, facts); last >= 0 && f->time && inc.events[last].time < *f->time) {
    f->time = inc.events[last].time;
  }
  if (n.job_ended >= 0) f->evidence.push_back({n.job_ended, v1::EVIDENCE_ROLE_CORROBORATING});
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its agent's log stops
    const LogFile& file = inc.files[i];
    if (file.node == node && file.agent && file.last_line.line > 0) {
      f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_CORROBORATING});
    }
  }
  f->cascade = SummarizeCascade(inc, facts, n.ranks, node);
  const std::string ranks = n.ranks.empty() ? "its ranks" : "all " + std::to_string(n.ranks.size()) + " of its ranks";
  f->reason = "Node " + name + " was lost: " + ranks + " went silent together with no error and no exit of their own, and " +
              (word >= 0 ? LostWord(inc.events[word]) + " (" + Where(inc, inc.events[word]) + ")"
                           : "its torchrun agent log stops without a failure report while other nodes' agents reported") +
              ".";
  f->recovery.clear();
  f->recovery.push_back({"drain_node", name,
                         "Drain " + name + " and check its power, kernel log (panic, hardware errors) and BMC event log before "
                             "returning it to service; restart the job without it."});
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
  *logged = facts.unnamed_worker_files;  // they logged too, unnamed
  for (const RankFacts& r : facts.ranks) {
    // A rank that raised left a log wherever its lines sit: srun's combined --label output of
    // torch <= 2.1 names the task on each line, never a `[rank<G>]:` prefix or a rank_<R>.log.
    if (!r.has_log && r.python_error < 0) continue;
    ++*logged;
    if (r.python_error >= 0) by_signature[inc.events[r.python_error].signature].push_back(r.python_error);
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

}  // namespace

bool JobWideError(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (facts.HasWave()) return false;
  std::int32_t logged = 0;
  const std::vector<std::int32_t> errors = CommonOwnErrors(inc, facts, &logged);
  const auto n = static_cast<std::int32_t>(errors.size());
  if (n < 2 || n < kJobWideShare * logged) return false;
  const Event& first = inc.events[errors.front()];
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION;
  f->owner = v1::OWNER_APPLICATION;
  ClassOfOwnError(inc, first, &f->failure_class, &f->owner);
  f->confidence = 0.95 * n / logged;
  for (std::int32_t i : errors) {  // when it failed: the earliest of them
    const Event& e = inc.events[i];
    if (e.clock != Clock::kNone && (!f->time || e.time < *f->time)) f->time = e.time;
  }
  for (std::size_t i = 0; i < errors.size() && i < kJobWideCitations; ++i) {
    f->evidence.push_back({errors[i], i == 0 ? v1::EVIDENCE_ROLE_INITIATING : v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->cascade.groups.push_back({.signature = first.signature,
                               .family = std::string(FamilyName(first.family)),
                               .count = n,
                               .ranks = n,
                               .first_time = f->time.value_or(0),
                               .timed = f->time.has_value()});
  const auto& err = std::get<PythonError>(first.detail);
  const bool load = f->failure_class == v1::FAILURE_CLASS_CHECKPOINT_LOAD;
  f->reason = std::to_string(n) + " of the " + std::to_string(logged) + " ranks with a log raised the same " +
              std::string(inc.str(err.type)) + " (" + Where(inc, first) + ")" +
              (load ? " loading the checkpoint the job resumes from" : "") +
              ", and no NCCL watchdog timeout followed: the job failed as a whole, no rank because of another.";
  f->recovery.push_back(
      load ? Action{"fix_checkpoint_config", "",
                    "Every rank failed to load the checkpoint (" + Where(inc, first) +
                        "): resume with the world size and model shape that wrote it, convert it (DeepSpeed's universal "
                        "checkpoint, DCP resharding), or point the job at a complete checkpoint before restarting."}
           : Action{"fix_application", "",
                    "Every rank raised the same exception (" + Where(inc, first) +
                        "): fix the code or configuration it names before restarting; no rank or node needs action of its own."});
  return true;
}

}  // namespace denpex::engine
