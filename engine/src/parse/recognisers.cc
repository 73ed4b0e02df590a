#include "parse/recognisers.h"

#include <array>
#include <bit>
#include <cstdint>
#include <iterator>

#include "parse/triggers.h"

namespace denpex::engine {
namespace {

// A c10 error line no family recogniser took: kept as a note of its text.
bool RecogniseC10Note(std::string_view msg, StringTable* strings, Recognised* out) {
  *out = Recognised{.detail = Note{InternCapped(strings, msg)}};
  return true;
}

// Each recogniser's trigger literals (triggers.h): a line it can accept holds one of them. A
// recogniser's first row carries them; its other rows, if any, none.
constexpr Trigger kStepTimers[] = {{"time (ms) |"}};
constexpr Trigger kAgent[] = {
    {"failed (exitcode: "}, {"Sending process "}, {"Closing process "}, {"Unable to shutdown process "},
    {"Local worker group finished (FAILED)"}, {"The client socket has timed out"}, {"RendezvousConnectionError"},
    {"failed to bind"}, {"Error waiting on exit barrier"}, {"failed on SocketImpl("},
};
constexpr Trigger kWhat[] = {{"what():"}};
constexpr Trigger kKernel[] = {
    {"NVRM: "},                              // Xid, "The NVIDIA GPU ... fallen off the bus", RmInitAdapter failed
    {"Killed process "}, {"Kill process "},  // the OOM killer's victim (also after "Out of memory: ")
    {"oom-kill"},                            // `oom-kill:constraint=...`, `... invoked oom-killer: ...`
    {" blocked for more than "},  // khungtaskd: `INFO: task <comm>:<pid> blocked for more than <n> seconds.`
};
constexpr Trigger kSlurm[] = {
    {": task"},  // srun: error: <node>: task(s) <ids>: <reason>
    {"Node failure on "}, {"Job step aborted"}, {"Terminating "}, {"Force Terminated"},
    {"*** "},    // banners: CANCELLED, FAILED, STEPD TERMINATED
    {"oom-kill event"}, {"oom_kill event"}, {" not responding"}, {"Killing JobId="},
    {"Time limit exhausted for JobId="}, {"REQUEST_KILL_JOB"}, {"preempted JobId="}, {"_job_complete: JobId="},
    {"due to failure of node "}, {"Requeuing JobId="}, {" now responding"}, {"SLURM_RESTART_COUNT="},
    {"sched: Allocate JobId="}, {"SLURM_JOB_ID="}, {"SLURM_JOBID="},
};
constexpr Trigger kWrapper[] = {{"[denpex-run] "}};
constexpr Trigger kBareMetal[] = {
    {" noticed that process rank "}, {"Process name: ["}, {"Remote daemon: ["}, {": ssh exited with exit code 255"},
    {"] MCW rank "}, {" bound to package["}, {" closed by remote host."},
    // `Timeout, server <host> not responding.` reaches it through Slurm's " not responding"
    {"ssh: connect to host "},
};
constexpr Trigger kNccl[] = {
    {"Init COMPLETE"}, {"NCCL WARN "}, {"NET/Socket : Using "},
    {"Got completion from peer"},  // the IB transport's completion error alone
};
constexpr Trigger kDeepSpeed[] = {
    {" exits with return code = "}, {"Killing subprocess "}, {", num_local_procs="}, {"--world_info="},
    {"OVERFLOW! Rank "}, {"Grad overflow on iteration"}, {"loss scale overflow! "}, {"CPU Virtual Memory:"},
    {"death signal, shutting down workers"},
};
constexpr Trigger kFatalSignal[] = {{"Fatal Python error: "}};
constexpr Trigger kException[] = {
    {"Error"}, {"Exception"}, {"Interrupt"}, {"SystemExit"},         // the type's name
    {"CUDA error: "}, {"CUDA out of memory. "},                       // ... or torch's CUDA message without it
    {"[<TrainingState"},                                              // ... or FSDP's state check without it
    {"NCCL error in: "},                                              // ... or torch's NCCL error without it
    {"got mixed torch.Tensor and DTensor"},                           // ... or DTensor's dispatch error without it
    {"Non-root FSDP instance"}, {"Expects storage to be allocated"},  // ... or FSDP's `_p_assert` message alone
    {"ncclInvalid"},                                                  // NCCL's result name (`ncclInvalidUsage: `)
};
constexpr Trigger kKubernetes[] = {
    {" Evicted "}, {"Reason:"}, {"command terminated with exit code "}, {"Eviction manager: pods ranked for eviction"},
    {"OOMKilling"}, {"NodeNotReady"}, {"Killing "}, {"TaintManagerEviction"}, {"SuccessfulDeletePod"},
    {"PyTorchJobFailed"}, {"FailedJobs"}, {"BackoffLimitExceeded"}, {"Node:"}, {"ReachedMaxRestarts"},
    {" Restarting "}, {"Back-off restarting failed container"}, {"FailedScheduling"}, {"Successfully assigned "},
    {"Restart Count:"}, {"The node was low on "}, {" restarting failed container"}, {"reason: Evicted"},
    {"reason: OOMKilled"}, {" OOMKilled "}, {" CrashLoopBackOff "},
};
constexpr Trigger kAgentRanks[] = {{"  global_ranks=["}};
constexpr Trigger kRay[] = {
    {"killed due to memory pressure (OOM)"}, {"has been marked dead because the detector"}, {"- (node_id="}, {"- (ip="},
    {"\tpid: "}, {"\tip: "}, {"The actor is dead because"}, {"The actor died because its node has died"},
    {"ray.exceptions.RayTaskError("}, {"System memory low at node"}, {"node running low on memory"},
    {"Memory on the node (IP: "}, {"A worker died or was killed"}, {"The actor died unexpectedly"},
};
constexpr Trigger kRayActorState[] = {{"received notification on actor, state: DEAD"}};
constexpr Trigger kQuotedError[] = {{"gloo/transport/"}};  // gloo's error a logger reports
constexpr Trigger kDeviceAssert[] = {{"Assertion `"}};
constexpr Trigger kNvidiaSmi[] = {
    {"| 0000"},                 // a GPU row's `| 00000000:5D:00.0 Off |` (8-digit domain)
    {"device handle for GPU"},  // `Unable to determine the device handle for GPU...`
};
constexpr Trigger kCheckpointSave[] = {
    {"saving checkpoint at iteration"},   // Megatron start
    {"saved checkpoint from iteration"},  // Megatron finish
    {"Saving model checkpoint"},          // DeepSpeed `Saving model checkpoint: `, HF `... to `
    {"is about to be saved!"},            // DeepSpeed checkpoint engine create()
    {"is ready now!"},                    // DeepSpeed checkpoint engine commit()
    {"aving the checkpoint"},             // torchtitan `Saving the ...`, `Finished saving the ...`
    {"Saving current state to"},          // accelerate save_state
    {"Random states saved in"},           // accelerate, the main process's last file
    {"saving model to '"},                // Lightning ModelCheckpoint(verbose=True)
    {"Scheduled async checkpoint save for"},  // NeMo 2.0 async start
    {"finalized successfully"},           // NeMo 2.0 async finalize
};

// Tried in this order; the first row that applies where the message stands and accepts it wins.
// Slurm has three rows, tried at three precedences: its lines that open with a word of its own
// (`srun: `, `slurmstepd: `, `error: `, `Nodes `, `Killing JobId=`, ...) before NCCL's; those that
// open with `E` or `S` (a batch script's `SLURM_JOB_ID=` echo), `[`, `*` or `_` after Python's
// exceptions and the other bracketed shapes (a line both read is theirs); and, after a bracketed
// time (slurmctld's and slurmd's own logs), whatever the message opens with.
// clang-format off
constexpr RecogniserRow kRows[] = {
    // name             where                                 first    function                 triggers
    {"step timers",     kDeepSpeedLog | kText,                "t",     RecogniseStepTimers,     kStepTimers},
    {"torchrun agent",  kC10 | kAgentLog | kAgentQuote,       "",      RecogniseAgent,          kAgent},
    {"what()",          kIndented | kText,                    "",      RecogniseWhat,           kWhat},
    {"kernel",          kKernelLog | kKernelText,             "",      RecogniseKernel,         kKernel},
    {"slurm",           kText,                                "seNKTp", RecogniseSlurm,         kSlurm},
    {"denpex-run",      kSquare,                              "",      RecogniseWrapper,        kWrapper},
    {"nccl",            kText | kSquare,                      "",      RecogniseNccl,           kNccl},
    {"deepspeed",       kDeepSpeedLog | kSquare,              "",      RecogniseDeepSpeed,      kDeepSpeed},
    {"fatal signal",    kText,                                "F",     RecogniseFatalSignal,    kFatalSignal},
    {"exception",       kText,                                "",      RecogniseException,      kException},
    {"kubernetes",      kGoLog | kIndented | kText,           "",      RecogniseKubernetes,     kKubernetes},
    {"agent ranks",     kAgentLog | kIndented,                "",      RecogniseAgentRanks,     kAgentRanks},
    {"bare metal",      kIndented | kText | kSquare,          " \t[mposCT", RecogniseBareMetal, kBareMetal},
    {"ray",             kRayLog | kIndented | kDash | kText,  "",      RecogniseRay,            kRay},
    {"ray actor state", kRayLog | kText,                      "r",     RecogniseRayActorState,  kRayActorState},
    {"quoted error",    kC10Error | kErrorLog | kRayError,    "",      RecogniseQuotedError,    kQuotedError},
    {"c10 error note",  kC10Error,                            "",      RecogniseC10Note},  // its lines hold file_parser.cc's `[E`, `[F`
    {"slurm",           kText | kSquare | kEmphasis,          "ES[*_", RecogniseSlurm},
    {"slurm",           kStampedText,                         "",      RecogniseSlurm},  // any first byte
    {"device assert",   kText | kPath,                        "",      RecogniseDeviceAssert,   kDeviceAssert},
    {"nvidia-smi",      kText | kPipe,                        "U|",    RecogniseNvidiaSmi,      kNvidiaSmi},
    {"checkpoint save", kAnywhere,                            "",      RecogniseCheckpointSave, kCheckpointSave},
};
// clang-format on

// The table as bit masks of rows (bit r: row r), built when it is compiled: the rows at each
// place, and the rows that admit each first byte of a message with no header. A message is
// offered only to the rows of both, in table order, not tested against every row.
using RowMask = std::uint64_t;
static_assert(std::size(kRows) <= 64, "a row is a bit of a RowMask");
constexpr int kPlaceBits = std::bit_width(static_cast<Places>(kAgentQuote));
constexpr auto kRowsAt = [] {
  std::array<RowMask, kPlaceBits> rows{};
  for (std::size_t r = 0; r < std::size(kRows); ++r) {
    for (int b = 0; b < kPlaceBits; ++b) rows[b] |= (kRows[r].where >> b & 1) != 0 ? RowMask{1} << r : 0;
  }
  return rows;
}();
constexpr auto kRowsAdmitting = [] {
  std::array<RowMask, 256> rows{};
  for (std::size_t r = 0; r < std::size(kRows); ++r) {
    for (std::size_t c = 0; c < 256; ++c) {
      const bool admits = kRows[r].first.empty() || kRows[r].first.find(static_cast<char>(c)) != std::string_view::npos;
      rows[c] |= admits ? RowMask{1} << r : 0;
    }
  }
  return rows;
}();

}  // namespace

std::span<const RecogniserRow> RecogniserTable() { return kRows; }

bool Recognise(Places where, std::string_view msg, StringTable* strings, Recognised* out) {
  RowMask rows = 0;
  for (Places w = where; w != 0; w &= w - 1) rows |= kRowsAt[std::countr_zero(w)];
  // After a header every row of the place applies; with none, the row's first bytes must admit
  // the message's (an empty message: only rows that admit any).
  if ((where & kHeaded) == 0) rows &= kRowsAdmitting[msg.empty() ? 0 : static_cast<unsigned char>(msg[0])];
  for (; rows != 0; rows &= rows - 1) {
    if (kRows[std::countr_zero(rows)].recognise(msg, strings, out)) return true;
  }
  return false;
}

}  // namespace denpex::engine
