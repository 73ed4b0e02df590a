#include "analyze/job_end.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/hardware.h"
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

}  // namespace

bool SchedulerEndedJob(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (facts.scheduler_end < 0) return false;
  const Event& end = inc.events[facts.scheduler_end];
  const bool timed = end.clock != Clock::kNone;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    if (!OwnExit(facts, r)) continue;
    const RankFacts& rf = facts.ranks[r];
    const Event& exit = inc.events[rf.exit_event];
    // Did it fail on its own first? By time when both lines carry one, by place when they share
    // a file; otherwise only a death the scheduler does not deal (not SIGKILL, not SIGTERM).
    const bool signal = rf.exit_code == kExitSigkill || rf.exit_code == kExitSigterm;
    const bool first = timed && exit.clock != Clock::kNone ? exit.time < end.time - kSkewWindow
                       : exit.file == end.file        ? exit.line < end.line
                                                      : !signal;
    if (first) return false;
  }
  if (facts.HasWave() && (!timed || facts.wave_start < end.time - kSkewWindow)) return false;
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->failure_class = facts.scheduler_class;
  f->owner = v1::OWNER_SCHEDULER;
  f->confidence = 0.9;
  if (timed) f->time = end.time;
  f->evidence.push_back({facts.scheduler_end, v1::EVIDENCE_ROLE_INITIATING});
  if (const std::int32_t stepd = FirstStepdCancel(inc); stepd >= 0 && stepd != facts.scheduler_end) {
    f->evidence.push_back({stepd, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->reason = "The scheduler " + ClassPhrase(facts.scheduler_class) + " (" + Where(inc, end) +
              (timed ? " at " + ClockTime(end.time) : "") + ") before any rank failed on its own; " +
              std::to_string(f->cascade.secondary_ranks.size()) + " ranks were ended by it.";
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
  if (node < 0) {  // silent ranks of an srun job: no line ties them to a host, Slurm names it
    if (!nodes.empty() && nodes != std::set<std::int32_t>{-1}) return -1;
    for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
      if (facts.nodes[n].lost >= 0) {
        if (node >= 0) return -1;  // two nodes lost: not this rule
        node = n;
      }
    }
    return node >= 0 && facts.nodes[node].ranks.empty() ? node : -1;
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
  if (n.lost >= 0) {
    f->evidence.push_back({n.lost, v1::EVIDENCE_ROLE_INITIATING});
    if (inc.events[n.lost].clock != Clock::kNone) f->time = inc.events[n.lost].time;
  }
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its agent's log stops
    const LogFile& file = inc.files[i];
    if (file.node == node && file.agent && file.last_line.line > 0) {
      f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_CORROBORATING});
    }
  }
  f->cascade = SummarizeCascade(inc, facts, n.ranks, node);
  const std::string ranks = n.ranks.empty() ? "its ranks" : "all " + std::to_string(n.ranks.size()) + " of its ranks";
  f->reason = "Node " + name + " was lost: " + ranks + " went silent together with no error and no exit of their own, and " +
              (n.lost >= 0 ? "Slurm reports the node failed (" + Where(inc, inc.events[n.lost]) + ")"
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
  *logged = 0;
  for (const RankFacts& r : facts.ranks) {
    if (!r.has_log) continue;
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
  ClassOfOwnError(first, &f->failure_class, &f->owner);
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
