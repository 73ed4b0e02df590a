// The c10d store's host lost (see store.h).
#include "analyze/store.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/job_end.h"
#include "incident/each_event.h"

namespace denpex::engine {
namespace {

// A phrase looked for in every exception message, found where string_view::find finds it (its
// first occurrence) by Boyer-Moore-Horspool: find's memchr stops at each of the phrase's first
// character, a space or a common letter, in a million messages of a 131k-rank job (~20 ms of
// FindStoreJoinGap for two phrases); the skip table lets it read a fraction of the bytes.
class Phrase {
 public:
  explicit Phrase(std::string_view phrase) : searcher_(phrase.begin(), phrase.end()) {}
  std::size_t In(std::string_view text) const {
    const auto at = std::search(text.begin(), text.end(), searcher_);
    return at == text.end() ? std::string_view::npos : static_cast<std::size_t>(at - text.begin());
  }

 private:
  std::boyer_moore_horspool_searcher<std::string_view::const_iterator> searcher_;
};

// `... remote=[gpu-0001]:29500): ...` -> "gpu-0001" (lower-cased); empty when absent.
std::string RemoteHost(std::string_view text) {
  const std::size_t at = text.find("remote=[");
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + 8);
  std::string host(rest.substr(0, rest.find(']')));
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return host;
}

std::int32_t NodeOfEvent(const JobFacts& facts, const Event& e) {
  if (e.rank >= 0 && e.rank < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[e.rank].node >= 0) {
    return facts.ranks[e.rank].node;
  }
  return e.node;
}

// A rendezvous error's words: the exception's type and message, or the line's text.
std::string RendezvousText(const Incident& inc, const Event& e) {
  if (const auto* p = std::get_if<PythonError>(&e.detail)) return std::string(inc.str(p->type)) + ": " + std::string(inc.str(p->message));
  if (const auto* n = std::get_if<Note>(&e.detail)) return std::string(inc.str(n->text));
  return {};
}


// The agent could not reach the endpoint at all.
bool CouldNotConnect(const Incident& inc, const Event& e) {
  const std::string text = RendezvousText(inc, e);
  return text.find("RendezvousConnectionError") != std::string::npos || text.find("client socket has timed out") != std::string::npos;
}

bool Earlier(const Incident& inc, std::int32_t a, std::int32_t b) {
  if (b < 0) return true;
  const Event& x = inc.events[a];
  const Event& y = inc.events[b];
  if (x.clock != Clock::kNone && y.clock != Clock::kNone && x.time != y.time) return x.time < y.time;
  return a < b;
}

}  // namespace

bool LostStore(const Incident& inc, const Event& e) {
  const std::string text = RendezvousText(inc, e);
  return text.find("RendezvousConnectionError") != std::string::npos || text.find("RendezvousClosedError") != std::string::npos;
}

std::optional<StoreLoss> FindStoreLoss(const Incident& inc, const JobFacts& facts) {
  const std::vector<std::int32_t> errors = inc.OfKinds({Kind::kRendezvousError, Kind::kStoreError});
  if (errors.empty()) return std::nullopt;  // no reporter
  std::map<std::string, std::int32_t> node_of_name;
  for (std::size_t n = 0; n < inc.nodes.size(); ++n) {
    std::string name = inc.nodes[n];
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    node_of_name.emplace(std::move(name), static_cast<std::int32_t>(n));
  }
  std::set<std::int32_t> reporters;                  // nodes with a store error of their own
  std::map<std::int32_t, std::int32_t> named, first;  // store host -> errors naming it, the earliest
  std::int32_t first_agent = -1;
  for (const std::int32_t index : errors) {
    const Event& e = inc.events[index];
    if (e.kind == Kind::kRendezvousError) {
      const std::int32_t node = NodeOfEvent(facts, e);
      if (node < 0 || !LostStore(inc, e)) continue;
      reporters.insert(node);
      if (Earlier(inc, index, first_agent)) first_agent = index;
      continue;
    }
    if (e.kind != Kind::kStoreError) continue;
    const std::int32_t node = NodeOfEvent(facts, e);
    if (node >= 0) reporters.insert(node);
    const auto* note = std::get_if<Note>(&e.detail);
    if (note == nullptr) continue;
    const auto it = node_of_name.find(RemoteHost(inc.str(note->text)));
    if (it == node_of_name.end() || it->second == node) continue;
    ++named[it->second];
    auto [at, fresh] = first.emplace(it->second, index);
    if (!fresh && Earlier(inc, index, at->second)) at->second = index;
  }
  if (reporters.size() < 2) return std::nullopt;
  StoreLoss s;
  s.reporter_nodes = static_cast<std::int32_t>(reporters.size());
  s.first_agent = first_agent;
  for (const auto& [node, count] : named) {  // the host most connections name
    if (count > s.named) {
      s.node = node;
      s.named = count;
      s.first_named = first.at(node);
    }
  }
  if (s.node >= 0) return reporters.count(s.node) == 0 ? std::optional<StoreLoss>(s) : std::nullopt;
  // No worker named it (torch <= 2.3 has no heartbeat monitor polling the store): the one node
  // with logs whose agent neither raised nor reported, while the others' agents raised.
  std::int32_t silent = -1;
  for (std::size_t n = 0; n < facts.nodes.size(); ++n) {
    const NodeFacts& nf = facts.nodes[n];
    if (!nf.agent_log || reporters.count(static_cast<std::int32_t>(n)) != 0 || !nf.reports.empty()) continue;
    if (silent >= 0) return std::nullopt;  // two candidates: undecided
    silent = static_cast<std::int32_t>(n);
  }
  if (silent < 0 || first_agent < 0) return std::nullopt;
  s.node = silent;
  return s;
}

namespace {

bool IsJoinTimeout(const Incident& inc, const Event& e) {
  const auto* p = std::get_if<PythonError>(&e.detail);
  return p != nullptr && inc.str(p->type).ends_with("RendezvousTimeoutError");
}

}  // namespace

std::optional<RendezvousGap> FindRendezvousGap(const Incident& inc, const JobFacts& facts) {
  std::set<std::int32_t> timed_out;
  std::map<std::int32_t, std::int32_t> connect;  // node -> its first other rendezvous error
  RendezvousGap g;
  for (const std::int32_t index : inc.OfKinds({Kind::kRendezvousError})) {
    const Event& e = inc.events[index];
    const std::int32_t node = NodeOfEvent(facts, e);
    if (node < 0) continue;
    if (IsJoinTimeout(inc, e)) {
      timed_out.insert(node);
      if (Earlier(inc, index, g.first_timeout)) g.first_timeout = index;
    } else if (CouldNotConnect(inc, e)) {
      // The node's first, in file order; its exception line (RendezvousConnectionError) over a
      // c10d warning before it (`[c10d] The client socket has timed out ...`).
      auto [at, fresh] = connect.emplace(node, index);
      if (!fresh && !std::holds_alternative<PythonError>(inc.events[at->second].detail) &&
          std::holds_alternative<PythonError>(e.detail)) {
        at->second = index;
      }
    }
  }
  if (timed_out.empty()) return std::nullopt;
  std::int32_t missing = -1;
  for (const auto& [node, event] : connect) {
    if (timed_out.count(node) != 0) continue;
    if (missing >= 0) return std::nullopt;  // two nodes could not connect: no one node to name
    missing = node;
    g.own_error = event;
  }
  if (missing < 0) {  // it said nothing: the one node with an agent log that did not time out
    for (std::size_t n = 0; n < facts.nodes.size(); ++n) {
      if (!facts.nodes[n].agent_log || timed_out.count(static_cast<std::int32_t>(n)) != 0) continue;
      if (missing >= 0) return std::nullopt;
      missing = static_cast<std::int32_t>(n);
    }
  }
  if (missing < 0) return std::nullopt;
  g.node = missing;
  g.timed_out = static_cast<std::int32_t>(timed_out.size());
  return g;
}

void DiagnoseRendezvousGap(const Incident& inc, const JobFacts& facts, const RendezvousGap& g, Finding* f) {
  const std::string name = NodeName(inc, g.node);
  Commit({.node = g.node,
          .failure_class = v1::FAILURE_CLASS_NCCL_SETUP,
          .owner = v1::OWNER_NETWORK,
          .confidence = g.own_error >= 0 ? 0.9 : 0.7},
         f);
  f->candidates.push_back({-1, g.node, 1.0});
  if (g.own_error >= 0) {
    f->evidence.push_back({g.own_error, v1::EVIDENCE_ROLE_INITIATING});
    const Event& e = inc.events[g.own_error];
    if (e.clock != Clock::kNone && !e.time_borrowed) f->time = e.time;
  }
  if (g.first_timeout >= 0) f->evidence.push_back({g.first_timeout, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, g.node);
  f->reason =
      Say(g.own_error >= 0 ? ReasonId::kRendezvousUnreachable : ReasonId::kRendezvousNeverJoined,
          {{"agents", std::to_string(g.timed_out)}, {"node", name}});
  f->recovery.push_back(
      {"fix_network_config", name, Say(ReasonId::kCheckRendezvousRoute, {{"node", name}})});
}

namespace {

// `Timed out after 1801 seconds waiting for clients. 1016/1024 clients joined.` -> (1016, 1024).
bool JoinCounts(std::string_view msg, std::int32_t* joined, std::int32_t* world) {
  static const Phrase kWaiting(" seconds waiting for clients. ");
  const std::size_t at = kWaiting.In(msg);
  if (at == std::string_view::npos || msg.find(" clients joined") == std::string_view::npos) return false;
  std::string_view rest = msg.substr(at + 30);
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return false;
  const auto number = [](std::string_view s, std::int32_t* out) {
    std::int32_t v = 0;
    if (s.empty() || s.size() > 9) return false;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
  };
  const std::size_t space = rest.find(' ', slash);
  return number(rest.substr(0, slash), joined) &&
         number(rest.substr(slash + 1, space == std::string_view::npos ? std::string_view::npos : space - slash - 1), world);
}

// A watchdog's error (family nccl_watchdog) is a collective's timeout or its teardown, never a
// store's: its message is not read here (a diagnosis's parse does not keep it: parse_log.h's
// Texts).
bool StoreErrorCandidate(const Event& e) { return e.family != Family::kNcclWatchdog; }

bool ClientStoreError(const Incident& inc, const Event& e) {
  const auto* p = std::get_if<PythonError>(&e.detail);
  static const Phrase kByKey("via c10d key-value store by key");
  return p != nullptr && StoreErrorCandidate(e) &&
         kByKey.In(inc.str(p->message)) != std::string_view::npos;
}

// Per node: one of its ranks printed a line of its own (a `[rank<G>]:` line, an srun task's or
// an mpirun rank's recognised line), as opposed to the launcher's words about it.
std::vector<std::uint8_t> NodesWhoseRanksSpoke(const Incident& inc, const JobFacts& facts) {
  std::vector<std::uint8_t> spoke(facts.nodes.size(), 0);
  const auto ranks = static_cast<std::int32_t>(facts.ranks.size());
  for (std::int32_t r = 0; r < ranks; ++r) {
    if (facts.ranks[r].has_log && facts.ranks[r].node >= 0) spoke[facts.ranks[r].node] = 1;
  }
  for (const Event& e : inc.events) {
    if (e.rank < 0 || e.rank >= ranks || e.kind == Kind::kRankBinding || e.family == Family::kSlurm) continue;
    const std::int32_t node = facts.ranks[e.rank].node >= 0 ? facts.ranks[e.rank].node : e.node;
    if (node >= 0) spoke[node] = 1;
  }
  return spoke;
}

// A silent node whose kernel reported hung tasks (`INFO: task python3:<pid> blocked for more than
// 120 seconds.`: its ranks blocked before they could join, a hung mount) is the one to name first.
void PreferHungNode(const Incident& inc, StoreJoinGap* g) {
  std::vector<std::int32_t> first(inc.nodes.size(), -1), count(inc.nodes.size(), 0);
  for (const std::int32_t i : inc.OfKinds({Kind::kHungTask})) {
    const Event& e = inc.events[i];
    if (e.node < 0) continue;
    if (first[e.node] < 0 || Earlier(inc, static_cast<std::int32_t>(i), first[e.node])) first[e.node] = static_cast<std::int32_t>(i);
    ++count[e.node];
  }
  std::stable_partition(g->silent.begin(), g->silent.end(), [&](std::int32_t n) { return first[n] >= 0; });
  if (g->silent.empty() || first[g->silent.front()] < 0) return;
  g->hung_task = first[g->silent.front()];
  g->hung_tasks = count[g->silent.front()];
}

}  // namespace

std::optional<StoreJoinGap> FindStoreJoinGap(const Incident& inc, const JobFacts& facts) {
  StoreJoinGap g;
  const auto short_count = [&](const Event& e, std::int32_t* joined, std::int32_t* world) {
    const auto* p = std::get_if<PythonError>(&e.detail);
    return p != nullptr && StoreErrorCandidate(e) &&
           JoinCounts(inc.str(p->message), joined, world) && *joined < *world;
  };
  // the first server's count (a failed job's million errors: ~20 ms of one thread at 131k ranks)
  g.server_error = FirstEventWhere(inc.events, [&](const Event& e) {
    std::int32_t joined = 0, world = 0;
    return short_count(e, &joined, &world);
  });
  if (g.server_error < 0) return std::nullopt;  // a failed job's million errors need no second look
  short_count(inc.events[g.server_error], &g.joined, &g.world);
  for (std::size_t i = 0; i < inc.events.size();
       ++i) {  // the earliest client's error, not the server's
    const auto index = static_cast<std::int32_t>(i);
    if (index != g.server_error && ClientStoreError(inc, inc.events[i]) &&
        Earlier(inc, index, g.first_client_error)) {
      g.first_client_error = index;
    }
  }
  // A node is silent when none of its ranks printed a line of its own: the launcher may still
  // have named it (srun's teardown of its tasks and slurmstepd's CANCELLED line, mpirun's
  // --report-bindings, DeepSpeed's --world_info), which says it was part of the job, not that
  // its ranks ran. Its own launcher's failure report or a lost-node word is no silence.
  const std::vector<std::uint8_t> spoke = NodesWhoseRanksSpoke(inc, facts);
  for (std::size_t n = 0; n < facts.nodes.size(); ++n) {
    const NodeFacts& node = facts.nodes[n];
    if (!spoke[n] && !node.agent_log && node.reports.empty() && !node.lost) {
      g.silent.push_back(static_cast<std::int32_t>(n));
    }
  }
  PreferHungNode(inc, &g);
  return g;
}

void DiagnoseStoreJoinGap(const Incident& inc, const JobFacts& facts, const StoreJoinGap& g, Finding* f) {
  const std::int32_t missing = g.world - g.joined;
  const std::string joined = std::to_string(g.joined) + "/" + std::to_string(g.world);
  const std::string where = Where(inc, inc.events[g.server_error]);
  f->evidence.push_back({g.server_error, v1::EVIDENCE_ROLE_CORROBORATING});
  if (g.first_client_error >= 0) f->evidence.push_back({g.first_client_error, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->world_size = g.world;
  if (g.silent.empty()) {
    Commit({.failure_class = v1::FAILURE_CLASS_NCCL_SETUP, .verdict = v1::VERDICT_INCONCLUSIVE}, f);
    f->reason = Say(ReasonId::kStoreTimeoutNoSilentNode,
                    {{"joined", joined}, {"where", where}, {"missing", std::to_string(missing)}});
    return;
  }
  if (g.silent.size() > 1 && g.hung_task < 0) {
    // Several nodes are silent and nothing sets one apart: naming one would be a guess by its
    // place in the node list, so the node is left open.
    Commit({.failure_class = v1::FAILURE_CLASS_NCCL_SETUP,
            .owner = v1::OWNER_HOST,
            .verdict = v1::VERDICT_INCONCLUSIVE},
           f);
    f->reason = Say(ReasonId::kStoreTimeoutSilentNodes,
                    {{"joined", joined},
                     {"where", where},
                     {"missing", Count(missing, "rank")},
                     {"silent", Count(static_cast<std::int32_t>(g.silent.size()), "node")},
                     {"first", NodeName(inc, g.silent.front())}});
    return;
  }
  const std::int32_t node = g.silent.front();
  const std::string name = NodeName(inc, node);
  std::string others;
  for (std::size_t i = 1; i < g.silent.size(); ++i) others += (i > 1 ? ", " : "") + NodeName(inc, g.silent[i]);
  Commit({.node = node,
          .failure_class = v1::FAILURE_CLASS_NCCL_SETUP,
          .owner = v1::OWNER_HOST,
          .confidence = g.silent.size() == 1 || g.hung_task >= 0 ? 0.9 : 0.6},
         f);
  for (std::int32_t n : g.silent) f->candidates.push_back({-1, n, 1.0 / static_cast<double>(g.silent.size())});
  f->cascade = SummarizeCascade(inc, facts, {}, node);
  if (g.hung_task >= 0) f->evidence.insert(f->evidence.begin(), {g.hung_task, v1::EVIDENCE_ROLE_INITIATING});
  f->reason = Say(
      ReasonId::kJobNeverStarted,
      {{"joined", joined}, {"where", where}, {"missing", Count(missing, "rank")}, {"node", name}});
  if (others.empty()) {
    f->reason.Add(ReasonId::kOneSilentNode);
  } else {
    f->reason.Add(ReasonId::kSilentNodes, {{"others", others}});
  }
  if (g.hung_task >= 0) {
    f->reason.Add(
        g.hung_tasks == 1 ? ReasonId::kHungTask : ReasonId::kHungTasks,
        {{"count", std::to_string(g.hung_tasks)}, {"where", Where(inc, inc.events[g.hung_task])}});
  }
  f->reason.Add(ReasonId::kStoreErrorsAreConsequences);
  f->recovery.push_back(
      {"drain_node", name, Say(ReasonId::kCheckNodeStartsProcesses, {{"node", name}})});
}

void DiagnoseStoreLoss(const Incident& inc, const JobFacts& facts, const StoreLoss& s, Finding* f) {
  DiagnoseNodeLoss(inc, facts, s.node, f);
  const std::string name = NodeName(inc, s.node);
  f->confidence = s.named > 0 ? 0.9 : 0.75;
  if (s.first_named >= 0) f->evidence.push_back({s.first_named, v1::EVIDENCE_ROLE_CORROBORATING});
  if (s.first_agent >= 0) f->evidence.push_back({s.first_agent, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->reason = Say(ReasonId::kStoreHostLost,
                  {{"node", name}, {"reporters", Count(s.reporter_nodes, "other node")}});
  if (s.named > 0) {
    f->reason.Add(ReasonId::kStoreConnectionsNamedHost,
                  {{"named", std::to_string(s.named)}, {"node", name}});
  } else {
    f->reason.Add(ReasonId::kStoreHostOnlySilentAgent, {{"node", name}});
  }
  f->reason.Add(ReasonId::kStoreHostInitiator, {{"node", name}});
  f->recovery.clear();
  f->recovery.push_back({"drain_node", name, Say(ReasonId::kCheckStoreHost, {{"node", name}})});
}

}  // namespace denpex::engine
