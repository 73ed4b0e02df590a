#include "checkpoints.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

#include "checkpoint_frameworks.h"
#include "checkpoint_tree.h"
#include "ckpt_bytes.h"

namespace denpex::sim {
namespace fs = std::filesystem;
namespace {

using ckpt::Dict;
using ckpt::Int;
using ckpt::Object;
using ckpt::Str;
using ckpt::TorchState;

constexpr TimeNs kSaveTime = 200 * kNsPerMs;  // one save, when nothing interrupts it

// The step a save's name carries: accelerate's checkpoint_K counts saves from 0, every other
// layout names the training step.
std::int64_t NameStep(v1::CheckpointLayout layout, std::int64_t step, int every) {
  return layout == v1::CHECKPOINT_LAYOUT_ACCELERATE ? step / every - 1 : step;
}

// The name a save of `step` gets in the layout (a directory unless torch.save or Lightning).
std::string SaveName(v1::CheckpointLayout layout, std::int64_t step, int every) {
  const std::string n = std::to_string(step);
  switch (layout) {
    case v1::CHECKPOINT_LAYOUT_DCP:
    case v1::CHECKPOINT_LAYOUT_TORCH_DIR: return "step_" + n;
    case v1::CHECKPOINT_LAYOUT_DEEPSPEED: return "global_step" + n;
    case v1::CHECKPOINT_LAYOUT_MEGATRON: return "iter_" + Padded(static_cast<int>(step), 7);
    case v1::CHECKPOINT_LAYOUT_HF_TRAINER: return "checkpoint-" + n;
    case v1::CHECKPOINT_LAYOUT_ACCELERATE: return "checkpoint_" + std::to_string(NameStep(layout, step, every));
    case v1::CHECKPOINT_LAYOUT_LIGHTNING: return "epoch=0-step=" + n + ".ckpt";
    case v1::CHECKPOINT_LAYOUT_NEMO: return NemoName(step);
    case v1::CHECKPOINT_LAYOUT_NEMO_CKPT: return NemoName(step) + ".ckpt";
    default: return "step_" + n + ".pt";
  }
}

// The victim's coordinates in the Megatron order rank = tp + TP * (dp + DP * pp).
struct Coords {
  int tp = 0, dp = 0, pp = 0;
};
Coords CoordsOf(int rank, const Shape& s) {
  return {rank % s.tp, (rank / s.tp) % s.dp, rank / (s.tp * s.dp)};
}

void TorchSave(Tree& tree, const std::string& name, std::int64_t step, Cut cut, TimeNs t) {
  const std::string bytes =
      TorchState(name.substr(0, name.size() - 3), {{"step", step}}, 256, cut == Cut::kNaN);
  tree.Put(name, cut == Cut::kTruncate ? FirstHalf(bytes) : cut == Cut::kMissing ? "" : bytes, t);
}

// A folder of torch.save files: rank 0 writes model.pt, then optimizer.pt (the one a kill
// cuts, or that a save stopped before writing).
void TorchDir(Tree& tree, const std::string& dir, std::int64_t step, Cut cut, TimeNs t) {
  tree.Put(fs::path(dir) / "model.pt", TorchState("model", {{"step", step}}, 256), t);
  if (cut == Cut::kMissing) return;
  const std::string optim = TorchState("optimizer", {{"step", step}}, 512, cut == Cut::kNaN);
  tree.Put(fs::path(dir) / "optimizer.pt", cut == Cut::kTruncate ? FirstHalf(optim) : optim, t);
}

// DCP: every rank writes __R_0.distcp holding one torch.save archive; ranks in `dedup` own
// no unique tensor and write a zero-byte file; the coordinator writes .metadata last.
void Dcp(Tree& tree, const std::string& dir, const Shape& s, int victim, Cut cut, bool dedup,
         TimeNs t) {
  std::vector<ckpt::DcpItem> items;
  for (int r = 0; r < s.world; ++r) {
    const std::string file = "__" + std::to_string(r) + "_0.distcp";
    const bool empty = dedup && r % 64 == 63;
    const bool nan = r == victim && cut == Cut::kNaN;
    const std::string bytes = empty ? "" : TorchState("archive", {{"rank", r}}, 32, nan);
    if (!empty) items.push_back({file, 0, bytes.size()});
    if (r == victim && cut == Cut::kMissing) continue;
    tree.Put(fs::path(dir) / file, r == victim && cut == Cut::kTruncate ? FirstHalf(bytes) : bytes, t);
  }
  if (cut != Cut::kTruncate) tree.Put(fs::path(dir) / ".metadata", ckpt::DcpMetadata(items), t);
}

void DeepSpeed(Tree& tree, const std::string& dir, std::int64_t step, const Shape& s, int victim,
               Cut cut, TimeNs t) {
  const Coords v = CoordsOf(victim, s);
  const int victim_mp = v.tp + s.tp * v.pp;
  for (int m = 0; m < s.mp(); ++m) {
    const std::string mm = Padded(m, 2);
    const std::string model = "mp_rank_" + mm + "_model_states";
    tree.Put(fs::path(dir) / (model + ".pt"),
             TorchState(model, {{"global_steps", step}, {"dp_world_size", s.dp}, {"mp_world_size", s.mp()}}, 64),
             t);
    for (int d = 0; d < s.dp; ++d) {
      const std::string name = "zero_pp_rank_" + std::to_string(d) + "_mp_rank_" + mm + "_optim_states";
      const bool hit = d == v.dp && m == victim_mp;
      if (hit && cut == Cut::kMissing) continue;
      const std::string bytes = TorchState(name, {{"partition_count", s.dp}},
                                           hit && cut == Cut::kResized ? 96 : 128,
                                           hit && cut == Cut::kNaN);
      tree.Put(fs::path(dir) / (name + ".pt"), hit && cut == Cut::kTruncate ? FirstHalf(bytes) : bytes, t);
    }
  }
}

void Megatron(Tree& tree, const std::string& dir, std::int64_t step, const Shape& s, int victim,
              Cut cut, TimeNs t) {
  const Coords v = CoordsOf(victim, s);
  for (int tp = 0; tp < s.tp; ++tp) {
    for (int pp = 0; pp < s.pp; ++pp) {
      const bool hit = tp == v.tp && pp == v.pp;
      if (hit && cut == Cut::kMissing) continue;
      char rank_dir[32];  // mp_rank_TT, or mp_rank_TT_PPP with pipeline parallelism
      if (s.pp > 1) {
        std::snprintf(rank_dir, sizeof rank_dir, "mp_rank_%02d_%03d", tp, pp);
      } else {
        std::snprintf(rank_dir, sizeof rank_dir, "mp_rank_%02d", tp);
      }
      const ckpt::Py args = Object("argparse.Namespace",
                                   Dict({{Str("tensor_model_parallel_size"), Int(s.tp)},
                                         {Str("pipeline_model_parallel_size"), Int(s.pp)},
                                         {Str("world_size"), Int(s.world)}}));
      // The rank's weights: 16 floats, split evenly across TP ranks.
      const std::size_t weight_bytes = hit && cut == Cut::kResized ? 48 : 64;
      std::string bytes = ckpt::TorchZip(
          "model_optim_rng",
          Dict({{Str("iteration"), Int(step)},
                {Str("checkpoint_version"), Int(3)},
                {Str("args"), args},
                {Str("model"),
                 Dict({{Str("w"), ckpt::Tensor("0", static_cast<std::int64_t>(weight_bytes / 4))}})}}),
          {ckpt::FloatBytes(weight_bytes, hit && cut == Cut::kNaN)});
      tree.Put(fs::path(dir) / rank_dir / "model_optim_rng.pt",
               hit && cut == Cut::kTruncate ? FirstHalf(bytes) : bytes, t);
    }
  }
}

// A custom writer's files: no layout any verifier knows.
void Unknown(Tree& tree, const std::string& dir, std::int64_t step, TimeNs t) {
  std::string blob(512, '\0');
  for (std::size_t k = 0; k < blob.size(); ++k) blob[k] = static_cast<char>((k * 131 + step) & 0xFF);
  tree.Put(fs::path(dir) / "state.msgpack", blob, t);
  tree.Put(fs::path(dir) / "index.txt", "step " + std::to_string(step) + "\n", t);
}

struct SaveSpec {
  std::int64_t step = 0;
  TimeNs done = 0;
  Cut cut = Cut::kNone;
  bool unknown = false;
  bool dedup = false;
  Shape shape;
};

std::string Save(Tree& tree, v1::CheckpointLayout layout, const SaveSpec& s, int victim, int every) {
  std::string name = SaveName(layout, s.step, every);
  if (s.unknown) {
    if (layout == v1::CHECKPOINT_LAYOUT_TORCH_SAVE) name = "step_" + std::to_string(s.step);
    Unknown(tree, name, s.step, s.done);
    return name;
  }
  switch (layout) {
    case v1::CHECKPOINT_LAYOUT_DCP: Dcp(tree, name, s.shape, victim, s.cut, s.dedup, s.done); break;
    case v1::CHECKPOINT_LAYOUT_DEEPSPEED: DeepSpeed(tree, name, s.step, s.shape, victim, s.cut, s.done); break;
    case v1::CHECKPOINT_LAYOUT_MEGATRON: Megatron(tree, name, s.step, s.shape, victim, s.cut, s.done); break;
    case v1::CHECKPOINT_LAYOUT_TORCH_DIR: TorchDir(tree, name, s.step, s.cut, s.done); break;
    case v1::CHECKPOINT_LAYOUT_HF_TRAINER: HfTrainerSave(tree, {name, s.step, s.shape, victim, s.cut, s.done}); break;
    case v1::CHECKPOINT_LAYOUT_ACCELERATE: AccelerateSave(tree, {name, s.step, s.shape, victim, s.cut, s.done}); break;
    case v1::CHECKPOINT_LAYOUT_LIGHTNING: LightningSave(tree, {name, s.step, s.shape, victim, s.cut, s.done}); break;
    case v1::CHECKPOINT_LAYOUT_NEMO: NemoSave(tree, {name, s.step, s.shape, victim, s.cut, s.done}); break;
    case v1::CHECKPOINT_LAYOUT_NEMO_CKPT: NemoCkptSave(tree, {name, s.step, s.shape, victim, s.cut, s.done}); break;
    default: TorchSave(tree, name, s.step, s.cut, s.done); break;
  }
  return name;
}

// Why the truth rejects the newest save.
std::string Reason(v1::CheckpointDamage d, v1::CheckpointLayout layout) {
  switch (d) {
    case v1::CHECKPOINT_DAMAGE_KILL_DURING_SAVE:
      return "the save was in flight when the fault hit: a file is cut short" +
             std::string(layout == v1::CHECKPOINT_LAYOUT_DCP || layout == v1::CHECKPOINT_LAYOUT_NEMO
                             ? " and .metadata was never written"
                             : "");
    case v1::CHECKPOINT_DAMAGE_MISSING_SHARD:
      switch (layout) {
        case v1::CHECKPOINT_LAYOUT_TORCH_DIR: return "optimizer.pt was never written";
        case v1::CHECKPOINT_LAYOUT_ACCELERATE: return "optimizer.bin is missing";
        case v1::CHECKPOINT_LAYOUT_HF_TRAINER: return "a model shard its index names is missing";
        case v1::CHECKPOINT_LAYOUT_LIGHTNING:
        case v1::CHECKPOINT_LAYOUT_NEMO_CKPT: return "the file is empty";
        default: return "a rank's shard is missing";
      }
    case v1::CHECKPOINT_DAMAGE_WORLD_SIZE_MISMATCH:
      return "saved with another DP size: ZeRO shards do not reshard";
    case v1::CHECKPOINT_DAMAGE_WRITTEN_AFTER_FAULT:
      return "finished after the initiating fault, while the cascade was under way";
    case v1::CHECKPOINT_DAMAGE_UNKNOWN_FORMAT: return "a format no verifier knows";
    case v1::CHECKPOINT_DAMAGE_NAN_TENSOR:
      return "saved after the job's values diverged: a tensor holds NaN";
    case v1::CHECKPOINT_DAMAGE_RANK_SIZE_MISMATCH:
      return "a rank's shard holds a tensor of another size than its peers'";
    case v1::CHECKPOINT_DAMAGE_SAVE_IN_FLIGHT:
      switch (layout) {
        case v1::CHECKPOINT_LAYOUT_HF_TRAINER:
        case v1::CHECKPOINT_LAYOUT_ACCELERATE:
          return "the save was in flight when the fault hit: it stopped after the optimizer state";
        case v1::CHECKPOINT_LAYOUT_LIGHTNING:
        case v1::CHECKPOINT_LAYOUT_NEMO_CKPT:
          return "the save was in flight when the fault hit: the file is half written";
        case v1::CHECKPOINT_LAYOUT_NEMO:
          return "the save was in flight when the fault hit: every shard written, never finalized";
        default:
          return "the save was in flight when the fault hit: rank 0 logged its start and never its finish";
      }
    default: return "";
  }
}

// Layouts whose rank files split the state evenly (ZeRO partitions, Megatron TP shards).
bool EvenlySplit(v1::CheckpointLayout layout) {
  return layout == v1::CHECKPOINT_LAYOUT_DEEPSPEED || layout == v1::CHECKPOINT_LAYOUT_MEGATRON;
}

bool NewestUnsafe(v1::CheckpointDamage d, v1::CheckpointLayout layout) {
  switch (d) {
    case v1::CHECKPOINT_DAMAGE_NONE:
    case v1::CHECKPOINT_DAMAGE_HARMLESS_LOOKALIKE: return false;
    case v1::CHECKPOINT_DAMAGE_WORLD_SIZE_MISMATCH: return layout == v1::CHECKPOINT_LAYOUT_DEEPSPEED;
    case v1::CHECKPOINT_DAMAGE_RANK_SIZE_MISMATCH: return EvenlySplit(layout);
    default: return true;
  }
}

// Layouts with a `latest` pointer, Megatron's tracker or Lightning's last.ckpt.
bool HasPointer(v1::CheckpointLayout layout) {
  switch (layout) {
    case v1::CHECKPOINT_LAYOUT_TORCH_SAVE:
    case v1::CHECKPOINT_LAYOUT_TORCH_DIR:
    case v1::CHECKPOINT_LAYOUT_DEEPSPEED:
    case v1::CHECKPOINT_LAYOUT_MEGATRON:
    case v1::CHECKPOINT_LAYOUT_LIGHTNING:
    case v1::CHECKPOINT_LAYOUT_NEMO_CKPT: return true;
    default: return false;
  }
}

// The pointer a layout keeps, naming the newest save it was written for (Lightning: last.ckpt,
// a second copy of that save).
void WritePointer(Tree& tree, v1::CheckpointLayout layout, const std::vector<SaveSpec>& saves,
                  const std::vector<std::string>& names, v1::CheckpointDamage damage) {
  if (saves.empty() || !HasPointer(layout)) return;
  std::size_t at = saves.size() - 1;
  // torch.save's `latest` and Megatron's tracker are written once the save is complete on
  // every rank; DeepSpeed's rank 0 writes `latest` before the barrier (checkpoints.md §3.1).
  // A save in flight: DeepSpeed's rank 0 had not reached its commit either.
  if (damage == v1::CHECKPOINT_DAMAGE_SAVE_IN_FLIGHT) {
    if (at == 0) return;
    --at;
  }
  const bool unfinished = damage == v1::CHECKPOINT_DAMAGE_KILL_DURING_SAVE ||
                          (damage == v1::CHECKPOINT_DAMAGE_MISSING_SHARD &&
                           (layout == v1::CHECKPOINT_LAYOUT_TORCH_SAVE ||
                            layout == v1::CHECKPOINT_LAYOUT_TORCH_DIR ||
                            layout == v1::CHECKPOINT_LAYOUT_LIGHTNING ||
                            layout == v1::CHECKPOINT_LAYOUT_NEMO_CKPT));
  if (unfinished && layout != v1::CHECKPOINT_LAYOUT_DEEPSPEED) {
    if (at == 0) return;
    --at;
  }
  const bool nan = saves[at].cut == Cut::kNaN;
  if (layout == v1::CHECKPOINT_LAYOUT_LIGHTNING) {
    // last.ckpt: the same state saved again once the step's file is written.
    tree.Put("last.ckpt", LightningBytes(saves[at].step, nan), saves[at].done);
  } else if (layout == v1::CHECKPOINT_LAYOUT_NEMO_CKPT) {
    // The -last copy, then the .nemo rewritten (a look-alike: that archive cut short by a kill
    // in save_to, the .ckpt saves whole).
    tree.Put(NemoName(saves[at].step) + "-last.ckpt", LightningBytes(saves[at].step, nan), saves[at].done);
    const std::string nemo = NemoArchiveBytes(saves[at].step, nan);
    tree.Put("megatron_gpt.nemo", damage == v1::CHECKPOINT_DAMAGE_HARMLESS_LOOKALIKE ? FirstHalf(nemo) : nemo,
             saves[at].done + kSaveTime / 4);
  } else if (layout == v1::CHECKPOINT_LAYOUT_MEGATRON) {
    tree.Put("latest_checkpointed_iteration.txt", std::to_string(saves[at].step), saves[at].done);
  } else {
    tree.Put("latest", names[at], saves[at].done);
  }
}

}  // namespace

bool OwnsItsFolders(v1::CheckpointLayout layout) {
  switch (layout) {
    case v1::CHECKPOINT_LAYOUT_HF_TRAINER:
    case v1::CHECKPOINT_LAYOUT_ACCELERATE:
    case v1::CHECKPOINT_LAYOUT_LIGHTNING:
    case v1::CHECKPOINT_LAYOUT_NEMO:
    case v1::CHECKPOINT_LAYOUT_NEMO_CKPT: return true;
    default: return false;
  }
}

bool LogsSaves(v1::CheckpointLayout layout) {
  switch (layout) {
    case v1::CHECKPOINT_LAYOUT_DEEPSPEED:
    case v1::CHECKPOINT_LAYOUT_MEGATRON:
    case v1::CHECKPOINT_LAYOUT_HF_TRAINER:
    case v1::CHECKPOINT_LAYOUT_ACCELERATE:
    case v1::CHECKPOINT_LAYOUT_LIGHTNING:
    case v1::CHECKPOINT_LAYOUT_NEMO:
    case v1::CHECKPOINT_LAYOUT_NEMO_CKPT: return true;
    default: return false;
  }
}

TimeNs SaveDuration(TimeNs until_fault) { return std::min(kSaveTime, until_fault / 2); }

Result<v1::CheckpointOutcome> WriteCheckpoints(const v1::Checkpointing& c, const Job& job,
                                               const FaultPlan& fault, const CheckpointTimes& t,
                                               const fs::path& incident_dir) {
  const v1::CheckpointLayout layout =
      c.layout() == v1::CHECKPOINT_LAYOUT_UNSPECIFIED ? v1::CHECKPOINT_LAYOUT_TORCH_SAVE : c.layout();
  const int every = c.every_steps() > 0 ? c.every_steps() : 5;
  const int keep = c.keep() > 0 ? c.keep() : 3;
  const v1::CheckpointDamage damage = c.damage();
  const Shape shape{job.world, job.tp, job.pp, job.dp};
  const int victim = fault.rank >= 0 ? fault.rank : 0;

  // Saves after every `every` completed steps, up to the fault's step; the newest `keep` stay.
  std::vector<SaveSpec> saves;
  const TimeNs step_start = t.fault - fault.offset;  // the fault's step began here
  for (std::int64_t s = every; s <= fault.step; s += every) {
    const TimeNs start = step_start - (fault.step - s) * job.step_time;
    saves.push_back({s, start + SaveDuration(t.fault - start), Cut::kNone, false, false, shape});
  }
  if (saves.size() > static_cast<std::size_t>(keep)) saves.erase(saves.begin(), saves.end() - keep);

  Tree tree(incident_dir / "checkpoints");
  tree.Dir("", step_start);
  if (!saves.empty()) {
    SaveSpec& newest = saves.back();
    switch (damage) {
      case v1::CHECKPOINT_DAMAGE_KILL_DURING_SAVE:
        newest.cut = Cut::kTruncate;
        newest.done = t.fault;
        break;
      case v1::CHECKPOINT_DAMAGE_MISSING_SHARD: newest.cut = Cut::kMissing; break;
      case v1::CHECKPOINT_DAMAGE_SAVE_IN_FLIGHT:
        // Megatron, DeepSpeed: every file complete, only the log tells. The frameworks that log
        // only a start stopped part way (checkpoint_frameworks.cc).
        if (layout != v1::CHECKPOINT_LAYOUT_MEGATRON && layout != v1::CHECKPOINT_LAYOUT_DEEPSPEED)
          newest.cut = Cut::kStopped;
        break;
      case v1::CHECKPOINT_DAMAGE_WORLD_SIZE_MISMATCH: {
        const int ws = c.saved_world_size() > 0 ? c.saved_world_size() : 2 * job.world;
        newest.shape.world = ws;
        newest.shape.dp = ws / (job.tp * job.pp);
        break;
      }
      case v1::CHECKPOINT_DAMAGE_WRITTEN_AFTER_FAULT:
        newest.done = t.fault + std::max<TimeNs>(2 * kNsPerSec, (t.end - t.fault) / 2);
        break;
      case v1::CHECKPOINT_DAMAGE_UNKNOWN_FORMAT: newest.unknown = true; break;
      case v1::CHECKPOINT_DAMAGE_HARMLESS_LOOKALIKE: newest.dedup = true; break;
      case v1::CHECKPOINT_DAMAGE_NAN_TENSOR: newest.cut = Cut::kNaN; break;
      case v1::CHECKPOINT_DAMAGE_RANK_SIZE_MISMATCH:
        if (EvenlySplit(layout)) newest.cut = Cut::kResized;
        break;
      default: break;
    }
  }
  std::vector<std::string> names;
  for (const SaveSpec& s : saves) names.push_back(Save(tree, layout, s, victim, every));
  WritePointer(tree, layout, saves, names, damage);
  if (damage == v1::CHECKPOINT_DAMAGE_HARMLESS_LOOKALIKE && layout != v1::CHECKPOINT_LAYOUT_DCP &&
      layout != v1::CHECKPOINT_LAYOUT_NEMO_CKPT && saves.size() >= 2) {
    // A leftover of an older interrupted save that rotation never removed.
    const SaveSpec& old = saves[saves.size() - 2];
    tree.Put(SaveName(layout, old.step + every / 2, every) + ".tmp", "", old.done + kSaveTime);
  }
  DENPEX_RETURN_IF_ERROR(tree.Stamp());

  v1::CheckpointOutcome o;
  o.set_dir("checkpoints");
  if (saves.empty()) {
    o.set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
    o.set_summary("no save happened before the fault");
    return o;
  }
  const bool unsafe = NewestUnsafe(damage, layout);
  const auto named = [&](std::size_t k) { return NameStep(layout, saves[k].step, every); };
  const std::size_t newest = saves.size() - 1;
  std::size_t chosen = saves.size();  // none
  if (!unsafe) chosen = saves.size() - 1;
  else if (saves.size() >= 2) chosen = saves.size() - 2;
  if (unsafe) {
    v1::RejectedCheckpoint* r = o.add_rejected();
    r->set_path(damage == v1::CHECKPOINT_DAMAGE_UNKNOWN_FORMAT &&
                        layout == v1::CHECKPOINT_LAYOUT_TORCH_SAVE
                    ? "step_" + std::to_string(saves.back().step)
                    : names.back());
    r->set_step(named(newest));
    r->set_reason(Reason(damage, layout));
  }
  o.set_last_written_step(named(newest));
  if (chosen < saves.size()) {
    o.set_path(names[chosen]);
    o.set_step(named(chosen));
    o.set_steps_lost(named(newest) - named(chosen));
  }
  if (damage == v1::CHECKPOINT_DAMAGE_UNKNOWN_FORMAT) {
    o.set_decision(v1::CHECKPOINT_DECISION_INCONCLUSIVE);
    o.set_summary("the newest save is in a format no verifier knows");
  } else if (chosen < saves.size()) {
    o.set_decision(v1::CHECKPOINT_DECISION_RESUME);
    o.set_summary("resume from " + names[chosen]);
  } else {
    o.set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
    o.set_summary("the only save kept is unsafe");
  }
  return o;
}

Status StampLogTimes(const fs::path& incident_dir, TimeNs t) {
  std::error_code ec;
  fs::recursive_directory_iterator it(incident_dir, ec);
  if (ec) return Status::IoError(incident_dir.string() + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IoError(incident_dir.string() + ": " + ec.message());
    if (it.depth() == 0 && it->path().filename() == "checkpoints") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) Tree::SetTime(it->path(), t);
  }
  return Status::Ok();
}

}  // namespace denpex::sim
