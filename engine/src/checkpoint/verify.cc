// The public entry point: enumerate candidates, verify them newest first until one is VALID
// (and not suspect), and decide RESUME / NO_SAFE_CHECKPOINT / INCONCLUSIVE.
#include <algorithm>
#include <system_error>

#include "checkpoint/candidates.h"
#include "checkpoint/layouts.h"
#include "denpex/engine/checkpoint.h"

namespace denpex::engine {
namespace {

using ckpt::Candidate;
using ckpt::Checks;
using ckpt::EntryKind;
using ckpt::VerifyContext;

std::string TemporaryReason(const std::string& name) {
  if (name.find(".orbax-checkpoint-tmp") != std::string::npos) {
    return "an Orbax temporary directory: the rename that commits the step never happened (Orbax: "
           "'Found "
           "incomplete checkpoint')";
  }
  if (name.rfind("tmp-checkpoint-", 0) == 0) {
    return "a Trainer staging directory never renamed to checkpoint-N (transformers 4.36-4.38 "
           "multi-node rename "
           "race)";
  }
  return "a temporary file or directory left by a save that did not finish";
}

void RunChecks(const Candidate& c, const VerifyContext& ctx, Checks& checks) {
  using F = CheckpointFormat;
  if (c.entry.kind == EntryKind::kLinkOut) {
    return checks.Add(
        CheckKind::kExistence,
        ckpt::Inconclusive("a symbolic link out of the checkpoint directory; not followed"));
  }
  if (!c.unfinished_marker.empty()) {
    return checks.Add(
        CheckKind::kExistence,
        ckpt::Incomplete(c.unfinished_marker + " is present: NeMo removes that marker only after "
                                               "every rank finished the save"));
  }
  if (c.report.format == F::kTemporary)
    return checks.Add(CheckKind::kExistence, ckpt::Incomplete(TemporaryReason(c.entry.name)));
  if (c.report.format == F::kTorchSave || c.report.format == F::kSafetensors ||
      c.report.format == F::kNemoArchive) {
    return ckpt::VerifySingleFile(c.entry, c.report.format, ctx, checks);
  }
  if (!c.listing)
    return checks.Add(CheckKind::kExistence, ckpt::Inconclusive("the directory cannot be listed"));
  ckpt::VerifierFor(c.report.format)(*c.listing, ctx, checks);
}

// The next older candidate of the same directory layout: its file set is what a complete
// save of this layout held (used where no marker says a save finished).
const Candidate* Previous(const std::vector<Candidate>& cands, std::size_t k) {
  for (std::size_t j = k + 1; j < cands.size(); ++j) {
    if (cands[j].report.format == cands[k].report.format && cands[j].listing &&
        cands[j].report.step >= 0)
      return &cands[j];
  }
  return nullptr;
}

// Whether a logged save names this candidate: by step (not an accelerate folder, whose N counts
// saves), or by a component of its path or tag equal to the candidate's folder or file name
// (`/out/checkpoint-500`, `global_step10`).
bool Names(const LoggedSave& s, const CheckpointCandidate& c) {
  if (s.step >= 0 && c.step >= 0 && s.step == c.step && c.format != CheckpointFormat::kAccelerate) return true;
  if (s.path.empty() || c.path.empty() || c.path == ".") return false;
  const std::string name = std::filesystem::path(c.path).begin()->string();
  for (const auto& part : std::filesystem::path(s.path)) {
    if (part.string() == name) return true;
  }
  return false;
}

// What the job's logs say of this candidate's save. A save that began and logged no finish was
// in flight when the job failed: its step is INCOMPLETE whatever its files show, and that check
// comes first so that the rejection cites the save line. A save whose lines name no step
// (torchtitan) is the candidate modified since it began (only where file times are the job's).
// A logged finish is evidence, shown as a passed check. A save the log cannot judge (its
// framework logs no finish and nothing came after its start) is a warning: its files decide.
void ApplyLoggedSaves(const VerifyContext& ctx, CheckpointCandidate& c) {
  for (const LoggedSave& s : ctx.options.saves) {
    if (s.undecided && Names(s, c)) {
      c.warnings.push_back("the log shows this save began (" + s.cite +
                           ") and nothing after it; its framework logs no finish, so its files decide");
      return;
    }
  }
  for (const LoggedSave& s : ctx.options.saves) {
    if (s.undecided) continue;
    const bool named = Names(s, c);
    const bool unnamed_since = s.step < 0 && s.path.empty() && s.began && c.modified && *c.modified >= *s.began;
    if (!s.finished && (named || unnamed_since)) {
      const std::string why = named ? "" : " (its lines name no step; this is the checkpoint modified since it began)";
      c.checks.insert(c.checks.begin(),
                      {CheckKind::kSaveLog, CheckpointVerdict::kIncomplete,
                       "the save was in flight when the job failed: " + s.cite + " began it and no finish was logged" +
                           why + "; its files may look complete, but it is never chosen"});
      return;
    }
  }
  for (const LoggedSave& s : ctx.options.saves) {
    if (s.finished && Names(s, c)) {
      c.checks.push_back({CheckKind::kSaveLog, CheckpointVerdict::kValid,
                          "the log says this save finished" + std::string(s.after_fault ? ", after the fault" : "") +
                              ": " + s.cite});
      return;
    }
  }
}

void Verify(std::vector<Candidate>& cands, std::size_t k, const VerifyContext& base) {
  Candidate& c = cands[k];
  VerifyContext ctx = base;
  if (const Candidate* prev = Previous(cands, k); prev != nullptr && c.report.step >= 0) {
    ctx.previous = &*prev->listing;
    ctx.previous_path = prev->report.path;
    ctx.previous_step = prev->report.step;
  }
  Checks checks(c.report);
  RunChecks(c, ctx, checks);
  ApplyLoggedSaves(ctx, c.report);
  c.report.evaluated = true;
  c.report.verdict = checks.Verdict();
  c.report.suspect =
      ctx.options.not_after && c.report.modified && *c.report.modified > *ctx.options.not_after;
}

// How to make the framework load the chosen checkpoint instead of what its pointer says.
std::string ForceHint(const CheckpointCandidate& c) {
  const std::string n = std::to_string(c.step);
  switch (c.format) {
    case CheckpointFormat::kDeepSpeed:
      return "load it with engine.load_checkpoint(dir, tag=\"" + c.path + "\") or write \"" +
             c.path + "\" into latest";
    case CheckpointFormat::kMegatron:
    case CheckpointFormat::kMegatronDist:
      return "pass --ckpt-step " + n + " or write " + n + " into latest_checkpointed_iteration.txt";
    case CheckpointFormat::kHfTrainer:
      return "pass resume_from_checkpoint=\"<dir>/" + c.path + "\" to trainer.train()";
    case CheckpointFormat::kOrbax:
      return "restore step " + n + " explicitly (CheckpointManager.restore(" + n + "))";
    default:
      return "load " + c.path + " explicitly";
  }
}

// Resolves the pointer against the candidates and says where it disagrees with the choice.
void ExplainPointer(CheckpointReport& r, const std::vector<Candidate>& cands,
                    const CheckpointCandidate* chosen, const std::filesystem::path& root) {
  const bool has_ds = std::any_of(cands.begin(), cands.end(), [](const Candidate& c) {
    return c.report.format == CheckpointFormat::kDeepSpeed;
  });
  if (!r.pointer) {
    if (has_ds)
      r.notes.push_back(
          "no `latest` file: DeepSpeed's load_checkpoint() would silently start from scratch");
    return;
  }
  CheckpointPointer& p = *r.pointer;
  if (!p.problem.empty()) {
    r.notes.push_back(p.file + " is " + p.problem + "; candidates were found by directory name");
    return;
  }
  const Candidate* it = ckpt::PointerTarget(p, cands, root);
  if (it == nullptr) {
    p.problem = "names " + p.target +
                ", which is not in the directory (deleted by rotation, or never written)";
    r.notes.push_back(p.file + " " + p.problem);
    return;
  }
  if (chosen == nullptr || &it->report == chosen) return;
  const CheckpointCandidate& t = it->report;
  r.notes.push_back(p.file + " names " + t.path +
                    (t.evaluated
                         ? " (" + std::string(VerdictName(t.verdict)) + ": " + t.Reason() + ")"
                         : " (older than the choice)") +
                    "; to resume from " + chosen->path + ", " + ForceHint(*chosen));
}

// "step_200 (step 200)", or the path alone for a candidate without a step.
std::string Named(const CheckpointCandidate& c) {
  return c.step >= 0 ? c.path + " (step " + std::to_string(c.step) + ")" : c.path;
}

// How candidates without a step in their names were ordered.
void NoteOrdering(CheckpointReport& r, const std::vector<Candidate>& cands) {
  std::vector<std::string> inside, by_time;
  for (const Candidate& c : cands) {
    if (c.report.path == ".") continue;
    if (c.report.step_source == StepSource::kContents) inside.push_back(c.report.path);
    if (c.report.step_source == StepSource::kNone) by_time.push_back(c.report.path);
  }
  if (!inside.empty()) {
    r.notes.push_back("step N*: " + ckpt::FewNames(inside) +
                      " carry no step in their names; the step is the one recorded inside");
  }
  if (!by_time.empty()) {
    r.notes.push_back(ckpt::FewNames(by_time) +
                      " carry no step: ordered among the others by modification time");
  }
}

void Decide(CheckpointReport& r, const std::vector<Candidate>& cands, bool unordered,
            const std::filesystem::path& root) {
  const CheckpointCandidate* chosen = nullptr;
  const CheckpointCandidate* blocker = nullptr;  // undecided and newer than the choice
  const CheckpointCandidate* suspect_valid = nullptr;
  for (const Candidate& c : cands) {
    const CheckpointCandidate& k = c.report;
    if (!k.evaluated) continue;
    if (k.verdict == CheckpointVerdict::kValid && !k.suspect) chosen = &k;
    if (k.verdict == CheckpointVerdict::kValid && k.suspect && !suspect_valid) suspect_valid = &k;
    if (k.verdict == CheckpointVerdict::kInconclusive && !blocker && !chosen) blocker = &k;
    if (k.verdict != CheckpointVerdict::kValid || k.suspect) {
      auto* rej = r.outcome.add_rejected();
      rej->set_path(k.path);
      rej->set_step(k.step);
      rej->set_reason(k.Reason());
    }
  }
  for (const Candidate& c : cands)
    r.last_written_step = std::max(r.last_written_step, c.report.step);
  auto& o = r.outcome;
  if (chosen && !blocker) {
    o.set_decision(v1::CHECKPOINT_DECISION_RESUME);
    o.set_path(chosen->path);
    o.set_step(chosen->step);
    if (chosen->step >= 0) r.steps_lost = r.last_written_step - chosen->step;
    r.summary = "resume from " + Named(*chosen) + ", the newest checkpoint that verifies";
    if (r.steps_lost > 0)
      r.summary += "; " + std::to_string(r.steps_lost) +
                   " steps lost against the last written step " +
                   std::to_string(r.last_written_step);
  } else if (blocker || suspect_valid || (cands.empty() && unordered)) {
    o.set_decision(v1::CHECKPOINT_DECISION_INCONCLUSIVE);
    if (blocker) {
      r.summary = "cannot decide: " + Named(*blocker) +
                  " could not be verified: " + blocker->Reason();
      if (chosen) r.summary += "; if it is unusable, " + Named(*chosen) + " verifies";
    } else if (suspect_valid) {
      r.summary = "cannot decide: the only checkpoint that verifies, " + suspect_valid->path +
                  ", was written after the initiating fault";
    } else {
      r.summary =
          "no checkpoint this verifier recognizes: the directories carry no step in their names "
          "and hold no checkpoint file at their top level";
    }
  } else {
    o.set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
    r.summary = cands.empty() ? "no checkpoints found"
                              : "no checkpoint verifies: " + std::to_string(cands.size()) +
                                    " candidates rejected";
  }
  ExplainPointer(r, cands, o.decision() == v1::CHECKPOINT_DECISION_RESUME ? chosen : nullptr,
                 root);
  NoteOrdering(r, cands);
}

}  // namespace

Result<CheckpointReport> VerifyCheckpointDir(const std::filesystem::path& dir,
                                             const CheckpointOptions& options) {
  std::error_code ec;
  const auto st = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(st))
    return Status::NotFound(dir.string() + ": no such checkpoint directory");
  if (!std::filesystem::is_directory(st))
    return Status::InvalidInput(dir.string() + ": not a directory");
  const auto root = std::filesystem::canonical(dir, ec);
  if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  auto listing = ckpt::ListDir(root, root);
  if (!listing.ok()) return listing.status();

  CheckpointReport report;
  report.dir = dir.string();
  report.pointer = ckpt::ReadPointer(*listing);
  VerifyContext ctx{options, root, std::nullopt};
  std::optional<ckpt::DeepReader> deep;
  if (options.deep) ctx.deep = &deep.emplace(&options.deep_progress, options.deep_max_bytes);
  if (report.pointer && report.pointer->file != "latest" && report.pointer->step >= 0) {
    ctx.tracker_step = report.pointer->step;
  }
  std::vector<Candidate> cands = ckpt::FindCandidates(*listing);
  for (std::size_t k = 0; k < cands.size(); ++k) {
    Verify(cands, k, ctx);
    if (cands[k].report.verdict == CheckpointVerdict::kValid && !cands[k].report.suspect) break;
  }
  Decide(report, cands, ckpt::HasUnorderedCheckpoints(*listing), root);
  for (Candidate& c : cands) report.candidates.push_back(std::move(c.report));
  return report;
}

Result<v1::CheckpointOutcome> VerifyCheckpoints(const std::filesystem::path& dir,
                                                const CheckpointOptions& options) {
  auto r = VerifyCheckpointDir(dir, options);
  if (!r.ok()) return r.status();
  return std::move(r->outcome);
}

Result<v1::CheckpointOutcome> NewestCheckpointBlindly(const std::filesystem::path& dir) {
  std::error_code ec;
  const auto root = std::filesystem::canonical(dir, ec);
  if (ec) return Status::NotFound(dir.string() + ": no such checkpoint directory");
  auto listing = ckpt::ListDir(root, root);
  if (!listing.ok()) return listing.status();
  v1::CheckpointOutcome o;
  const std::vector<Candidate> cands = ckpt::FindCandidates(*listing);
  const auto pointer = ckpt::ReadPointer(*listing);
  if (pointer && pointer->problem.empty() && !pointer->target.empty()) {
    o.set_decision(v1::CHECKPOINT_DECISION_RESUME);
    o.set_path(pointer->file == "latest_checkpointed_iteration.txt" ? "" : pointer->target);
    o.set_step(pointer->step);
    if (const Candidate* c = ckpt::PointerTarget(*pointer, cands, root)) {
      o.set_path(c->report.path);
      o.set_step(c->report.step);
    }
    o.set_summary("resume from " + pointer->file + " -> " + pointer->target + " (not verified)");
    return o;
  }
  for (const Candidate& c : cands) {
    if (c.report.format == CheckpointFormat::kTemporary || c.report.step < 0) continue;
    o.set_decision(v1::CHECKPOINT_DECISION_RESUME);
    o.set_path(c.report.path);
    o.set_step(c.report.step);
    o.set_summary("resume from the highest step on disk, " + c.report.path + " (not verified)");
    return o;
  }
  o.set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
  o.set_summary("no checkpoint carries a step in its name");
  return o;
}

}  // namespace denpex::engine
