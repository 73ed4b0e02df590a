// The saves of the training frameworks that own their checkpoint folders (scenario
// `checkpointing`, docs/checkpoint_verification.md): the Hugging Face Trainer, accelerate,
// Lightning, NeMo 2.0 and NeMo 1.x, each file in the order its framework writes it and in its real
// format (safetensors, torch.save zips, JSON, DCP `.metadata`). checkpoints.cc picks the
// writer by layout, names the save and writes the truth.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint_tree.h"

namespace denpex::sim {

// One save: the folder or file it is written as under checkpoints/, and how it is broken.
struct FrameworkSave {
  std::string name;
  std::int64_t step = 0;
  Shape shape;
  int victim = 0;  // NeMo: the rank whose shard a cut, a missing file or a NaN hits
  Cut cut = Cut::kNone;
  TimeNs done = 0;
};

// checkpoint-N/: model shards and their index, config, training_args.bin, optimizer.pt,
// scheduler.pt, rng_state_<r>.pth per rank, trainer_state.json last.
void HfTrainerSave(Tree& tree, const FrameworkSave& s);
// checkpoint_K/: model.safetensors, optimizer.bin, scheduler.bin, random_states_<r>.pkl.
void AccelerateSave(Tree& tree, const FrameworkSave& s);
// epoch=0-step=N.ckpt, one torch.save file written from memory.
void LightningSave(Tree& tree, const FrameworkSave& s);
// The bytes of a Lightning checkpoint of `step` (last.ckpt is a copy of the newest).
std::string LightningBytes(std::int64_t step, bool nan);
// <model>--...-step=N-.../: weights/ (torch_dist) and context/, with the `-unfinished` marker
// beside it while the save is not finalized.
void NemoSave(Tree& tree, const FrameworkSave& s);
// The NeMo 2.0 folder name of a save of `step` (its ModelCheckpoint filename template); NeMo
// 1.x names its .ckpt files the same way.
std::string NemoName(std::int64_t step);
// NeMo 1.x: NemoName(step).ckpt, a Lightning checkpoint, with `NemoName(step)-unfinished`
// beside it until the save finished.
void NemoCkptSave(Tree& tree, const FrameworkSave& s);
// NeMo's .nemo of the weights a save of `step` held (save_to: an uncompressed tar).
std::string NemoArchiveBytes(std::int64_t step, bool nan);

}  // namespace denpex::sim
