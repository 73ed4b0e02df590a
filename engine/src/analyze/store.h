// The c10d store's host lost (docs/log_formats.md §6b): the store the torchrun agents and their
// workers share lives on one host (the rendezvous endpoint). When that host's processes vanish,
// every other rank's heartbeat monitor finds its store connection reset (`recvValue failed on
// SocketImpl(..., remote=[<store host>]:<port>)`, `Failed to check the "should dump" flag on
// TCPStore`) and every other agent raises RendezvousConnectionError and stops its workers. The
// first of those reports is a victim; the initiator is the host the reset connections name (or,
// when no worker names it, the one node whose agent neither raised nor reported).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

struct StoreLoss {
  std::int32_t node = -1;         // the store's host
  std::int32_t first_named = -1;  // the earliest worker store error naming it (event index)
  std::int32_t first_agent = -1;  // the earliest agent RendezvousConnectionError
  std::int32_t named = 0;         // worker store errors naming it
  std::int32_t reporter_nodes = 0;  // nodes with a store error of their own (worker or agent)
};

// The agent's rendezvous error `e` says it lost its store (RendezvousConnectionError, or its
// rendezvous closed under it); not a bind or connect warning.
bool LostStore(const Incident& inc, const Event& e);

// nullopt unless store errors come from at least two nodes and point at one other node.
std::optional<StoreLoss> FindStoreLoss(const Incident& inc, const JobFacts& facts);

// Fills `f` as a node loss of the store's host (class NODE_LOSS, owner HOST), with the store
// errors that name it as corroborating evidence.
void DiagnoseStoreLoss(const Incident& inc, const JobFacts& facts, const StoreLoss& s, Finding* f);

// A node that never joined torchrun's c10d rendezvous (docs/log_formats.md §6c): the other
// agents raise RendezvousTimeoutError after the join timeout; the missing node's agent could not
// reach the endpoint (RendezvousConnectionError, a c10d connect timeout) or left no error at all.
struct RendezvousGap {
  std::int32_t node = -1;       // the node that never joined
  std::int32_t own_error = -1;  // its agent's connection error (event index), if it printed one
  std::int32_t first_timeout = -1;  // the earliest other agent's RendezvousTimeoutError
  std::int32_t timed_out = 0;   // agents that timed out waiting
};

// nullopt unless at least one agent timed out in the rendezvous and exactly one node did not.
std::optional<RendezvousGap> FindRendezvousGap(const Incident& inc, const JobFacts& facts);

// Fills `f`: the node (rank -1), class NCCL_SETUP, owner NETWORK, evidence, recovery.
void DiagnoseRendezvousGap(const Incident& inc, const JobFacts& facts, const RendezvousGap& g, Finding* f);

// The static TCPStore of init_method env:// never saw every client (docs/log_formats.md §26c):
// rank 0's server raised `DistStoreError: Timed out after <s> seconds waiting for clients.
// <joined>/<world> clients joined.`, and each rank that joined then failed on the store that died
// with it (`store->get('0') got error: ...`). Rank 0's error is the first and every joined rank's
// is the same, but they are all victims: the initiators are the ranks that never joined and
// printed nothing, named by their node (a node the incident knows with no rank and no line).
struct StoreJoinGap {
  std::int32_t server_error = -1;        // rank 0's DistStoreError (event index)
  std::int32_t first_client_error = -1;  // the earliest joined rank's store->get error
  std::int32_t joined = -1, world = -1;  // as the server counts them
  std::vector<std::int32_t> silent;      // nodes none of whose ranks printed (those with a hung task first)
  std::int32_t hung_task = -1;           // the first silent node's kernel hung-task report, if any
  std::int32_t hung_tasks = 0;           // how many its kernel log holds
};

// nullopt unless a `... waiting for clients. M/N clients joined.` error with M < N is in the logs.
std::optional<StoreJoinGap> FindStoreJoinGap(const Incident& inc, const JobFacts& facts);

// Fills `f`: the first silent node (rank -1), class NCCL_SETUP, owner HOST; INCONCLUSIVE when no
// node of the incident is silent (the missing ranks' node is named nowhere).
void DiagnoseStoreJoinGap(const Incident& inc, const JobFacts& facts, const StoreJoinGap& g, Finding* f);

}  // namespace denpex::engine
