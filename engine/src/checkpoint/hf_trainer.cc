// Hugging Face Trainer (checkpoints.md §3.5): checkpoint-N/ has no completion marker;
// trainer_state.json is the last file rank 0 writes, so its absence means the save did not
// finish. Weights, optimizer, scheduler and per-rank RNG states must all be there.
#include <set>

#include "checkpoint/byte_file.h"
#include "checkpoint/json.h"
#include "checkpoint/layouts.h"

namespace denpex::engine::ckpt {
namespace {

// The files a resumable checkpoint needs; what is missing is appended to `missing`.
void ExpectedFiles(const Listing& dir, bool ds, bool fsdp, const VerifyContext& ctx,
                   std::vector<std::string>& missing, Checks& checks) {
  static const char* kWeights[] = {"model.safetensors",
                                   "pytorch_model.bin",
                                   "adapter_model.safetensors",
                                   "adapter_model.bin",
                                   "model.safetensors.index.json",
                                   "pytorch_model.bin.index.json"};
  bool weights = ds || fsdp;
  for (const char* w : kWeights) weights |= dir.FindFile(w) != nullptr;
  if (!weights)
    missing.push_back("model weights (model.safetensors, pytorch_model.bin or an index)");
  if (!ds && !fsdp) {
    for (const char* f : {"optimizer.pt", "scheduler.pt"}) {
      if (dir.FindFile(f) == nullptr) missing.push_back(f);
    }
  }
  for (const char* index_name : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    const Entry* index = dir.FindFile(index_name);
    if (index == nullptr) continue;
    auto shards = IndexShards(*index);
    if (!shards) {
      missing.push_back(std::string("a readable ") + index_name);
      continue;
    }
    for (const std::string& s : *shards) {
      if (dir.FindFile(s) == nullptr) missing.push_back(s);
    }
  }
  const int ws = ctx.options.world_size;
  if (ws == 1 && dir.FindFile("rng_state.pth") == nullptr) checks.Warn("rng_state.pth is missing");
  std::vector<std::string> rng;
  for (int i = 0; ws > 1 && i < ws; ++i) {
    if (dir.FindFile("rng_state_" + std::to_string(i) + ".pth") == nullptr)
      rng.push_back(std::to_string(i));
  }
  if (!rng.empty()) {
    checks.Warn("no RNG state for process " + FewNames(rng) +
                " (the Trainer resumes, but not reproducibly)");
  }
}

void CheckStep(const Entry& state, const Entry* ds_tag, Checks& checks) {
  // trainer_state.json grows with its log_history; global_step is read without a tree.
  constexpr std::uint64_t kMaxState = 256ull << 20;
  auto f = ByteFile::Open(state.path);
  auto text = !f.ok()                   ? Result<std::string>(f.status())
              : f->size() > kMaxState ? Result<std::string>(Status::InvalidInput("too large"))
                                      : f->Read(0, f->size());
  std::optional<std::int64_t> step;
  const Status st = !text.ok() ? text.status()
                               : ReadJsonObject(*text, [&](const std::string& key, JsonReader& r) {
                                   if (key == "global_step" && r.Peek() >= '0' && r.Peek() <= '9') {
                                     if (auto n = r.Count()) step = static_cast<std::int64_t>(*n);
                                   } else {
                                     r.Skip();
                                   }
                                 });
  if (!st.ok()) step.reset();
  if (!step)
    return checks.Add(CheckKind::kStep, Inconclusive("trainer_state.json has no global_step"));
  if (checks.step() >= 0 && *step != checks.step()) {
    return checks.Add(CheckKind::kStep,
                      Inconclusive("trainer_state.json says global_step " + std::to_string(*step) +
                                   ", the directory name says " + std::to_string(checks.step())));
  }
  if (ds_tag != nullptr && ds_tag->name != "global_step" + std::to_string(*step)) {
    checks.Warn("the DeepSpeed tag is " + ds_tag->name +
                " (benign: DeepSpeed counts steps differently)");
  }
  checks.Pass(CheckKind::kStep,
              "trainer_state.json global_step " + std::to_string(*step) + " agrees");
}

}  // namespace

void VerifyHfTrainer(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  const Entry* state = dir.FindFile("trainer_state.json");
  if (state == nullptr) {
    return checks.Add(CheckKind::kExistence,
                      Incomplete("no trainer_state.json: the Trainer writes it last, so this "
                                 "save did not finish"));
  }
  checks.Pass(CheckKind::kExistence, "trainer_state.json present");
  const Entry* ds_tag = nullptr;
  std::vector<const Entry*> fsdp, files;
  for (const Entry& e : dir.entries) {
    if (e.kind == EntryKind::kDir && StartsWith(e.name, "global_step")) ds_tag = &e;
    if (e.kind == EntryKind::kDir &&
        (StartsWith(e.name, "pytorch_model_fsdp_") || StartsWith(e.name, "optimizer_"))) {
      fsdp.push_back(&e);
    }
    if (e.kind != EntryKind::kDir &&
        (EndsWith(e.name, ".pt") || EndsWith(e.name, ".pth") || EndsWith(e.name, ".bin") ||
         EndsWith(e.name, ".safetensors") || EndsWith(e.name, ".json"))) {
      files.push_back(&e);
    }
  }
  std::vector<std::string> missing;
  ExpectedFiles(dir, ds_tag != nullptr, !fsdp.empty(), ctx, missing, checks);
  if (!missing.empty())
    return checks.Add(CheckKind::kShardCount, Incomplete("missing " + FewNames(missing, 4)));
  checks.Pass(CheckKind::kShardCount,
              std::string("weights") + (ds_tag ? ", DeepSpeed " + ds_tag->name : "") +
                  (fsdp.empty() ? ", optimizer.pt, scheduler.pt" : ", FSDP shards") + " present");
  CheckFileSet(files, ctx, checks);
  for (const Entry* sub : fsdp) {
    if (checks.stopped()) return;
    if (auto l = ListSub(*sub, ctx, checks, CheckKind::kExistence)) VerifyDcp(*l, ctx, checks);
  }
  if (ds_tag != nullptr && !checks.stopped()) {
    if (auto l = ListSub(*ds_tag, ctx, checks, CheckKind::kExistence))
      VerifyDeepSpeed(*l, ctx, checks);
  }
  if (!checks.stopped()) CheckStep(*state, ds_tag, checks);
}

}  // namespace denpex::engine::ckpt
