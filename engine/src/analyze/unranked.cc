#include "analyze/unranked.h"

#include <algorithm>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/hardware.h"
#include "analyze/ib_ports.h"
#include "analyze/store.h"
#include "ingest/identity.h"

namespace denpex::engine {
namespace {

// A coarser answer than a rank: the lines support it, but name no rank.
constexpr double kConfidence = 0.6;

// Commits `f` to that answer: no rank, `node` (-1: none named), the class and owner.
void AnswerWithoutRank(std::int32_t node, v1::FailureClass failure_class, v1::Owner owner,
                       Finding* f) {
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = node;
  f->failure_class = failure_class;
  f->owner = owner;
  f->confidence = kConfidence;
}

bool Stamped(const Event& e) { return e.clock != Clock::kNone && !e.time_borrowed; }

// True when every rank the logs know sits on `node`: one host holds the job.
bool OneNodeHoldsJob(const JobFacts& facts, std::int32_t node) {
  return node >= 0 && std::all_of(facts.ranks.begin(), facts.ranks.end(), [&](const RankFacts& r) { return r.node == node; });
}

// The exit line of `failed` that comes last in their console.
std::int32_t LastExit(const Incident& inc, const JobFacts& facts, const std::vector<std::int32_t>& failed) {
  std::int32_t last = facts.ranks[failed.front()].exit_event;
  for (std::int32_t r : failed) {
    if (BeforeInStream(inc, last, facts.ranks[r].exit_event)) last = facts.ranks[r].exit_event;
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
  for (std::int32_t r : failed) where += (where.empty() ? "" : ", ") + Where(inc, inc.events[facts.ranks[r].exit_event]);
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

// An error printed after its agent had begun to end the workers (its `failed` report or a
// `Sending process P closing signal` line earlier in the same stream): the teardown's, such as
// the agent's own SignalException once an operator stopped it.
bool AfterTeardown(const Incident& inc, std::int32_t error) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& t = inc.events[i];
    if (t.family != Family::kTorchrun || !BeforeInStream(inc, i, error)) continue;
    if (std::holds_alternative<WorkerFailed>(t.detail) || std::holds_alternative<WorkerSignalled>(t.detail)) return true;
  }
  return false;
}

// No rank failed on its own: no error of its own (but the teardown's), no host cause, no exit
// that no peer error explains.
bool OnlyVictimsFailed(const Incident& inc, const JobFacts& facts) {
  if (facts.HasWave()) return false;
  for (std::int32_t i : facts.unranked_own_errors) {
    if (!AfterTeardown(inc, i)) return false;
  }
  return std::none_of(facts.ranks.begin(), facts.ranks.end(), [](const RankFacts& r) {
    return r.python_error >= 0 || r.host_cause >= 0 || (r.exit_event >= 0 && r.peer_error < 0);
  });
}

// srun or the scheduler said how agents ended (srun's `task N: Killed` of an agent's task, a
// cancellation): their word decides (KilledAgentTask, SchedulerEndedJob), not an agent's silence.
bool SchedulerSaidHowAgentsEnded(const JobFacts& facts) { return facts.scheduler_end >= 0 || !facts.agent_task_exits.empty(); }

}  // namespace

std::vector<std::int32_t> PeerErrorExits(const JobFacts& facts) {
  std::vector<std::int32_t> out;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    if (rf.exit_event >= 0 && rf.peer_error >= 0 && rf.python_error < 0 && rf.timeouts == 0) out.push_back(r);
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
  for (std::int32_t i : facts.unranked_own_errors) {
    if (BeforeInStream(inc, i, facts.ranks[victim].exit_event)) return i;
  }
  return -1;
}

bool DiagnoseSharedConsoleExit(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::vector<std::int32_t> failed = PeerErrorExits(facts);
  if (facts.HasWave() || !OnePeerErrorForAll(facts, failed)) return false;
  const std::int32_t node = facts.ranks[failed.front()].node;
  if (!OneNodeHoldsJob(facts, node) || facts.nodes[node].forced_kills > 0) return false;
  for (std::int32_t r : failed) {
    if (facts.ranks[r].exit_code <= 0) return false;  // a signal: not an exit of its own code
  }
  const std::int32_t last = LastExit(inc, facts, failed);
  const std::int32_t peers = UnrankedPeerErrorsBefore(inc, last);
  if (peers >= static_cast<std::int32_t>(failed.size())) return false;  // each may be a victim
  std::int32_t own = -1;
  for (std::int32_t i : facts.unranked_own_errors) {
    if (BeforeInStream(inc, i, last)) {
      own = i;
      break;
    }
  }
  // An exit with a code of its own, unless the rank's own error says more.
  AnswerWithoutRank(node, v1::FAILURE_CLASS_PYTHON_EXCEPTION, v1::OWNER_APPLICATION, f);
  if (own >= 0) ClassOfOwnError(inc, inc.events[own], &f->failure_class, &f->owner);
  for (std::int32_t r : failed) {
    const Event& e = inc.events[facts.ranks[r].exit_event];
    if (Stamped(e) && (!f->time || e.time < *f->time)) f->time = e.time;
  }
  if (own >= 0) f->evidence.push_back({own, v1::EVIDENCE_ROLE_INITIATING});
  for (std::int32_t r : failed) f->evidence.push_back({facts.ranks[r].exit_event, v1::EVIDENCE_ROLE_CORROBORATING});
  const std::int32_t peer = facts.ranks[failed.front()].peer_error;
  f->evidence.push_back({peer, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, failed, node);

  const std::string name = NodeName(inc, node);
  const std::string what =
      own >= 0 ? "raised " + std::string(inc.str(std::get<PythonError>(inc.events[own].detail).type)) + " (" + Where(inc, inc.events[own]) + ")"
               : "exited with an error code and no traceback (no error of its own is recognised there: a `sys.exit(1)` "
                 "or an error the script printed as plain text)";
  f->reason = "Ranks " + RankList(failed) + " on " + name + " exited with an error code (" + ExitsPhrase(inc, facts, failed) +
              ") on a console they share with their agent, whose lines carry no rank. The console holds " +
              Count(peers, "error") + " about a peer (" + Where(inc, inc.events[peer]) + ", a victim's) for " +
              Count(static_cast<std::int64_t>(failed.size()), "failed worker") +
              ", so at least one of them failed on its own: it " + what + ", and " + name +
              " holds every rank of the job, so nothing else stopped first. Which rank it was is not known: a rank prefix "
              "(torchrun --tee 3, torch >= 2.4's `[rank<G>]:`) or per-rank logs (torchrun --log-dir) would tell; torchrun's "
              "`Root Cause` orders exits by one-second times and names the lowest rank on a tie.";
  f->recovery.push_back({"fix_application", "",
                         own >= 0 ? "Fix the " + std::string(inc.str(std::get<PythonError>(inc.events[own].detail).type)) + " (" +
                                        Where(inc, inc.events[own]) + ") before resuming: the job will fail again the same way."
                                  : "Find why a worker exited with an error code before resuming (the lines the script printed just "
                                    "before the exits): the job will fail again the same way."});
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
  if (sn.first_failure >= 0 || sn.forced_kills != 1 || sn.signalled != 1) return false;
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
  AnswerWithoutRank(stuck, v1::FAILURE_CLASS_HANG, v1::OWNER_UNKNOWN, f);
  f->evidence.push_back({forced, v1::EVIDENCE_ROLE_INITIATING});
  f->evidence.push_back({victim_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->evidence.push_back({victim_report, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, stuck);
  const std::string name = NodeName(inc, stuck);
  f->reason = "The torchrun agent of " + name + " had to SIGKILL its worker (pid " + std::to_string(pid) +
              ") when it tore it down, because SIGTERM did not end it (" + Where(inc, inc.events[forced]) +
              "): that worker was stopped or stuck in the kernel, alive but not participating. " + Count(victims, "worker") +
              " of other agents failed only on a gloo timeout waiting on a peer (" + Where(inc, inc.events[victim_error]) +
              "), a victim's, and nothing else failed: the unresponsive worker is the one they waited on, a hang. Its global "
              "rank is not known: no line (the rendezvous result with LOGLEVEL=INFO, a ChildFailedError entry of its agent, a "
              "`[rank<G>]:` prefix) gives it.";
  f->recovery.push_back({"inspect_rank", std::string(NodeHost(name)),
                         "Find what stopped pid " + std::to_string(pid) + " on " + name +
                             " (a SIGSTOP, a debugger, D state: its kernel log and the node's storage and GPU) before restarting; "
                             "the workers that timed out waiting on it need no action of their own."});
  return true;
}

bool DiagnoseSilentPeerOnOneNode(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!OnlyVictimsFailed(inc, facts) || facts.stated_world > 0) return false;
  for (const NodeFacts& n : facts.nodes) {
    if (!n.reports.empty() || n.forced_kills > 0) return false;
  }
  // Slurm's allocation: one node, the same in every allocation line in hand.
  std::string host;
  for (const Event& e : inc.events) {
    if (e.kind != Kind::kJobAllocated) continue;
    const std::vector<std::string> hosts = ExpandHostlist(inc.str(std::get<SlurmNote>(e.detail).node));
    if (hosts.size() != 1 || (!host.empty() && hosts.front() != host)) return false;
    host = hosts.front();
  }
  const std::int32_t node = host.empty() ? -1 : NodeOfHost(inc, host);
  if (node < 0) return false;
  std::vector<std::int32_t> victims;
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(facts.ranks.size()); ++r) {
    const RankFacts& rf = facts.ranks[r];
    if (rf.exit_event < 0 && rf.peer_error < 0) continue;
    if (rf.exit_event < 0 || rf.peer_error < 0 || rf.exit_code <= 0 || !IsGlooTimeout(inc.events[rf.peer_error])) return false;
    if (rf.node >= 0 && rf.node != node) return false;
    victims.push_back(r);
  }
  if (victims.empty()) return false;
  // Stopped, stuck in the kernel or in its code: no line says which.
  AnswerWithoutRank(node, v1::FAILURE_CLASS_HANG, v1::OWNER_UNKNOWN, f);
  const RankFacts& first = facts.ranks[victims.front()];
  f->evidence.push_back({first.peer_error, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({first.exit_event, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  f->reason = "Rank" + std::string(victims.size() == 1 ? " " : "s ") + RankList(victims) + " timed out in gloo waiting on a peer (" +
              Where(inc, inc.events[first.peer_error]) + ") and exited (" + Where(inc, inc.events[first.exit_event]) +
              "), a victim's end; the peer waited on was alive but silent (a peer that died closes the connection), never exited "
              "on its own and printed nothing. Slurm allocated the job one node, " + host +
              ", so that peer ran there: a hang on " + host + ". Which rank it was is not known: no line states the world size "
              "or names the other ranks (srun reports only the tasks that exited); nor whether it was stopped or stuck in its code.";
  f->recovery.push_back({"inspect_rank", host,
                         "Take the stacks of the job's processes on " + host + " (py-spy dump) when it hangs again, and check its "
                             "kernel log for a process stopped or in D state; run with srun --label and LOGLEVEL=INFO so the lines "
                             "name every rank."});
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
    if (r.exit_event < 0 && r.peer_error < 0) continue;
    if (r.peer_error < 0 || r.node != node) return false;
    const Event& pe = inc.events[r.peer_error];
    if (pe.family != Family::kGloo || pe.kind == Kind::kGlooTimeout) return false;
    if (victims++ == 0) victim_error = r.peer_error;
  }
  if (victims == 0) return false;
  // The store's host: no line names it.
  AnswerWithoutRank(-1, v1::FAILURE_CLASS_NODE_LOSS, v1::OWNER_HOST, f);
  f->evidence.push_back({lost, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({victim_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  const std::string name = NodeName(inc, node);
  f->reason = "The torchrun agent of " + name + " lost the c10d rendezvous store (" + Where(inc, inc.events[lost]) +
              ": an agent cannot lose a store it hosts, so another agent hosted it) after its worker lost its peer to a closed "
              "connection (" + Where(inc, inc.events[victim_error]) +
              "): the peer was gone, not silent. No agent reported a worker that failed on its own, and nothing else failed: the "
              "store's host, another agent, and that agent's worker vanished together, as when their node is lost (power, "
              "kernel, an operator's kill of the whole process tree). Which host it was, no line says (the rendezvous endpoint "
              "and the agents' `host` fields name no machine).";
  f->recovery.push_back({"inspect_host_logs", "",
                         "Find the host of the job's rendezvous endpoint (--rdzv_endpoint) and check it (the kernel log for the OOM "
                         "killer or a panic, its power and BMC event log) before returning it to service; restart the job without it "
                         "if it was lost."});
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
    if (nf.signalled > 0 || nf.exit_barrier >= 0 || silent >= 0) return false;
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
  AnswerWithoutRank(silent, v1::FAILURE_CLASS_NODE_LOSS, v1::OWNER_HOST, f);
  f->evidence.push_back({victim_error, v1::EVIDENCE_ROLE_CORROBORATING});
  f->evidence.push_back({facts.nodes[reporter].reports.front(), v1::EVIDENCE_ROLE_CONSEQUENCE});
  for (std::uint32_t i = 0; i < inc.files.size(); ++i) {  // where its console stops
    const LogFile& file = inc.files[i];
    if (file.node == silent && file.agent && file.last_line.line > 0) f->lines.push_back({i, file.last_line, v1::EVIDENCE_ROLE_INITIATING});
  }
  f->cascade = SummarizeCascade(inc, facts, {}, silent);
  const std::string name = NodeName(inc, silent);
  f->reason = "The torchrun agent of " + name + " started (" + Where(inc, inc.events[started]) +
              ": its c10d rendezvous) and then wrote nothing: no failure report, no signal, no exit barrier. The other agent's "
              "worker lost its peer to a closed connection (" + Where(inc, inc.events[victim_error]) +
              "): the peer was gone, not silent, and nothing else failed. An agent whose worker died alone reports it; " + name +
              "'s agent vanished with its workers, as when its node is lost (power, kernel, an operator's kill of the whole "
              "process tree)." + (NodeHost(name).empty() ? " No line names its host." : "");
  f->recovery.push_back({"inspect_host_logs", std::string(NodeHost(name)),
                         "Check the host of " + name + " (the kernel log for the OOM killer or a panic, its power and BMC event log) "
                             "before returning it to service; restart the job without it if it was lost."});
  return true;
}

}  // namespace denpex::engine
