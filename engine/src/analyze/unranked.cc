#include "analyze/unranked.h"

#include <algorithm>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/hardware.h"

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
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = node;
  f->confidence = kConfidence;
  f->failure_class = v1::FAILURE_CLASS_PYTHON_EXCEPTION;  // an exit with a code of its own
  f->owner = v1::OWNER_APPLICATION;
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

}  // namespace denpex::engine
