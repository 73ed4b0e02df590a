#include "checkpoint_frameworks.h"

#include <cstdio>
#include <vector>

#include "ckpt_bytes.h"

namespace denpex::sim {
namespace fs = std::filesystem;
namespace {

using ckpt::Dict;
using ckpt::Int;
using ckpt::List;
using ckpt::Object;
using ckpt::Str;
using ckpt::TorchState;
using ckpt::TorchZip;

// A small torch.save of plain integers (a scheduler's state dict, an RNG state's counters).
std::string Counters(const std::string& prefix,
                     const std::vector<std::pair<std::string, std::int64_t>>& ints) {
  std::vector<std::pair<ckpt::Py, ckpt::Py>> items;
  for (const auto& [k, v] : ints) items.push_back({Str(k), Int(v)});
  return TorchZip(prefix, Dict(std::move(items)));
}

// A rank's RNG state: its rank and one small tensor standing for the generator's state.
std::string RngState(const std::string& prefix, int rank) {
  return TorchState(prefix, {{"rank", rank}}, 32);
}

// The bytes as written, or their first half when the kill cut this file.
std::string CutShort(const std::string& bytes, Cut cut) {
  return cut == Cut::kTruncate ? FirstHalf(bytes) : bytes;
}

}  // namespace

void HfTrainerSave(Tree& tree, const FrameworkSave& s) {
  const fs::path dir = s.name;
  const TimeNs t = s.done;
  // save_model: the weights in two shards and their index, config.json, training_args.bin.
  const std::string shard1 = "model-00001-of-00002.safetensors";
  const std::string shard2 = "model-00002-of-00002.safetensors";
  tree.Put(dir / shard1, ckpt::SafetensorsValues({{"model.embed_tokens.weight", "F32", {16, 4}}}),
           t);
  if (s.cut != Cut::kMissing) {
    tree.Put(dir / shard2,
             ckpt::SafetensorsValues({{"lm_head.weight", "F32", {16, 4}}}, s.cut == Cut::kNaN), t);
  }
  tree.Put(dir / "model.safetensors.index.json",
           "{\n  \"metadata\": {\n    \"total_size\": 512\n  },\n  \"weight_map\": {\n"
           "    \"lm_head.weight\": \"" +
               shard2 +
               "\",\n"
               "    \"model.embed_tokens.weight\": \"" +
               shard1 + "\"\n  }\n}\n",
           t);
  tree.Put(dir / "config.json",
           "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": 4\n}\n", t);
  tree.Put(dir / "training_args.bin",
           TorchZip("training_args", Object("transformers.training_args.TrainingArguments",
                                            Dict({{Str("output_dir"), Str("/checkpoints")},
                                                  {Str("save_steps"), Int(5)}}))),
           t);
  // _save_optimizer_and_scheduler, _save_rng_state (every process its own), then
  // trainer_state.json: the Trainer writes it last.
  const std::string optim = TorchState("optimizer", {{"step", s.step}}, 512);
  tree.Put(dir / "optimizer.pt", CutShort(optim, s.cut), t);
  if (s.cut == Cut::kTruncate || s.cut == Cut::kStopped) return;
  tree.Put(dir / "scheduler.pt",
           Counters("scheduler", {{"last_epoch", s.step}, {"_step_count", s.step + 1}}), t);
  for (int r = 0; r < s.shape.world; ++r) {
    const std::string name = "rng_state_" + std::to_string(r);
    tree.Put(dir / (name + ".pth"), RngState(name, r), t);
  }
  const std::string n = std::to_string(s.step);
  tree.Put(dir / "trainer_state.json",
           "{\n  \"best_metric\": null,\n  \"best_model_checkpoint\": null,\n  \"epoch\": 0.5,\n"
           "  \"eval_steps\": 500,\n  \"global_step\": " +
               n +
               ",\n  \"is_hyper_param_search\": false,\n"
               "  \"log_history\": [\n    {\n      \"epoch\": 0.5,\n      \"grad_norm\": 1.25,\n"
               "      \"learning_rate\": 0.0003,\n      \"loss\": 2.31,\n      \"step\": " +
               n +
               "\n    }\n  ],\n"
               "  \"logging_steps\": 5,\n  \"max_steps\": 1000,\n  \"save_steps\": 5,\n"
               "  \"total_flos\": 0,\n  \"train_batch_size\": 8\n}\n",
           t);
}

void AccelerateSave(Tree& tree, const FrameworkSave& s) {
  const fs::path dir = s.name;
  const TimeNs t = s.done;
  // save_accelerator_state: models, optimizers, schedulers, then each process's RNG states
  // (the main process's after its scheduler).
  tree.Put(
      dir / "model.safetensors",
      ckpt::SafetensorsValues({{"embed.weight", "F32", {16, 4}}, {"head.weight", "F32", {4, 16}}},
                              s.cut == Cut::kNaN),
      t);
  if (s.cut != Cut::kMissing) {
    tree.Put(dir / "optimizer.bin",
             CutShort(TorchState("optimizer", {{"step", s.step}}, 512), s.cut), t);
  }
  if (s.cut == Cut::kTruncate || s.cut == Cut::kStopped) return;
  tree.Put(dir / "scheduler.bin",
           Counters("scheduler", {{"last_epoch", s.step}, {"_step_count", s.step + 1}}), t);
  for (int r = 0; r < s.shape.world; ++r) {
    const std::string name = "random_states_" + std::to_string(r);
    tree.Put(dir / (name + ".pkl"), RngState(name, r), t);
  }
}

std::string LightningBytes(std::int64_t step, bool nan) {
  // Lightning torch.saves into memory first ("archive" is torch's folder name for a buffer).
  const ckpt::Py state_dict = Dict({{Str("layer.weight"), ckpt::Tensor("0", 64)}});
  const ckpt::Py optimizer =
      Dict({{Str("state"), Dict({})}, {Str("param_groups"), List({Dict({{Str("lr"), Int(0)}})})}});
  return TorchZip("archive",
                  Dict({{Str("epoch"), Int(0)},
                        {Str("global_step"), Int(step)},
                        {Str("pytorch-lightning_version"), Str("2.4.0")},
                        {Str("state_dict"), state_dict},
                        {Str("loops"), Dict({})},
                        {Str("callbacks"), Dict({})},
                        {Str("optimizer_states"), List({optimizer})},
                        {Str("lr_schedulers"), List({})}}),
                  {ckpt::FloatBytes(256, nan)});
}

void LightningSave(Tree& tree, const FrameworkSave& s) {
  const std::string bytes = LightningBytes(s.step, s.cut == Cut::kNaN);
  switch (s.cut) {
    case Cut::kTruncate:
    case Cut::kStopped:
      tree.Put(s.name, FirstHalf(bytes), s.done);
      break;
    case Cut::kMissing:
      tree.Put(s.name, "", s.done);
      break;
    default:
      tree.Put(s.name, bytes, s.done);
      break;
  }
}

std::string NemoName(std::int64_t step) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "megatron_gpt--val_loss=%.2f-step=%lld-consumed_samples=%lld.0",
                4.0 - 0.01 * static_cast<double>(step % 200), static_cast<long long>(step),
                static_cast<long long>(step * 512));
  return buf;
}

void NemoCkptSave(Tree& tree, const FrameworkSave& s) {
  const bool finished = s.cut != Cut::kTruncate && s.cut != Cut::kStopped;
  if (!finished) tree.Put(NemoName(s.step) + "-unfinished", "", s.done);
  LightningSave(tree, s);
}

std::string NemoArchiveBytes(std::int64_t step, bool nan) {
  const std::string weights =
      TorchZip("model_weights", Dict({{Str("layer.weight"), ckpt::Tensor("0", 64)}}),
               {ckpt::FloatBytes(256, nan)});
  return ckpt::Tar({{"model_config.yaml",
                     "target: nemo.collections.nlp.models.language_modeling.megatron_gpt_model."
                     "MegatronGPTModel\nglobal_step: " +
                         std::to_string(step) + "\n"},
                    {"model_weights.ckpt", weights}});
}

void NemoSave(Tree& tree, const FrameworkSave& s) {
  const fs::path dir = s.name;
  const fs::path weights = dir / "weights";
  const TimeNs t = s.done;
  const bool finalized = s.cut != Cut::kTruncate && s.cut != Cut::kStopped;
  // The marker lives from the save's start until its finalize removes it.
  if (!finalized) tree.Put(s.name + "-unfinished", "", t);
  // Every rank writes its shard; rank 0 also common.pt and the context.
  std::vector<ckpt::DcpItem> items;
  for (int r = 0; r < s.shape.world; ++r) {
    const std::string file = "__" + std::to_string(r) + "_0.distcp";
    const bool hit = r == s.victim;
    const std::string bytes = TorchState("archive", {{"rank", r}}, 32, hit && s.cut == Cut::kNaN);
    items.push_back({file, 0, bytes.size()});
    if (hit && s.cut == Cut::kMissing) continue;
    tree.Put(weights / file, hit && s.cut == Cut::kTruncate ? FirstHalf(bytes) : bytes, t);
  }
  tree.Put(weights / "common.pt", TorchState("common", {{"iteration", s.step}}, 16), t);
  tree.Put(dir / "context" / "io.json",
           "{\"root\": {\"type\": \"ref\", \"key\": \"trainer_context_1\"}, \"objects\": {}, "
           "\"artifacts\": [], \"metadata\": {\"nemo_version\": \"2.1.0\"}}\n",
           t);
  tree.Put(dir / "context" / "model.yaml",
           "_target_: nemo.collections.llm.gpt.model.base.GPTModel\n", t);
  if (!finalized) return;
  // The finalize: the coordinator's .metadata, then metadata.json.
  tree.Put(weights / ".metadata", ckpt::DcpMetadata(items), t);
  tree.Put(weights / "metadata.json",
           "{\"sharded_backend\": \"torch_dist\", \"sharded_backend_version\": 1, "
           "\"common_backend\": \"torch\", \"common_backend_version\": 1}",
           t);
}

}  // namespace denpex::sim
