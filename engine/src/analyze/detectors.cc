// The detector table: which answer wins when several could be given. Each row says when it
// answers and calls the detector's own Find*/Diagnose* (their files say what they find); the
// rows' order is the engine's precedence, and each row's comment says why it sits where it does.
#include "analyze/detectors.h"

#include <array>

#include "analyze/ib_ports.h"
#include "analyze/job_end.h"
#include "analyze/network.h"
#include "analyze/partial.h"
#include "analyze/participation.h"
#include "analyze/platform.h"
#include "analyze/store.h"
#include "analyze/straggler.h"
#include "analyze/unranked.h"

namespace denpex::engine {
namespace {

// Before the wait analysis.

bool AnswerSchedulerFailedNode(const Incident& inc, const JobFacts& facts, Finding* f) {
  if (!SchedulerFailedNode(inc, facts, f)) return false;
  f->recovery.push_back({"restart_job", "", Say(ReasonId::kRestartNothingFailed)});
  NoteRequeue(inc, facts, f);
  return true;
}

bool AnswerStoreJoinGap(const Incident& inc, const JobFacts& facts, Finding* f) {
  const std::optional<StoreJoinGap> join = FindStoreJoinGap(inc, facts);
  if (join) DiagnoseStoreJoinGap(inc, facts, *join, f);
  return join.has_value();
}

// After the wait analysis.

bool AnswerPlatformEndedJob(const Analysis& a, Finding* f) {
  return PlatformEndedJob(a.inc, a.facts, f);
}

bool AnswerRendezvousGap(const Analysis& a, Finding* f) {
  const std::optional<RendezvousGap> gap = FindRendezvousGap(a.inc, a.facts);
  if (gap) DiagnoseRendezvousGap(a.inc, a.facts, *gap, f);
  return gap.has_value();
}

bool AnswerStoreLoss(const Analysis& a, Finding* f) {
  const std::optional<StoreLoss> store = FindStoreLoss(a.inc, a.facts);
  if (store) DiagnoseStoreLoss(a.inc, a.facts, *store, f);
  return store.has_value();
}

bool AnswerNcclSetup(const Analysis& a, Finding* f) {
  const std::optional<SetupFailure> setup = FindNcclSetup(a.inc, a.facts);
  if (setup) DiagnoseNcclSetup(a.inc, a.facts, *setup, f);
  return setup.has_value();
}

bool AnswerSlowPort(const Analysis& a, Finding* f) {
  if (!a.scores.empty()) return false;
  const std::optional<SlowPort> port = FindSlowPort(a.inc, a.facts);
  if (port) DiagnoseSlowPort(a.inc, a.facts, *port, f);
  return port.has_value();
}

bool AnswerLostNode(const Analysis& a, Finding* f) {
  if (a.lost_node < 0) return false;
  DiagnoseNodeLoss(a.inc, a.facts, a.lost_node, f);
  return true;
}

bool AnswerKilledAgentTask(const Analysis& a, Finding* f) {
  const std::int32_t task = KilledAgentTask(a.inc, a.facts);
  if (task < 0) return false;
  DiagnoseKilledAgentTask(a.inc, a.facts, task, f);
  return true;
}

bool AnswerLostAgent(const Analysis& a, Finding* f) {
  const std::int32_t agent = a.scores.empty() ? LostAgent(a.facts) : -1;
  if (agent < 0) return false;
  DiagnoseLostAgent(a.inc, a.facts, agent, f);
  return true;
}

bool AnswerLinkFault(const Analysis& a, Finding* f) {
  const std::optional<LinkFault> link = FindLinkFault(a.inc, a.facts, a.clocks);
  if (link) DiagnoseLinkFault(a.inc, a.facts, *link, f);
  return link.has_value();
}

bool AnswerNetworkFault(const Analysis& a, Finding* f) {
  const std::optional<NetworkFault> net = FindNetworkFault(a.inc, a.facts);
  if (net) DiagnoseNetworkFault(a.inc, a.facts, *net, f);
  return net.has_value();
}

bool AnswerStepStraggler(const Analysis& a, Finding* f) {
  return a.scores.empty() && !a.facts.WaveSeen() && FindStraggler(a.inc, a.facts, f);
}

// The rows that answer only when no rank scores, at the level the lines support.
bool AnswerLoneStoreLoss(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseLoneStoreLoss(a.inc, a.facts, f);
}
bool AnswerVanishedAgent(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseVanishedAgent(a.inc, a.facts, f);
}
bool AnswerUnresponsiveWorker(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseUnresponsiveWorker(a.inc, a.facts, f);
}
bool AnswerUnrankedFailure(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseUnrankedFailure(a.inc, a.facts, f);
}
bool AnswerOwnErrorOfOneNode(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseOwnErrorOfOneNode(a.inc, a.facts, f);
}
bool AnswerSharedConsoleExit(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseSharedConsoleExit(a.inc, a.facts, f);
}
bool AnswerSilentPeerOnOneNode(const Analysis& a, Finding* f) {
  return a.scores.empty() && DiagnoseSilentPeerOnOneNode(a.inc, a.facts, f);
}

// clang-format off
constexpr std::array<FactsDetector, 4> kBeforeWaits{{
  // The scheduler ended the job before any rank failed: that outranks everything the ranks say.
  {"scheduler_ended_job", SchedulerEndedJob},
  // Slurm declared a node failed though the job trained on: its slurmd failed, not the ranks.
  {"scheduler_failed_node", AnswerSchedulerFailedNode},
  // A node never joined the static store: before job_wide_error, the joined ranks all fail alike.
  {"store_join_gap", AnswerStoreJoinGap},
  // Every rank raised the same error of its own: the job, not one rank; no wave to analyse.
  {"job_wide_error", JobWideError},
}};

constexpr std::array<AnalysisDetector, 28> kAfterWaits{{
  // The platform (Kubernetes, Ray) ended the job: its word comes right after the scheduler's.
  {"platform_ended_job", AnswerPlatformEndedJob},
  // A node never joined the rendezvous: the other agents' rendezvous timeouts wait for it.
  {"rendezvous_gap", AnswerRendezvousGap},
  // The c10d store's host was lost: the others' store errors are its victims', whatever they score.
  {"store_loss", AnswerStoreLoss},
  // NCCL set-up failed on one node (interface, bootstrap connect, duplicate GPU): the rest follows.
  {"nccl_setup", AnswerNcclSetup},
  // A slow NIC when no rank scores: the timers name no rank, its port's counters do.
  {"slow_port", AnswerSlowPort},
  // A straggler from the timers that explains the stall, before the lost node it could look like.
  {"stalled_straggler", AnswerStalledStraggler},
  // The leaders sit on one node, all its ranks silent, that Slurm or its agent log says was lost.
  {"lost_node", AnswerLostNode},
  // srun killed a torchrun agent's task, and its workers with it: the victims' errors follow.
  {"killed_agent_task", AnswerKilledAgentTask},
  // No rank scores; one agent's log stops after its start while another waits at the exit barrier.
  {"lost_agent", AnswerLostAgent},
  // One hot cell of the IB error matrix: a bad link, before the failed NIC it would also look like.
  {"link_fault", AnswerLinkFault},
  // A failed NIC's row and column of the IB or socket error matrix.
  {"network_fault", AnswerNetworkFault},
  // No rank scores and no wave: a straggler from the step lines alone; its answer is complete.
  {"step_straggler", AnswerStepStraggler, true},
  // No rank scores (below, up to no_candidate): the answers at the node or job level.
  // The one agent left lost the store another agent hosted.
  {"lone_store_loss", AnswerLoneStoreLoss},
  // An agent's console stops after its start, the other agent's worker's peer gone.
  {"vanished_agent", AnswerVanishedAgent},
  // A worker its agent had to SIGKILL, the others' gloo timeouts waiting on it.
  {"unresponsive_worker", AnswerUnresponsiveWorker},
  // Only the launcher's word on a local rank of one node.
  {"unranked_failure", AnswerUnrankedFailure},
  // Workers sharing one console failed, fewer of them lost a peer than failed.
  {"shared_console_exit", AnswerSharedConsoleExit},
  // Workers of several nodes failed on a peer; the one error of a worker's own sits on one node.
  {"own_error_of_one_node", AnswerOwnErrorOfOneNode},
  // Gloo timeouts waiting on a silent peer, on the one node Slurm allocated.
  {"silent_peer_on_one_node", AnswerSilentPeerOnOneNode},
  // No rank scores and nothing above answered: INCONCLUSIVE, saying what the logs show.
  {"no_candidate", AnswerNoCandidate},
  // From here on some rank scores. A rank no line places may lead: no placed rank is named.
  {"unplaced_may_lead", AnswerUnplacedMayLead},
  // A link failed under a process no line names: the leaders may be its victims.
  {"unplaced_link_error", AnswerUnplacedLinkError},
  // Few of the ranks that timed out waited on the leader: the wave did not start from it.
  {"few_waiters", AnswerFewWaiters},
  // The top score clearly leads: that rank.
  {"leader", AnswerLeader},
  // Scores tie: the only one that is a collective's sole missing member.
  {"sole_blocker", AnswerSoleBlocker},
  // Scores tie: the one whose blocked collectives started clearly first.
  {"first_to_stall", AnswerFirstToStall},
  // Scores tie between exits of one node that several of its processes' unranked errors explain:
  // the node (what `leader` answers for one such exit).
  {"tied_exits_of_one_node", AnswerTiedExitsOfOneNode},
  // Scores tie and nothing separates them: answers whenever some rank scores.
  {"undecided", AnswerUndecided},
}};
// clang-format on

}  // namespace

std::span<const FactsDetector> DetectorsBeforeWaits() { return kBeforeWaits; }
std::span<const AnalysisDetector> DetectorsAfterWaits() { return kAfterWaits; }

}  // namespace denpex::engine
