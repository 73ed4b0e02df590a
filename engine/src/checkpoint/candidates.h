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

// The step a file or directory name carries; nullopt when it holds none.
std::optional<std::int64_t> StepFromName(std::string_view name);

// Candidates among the entries of `root` (the listing of the checkpoint directory), sorted
// newest first (finished before temporary at equal steps). When none has a step in its name
// but the directory itself is a checkpoint, it is the one candidate (".").
std::vector<Candidate> FindCandidates(const Listing& root);

// True when `root` holds files or directories that may be checkpoints but carry no step, so
// they cannot be ordered (model.pt, an unknown directory).
bool HasUnorderedCheckpoints(const Listing& root);

// `latest` (DeepSpeed, or a file name) or `latest_checkpointed_iteration.txt` (Megatron).
std::optional<CheckpointPointer> ReadPointer(const Listing& root);

}  // namespace denpex::engine::ckpt
