// NCCL network faults from NCCL's IB completion WARNs and, under NCCL's socket transport, its
// socket WARNs (docs/log_formats.md §4b): the rank x rank error matrix of who reported a
// failed completion (a reset socket) against whom. A reset link is a bad row (its rank's
// sockets to each peer fail: `Connection reset by peer`) and column (the peers see
// `Connection closed by remote peer <its host>`). A failed NIC is a bad
// row and column: its rank reports retry-exceeded (status 12) on one link and flushed work
// (status 5) on its others, and the ranks across its links report status 12 naming its node.
// Status 5 elsewhere is a consequence (queue pairs torn down after a peer aborted).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyze/clocks.h"
#include "analyze/facts.h"
#include "analyze/finding.h"
#include "analyze/ib_ports.h"
#include "incident/incident.h"

namespace denpex::engine {

struct NetworkFault {
  std::int32_t rank = -1;         // the rank whose NIC failed
  std::int32_t node = -1;
  std::int32_t first_event = -1;  // its first status-12 WARN
  std::vector<std::int32_t> named_by;  // other ranks' status-12 WARNs naming its node
  double score = 0, runner_up = 0;
  std::int32_t reporters = 0;     // ranks with an IB completion error (or own socket failure)
  bool socket = false;            // found from NET/Socket WARNs (NCCL_IB_DISABLE=1)
  std::int32_t row = 0;           // the peers its own failed completions or sockets name
};

// The lead must exceed the runner-up by this factor (a single bad link scores both ends alike).
inline constexpr double kNicLeadRatio = 1.25;

// nullopt without status-12 WARNs, or when no reporter clearly leads (a link between two
// nodes, or every peer naming a node that printed nothing: a lost node, left to job_end.h).
std::optional<NetworkFault> FindNetworkFault(const Incident& inc, const JobFacts& facts);

// Fills `f`: the rank, class NETWORK, owner NETWORK, evidence, reason, recovery.
void DiagnoseNetworkFault(const Incident& inc, const JobFacts& facts, const NetworkFault& n, Finding* f);

// A single bad link (docs/diagnosis_format.md): exactly two ranks, on two nodes, report retry
// exceeded (status 12) — or, under NCCL's socket transport, their own connection reset
// (`Call to recv from <peer> failed : Connection reset by peer`) — and each names only the
// other's node (the address maps to it through `localGid` or the socket transport's `NET/Socket
// : Using [0]ib0:<ip>` line; where nothing maps it, the two name two different addresses: each
// other's) — one hot cell of the node x node matrix, where a failed NIC is a whole row and
// column. Under the socket transport the far end may not see the reset at all: one rank's reset
// names one peer only, whose node the NET/Socket lines give, and that peer, like the rank's
// peers on other nodes, saw its connection closed (`Connection closed by remote peer <the
// rank's host>`) once the rank aborted — the rank had other links and they did not reset, so the
// path to that one peer did (kOneEnd; its far end is that peer's first such report). Which end
// failed first: the end that alone saw the reset (kOneEnd); the end whose HCA port's counters
// (ib_counters.log) show link errors when only one does; else the end whose first status-12
// WARN (or, when the WARNs carry no time, its watchdog's NCCL error) came at least kLinkLead
// earlier in aligned time; else neither.
// Over IB, a single rank that reported retry exceeded (status 12), all of it against one peer
// address, and no one reporting status 12 against it, is one end's view of a link (kSeenFromOneEnd):
// the far end's logs are missing (an incident without that node) or hold no WARN. A failed NIC at
// either end and a bad cable look alike from here, so neither end is named: the link is, its far
// end by the address the WARN gives (and its node where a line maps it).
struct LinkFault {
  LinkFinding link;
  bool socket = false;  // from NET/Socket WARNs (NCCL_IB_DISABLE=1); an end's hca is its interface
  enum class By { kNone, kCounters, kTime, kOneEnd, kSeenFromOneEnd } by = By::kNone;
  std::string far_address;          // kSeenFromOneEnd: the peer address a's WARN names
  TimeNs lead = 0;                  // kTime: how much earlier end a reported
  bool by_watchdog = false;         // kTime: from the watchdogs' NCCL errors (the WARNs carry no time)
  std::optional<ErringPort> port;   // kCounters: its erring port
};

inline constexpr TimeNs kLinkLead = kNsPerSec;

std::optional<LinkFault> FindLinkFault(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks);

// The first NCCL WARN that says a link failed under a process (IB retry exceeded, status 12; a
// socket reset of its own: `Call to recv from <peer> failed`) and that no line ties to a global
// rank (a log dir's stdout.log laid out flat, its `<L>/` folder gone); -1 when none. With such a
// WARN unplaced, a rank that merely stopped participating is no initiator: it may be the link's
// victim, and the link's ends are not known.
std::int32_t UnrankedLinkError(const Incident& inc);

// Fills `f`: the end that failed first (rank -1 and both ends as candidates when none can be
// chosen), class NETWORK, owner NETWORK, the link, evidence, reason, recovery `inspect_link`
// (what to test depends on the transport: the IB ports, or the TCP path between the nodes).
void DiagnoseLinkFault(const Incident& inc, const JobFacts& facts, const LinkFault& l, Finding* f);

// NCCL set-up failures: NCCL's WARN that communicator init failed on a rank — `Bootstrap : no
// socket interface found` (the node lacks the interface NCCL_SOCKET_IFNAME names) or
// `Duplicate GPU detected : rank A and rank B both on CUDA device D` (the launch gave two ranks
// one GPU) or a bootstrap connect that gave up (`socketStartConnect: Connect to <root> failed :
// Connection timed out`, `socketPollConnect: connect returned ..., exceeded error retry count`:
// the node cannot reach the bootstrap root). When every such WARN comes from one node, that
// node is the initiator.
struct SetupFailure {
  std::int32_t node = -1;
  std::vector<std::int32_t> ranks;  // the ranks that warned, sorted (those whose rank is known)
  std::set<std::int32_t> warned;    // the processes that warned, by local rank where known
  std::int32_t first_event = -1;    // the lowest such rank's WARN
  bool duplicate = false;
  bool connect = false;             // bootstrap connects that gave up (timed out, refused)
};

std::optional<SetupFailure> FindNcclSetup(const Incident& inc, const JobFacts& facts);

// Fills `f`: the node (rank -1), class NCCL_SETUP, owner NETWORK (bootstrap) or APPLICATION
// (duplicate GPU: the launch configuration), evidence, reason, recovery.
void DiagnoseNcclSetup(const Incident& inc, const JobFacts& facts, const SetupFailure& s, Finding* f);

}  // namespace denpex::engine
