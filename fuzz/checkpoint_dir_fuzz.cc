// Fuzz target for the checkpoint layouts' own files (engine/src/checkpoint/: DCP's .metadata,
// DeepSpeed's `latest` and tag files, Megatron's tracker and metadata.json, the HF Trainer's
// trainer_state.json and shard index, Orbax's metadata, NeMo's names, accelerate's folders):
// the input's first byte picks a layout, the rest is split at "\n--\n" into that layout's files,
// written into a scratch checkpoint directory and verified whole (VerifyCheckpointDir, shallow
// and --deep) and as the blind baseline reads it. None may crash, hang or read out of bounds.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "denpex/engine/checkpoint.h"
#include "scratch_dir.h"

namespace {

namespace fs = std::filesystem;

// Each layout's files, in the order the input's pieces fill them.
constexpr std::size_t kMaxFiles = 5;
constexpr std::array<std::array<std::string_view, kMaxFiles>, 8> kLayouts = {{
    {"step_10/.metadata", "step_10/__0_0.distcp", "step_10/__1_0.distcp", "step_5/.metadata",
     "latest"},
    {"latest", "global_step10/mp_rank_00_model_states.pt",
     "global_step10/zero_pp_rank_0_mp_rank_00_optim_states.pt",
     "global_step10/zero_pp_rank_1_mp_rank_00_optim_states.pt",
     "global_step5/mp_rank_00_model_states.pt"},
    {"latest_checkpointed_iteration.txt", "iter_0000010/mp_rank_00/model_optim_rng.pt",
     "iter_0000010/metadata.json", "iter_0000010/common.pt",
     "iter_0000005/mp_rank_00/model_optim_rng.pt"},
    {"checkpoint-10/trainer_state.json", "checkpoint-10/model.safetensors.index.json",
     "checkpoint-10/model-00001-of-00001.safetensors", "checkpoint-10/optimizer.pt",
     "checkpoint-10/rng_state.pth"},
    {"10/_CHECKPOINT_METADATA", "10/_METADATA", "10/commit_success.txt", "10/default/_METADATA",
     "5/_CHECKPOINT_METADATA"},
    {"model--step=10/weights/metadata.json", "model--step=10/weights/__0_0.distcp",
     "model--step=10/context/io.json", "megatron_gpt--step=10.ckpt", "megatron_gpt.nemo"},
    {"step_10/model.pt", "step_10/optimizer.pt", "latest", "step_5/model.pt",
     "step_10.tmp/model.pt"},
    {"checkpoint_1/model.safetensors", "checkpoint_1/optimizer.bin",
     "checkpoint_1/random_states_0.pkl", "checkpoint_1/scheduler.bin",
     "checkpoint_0/model.safetensors"},
}};

const fs::path& Scratch() { return denpex::fuzz::Scratch("ckpt"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& files = kLayouts[data[0] % kLayouts.size()];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

  const fs::path root = Scratch() / "ckpt";
  std::error_code ec;
  fs::remove_all(root, ec);
  for (std::size_t k = 0; k < kMaxFiles && !rest.empty(); ++k) {
    const std::size_t cut = rest.find("\n--\n");
    const std::string_view piece = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 4);
    const fs::path p = root / std::string(files[k]);
    fs::create_directories(p.parent_path(), ec);
    std::ofstream(p, std::ios::binary)
        .write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  fs::create_directories(root, ec);

  using namespace denpex::engine;
  CheckpointOptions shallow;
  shallow.world_size = 2;
  if (auto r = VerifyCheckpointDir(root, shallow); r.ok()) {
    (void)RenderCheckpointText(*r);
    (void)ToProto(*r);
  }
  CheckpointOptions deep = shallow;
  deep.deep = true;
  deep.deep_max_bytes = 1 << 20;
  (void)VerifyCheckpointDir(root, deep);
  (void)NewestCheckpointBlindly(root);
  return 0;
}
