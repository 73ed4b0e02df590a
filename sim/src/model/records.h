// What the model says happened, as typed records: plain structs in one std::variant. The
// model never builds strings; formatters (formatter.h) turn records into the lines of a
// version profile, and the writer (writer.h) puts those lines into files. Times are true
// times (ns since the epoch); the formatter applies each node's clock offset.
#pragma once

#include <array>
#include <cstdint>
#include <variant>
#include <vector>

#include "denpex/common/time.h"
#include "job.h"

namespace denpex::sim {

enum class OpType : std::uint8_t { kAllreduce, kSend, kRecv, kAllgatherBase, kReduceScatterBase };

// Exit codes as torchrun reports them: minus the signal number.
inline constexpr int kExitSigkill = -9;
inline constexpr int kExitSigabrt = -6;
inline constexpr int kExitSigterm = -15;
inline constexpr int kExitSigsegv = -11;
inline constexpr int kExitException = 1;
// Internal: the process vanished with its node; no launcher ever reports it.
inline constexpr int kExitNodeLost = -128;
// Internal, srun's task lines only: SIGKILLed by the cgroup OOM killer ("Out Of Memory").
inline constexpr int kExitOomKilled = -120;

// --- worker (rank) output ------------------------------------------------------------------

// "NCCL version ..." (stdout, flushed): once per process, at its first communicator where it
// is rank 0.
struct NcclVersionBanner {
  int rank;
  TimeNs time;
};

// NCCL_DEBUG=INFO's per-process lines before the first communicator (bootstrap interface,
// network plugin, driver, IB devices) (stdout, flushed).
struct NcclProcessInfo {
  int rank;
  TimeNs time;
};

// "... NCCL INFO comm 0x... rank r nranks n ... - Init START" through "- Init COMPLETE":
// one communicator's set-up block (stdout, flushed).
struct NcclCommInit {
  int rank;
  TimeNs time;
  PgKind group;
  bool first = false;  // the process's first communicator (NCCL loads its kernels then)
};

// Megatron's iteration line (stdout, block-buffered).
struct TrainerIteration {
  int rank;
  TimeNs time;
  int iteration;
  double elapsed_ms;  // per iteration, averaged over the log interval
  double learning_rate;
  double loss;
  double grad_norm;
  double mem_allocated_gb = 0;      // DeepSpeed's timer line (rounded to 0.01 GB)
  double max_mem_allocated_gb = 0;
};

// DeepSpeed-style per-rank timers (`[Rank R] time (ms) | fwd: ... | bwd_allreduce: ...`),
// printed by every rank at the end of a step (stderr, unbuffered). The model knows compute
// (time outside NCCL work) and wait (time blocked in collectives) of the step.
struct RankTimers {
  int rank;
  TimeNs time;
  double compute_ms;
  double wait_ms;
  double fwd_share;     // drawn: the forward part of compute, ~1/3
  double optimizer_ms;  // drawn: the optimizer step (cosmetic)
  bool slow;            // the fault slowed this step (for the truth's citation)
};

// NCCL's WARN for a failed IB work completion (NCCL_DEBUG=WARN or INFO), printed by the
// proxy progress thread: status 12 (transport retry counter exceeded, vendor err 129) on a
// link whose far end stopped answering, status 5 (work request flushed, vendor err 249) on a
// queue pair torn down after another error.
struct NcclIbError {
  int rank;
  TimeNs time;
  int peer;    // the rank at the other end (its node's address is printed)
  int status;  // 12 or 5
  bool send;   // "(Send)" or "(Recv)"
  // NCCL_IB_DISABLE=1 (NET/Socket): status 12 prints the reporter's own failed socket
  // (`Call to recv from <peer> failed : Connection reset by peer`), status 5 the far end
  // closing (`Connection closed by remote peer <peer's host>`).
  bool socket = false;
};

// NCCL's IB async thread (one per HCA in every process that opened it) warning of a device event:
// here the failed NIC's port going down (`port error`), printed by every process of its node.
struct NcclIbPortError {
  int rank;  // the process that prints it
  TimeNs time;
  int device;  // the HCA, mlx5_<device>: the failed rank's own NIC
};

// ProcessGroupNCCL's watchdog thread caught NCCL's asynchronous error on the rank's
// communicator (after the IB error): the c10 line with NCCL's message and "Last error:", then
// the C++ terminate. The process aborts (exit -6) right after. "Last error:" is
// ncclGetLastError(): the text of the last WARN any thread of the process printed (debug.cc
// keeps it whatever NCCL_DEBUG says), here the rank's last NCCL WARN before the abort.
struct NcclAsyncError {
  int rank;
  TimeNs time;
  PgKind group;
  bool remote;  // ncclRemoteError (the peer's end failed) rather than ncclSystemError
  NcclIbError last;  // the rank's last WARN
};

// A rank's NCCL communicator init fails (FAULT_KIND_NCCL_BOOTSTRAP / DUPLICATE_GPU): NCCL's
// WARN (stdout, flushed; `traceback` false) and then the Python traceback of the first barrier
// ending in torch's NCCL error with NCCL's "Last error:" (stderr; `traceback` true).
struct NcclSetupFailure {
  int rank;
  TimeNs time;
  bool duplicate;  // "Duplicate GPU detected" rather than "Bootstrap : no socket interface found"
  int other;       // duplicate: the other rank on the same GPU
  bool traceback;
  bool timeout = false;  // FAULT_KIND_BOOTSTRAP_TIMEOUT: the connect to the bootstrap root timed out
};

// What the rank's torch does once its watchdog caught the timeout
// (timeouts.async_error_handling, timeouts.blocking_wait; docs/log_formats.md §3).
enum class WatchdogReaction : std::uint8_t {
  kTearDown,     // modes 1 and 3: "To avoid data inconsistency, ..." and SIGABRT
  kCleanUpOnly,  // mode 2: the communicators are aborted; the main thread raises
                 // "NCCL communicator was aborted on rank r." (traceback, exit 1)
  kNoHandling,   // mode 0: logged only; the process hangs on
  kBlockingWait,  // TORCH_NCCL_BLOCKING_WAIT=1: "Work ... timed out in blocking wait", the
                  // main thread raises the timeout (traceback, exit 1)
  kStuck,        // modes 1, 2: ncclCommAbort hangs; the heartbeat monitor kills it (SIGABRT)
};

// The ProcessGroupNCCL watchdog block (stderr, unbuffered), printed just before SIGABRT (or
// what the reaction prints instead).
struct WatchdogTimeout {
  int rank;
  TimeNs time;
  PgKind group;
  OpType op;
  std::int64_t numel;      // NumelIn
  std::int64_t numel_out;  // NumelOut
  std::int64_t seq;        // the timed-out work
  std::int64_t last_enqueued;
  std::int64_t last_completed;
  std::int64_t timeout_ms;
  std::int64_t ran_for_ms;
  // Flight recorder (dump_on_timeout): when the heartbeat monitor wakes to the dump signal
  // (after `time`; 0: no dump lines), the process is aborted at time + dump_abort_delay, and
  // default_pg's work counters its lines print.
  TimeNs dump_signal_delay = 0;
  TimeNs dump_abort_delay = 0;
  std::int64_t default_enqueued = 0;
  std::int64_t default_completed = 0;
  WatchdogReaction reaction = WatchdogReaction::kTearDown;
  TimeNs raise_delay = 0;      // kCleanUpOnly, kBlockingWait: the main thread raises then
  TimeNs heartbeat_delay = 0;  // kStuck: the heartbeat monitor fires then
  int pending_works = 1;       // kStuck: workMetaList_.size()
  // The heartbeat monitor already dumped on another rank's signal (DumpSignalObserved): the
  // block prints no dump lines of its own and the abort follows at once.
  bool dump_observed = false;
};

// What a timed-out rank prints later, if it is still alive then: the main thread's traceback
// (kCleanUpOnly, kBlockingWait: at timeout.time + raise_delay) or the heartbeat monitor's
// report before it kills the process (kStuck: at timeout.time + heartbeat_delay).
struct WatchdogAftermath {
  TimeNs time;  // when it prints
  WatchdogTimeout timeout;
};

// TORCH_NCCL_DUMP_ON_TIMEOUT: the heartbeat monitor of a rank whose own watchdog has not
// fired polls the TCPStore and finds the first timed-out rank's dump signal: "Observed flight
// recorder dump signal from another rank via TCPStore.", "Received a dump signal due to a
// collective timeout from  rank <from> ..." and "ProcessGroupNCCL preparing to dump debug
// info." (stderr). `from` is the first detector, itself a victim.
struct DumpSignalObserved {
  int rank;
  TimeNs time;
  int from;
  std::int64_t default_enqueued;
  std::int64_t default_completed;
};

// One entry of a rank's flight-recorder ring (TORCH_NCCL_TRACE_BUFFER_SIZE): one NCCL operation
// it enqueued on one of its process groups. A batched send+recv (1F1B) is three entries, as
// torch records a coalesced group: its send, its receive, and the group's `coalesced` entry.
enum class FrOp : std::uint8_t {
  kAllreduce,
  kReduceScatterBase,
  kAllgatherBase,
  kSend,
  kRecv,
  kCoalesced,
};

struct FrEntry {
  std::int64_t record_id;  // the ring's running count (0 = the rank's first entry)
  PgKind group;
  FrOp op;
  std::int32_t peer = -1;  // kSend, kRecv: the peer's rank in the group
  std::int64_t seq;        // the group's collective or p2p sequence number
  std::int64_t op_id;      // the group's operation count
  std::int64_t numel_in;   // elements of the one input tensor
  std::int64_t numel_out;  // ... and of the output
  TimeNs created;          // enqueued (time_created_ns)
  TimeNs started = -1;     // -1: not seen started (TORCH_NCCL_ENABLE_TIMING only)
  TimeNs completed = -1;   // -1: not seen completed (still scheduled or started)
  bool retired = false;    // the watchdog retired it (completed and off its work list)
  float duration_ms = -1;  // with timing, a retired entry's kernel time; -1: none
};

// A process group's counters as the dump's pg_status reports them; -1: none yet.
struct FrGroupStatus {
  PgKind group;
  std::int64_t last_enqueued = -1;
  std::int64_t last_started = -1;
  std::int64_t last_completed = -1;
};

// The rank's flight-recorder dump (timeouts.flight_recorder): written when its heartbeat
// monitor dumps (the dump-signal lines' "preparing to dump" time), the last buffer_size entries
// oldest first. `first_failed`: the rank whose timeout signalled the dump.
struct FlightRecorderDump {
  int rank;
  TimeNs time;
  bool first_failed = false;
  std::vector<FrEntry> entries;
  std::vector<FrGroupStatus> groups;  // the groups that recorded an entry, by local pg id
};

// NCCL's collective function types, in ncclFunc_t's order: what RAS counts per communicator
// rank (send/recv are not counted).
enum class RasFunc : std::uint8_t { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce };
inline constexpr int kNumRasFuncs = 5;
using RasCounts = std::array<std::int32_t, kNumRasFuncs>;

// A process as the RAS network sees it at a poll.
enum class RasProcess : std::uint8_t {
  kRunning,       // answers; its communicators run
  kAborted,       // answers; its watchdog aborted its communicators (ABORT)
  kUnresponsive,  // a member RAS has not heard from yet (not started, or its node just vanished)
  kDead,          // gone: RAS considers it dead (its connections closed or timed out)
};

// One `ncclras` run by the operator's poller (scenario `nccl_ras`, workers_ras.cc): the job's
// processes and, per rank and process-group kind, its launched collectives by type (the
// communicator of that kind that holds the rank; PgKind::kDefault is the world communicator).
// `answered` false: no process on the first node runs a RAS server (the client's error went to
// stderr, the file gets the date line alone).
struct NcclRasReport {
  TimeNs time;
  bool answered = true;
  std::vector<RasProcess> process;  // by rank
  std::vector<RasCounts> counts;    // rank * kNumPgKinds + kind
};

// Whose error a PythonException is: the Megatron trainer's own (FAULT_KIND_EXCEPTION), or one
// of the frameworks' and memory tiers' of issue #8 (formatter_frameworks.cc).
enum class AppError : std::uint8_t {
  kMegatron,        // data loader IndexError, NaN grad norm, shape error
  kDeepSpeed,       // ZeRO stage, offload, pipeline engine
  kFsdp,            // FlatParameter uniform dtype / requires_grad
  kCheckpointLoad,  // DP world-size mismatch, missing ZeRO shard, state-dict size mismatch
  kPinnedMemory,    // pinned host memory: the DataLoader's pin-memory thread, or a direct pin (odd variants)
  kSaveOom,         // torch's OutOfMemoryError gathering a full state dict for a save
  kDeepSpeedAio,    // the async_io op cannot be JIT-loaded for ZeRO-Infinity's NVMe offload
  kZeroPipeline,    // ZeRO-2/3 asked of DeepSpeed's PipelineEngine
  // A rank that waited on torch's extension build lock (FileBaton) while a local peer built the
  // op, then imported the .so the failed build never wrote: ImportError (cannot open shared object).
  kExtensionImport,
};

// An uncaught Python exception's traceback (stderr), printed just before the rank exits 1.
// `variant` picks one of the source's tracebacks.
struct PythonException {
  int rank;
  TimeNs time;
  int variant;
  AppError source = AppError::kMegatron;
};

// DeepSpeed's lines on rank 0 beside its step lines (stdout through Python logging): the fp16
// loss scaler's overflow notices (realism, routine), `see_memory_usage` (ZeRO offload's host
// memory), and the checkpoint save notice.
// kCommInit: deepspeed.init_distributed's start-up lines, every rank (deepspeed_runner).
enum class DeepSpeedNote : std::uint8_t { kOverflow, kMemoryUsage, kSaving, kCommInit };

struct DeepSpeedLine {
  int rank;
  TimeNs time;
  DeepSpeedNote note;
  int iteration;
  double loss_scale = 0;     // kOverflow: the scale that overflowed (halved after)
  double host_used_gb = 0;   // kMemoryUsage: psutil's used host memory (total - available)
  double host_percent = 0;
  double mem_allocated_gb = 0;  // kMemoryUsage: MA / Max_MA / CA of the rank's GPU
};

// Python faulthandler's dump after SIGSEGV (stderr, written by a signal handler).
struct SegfaultDump {
  int rank;
  TimeNs time;
  int variant;
};

// A worker process ended: by a signal (exit_code < 0) its unflushed stdout is lost.
struct WorkerExit {
  int rank;
  TimeNs time;
  int exit_code;
};

// Benign warnings (stderr, unbuffered): realism noise that every real job prints.
enum class WarningKind : std::uint8_t {
  kSocketFamily,     // c10 "[W ... socket.cpp] [c10d] The client socket cannot be initialized ..."
  kTypedStorage,     // Python "UserWarning: TypedStorage is deprecated ..." + its source line
  kBarrierDevice,    // c10 ProcessGroupNCCL "... using GPU <n> to perform barrier as devices ..."
  kAutogradFallback  // Python "UserWarning: c10d::allreduce_: an autograd kernel was not ..."
};

struct BenignWarning {
  int rank;
  TimeNs time;
  WarningKind kind;
};

// A CUDA error the rank's main thread raises at its next synchronisation (stderr, then exit 1):
// the traceback's last line is `RuntimeError: CUDA error: <what>` (or torch's OOM error), with
// the era's hint lines; a device-side assert is preceded by its per-thread assertion lines.
enum class CudaFailureKind : std::uint8_t {
  kUnspecifiedLaunch,  // "unspecified launch failure" (a GPU gone or reset under the process)
  kUnknown,            // "unknown error"
  kEccUncorrectable,   // "uncorrectable ECC error encountered"
  kNvlinkUncorrectable,  // "an uncorrectable NVLink error was detected during the execution"
  kIllegalAddress,     // "an illegal memory access was encountered"
  kIllegalInstruction,  // "an illegal instruction was encountered"
  kDeviceAssert,       // "device-side assert triggered"
  kOutOfMemory,        // torch's caching allocator: "CUDA out of memory. Tried to allocate ..."
};

struct CudaFailure {
  int rank;
  TimeNs time;
  CudaFailureKind kind;
  int variant;  // drawn: sizes, assertion line count
};

// --- kernel log (<host>/kern.log) -------------------------------------------------------------

enum class KernelEvent : std::uint8_t {
  kLinuxVersion,  // "Linux version 5.15.0-105-generic ..."
  kCommandLine,   // "Command line: BOOT_IMAGE=..."
  kNicFirmware,   // "mlx5_core <pci>: firmware version: ..." (arg: NIC index)
  kNicLinkUp,     // "mlx5_core <pci> <ifname>: Link up" (arg: NIC index)
  kNvidiaTaint,   // "nvidia: loading out-of-tree module taints kernel."
  kNvrmLoaded,    // "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08 ..."
  kGpuAt,         // "NVRM: GPU at PCI:<bus>: GPU-<uuid>" (arg: GPU)
  kGpuSerial,     // "NVRM: GPU Board Serial Number: <n>" (arg: GPU)
  kXid63,         // "NVRM: Xid (PCI:<bus>): 63, pid='<unknown>', name=<unknown>, Row Remapper ..."
  // Faults (formatter_gpu.cc); arg: the GPU.
  kXid,           // "NVRM: Xid (PCI:<bus>): <code>, [pid=..., name=..., ]<text>" (code, detail)
  kGpuFellOff,    // "NVRM: GPU 0000:<bus>.0: GPU has fallen off the bus."
  kCrashDump,     // "NVRM: A GPU crash dump has been created. ..."
  kGspRateLimit,  // "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:... (printing 1 of every 30). ..."
  // The OOM killer (pid: the victim).
  kOomInvoked,    // "python3 invoked oom-killer: gfp_mask=..., order=0, oom_score_adj=0"
  kOomConstraint, // "oom-kill:constraint=CONSTRAINT_NONE,...,task=python3,pid=N,uid=1000"
  kOomKilled,     // "Out of memory: Killed process N (python3) total-vm:..."
  kOomReaped,     // "oom_reaper: reaped process N (python3), now anon-rss:0kB, ..."
  // A hung software mount (FAULT_KIND_STORE_JOIN_TIMEOUT under srun / mpirun): the NFS client's
  // word, then khungtaskd's report of a task stuck in D state (detail: its pid), with its trace.
  kNfsNotResponding,  // "nfs: server nfs-01 not responding, still trying"
  kHungTask,          // "INFO: task python3:<pid> blocked for more than 120 seconds." + 10 lines
};

struct KernelMessage {
  int node;
  TimeNs time;
  TimeNs boot;  // when the node booted (the "[uptime]" is time - boot)
  KernelEvent event;
  int arg;
  int code = 0;    // kXid: the Xid number
  int detail = 0;  // kXid: which body (link number, variant); kOom*: the process's pid
  bool cite = false;  // the truth cites this line (the fault's initiating kernel line)
  // kXid: rsyslog folded this many identical repeats of the line: "message repeated <n> times:
  // [ NVRM: Xid ...]" (0: the line itself).
  int repeats = 0;
};

enum class RemapState : std::uint8_t { kNone, kPending, kFailed };
enum class Throttle : std::uint8_t { kNone, kThermal, kPowerBrake };

// `nvidia-smi` run on the node when the job ended (<host>/nvidia-smi.log): the GPU table with
// each GPU's bus id; a GPU that fell off the bus is reported as unreachable instead.
struct NvidiaSmiSnapshot {
  int node;
  TimeNs time;
  int lost_gpu;  // -1: none
  int ecc_gpu;   // -1: none; its volatile uncorrectable ECC count is non-zero
  // `nvidia-smi -q` and DCGM (realism.nvidia_smi_query, realism.dcgm; formatter_gpu_health.cc).
  RemapState remap = RemapState::kNone;  // ecc_gpu's row remapper
  int corrected_gpu = -1;  // an old corrected error: aggregate correctable, one remapped row
  int throttle_gpu = -1;   // a fail-slow GPU and why its clocks are held down
  Throttle throttle = Throttle::kNone;
  int nvlink_gpu = -1;     // a GPU whose NVLink failed (dcgmi diag -r 2's PCIe test fails on it)
  // A fail-slow GPU whose PCIe link trained down to x4 (no clock reason shows it): dcgmi diag
  // -r 2's PCIe test fails on it with DCGM's link-width message.
  int pcie_gpu = -1;
  int xid_gpu = -1;        // DCGM_FI_DEV_XID_ERRORS: the last Xid of this GPU
  int xid = 0;
};

// --- torchrun agent output (the node's torchrun.log) ---------------------------------------

struct AgentBanner {
  int node;
  TimeNs time;
};

struct AgentSigterm {
  int node;
  TimeNs time;
  int rank;  // the worker being stopped
};

struct AgentFailure {
  int rank;
  int exit_code;
};

// "failed (exitcode: ...)", the traceback and the ChildFailedError table. failures[0] is the
// root cause; the rest were seen exited in the same poll.
struct AgentFailureReport {
  int node;
  TimeNs time;       // when it is printed (after the other workers were stopped)
  TimeNs poll_time;  // when the failures were observed: the table's "time" field
  int failure_count;
  std::array<AgentFailure, 16> failures;
};

struct AgentExit {
  int node;
  TimeNs time;
};

// torchrun itself got SIGTERM (Kubernetes: the kubelet stops the pod, evicted or deleted):
// "Received Signals.SIGTERM death signal, shutting down workers" before it stops its workers
// (`exception` false), then the SignalException traceback once they are gone (true).
struct AgentSignalled {
  int node;
  TimeNs time;
  bool exception;
};

// --- the c10d store (FAULT_KIND_STORE_HOST_LOSS) ---------------------------------------------

// A worker's heartbeat monitor (torch >= 2.4; nothing before) finds its connection to the c10d
// store reset: TCPStore's `recvValue failed on SocketImpl(...)` warning and its exception frames,
// then ProcessGroupNCCL's `Failed to check the "should dump" flag on TCPStore` (rank's stderr).
struct StoreConnectionReset {
  int rank;
  TimeNs time;
  int store_node;  // the store's host, named as the socket's remote end
};

// The static TCPStore (init_method env://) never saw every client (FAULT_KIND_STORE_JOIN_TIMEOUT):
// rank 0's server raises `DistStoreError: Timed out after <s> seconds waiting for clients.
// <joined>/<world> clients joined.`; every other rank that joined then fails getting the
// ncclUniqueId from the store that died with it (formatter_store.cc).
struct StoreJoinTimeout {
  int rank;
  TimeNs time;
  int joined;          // clients that joined, rank 0's own included
  int waited_seconds;  // the server's elapsed wait as it prints it
};

// An agent's monitor loop finds the store gone (num_nodes_waiting -> the store's get): the
// chained traceback ending `RendezvousConnectionError: The connection to the C10d store has
// failed. See inner exception for details.` (the node's torchrun.log, after its SIGTERMs).
struct AgentStoreFailure {
  int node;
  TimeNs time;
};

// The c10d rendezvous never completed (FAULT_KIND_RENDEZVOUS_TIMEOUT). `timed_out` false: the
// node whose agent could not reach the endpoint (a c10d connect warning, then the chained
// traceback ending RendezvousConnectionError); true: an agent that waited out the join timeout
// (the traceback ending `RendezvousTimeoutError`, bare).
struct AgentRendezvousFailure {
  int node;
  TimeNs time;
  bool timed_out;
};

// --- Ray (driver.log, gcs_server.out) ----------------------------------------------------------

// The trainer lists its workers: `(TorchTrainer pid=P, ip=IP) Started distributed worker
// processes:` and one `- (node_id=..., ip=..., pid=...) world_rank=R, local_rank=L, node_rank=N`
// line per worker.
struct RayWorkerTable {
  TimeNs time;
};

// Why the driver's ActorDiedError says the actor died; kTaskError: the actor lives, but its
// training function raised (the driver's `ray.exceptions.RayTaskError(<Exc>)`).
enum class RayDeath : std::uint8_t { kWorkerDied, kNodeDied, kMemoryMonitor, kTaskError };

// The driver learns that the actor of `rank` died: the trial's traceback ending in
// `ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.`, the
// actor's fields and the cause line. kTaskError: the traceback ends in
// `ray.exceptions.RayTaskError(<Exc>): ray::_RayTrainWorker__execute.get_next() (pid=, ip=, ...)`,
// the worker's frames and its exception line (`exception`, that rank's PythonException).
struct RayActorDied {
  int rank;
  TimeNs time;
  RayDeath cause;
  int variant = 0;                      // kTaskError: the PythonException's variant and source
  AppError source = AppError::kMegatron;
};

// GCS (gcs_server.out): the node missed too many health checks and is marked dead.
struct RayNodeDead {
  int node;
  TimeNs time;
};

// The raylet's memory monitor summary, forwarded to the driver as `(raylet) ...`.
struct RayletOomKill {
  int node;
  TimeNs time;
};

// The node vanished: everything its processes had not yet written is lost.
struct NodeLost {
  int node;
  TimeNs time;
};

// --- Slurm (srun's stderr and slurmstepd's lines in slurm-<jobid>.out; slurmctld.log) -----

// "srun: error: <host>: task<s> <list>: <status>": tasks of one node that exited with the
// same status, reported together.
struct SrunTaskExits {
  int node;
  TimeNs time;
  int exit_code;
  int count;
  std::array<int, 16> ranks;  // ascending
};

enum class SrunNotice : std::uint8_t {
  kTerminatingStep,  // KillOnBadExit: "srun: launch/slurm: _step_signal: Terminating StepId=J.0"
  kStepAborted,      // "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."
  kNodeFailure,      // "srun: error: Node failure on <host>"
  kOomEvent,         // slurmstepd: "Detected 1 oom_kill event in StepId=J.0. ..." (node)
};

struct SrunMessage {
  TimeNs time;
  SrunNotice notice;
  int node;  // kNodeFailure
};

// Why the scheduler cancelled: the "DUE TO ..." of slurmstepd's line.
enum class CancelReason : std::uint8_t { kNone, kTimeLimit, kPreemption, kNodeFailure };

// "slurmstepd: error: *** STEP J.0 ON <host> CANCELLED AT <time>[ DUE TO ...] ***" (or JOB J).
struct StepdCancelled {
  int node;
  TimeNs time;
  CancelReason reason;
  bool whole_job;  // "JOB J" (the batch step's line) rather than "STEP J.0"
};

enum class CtldEvent : std::uint8_t {
  kAllocate,       // "sched: Allocate JobId=J NodeList=... #CPUs=... Partition=..."
  kTimeLimit,      // "Time limit exhausted for JobId=J"
  kKillRequest,    // "_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=J uid 1000"
  kPreempted,      // "preempted JobId=J has been killed to reclaim resources for JobId=K"
  kNotResponding,  // "error: Nodes <host> not responding"
  kSetDown,        // "error: Nodes <host> not responding, setting DOWN"
  kKillOnFailed,   // "Killing JobId=J on failed node <host>"
  kJobComplete,    // "_job_complete: JobId=J WEXITSTATUS <n>" / "WTERMSIG <n>"
  kJobDone,        // "_job_complete: JobId=J done"
  kRequeue,        // "requeue JobId=J due to failure of node <host>" (sbatch --requeue)
  kNowResponding,  // "Node <host> now responding" (its slurmd answers again)
  kReallocate,     // the requeued run's "sched: Allocate ..." (without the failed node)
};

struct CtldLine {
  TimeNs time;
  CtldEvent event;
  int node;    // kNotResponding, kSetDown, kKillOnFailed, kRequeue, kNowResponding;
               // kReallocate: the node left out of the new allocation
  int status;  // kJobComplete: the exit status (>= 0) or minus the signal
};

// A requeue-aware batch script's first line, at the start of each run (unlabelled):
// "SLURM_JOB_ID=J SLURM_RESTART_COUNT=N SLURM_JOB_NODELIST=<list>".
struct BatchBanner {
  TimeNs time;
  int restart_count;
  int excluded_node;  // the node the run's allocation leaves out (-1: none)
};

// Megatron's line once the requeued run has loaded its checkpoint (rank 0):
// " successfully loaded checkpoint from <dir> at iteration K".
// A checkpoint save as the layout's framework logs it on rank 0 (scenario `checkpointing`,
// Megatron and DeepSpeed layouts): the start lines, or the finish lines. Both frameworks
// flush them at once (print_rank_0's flush=True, Python logging).
struct CheckpointSave {
  int rank;
  TimeNs time;
  int iteration;
  bool finished;
};

struct CheckpointResumed {
  int rank;
  TimeNs time;
  int iteration;
};

// An iteration line of the requeued run: written through at once (the run is still going
// when the logs are collected, and these are the lines it had flushed).
struct ResumedIteration {
  TrainerIteration line;
  TimeNs time;  // line.time (every record has one)
};

// --- Open MPI's mpirun (its own messages in mpirun.out) -------------------------------------

enum class MpiNotice : std::uint8_t {
  kExitCode,   // "Primary job  terminated normally, ..." + "mpirun detected that one or more
               // processes exited with non-zero status, ..." (Process name / Exit code)
  kSignal,     // "Primary job ..." + "mpirun noticed that process rank R with PID P on node H
               // exited on signal N (Name)."
  kLostDaemon, // "ORTE has lost communication with a remote daemon." (HNP / remote daemon)
  kBindings,   // --report-bindings: the node's daemon names its host and each rank it starts
};

struct MpirunNotice {
  TimeNs time;
  MpiNotice notice;
  int rank;  // kExitCode, kSignal: the first rank that failed
  int node;  // kLostDaemon: the node whose orted was lost; kBindings: the daemon's node
  int exit_code;
};

// --- DeepSpeed's launcher over pdsh (deepspeed.log) --------------------------------------------

enum class PdshNoticeKind : std::uint8_t {
  kRunner,      // the login host: runner.py's "Using IP address ...", "Running on the following
                // workers: ...", "cmd = pdsh -S -f 1024 -w <hosts> ... deepspeed.launcher.launch ..."
  kLaunch,      // <host>: launch.py's start-up lines and one "process <pid> spawned with command: [...]"
                // per local rank
  kKilling,     // <host>: sigkill_handler's "Killing subprocess <pid>" (exit_code: the local rank)
  kLaunchError, // <host>: "[ERROR] ... ['python', ..., '--local_rank=<last>', ...] exits with
                // return code = <rc>" (launch.py names its last spawned command, not the failed one)
  kSshExit,     // pdsh@login-01: <host>: ssh exited with exit code <n>
  kSshTimeout,  // <host>: Timeout, server <host> not responding.  (then pdsh's exit code 255 line)
};

struct PdshNotice {
  TimeNs time;
  PdshNoticeKind kind;
  int node;       // -1 for kRunner
  int exit_code;  // kLaunchError: the child's return code (negative: a signal); kSshExit: ssh's
                  // status; kKilling: the local rank
};

using Record = std::variant<
    NcclVersionBanner, NcclProcessInfo, NcclCommInit, TrainerIteration, RankTimers, NcclIbError,
    NcclAsyncError, NcclSetupFailure, WatchdogTimeout, WatchdogAftermath, DumpSignalObserved,
    PythonException, DeepSpeedLine, SegfaultDump, WorkerExit, BenignWarning, CudaFailure,
    KernelMessage, NvidiaSmiSnapshot, AgentBanner, AgentSigterm, AgentFailureReport, AgentExit,
    AgentSignalled, NodeLost, StoreConnectionReset, StoreJoinTimeout, AgentStoreFailure,
    AgentRendezvousFailure, RayWorkerTable, RayActorDied, RayNodeDead, RayletOomKill, SrunTaskExits,
    SrunMessage, StepdCancelled, CtldLine, BatchBanner, CheckpointSave, CheckpointResumed,
    ResumedIteration, MpirunNotice, PdshNotice, FlightRecorderDump, NcclRasReport, NcclIbPortError>;

// Where the model sends records (the incident writer in production, a recorder in tests).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void Emit(const Record& record) = 0;
};

}  // namespace denpex::sim
