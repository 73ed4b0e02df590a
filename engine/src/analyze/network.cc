// The IB error matrix (see network.h).
#include "analyze/network.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "analyze/cascade.h"
#include "analyze/describe.h"
#include "ingest/file_text.h"

namespace denpex::engine {
namespace {

// "10.64.0.26<55968>" -> "10.64.0.26"; "::ffff:10.64.0.27" -> "10.64.0.27".
std::string_view Address(std::string_view s) {
  s = s.substr(0, s.find('<'));
  if (s.starts_with("::ffff:")) s.remove_prefix(7);
  return s;
}

// The reporter's own address, which NCCL >= 2.19 prints as `localGid ::ffff:<ip>`.
std::string_view LocalAddress(std::string_view text) {
  const std::size_t at = text.find("localGid ");
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + 9);
  return Address(rest.substr(0, rest.find(' ')));
}

std::int32_t NodeOf(const Incident& inc, const JobFacts& facts, const Event& e) {
  if (e.rank >= 0 && e.rank < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[e.rank].node >= 0) {
    return facts.ranks[e.rank].node;
  }
  (void)inc;
  return e.node;
}

struct Reporter {
  std::int32_t first12 = -1;  // event index of its first status-12 WARN (or own socket failure)
  std::set<std::string> peers12, peers5;
};

// A socket WARN (NET/Socket, docs/log_formats.md §4b) in the matrix: the reporter's own socket
// failing on a peer (`Call to recv from <peer> failed : Connection reset by peer`) counts as
// status 12 (its row); the far end closing (`Connection closed by remote peer <peer>`) names
// the peer (its column), as status 12 from across a link does. Other socket WARNs (no peer,
// connects) are not part of the matrix.
enum class SocketRole { kNone, kOwn, kClosed };

SocketRole RoleOf(std::string_view text) {
  if (text.find("Connection closed by remote peer") != std::string_view::npos) return SocketRole::kClosed;
  if (text.find("Call to recv from ") != std::string_view::npos || text.find("Call to send to ") != std::string_view::npos) {
    return SocketRole::kOwn;
  }
  return SocketRole::kNone;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Where the addresses the WARNs name live: the nodes' names as printed (the closing peer is
// named by host name where it resolves), lower-cased; the socket transport's interface lines
// (`<host>:<pid>:<tid> [d] NCCL INFO NET/Socket : Using [0]ib0:10.64.0.26<0> [1]eth1:...`: the
// host the process runs on — a pod's own name under Kubernetes — each address, and the node's
// first interface's name); the IB reporters' own `localGid` (added by the matrix walks).
struct AddressBook {
  std::map<std::string, std::int32_t> node;      // address or host name -> node
  std::map<std::int32_t, std::string> interface;  // node -> its first socket interface
};

void ReadInterfaces(std::string_view line, std::int32_t node, AddressBook* book) {
  const std::size_t colon = line.find(':'), using_at = line.find("NET/Socket : Using ");
  if (colon == std::string_view::npos || using_at == std::string_view::npos) return;
  book->node.emplace(Lower(line.substr(0, colon)), node);
  const std::string_view text = line.substr(using_at + 19);
  for (std::size_t at = text.find(']'); at != std::string_view::npos; at = text.find(']', at + 1)) {
    const std::string_view rest = text.substr(at + 1);
    const std::size_t name_end = rest.find(':'), end = rest.find('<');
    if (name_end == std::string_view::npos || end == std::string_view::npos || name_end > end) break;
    book->node.emplace(std::string(Address(rest.substr(name_end + 1))), node);
    book->interface.emplace(node, std::string(rest.substr(0, name_end)));
  }
}

AddressBook Addresses(const Incident& inc, const JobFacts& facts) {
  AddressBook book;
  for (std::size_t n = 0; n < inc.nodes.size(); ++n) book.node.emplace(Lower(inc.nodes[n]), static_cast<std::int32_t>(n));
  for (const std::int32_t i : inc.OfKinds({Kind::kSocketInterface})) {
    const Event& e = inc.events[i];
    const std::int32_t node = NodeOf(inc, facts, e);
    if (node >= 0) ReadInterfaces(inc.str(std::get<Note>(e.detail).text), node, &book);
  }
  return book;
}

// A host's own address as its NCCL INFO set-up lines state it: `<host>:<pid>:<tid> [d] NCCL INFO
// Bootstrap : Using ib0:10.64.0.26<0>` and the IB transport's `NET/IB : Using [0]mlx5_0:1/IB ...
// ; OOB ib0:10.64.0.26<0>` (docs/log_formats.md §4). The line names its host; false when it is
// neither shape.
bool OwnAddressLine(std::string_view line, std::string_view* host, std::string_view* address) {
  const std::size_t info = line.find(" NCCL INFO ");
  if (info == std::string_view::npos) return false;
  std::size_t at = line.find(" ; OOB ", info);
  if (at != std::string_view::npos) {
    at += 7;
  } else if ((at = line.find("NCCL INFO Bootstrap : Using ", info + 1)) != std::string_view::npos) {
    at += 28;
  } else {
    return false;
  }
  const std::string_view iface = line.substr(at);
  const std::size_t colon = iface.find(':'), end = iface.find('<');
  if (colon == std::string_view::npos || end == std::string_view::npos || colon > end) return false;
  *address = iface.substr(colon + 1, end - colon - 1);
  // `<host>:<pid>:<tid> [<dev>]` before ` NCCL INFO`, after any prefix (`207: `, `gpu-0026: `).
  std::string_view head = line.substr(0, info);
  head = head.substr(0, head.rfind(' '));  // drop ` [<dev>]`
  head = head.substr(head.rfind(' ') + 1);
  if (const std::size_t tag = head.rfind("]:"); tag != std::string_view::npos) head.remove_prefix(tag + 2);  // `[rank5]:`
  *host = head.substr(0, head.find(':'));
  return !host->empty() && !address->empty();
}

// InfiniBand's status-12 WARNs name their peers by address only (no GIDs, docs/log_formats.md
// §4b), and NCCL's set-up lines that tie an address to its host are INFO chatter the parser
// skips. Off the parse: the head of each file holding a status-12 WARN whose peer is unknown
// (at most kAddressFiles files, kAddressHead bytes each) is read for them, so the reports
// naming the failed NIC's node add up on InfiniBand as they do on RoCE.
constexpr std::size_t kAddressFiles = 64;
constexpr std::uint32_t kAddressHead = 256 * 1024;

void ReadOwnAddresses(const Incident& inc, const std::set<std::uint32_t>& files, std::map<std::string, std::int32_t>* node_of_address) {
  std::size_t read = 0;
  for (std::uint32_t file : files) {
    if (read++ == kAddressFiles) break;
    const Result<std::string> text = ReadSpan(inc.root / inc.files[file].path, 0, kAddressHead);
    if (!text.ok()) continue;
    std::string_view rest = *text;
    while (!rest.empty()) {
      const std::string_view line = rest.substr(0, rest.find('\n'));
      rest.remove_prefix(std::min(rest.size(), line.size() + 1));
      std::string_view host, address;
      if (!OwnAddressLine(line, &host, &address)) continue;
      const auto node = node_of_address->find(Lower(host));
      if (node != node_of_address->end()) node_of_address->emplace(std::string(address), node->second);
    }
  }
}

// A connect that gave up (docs/log_formats.md §4c), in each NCCL release's words:
//   NCCL <= 2.23: `socketPollConnect: exceeded timeouts (3)`, `... exceeded retries (20000)` (the
//     connect's own function, no peer), `socketPollConnect: Connect to <ip><port> returned
//     110(Connection timed out) errno ...`, `socketStartConnect: Connect to <ip><port> failed :
//     No route to host`;
//   2.24-2.27: `socketPollConnect: connect returned Connection timed out, exceeded error retry
//     count (35)`;
//   2.28 on: `socketPollConnect: connect to <ip><port> returned Connection refused, exceeded error
//     retry count after 35 attempts` (`ncclOsSocketPollConnect` from 2.29), `... connect to
//     <ip><port> failed : ...`; and a poll of the connecting socket that failed (`socketPollConnect
//     poll() failed with error ...`, `ncclOsSocketPollConnect to <ip><port> failed with error
//     ...`).
bool IsConnectFailure(std::string_view text) {
  const auto has = [&](std::string_view s) { return text.find(s) != std::string_view::npos; };
  // The function that printed it (up to its `:` or a space): a connect's own WARNs.
  const bool by_connect = text.substr(0, text.find_first_of(": ")).ends_with("Connect");
  const bool connect =
      by_connect || has("Connect to ") || has("connect to ") || has("connect returned ");
  const bool gave_up =
      has(" failed : ") || has("exceeded error retry count") ||
      (by_connect && (has(": exceeded timeouts (") || has(": exceeded retries (") ||
                      has(") errno ") || has(" failed with error ")));
  return connect && gave_up;
}

}  // namespace

std::optional<NetworkFault> FindNetworkFault(const Incident& inc, const JobFacts& facts) {
  if (inc.OfKinds({Kind::kIbCompletionError, Kind::kSocketError}).empty())
    return std::nullopt;  // no reporter
  std::map<std::int32_t, Reporter> reporters;
  std::map<std::string, std::int32_t> node_of_address = Addresses(inc, facts).node;  // and the reporters' localGid
  std::vector<std::pair<std::string, std::int32_t>> named;  // (peer address, event) of status 12
  bool socket = false;
  for (const std::int32_t i : inc.OfKinds({Kind::kIbCompletionError, Kind::kSocketError})) {
    const Event& e = inc.events[i];
    if (e.rank < 0) continue;
    const auto& w = std::get<NcclWarn>(e.detail);
    std::string peer(Address(inc.str(w.peer)));
    SocketRole role = SocketRole::kNone;
    if (e.kind == Kind::kSocketError) {
      role = RoleOf(inc.str(w.text));
      if (role == SocketRole::kNone || peer.empty()) continue;
      peer = Lower(peer);
    }
    const std::string_view local = LocalAddress(inc.str(w.text));
    const std::int32_t node = NodeOf(inc, facts, e);
    if (!local.empty() && node >= 0) node_of_address.emplace(std::string(local), node);
    if (role == SocketRole::kClosed) {  // the column only: it names the peer's node
      named.emplace_back(peer, static_cast<std::int32_t>(i));
      continue;
    }
    Reporter& r = reporters[e.rank];
    if (role == SocketRole::kOwn) {
      if (r.first12 < 0) {
        r.first12 = static_cast<std::int32_t>(i);
        socket = true;
      }
      r.peers12.insert(peer);
    } else if (w.status == 12) {
      if (r.first12 < 0) r.first12 = static_cast<std::int32_t>(i);
      r.peers12.insert(peer);
      named.emplace_back(peer, static_cast<std::int32_t>(i));
    } else {
      r.peers5.insert(peer);
    }
  }
  std::set<std::uint32_t> unmapped;  // files of status-12 reports whose peer's node is unknown
  for (const auto& [peer, event] : named) {
    if (!node_of_address.contains(peer)) unmapped.insert(inc.events[event].file);
  }
  if (!unmapped.empty()) ReadOwnAddresses(inc, unmapped, &node_of_address);
  // Status-12 reports naming each node (when its address is known).
  std::map<std::int32_t, std::vector<std::int32_t>> named_node;
  for (const auto& [peer, event] : named) {
    if (auto it = node_of_address.find(peer); it != node_of_address.end()) named_node[it->second].push_back(event);
  }
  NetworkFault best;
  for (const auto& [rank, r] : reporters) {
    if (r.first12 < 0) continue;
    const std::int32_t node = NodeOf(inc, facts, inc.events[r.first12]);
    double score = static_cast<double>(r.peers12.size()) + 0.5 * static_cast<double>(r.peers5.size());
    std::vector<std::int32_t> by;
    if (auto it = named_node.find(node); node >= 0 && it != named_node.end()) {
      for (std::int32_t ev : it->second) {
        if (inc.events[ev].rank != rank) by.push_back(ev);
      }
      score += static_cast<double>(by.size());
    }
    if (score > best.score || (score == best.score && rank < best.rank)) {
      best.runner_up = std::max(best.runner_up, best.score);
      best = NetworkFault{rank, node, r.first12, std::move(by), score, best.runner_up, 0, false,
                          static_cast<std::int32_t>(r.peers12.size())};
    } else {
      best.runner_up = std::max(best.runner_up, score);
    }
  }
  if (best.rank < 0 || best.score < kNicLeadRatio * best.runner_up) return std::nullopt;
  best.reporters = static_cast<std::int32_t>(reporters.size());
  best.socket = socket && inc.events[best.first_event].kind == Kind::kSocketError;
  return best;
}

namespace {

// ` hca mlx5_3` at the end of the WARN (NCCL's IB transport names its device in later releases).
std::string HcaOf(std::string_view text) {
  const std::size_t at = text.rfind(" hca ");
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + 5);
  return std::string(rest.substr(0, rest.find(' ')));
}

// NCCL's IB async thread, one per device in every process that opened it (docs/log_formats.md
// §4b): `NET/IB : <dev>:<port> Got async event : <event>` (2.19-2.23), `NET/IB : <dev>:<port>
// async fatal event: <event>` and `... Got async error event: <event>` (2.24-2.27; `Got non-fatal
// async event: <event>(<n>)` from 2.28). NCCL 2.18 and before name no device. The device, and
// whether the event says it went down: `port error` (its link) or `local catastrophic error`.
struct IbAsyncEvent {
  std::string_view device, event;
  bool down = false;
};
std::optional<IbAsyncEvent> IbAsyncEventOf(std::string_view text) {
  constexpr std::string_view kHead = "NET/IB : ";
  if (!text.starts_with(kHead) || text.find(" async ") == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = text.substr(kHead.size());
  const std::string_view where = rest.substr(0, rest.find(' '));  // `mlx5_3:1`
  const std::size_t port = where.rfind(':');
  if (port == std::string_view::npos || port == 0 || port + 1 == where.size()) return std::nullopt;
  const std::size_t colon = rest.rfind(": ");
  if (colon == std::string_view::npos) return std::nullopt;
  IbAsyncEvent e{.device = where.substr(0, port), .event = rest.substr(colon + 2)};
  e.event = e.event.substr(0, e.event.find('('));  // 2.28's `port error(10)`
  e.down = e.event == "port error" || e.event == "local catastrophic error";
  return e;
}

// The one device that NCCL on `node` reported down, with its first such line and how many said
// so; nothing when none, when several devices did, or when `rank`'s own process did not (each
// process warns of every device it opened: the failing rank's saw its NIC go down).
struct DownDevice {
  std::string_view device, event;
  std::int32_t first = -1, lines = 0;
  bool by_rank = false;
};
std::optional<DownDevice> DeviceReportedDown(const Incident& inc, std::int32_t node,
                                             std::int32_t rank) {
  DownDevice d;
  for (const std::int32_t i : inc.OfKinds({Kind::kNcclWarn})) {
    const Event& e = inc.events[i];
    if (e.node != node) continue;
    const std::optional<IbAsyncEvent> a =
        IbAsyncEventOf(inc.str(std::get<NcclWarn>(e.detail).text));
    if (!a || !a->down) continue;
    if (d.first >= 0 && a->device != d.device) return std::nullopt;  // not one device
    if (d.first < 0) d = {a->device, a->event, i, 0, false};
    ++d.lines;
    d.by_rank = d.by_rank || e.rank == rank;
  }
  if (d.first < 0 || !d.by_rank) return std::nullopt;
  return d;
}

}  // namespace

void DiagnoseNetworkFault(const Incident& inc, const JobFacts& facts, const NetworkFault& n, Finding* f) {
  const std::string node = NodeName(inc, n.node);
  const std::int32_t local = n.rank < static_cast<std::int32_t>(facts.ranks.size()) ? facts.ranks[n.rank].local_rank
                                                                                    : inc.events[n.first_event].local_rank;
  const Event& first = inc.events[n.first_event];
  Commit({.rank = n.rank,
          .node = n.node,
          .local_rank = local >= 0 ? local : std::get<NcclWarn>(first.detail).cuda_dev,
          .failure_class = v1::FAILURE_CLASS_NETWORK,
          .owner = v1::OWNER_NETWORK,
          .confidence = (1 - n.runner_up / n.score) * 0.95},
         f);
  if (first.clock != Clock::kNone && !first.time_borrowed) f->time = first.time;
  f->candidates.push_back({n.rank, n.node, n.score});
  const std::string rank = std::to_string(n.rank);
  // The NIC by its own name where a line gives one: the device NCCL's async thread reported down
  // on the node, or the one the WARN names (` hca mlx5_3`, NCCL 2.24 on).
  const std::optional<DownDevice> down =
      n.socket ? std::nullopt : DeviceReportedDown(inc, n.node, n.rank);
  const std::string hca =
      n.socket ? std::string() : HcaOf(inc.str(std::get<NcclWarn>(first.detail).text));
  const bool named_down = down && (hca.empty() || hca == down->device);  // the WARN's own device
  Reason nic;
  if (named_down) {
    nic = Say(ReasonId::kHcaReportedDown, {{"hca", std::string(down->device)},
                                           {"node", node},
                                           {"event", std::string(down->event)},
                                           {"count", std::to_string(down->lines)}});
  } else if (!hca.empty()) {
    nic = Say(ReasonId::kHcaOnNode, {{"hca", hca}, {"node", node}});
  } else if (f->local_rank >= 0) {
    nic = Say(ReasonId::kNicOfGpu, {{"gpu", std::to_string(f->local_rank)}, {"node", node}});
  } else {
    nic = Say(ReasonId::kNicOfRank, {{"rank", rank}});
  }
  f->evidence.push_back({n.first_event, v1::EVIDENCE_ROLE_INITIATING});
  if (named_down) f->evidence.push_back({down->first, v1::EVIDENCE_ROLE_CORROBORATING});
  for (std::size_t i = 0; i < n.named_by.size() && i < 3; ++i) f->evidence.push_back({n.named_by[i], v1::EVIDENCE_ROLE_CORROBORATING});
  f->cascade = SummarizeCascade(inc, facts, {n.rank}, n.node);
  const std::string named = std::to_string(n.named_by.size());
  if (n.socket) {
    const Reason closed = n.named_by.empty() ? Reason()
                                             : Say(ReasonId::kOthersSawConnectionClosed,
                                                   {{"count", named}, {"node", node}});
    f->reason =
        Say(ReasonId::kSocketsReset,
            {{"rank", rank}, {"node", node}, {"peers", std::to_string(n.row)}, {"closed", closed}});
    f->recovery.push_back(
        {"inspect_nic", node, Say(ReasonId::kCheckNetworkLink, {{"node", node}, {"rank", rank}})});
    return;
  }
  const Reason others = n.named_by.empty()
                            ? Reason()
                            : Say(ReasonId::kOthersNamedNode, {{"count", named}, {"node", node}});
  f->reason = Say(ReasonId::kIbCompletionsFailed, {{"rank", rank},
                                                   {"node", node},
                                                   {"others", others},
                                                   {"reporters", std::to_string(n.reporters)},
                                                   {"nic", nic}});
  f->recovery.push_back({"inspect_nic", node,
                         Say(ReasonId::kCheckNic, {{"nic", nic}, {"node", node}, {"rank", rank}})});
}

namespace {

// A reporter's hot cells: its status-12 WARNs, the peer addresses they name.
struct LinkReporter {
  std::int32_t node = -1;
  std::int32_t first = -1;  // its first status-12 WARN (event index)
  std::set<std::string> peers;
};

// A stamp in whole seconds (a journal's or syslog's, put before the line by a collector): two of
// them a second apart may be any time from 0 to 2 s apart.
bool WholeSeconds(const Event& e) { return e.time % kNsPerSec == 0; }

// When an end reported, in aligned time: its first status-12 WARN, or its watchdog's NCCL error
// when the WARN carries no time of its own, or only a whole second that does not tell the ends
// apart. The same anchor for both ends, or none.
std::optional<std::pair<TimeNs, TimeNs>> ReportTimes(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks,
                                                     const LinkEnd& a, const LinkEnd& b, bool* by_watchdog) {
  auto timed = [&](std::int32_t ev) { return ev >= 0 && inc.events[ev].clock != Clock::kNone && !inc.events[ev].time_borrowed; };
  std::optional<std::pair<TimeNs, TimeNs>> warns;
  if (timed(a.event) && timed(b.event)) {
    const Event& ea = inc.events[a.event];
    const Event& eb = inc.events[b.event];
    warns = std::pair{clocks.Aligned(ea), clocks.Aligned(eb)};
    const TimeNs d = warns->second - warns->first;
    const bool telling = !WholeSeconds(ea) && !WholeSeconds(eb) ? true : d >= kLinkLead + kNsPerSec || d <= -kLinkLead - kNsPerSec;
    if (telling) return warns;
  }
  (void)facts;
  auto error = [&](std::int32_t r) {  // the watchdog's word that NCCL failed (its c10 line carries a time)
    for (std::size_t i = 0; i < inc.events.size(); ++i) {
      const Event& e = inc.events[i];
      if (e.rank == r && (e.kind == Kind::kWatchdogTerminated || e.kind == Kind::kNcclError) && timed(static_cast<std::int32_t>(i))) {
        return static_cast<std::int32_t>(i);
      }
    }
    return -1;
  };
  const std::int32_t ea = error(a.rank), eb = error(b.rank);
  if (timed(ea) && timed(eb)) {
    *by_watchdog = true;
    return std::pair{clocks.Aligned(inc.events[ea]), clocks.Aligned(inc.events[eb])};
  }
  return std::nullopt;  // whole seconds too close to tell, and no watchdog's time: neither
}

// Puts the end that failed first in `a`, when the evidence says which.
void OrderEnds(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks, LinkFault* l) {
  LinkEnd& a = l->link.a;
  LinkEnd& b = l->link.b;
  const std::vector<ErringPort> ports = l->socket ? std::vector<ErringPort>{} : FindErringPorts(inc, {a.node, b.node});
  if (ports.size() == 1) {
    if (ports[0].node == b.node) std::swap(a, b);
    if (a.hca.empty()) a.hca = "mlx5_" + std::to_string(ports[0].device);
    l->by = LinkFault::By::kCounters;
    l->port = ports[0];
  } else if (const auto times = ReportTimes(inc, facts, clocks, a, b, &l->by_watchdog)) {
    const TimeNs d = times->second - times->first;
    if (d <= -kLinkLead) std::swap(a, b);
    if (d >= kLinkLead || d <= -kLinkLead) {
      l->by = LinkFault::By::kTime;
      l->lead = d < 0 ? -d : d;
    }
  }
  l->link.ordered = l->by != LinkFault::By::kNone;
}

}  // namespace

namespace {

// The socket transport's far end that never saw the reset (see network.h): `a` reset its
// connection to one address only, on another node; the first rank of that node to see its
// connection to a's node closed is the far end, provided a rank on a third node saw the same
// (a's other links closed when it aborted: they did not reset, so its NIC did not).
std::optional<LinkEnd> QuietFarEnd(const Incident& inc, const JobFacts& facts, const AddressBook& book, const LinkReporter& a,
                                   const std::vector<std::int32_t>& closed) {
  const auto to = book.node.find(*a.peers.begin());
  if (to == book.node.end() || to->second == a.node) return std::nullopt;
  std::optional<LinkEnd> far;
  bool elsewhere = false;
  for (std::int32_t ev : closed) {
    const Event& e = inc.events[ev];
    const auto named = book.node.find(Lower(Address(inc.str(std::get<NcclWarn>(e.detail).peer))));
    if (named == book.node.end() || named->second != a.node) continue;
    const std::int32_t node = NodeOf(inc, facts, e);
    if (node == to->second && !far) far = LinkEnd{e.rank, node, {}, ev};
    elsewhere = elsewhere || (node >= 0 && node != to->second && node != a.node);
  }
  if (!far || !elsewhere) return std::nullopt;
  return far;
}

// An IB link of which one end's WARNs are all there is (see network.h): its far end is the
// one peer address the reporter's status-12 WARNs name, on another node (or one no line maps).
std::optional<LinkFault> SeenFromOneEnd(const AddressBook& book, const LinkReporter& r, LinkEnd near) {
  if (r.node < 0 || r.peers.size() != 1 || r.peers.begin()->empty()) return std::nullopt;
  const auto to = book.node.find(*r.peers.begin());
  if (to != book.node.end() && to->second == r.node) return std::nullopt;
  LinkFault l;
  l.link.a = std::move(near);
  l.link.b.node = to != book.node.end() ? to->second : -1;
  l.by = LinkFault::By::kSeenFromOneEnd;
  l.far_address = *r.peers.begin();
  return l;
}

}  // namespace

std::int32_t UnrankedLinkError(const Incident& inc) {
  for (const std::int32_t i : inc.OfKinds({Kind::kIbCompletionError, Kind::kSocketError})) {
    const Event& e = inc.events[i];
    if (e.rank >= 0) continue;
    const auto& w = std::get<NcclWarn>(e.detail);
    const bool failed = e.kind == Kind::kSocketError ? RoleOf(inc.str(w.text)) == SocketRole::kOwn : w.status == 12;
    if (failed) return static_cast<std::int32_t>(i);
  }
  return -1;
}

std::optional<LinkFault> FindLinkFault(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks) {
  const std::vector<std::int32_t> warns =
      inc.OfKinds({Kind::kIbCompletionError, Kind::kSocketError});
  if (warns.empty()) return std::nullopt;  // no reporter
  std::map<std::int32_t, LinkReporter> reporters;
  AddressBook book = Addresses(inc, facts);
  std::vector<std::int32_t> closed;  // socket: `Connection closed by remote peer` WARNs
  bool socket = false;
  for (const std::int32_t i : warns) {
    const Event& e = inc.events[i];
    const auto& w = std::get<NcclWarn>(e.detail);
    const std::int32_t node = NodeOf(inc, facts, e);
    if (e.kind == Kind::kSocketError) {  // a closed connection counts by its node, its rank may be unknown
      const SocketRole role = RoleOf(inc.str(w.text));
      if (role == SocketRole::kClosed && node >= 0) closed.push_back(static_cast<std::int32_t>(i));
      if (role != SocketRole::kOwn || w.peer == kNoStr || e.rank < 0) continue;
      socket = true;
    } else {
      if (e.rank < 0) continue;
      const std::string_view local = LocalAddress(inc.str(w.text));
      if (!local.empty() && node >= 0) book.node.emplace(std::string(local), node);
      if (w.status != 12) continue;
    }
    LinkReporter& r = reporters[e.rank];
    r.node = node;
    if (r.first < 0) r.first = static_cast<std::int32_t>(i);
    r.peers.insert(std::string(Address(inc.str(w.peer))));
  }
  auto end = [&](std::int32_t rank, const LinkReporter& r) {
    std::string hca = socket ? book.interface[r.node] : HcaOf(inc.str(std::get<NcclWarn>(inc.events[r.first].detail).text));
    return LinkEnd{rank, r.node, std::move(hca), r.first};
  };
  LinkFault l;
  l.socket = socket;
  if (reporters.size() == 1 && socket) {  // the far end saw its connection closed, not reset
    const auto& [rank_a, ra] = *reporters.begin();
    if (ra.node < 0 || ra.peers.size() != 1) return std::nullopt;
    const std::optional<LinkEnd> far = QuietFarEnd(inc, facts, book, ra, closed);
    if (!far) return std::nullopt;
    l.link.a = end(rank_a, ra);
    l.link.b = *far;
    l.link.b.hca = book.interface[far->node];
    l.by = LinkFault::By::kOneEnd;
    l.link.ordered = true;
    return l;
  }
  if (reporters.size() == 1) {  // over IB: the link as one end saw it
    const auto& [rank_a, ra] = *reporters.begin();
    return SeenFromOneEnd(book, ra, end(rank_a, ra));
  }
  if (reporters.size() != 2) return std::nullopt;
  const auto& [rank_a, ra] = *reporters.begin();
  const auto& [rank_b, rb] = *std::next(reporters.begin());
  if (ra.node < 0 || rb.node < 0 || ra.node == rb.node || ra.peers.size() != 1 || rb.peers.size() != 1) return std::nullopt;
  // Each names the other's node; addresses nothing maps must at least differ (two ends).
  auto names = [&](const LinkReporter& r, std::int32_t other) {
    const auto it = book.node.find(*r.peers.begin());
    return it == book.node.end() || it->second == other;
  };
  if (!names(ra, rb.node) || !names(rb, ra.node) || *ra.peers.begin() == *rb.peers.begin()) return std::nullopt;
  l.link.a = end(rank_a, ra);
  l.link.b = end(rank_b, rb);
  OrderEnds(inc, facts, clocks, &l);
  return l;
}

namespace {

// "rank 12 (gpu-0002, mlx5_4)", "rank 12 (gpu-0002, the HCA of GPU 4)" or, over sockets,
// "rank 12 (gpu-0002, ib0)".
Reason EndName(const Incident& inc, const JobFacts& facts, const LinkEnd& e, bool socket) {
  if (e.event < 0 && e.rank < 0) {  // seen from the other end only
    return Say(ReasonId::kFarEndOfNode, {{"node", NodeName(inc, e.node)}});
  }
  ReasonArg hca("hca", e.hca);  // its name where a line gives it (`mlx5_4`, `ib0`)
  if (e.hca.empty() && socket) {
    hca = ReasonArg("hca", Say(ReasonId::kItsSocketInterface));
  } else if (e.hca.empty()) {
    const bool known = e.rank >= 0 && e.rank < static_cast<std::int32_t>(facts.ranks.size());
    const std::int32_t local = known ? facts.ranks[e.rank].local_rank : -1;
    const std::int32_t dev = local >= 0 ? local : std::get<NcclWarn>(inc.events[e.event].detail).cuda_dev;
    hca = ReasonArg("hca", dev >= 0 ? Say(ReasonId::kHcaOfGpu, {{"gpu", std::to_string(dev)}})
                                    : Say(ReasonId::kItsHca));
  }
  if (e.rank < 0) {  // a rank its log never named
    return Say(ReasonId::kLinkEndOfProcess, {{"node", NodeName(inc, e.node)}, hca});
  }
  return Say(ReasonId::kLinkEndOfRank,
             {{"rank", std::to_string(e.rank)}, {"node", NodeName(inc, e.node)}, hca});
}

std::string Seconds(TimeNs t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(t) / kNsPerSec);
  return buf;
}

}  // namespace

namespace {

// Which end failed first, and why (a sentence; empty-handed when nothing tells).
Reason LinkOrder(const Incident& inc, const LinkFault& l, const Reason& end_a,
                 const Reason& end_b) {
  switch (l.by) {
    case LinkFault::By::kOneEnd:
      return Say(ReasonId::kFirstByOneEnd,
                 {{"a", end_a}, {"b", end_b}, {"rank", std::to_string(l.link.a.rank)}});
    case LinkFault::By::kCounters:
      return Say(ReasonId::kFirstByCounters,
                 {{"a", end_a},
                  {"device", std::to_string(l.port->device)},
                  {"node", NodeName(inc, l.link.a.node)},
                  {"symbol_errors", std::to_string(l.port->symbol_error)},
                  {"link_downed", std::to_string(l.port->link_downed)}});
    case LinkFault::By::kTime:
      return Say(l.by_watchdog ? ReasonId::kFirstByWatchdogTime
                 : l.socket    ? ReasonId::kFirstByResetTime
                               : ReasonId::kFirstByRetryTime,
                 {{"a", end_a}, {"lead", Seconds(l.lead)}});
    case LinkFault::By::kSeenFromOneEnd:
      return Say(ReasonId::kFirstUnknownOneEnd);
    case LinkFault::By::kNone:
      return Say(l.socket ? ReasonId::kFirstUnknownSocket : ReasonId::kFirstUnknownIb,
                 {{"within", Seconds(kLinkLead)}});
  }
  return {};
}

// The link as the recovery names it: `<node> [hca] <-> <node> [hca]`.
std::string LinkTarget(const Incident& inc, const LinkFinding& link) {
  const auto end = [&](const LinkEnd& e) {
    return (e.node >= 0 ? NodeName(inc, e.node) : std::string()) + (e.hca.empty() ? "" : " " + e.hca);
  };
  return end(link.a) + " <-> " + end(link.b);
}

// The far end of a link seen from one end: its node where a line maps the address, and the address.
Reason FarEnd(const Incident& inc, const LinkFault& l) {
  if (l.link.b.node < 0) return Say(ReasonId::kFarPeerUnknownHost, {{"address", l.far_address}});
  return Say(ReasonId::kFarPeerOfNode,
             {{"address", l.far_address}, {"node", NodeName(inc, l.link.b.node)}});
}

// The reason and the recovery of a bad IB link of which only one end reported.
void IbOneEndStory(const Incident& inc, const LinkFault& l, const Reason& end_a, Finding* f) {
  const Reason far = FarEnd(inc, l);
  f->reason = Say(ReasonId::kIbLinkOneEnd, {{"a", end_a},
                                            {"far", far},
                                            {"node", NodeName(inc, l.link.a.node)},
                                            {"address", l.far_address}});
  f->reason.Add(LinkOrder(inc, l, end_a, far));
  const std::string target = LinkTarget(inc, l.link) + (l.link.b.node < 0 ? l.far_address : "");
  f->recovery.push_back(
      {"inspect_link", target,
       Say(ReasonId::kCollectFarHostLogs, {{"address", l.far_address}, {"link", target}})});
}

// The reason and the recovery of a bad link over IB.
void IbLinkStory(const Incident& inc, const LinkFault& l, const Reason& end_a, const Reason& end_b,
                 Finding* f) {
  const LinkEnd& a = l.link.a;
  const LinkEnd& b = l.link.b;
  f->reason = Say(ReasonId::kIbLink, {{"a", end_a},
                                      {"b", end_b},
                                      {"node_a", NodeName(inc, a.node)},
                                      {"node_b", NodeName(inc, b.node)}});
  f->reason.Add(LinkOrder(inc, l, end_a, end_b));
  const std::string target = LinkTarget(inc, l.link);
  f->recovery.push_back({"inspect_link", target, Say(ReasonId::kDrainIbLink, {{"link", target}})});
}

// The reason and the recovery of a bad path between two nodes under NCCL's socket transport.
void SocketLinkStory(const Incident& inc, const LinkFault& l, const Reason& end_a,
                     const Reason& end_b, Finding* f) {
  const LinkEnd& a = l.link.a;
  const LinkEnd& b = l.link.b;
  f->reason = Say(l.by == LinkFault::By::kOneEnd ? ReasonId::kSocketPathOneReset
                                                 : ReasonId::kSocketPathBothReset,
                  {{"a", end_a}, {"b", end_b}});
  f->reason.Add(ReasonId::kSocketPathDropped,
                {{"node_a", NodeName(inc, a.node)}, {"node_b", NodeName(inc, b.node)}});
  f->reason.Add(LinkOrder(inc, l, end_a, end_b));
  const std::string target = LinkTarget(inc, l.link);
  f->recovery.push_back(
      {"inspect_link", target, Say(ReasonId::kTestSocketPath, {{"link", target}})});
}

}  // namespace

void DiagnoseLinkFault(const Incident& inc, const JobFacts& facts, const LinkFault& l, Finding* f) {
  const LinkEnd& a = l.link.a;
  const LinkEnd& b = l.link.b;
  const Event& first = inc.events[a.event];
  Answer answer{.failure_class = v1::FAILURE_CLASS_NETWORK,
                .owner = v1::OWNER_NETWORK,
                .confidence = l.by == LinkFault::By::kCounters ? 0.85
                              : l.by == LinkFault::By::kOneEnd ? 0.8
                              : l.by == LinkFault::By::kTime   ? 0.75
                                                               : 0.5};
  if (l.link.ordered) {  // the end that failed first is the initiator; else the link alone is named
    const std::int32_t local = a.rank < static_cast<std::int32_t>(facts.ranks.size()) ? facts.ranks[a.rank].local_rank : -1;
    answer.rank = a.rank;
    answer.node = a.node;
    answer.local_rank = local >= 0 ? local : std::get<NcclWarn>(first.detail).cuda_dev;
    if (first.clock != Clock::kNone && !first.time_borrowed) f->time = first.time;
  }
  Commit(answer, f);
  f->link = l.link;
  f->candidates.clear();
  f->candidates.push_back({a.rank, a.node, 1.0});
  if (b.rank >= 0) f->candidates.push_back({b.rank, b.node, l.link.ordered ? 0.5 : 1.0});
  f->evidence.push_back({a.event, v1::EVIDENCE_ROLE_INITIATING});
  if (b.event >= 0) f->evidence.push_back({b.event, l.link.ordered ? v1::EVIDENCE_ROLE_CORROBORATING : v1::EVIDENCE_ROLE_INITIATING});
  if (l.port) f->lines.push_back({l.port->file, l.port->line, v1::EVIDENCE_ROLE_INITIATING});
  std::vector<std::int32_t> ends{a.rank};
  if (b.rank >= 0) ends.push_back(b.rank);
  f->cascade = SummarizeCascade(inc, facts, ends, a.node);
  const Reason end_a = EndName(inc, facts, a, l.socket), end_b = EndName(inc, facts, b, l.socket);
  if (l.socket) return SocketLinkStory(inc, l, end_a, end_b, f);
  if (l.by == LinkFault::By::kSeenFromOneEnd) return IbOneEndStory(inc, l, end_a, f);
  IbLinkStory(inc, l, end_a, end_b, f);
}

// Orders a node's set-up WARNs: by local rank where the file names it (torchrun --log-dir
// before any rank is known), else by global rank (the same order within one node).
std::int32_t SetupOrder(const Event& e) { return e.local_rank >= 0 ? e.local_rank : e.rank; }

std::optional<SetupFailure> FindNcclSetup(const Incident& inc, const JobFacts& facts) {
  std::map<std::int32_t, SetupFailure> by_node;
  for (const std::int32_t i :
       inc.OfKinds({Kind::kDuplicateGpu, Kind::kSocketError, Kind::kNcclWarn})) {
    const Event& e = inc.events[i];
    if (e.family != Family::kNccl || (e.rank < 0 && e.node < 0)) continue;
    const bool duplicate = e.kind == Kind::kDuplicateGpu;
    bool connect = false;
    if (!duplicate) {
      if (e.kind != Kind::kSocketError && e.kind != Kind::kNcclWarn) continue;
      const std::string_view text = inc.str(std::get<NcclWarn>(e.detail).text);
      connect = IsConnectFailure(text);
      if (!connect && (!text.starts_with("Bootstrap") || text.find("no socket interface") == std::string_view::npos)) continue;
    }
    SetupFailure& s = by_node[NodeOf(inc, facts, e)];
    s.duplicate = s.duplicate || duplicate;
    s.connect = s.connect || connect;
    // A rank's first WARN counts; one whose rank is unknown (its process died before it was
    // named) still counts for its node, and may lead the evidence by its local rank.
    s.warned.insert(SetupOrder(e));
    if (e.rank >= 0 && std::find(s.ranks.begin(), s.ranks.end(), e.rank) != s.ranks.end()) continue;
    if (e.rank >= 0) s.ranks.push_back(e.rank);
    if (s.first_event < 0 || SetupOrder(e) < SetupOrder(inc.events[s.first_event])) s.first_event = static_cast<std::int32_t>(i);
  }
  if (by_node.size() != 1 || by_node.begin()->first < 0) return std::nullopt;  // none, or job-wide
  SetupFailure s = by_node.begin()->second;
  s.node = by_node.begin()->first;
  std::sort(s.ranks.begin(), s.ranks.end());
  return s;
}

void DiagnoseNcclSetup(const Incident& inc, const JobFacts& facts, const SetupFailure& s, Finding* f) {
  const std::string node = NodeName(inc, s.node);
  Commit({.node = s.node,
          .failure_class = v1::FAILURE_CLASS_NCCL_SETUP,
          .owner = s.duplicate ? v1::OWNER_APPLICATION : v1::OWNER_NETWORK,
          .confidence = 0.9},
         f);
  for (std::int32_t r : s.ranks) f->candidates.push_back({r, s.node, 1.0});
  if (s.ranks.empty()) f->candidates.push_back({-1, s.node, 1.0});
  const auto warned = static_cast<std::int32_t>(s.warned.size());
  // Who warned: "ranks 8-15", "6 of its ranks" or "6 of its ranks, among them 8-10".
  Reason ranks;
  if (!s.ranks.empty() && static_cast<std::int32_t>(s.ranks.size()) >= warned) {
    ranks.Add(ReasonId::kRanks, {{"ranks", RankList(s.ranks)}});
  } else if (!s.ranks.empty()) {
    ranks.Add(ReasonId::kOfItsRanksAmong,
              {{"count", std::to_string(warned)}, {"ranks", RankList(s.ranks)}});
  } else {
    ranks.Add(ReasonId::kOfItsRanks, {{"count", std::to_string(warned)}});
  }
  f->evidence.push_back({s.first_event, v1::EVIDENCE_ROLE_INITIATING});
  for (std::int32_t r : s.ranks) {
    if (r < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[r].python_error) {
      f->evidence.push_back({*facts.ranks[r].python_error, v1::EVIDENCE_ROLE_CORROBORATING});
      break;
    }
  }
  if (s.duplicate) {
    f->reason = Say(ReasonId::kDuplicateGpu, {{"node", node}, {"ranks", ranks}});
    f->recovery.push_back({"fix_launch_config", node,
                           Say(ReasonId::kFixGpuAssignment, {{"node", node}, {"ranks", ranks}})});
  } else if (s.connect) {
    f->reason = Say(ReasonId::kBootstrapGaveUp, {{"node", node}, {"ranks", ranks}});
    f->recovery.push_back(
        {"fix_network_config", node, Say(ReasonId::kCheckBootstrapRoute, {{"node", node}})});
  } else {
    f->reason = Say(ReasonId::kInterfaceMissing, {{"node", node}, {"ranks", ranks}});
    f->recovery.push_back(
        {"fix_network_config", node, Say(ReasonId::kCheckInterfaces, {{"node", node}})});
  }
  f->cascade = SummarizeCascade(inc, facts, s.ranks, s.node);
}

}  // namespace denpex::engine
