// The c10d store's host lost (see store.h).
#include "analyze/store.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "analyze/job_end.h"

namespace denpex::engine {
namespace {

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

bool Earlier(const Incident& inc, std::int32_t a, std::int32_t b) {
  if (b < 0) return true;
  const Event& x = inc.events[a];
  const Event& y = inc.events[b];
  if (x.clock != Clock::kNone && y.clock != Clock::kNone && x.time != y.time) return x.time < y.time;
  return a < b;
}

}  // namespace

std::optional<StoreLoss> FindStoreLoss(const Incident& inc, const JobFacts& facts) {
  std::map<std::string, std::int32_t> node_of_name;
  for (std::size_t n = 0; n < inc.nodes.size(); ++n) {
    std::string name = inc.nodes[n];
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    node_of_name.emplace(std::move(name), static_cast<std::int32_t>(n));
  }
  std::set<std::int32_t> reporters;                  // nodes with a store error of their own
  std::map<std::int32_t, std::int32_t> named, first;  // store host -> errors naming it, the earliest
  std::int32_t first_agent = -1;
  for (std::size_t i = 0; i < inc.events.size(); ++i) {
    const Event& e = inc.events[i];
    const auto index = static_cast<std::int32_t>(i);
    if (e.kind == Kind::kRendezvousError) {
      const std::int32_t node = NodeOfEvent(facts, e);
      if (node < 0) continue;
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
  for (std::size_t i = 0; i < inc.events.size(); ++i) {
    const Event& e = inc.events[i];
    if (e.kind != Kind::kRendezvousError) continue;
    const std::int32_t node = NodeOfEvent(facts, e);
    if (node < 0) continue;
    const auto index = static_cast<std::int32_t>(i);
    if (IsJoinTimeout(inc, e)) {
      timed_out.insert(node);
      if (Earlier(inc, index, g.first_timeout)) g.first_timeout = index;
    } else {
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
  f->verdict = v1::VERDICT_DIAGNOSED;
  f->rank = -1;
  f->local_rank = -1;
  f->node = g.node;
  f->failure_class = v1::FAILURE_CLASS_NCCL_SETUP;
  f->owner = v1::OWNER_NETWORK;
  f->confidence = g.own_error >= 0 ? 0.9 : 0.7;
  f->candidates.push_back({-1, g.node, 1.0});
  if (g.own_error >= 0) {
    f->evidence.push_back({g.own_error, v1::EVIDENCE_ROLE_INITIATING});
    const Event& e = inc.events[g.own_error];
    if (e.clock != Clock::kNone && !e.time_borrowed) f->time = e.time;
  }
  if (g.first_timeout >= 0) f->evidence.push_back({g.first_timeout, v1::EVIDENCE_ROLE_CONSEQUENCE});
  f->cascade = SummarizeCascade(inc, facts, {}, g.node);
  f->reason = "The c10d rendezvous never completed: " + std::to_string(g.timed_out) +
              " agents waited out the join timeout and raised RendezvousTimeoutError (victims), while " + name +
              (g.own_error >= 0 ? "'s agent could not reach the rendezvous endpoint (RendezvousConnectionError: "
                                  "its TCPStore client timed out connecting)"
                                : "'s agent never joined and reported nothing") +
              "; no worker started. " + name + " never joined.";
  f->recovery.push_back({"fix_network_config", name,
                         "Check the route and firewall from " + name + " to the rendezvous endpoint (--rdzv-endpoint host, port 29400: "
                             "nc -zv from " + name + "), or leave " + name + " out, before restarting."});
}

void DiagnoseStoreLoss(const Incident& inc, const JobFacts& facts, const StoreLoss& s, Finding* f) {
  DiagnoseNodeLoss(inc, facts, s.node, f);
  const std::string name = NodeName(inc, s.node);
  f->confidence = s.named > 0 ? 0.9 : 0.75;
  if (s.first_named >= 0) f->evidence.push_back({s.first_named, v1::EVIDENCE_ROLE_CORROBORATING});
  if (s.first_agent >= 0) f->evidence.push_back({s.first_agent, v1::EVIDENCE_ROLE_CONSEQUENCE});
  const std::string named = s.named > 0 ? std::to_string(s.named) + " worker store connections reset with " + name +
                                              " as their remote end (`recvValue failed on SocketImpl(... remote=[" + name + "]...)`)"
                                        : "no worker named it, but " + name + " is the one node whose agent neither raised nor reported";
  f->reason = "The c10d store's host " + name + " lost its processes: " + std::to_string(s.reporter_nodes) +
              " other nodes reported losing the store (" + named +
              "; their agents raised RendezvousConnectionError and stopped their workers), while " + name +
              "'s own logs stop without an error. The first store error is a victim's; the store's host is the initiator.";
  f->recovery.clear();
  f->recovery.push_back({"drain_node", name,
                         "Check " + name + " (the job's c10d store / rendezvous endpoint host): its kernel log (OOM killer, panic) and "
                             "what else ran there; drain it or move the rendezvous endpoint to a healthy node before restarting."});
}

}  // namespace denpex::engine
