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
    if (facts.nodes[n].first_failure < 0) continue;
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

// The failed worker's only error is about a peer: it was a victim, and the rank it waited on is
// not in hand. Says so instead of naming it.
void VictimOnly(const Incident& inc, const JobFacts& facts, std::int32_t node, std::int32_t peer, Finding* f) {
  const NodeFacts& n = facts.nodes[node];
  const Event& failed = inc.events[n.first_failure];
  const auto& wf = std::get<WorkerFailed>(failed.detail);
  const std::string name = NodeName(inc, node);
  f->verdict = v1::VERDICT_INCONCLUSIVE;
  f->rank = -1;
  f->owner = v1::OWNER_UNKNOWN;
  f->cascade = SummarizeCascade(inc, facts, {}, -1);
  f->evidence.push_back({n.first_failure, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->evidence.push_back({peer, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->reason = "The torchrun agent of " + name + " reported its local rank " + std::to_string(wf.local_rank) + " (pid " +
              std::to_string(wf.pid) + ") failed with " + ExitPhrase(wf.exit_code) + " (" + Where(inc, failed) +
              "), but its only error is about a peer (" + Where(inc, inc.events[peer]) +
              "): it waited on a rank that stopped, a victim. No line names that rank (no other agent reported a failure, "
              "and no ChildFailedError table, rendezvous result or rank prefix places the workers), so the initiator is unknown.";
  f->recovery.push_back({"collect_logs", "",
                         "Collect the torchrun consoles of every agent of the job with LOGLEVEL=INFO (the rendezvous result names "
                         "each agent's global ranks) and the ChildFailedError tables: the rank that printed no timeout is the one "
                         "the others waited on."});
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
  const Event& failed = inc.events[n.first_failure];
  const auto& wf = std::get<WorkerFailed>(failed.detail);
  const std::int32_t oom = OomKillOf(inc, wf.pid);
  const std::int32_t own = OwnErrorOf(inc, node, wf.local_rank);
  if (own < 0 && oom < 0 && wf.exit_code > 0) {
    if (const std::int32_t peer = PeerErrorOf(inc, node, wf.local_rank); peer >= 0) {
      VictimOnly(inc, facts, node, peer, f);
      return true;
    }
  }
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->node = node;
  f->local_rank = wf.local_rank;
  f->confidence = kConfidence;
  if (failed.clock != Clock::kNone && !failed.time_borrowed) f->time = failed.time;
  ClassifyExit(inc, wf.exit_code, oom, own, f);
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  f->evidence.push_back({n.first_failure, v1::EVIDENCE_ROLE_INITIATING});
  if (oom >= 0) f->evidence.push_back({oom, v1::EVIDENCE_ROLE_INITIATING});
  if (own >= 0) f->evidence.push_back({own, v1::EVIDENCE_ROLE_INITIATING});
  if (!n.sigterms.empty()) f->evidence.push_back({n.sigterms.front(), v1::EVIDENCE_ROLE_CONSEQUENCE});

  const std::string name = NodeName(inc, node);
  const std::string who = "local rank " + std::to_string(wf.local_rank) + " of " + name;
  f->reason = "The torchrun agent of " + name + " reported its local rank " + std::to_string(wf.local_rank) + " (pid " +
              std::to_string(wf.pid) + ") failed with " +
              ExitPhrase(wf.exit_code) + (f->time ? " at " + ClockTime(*f->time) : "") + " (" + Where(inc, failed) + ")" +
              (oom >= 0 ? ", killed by the kernel's OOM killer (" + Where(inc, inc.events[oom]) + ")" : "") +
              (n.signalled > 0 ? ", and then sent SIGTERM to its " + Count(n.signalled, "other worker") : "") +
              ". Its global rank is unknown (no ChildFailedError table, rendezvous result or rank prefix in hand places it), and "
              "no other node's agent reported a failure, so whether a rank elsewhere stopped first cannot be checked from these logs.";
  const std::string at = f->time ? " around " + ClockTime(*f->time) : "";
  if (oom < 0 && wf.exit_code < 0) {
    f->recovery.push_back({"inspect_host_logs", std::string(NodeHost(name)),
                           "Read the kernel log of " + name + at + " (dmesg -T, journalctl -k): the OOM killer, or who sent " +
                               ExitPhrase(wf.exit_code) + " to pid " + std::to_string(wf.pid) + "."});
  } else if (own >= 0 || wf.exit_code > 0) {
    f->recovery.push_back({"fix_application", "", "Read the traceback of " + who + " and fix the error before resuming."});
  }
  f->recovery.push_back({"collect_logs", "",
                         "Collect the torchrun consoles (or --log_dir trees) of the job's other nodes and the rest of this one's "
                         "(its ChildFailedError table names the global rank): they say whether " + who +
                             " stopped first and which global rank it was."});
  return true;
}

}  // namespace denpex::engine
