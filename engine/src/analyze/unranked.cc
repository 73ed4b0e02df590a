#include "analyze/unranked.h"

#include <algorithm>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/hardware.h"
#include "analyze/store.h"
#include "ingest/identity.h"

namespace denpex::engine {
namespace {

// A coarser answer than a rank: the lines support it, but name no rank.
constexpr double kConfidence = 0.6;

bool Stamped(const Event& e) { return e.clock != Clock::kNone && !e.time_borrowed; }

// True when every rank the logs know sits on `node`: one host holds the job.
bool OneNodeHoldsJob(const JobFacts& facts, std::int32_t node) {
  return node >= 0 && std::all_of(facts.ranks.begin(), facts.ranks.end(), [&](const RankFacts& r) { return r.node == node; });
}

// The exit line of `failed` that comes last in their console.
std::int32_t LastExit(const Incident& inc, const JobFacts& facts, const std::vector<std::int32_t>& failed) {
  std::int32_t last = *facts.ranks[failed.front()].exit_event;
  for (std::int32_t r : failed) {
    if (BeforeInStream(inc, last, *facts.ranks[r].exit_event)) last = *facts.ranks[r].exit_event;
  }
  return last;
}

// Errors about a peer that carry no rank, printed in the console before event `before`.
std::int32_t UnrankedPeerErrorsBefore(const Incident& inc, std::int32_t before) {
  std::int32_t n = 0;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    n += inc.events[i].rank < 0 && IsPeerError(inc.events[i]) && BeforeInStream(inc, i, before) ? 1 : 0;
  }
  return n;
}

// "exit code 1 (train.log:28, train.log:53)": the failed workers' exits, cited.
std::string ExitsPhrase(const Incident& inc, const JobFacts& facts, const std::vector<std::int32_t>& failed) {
  std::string where;
  for (std::int32_t r : failed)
    where += (where.empty() ? "" : ", ") + Where(inc, inc.events[*facts.ranks[r].exit_event]);
  return where;
}


// A gloo timeout waiting on a peer: the peer was alive but silent (a closed connection says it
// was gone).
bool IsGlooTimeout(const Event& e) { return e.family == Family::kGloo && e.kind == Kind::kGlooTimeout; }

// The `[default<L>]:` error lines of a node's worker at `local_rank`: its first error about a peer
// (-1 when none) and whether it printed an error of its own.
struct WorkerErrors {
  std::int32_t peer = -1;
  bool own = false;
};

WorkerErrors ErrorsOf(const Incident& inc, std::int32_t node, std::int32_t local_rank) {
  WorkerErrors w;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.node != node || e.local_rank != local_rank) continue;
    if (IsPeerError(e) && w.peer < 0) w.peer = i;
    const auto* pe = std::get_if<PythonError>(&e.detail);
    if (pe != nullptr && !pe->chained && !IsPeerError(e)) w.own = true;
  }
  return w;
}

// Where each stream's agent began to end the workers (its `failed` report or a `Sending process
// P closing signal` line): an error after it, in the same stream, is the teardown's, such as the
// agent's own SignalException once an operator stopped it. Built in one pass over the events, so
// each error is judged without another (16k agents' errors against every event: half a second).
class Teardowns {
 public:
  explicit Teardowns(const Incident& inc)
      : first_line_(inc.files.size(), 0), first_(inc.files.size()) {
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
      const Event& t = inc.events[i];
      if (t.family != Family::kTorchrun || !(std::holds_alternative<WorkerFailed>(t.detail) ||
                                             std::holds_alternative<WorkerSignalled>(t.detail)))
        continue;
      std::uint32_t& line = first_line_[t.file];
      if (line == 0 || t.line < line) line = t.line;
      First& f = first_[StreamOf(inc, t.file)];
      if (f.index < 0) {
        f.index = i;
      } else if (f.other < 0 && t.file != inc.events[f.index].file) {
        f.other = i;
      }
    }
  }

  // BeforeInStream(inc, t, error) for some teardown line t: one of the error's own file on an
  // earlier line, or one of another piece of its stream earlier in the stream.
  bool Before(const Incident& inc, std::int32_t error) const {
    const Event& e = inc.events[error];
    if (first_line_[e.file] != 0 && first_line_[e.file] < e.line) return true;
    const First& f = first_[StreamOf(inc, e.file)];
    const std::int32_t other =
        f.index >= 0 && inc.events[f.index].file != e.file ? f.index : f.other;
    return other >= 0 && other < error;
  }

 private:
  std::vector<std::uint32_t> first_line_;  // per file: its first teardown line (0: none)
  struct First {
    std::int32_t index = -1;  // the stream's first teardown event
    std::int32_t other = -1;  // its first in another file than that one's
  };
  std::vector<First> first_;  // per stream (StreamOf)
};

// No rank failed on its own: no error of its own (but the teardown's), no host cause, no exit
// that no peer error explains.
bool OnlyVictimsFailed(const Incident& inc, const JobFacts& facts) {
  if (facts.WaveSeen()) return false;
  const Teardowns teardowns(inc);
  for (std::int32_t i : facts.unranked.own_errors) {
    if (!teardowns.Before(inc, i)) return false;
  }
  return std::none_of(facts.ranks.begin(), facts.ranks.end(), [](const RankFacts& r) {
    return r.python_error || r.host_cause || (r.exit_event && !r.peer_error);
  });
}

// srun or the scheduler said how agents ended (srun's `task N: Killed` of an agent's task, a
// cancellation): their word decides (KilledAgentTask, SchedulerEndedJob), not an agent's silence.
bool SchedulerSaidHowAgentsEnded(const JobFacts& facts) {
  return facts.scheduler.end || !facts.scheduler.agent_task_exits.empty();
}

}  // namespace

std::vector<std::int32_t> PeerErrorExits(const JobFacts& facts) {
  std::vector<std::int32_t> out;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    if (rf.exit_event && rf.peer_error && !rf.python_error && rf.timeouts == 0) out.push_back(r);
  }
  return out;
}

bool OnePeerErrorForAll(const JobFacts& facts, const std::vector<std::int32_t>& victims) {
  for (std::int32_t r : victims) {
    if (facts.ranks[r].peer_error != facts.ranks[victims.front()].peer_error) return false;
  }
  return victims.size() > 1;
}

std::int32_t UnrankedOwnErrorBefore(const Incident& inc, const JobFacts& facts, std::int32_t victim) {
  for (std::int32_t i : facts.unranked.own_errors) {
    if (BeforeInStream(inc, i, *facts.ranks[victim].exit_event)) return i;
  }
  return -1;
}

bool DiagnoseSharedConsoleExit(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::vector<std::int32_t> failed = PeerErrorExits(facts);
  if (facts.WaveSeen() || !OnePeerErrorForAll(facts, failed)) return false;
  const std::int32_t node = facts.ranks[failed.front()].node;
  if (!OneNodeHoldsJob(facts, node) || facts.nodes[node].forced_kills > 0) return false;
  for (std::int32_t r : failed) {
    if (facts.ranks[r].exit_code <= 0) return false;  // a signal: not an exit of its own code
  }
  const std::int32_t last = LastExit(inc, facts, failed);
  const std::int32_t peers = UnrankedPeerErrorsBefore(inc, last);
  if (peers >= static_cast<std::int32_t>(failed.size())) return false;  // each may be a victim
  std::int32_t own = -1;
  for (std::int32_t i : facts.unranked.own_errors) {
    if (BeforeInStream(inc, i, last)) {
      own = i;
      break;
    }
  }
  // An exit with a code of its own, unless the rank's own error says more.
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION,
          .owner = v1::OWNER_APPLICATION,
          .confidence = kConfidence},
         f);
  if (own >= 0) ClassOfOwnError(inc, inc.events[own], &f->failure_class, &f->owner);
  for (std::int32_t r : failed) {
    const Event& e = inc.events[*facts.ranks[r].exit_event];
    if (Stamped(e) && (!f->time || e.time < *f->time)) f->time = e.time;
  }
  if (own >= 0) f->evidence.push_back({own, v1::EVIDENCE_ROLE_INITIATING});
  for (std::int32_t r : failed)
    f->evidence.push_back({*facts.ranks[r].exit_event, v1::EVIDENCE_ROLE_CORROBORATING});
  const std::int32_t peer = *facts.ranks[failed.front()].peer_error;
  f->evidence.push_back({peer, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, failed, node);

  const std::string name = NodeName(inc, node);
  f->reason = Say(ReasonId::kSharedConsoleExit,
                  {{"ranks", RankList(failed)},
                   {"node", name},
                   {"exits", ExitsPhrase(inc, facts, failed)},
                   {"peer_errors", Count(peers, "error")},
                   {"peer_error", Where(inc, inc.events[peer])},
                   {"failed", Count(static_cast<std::int64_t>(failed.size()), "failed worker")}});
  Reason fix;
  if (own >= 0) {
    const std::string type(inc.str(std::get<PythonError>(inc.events[own].detail).type));
    f->reason.Add(ReasonId::kSharedConsoleOwnError,
                  {{"error", type}, {"where", Where(inc, inc.events[own])}});
    fix.Add(ReasonId::kFixOwnError, {{"error", type}, {"where", Where(inc, inc.events[own])}});
  } else {
    f->reason.Add(ReasonId::kSharedConsoleNoTraceback);
    fix.Add(ReasonId::kFindWhyExited);
  }
  f->reason.Add(ReasonId::kSharedConsoleUnknownRank, {{"node", name}});
  f->recovery.push_back({"fix_application", "", fix});
  return true;
}

bool DiagnoseOwnErrorOfOneNode(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::vector<std::int32_t> failed = PeerErrorExits(facts);
  if (facts.WaveSeen() || failed.empty()) return false;
  for (const RankFacts& r : facts.ranks) {
    if (r.python_error || r.host_cause || r.timeouts > 0) return false;
    if (r.exit_event && !r.peer_error && r.exit_code > 0)
      return false;  // an exit no peer error explains
  }
  for (std::int32_t r : failed) {
    if (facts.ranks[r].exit_code <= 0) return false;  // a signal: not an exit of its own code
  }
  for (const NodeFacts& n : facts.nodes) {
    if (n.forced_kills > 0) return false;
  }
  std::int32_t node = -1, own = -1;
  const Teardowns teardowns(inc);
  for (std::int32_t i : facts.unranked.own_errors) {
    if (teardowns.Before(inc, i)) continue;
    const std::int32_t n = inc.events[i].node;
    if (n < 0 || (node >= 0 && n != node)) return false;
    node = n;
    if (own < 0) own = i;
  }
  if (own < 0) return false;
  std::vector<std::int32_t> after;  // the node's failed workers that exited after the error
  for (std::int32_t r : failed) {
    const RankFacts& rf = facts.ranks[r];
    if (rf.node == node && BeforeInStream(inc, own, *rf.exit_event)) after.push_back(r);
  }
  if (after.empty()) return false;
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION,
          .owner = v1::OWNER_APPLICATION,
          .confidence = kConfidence},
         f);
  ClassOfOwnError(inc, inc.events[own], &f->failure_class, &f->owner);
  for (std::int32_t r : after) {
    const Event& e = inc.events[*facts.ranks[r].exit_event];
    if (Stamped(e) && (!f->time || e.time < *f->time)) f->time = e.time;
  }
  f->evidence.push_back({own, v1::EVIDENCE_ROLE_INITIATING});
  for (std::int32_t r : failed)
    f->evidence.push_back({*facts.ranks[r].exit_event, v1::EVIDENCE_ROLE_CORROBORATING});
  f->cascade = SummarizeCascade(inc, facts, failed, node);
  const std::string type(inc.str(std::get<PythonError>(inc.events[own].detail).type));
  const std::string name = NodeName(inc, node);
  f->reason = Say(ReasonId::kOwnErrorOfOneNode, {{"ranks", RankList(failed)},
                                                 {"exits", ExitsPhrase(inc, facts, failed)},
                                                 {"error", type},
                                                 {"where", Where(inc, inc.events[own])},
                                                 {"node", name}});
  Reason fix;
  fix.Add(ReasonId::kFixOwnError, {{"error", type}, {"where", Where(inc, inc.events[own])}});
  f->recovery.push_back({"fix_application", "", fix});
  return true;
}

bool DiagnoseUnresponsiveWorker(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!OnlyVictimsFailed(inc, facts)) return false;
  std::int32_t stuck = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (facts.nodes[n].forced_kills == 0) continue;
    if (stuck >= 0) return false;  // two nodes with such a worker: not this rule
    stuck = n;
  }
  if (stuck < 0) return false;
  const NodeFacts& sn = facts.nodes[stuck];
  if (sn.first_failure || sn.forced_kills != 1 || sn.signalled != 1) return false;
  // Every other agent's report is of a worker that timed out waiting on a peer, and nothing else.
  std::int32_t victim_report = -1, victim_error = -1, victims = 0;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    for (std::int32_t report : facts.nodes[n].reports) {
      const auto* wf = std::get_if<WorkerFailed>(&inc.events[report].detail);
      if (wf == nullptr || n == stuck) return false;
      const WorkerErrors w = ErrorsOf(inc, n, wf->local_rank);
      if (w.own || w.peer < 0 || !IsGlooTimeout(inc.events[w.peer]) || wf->exit_code <= 0) return false;
      if (victims++ == 0) {
        victim_report = report;
        victim_error = w.peer;
      }
    }
  }
  if (victims == 0) return false;
  std::int32_t forced = -1;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()) && forced < 0; ++i) {
    const Event& e = inc.events[i];
    const auto* ws = std::get_if<WorkerSignalled>(&e.detail);
    if (ws != nullptr && e.node == stuck && e.family == Family::kTorchrun && inc.str(ws->signal) == "SIGKILL") forced = i;
  }
  if (forced < 0) return false;
  const std::int64_t pid = std::get<WorkerSignalled>(inc.events[forced].detail).pid;
  // Stopped or stuck in the kernel: not shown to be the code's.
  Commit({.node = stuck,
          .failure_class = v1::FAILURE_CLASS_HANG,
          .owner = v1::OWNER_UNKNOWN,
          .confidence = kConfidence},
         f);
  f->evidence.push_back({forced, v1::EVIDENCE_ROLE_INITIATING});
  f->evidence.push_back({victim_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->evidence.push_back({victim_report, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, stuck);
  const std::string name = NodeName(inc, stuck);
  f->reason =
      Say(ReasonId::kUnresponsiveWorker, {{"node", name},
                                          {"pid", std::to_string(pid)},
                                          {"kill", Where(inc, inc.events[forced])},
                                          {"victims", Count(victims, "worker")},
                                          {"victim_error", Where(inc, inc.events[victim_error])}});
  f->recovery.push_back(
      {"inspect_rank", std::string(NodeHost(name)),
       Say(ReasonId::kFindWhatStoppedPid, {{"pid", std::to_string(pid)}, {"node", name}})});
  return true;
}

bool DiagnoseSilentPeerOnOneNode(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!OnlyVictimsFailed(inc, facts) || facts.world.stated > 0) return false;
  for (const NodeFacts& n : facts.nodes) {
    if (!n.reports.empty() || n.forced_kills > 0) return false;
  }
  // Slurm's allocation: one node, the same in every allocation line in hand.
  std::string host;
  for (const std::int32_t i : inc.OfKinds({Kind::kJobAllocated})) {
    const Event& e = inc.events[i];
    const std::vector<std::string> hosts = ExpandHostlist(inc.str(std::get<SlurmNote>(e.detail).node));
    if (hosts.size() != 1 || (!host.empty() && hosts.front() != host)) return false;
    host = hosts.front();
  }
  const std::int32_t node = host.empty() ? -1 : NodeOfHost(inc, host);
  if (node < 0) return false;
  std::vector<std::int32_t> victims;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    if (!rf.exit_event && !rf.peer_error) continue;
    if (!rf.exit_event || !rf.peer_error || rf.exit_code <= 0 ||
        !IsGlooTimeout(inc.events[*rf.peer_error]))
      return false;
    if (rf.node >= 0 && rf.node != node) return false;
    victims.push_back(r);
  }
  if (victims.empty()) return false;
  // Stopped, stuck in the kernel or in its code: no line says which.
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_HANG,
          .owner = v1::OWNER_UNKNOWN,
          .confidence = kConfidence},
         f);
  const RankFacts& first = facts.ranks[victims.front()];
  f->evidence.push_back({*first.peer_error, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({*first.exit_event, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  f->reason =
      Say(ReasonId::kSilentPeerOnOneNode,
          {{"ranks", std::string(victims.size() == 1 ? "Rank " : "Ranks ") + RankList(victims)},
           {"timeout", Where(inc, inc.events[*first.peer_error])},
           {"exit", Where(inc, inc.events[*first.exit_event])},
           {"host", host}});
  f->recovery.push_back({"inspect_rank", host, Say(ReasonId::kStacksOnHost, {{"host", host}})});
  return true;
}

bool DiagnoseLoneStoreLoss(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!OnlyVictimsFailed(inc, facts) || SchedulerSaidHowAgentsEnded(facts)) return false;
  std::int32_t lost = -1;  // the first agent error that says the store is gone
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.kind == Kind::kStoreError) return false;  // a worker's word on the store: FindStoreLoss's
    if (e.kind != Kind::kRendezvousError || !LostStore(inc, e)) continue;
    if (e.node < 0 || (lost >= 0 && inc.events[lost].node != e.node)) return false;  // two agents lost it
    if (lost < 0) lost = i;
  }
  if (lost < 0) return false;
  const std::int32_t node = inc.events[lost].node;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (facts.nodes[n].forced_kills > 0 || (n != node && !facts.nodes[n].reports.empty())) return false;
  }
  // Its workers that failed lost their peer to a closed connection: the peer was gone.
  std::int32_t victim_error = -1, victims = 0;
  for (const RankFacts& r : facts.ranks) {
    if (!r.exit_event && !r.peer_error) continue;
    if (!r.peer_error || r.node != node) return false;
    const Event& pe = inc.events[*r.peer_error];
    if (pe.family != Family::kGloo || pe.kind == Kind::kGlooTimeout) return false;
    if (victims++ == 0) victim_error = *r.peer_error;
  }
  if (victims == 0) return false;
  // The store's host: no line names it.
  Commit({.failure_class = v1::FAILURE_CLASS_NODE_LOSS,
          .owner = v1::OWNER_HOST,
          .confidence = kConfidence},
         f);
  f->evidence.push_back({lost, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({victim_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  const std::string name = NodeName(inc, node);
  f->reason =
      Say(ReasonId::kLoneStoreLoss, {{"node", name},
                                     {"lost", Where(inc, inc.events[lost])},
                                     {"victim_error", Where(inc, inc.events[victim_error])}});
  f->recovery.push_back({"inspect_host_logs", "", Say(ReasonId::kCheckRendezvousHost)});
  return true;
}

bool DiagnoseVanishedAgent(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!OnlyVictimsFailed(inc, facts) || SchedulerSaidHowAgentsEnded(facts)) return false;
  std::int32_t reporter = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (facts.nodes[n].forced_kills > 0) return false;
    if (facts.nodes[n].reports.empty()) continue;
    if (reporter >= 0) return false;  // two agents reported: not this rule
    reporter = n;
  }
  if (reporter < 0) return false;
  // The reported workers lost their peer to a closed connection: the peer was gone.
  std::int32_t victim_error = -1;
  for (std::int32_t report : facts.nodes[reporter].reports) {
    const auto* wf = std::get_if<WorkerFailed>(&inc.events[report].detail);
    if (wf == nullptr || wf->exit_code <= 0) return false;
    const WorkerErrors w = ErrorsOf(inc, reporter, wf->local_rank);
    if (w.own || w.peer < 0 || inc.events[w.peer].family != Family::kGloo || IsGlooTimeout(inc.events[w.peer])) return false;
    if (victim_error < 0) victim_error = w.peer;
  }
  // The other agent: its console in hand, started, then silent.
  std::int32_t silent = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    const NodeFacts& nf = facts.nodes[n];
    if (n == reporter || !nf.agent_log) continue;
    if (nf.signalled > 0 || nf.exit_barrier || silent >= 0) return false;
    silent = n;
  }
  if (silent < 0) return false;
  std::int32_t started = -1;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.node != silent) continue;
    // Its start (the store's bind) and progress are all it may say: any error or word of its end is more.
    const bool start = e.kind == Kind::kRendezvousError && !LostStore(inc, e);
    if (!start && e.signature != kNoStr) return false;
    if (start && started < 0) started = i;
  }
  if (started < 0) return false;
  Commit({.node = silent,
          .failure_class = v1::FAILURE_CLASS_NODE_LOSS,
          .owner = v1::OWNER_HOST,
          .confidence = kConfidence},
         f);
  f->evidence.push_back({victim_error, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({facts.nodes[reporter].reports.front(), v1::EVIDENCE_ROLE_CONSEQUENCE});
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its console stops
    const LogFile& file = inc.files[i];
    if (file.node == silent && file.agent && file.last_line.line > 0) f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_INITIATING});
  }
  f->cascade = SummarizeCascade(inc, facts, {}, silent);
  const std::string name = NodeName(inc, silent);
  f->reason =
      Say(ReasonId::kVanishedAgent, {{"node", name},
                                     {"started", Where(inc, inc.events[started])},
                                     {"victim_error", Where(inc, inc.events[victim_error])}});
  if (NodeHost(name).empty()) f->reason.Add(ReasonId::kNoLineNamesHost);
  f->recovery.push_back({"inspect_host_logs", std::string(NodeHost(name)),
                         Say(ReasonId::kCheckLostHost, {{"node", name}})});
  return true;
}

}  // namespace denpex::engine
