// Tensor names and shapes compared between files: across the rank files of one step, and
// against the previous step. Read from each torch.save file's data.pkl only (no tensor bytes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/listing.h"
#include "checkpoint/reader_finding.h"

namespace denpex::engine::ckpt {

// name -> shape of every tensor a torch.save file holds (a storage's element count when the
// tensor's shape is not in the pickle); nullopt when the file is not a readable torch.save file.
using TensorShapes = std::map<std::string, std::vector<std::int64_t>>;
std::optional<TensorShapes> ReadTensorShapes(const std::filesystem::path& file);

// A file of a step by its path relative to the step ("mp_rank_01_002/model_optim_rng.pt").
using StepFile = std::pair<std::string, const Entry*>;

// Rank files hold the same part of the state when their paths are equal once the first run of
// digits is read as '#' (zero_pp_rank_#_mp_rank_01_optim_states.pt: the DP ranks of MP rank 1;
// mp_rank_#_002/model_optim_rng.pt: the TP ranks of stage 2). Where the layout splits evenly
// (`even`: ZeRO pads its partitions to one size, Megatron's tensor parallelism splits evenly),
// such files must hold the same tensors with the same shapes, else CORRUPT (a rank's file from
// another run or model); elsewhere (shards of a sharded .bin hold different tensors) only a
// tensor both hold is compared, and a different shape is INCONCLUSIVE (uneven sharding looks
// the same). Valid, with what was compared, otherwise; nullopt when no two rank files compare.
std::optional<Finding> CheckRankShapes(const std::vector<StepFile>& files, bool even);

// Differences between this step's top-level torch.save files and the previous step's files of
// the same name (digits read as '#'): tensors added, removed or reshaped. Warnings, not
// failures (a job may change its model between saves on purpose).
std::vector<std::string> ChangesSincePrevious(const Listing& step, const Listing& previous,
                                              const std::string& previous_path);

}  // namespace denpex::engine::ckpt
