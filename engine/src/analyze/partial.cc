#include "analyze/partial.h"

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "ingest/identity.h"

namespace denpex::engine {
namespace {

// The launcher's word alone (no rank's own line, no wave to order it against): lower than a
// ranked launcher exit's 0.85.
constexpr double kConfidence = 0.6;

// The one node whose agent reported a worker failure; -1 when none or several did.
std::int32_t OnlyReportingNode(const JobFacts& facts) {
  std::int32_t only = -1;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(facts.nodes.size()); ++n) {
    if (!facts.nodes[n].first_failure) continue;
    if (only >= 0) return -1;
    only = n;
  }
  return only;
}

// The kernel OOM killer's line about the worker's pid.
std::int32_t OomKillOf(const Incident& inc, std::int64_t pid) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const auto* k = std::get_if<OomKill>(&inc.events[i].detail);
    if (k != nullptr && inc.events[i].kind == Kind::kOomKill && pid > 0 && k->pid == pid) return i;
  }
  return -1;
}

// The worker's own exception: the first unchained Python error of its `[default<L>]:` lines.
std::int32_t OwnErrorOf(const Incident& inc, std::int32_t node, std::int32_t local_rank) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    const auto* pe = std::get_if<PythonError>(&e.detail);
    if (pe == nullptr || pe->chained || e.node != node || e.local_rank != local_rank) continue;
    if (e.family == Family::kPython || e.family == Family::kCuda || e.family == Family::kCudaOom) return i;
  }
  return -1;
}

// The worker's error about a peer (a gloo timeout waiting on one, a closed connection, a NCCL
// error) among its `[default<L>]:` lines: the first, or -1.
std::int32_t PeerErrorOf(const Incident& inc, std::int32_t node, std::int32_t local_rank) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.node == node && e.local_rank == local_rank && IsPeerError(e)) return i;
  }
  return -1;
}

// A console the agent shares with its workers untagged (no `[default<L>]:` tags): its first error
// about a peer, when no other error there is a worker's own; as far as its lines tell, the failed
// worker's. -1 otherwise.
std::int32_t SharedConsolePeerError(const Incident& inc, const Event& failed) {
  if (inc.files[failed.file].local_tags) return -1;
  std::int32_t peer = -1;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    const Event& e = inc.events[i];
    if (e.file != failed.file || e.local_rank >= 0) continue;
    if (IsPeerError(e)) {
      if (peer < 0) peer = i;
      continue;
    }
    const auto* pe = std::get_if<PythonError>(&e.detail);
    if (pe != nullptr && !pe->chained &&
        (e.family == Family::kPython || e.family == Family::kCuda ||
         e.family == Family::kCudaOom)) {
      return -1;
    }
  }
  return peer;
}

// The failed worker's only error is about a peer: it was a victim, and the rank it waited on is
// not in hand. Says so instead of naming it.
void VictimOnly(const Incident& inc, const JobFacts& facts, std::int32_t node, std::int32_t peer, Finding* f) {
  const NodeFacts& n = facts.nodes[node];
  const Event& failed = inc.events[*n.first_failure];
  const auto& wf = std::get<WorkerFailed>(failed.detail);
  const std::string name = NodeName(inc, node);
  Commit({.owner = v1::OWNER_UNKNOWN, .verdict = v1::VERDICT_INCONCLUSIVE}, f);
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->evidence.push_back({*n.first_failure, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->evidence.push_back({peer, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->reason =
      Say(ReasonId::kAgentReportedWorkerFailed, {{"node", name},
                                                 {"local_rank", std::to_string(wf.local_rank)},
                                                 {"pid", std::to_string(wf.pid)},
                                                 {"exit", ExitPhrase(wf.exit_code)}});
  f->reason.Add(ReasonId::kOnlyPeerError,
                {{"where", Where(inc, failed)}, {"peer", Where(inc, inc.events[peer])}});
  f->recovery.push_back({"collect_logs", "", Say(ReasonId::kCollectEveryAgentConsole)});
}

void ClassifyExit(const Incident& inc, std::int32_t exit_code, std::int32_t oom, std::int32_t own, Finding* f) {
  if (oom >= 0) {
    HostCauseOf(inc.events[oom], &f->failure_class, &f->owner);
  } else if (exit_code == -11 || exit_code == -7) {
    f->failure_class = v1::FAILURE_CLASS_SEGFAULT;
    f->owner = v1::OWNER_APPLICATION;
  } else if (exit_code > 0) {
    f->failure_class = own >= 0 && inc.events[own].family == Family::kCudaOom ? v1::FAILURE_CLASS_CUDA_OOM
                       : own >= 0 && inc.events[own].family == Family::kCuda  ? v1::FAILURE_CLASS_CUDA_ERROR
                                                                              : v1::FAILURE_CLASS_PYTHON_EXCEPTION;
    f->owner = v1::OWNER_APPLICATION;
  } else {
    f->failure_class = v1::FAILURE_CLASS_SIGNAL_KILL;  // the launcher does not say who sent it
    f->owner = v1::OWNER_UNKNOWN;
  }
}

}  // namespace

bool DiagnoseUnrankedFailure(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::int32_t node = OnlyReportingNode(facts);
  if (node < 0 || facts.nodes[node].failed_rank >= 0) return false;
  const NodeFacts& n = facts.nodes[node];
  const Event& failed = inc.events[*n.first_failure];
  const auto& wf = std::get<WorkerFailed>(failed.detail);
  const std::int32_t oom = OomKillOf(inc, wf.pid);
  const std::int32_t own = OwnErrorOf(inc, node, wf.local_rank);
  if (own < 0 && oom < 0 && wf.exit_code > 0) {
    std::int32_t peer = PeerErrorOf(inc, node, wf.local_rank);
    if (peer < 0) peer = SharedConsolePeerError(inc, failed);
    if (peer >= 0) {
      VictimOnly(inc, facts, node, peer, f);
      return true;
    }
  }
  Commit({.node = node, .local_rank = wf.local_rank, .confidence = kConfidence}, f);
  if (failed.clock != Clock::kNone && !failed.time_borrowed) f->time = failed.time;
  ClassifyExit(inc, wf.exit_code, oom, own, f);
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  f->evidence.push_back({*n.first_failure, v1::EVIDENCE_ROLE_INITIATING});
  if (oom >= 0) f->evidence.push_back({oom, v1::EVIDENCE_ROLE_INITIATING});
  if (own >= 0) f->evidence.push_back({own, v1::EVIDENCE_ROLE_INITIATING});
  if (!n.sigterms.empty()) f->evidence.push_back({n.sigterms.front(), v1::EVIDENCE_ROLE_CONSEQUENCE});

  const std::string name = NodeName(inc, node);
  const std::string local_rank = std::to_string(wf.local_rank);
  f->reason = Say(ReasonId::kAgentReportedWorkerFailed, {{"node", name},
                                                         {"local_rank", local_rank},
                                                         {"pid", std::to_string(wf.pid)},
                                                         {"exit", ExitPhrase(wf.exit_code)}});
  if (f->time) f->reason.Add(ReasonId::kAtTime, {{"time", ClockTime(*f->time)}});
  f->reason.Add(ReasonId::kCitedInParentheses, {{"where", Where(inc, failed)}});
  if (oom >= 0)
    f->reason.Add(ReasonId::kKilledByOomKiller, {{"where", Where(inc, inc.events[oom])}});
  if (n.signalled > 0)
    f->reason.Add(ReasonId::kThenSigtermOthers, {{"others", Count(n.signalled, "other worker")}});
  f->reason.Add(ReasonId::kGlobalRankUnknown);
  if (oom < 0 && wf.exit_code < 0) {
    std::vector<ReasonArg> args = {
        {"node", name}, {"exit", ExitPhrase(wf.exit_code)}, {"pid", std::to_string(wf.pid)}};
    if (f->time) args.push_back({"time", ClockTime(*f->time)});
    f->recovery.push_back({"inspect_host_logs", std::string(NodeHost(name)),
                           Say(f->time ? ReasonId::kReadKernelLogAround : ReasonId::kReadKernelLog,
                               std::move(args))});
  } else if (own >= 0 || wf.exit_code > 0) {
    f->recovery.push_back(
        {"fix_application", "",
         Say(ReasonId::kReadWorkerTraceback, {{"local_rank", local_rank}, {"node", name}})});
  }
  f->recovery.push_back(
      {"collect_logs", "",
       Say(ReasonId::kCollectOtherConsoles, {{"local_rank", local_rank}, {"node", name}})});
  return true;
}

}  // namespace denpex::engine
