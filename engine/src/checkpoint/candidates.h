// Finding the candidates of a checkpoint directory: every entry whose name carries a step
// (global_stepN, iter_N, checkpoint-N, step=N, step_N, N for Orbax), newest first. Pointer
// files (`latest`, `latest_checkpointed_iteration.txt`) are read, never trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "checkpoint/listing.h"
#include "denpex/engine/checkpoint.h"

namespace denpex::engine::ckpt {

struct Candidate {
  CheckpointCandidate report;
  Entry entry;                     // the file or directory in the checkpoint directory
  std::optional<Listing> listing;  // its entries, for a directory
  std::string unfinished_marker;   // NeMo's "<name>-unfinished" beside it, when present
};

// Checkpoint file extensions (.pt .pth .ckpt .bin .safetensors .tar).
bool IsCheckpointFile(std::string_view name);

// The step a file or directory name carries; nullopt when it holds none.
std::optional<std::int64_t> StepFromName(std::string_view name);

// Candidates among the entries of `root` (the listing of the checkpoint directory), newest
// first: by step (from the name, else recorded inside a torch.save file; finished before
// temporary at equal steps), those without one placed by modification time. When no entry
// has a step and the candidates are all files (model.pt, optimizer.pt), or the directory
// itself is a known layout, the directory is the one candidate (".").
std::vector<Candidate> FindCandidates(const Listing& root);

// True when `root` holds files or directories that may be checkpoints but carry no step, so
// they cannot be ordered (model.pt, an unknown directory).
bool HasUnorderedCheckpoints(const Listing& root);

// `latest` or `last` (a file naming a tag, file or folder, or a symbolic link to one), else
// `latest_checkpointed_iteration.txt` (Megatron).
std::optional<CheckpointPointer> ReadPointer(const Listing& root);

// The candidate a pointer names, or nullptr.
const Candidate* PointerTarget(const CheckpointPointer& p, const std::vector<Candidate>& cands,
                               const std::filesystem::path& root);

}  // namespace denpex::engine::ckpt
