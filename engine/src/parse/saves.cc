// Checkpoint saves as the frameworks log them (docs/log_formats.md §27), after any header and
// prefix (`[rank0]:`, an srun label, DeepSpeed's `[<time>] [INFO] [logging.py:96:log_dist] `):
//
//   saving checkpoint at iteration     100 to /ckpt in torch_dist format          Megatron-LM (print_rank_0)
//     successfully saved checkpoint from iteration     100 to /ckpt [ t 1/2, p 1/1 ]
//   [Rank 0] Saving model checkpoint: /ckpt/global_step10/mp_rank_00_model_states.pt   DeepSpeed
//   [Rank 0] [Torch] Checkpoint global_step10 is about to be saved!
//   [Torch] Checkpoint global_step10 is ready now!
//   Saving model checkpoint to /out/checkpoint-500                                   HF Trainer
//   Saving the checkpoint (or staging if async is enabled).                          torchtitan
//   Finished saving the checkpoint (or staging if async is enabled) in 3.21 seconds.
//   Saving current state to /out/checkpoint_3                                        accelerate
//   Random states saved in /out/checkpoint_3/random_states_0.pkl
//   Epoch 0, global step 20: 'step' reached 20.00000 (best 20.00000), saving model to '/ck/epoch=0-step=20.ckpt' as top 3
//                                                                     Lightning ModelCheckpoint(verbose=True)
//   Scheduled async checkpoint save for /ck/gpt--val_loss=2.10-step=20-consumed_samples=10240.0.ckpt     NeMo 2.0
//   Async checkpoint save for step 21 (/ck/gpt--...-step=20-....ckpt) finalized successfully.

// A started save carries the step and path the line names (kSaveStarted), a finished one the
// same (kSaveFinished); the checkpoint part of a diagnosis pairs them
// (analyze/checkpoint_outcome.cc). The HF Trainer and Lightning log no finish; NeMo's finalize
// names the next step, so its step is read from the path (`step=20`), as the start's is.
#include <array>

#include "parse/families.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The text after `key` up to the next blank (a path; paths with blanks are cut there).
std::string_view WordAfter(std::string_view s, std::string_view key) {
  const std::size_t at = s.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = s.substr(at + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  std::size_t n = 0;
  while (n < rest.size() && rest[n] != ' ' && rest[n] != '\t' && rest[n] != '\r') ++n;
  return rest.substr(0, n);
}

// The step a path's checkpoint folder names: `global_step10`, `checkpoint-500`, `iter_0000100`,
// `step-300`, `step_300` (the last such component wins); -1 when none does.
std::int64_t StepInPath(std::string_view path) {
  constexpr std::array<std::string_view, 6> kTokens = {"global_step", "checkpoint-", "iter_", "step=", "step-", "step_"};
  std::int64_t step = -1;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    std::size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(begin, end - begin);
    for (std::string_view token : kTokens) {
      const std::size_t at = part.find(token);
      if (at == std::string_view::npos || (at > 0 && token != "checkpoint-" && IsAlpha(part[at - 1]))) continue;
      Scanner s(part.substr(at + token.size()));
      std::int64_t v;
      if (s.Digits(1, 12, &v)) {
        step = v;
        break;
      }
    }
    begin = end + 1;
  }
  return step;
}

// The number after `key` (Megatron pads it: `iteration     100`); -1 when none.
std::int64_t NumberAfter(std::string_view s, std::string_view key) {
  const std::size_t at = s.find(key);
  if (at == std::string_view::npos) return -1;
  Scanner sc(s.substr(at + key.size()));
  sc.SkipSpaces();
  std::int64_t v;
  return sc.Digits(1, 12, &v) ? v : -1;
}

bool Save(Kind kind, std::int64_t step, std::string_view path, StringTable* strings, Recognised* out,
          bool no_finish = false) {
  out->family = Family::kTrainer;
  out->kind = kind;
  out->error = false;
  out->detail = CheckpointSave{step, path.empty() ? kNoStr : InternCapped(strings, path), no_finish};
  return true;
}

// DeepSpeed's `[Rank R] ` from log_dist, when the line starts with it.
void DeepSpeedRank(std::string_view msg, Recognised* out) {
  Scanner s(msg);
  s.SkipSpaces();
  std::int64_t r;
  if (s.Lit("[Rank ") && s.Digits(1, 7, &r) && s.Char(']')) out->rank = static_cast<std::int32_t>(r);
}

}  // namespace

// A path between quotes after `key` (Lightning's repr of it): `'/ck/epoch=0-step=20.ckpt'`.
std::string_view QuotedAfter(std::string_view s, std::string_view key) {
  const std::size_t at = s.find(key);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = s.substr(at + key.size());
  const std::size_t end = rest.find('\'');
  return end == std::string_view::npos ? std::string_view() : rest.substr(0, end);
}

// The folder a file path lies in: `/out/checkpoint_3` of `/out/checkpoint_3/random_states_0.pkl`.
std::string_view Folder(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// accelerate, Lightning and NeMo 2.0: their lines need not say `checkpoint`.
bool RecogniseFrameworkSave(std::string_view msg, StringTable* strings, Recognised* out) {
  if (Contains(msg, "Saving current state to ")) {  // accelerate: N in checkpoint_N counts saves
    const std::string_view path = WordAfter(msg, "Saving current state to ");
    return !path.empty() && Save(Kind::kSaveStarted, -1, path, strings, out);
  }
  if (Contains(msg, "Random states saved in ")) {
    const std::string_view folder = Folder(WordAfter(msg, "Random states saved in "));
    return !folder.empty() && Save(Kind::kSaveFinished, -1, folder, strings, out);
  }
  if (Contains(msg, "saving model to '")) {  // Lightning: `global step N: ... saving model to '<file>'`
    const std::string_view path = QuotedAfter(msg, "saving model to '");
    const std::int64_t step = NumberAfter(msg, "global step");
    return !path.empty() &&
           Save(Kind::kSaveStarted, step >= 0 ? step : StepInPath(path), path, strings, out, /*no_finish=*/true);
  }
  if (Contains(msg, "Scheduled async checkpoint save for ")) {
    const std::string_view path = WordAfter(msg, "Scheduled async checkpoint save for ");
    return !path.empty() && Save(Kind::kSaveStarted, StepInPath(path), path, strings, out);
  }
  if (Contains(msg, "Async checkpoint save for step ") && Contains(msg, ") finalized successfully")) {
    const std::size_t open = msg.find('(');
    const std::size_t close = msg.rfind(") finalized successfully");
    if (open == std::string_view::npos || close <= open) return false;
    const std::string_view path = msg.substr(open + 1, close - open - 1);
    return Save(Kind::kSaveFinished, StepInPath(path), path, strings, out);
  }
  return false;
}

bool RecogniseCheckpointSave(std::string_view msg, StringTable* strings, Recognised* out) {
  if (RecogniseFrameworkSave(msg, strings, out)) return true;
  if (!Contains(msg, "heckpoint")) return false;  // every other shape holds `checkpoint` or `Checkpoint`
  if (Contains(msg, "saving checkpoint at iteration")) {
    if (Contains(msg, "successfully saving")) return false;
    const std::int64_t step = NumberAfter(msg, "at iteration");
    if (step < 0) return false;
    return Save(Kind::kSaveStarted, step, WordAfter(msg, " to "), strings, out);
  }
  if (Contains(msg, "uccessfully saved checkpoint from iteration")) {  // NeMo capitalises it
    const std::int64_t step = NumberAfter(msg, "from iteration");
    if (step < 0) return false;
    return Save(Kind::kSaveFinished, step, WordAfter(msg, " to "), strings, out);
  }
  if (Contains(msg, "Saving model checkpoint: ")) {  // DeepSpeed, rank 0, one file of the tag
    const std::string_view path = WordAfter(msg, "Saving model checkpoint: ");
    if (path.empty()) return false;
    DeepSpeedRank(msg, out);
    Save(Kind::kSaveStarted, StepInPath(path), path, strings, out);
    out->family = Family::kDeepSpeed;
    return true;
  }
  if (Contains(msg, "Saving model checkpoint to ")) {  // HF Trainer
    const std::string_view path = WordAfter(msg, "Saving model checkpoint to ");
    if (path.empty()) return false;
    return Save(Kind::kSaveStarted, StepInPath(path), path, strings, out, /*no_finish=*/true);
  }
  const bool about = Contains(msg, " is about to be saved!");
  if (about || Contains(msg, " is ready now!")) {  // DeepSpeed's checkpoint engines: `[Torch] Checkpoint TAG ...`
    const std::string_view tag = WordAfter(msg, "Checkpoint ");
    if (tag.empty() || tag == "is") return false;
    DeepSpeedRank(msg, out);
    Save(about ? Kind::kSaveStarted : Kind::kSaveFinished, StepInPath(tag), tag, strings, out);
    out->family = Family::kDeepSpeed;
    return true;
  }
  if (Contains(msg, "Finished saving the checkpoint")) return Save(Kind::kSaveFinished, -1, {}, strings, out);
  if (Contains(msg, "Saving the checkpoint")) return Save(Kind::kSaveStarted, -1, {}, strings, out);
  return false;
}

}  // namespace denpex::engine
