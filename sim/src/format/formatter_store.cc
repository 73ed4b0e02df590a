// What losing the c10d store's host prints (docs/log_formats.md §6b): a worker's heartbeat
// monitor finding its store connection reset, and an agent's RendezvousConnectionError. The
// words are torch's (TCPStore.cpp, ProcessGroupNCCL.cpp, c10d_rendezvous_backend.py as public
// logs show them); the source line numbers are the simulator's choice (unverified).
#include <vector>

#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr int kStorePort = 29500;  // MASTER_PORT: the store the workers share with their agent
constexpr std::string_view kConnectionReset = "Connection reset by peer";
constexpr std::string_view kRendezvousError =
    "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d "
    "store has failed. See inner exception for details.";

// The line tables of this file, by torch release (profiles.h's VersionRow).

// A worker's heartbeat monitor losing the store: the source lines of the two warnings and of
// recvBytes (torch 2.4 / 2.6 builds; older releases print none of it).
struct StoreLines {
  int tcpstore, should_dump, utils;
  std::string_view csrc;  // where the build's sources were
};

constexpr VersionRow<StoreLines> kStoreLines[] = {
    {{"", "2.5"}, {141, 1662, 672, "../torch/csrc"}},
    {{"2.6", ""}, {125, 1771, 679, "/pytorch/torch/csrc"}},
};
static_assert(CoversEach(kStoreLines, kTorchReleases));

// The agent's store error under RendezvousConnectionError: DistNetworkError from torch 2.2.
constexpr VersionRow<std::string_view> kStoreError[] = {
    {{"", "2.1"}, "RuntimeError: "},
    {{"2.2", ""}, "torch.distributed.DistNetworkError: "},
};
static_assert(CoversEach(kStoreError, kTorchReleases));

// The node that cannot reach the rendezvous endpoint: its c10d connect line (severity,
// socket.cpp line, text) and TCPStore's exception ({0} the endpoint, {1} the port).
struct ConnectFailure {
  char severity;
  int socket_line;
  std::string_view warning, error;
};

constexpr VersionRow<ConnectFailure> kConnectFailure[] = {
    {{"", "2.3"},
     {'E', 860,
      "[c10d] The client socket has timed out after 60s while trying to connect to ({0}, {1}).",
      "RuntimeError: connect() timed out. Original timeout was 60000 ms."}},
    {{"2.4", ""},
     {'W', 752,
      "[c10d] The client socket has failed to connect to [{0}]:{1} (errno: 110 - Connection timed "
      "out).",
      "torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while "
      "trying to connect to ({0}, {1})."}},
};
static_assert(CoversEach(kConnectFailure, kTorchReleases));

// The static TCPStore's client-join timeout: the frames' source lines, the server's exception
// ({0} seconds waited, {1} clients joined, {2} the world) and a client's ({0} its rank), whose
// store->get fails on the closed connection in the words of the release's c10d sockets.
struct JoinTimeout {
  int init_process_group_line, env_handler_line;
  std::string_view create_store_call;
  int create_store_line, barrier_line;
  std::string_view server_error, client_error;
};

constexpr VersionRow<JoinTimeout> kJoinTimeout[] = {
    {{"", "1.13"},
     {754, 246, "store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)",
      176, 3145,
      "RuntimeError: Timed out after {0} seconds waiting for clients. {1}/{2} clients joined.",
      "RuntimeError: [{0}] is setting up NCCL communicator and retreiving ncclUniqueId from [0] "
      "via c10d key-value store by key '0', but store->get('0') got error: Connection reset by "
      "peer"}},
    {{"2.1", "2.3"},
     {1361, 258,
      "store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)",
      185, 3696,
      "torch.distributed.DistStoreError: Timed out after {0} seconds waiting for clients. {1}/{2} "
      "clients joined.",
      "torch.distributed.DistBackendError: [{0}] is setting up NCCL communicator and retrieving "
      "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
      "Connection reset by peer. This may indicate a possible application crash on rank 0 or a "
      "network set up issue."}},
    {{"2.4", ""},
     {1361, 258,
      "store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)",
      185, 3696,
      "torch.distributed.DistStoreError: Timed out after {0} seconds waiting for clients. {1}/{2} "
      "clients joined.",
      "torch.distributed.DistBackendError: [{0}] is setting up NCCL communicator and retrieving "
      "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
      "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown "
      "or crash?. This may indicate a possible application crash on rank 0 or a network set up "
      "issue."}},
};
static_assert(CoversEach(kJoinTimeout, kTorchReleases));

}  // namespace

// torch >= 2.4 only: older releases have no heartbeat monitor polling the store, so their
// workers print nothing until their agent stops them.
void LineFormatter::Format(const StoreConnectionReset& r, LineBuilder& out) const {
  if (torch_.line_heartbeat_timeout == 0 || torch_.native_lib_paths[0].empty()) return;
  const StoreLines& lines = RowFor(kStoreLines, torch_.name);
  Rng rng(job_.seed, StreamId::kLineTiming, (11ULL << 32) + static_cast<std::uint64_t>(r.rank));
  const int node = job_.NodeOf(r.rank);
  TimeNs t = r.time;
  WriteC10Line(out, r.rank, node, t, 'W', "TCPStore.cpp", lines.tcpstore);
  out.Str("[c10d] recvValue failed on SocketImpl(fd=").Int(rng.UniformInt(20, 140));
  out.Str(", addr=[").Str(job_.hostnames[node]).Str("]:").Int(rng.UniformInt(32768, 60999));
  out.Str(", remote=[").Str(job_.hostnames[r.store_node]).Str("]:").Int(kStorePort).Str("): ");
  out.Str(kConnectionReset).EndLine();
  out.Str("Exception raised from recvBytes at ").Str(lines.csrc);
  out.Str("/distributed/c10d/Utils.hpp:").Int(lines.utils).Str(" (most recent call first):").EndLine();
  const std::string_view c10 = torch_.native_lib_paths[0];
  const std::string cpu = std::string(c10.substr(0, c10.rfind('/'))) + "/libtorch_cpu.so";
  const std::uint64_t base = 0x7f0000000000ULL | (rng.Next() & 0xfffffff000ULL);
  out.Str("frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x").Hex(base + 0x99a96);
  out.Str(" in ").Str(c10).Char(')').EndLine();
  out.Str("frame #1: <unknown function> + 0x5d0ffbe (0x").Hex(base + 0x1d0ffbe).Str(" in ").Str(cpu).Char(')').EndLine();
  out.Str("frame #2: c10d::TCPStore::check(std::vector<std::string, std::allocator<std::string> > const&) + 0x2a9 (0x");
  out.Hex(base + 0x1d0a2a9).Str(" in ").Str(cpu).Char(')').EndLine();
  t += rng.UniformInt(100, 900) * kNsPerUs;
  WriteC10Line(out, r.rank, node, t, 'W', "ProcessGroupNCCL.cpp", lines.should_dump);
  WritePgPrefix(out, r.rank, PgKind::kDefault);
  out.Str(" Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: ");
  out.Str(kConnectionReset).EndLine();
}

// The chained traceback: the store's own error, then the rendezvous handler's, raised out of
// the agent's monitor loop (`_invoke_run` -> `num_nodes_waiting`).
void LineFormatter::Format(const AgentStoreFailure& r, LineBuilder& out) const {
  constexpr std::string_view kBackend = "torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py";
  constexpr std::string_view kDynamic = "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py";
  constexpr std::string_view kAgent = "torch/distributed/elastic/agent/server/api.py";
  (void)r;
  out.Str("Traceback (most recent call last):").EndLine();
  Frame(out, {kBackend, 113, "_call_store", "return getattr(self._store, store_op)(*args, **kwargs)"});
  out.Str(RowFor(kStoreError, torch_.name)).Str(kConnectionReset).EndLine();
  out.EndLine();
  out.Str("The above exception was the direct cause of the following exception:").EndLine();
  out.EndLine();
  out.Str("Traceback (most recent call last):").EndLine();
  const auto& frames = torch_.torchrun_traceback;
  for (std::size_t i = 0; i + 1 < frames.size(); ++i) Frame(out, frames[i]);
  Frame(out, {"torch/distributed/launcher/api.py", frames.empty() ? 255 : frames.back().line - 9, "launch_agent", "result = agent.run()"});
  Frame(out, {"torch/distributed/elastic/metrics/api.py", 124, "wrapper", "result = f(*args, **kwargs)"});
  Frame(out, {kAgent, 697, "run", "result = self._invoke_run(role)"});
  Frame(out, {kAgent, 880, "_invoke_run", "num_nodes_waiting = rdzv_handler.num_nodes_waiting()"});
  Frame(out, {kDynamic, 1213, "num_nodes_waiting", "self._state_holder.sync()"});
  Frame(out, {kDynamic, 428, "sync", "get_response = self._backend.get_state()"});
  Frame(out, {kBackend, 75, "get_state", "base64_state: bytes = self._call_store(\"get\", self._key)"});
  Frame(out, {kBackend, 119, "_call_store", "raise RendezvousConnectionError("});
  out.Str(kRendezvousError).EndLine();
}

}  // namespace denpex::sim

namespace denpex::sim {

// FAULT_KIND_RENDEZVOUS_TIMEOUT (docs/log_formats.md §6c). The node that cannot reach the
// endpoint: its c10d connect warning (torch >= 2.4: `failed to connect ... (errno: 110 ...)`;
// older: `[E socket.cpp:860] ... has timed out after 60s ...`), then the chained traceback out of
// the handler's creation. The others: the traceback out of next_rendezvous, bare
// `RendezvousTimeoutError` (the join timeout raises it without a message).
std::int64_t LineFormatter::Format(const AgentRendezvousFailure& r, LineBuilder& out) const {
  constexpr int kRdzvPort = 29400;  // torchrun's c10d rendezvous port when the endpoint names none
  constexpr std::string_view kBackend = "torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py";
  constexpr std::string_view kDynamic = "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py";
  constexpr std::string_view kAgent = "torch/distributed/elastic/agent/server/api.py";
  const std::int64_t first = out.lines();
  const ConnectFailure& connect = RowFor(kConnectFailure, torch_.name);
  const std::string& endpoint = job_.hostnames[0];
  const auto& frames = torch_.torchrun_traceback;
  if (!r.timed_out) {
    WriteC10Line(out, -1, r.node, r.time - 10 * kNsPerMs, connect.severity, "socket.cpp",
                 connect.socket_line);
    out.Fill(connect.warning, {endpoint, kRdzvPort}).EndLine();
    out.Str("Traceback (most recent call last):").EndLine();
    Frame(out, {kBackend, 159, "_create_tcp_store", "store = TCPStore("});
    out.Fill(connect.error, {endpoint, kRdzvPort}).EndLine();
    out.EndLine();
    out.Str("The above exception was the direct cause of the following exception:").EndLine();
    out.EndLine();
    out.Str("Traceback (most recent call last):").EndLine();
    for (std::size_t i = 0; i + 1 < frames.size(); ++i) Frame(out, frames[i]);
    Frame(out, {"torch/distributed/launcher/api.py", frames.empty() ? 246 : frames.back().line - 18, "launch_agent",
           "rdzv_handler=rdzv_registry.get_rendezvous_handler(rdzv_parameters),"});
    Frame(out, {"torch/distributed/elastic/rendezvous/registry.py", 66, "get_rendezvous_handler", "return handler_registry.create_handler(params)"});
    Frame(out, {"torch/distributed/elastic/rendezvous/api.py", 367, "create_handler", "handler = creator(params)"});
    Frame(out, {"torch/distributed/elastic/rendezvous/registry.py", 41, "_create_c10d_handler", "backend, store = create_backend(params)"});
    Frame(out, {kBackend, 254, "create_backend", "store = _create_tcp_store(params)"});
    Frame(out, {kBackend, 183, "_create_tcp_store", "raise RendezvousConnectionError("});
    const std::int64_t at = out.lines() - first;
    out.Str("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See "
            "inner exception for details.")
        .EndLine();
    return at;
  }
  out.Str("Traceback (most recent call last):").EndLine();
  for (std::size_t i = 0; i + 1 < frames.size(); ++i) Frame(out, frames[i]);
  Frame(out, {"torch/distributed/launcher/api.py", frames.empty() ? 255 : frames.back().line - 9, "launch_agent", "result = agent.run()"});
  Frame(out, {"torch/distributed/elastic/metrics/api.py", 124, "wrapper", "result = f(*args, **kwargs)"});
  Frame(out, {kAgent, 697, "run", "result = self._invoke_run(role)"});
  Frame(out, {kAgent, 836, "_invoke_run", "self._initialize_workers(self._worker_group)"});
  Frame(out, {"torch/distributed/elastic/metrics/api.py", 124, "wrapper", "result = f(*args, **kwargs)"});
  Frame(out, {kAgent, 671, "_initialize_workers", "self._rendezvous(worker_group)"});
  Frame(out, {"torch/distributed/elastic/metrics/api.py", 124, "wrapper", "result = f(*args, **kwargs)"});
  Frame(out, {kAgent, 500, "_rendezvous", "rdzv_info = spec.rdzv_handler.next_rendezvous()"});
  Frame(out, {kDynamic, 1123, "next_rendezvous", "self._op_executor.run(join_op, deadline, self._get_deadline)"});
  Frame(out, {kDynamic, 679, "run", "raise RendezvousTimeoutError"});
  const std::int64_t at = out.lines() - first;
  out.Str("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError").EndLine();
  return at;
}

}  // namespace denpex::sim

namespace denpex::sim {

namespace {

// One traceback line, behind the profile's traceback prefix.
LineBuilder& RankLine(LineBuilder& out, std::string_view prefix, int rank) {
  return out.Fill(prefix, {rank});
}

}  // namespace

// The static TCPStore of init_method env:// (torch/distributed/rendezvous.py) never saw every
// client. Rank 0 hosts the server: its constructor waits for `world` clients and raises
// DistStoreError after the process group's timeout. The server dies with that exception, so
// each rank that joined fails its first collective's store->get of the ncclUniqueId
// (ProcessGroupNCCL's broadcastUniqueNCCLID) on the closed connection.
std::int64_t LineFormatter::Format(const StoreJoinTimeout& r, LineBuilder& out) const {
  const std::string_view prefix = torch_.traceback_prefix;
  const JoinTimeout& shape = RowFor(kJoinTimeout, torch_.name);
  std::vector<PythonFrame> frames;
  if (r.rank == 0) {
    frames = {{"/workspace/train.py", 88, "<module>",
               "deepspeed.init_distributed(dist_backend=\"nccl\")"},
              {"deepspeed/comm/comm.py", 670, "init_distributed",
               "cdb = TorchBackend(dist_backend, timeout, init_method, rank, world_size)"},
              {"deepspeed/comm/torch.py", 112, "__init__",
               "self.init_process_group(backend, timeout, init_method, rank, world_size)"},
              {"deepspeed/comm/torch.py", 142, "init_process_group",
               "torch.distributed.init_process_group(backend,"},
              {"torch/distributed/distributed_c10d.py", shape.init_process_group_line,
               "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"},
              {"torch/distributed/rendezvous.py", shape.env_handler_line, "_env_rendezvous_handler",
               shape.create_store_call},
              {"torch/distributed/rendezvous.py", shape.create_store_line, "_create_c10d_store",
               "return TCPStore("}};
  } else {
    frames = {{"/workspace/train.py", 90, "<module>", "torch.distributed.barrier()"},
              {"torch/distributed/distributed_c10d.py", shape.barrier_line, "barrier",
               "work = default_pg.barrier(opts=opts)"}};
  }
  RankLine(out, prefix, r.rank).Str("Traceback (most recent call last):").EndLine();
  for (const PythonFrame& f : frames) {
    RankLine(out, prefix, r.rank).Str("  File \"");
    if (!f.file.starts_with('/')) out.Str(torch_.python_lib).Char('/');
    out.Str(f.file).Str("\", line ").Int(f.line).Str(", in ").Str(f.function).EndLine();
    RankLine(out, prefix, r.rank).Str("    ").Str(f.code).EndLine();
  }
  const std::int64_t cited = out.lines();
  RankLine(out, prefix, r.rank);
  if (r.rank == 0) {
    out.Fill(shape.server_error, {r.waited_seconds, r.joined, job_.world}).EndLine();
    return cited;
  }
  out.Fill(shape.client_error, {r.rank}).EndLine();
  return cited;
}

}  // namespace denpex::sim
