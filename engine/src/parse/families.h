// Recognisers for the failure families of docs/log_formats.md, each on
// a message whose prefixes and header are already stripped (prefix.h, headers.h). A
// recogniser interns the fields it keeps into `strings` and says which family and kind the
// record is; it never allocates otherwise, and costs a byte test or two on other lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "parse/event.h"
#include "parse/headers.h"
#include "parse/strings.h"

namespace denpex::engine {

struct Recognised {
  Family family = Family::kOther;
  Kind kind = Kind::kUnknownError;
  EventDetail detail;
  bool error = true;   // an error record: grouped by masked signature
  std::string_view host;  // the host the line names (NCCL `host:pid:tid`), when it does
  TimeNs time = 0;        // a time the message itself states (Slurm's `CANCELLED AT <time>`)
  bool timed = false;
  std::int32_t rank = -1;  // a global rank the message itself states (DeepSpeed `[Rank R]`)
};

// Text kept in events is capped (a collapsed paste can make a 1 MiB "line").
inline constexpr std::size_t kMaxKeptText = 512;
StrId InternCapped(StringTable* strings, std::string_view text);
// The same for a text that is only shown (StringTable::InternShown): kNoStr in a diagnosis's parse.
StrId InternShownCapped(StringTable* strings, std::string_view text);

// errors.cc: the `Type: message` line that ends a traceback (or stands alone), classified by
// its content: CUDA error, CUDA OOM, NCCL error, gloo, FSDP, Ray, host allocation, Python.
bool RecogniseException(std::string_view msg, StringTable* strings, Recognised* out);
// torchrun's per-worker error file (`TORCHELASTIC_ERROR_FILE`, `<log_dir>/<run>/attempt_N/<local
// rank>/error.json`): one JSON line, `{"message": {"message": "<Type>: <text>", "extraInfo":
// {"py_callstack": "...", "timestamp": "<unix seconds>"}}}` (an agent's copy adds `"errorCode"`;
// a newer writer may give "message" as a plain string). The message decoded, the timestamp in
// seconds (0 when absent); false when the line is not one.
struct ErrorRecord {
  std::string message;
  std::int64_t timestamp = 0;
};
bool ReadErrorFile(std::string_view line, ErrorRecord* out);
// `  what():  <msg>` of a C++ abort (the watchdog's, a CUDA check's, gloo's).
bool RecogniseWhat(std::string_view msg, StringTable* strings, Recognised* out);
// An error message another line quotes (a c10 `[E thread_pool.cpp:112] Exception in thread pool
// task: [...gloo/transport/tcp/pair.cc:563] Read error ...`): true when its content names a family
// (CUDA, NCCL, gloo, the watchdog, ...), not a plain Python error.
bool RecogniseQuotedError(std::string_view msg, StringTable* strings, Recognised* out);
// NCCL debug output: `host:pid:tid [dev] NCCL INFO ...` (communicator init only) and
// `host:pid:tid [dev] file.cc:line NCCL WARN ...` (IB completion, socket, CUDA failures).
bool RecogniseNccl(std::string_view msg, StringTable* strings, Recognised* out);
// Python faulthandler: `Fatal Python error: Segmentation fault` (also Bus error, Aborted).
bool RecogniseFatalSignal(std::string_view msg, StringTable* strings, Recognised* out);
// `<file>.cu:92: operator(): block: [..], thread: [..] Assertion `...` failed.`
bool RecogniseDeviceAssert(std::string_view msg, StringTable* strings, Recognised* out);

// kernel.cc: NVRM Xid lines and their multi-line "fallen off the bus" form; the OOM killer.
bool RecogniseKernel(std::string_view msg, StringTable* strings, Recognised* out);
// nvidia-smi's table rows and its `Unable to determine the device handle for GPU<pci>` line.
bool RecogniseNvidiaSmi(std::string_view msg, StringTable* strings, Recognised* out);
// NCCL's packed bus id (`9b000`, `1009b000`) as a normalised `dddd:bb:dd`; empty when it is not one.
std::string_view NcclBusIdToPci(std::string_view bus_id, char (&buf)[16]);
// Normalises a PCI id of any producer (`PCI:0000:52:00`, `0000:41:00.0`, `00000000:52:00.0`,
// `GPU0000:A1:00.0`) to lower-case `dddd:bb:dd`; empty when it is not one.
std::string_view NormalisePci(std::string_view id, char (&buf)[16]);

// launchers.cc: Slurm (srun, slurmstepd, slurmd, slurmctld), torchrun agent messages, DeepSpeed
// launcher, Kubernetes, Ray.
bool RecogniseSlurm(std::string_view msg, StringTable* strings, Recognised* out);
bool RecogniseAgent(std::string_view msg, StringTable* strings, Recognised* out);
bool RecogniseAgentRanks(std::string_view msg, StringTable* strings, Recognised* out);
bool RecogniseDeepSpeed(std::string_view msg, StringTable* strings, Recognised* out);
// timers.cc: per-rank timers `[Rank R] [rank=R ]time (ms) | fwd: 498.12 | ... | step: 11.20`.
bool RecogniseStepTimers(std::string_view msg, StringTable* strings, Recognised* out);
bool RecogniseKubernetes(std::string_view msg, StringTable* strings, Recognised* out);
// Bare-metal launchers (docs/log_formats.md §26): Open MPI's `mpirun noticed that process rank R
// ... exited on signal N (Name).` (`prterun`, `mpiexec`), its `  Process name: [[J,1],R]` (the
// first rank that exited non-zero) and `  Remote daemon: [[J,0],k] on node H` (a lost orted);
// pdsh's `pdsh@h: H: ssh exited with exit code 255` and ssh's `ssh: connect to host H port 22:
// ...` (a node ssh cannot reach). Rank exits are task-exit records, lost nodes node failures
// (SlurmNote detail, as srun's and slurmctld's words).
bool RecogniseBareMetal(std::string_view msg, StringTable* strings, Recognised* out);
bool RecogniseRay(std::string_view msg, StringTable* strings, Recognised* out);
// Ray's core worker on an actor that died of a failure (`received notification on actor, state:
// DEAD, ...` with a creation-task exception or the memory monitor as the cause).
bool RecogniseRayActorState(std::string_view msg, StringTable* strings, Recognised* out);
// `[denpex-run] pid P killed by signal N (SIG)`, `... exited with code N`, `... received SIGTERM
// from pid P; forwarded ...` (docs/log_formats.md §15).
inline constexpr std::string_view kWrapperTag = "[denpex-run] ";
bool RecogniseWrapper(std::string_view msg, StringTable* strings, Recognised* out);

// watchdog.cc: ProcessGroupNCCL lines after the c10 header (timeouts are parsed by the
// caller, which joins them with their status line; this takes the other messages).
bool RecogniseWatchdogNote(std::string_view msg, StringTable* strings, Recognised* out);

// saves.cc: a checkpoint save Megatron, DeepSpeed, the HF Trainer or torchtitan logs as begun or
// finished (kSaveStarted / kSaveFinished, CheckpointSave detail; not errors).
bool RecogniseCheckpointSave(std::string_view msg, StringTable* strings, Recognised* out);

}  // namespace denpex::engine
