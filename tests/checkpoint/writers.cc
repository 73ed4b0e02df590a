#include "writers.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

namespace denpex::ckpt_test {

void Put(const fs::path& path, const std::string& bytes) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TempDir::TempDir() {
  std::random_device rd;
  path_ =
      fs::temp_directory_path() / ("denpex-ckpt-" + std::to_string(rd()) + std::to_string(rd()));
  fs::create_directories(path_);
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

void WriteDcp(const fs::path& dir, int ranks, int items_per_rank, std::vector<int> empty_ranks) {
  std::vector<DcpItem> items;
  for (int r = 0; r < ranks; ++r) {
    const std::string file = "__" + std::to_string(r) + "_0.distcp";
    std::string bytes;
    if (std::find(empty_ranks.begin(), empty_ranks.end(), r) == empty_ranks.end()) {
      for (int k = 0; k < items_per_rank; ++k) {
        const std::string archive = TorchState("archive", {{"item", k}}, 64 * (k + 1));
        items.push_back({file, bytes.size(), archive.size()});
        bytes += archive;
      }
    }
    Put(dir / file, bytes);
  }
  Put(dir / ".metadata", DcpMetadata(items));
}

void WriteDeepSpeed(const fs::path& tag, int dp, int mp, std::int64_t step, bool record_dp) {
  for (int m = 0; m < mp; ++m) {
    char mm_buf[16];
    std::snprintf(mm_buf, sizeof mm_buf, "%02d", m);
    const std::string mm = mm_buf;
    std::vector<std::pair<std::string, std::int64_t>> ints = {{"global_steps", step}};
    if (record_dp) ints.insert(ints.end(), {{"dp_world_size", dp}, {"mp_world_size", mp}});
    Put(tag / ("mp_rank_" + mm + "_model_states.pt"),
        TorchState("mp_rank_" + mm + "_model_states", ints));
    for (int d = 0; d < dp; ++d) {
      const std::string name =
          "zero_pp_rank_" + std::to_string(d) + "_mp_rank_" + mm + "_optim_states";
      Put(tag / (name + ".pt"), TorchState(name, {{"partition_count", dp}}, 512));
    }
  }
}

void WriteMegatron(const fs::path& iter_dir, int tp, int pp, std::int64_t iteration,
                   bool record_args) {
  for (int t = 0; t < tp; ++t) {
    for (int p = 0; p < pp; ++p) {
      char name[32];
      if (pp == 1) {
        std::snprintf(name, sizeof name, "mp_rank_%02d", t);
      } else {
        std::snprintf(name, sizeof name, "mp_rank_%02d_%03d", t, p);
      }
      std::vector<std::pair<Py, Py>> items = {{Str("iteration"), Int(iteration)},
                                              {Str("checkpoint_version"), Int(3)}};
      if (record_args) {
        items.push_back(
            {Str("args"),
             Object("argparse.Namespace", Dict({{Str("tensor_model_parallel_size"), Int(tp)},
                                                {Str("pipeline_model_parallel_size"), Int(pp)}}))});
      }
      items.push_back({Str("model"), Dict({{Str("w"), Tensor("0", 16)}})});
      Put(iter_dir / name / "model_optim_rng.pt",
          TorchZip("model_optim_rng", Dict(std::move(items)), {std::string(64, 'm')}));
    }
  }
}

void WriteMegatronDist(const fs::path& iter_dir, int ranks) {
  WriteDcp(iter_dir, ranks);
  Put(iter_dir / "common.pt", TorchState("common", {{"iteration", 7}}));
  Put(iter_dir / "metadata.json",
      R"({"sharded_backend": "torch_dist", "sharded_backend_version": 1})");
}

void WriteHf(const fs::path& dir, std::int64_t step, int world) {
  Put(dir / "config.json", R"({"model_type": "gpt2"})");
  Put(dir / "model.safetensors", Safetensors({{"wte", "F32", {8, 4}}, {"ln.bias", "BF16", {4}}}));
  Put(dir / "optimizer.pt", TorchState("optimizer", {{"step", step}}));
  Put(dir / "scheduler.pt", TorchState("scheduler", {{"last_epoch", step}}));
  Put(dir / "training_args.bin", TorchState("training_args", {}));
  for (int i = 0; i < world; ++i) {
    const std::string name = world == 1 ? "rng_state" : "rng_state_" + std::to_string(i);
    Put(dir / (name + ".pth"), TorchState(name, {{"seed", i}}));
  }
  Put(dir / "trainer_state.json", "{\"global_step\": " + std::to_string(step) +
                                      ", \"epoch\": 1.5, \"log_history\": [{\"loss\": 2.5}]}");
}

void WriteOrbax(const fs::path& dir, int processes) {
  Put(dir / "_CHECKPOINT_METADATA", R"({"item_handlers": {"default": "PyTreeCheckpointHandler"},
    "init_timestamp_nsecs": 1700000000000000000, "commit_timestamp_nsecs": 1700000000500000000})");
  Put(dir / "commit_success.txt", "Checkpoint commit was successful to " + dir.string());
  Put(dir / "default" / "_METADATA", R"({"tree_metadata": {"params": {}}})");
  Put(dir / "default" / "manifest.ocdbt", "OCDBT");
  for (int p = 0; p < processes; ++p)
    Put(dir / "default" / ("ocdbt.process_" + std::to_string(p)) / "manifest.ocdbt", "x");
}

}  // namespace denpex::ckpt_test
