// Checkpoint verification: which checkpoint in a directory is safe to resume from, with the
// evidence. Candidates are found by directory and file name (never by trusting a pointer
// such as DeepSpeed's `latest`), verified newest first with ordered checks, and the newest
// one that passes is chosen. When the disk cannot decide, the answer is INCONCLUSIVE.
//
//   auto r = engine::VerifyCheckpointDir("/ckpt", {.world_size = 512});
//   std::cout << engine::RenderCheckpointText(*r);   // r->outcome is the v1 contract
//
// Read-only and bounded: never writes into the directory, never follows a symbolic link out
// of it, and reads headers, tails, central directories and sizes only (whole files only
// with `deep`). docs/checkpoint_verification.md describes every check.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/v1/diagnosis.pb.h"

namespace denpex::engine {

// The on-disk layout of one candidate.
enum class CheckpointFormat {
  kUnknown,
  kTemporary,     // a save that never finished: `.tmp`, Orbax tmp dir, HF tmp-checkpoint-N
  kTorchSave,     // one torch.save file (zip, or the legacy pickle format)
  kSafetensors,   // one .safetensors file
  kDcp,           // PyTorch distributed checkpoint: .metadata + __R_T.distcp
  kDeepSpeed,     // global_stepN/ with model states and ZeRO shards
  kMegatron,      // iter_N/mp_rank_XX[_YYY]/model_optim_rng.pt
  kMegatronDist,  // iter_N/ with metadata.json + DCP files (torch_dist)
  kHfTrainer,     // checkpoint-N/ with trainer_state.json
  kOrbax,         // N/ with commit_success.txt / _CHECKPOINT_METADATA
  kNemo,          // NeMo 2.0: weights/ (Megatron dist) + context/
  kTorchDir,      // a directory of torch.save / safetensors files (step_N/model.pt, ...)
  kAccelerate,    // accelerate save_state: checkpoint_N/ with random_states_<r>.pkl
  kNemoArchive,   // one .nemo file: a tar of model_config.yaml and model_weights.ckpt
};

// Where a candidate's step came from: its name, the step recorded inside the file
// (Lightning's last.ckpt), or nowhere (then it is ordered by its files' modification times).
enum class StepSource { kName, kContents, kNone };

enum class CheckpointVerdict {
  kValid,         // every check passed
  kIncomplete,    // the save did not finish (missing, truncated, unfinished marker)
  kCorrupt,       // complete in size but inconsistent (bad structure, CRC, stale metadata)
  kIncompatible,  // complete, but cannot resume under the given topology (ZeRO DP size)
  kInconclusive,  // the disk cannot decide (unknown format or dims, unreadable file)
};

// The checks, in the order they run. A candidate stops at its first definitive failure.
enum class CheckKind {
  kExistence,   // the directory/file and its completion marker; no tmp or unfinished marker
  kShardCount,  // the expected file set from the world size and parallel dimensions
  kSizes,       // zero-byte files, slices against file sizes
  kFormat,      // zip EOCD + central directory, safetensors header, pickle walk, CRC (deep)
  kMetadata,    // JSON/pickle metadata parses and agrees with the files
  kStep,        // the step in the name agrees with the step recorded inside
  kSaveLog,     // what the job's logs say of this step's save: finished, or in flight at the fault
};

struct CheckpointCheck {
  CheckKind kind = CheckKind::kExistence;
  CheckpointVerdict result = CheckpointVerdict::kValid;  // kValid: passed
  std::string detail;                                    // evidence: file, offset, expected
};

struct CheckpointCandidate {
  std::string path;        // relative to the checkpoint directory; "." for the directory itself
  std::int64_t step = -1;  // from the name (else from the contents); -1 when neither has one
  StepSource step_source = StepSource::kName;
  CheckpointFormat format = CheckpointFormat::kUnknown;
  CheckpointVerdict verdict = CheckpointVerdict::kInconclusive;
  bool evaluated = false;          // false: older than the chosen one, so not read
  bool suspect = false;            // modified after CheckpointOptions::not_after
  std::optional<TimeNs> modified;  // newest mtime of the candidate and its direct entries
  std::vector<CheckpointCheck> checks;
  std::vector<std::string> warnings;  // passed, but worth knowing (missing rng_state_3.pth)

  // The first failing (or undecided) check's detail, or the suspicion; empty when VALID.
  std::string Reason() const;
};

// What a pointer file (`latest`, `latest_checkpointed_iteration.txt`) says.
struct CheckpointPointer {
  std::string file;        // relative to the checkpoint directory
  std::string target;      // its content, trimmed
  std::int64_t step = -1;  // the step it names, -1 when unknown
  std::string problem;     // "empty", "names a missing checkpoint", ...; empty when fine
};

struct CheckpointReport {
  std::string dir;
  std::vector<CheckpointCandidate> candidates;  // newest first
  std::optional<CheckpointPointer> pointer;
  v1::CheckpointOutcome outcome;        // the contract: decision, path, step, rejected
  std::int64_t last_written_step = -1;  // the newest step on disk, finished or not
  std::int64_t steps_lost = -1;         // last_written_step - chosen step; RESUME only
  std::string summary;                  // one sentence an operator reads
  std::vector<std::string> notes;       // pointer disagreement, how to force the choice
};

struct ParallelDims {
  int tp = 0;  // 0: unknown
  int pp = 0;
  int dp = 0;
};

// A checkpoint save the job's logs show (Megatron, DeepSpeed, HF Trainer and torchtitan lines;
// analyze/checkpoint_outcome.cc reads them). A save that began and logged no finish was in flight
// when the job failed: the candidate it names is never chosen, whatever its files show.
struct LoggedSave {
  std::int64_t step = -1;  // the step its lines name; -1: none
  std::string path;        // the path or DeepSpeed tag they name; empty: none
  bool finished = false;   // its finish line was logged
  // Neither finished nor in flight by the log: its framework logs no finish (HF Trainer,
  // Lightning) and nothing after its start says it returned; its files decide.
  bool undecided = false;
  bool after_fault = false;  // finished, but the finish line came after the fault
  // When its start line was logged, only where file times can be compared with the logs: a save
  // in flight whose lines name no step is the candidate modified since (torchtitan).
  std::optional<TimeNs> began;
  std::string cite;  // the line(s), for the evidence: "rank0.log:120: saving step 100 to /ckpt"
};

struct CheckpointOptions {
  int world_size = 0;  // of the job that will resume; 0: unknown
  ParallelDims dims;
  // Read whole files: the CRC-32 of every zip record and NaN/Inf in every floating-point
  // tensor (torch.save storages, safetensors, DCP items), in bounded chunks.
  bool deep = false;
  // With `deep`: read at most this many bytes of records and tensors over the whole run (0:
  // no limit); past it a record is not read and the check says how much was not.
  std::uint64_t deep_max_bytes = 0;
  // With `deep`: called after every chunk read with its size in bytes (a terminal's progress).
  std::function<void(std::uint64_t bytes)> deep_progress;
  // The initiating fault: candidates modified after it are suspect and not chosen.
  std::optional<TimeNs> not_after;
  // The saves the job's logs show, oldest first.
  std::vector<LoggedSave> saves;
};

// kNotFound when `dir` does not exist, kInvalidInput when it is not a directory, kIoError
// when it cannot be listed. Unreadable files inside it make candidates INCONCLUSIVE.
Result<CheckpointReport> VerifyCheckpointDir(const std::filesystem::path& dir,
                                             const CheckpointOptions& options);

// VerifyCheckpointDir(...).outcome: what a Diagnosis carries.
Result<v1::CheckpointOutcome> VerifyCheckpoints(const std::filesystem::path& dir,
                                                const CheckpointOptions& options);

// The newest-checkpoint baseline: what a job's own resume logic loads without verifying
// anything: the target of the pointer file (`latest`, `latest_checkpointed_iteration.txt`)
// when there is one, else the candidate with the highest step in its name (temporary names
// excluded, as HF's get_last_checkpoint skips them). RESUME from it, or NO_SAFE_CHECKPOINT
// when nothing carries a step. Reads directory listings and the pointer only.
Result<v1::CheckpointOutcome> NewestCheckpointBlindly(const std::filesystem::path& dir);

// The human report printed by `denpex checkpoint verify`: every candidate newest first,
// with its checks.
std::string RenderCheckpointText(const CheckpointReport& report);

// The report as the JSON contract written by `denpex checkpoint verify --json`.
v1::CheckpointVerification ToProto(const CheckpointReport& report);

std::string_view FormatName(CheckpointFormat f);    // "torch.save", "DeepSpeed", ...
std::string_view VerdictName(CheckpointVerdict v);  // "VALID", "INCOMPLETE", ...
std::string_view CheckName(CheckKind k);            // "existence", "shard_count", ...

}  // namespace denpex::engine
