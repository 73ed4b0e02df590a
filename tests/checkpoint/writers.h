// Writers of real checkpoint bytes for the verifier's tests: a pickle emitter, torch.save
// zip files (stored records, "FB" alignment padding, data descriptors, ZIP64 end records),
// legacy torch.save files, safetensors files, DCP .metadata, and whole directory trees in
// the layouts of DeepSpeed, Megatron, HF Trainer, Orbax and NeMo. They share no code with
// the verifier: the byte layouts follow checkpoints.md §2 directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/ckpt_bytes.h"  // sim/src: the byte-level writers

namespace denpex::ckpt_test {

namespace fs = std::filesystem;
using namespace sim::ckpt;  // NOLINT: Py, PickleBytes, TorchZip, ... as before

// Writes `bytes` to `path`, creating parent directories.
void Put(const fs::path& path, const std::string& bytes);
std::string Slurp(const fs::path& path);

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Layout trees. Each writes one complete, valid checkpoint; tests then break it.
// DCP: __r_0.distcp per rank holding `items_per_rank` torch.save archives back to back,
// ranks in `empty_ranks` write a zero-byte file (deduplication); then .metadata.
void WriteDcp(const fs::path& dir, int ranks, int items_per_rank = 2,
              std::vector<int> empty_ranks = {});
// DeepSpeed tag dir: mp_rank_MM_model_states.pt (records dp_world_size, mp_world_size,
// global_steps) + zero_pp_rank_D_mp_rank_MM_optim_states.pt for D < dp, M < mp.
void WriteDeepSpeed(const fs::path& tag_dir, int dp, int mp, std::int64_t step,
                    bool record_dp = true);
// Megatron legacy iter dir: mp_rank_TT[_PPP]/model_optim_rng.pt with args and iteration.
void WriteMegatron(const fs::path& iter_dir, int tp, int pp, std::int64_t iteration,
                   bool record_args = true);
// Megatron torch_dist iter dir: DCP + metadata.json.
void WriteMegatronDist(const fs::path& iter_dir, int ranks);
// HF Trainer checkpoint-N: model.safetensors, optimizer.pt, scheduler.pt, rng states,
// training_args.bin, trainer_state.json (global_step N).
void WriteHf(const fs::path& dir, std::int64_t step, int world = 2);
// Orbax step dir: _CHECKPOINT_METADATA, commit_success.txt, default/_METADATA + ocdbt dirs.
void WriteOrbax(const fs::path& dir, int processes = 2);

}  // namespace denpex::ckpt_test
