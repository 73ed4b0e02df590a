// A failed IB NIC (FAULT_KIND_NIC_FAILURE) or one failed link (FAULT_KIND_LINK_FAILURE): what
// its rank and the ranks across its links print and when they abort. NCCL's transport retries run out on the failed NIC's first link (status
// 12, both ends), its other queue pairs are flushed (status 5); the watchdog threads of the
// ranks at both ends then catch NCCL's asynchronous error and abort the processes (-6), and
// the failed ranks' other peers across nodes see their work flushed (status 5) and wait on.
#include "workers.h"
#include "gpu_faults.h"

#include <algorithm>

namespace denpex::sim {

// The NIC stops completing work: the rank's NCCL work never finishes (it stops issuing), and
// after the transport's retries (NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT, seconds) both ends of
// its links report, then abort a few hundred ms later.
void Workers::FailNic(int rank, TimeNs t) {
  Rng rng(job_.seed, StreamId::kFaultBehaviour, static_cast<std::uint64_t>(rank));
  stopped_[rank] = 1;
  nic_peers_ = job_.InterNodePeers(rank);
  if (nic_peers_.empty()) {  // a single-node job: nothing crosses the NIC; it just hangs
    return;
  }
  if (IsLinkFault(fault_.kind())) return FailLink(rank, t, rng);
  if (job_.nccl_socket) return ResetSockets(rank, t, rng);
  // The port goes down with the NIC: every process of the node has the device open, and its async
  // thread warns within milliseconds.
  // (Its own stream: the NIC's other lines draw what they drew before.)
  Rng port(job_.seed, StreamId::kFaultBehaviour, (11ULL << 32) + static_cast<std::uint64_t>(rank));
  const int first = job_.NodeOf(rank) * job_.gpus_per_node;  // the node's ranks
  for (int r = first; r < first + job_.gpus_per_node; ++r) {
    sink_.Emit(NcclIbPortError{r, t + port.UniformInt(1, 20'000) * kNsPerUs, job_.LocalRank(rank)});
  }
  const TimeNs retry = t + rng.UniformInt(2'000, 9'000) * kNsPerMs;
  Warn(NcclIbError{rank, retry, nic_peers_.front(), 12, true});
  for (std::size_t i = 1; i < nic_peers_.size(); ++i) {
    Warn(NcclIbError{rank, retry + rng.UniformInt(1, 5'000) * kNsPerUs, nic_peers_[i], 5, true});
  }
  queue_.Push(retry + rng.UniformInt(100, 600) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
  for (int p : nic_peers_) {
    const TimeNs seen = retry + rng.UniformInt(0, 40'000) * kNsPerUs;
    Warn(NcclIbError{p, seen, rank, 12, false});
    stopped_[p] = 1;
    queue_.Push(seen + rng.UniformInt(100, 600) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(p));
  }
}

// FAULT_KIND_LINK_FAILURE: the link between the rank's HCA and its first peer's across nodes
// (its DP-ring neighbour: one cable, one switch port) stops carrying packets; both NICs' other
// links work. The rank's sends on it retry out first (status 12, Send); the far end's CTS
// writes back over the same link retry out a few seconds later (variant 0) or, variant 1, at
// about the same time (then only the port counters tell the ends apart, ib_counters.cc).
void Workers::FailLink(int rank, TimeNs t, Rng& rng) {
  const int peer = nic_peers_.front();
  nic_peers_ = {peer};
  if (job_.nccl_socket) return ResetLink(rank, peer, t, rng);
  const TimeNs first = t + rng.UniformInt(2'000, 9'000) * kNsPerMs;
  const TimeNs gap = fault_.variant % 2 == 1 ? rng.UniformInt(0, 60'000) * kNsPerUs : rng.UniformInt(2'000, 6'000) * kNsPerMs;
  stopped_[peer] = 1;  // its collective on the link never completes either
  ReportLinkEnd(rank, first, peer, true, rng);
  ReportLinkEnd(peer, first + gap, rank, false, rng);
}

// One end of a failed link: retry exceeded on the queue pair, then the work still posted on the
// connection is flushed (status 5, vendor err 249); the watchdog aborts the process shortly after.
void Workers::ReportLinkEnd(int rank, TimeNs at, int peer, bool send, Rng& rng) {
  Warn(NcclIbError{rank, at, peer, 12, send});
  const int flushed = static_cast<int>(rng.UniformInt(1, 3));
  for (int i = 0; i < flushed; ++i) Warn(NcclIbError{rank, at + rng.UniformInt(1, 3'000) * kNsPerUs, peer, 5, send});
  queue_.Push(at + rng.UniformInt(100, 600) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
}

// FAULT_KIND_SOCKET_RESET (NET/Socket): the link resets under the rank's sockets. Its proxy
// threads' next recv on each link fails at once (`Connection reset by peer`, naming each
// peer), the ranks across those links see the connection closed (naming its host); both ends
// abort a few hundred ms later.
void Workers::ResetSockets(int rank, TimeNs t, Rng& rng) {
  const TimeNs reset = t + rng.UniformInt(20, 400) * kNsPerMs;
  for (std::size_t i = 0; i < nic_peers_.size(); ++i) {
    const TimeNs at = reset + (i == 0 ? 0 : rng.UniformInt(1, 3'000) * kNsPerUs);
    Warn(NcclIbError{rank, at, nic_peers_[i], 12, i % 2 == 0, true});
  }
  queue_.Push(reset + rng.UniformInt(100, 600) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
  for (int p : nic_peers_) {
    const TimeNs seen = reset + rng.UniformInt(0, 20'000) * kNsPerUs;
    Warn(NcclIbError{p, seen, rank, 5, false, true});
    stopped_[p] = 1;
    queue_.Push(seen + rng.UniformInt(100, 600) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(p));
  }
}

// FAULT_KIND_SOCKET_LINK_FAILURE (NET/Socket): the connections between the rank and its peer
// are reset on the path. Even variants: only the rank's end gets the RST; its proxy's next recv
// on the link fails (`Connection reset by peer`, naming the peer's address) and it aborts a few
// hundred ms later; the peer, whose own end never saw the reset, finds its connection closed
// when the rank's process exits (recv returns 0: `Connection closed by remote peer <its host>`),
// as do the rank's other peers (AbortOnNcclError). Odd variants: RSTs both ways; both ends
// report the reset within tens of ms and abort.
void Workers::ResetLink(int rank, int peer, TimeNs t, Rng& rng) {
  const TimeNs reset = t + rng.UniformInt(20, 400) * kNsPerMs;
  stopped_[peer] = 1;
  Warn(NcclIbError{rank, reset, peer, 12, false, true});
  const TimeNs exit = reset + rng.UniformInt(100, 600) * kNsPerMs;
  queue_.Push(exit, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
  const bool both = fault_.variant % 2 == 1;
  const TimeNs seen = both ? reset + rng.UniformInt(0, 60'000) * kNsPerUs : exit + rng.UniformInt(1, 20'000) * kNsPerUs;
  Warn(NcclIbError{peer, seen, rank, both ? 12 : 5, false, true});
  queue_.Push(seen + rng.UniformInt(100, 600) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(peer));
}

// The watchdog thread caught the NCCL error: it prints it and the process aborts. A peer of
// the failed NIC that aborts tears down its other links: their far ends see flushed work.
void Workers::AbortOnNcclError(int rank, TimeNs t) {
  if (!alive_[rank]) return;
  // A socket link whose far end saw the reset too: its last error is its own reset.
  const bool far_reset = fault_.kind() == v1::FAULT_KIND_SOCKET_LINK_FAILURE && fault_.variant % 2 == 1 && rank == fault_.peer;
  const bool failed = rank == fault_.rank || far_reset;
  const PgKind group = job_.dp > 1 ? PgKind::kData : PgKind::kPipeline;
  // Every rank that aborts here printed a WARN first (its report is scheduled before its exit).
  const auto last = last_warn_.find(rank);
  const NcclIbError warn = last != last_warn_.end() && last->second.time <= t
                               ? last->second
                               : NcclIbError{rank, t, rank == fault_.rank ? nic_peers_.front() : fault_.rank, 12,
                                             rank == fault_.rank, job_.nccl_socket};
  sink_.Emit(NcclAsyncError{rank, t, group, !failed, warn});
  Die(rank, t + 200 * kNsPerUs, kExitSigabrt);
  if (failed && !IsLinkFault(fault_.kind())) return;  // a link's ends both tear down their other links
  Rng rng(job_.seed, StreamId::kFaultBehaviour, (1ULL << 32) + static_cast<std::uint64_t>(rank));
  for (int q : job_.InterNodePeers(rank)) {
    if (q == fault_.rank || !alive_[q] ||
        std::find(nic_peers_.begin(), nic_peers_.end(), q) != nic_peers_.end()) {
      continue;
    }
    Warn(NcclIbError{q, t + rng.UniformInt(5, 60) * kNsPerMs, rank, 5, false, job_.nccl_socket});
  }
}

void Workers::Warn(const NcclIbError& e) {
  sink_.Emit(e);
  auto [it, inserted] = last_warn_.try_emplace(e.rank, e);
  if (!inserted && e.time >= it->second.time) it->second = e;
}

// FAULT_KIND_STORE_HOST_LOSS: the store host's processes vanish at once (LoseNode); the kernel
// there resets their sockets, so every other live worker's heartbeat monitor finds its store
// connection reset at its next check (TORCH_NCCL_COORD_CHECK_MILSEC: each second), and each
// agent at its next monitor poll (the listener).
void Workers::LoseStoreHost(int node, TimeNs t) {
  LoseNode(node, t);
  for (int rank = 0; rank < job_.world; ++rank) {
    if (!alive_[rank]) continue;
    Rng rng(job_.seed, StreamId::kFaultBehaviour, (3ULL << 32) + static_cast<std::uint64_t>(rank));
    queue_.Push(t + rng.UniformInt(1, 1'000'000) * kNsPerUs, EventKind::kStoreCheck, static_cast<std::uint32_t>(rank));
  }
  if (listener_ != nullptr) listener_->OnStoreLost(node, t);
}

void Workers::OnStoreCheck(int rank, TimeNs t) {
  if (!alive_[rank]) return;
  if (fault_.action() != FaultAction::kStoreJoinTimeout) {
    sink_.Emit(StoreConnectionReset{rank, t, fault_.node});
    return;
  }
  const int joined = job_.world - job_.gpus_per_node;
  const auto waited = static_cast<int>(job_.nccl_timeout / kNsPerSec) + 1;
  sink_.Emit(StoreJoinTimeout{rank, t, joined, waited});
  Rng rng(job_.seed, StreamId::kFaultBehaviour, (4ULL << 32) + static_cast<std::uint64_t>(rank));
  queue_.Push(t + rng.UniformInt(60, 400) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
}

// FAULT_KIND_STORE_JOIN_TIMEOUT: the fault node's ranks never start (pdsh: its ssh hangs; srun,
// mpirun: its tasks hang before init_process_group, alive but silent). The others
// start as usual; rank 0's init_process_group builds the TCPStore server about a second in and
// waits for every client for the process group's timeout, then raises (kStoreCheck on rank 0);
// the server dies with it and every other rank, blocked in its first collective's store->get,
// fails on the closed connection a few milliseconds later. Nothing trains.
void Workers::ScheduleStoreJoinTimeout() {
  NoteFault(job_.agent_start[fault_.node]);  // the moment its launcher should have started
  Rng rng(job_.seed, StreamId::kFaultBehaviour, 5ULL << 32);
  const TimeNs rank0_start = job_.agent_start[0] + Rng(job_.seed, StreamId::kRankStart, 0).UniformInt(3'000, 6'000) * kNsPerMs;
  const TimeNs server = rank0_start + rng.UniformInt(500, 1'500) * kNsPerMs;
  const TimeNs raise = server + job_.nccl_timeout + rng.UniformInt(1'000, 1'900) * kNsPerMs;
  if (job_.launcher != v1::LAUNCHER_PDSH && job_.noise.kernel_logs) EmitHungMount(raise);
  for (int rank = 0; rank < job_.world; ++rank) {
    if (job_.NodeOf(rank) == fault_.node) continue;
    const TimeNs at = rank == 0 ? raise : raise + rng.UniformInt(2, 60) * kNsPerMs;
    queue_.Push(at, EventKind::kStoreCheck, static_cast<std::uint32_t>(rank));
    if (!job_.deepspeed_runner) continue;  // nothing else of theirs is printed
    const TimeNs start = job_.agent_start[job_.NodeOf(rank)] +
                         Rng(job_.seed, StreamId::kRankStart, static_cast<std::uint64_t>(rank)).UniformInt(3'000, 6'000) * kNsPerMs;
    queue_.Push(start, EventKind::kRankStart, static_cast<std::uint32_t>(rank));  // DeepSpeed's comm lines
  }
}

// Under srun and mpirun the hung node's tasks started and blocked importing from a hard NFS mount
// whose server stopped answering (state D, killable): its kernel log has the NFS client's word as
// they start, then khungtaskd's report of each (it checks every 120 s; a task is reported once it
// has been blocked 120 s), when that comes before rank 0 gives up. The first report is cited.
void Workers::EmitHungMount(TimeNs raise) {
  const int node = fault_.node;
  const TimeNs boot = NodeBoot(job_, node);
  Rng rng(job_.seed, StreamId::kFaultBehaviour, 6ULL << 32);
  const TimeNs blocked = job_.agent_start[node] + rng.UniformInt(2'000, 4'000) * kNsPerMs;
  sink_.Emit(KernelMessage{node, blocked, boot, KernelEvent::kNfsNotResponding, 0});
  TimeNs check = blocked + 120 * kNsPerSec + rng.UniformInt(0, 120'000) * kNsPerMs;
  if (check >= raise) return;
  for (int local = 0; local < job_.gpus_per_node; ++local) {
    KernelMessage m{node, check, boot, KernelEvent::kHungTask, local};
    m.detail = job_.worker_pid[node * job_.gpus_per_node + local];
    m.cite = local == 0;
    sink_.Emit(m);
    check += rng.UniformInt(1, 40) * kNsPerUs;
  }
}

// FAULT_KIND_NCCL_BOOTSTRAP fails every rank of the node; FAULT_KIND_DUPLICATE_GPU the two
// local ranks d-1 and d (d drawn) that were given the same GPU.
bool Workers::SetupFails(int rank) const {
  if (fault_.action() != FaultAction::kNcclSetup || job_.NodeOf(rank) != fault_.node) return false;
  if (fault_.kind() != v1::FAULT_KIND_DUPLICATE_GPU) return true;  // bootstrap: every rank
  const int d = 1 + fault_.variant % std::max(1, job_.gpus_per_node - 1);
  const int local = job_.LocalRank(rank);
  return local == d || local == d - 1;
}

// Communicator init starts with the first barrier (about a second after the process started):
// NCCL warns, torch raises from barrier(), and the interpreter exits 1 after tearing down.
void Workers::FailSetup(int rank, TimeNs t) {
  Rng rng(job_.seed, StreamId::kFaultBehaviour, static_cast<std::uint64_t>(rank));
  const bool duplicate = fault_.kind() == v1::FAULT_KIND_DUPLICATE_GPU;
  const int d = 1 + fault_.variant % std::max(1, job_.gpus_per_node - 1);
  const int other = job_.LocalRank(rank) == d ? rank - 1 : rank + 1;
  // A connect that times out retries (NCCL_SOCKET_RETRY_CNT, growing sleeps) for about a minute.
  const bool timeout = fault_.kind() == v1::FAULT_KIND_BOOTSTRAP_TIMEOUT;
  const TimeNs warn = t + (timeout ? rng.UniformInt(60'000, 75'000) : rng.UniformInt(900, 1'300)) * kNsPerMs;
  if (fault_time_ < 0 || warn < fault_time_) fault_time_ = warn;
  sink_.Emit(NcclSetupFailure{rank, warn, duplicate, other, false, timeout});
  sink_.Emit(NcclSetupFailure{rank, warn + rng.UniformInt(1, 30) * kNsPerMs, duplicate, other, true, timeout});
  stopped_[rank] = 1;
  queue_.Push(warn + rng.UniformInt(300, 1'500) * kNsPerMs, EventKind::kRankExit, static_cast<std::uint32_t>(rank));
}

}  // namespace denpex::sim
