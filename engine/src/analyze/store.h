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

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "ingest/incident.h"

namespace denpex::engine {

struct StoreLoss {
  std::int32_t node = -1;         // the store's host
  std::int32_t first_named = -1;  // the earliest worker store error naming it (event index)
  std::int32_t first_agent = -1;  // the earliest agent RendezvousConnectionError
  std::int32_t named = 0;         // worker store errors naming it
  std::int32_t reporter_nodes = 0;  // nodes with a store error of their own (worker or agent)
};

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

}  // namespace denpex::engine
