// NCCL_DEBUG=INFO output of a worker (docs/log_formats.md §4): the per-process lines before its
// first communicator, and each communicator's set-up block from "Init START" to
// "Init COMPLETE" (affinity, trees, ring channels with their transports, thresholds). It is
// most of a real job's log volume at scale.
#include "formatter.h"
#include "model/rng.h"
#include "nccl_ras.h"

namespace denpex::sim {

void NodeAddress(LineBuilder& out, int node) {
  const int n = node + 1;
  out.Str("10.").Int(64 + (n >> 16)).Char('.').Int((n >> 8) & 255).Char('.').Int(n & 255);
}

std::string NodeAddressText(int node) {
  std::string text;
  LineBuilder out(&text);
  NodeAddress(out, node);
  return text;
}

namespace {

// NCCL's spelling of the PCI bus id of local GPU i on an HGX-style board ("18000" is
// 0000:18:00.0). 16 entries: validation caps gpus_per_node at 16.
constexpr std::string_view kBusIds[] = {"18000", "2a000", "3a000", "5d000", "9a000", "ab000",
                                        "ba000", "db000", "1b000", "2b000", "3b000", "5e000",
                                        "9b000", "ac000", "bb000", "dc000"};
constexpr int kChannels = 16;
constexpr std::string_view kSocketProgressError = "NET/Socket : socket progress error";

// The WARN lines' wording by NCCL release (profiles.h's VersionRow; where each is printed is the
// profile's, NcclProfile's sites). From each tag's transport/net_ib.cc (net_ib/p2p.cc from 2.29),
// misc/socket.cc (os/linux.cc from 2.29).
struct NcclWarns {
  // The IB completion WARN: its head ("NET/IB : " / "NET/IB: "), the text after the peer's
  // address ({0} the status, {1} the vendor error, {2} " (Send)" / " (Recv)", {3} the status's
  // name, {4} the request's size, {5} "Send" / "Recv", {6} the opcode's name and number), what
  // RoCE adds ({0} the local address, {1} the peer's; the link layer is Ethernet), and what ends
  // it ({0} the device's index; "": nothing).
  std::string_view ib_head, ib_completion, roce_gids, ib_tail;
  // The function whose WARN says the reporter's own socket was reset.
  std::string_view socket_reset_function;
  // The bootstrap connect that timed out ({0} the root's address, {1} its port). It returns
  // ncclRemoteError in every release (kRemoteError).
  std::string_view connect_timeout;
  // The IB async thread's WARN of a port going down ({0} the device's index).
  std::string_view port_error;
};

constexpr std::string_view kRemoteError = ", remote process exited or there was a network error";
constexpr std::string_view kRemoteErrorName =
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
    "prematurely.";
constexpr std::string_view kGids = " localGid ::ffff:{0} remoteGids::ffff:{1}";
constexpr std::string_view kHca = " hca mlx5_{0}";

// A connect that times out: `exceeded timeouts` up to 2.23, `exceeded error retry count` after
// (about a minute of retries from 2.24).
constexpr VersionRow<NcclWarns> kNcclWarns[] = {
    {{"", "2.18"},
     {"NET/IB : ", " with error {0}, opcode 0, len 0, vendor err {1}{2}",
      " localGid ::ffff:{0} remoteGid ::ffff:{1}", "", "socketProgressOpt",
      "socketPollConnect: exceeded timeouts (3)", "NET/IB : Got async event : port error"}},
    {{"2.19", "2.23"},
     {"NET/IB : ", " with status={0} opcode=0 len=0 vendor err {1}{2}", kGids, "",
      "socketProgressOpt", "socketPollConnect: exceeded timeouts (3)",
      "NET/IB : mlx5_{0}:1 Got async event : port error"}},
    {{"2.24", "2.27"},
     {"NET/IB: ", " with status={0} opcode=0 len=0 vendor err {1}{2}", kGids, kHca,
      "socketProgressOpt",
      "socketPollConnect: connect returned Connection timed out, exceeded error retry count (35)",
      "NET/IB : mlx5_{0}:1 Got async error event: port error"}},
    {{"2.28", "2.28"},
     {"NET/IB: ", " with status={3}({0}) opcode={6} reqSize={4} vendor_err={1} req_type={5}", kGids,
      kHca, "socketProgressOpt",
      "socketPollConnect: connect to {0}<{1}> returned Connection timed out, exceeded error retry "
      "count after 35 attempts",
      "NET/IB : mlx5_{0}:1 Got non-fatal async event: port error(10)"}},
    {{"2.29", ""},
     {"NET/IB: ", " with status={3}({0}) opcode={6} vendor_err={1} ", kGids, kHca,
      "ncclOsSocketProgressOpt",
      "ncclOsSocketPollConnect: connect to {0}<{1}> returned Connection timed out, exceeded error "
      "retry count after 35 attempts",
      "NET/IB : mlx5_{0}:1 Got non-fatal async event: port error(10)"}},
};
static_assert(CoversEach(kNcclWarns, kNcclReleases));

// What a communicator's `Init START` / `Init COMPLETE` line says before `comm 0x..` (init.cc):
// nothing, `ncclCommInitRank ` for every communicator not split from another (the literal,
// whatever the program called), or the name of the function the program called (its __func__:
// TorchProfile::nccl_init_call).
enum class CommCall : std::uint8_t { kUnnamed, kInitRank, kCaller };

// The communicator set-up lines by release (init.cc, bootstrap.cc, transport/generic.cc): the
// call's name, `[Rank <r>] ` (the rank in the communicator) before it in `Init START`, the
// bootstrap interface's line, `, use ring PXN <p> GDR <g>` after `Connected all rings`, and
// `Init timings - <call>: ...` after `Init COMPLETE`.
struct NcclInitShape {
  CommCall call;
  bool start_rank_tag;
  std::string_view bootstrap_using;
  bool rings_pxn_gdr, init_timings;
};

constexpr VersionRow<NcclInitShape> kNcclInit[] = {
    {{"", "2.20"}, {CommCall::kUnnamed, false, "Bootstrap : Using ", false, false}},
    {{"2.21", "2.22"}, {CommCall::kInitRank, false, "Bootstrap : Using ", false, false}},
    {{"2.23", "2.23"}, {CommCall::kCaller, false, "Bootstrap : Using ", false, true}},
    {{"2.24", "2.28"}, {CommCall::kCaller, false, "Bootstrap: Using ", true, true}},
    {{"2.29", ""}, {CommCall::kCaller, true, "Bootstrap: Using ", true, true}},
};
static_assert(CoversEach(kNcclInit, kNcclReleases));

// The traceback of the first barrier when NCCL init failed, by torch release: the
// distributed_c10d.py frame's line and code, the exception class, ProcessGroupNCCL.cpp's line.
struct BarrierFailure {
  int barrier_line;
  std::string_view barrier_code, error_class;
  int pg_nccl_line;
};

constexpr VersionRow<BarrierFailure> kBarrierFailure[] = {
    {{"", "1.13"}, {3145, "    work = default_pg.barrier(opts=opts)", "RuntimeError", 1201}},
    {{"2.1", ""},
     {4159, "    work = group.barrier(opts=opts)", "torch.distributed.DistBackendError", 1970}},
};
static_assert(CoversEach(kBarrierFailure, kTorchReleases));

}  // namespace

std::string_view NcclBusId(int local_gpu) { return kBusIds[local_gpu]; }

// The IB completion WARN of the profile's NCCL (docs/log_formats.md §4b), e.g.
//   2.21: <host>:<pid>:<tid> [<dev>] transport/net_ib.cc:1909 NCCL WARN NET/IB : Got completion
//         from peer 10.64.0.12<43187> with status=12 opcode=0 len=0 vendor err 129 (Send)
//         and, on RoCE only (net_ib.cc prints the GIDs when the link layer is Ethernet),
//         ` localGid ::ffff:10.64.0.5 remoteGids::ffff:10.64.0.12`
//   2.28: ... NCCL WARN NET/IB: Got completion from peer 10.64.0.12<43187> with
//         status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) reqSize=524288
//         vendor_err=129 req_type=Send hca mlx5_5
void LineFormatter::Format(const NcclIbError& r, LineBuilder& out) const {
  if (r.socket) return FormatSocketError(r, out);
  NcclThreadHead(
      out, r.rank,
      job_.worker_pid[r.rank] + 7 + job_.LocalRank(r.rank));  // the proxy progress thread
  out.Str(nccl_.ib_completion_site).Str(" NCCL WARN ");
  IbErrorText(r, out);
  out.EndLine();
}

// The failed NIC's port going down, as the IB async thread of each process of its node warns of
// it (docs/log_formats.md §4b): `NET/IB : mlx5_5:1 Got async event : port error` (2.19-2.23; 2.18
// names no device), `... Got async error event: port error` (2.24-2.27), `... Got non-fatal async
// event: port error(10)` (2.28 on). The thread is the process's own, one per device.
void LineFormatter::Format(const NcclIbPortError& r, LineBuilder& out) const {
  NcclThreadHead(out, r.rank,
                 job_.worker_pid[r.rank] + 40 + r.device);  // the device's async thread
  out.Str(nccl_.ib_async_site).Str(" NCCL WARN ");
  out.Fill(RowFor(kNcclWarns, nccl_.name).port_error, {r.device});
  out.EndLine();
}

// The text of an IB completion WARN after `NCCL WARN ` (also the "Last error:" of the watchdog's
// exception, which repeats the last WARN without its prefix).
void LineFormatter::IbErrorText(const NcclIbError& r, LineBuilder& out) const {
  const int node = job_.NodeOf(r.rank), peer_node = job_.NodeOf(r.peer);
  const int port = 40000 + (r.peer * 7919 + r.rank * 104729) % 20000;
  const int vendor = r.status == 12 ? 129 : 249;
  const NcclWarns& warns = RowFor(kNcclWarns, nccl_.name);
  out.Str(warns.ib_head).Str("Got completion from peer ");
  NodeAddress(out, peer_node);
  out.Char('<').Int(port).Char('>');
  // A send's size is the request's (a ring step's 512 KiB), a failed receive's the 0 bytes it got;
  // NCCL sends by RDMA write, and receives the write's immediate data.
  out.Fill(warns.ib_completion,
           {r.status, vendor, r.send ? " (Send)" : " (Recv)",
            r.status == 12 ? "IBV_WC_RETRY_EXC_ERR" : "IBV_WC_WR_FLUSH_ERR", r.send ? 524288 : 0,
            r.send ? "Send" : "Recv",
            r.send ? "IBV_WC_RDMA_WRITE(1)" : "IBV_WC_RECV_RDMA_WITH_IMM(129)"});
  if (job_.roce) out.Fill(warns.roce_gids, {NodeAddressText(node), NodeAddressText(peer_node)});
  out.Fill(warns.ib_tail, {job_.LocalRank(r.rank)});  // the GPU's own NIC
}

// The text of a socket WARN after `NCCL WARN ` (docs/log_formats.md §4b), also the "Last
// error:" of the watchdog's exception: the reporter's own socket failing (status 12: the
// address in numeric form), or the far end closing (status 5: NCCL asks getnameinfo for the
// host name, which the nodes' /etc/hosts resolves), NCCL 2.18-2.21 (docs/log_formats.md §4b):
//   socketProgressOpt: Call to recv from 10.64.0.12<43187> failed : Connection reset by peer
//   socketProgress: Connection closed by remote peer gpu-0012<43187>
void LineFormatter::SocketErrorText(const NcclIbError& r, LineBuilder& out) const {
  const int peer_node = job_.NodeOf(r.peer);
  const int port = 40000 + (r.peer * 7919 + r.rank * 104729) % 20000;
  if (r.status == 12) {
    out.Str(RowFor(kNcclWarns, nccl_.name).socket_reset_function).Str(": Call to recv from ");
    NodeAddress(out, peer_node);
    out.Char('<').Int(port).Str("> failed : Connection reset by peer");
    return;
  }
  out.Str("socketProgress: Connection closed by remote peer ").Str(job_.hostnames[peer_node]);
  out.Char('<').Int(port).Char('>');
}

// NCCL_IB_DISABLE=1: the socket WARN where the profile's release prints it (v2.21.5-1's source:
// misc/socket.cc lines 30 and 50; 2.18's one line earlier, as real 2.18.x logs show
// `misc/socket.cc:49` for the closed peer; NcclProfile's sites), then, where NCCL_SOCKET_NTHREADS
// gave the transport helper threads, the helper's own WARN
// (`NET/Socket : socket progress error`, persistentSocketThread in transport/net_socket.cc).
// Without helper threads the proxy thread progresses the socket and only returns the error.
void LineFormatter::FormatSocketError(const NcclIbError& r, LineBuilder& out) const {
  const int pid = job_.worker_pid[r.rank];
  // The proxy progress thread, or the helper thread (started later) that owns the data socket.
  const bool helper = job_.nccl_socket_threads > 0;
  const int tid = pid + (helper ? 71 : 7) + job_.LocalRank(r.rank);
  NcclThreadHead(out, r.rank, tid);
  out.Str(r.status == 12 ? nccl_.socket_reset_site : nccl_.socket_closed_site).Str(" NCCL WARN ");
  SocketErrorText(r, out);
  out.EndLine();
  if (!helper) return;
  NcclThreadHead(out, r.rank, tid);
  out.Str("transport/net_socket.cc:")
      .Int(nccl_.line_socket_progress_error)
      .Str(" NCCL WARN ")
      .Str(kSocketProgressError)
      .EndLine();
}

// NCCL init failing on one rank (docs/log_formats.md §4c): the WARN, or the traceback of the
// first barrier whose NCCL error carries NCCL's last error.
void LineFormatter::Format(const NcclSetupFailure& r, LineBuilder& out) const {
  const NcclWarns& warns = RowFor(kNcclWarns, nccl_.name);
  auto last_error = [&] {
    if (r.duplicate) {
      out.Str("Duplicate GPU detected : rank ").Int(r.rank).Str(" and rank ").Int(r.other);
      out.Str(" both on CUDA device ").Str(NcclBusId(job_.PhysicalGpu(r.other)));
    } else if (r.timeout) {  // the bootstrap root: rank 0's node
      out.Fill(warns.connect_timeout,
               {NodeAddressText(0), 29400 + static_cast<int>(job_.seed % 600)});
    } else {
      out.Str("Bootstrap : no socket interface found");
    }
  };
  if (!r.traceback) {
    NcclThreadHead(out, r.rank, job_.worker_pid[r.rank]);
    out.Str(r.duplicate ? "init.cc:872"
            : r.timeout ? nccl_.connect_timeout_site
                        : "bootstrap.cc:108");
    out.Str(" NCCL WARN ");
    last_error();
    out.EndLine();
    return;
  }
  const BarrierFailure& barrier = RowFor(kBarrierFailure, torch_.name);
  const std::string_view py = torch_.python_lib;
  const std::string_view lines[] = {
      "Traceback (most recent call last):",
      "  File \"/workspace/megatron-lm/pretrain_gpt.py\", line 278, in <module>",
      "    pretrain(",
      "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 274, in pretrain",
      "    initialize_megatron(",
      "  File \"/workspace/megatron-lm/megatron/training/initialize.py\", line 282, in _initialize_distributed",
      "    torch.distributed.barrier()",
  };
  auto prefix = [&] { out.Fill(torch_.traceback_prefix, {r.rank}); };
  for (std::string_view line : lines) {
    prefix();
    out.Str(line).EndLine();
  }
  prefix();
  out.Str("  File \"").Str(py).Str("/torch/distributed/distributed_c10d.py\", line ");
  out.Int(barrier.barrier_line).Str(", in barrier").EndLine();
  prefix();
  out.Str(barrier.barrier_code).EndLine();
  prefix();
  out.Str(barrier.error_class);
  out.Str(": NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:")
      .Int(barrier.pg_nccl_line);
  out.Str(r.duplicate ? ", invalid usage (run with NCCL_DEBUG=WARN for details)"
          : r.timeout ? kRemoteError
                      : ", internal error - please report this issue to the NCCL developers");
  out.Str(", NCCL version ").Str(nccl_.name).EndLine();
  prefix();
  out.Str(r.duplicate ? "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."
          : r.timeout ? kRemoteErrorName
                      : "ncclInternalError: Internal check failed.")
      .EndLine();
  prefix();
  out.Str("Last error:").EndLine();
  prefix();
  last_error();
  out.EndLine();
}

// The watchdog thread's end after NCCL reported the error asynchronously (torch >= 2.2 with
// TORCH_NCCL_ASYNC_ERROR_HANDLING=3), then the C++ terminate. "Last error:" repeats the text of
// the rank's last WARN (docs/log_formats.md §4b): a failed NIC's last status-5 flush, a failed
// link end's flush after its status 12, a peer's status 12, a socket's reset or close, or,
// with the socket transport's helper threads, their "NET/Socket : socket progress error":
//   [rank5]:[E302 ... ProcessGroupNCCL.cpp:1515] [PG 3 (DATA_PARALLEL_GROUP) Rank 1] Process
//   group watchdog thread terminated with exception: NCCL error: remote process exited or there
//   was a network error, NCCL version 2.21.5
//   ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
//   Last error:
//   NET/IB : Got completion from peer 10.64.0.12<43187> with status=12 ...
void LineFormatter::Format(const NcclAsyncError& r, LineBuilder& out) const {
  const std::string_view version = nccl_.name;
  // NCCL >= 2.18's socket code returns ncclRemoteError for a reset socket as for a closed one.
  const bool remote = r.remote || r.last.socket;
  auto message = [&] {
    WritePgPrefix(out, r.rank, r.group);
    out.Str(" Process group watchdog thread terminated with exception: NCCL error: ");
    out.Str(remote ? "remote process exited or there was a network error"
                     : "unhandled system error (run with NCCL_DEBUG=INFO for details)");
    out.Str(", NCCL version ").Str(version).EndLine();
    out.Str(remote ? "ncclRemoteError: A call failed possibly due to a network error or a remote "
                       "process exiting prematurely."
                     : "ncclSystemError: System call (e.g. socket, malloc) or external library call "
                       "failed or device error. ");
    out.EndLine();
    out.Str("Last error:").EndLine();
    if (!r.last.socket) return IbErrorText(r.last, out);
    if (job_.nccl_socket_threads > 0) {
      out.Str(kSocketProgressError);
      return;
    }
    SocketErrorText(r.last, out);
  };
  WriteC10Header(out, r.rank, r.time, torch_.line_thread_terminated);
  message();
  out.EndLine();
  out.Str("terminate called after throwing an instance of '").Str(torch_.exception_class).Str("'").EndLine();
  out.Str("  what():  ");
  message();
  out.EndLine();
}

void LineFormatter::NcclThreadHead(LineBuilder& out, int rank, int tid) const {
  out.Str(job_.hostnames[job_.NodeOf(rank)])
      .Char(':')
      .Int(job_.worker_pid[rank])
      .Char(':')
      .Int(tid);
  out.Str(" [").Int(job_.LocalRank(rank)).Str("] ");
}

void LineFormatter::NcclPrefix(LineBuilder& out, int rank) const {
  NcclThreadHead(out, rank, job_.worker_pid[rank]);
  out.Str("NCCL INFO ");
}

void LineFormatter::Format(const NcclProcessInfo& r, LineBuilder& out) const {
  const int node = job_.NodeOf(r.rank);
  NcclPrefix(out, r.rank);
  const std::string_view iface = job_.roce ? "eth0:" : "ib0:";
  out.Str(RowFor(kNcclInit, nccl_.name).bootstrap_using).Str(iface);
  NodeAddress(out, node);
  out.Str("<0>").EndLine();
  NcclPrefix(out, r.rank);
  out.Str(nccl_.net_plugin).EndLine();
  NcclPrefix(out, r.rank);
  out.Str("cudaDriverVersion ").Int(nccl_.cuda_driver).EndLine();
  if (job_.nccl_socket) {  // NCCL_IB_DISABLE=1
    NcclPrefix(out, r.rank);
    out.Str("NCCL_IB_DISABLE set by environment to 1.").EndLine();
    NcclPrefix(out, r.rank);
    out.Str("NET/Socket : Using [0]").Str(iface);
    NodeAddress(out, node);
    out.Str("<0>").EndLine();
    NcclPrefix(out, r.rank);
    out.Str("Using network Socket").EndLine();
    if (job_.nccl_socket_threads > 0) {  // ncclNetSocketGetNsockNthread, at a listen
      NcclPrefix(out, r.rank);
      out.Str("NET/Socket: Using ").Int(job_.nccl_socket_threads).Str(" threads and 1 sockets per thread").EndLine();
    }
    return;
  }
  NcclPrefix(out, r.rank);
  out.Str("NET/IB : Using");
  for (int nic = 0; nic < job_.gpus_per_node; ++nic) {
    out.Str(" [").Int(nic).Str("]mlx5_").Int(nic).Str(job_.roce ? ":1/RoCE" : ":1/IB");
  }
  out.Str(" ; OOB ").Str(iface);
  NodeAddress(out, node);
  out.Str("<0>").EndLine();
  NcclPrefix(out, r.rank);
  out.Str("Using network IB").EndLine();
}

// One communicator's set-up: a ring over the group's members in group-rank order; a hop to
// another node goes through the GPU's own NIC (GPUDirect RDMA), a hop inside it over NVLink.
void LineFormatter::Format(const NcclCommInit& r, LineBuilder& out) const {
  const int dev = job_.LocalRank(r.rank);
  Rng ptr(job_.seed, StreamId::kRankAddresses, static_cast<std::uint64_t>(r.rank) * 4 + 1);
  std::uint64_t comm = 0;
  for (int k = 0; k <= static_cast<int>(r.group); ++k) comm = ptr.Next();
  comm = 0x550000000000ULL | (comm & 0xfffffffff0ULL);  // a 16-byte aligned heap pointer
  const int uid = job_.GroupUid(r.rank, r.group);
  const std::uint64_t comm_id =
      Rng(job_.seed, StreamId::kCommId, static_cast<std::uint64_t>(uid)).Next();
  const int grank = job_.GroupRank(r.rank, r.group);
  const int size = job_.GroupSize(r.group);
  const NcclInitShape& shape = RowFor(kNcclInit, nccl_.name);
  const std::string_view call = shape.call == CommCall::kUnnamed ? std::string_view()
                                : shape.call == CommCall::kInitRank
                                    ? std::string_view("ncclCommInitRank")
                                    : torch_.nccl_init_call;
  auto comm_line = [&](std::string_view what, bool start) {
    NcclPrefix(out, r.rank);
    if (start && shape.start_rank_tag) out.Str("[Rank ").Int(grank).Str("] ");
    if (!call.empty()) out.Str(call).Char(' ');
    out.Str("comm 0x").Hex(comm).Str(" rank ").Int(grank).Str(" nranks ").Int(size);
    const int nvml = job_.PhysicalGpu(r.rank);  // CUDA_VISIBLE_DEVICES renumbers cudaDev only
    out.Str(" cudaDev ").Int(dev).Str(" nvmlDev ").Int(nvml).Str(" busId ").Str(kBusIds[nvml]);
    out.Str(" commId 0x").Hex(comm_id).Str(what).EndLine();
  };
  comm_line(" - Init START", true);
  NcclPrefix(out, r.rank);
  out.Str("Setting affinity for GPU ");
  out.Int(dev).Str(dev < job_.gpus_per_node / 2 ? " to ffffffff,00000000"
                                                : " to 00000000,ffffffff");
  out.EndLine();
  const int next = job_.GroupMember(uid, (grank + 1) % size);
  const int prev_rank = (grank + size - 1) % size;
  NcclPrefix(out, r.rank);
  out.Str("Trees [0] ").Int((grank + 1) % size == 0 ? -1 : (grank + 1) % size).Str("/-1/-1->");
  out.Int(grank).Str("->").Int(grank == 0 ? -1 : prev_rank).EndLine();
  NcclPrefix(out, r.rank);
  out.Str("P2P Chunksize set to 131072").EndLine();
  const bool remote = job_.NodeOf(next) != job_.NodeOf(r.rank);
  for (int c = 0; c < kChannels; ++c) {
    NcclPrefix(out, r.rank);
    out.Str("Channel ").Zero(c, 2).Str("/0 : ").Int(grank).Char('[').Int(dev).Str("] -> ");
    out.Int((grank + 1) % size).Char('[').Int(job_.LocalRank(next)).Str("] ");
    if (remote) {
      if (job_.nccl_socket) {
        out.Str("[send] via NET/Socket/0").EndLine();
      } else {
        out.Str("[send] via NET/IB/").Int(dev).Str("/GDRDMA").EndLine();
      }
    } else {
      out.Str("via ").Str(nccl_.p2p_transport).EndLine();
    }
  }
  NcclPrefix(out, r.rank);
  out.Str("Connected all rings");
  if (shape.rings_pxn_gdr) out.Str(", use ring PXN 0 GDR ").Int(job_.nccl_socket ? 0 : 1);
  out.EndLine();
  for (std::string_view line :
       {std::string_view("Connected all trees"),
        std::string_view("threadThresholds 8/8/64 | 128/8/64 | 512 | 512"),
        std::string_view("16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p "
                         "channels, 2 p2p channels per peer")}) {
    NcclPrefix(out, r.rank);
    out.Str(line).EndLine();
  }
  comm_line(" - Init COMPLETE", false);
  if (shape.init_timings) InitTimings(r, call, grank, size, out);
}

// NCCL >= 2.23's seconds of a communicator's set-up, right after its `Init COMPLETE`. The kernels
// are loaded and most memory allocated for the process's first communicator; the bootstrap and
// the allgathers grow with the communicator's size.
void LineFormatter::InitTimings(const NcclCommInit& r, std::string_view call, int grank, int size,
                                LineBuilder& out) const {
  Rng rng(job_.seed, StreamId::kNcclTimings,
          static_cast<std::uint64_t>(r.rank) * kNumPgKinds + static_cast<std::uint64_t>(r.group));
  const double kernels = r.first ? 0.15 + 0.45 * rng.Uniform() : 0.0;
  const double alloc = r.first ? 0.05 + 0.45 * rng.Uniform() : 0.02 * rng.Uniform();
  const double bootstrap = 0.05 * rng.Uniform() + 2e-5 * size;
  const double allgathers = 0.02 * rng.Uniform() + 1e-5 * size;
  const double topo = 0.05 + 0.10 * rng.Uniform();
  const double graphs = 0.03 * rng.Uniform();
  const double connections = 0.05 + 0.35 * rng.Uniform();
  const double rest = 0.05 * rng.Uniform();
  const double total =
      kernels + alloc + bootstrap + allgathers + topo + graphs + connections + rest;
  NcclPrefix(out, r.rank);
  out.Str("Init timings - ").Str(call).Str(": rank ").Int(grank).Str(" nranks ").Int(size);
  out.Str(" total ").Fixed(total, 2).Str(" (kernels ").Fixed(kernels, 2);
  out.Str(", alloc ").Fixed(alloc, 2).Str(", bootstrap ").Fixed(bootstrap, 2);
  out.Str(", allgathers ").Fixed(allgathers, 2).Str(", topo ").Fixed(topo, 2);
  out.Str(", graphs ").Fixed(graphs, 2).Str(", connections ").Fixed(connections, 2);
  out.Str(", rest ").Fixed(rest, 2).Char(')').EndLine();
}

}  // namespace denpex::sim
