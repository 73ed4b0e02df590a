// Event: one recognised log record, flat and small. A multi-line record (the watchdog block,
// a Python traceback, one entry of the ChildFailedError table) is one event. Events never own text: strings are
// interned (StrId), and the cited line is found again by its byte offset when a report
// quotes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "denpex/common/time.h"
#include "parse/strings.h"

namespace denpex::engine {

// Families of docs/log_formats.md and `denpex events` (docs/events_format.md).
enum class Family : std::uint8_t {
  kOther,
  kNcclWatchdog,
  kNccl,
  kCuda,
  kCudaOom,
  kHostOom,
  kXid,
  kSlurm,
  kTorchrun,
  kDeepSpeed,
  kFsdp,
  kKubernetes,
  kRay,
  kGloo,
  kTrainer,
  kPython,
  kBareMetal,       // Open MPI's mpirun / PRRTE's prterun, pdsh and ssh fan-out
  kFlightRecorder,  // PyTorch Flight Recorder dumps (`<prefix><rank>`, pickle or JSON; §28)
  kNcclRas,         // NCCL RAS reports (`ncclras` text or JSON; §29)
};

// What a record says, within its family. Names (KindName) are stable: they are printed.
enum class Kind : std::uint8_t {
  kUnknownError,  // other: an error-looking line no recogniser knows
  // nccl_watchdog
  kWatchdogTimeout,
  kBlockingWaitTimeout,
  kWatchdogTerminated,
  kTakingDown,
  kHeartbeatTimeout,
  kWatchdogStuck,
  kDumpSignal,
  // nccl
  kCommInit,
  kNcclWarn,
  kIbCompletionError,
  kSocketError,
  kNcclError,
  kDuplicateGpu,
  // nccl: `NCCL INFO NET/Socket : Using [0]ib0:10.64.0.26<0>`, the node's socket interfaces and
  // their addresses (Note: the whole line, `host:pid:tid [dev] NCCL INFO ...`; not an error)
  kSocketInterface,
  // cuda, cuda_oom
  kCudaError,
  kDeviceAssert,
  kCudaOom,
  // cuda: `Caught RuntimeError in pin memory thread for device N.` (pinned host memory)
  kPinMemory,
  // host_oom
  kOomKill,
  kOomInvoked,
  kDataLoaderKilled,
  kCpuAllocFailed,
  // xid
  kXid,
  kFallenOffBus,
  kRmInitFailed,
  kGpuSlot,
  kGpuUnreachable,
  // slurm
  kCancelled,
  kTaskExit,
  kSlurmOom,
  kStepAborted,
  kStepTerminated,
  kJobComplete,
  kNodeFailure,
  kRequeue,
  kNodeResponding,
  kJobAllocated,  // slurmctld `sched: Allocate JobId=... NodeList=...`: the job's start (SlurmNote:
                  // reason = the job id, node = the hostlist)
  kJobId,         // a batch script's echo of `SLURM_JOB_ID=<n>` (SlurmNote: job; not an error)
  // bare_metal: mpirun --report-bindings, `[host:pid] MCW rank R ...` (a rank's host, not an error)
  kRankBinding,
  // torchrun
  kWorkerFailed,
  kWorkerSignalled,
  kFailureEntry,
  kGroupFailed,
  kRendezvousError,
  kExitBarrier,
  // torchrun, nccl_watchdog: a c10d store connection failed (`recvValue failed on SocketImpl(...)`,
  // `Failed to check the "should dump" flag on TCPStore`); Note, the text names the remote end
  kStoreError,
  // deepspeed
  kLauncherExit,
  kKillingSubprocess,
  kLauncherLayout,  // launch.py `nnodes=N, num_local_procs=P, node_rank=K` (NodeLayout; not an
                    // error)
  kAgentRanks,  // torchrun's rendezvous result `  global_ranks=[...]` (NodeLayout; not an error)
  kWorldInfo,   // runner.py `cmd = ... --world_info=<b64>` (Note: the base64 value; not an error)
  // deepspeed, fsdp: the frameworks' own errors (errors.cc) and DeepSpeed's rank-0 notes
  kZeroError,
  kOffloadError,
  kPipelineError,
  kCheckpointLoad,
  kOverflow,
  kMemoryUsage,
  // fsdp, kubernetes, ray, gloo
  kFsdpError,
  kEvicted,
  kOomKilled,
  kCrashLoop,
  kContainerExit,
  kActorDied,
  kRayOom,
  kRayletOomKills,
  kRayWorker,
  kActorField,
  kActorCause,
  kRayTaskError,
  kRayNodeDead,
  kPodNode,
  kNodeNotReady,
  kPodKilling,
  kJobFailed,
  kJobRestarting,
  kFailedScheduling,
  kRestartCount,
  kAgentSignalled,
  kGlooConnectionClosed,
  kGlooReadError,
  kGlooTimeout,
  kGlooConnectFailed,
  kGlooIoException,
  // trainer, python
  kIteration,
  kException,
  kFatalSignal,
  // trainer: per-rank timers (DeepSpeed `[Rank R] time (ms) | fwd: ...`)
  kStepTimers,
  // other: `denpex run`'s own lines about the process it wraps (docs/run_wrapper.md)
  kProcessExit,
  kProcessSignalled,
  // other: the kernel's hung-task report, `INFO: task <comm>:<pid> blocked for more than <n>
  // seconds.` (OomKill: pid, comm; not an error)
  kHungTask,
  // trainer, deepspeed: a checkpoint save the framework says it began / finished (CheckpointSave;
  // not errors): Megatron `saving checkpoint at iteration N to DIR` / `successfully saved
  // checkpoint from iteration N to DIR`, DeepSpeed `[Rank R] Saving model checkpoint: PATH`,
  // `Checkpoint TAG is about to be saved!` / `is ready now!`, the HF Trainer's `Saving model
  // checkpoint to PATH`, torchtitan's `Saving the checkpoint ...` / `Finished saving the
  // checkpoint`
  kSaveStarted,
  kSaveFinished,
  // flight_recorder: a Flight Recorder dump (docs/log_formats.md §28), read as records, not
  // lines. kFrDump: the dump itself, one per file (FrDump; Event::rank the rank its name ends
  // with); kFrGroup: one process group's state in that dump (FrGroup); kFrCollective: one of its
  // entries the analysis reads (FrCollective): every entry not completed, and the group's last
  // completed one. Not errors.
  kFrDump,
  kFrGroup,
  kFrCollective,
  // nccl_ras: a NCCL RAS report (docs/log_formats.md §29), a snapshot of a live job's
  // communicators. kRasReport: the report (RasReport); kRasComm: a communicator it singles out
  // (RasComm); kRasRank: a rank it names or shows apart from the rest (RasRank). Not errors.
  kRasReport,
  kRasComm,
  kRasRank,
};

std::string_view FamilyName(Family f);
std::string_view KindName(Kind k);

// The torch ProcessGroupNCCL watchdog block (docs/log_formats.md §3): its first line
// (`Watchdog caught collective operation timeout`, or `Work ... timed out in blocking wait`)
// plus the `last enqueued / last completed` numbers of the status line that follows it.
// (The 32-bit fields first: 72 bytes, not 80 with the padding around `op`; an Event, which
// holds one in its variant, would grow by 8.)
struct WatchdogTimeout {
  StrId pg = kNoStr;       // process-group uid as printed; kNoStr for `[Rank r]` / `[PG  Rank r]`
  StrId pg_desc = kNoStr;  // TENSOR_MODEL_PARALLEL_GROUP, default_pg, ...; kNoStr when absent
  StrId op = kNoStr;             // ALLREDUCE, RECV, ...
  std::int32_t group_rank = -1;  // rank within the process group
  std::int64_t seq = -1;         // SeqNum of the collective that timed out
  std::int64_t numel_in = -1;
  std::int64_t numel_out = -1;
  std::int64_t timeout_ms = -1;
  std::int64_t ran_for_ms = -1;
  std::int64_t last_enqueued = -1;   // -1 until the status line is seen
  std::int64_t last_completed = -1;
};

// Any other watchdog line (termination, heartbeat, flight-recorder dump signal).
struct WatchdogNote {
  StrId pg = kNoStr;
  std::int32_t group_rank = -1;
  std::int32_t from_rank = -1;  // `Received a dump signal ... from  rank N`
  StrId text = kNoStr;          // the message after the process-group prefix (capped); only
                                // shown: kNoStr in a diagnosis's parse (Texts::kAnalysed)
};

// torchrun agent: `failed (exitcode: X) local_rank: L (pid: P) of binary: ...` (§6); also
// DeepSpeed's `... exits with return code = X` (local_rank -1).
struct WorkerFailed {
  std::int32_t local_rank = -1;
  std::int32_t exit_code = 0;
  std::int64_t pid = 0;
};

// torchrun agent: `Sending process P closing signal SIGTERM`.
struct WorkerSignalled {
  std::int64_t pid = 0;
  StrId signal = kNoStr;
};

// One entry of the ChildFailedError table (`[k]:` and its fields). Event::rank is its
// `rank` field; Event::line is the line of that field (the one a diagnosis cites).
struct FailureEntry {
  bool root_cause = false;  // under "Root Cause (first observed failure)"
  std::int32_t local_rank = -1;
  std::int32_t exit_code = 0;
  std::int64_t pid = 0;
  StrId host = kNoStr;
};

// Megatron iteration line (§5), or a key=value step line (ParseStepMetrics). For the latter, the
// event is the rank's last step line and carries how long its own part (`data_ms`) took of the
// step, and since which step (and from when) that part has been most of every step.
struct Iteration {
  std::int64_t iteration = 0;
  std::int64_t total = 0;
  std::int64_t data_us = -1;     // -1 when the line does not say
  std::int64_t step_us = -1;
  std::int64_t slow_since = -1;  // first step of the current run where data_us >= step_us / 2
  TimeNs slow_at = 0;            // when that step began (its line's time - step_us)
  // The current slow run began at this parser's first step line of the rank (a chunk's parser:
  // the run may go on from the previous chunk's; ingest/chunks.cc joins them).
  bool slow_from_start = false;
};

// Per-rank step timers (§5): DeepSpeed's `time (ms) | name: value | ...` of one rank, split
// into compute (fwd, bwd_inner, ...) and collective wait (*allreduce*, *allgather*, *comm*,
// *wait*, send/recv); the optimizer `step` is neither. `shape` names the line's timers (a hash
// of their names in order, never 0): a line cut by a terminal's hard wrap has fewer timers than
// its job's other lines and is not compared with them; 0 marks a line cut after a bar.
struct StepTimers {
  float compute_ms = 0;
  float wait_ms = 0;
  std::uint32_t shape = 0;
};

// NCCL communicator init, NCCL_DEBUG=INFO (§4).
struct CommInit {
  StrId comm_id = kNoStr;
  std::int32_t comm_rank = -1;
  std::int32_t nranks = 0;
  std::int32_t cuda_dev = -1;
  StrId pci = kNoStr;  // its GPU from `busId 9b000`, normalised `dddd:bb:dd`; kNoStr when absent
  std::int64_t pid = 0;  // the process of `host:pid:tid`
};

// One GPU of an `nvidia-smi` table (`|   3  NVIDIA H100 ... | 00000000:5D:00.0 Off |`), or a
// GPU nvidia-smi could not reach (`Unable to determine the device handle for GPU0000:5D:00.0`).
struct GpuSlot {
  std::int32_t index = -1;  // nvidia-smi's index; -1 for an unreachable GPU
  StrId pci = kNoStr;       // normalised `dddd:bb:dd`
};

// `host:pid:tid [dev] file.cc:line NCCL WARN msg` and the IB/socket errors it reports.
struct NcclWarn {
  std::int64_t pid = 0;
  std::int32_t cuda_dev = -1;
  StrId peer = kNoStr;         // IB / socket peer as printed
  std::int32_t status = -1;    // IB completion status (12 retry exceeded, 5 flushed)
  StrId text = kNoStr;         // the message after `NCCL WARN ` (capped)
};

// An exception: the `Type: message` line that ends a traceback, or `what():` of a C++ abort.
// Its family says which kind (CUDA error, CUDA OOM, gloo, NCCL error, FSDP, Ray, plain Python).
struct PythonError {
  StrId type = kNoStr;
  StrId message = kNoStr;  // capped; a watchdog's error's (family nccl_watchdog) is only
                           // shown: kNoStr in a diagnosis's parse (Texts::kAnalysed)
  std::int32_t gpu = -1;   // CUDA OOM: `GPU 0`
  // The cause of a later exception of the same chain (`The above exception was the direct cause
  // of the following exception:` / `During handling of the above exception, ...` followed it):
  // the chain's last exception is the one the process raised.
  bool chained = false;
};

// The kernel OOM killer (`Killed process N (comm)`), Slurm's and Ray's OOM notices.
struct OomKill {
  std::int64_t pid = 0;
  StrId comm = kNoStr;  // process name; may contain spaces
};

// `NVRM: Xid (PCI:0000:52:00): 79, pid=..., name=..., GPU has fallen off the bus.`
struct Xid {
  std::int32_t code = -1;  // -1 for the multi-line "fallen off the bus" form without a code
  StrId pci = kNoStr;      // normalised: lower-case `dddd:bb:dd`
  std::int64_t pid = -1;
  StrId process = kNoStr;
  StrId text = kNoStr;     // the details (capped)
};

// Slurm: a cancellation (`DUE TO TIME LIMIT`), srun's task exit lines, OOM notices,
// slurmctld `WTERMSIG`.
struct SlurmNote {
  StrId reason = kNoStr;    // TIME LIMIT, PREEMPTION, NODE FAILURE, Exited, Killed, ...
  StrId node = kNoStr;      // as printed
  StrId tasks = kNoStr;     // `2,4-5,7`
  std::int32_t exit_code = 0;
  // The Slurm job the line names (`JobId=N`, `*** JOB N`, `STEP N.s`, `StepId=N.s`, slurmd's
  // `[N.s]`, `SLURM_JOB_ID=N`; an array task's own id `N` of `JobId=A_T(N)`); -1 when none.
  // Daemon logs hold every job's lines: analyze/scope.h keeps this job's.
  std::int64_t job = -1;
  // slurmstepd's `*** JOB N ON <node> CANCELLED ... ***` as it writes it into the job's own
  // output (no slurmd log's `[N.s]` tag): the line is the job's, whatever else its file holds.
  bool in_job_output = false;
};

// Slurm's hostlist as slurmctld prints it, expanded in order: "gpu-[0001-0003,0007]" ->
// gpu-0001, gpu-0002, gpu-0003, gpu-0007 (lower-cased); empty when it does not parse.
std::vector<std::string> ExpandHostlist(std::string_view list);

// DeepSpeed `see_memory_usage`: `CPU Virtual Memory:  used = 1956.1 GB, percent = 97.1%` (the
// host's memory as psutil sees it, printed by rank 0).
struct HostMemory {
  float used_gb = 0;
  float percent = 0;
};

// A node's ranks as its launcher states them: DeepSpeed launch.py's `nnodes=<N>,
// num_local_procs=<P>, node_rank=<K>` (§26b: K*P .. K*P+P-1), or the torchrun agent's rendezvous
// result `global_ranks=[G, G+1, ...]` (§6: first_rank G, P of them). Local rank = rank - first.
struct NodeLayout {
  std::int32_t nnodes = -1;
  std::int32_t local_procs = -1;
  std::int32_t node_rank = -1;
  std::int32_t first_rank = -1;  // -1: node_rank * local_procs
  std::int32_t First() const { return first_rank >= 0 ? first_rank : node_rank * local_procs; }
};

// A checkpoint save a framework logged (kSaveStarted, kSaveFinished): the step and the path
// (or DeepSpeed tag) the line names; torchtitan's lines name neither.
struct CheckpointSave {
  std::int64_t step = -1;  // -1 when the line names none
  StrId path = kNoStr;     // as printed: a directory, a file, a DeepSpeed tag
  bool no_finish = false;  // a start of a framework that never logs a finish (HF Trainer, Lightning)
};

// A Flight Recorder dump (kFrDump): what its top level says. Event::rank is the rank its file
// name ends with (`nccl_trace_rank_<R>`, any prefix); Event::time the newest entry's creation.
struct FrDump {
  StrId version = kNoStr;       // the dump format's `version` ("2.2" ... "2.10"), not torch's
  StrId nccl_version = kNoStr;  // `nccl_version` (format >= 2.7); kNoStr when absent
  std::int32_t groups = 0;      // `pg_config` entries
  std::int32_t entries = 0;     // `entries` in the ring
  bool json = false;            // the JSON form, not the pickle
};

// One process group of a dump (kFrGroup): its `pg_config` entry and `pg_status` (format >= 2.4;
// before, the last enqueued / started / completed collective_seq_id are the entries' own).
// Event::time is the newest entry's creation in this group; 0 when the group has no entry.
struct FrGroup {
  StrId pg = kNoStr;       // the group's name (the `pg_config` key: "0", "1", ... or a name)
  StrId pg_desc = kNoStr;  // `desc` (default_pg, TENSOR_MODEL_PARALLEL_GROUP, ...)
  StrId ranks = kNoStr;    // `ranks` as the dump writes it ("[0, 1, 2, 3]", "all"), capped
  std::int32_t size = -1;  // the number of ranks `ranks` lists; -1 when it does not parse
  std::int64_t last_enqueued = -1;  // collective_seq_id; -1: none
  std::int64_t last_started = -1;
  std::int64_t last_completed = -1;
};

// One Flight Recorder entry (kFrCollective). Event::time is `time_created_ns`.
struct FrCollective {
  enum class State : std::uint8_t { kScheduled, kStarted, kCompleted };
  StrId pg = kNoStr;  // the group's name, as in FrGroup::pg
  StrId pg_desc = kNoStr;
  StrId op = kNoStr;      // `profiling_name`: "nccl:all_reduce", "nccl:send 0->1", ...
  StrId sizes = kNoStr;   // `input_sizes` as text ("[[1024, 1024]]"), capped
  StrId dtypes = kNoStr;  // `input_dtypes` as text ("[Float]"), capped
  State state = State::kScheduled;
  bool p2p = false;           // `is_p2p` (or a send/recv profiling name)
  std::int64_t seq = -1;      // `collective_seq_id` (p2p: -1 unless the dump sets it)
  std::int64_t p2p_seq = -1;  // `p2p_seq_id`
  std::int64_t record_id = -1;
  TimeNs started = 0;    // `time_discovered_started_ns`; 0: None
  TimeNs completed = 0;  // `time_discovered_completed_ns`; 0: None
  std::int64_t timeout_ms = -1;
};

// A NCCL RAS report (kRasReport). Event::time is the report's (a stamp line before it, or the
// JSON's `timestamp`); 0 when it has none.
struct RasReport {
  StrId nccl_version = kNoStr;  // "2.26.2+cuda12.8"
  std::int32_t report = 0;      // its place among the file's reports, 0 the first
  std::int32_t comms = 0;       // communicators (text: the table's `Comms in group`, summed)
  std::int32_t processes = -1;  // the job summary's `Processes (total)`; -1 when not said
  std::int32_t gpus = -1;       // `GPUs (total)`
  std::int32_t dead = 0;        // job processes considered dead
  std::int32_t incomplete = 0;  // job processes that sent no communicator data
  bool json = false;
};

// A communicator a report singles out (kRasComm): one whose ranks disagree, or that misses ranks.
struct RasComm {
  StrId hash = kNoStr;      // "9f2b3c4d5e6f7a81" (text: 16 hex digits; JSON: as written, no 0x)
  StrId status = kNoStr;    // RUNNING, INIT, FINALIZE, ABORT, NOCOMM (text: its table group's)
  StrId errors = kNoStr;    // OK, MISMATCH, INCOMPLETE,ERROR, ... (text); JSON: what it shows
  std::int32_t report = 0;  // as RasReport::report
  std::int32_t size = -1;   // ranks in the communicator
  std::int32_t nodes = -1;  // nodes it spans (text); -1 when not said
};

// A rank a report names (kRasRank). Event::rank is the job's global rank when the report makes
// it one (docs/log_formats.md §29: a communicator as large as the job, or the same process in
// that one); -1 otherwise (the process and node address still say where).
struct RasRank {
  enum class Why : std::uint8_t { kBehind, kAhead, kMissing, kDead, kStatus, kError };
  Why why = Why::kBehind;
  StrId hash = kNoStr;          // its communicator's
  StrId op = kNoStr;            // kBehind/kAhead: the operation type ("AllReduce"; "collective"
                                // before 2.26); kStatus/kError: the status or error it reports
  StrId node = kNoStr;          // the process's node address ("10.0.0.3"); kNoStr when not found
  std::int32_t report = 0;      // as RasReport::report
  std::int32_t comm_size = -1;  // its communicator's size
  std::int32_t comm_rank = -1;  // its rank in that communicator
  std::int32_t pid = -1;
  std::int32_t gpu = -1;     // CUDA device
  std::int64_t count = -1;   // kBehind/kAhead: operations of `op` it has launched
  std::int64_t common = -1;  // the count most of the communicator's ranks have
  std::int32_t with = 0;     // ranks of the communicator at its count (itself included)
};

// Anything else worth showing (`denpex events`): the message, masked for grouping.
struct Note {
  StrId text = kNoStr;
};

using EventDetail =
    std::variant<Note, WatchdogTimeout, WatchdogNote, WorkerFailed, WorkerSignalled, FailureEntry,
                 Iteration, CommInit, NcclWarn, PythonError, OomKill, Xid, SlurmNote, StepTimers,
                 GpuSlot, HostMemory, NodeLayout, CheckpointSave, FrDump, FrGroup, FrCollective,
                 RasReport, RasComm, RasRank>;

enum class Clock : std::uint8_t {
  kNone,       // the line carries no time, and none could be borrowed
  kFull,       // a full date and time
  kNoYear,     // c10 / glog / syslog stamps: held in the year 2000 until the incident's year is known
};

// 128 bytes, the detail first: a variant's last bytes are its 1-byte index and 7 bytes of
// padding (its largest alternatives, WatchdogTimeout and FrCollective, are 72 bytes), and a
// member marked [[no_unique_address]] lends its tail padding to the members after it (the
// Itanium C++ ABI, GCC and Clang): the 1-byte fields below sit in it. With the time and its
// flags packed into bits, the header's 55 bytes and the variant's 73 make 128, not 144 (a
// 131k-rank job's ~1 M events: 17 MB fewer to fill, merge and read). Everything that copies
// the detail alone goes through the variant's own members, which copy its data, not its
// padding. (Aligned to a cache line, the fields beside the detail would share one line; the
// passes after the parse measured slower so, and the aligned allocations held more memory:
// docs/benchmarks.md, "Tried and not kept".)
struct Event {
  [[no_unique_address]] EventDetail detail;
  Clock clock : 2 = Clock::kNone;
  bool time_borrowed : 1 = false;  // no stamp of its own (torch ≤ 2.3 c10, tracebacks): the time
                                   // of the nearest stamped line before it in the file (none:
                                   // kNone)
  // The line states no time; `time` is a collector's stamp before it (a container runtime's, a
  // journal's, `kubectl logs --timestamps`): when the line was read, not when it was written.
  // It bounds the event from above only (analyze/order.cc).
  bool time_collected : 1 = false;
  Family family = Family::kOther;
  Kind kind = Kind::kUnknownError;
  std::int32_t rank = -1;        // global rank; -1 when the line does not say
  std::int32_t local_rank = -1;  // `[default<L>]:`, a torchrun log dir's `<L>/` folder
  std::int32_t task = -1;        // srun `--label` task id
  std::int32_t node = -1;        // index into the incident's nodes (set at merge); -1 unknown
  StrId host = kNoStr;           // host the line names (pdsh prefix, NCCL `host:pid:tid`)
  std::uint32_t file = 0;        // index into the incident's files
  std::uint32_t line = 0;        // 1-based line of the cited text
  std::uint32_t length = 0;      // its length in bytes (without the newline)
  StrId signature = kNoStr;      // masked message, for cascade grouping (error events only)
  TimeNs time = 0;
  std::uint64_t offset = 0;  // byte offset of that line in its file
};
#if defined(__GNUC__) && defined(__x86_64__)
static_assert(sizeof(Event) == 128,
              "an Event's 1-byte fields belong in its variant's tail padding");
#endif

// A Slurm line only the job's own output holds: srun's (`srun: error: <host>: task N: ...`,
// `srun: Force Terminated StepId=...`), a batch script's `SLURM_JOB_ID=` echo, a requeue word
// on its own exit code. slurmstepd's banner there (SlurmNote::in_job_output) is some job's, not
// necessarily the incident's: the caller decides.
bool JobOwnSlurmLine(const Event& e);

// Calls f(StrId&) for every interned string an event holds (to re-intern it into another table).
template <typename F>
void ForEachStrId(Event& e, F&& f) {
  f(e.signature);
  f(e.host);
  std::visit(
      [&](auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, Note>) {
          f(d.text);
        } else if constexpr (std::is_same_v<T, WatchdogTimeout>) {
          f(d.pg), f(d.pg_desc), f(d.op);
        } else if constexpr (std::is_same_v<T, WatchdogNote>) {
          f(d.pg), f(d.text);
        } else if constexpr (std::is_same_v<T, WorkerSignalled>) {
          f(d.signal);
        } else if constexpr (std::is_same_v<T, FailureEntry>) {
          f(d.host);
        } else if constexpr (std::is_same_v<T, CommInit>) {
          f(d.comm_id), f(d.pci);
        } else if constexpr (std::is_same_v<T, GpuSlot>) {
          f(d.pci);
        } else if constexpr (std::is_same_v<T, NcclWarn>) {
          f(d.peer), f(d.text);
        } else if constexpr (std::is_same_v<T, PythonError>) {
          f(d.type), f(d.message);
        } else if constexpr (std::is_same_v<T, OomKill>) {
          f(d.comm);
        } else if constexpr (std::is_same_v<T, Xid>) {
          f(d.pci), f(d.process), f(d.text);
        } else if constexpr (std::is_same_v<T, SlurmNote>) {
          f(d.reason), f(d.node), f(d.tasks);
        } else if constexpr (std::is_same_v<T, CheckpointSave>) {
          f(d.path);
        } else if constexpr (std::is_same_v<T, FrDump>) {
          f(d.version), f(d.nccl_version);
        } else if constexpr (std::is_same_v<T, FrGroup>) {
          f(d.pg), f(d.pg_desc), f(d.ranks);
        } else if constexpr (std::is_same_v<T, FrCollective>) {
          f(d.pg), f(d.pg_desc), f(d.op), f(d.sizes), f(d.dtypes);
        } else if constexpr (std::is_same_v<T, RasReport>) {
          f(d.nccl_version);
        } else if constexpr (std::is_same_v<T, RasComm>) {
          f(d.hash), f(d.status), f(d.errors);
        } else if constexpr (std::is_same_v<T, RasRank>) {
          f(d.hash), f(d.op), f(d.node);
        }
      },
      e.detail);
}

// The pid of a NCCL `host:pid:tid` line (communicator init, WARN); 0 for other lines.
inline std::int64_t NcclPid(const Event& e) {
  if (const auto* c = std::get_if<CommInit>(&e.detail)) return c->pid;
  if (const auto* w = std::get_if<NcclWarn>(&e.detail)) return w->pid;
  return 0;
}

// Larger rank numbers are treated as malformed (a corrupted line must not size an array).
inline constexpr std::int32_t kMaxRank = (1 << 22) - 1;

// The year that yearless stamps are parsed into: a leap year, so 29 February survives.
inline constexpr int kPlaceholderYear = 2000;

}  // namespace denpex::engine
