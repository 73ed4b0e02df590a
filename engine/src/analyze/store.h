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

}  // namespace denpex::engine
