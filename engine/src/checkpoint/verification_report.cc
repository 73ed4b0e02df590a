// The report for people (text) and for programs (v1::CheckpointVerification JSON).
#include <sstream>

#include "denpex/common/text.h"
#include "denpex/common/time.h"
#include "denpex/engine/checkpoint.h"

namespace denpex::engine {
namespace {

v1::CheckpointVerdict ToProto(CheckpointVerdict v) {
  switch (v) {
    case CheckpointVerdict::kValid:
      return v1::CHECKPOINT_VERDICT_VALID;
    case CheckpointVerdict::kIncomplete:
      return v1::CHECKPOINT_VERDICT_INCOMPLETE;
    case CheckpointVerdict::kCorrupt:
      return v1::CHECKPOINT_VERDICT_CORRUPT;
    case CheckpointVerdict::kIncompatible:
      return v1::CHECKPOINT_VERDICT_INCOMPATIBLE;
    case CheckpointVerdict::kInconclusive:
      return v1::CHECKPOINT_VERDICT_INCONCLUSIVE;
  }
  return v1::CHECKPOINT_VERDICT_UNSPECIFIED;
}

std::string_view DecisionName(v1::CheckpointDecision d) {
  switch (d) {
    case v1::CHECKPOINT_DECISION_RESUME:
      return "RESUME";
    case v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT:
      return "NO_SAFE_CHECKPOINT";
    case v1::CHECKPOINT_DECISION_INCONCLUSIVE:
      return "INCONCLUSIVE";
    case v1::CHECKPOINT_DECISION_NOT_EVALUATED:
      return "NOT_EVALUATED";
    default:
      return "UNSPECIFIED";
  }
}

std::string Pad(std::string_view s, std::size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

void RenderCandidate(const CheckpointCandidate& c, std::ostringstream& os) {
  const std::string step = c.step < 0 ? "no step"
                           : c.step_source == StepSource::kContents
                               ? "step " + std::to_string(c.step) + "*"
                               : "step " + std::to_string(c.step);
  os << "  " << Pad(step, 12) << "  "
     << c.path << "  [" << FormatName(c.format) << "]  ";
  if (!c.evaluated) {
    os << "not read (older than the choice)\n";
    return;
  }
  os << VerdictName(c.verdict)
     << (c.suspect ? ", SUSPECT: modified after the initiating fault" : "") << "\n";
  for (const CheckpointCheck& k : c.checks) {
    const std::string result =
        k.result == CheckpointVerdict::kValid ? "pass" : std::string(VerdictName(k.result));
    os << "      " << Pad(result, 13) << Pad(CheckName(k.kind), 12) << k.detail << "\n";
  }
  for (const std::string& w : c.warnings) os << "      " << Pad("warning", 25) << w << "\n";
}

}  // namespace

std::string CheckpointCandidate::Reason() const {
  for (const CheckpointCheck& c : checks) {
    if (c.result != CheckpointVerdict::kValid && c.result != CheckpointVerdict::kInconclusive)
      return c.detail;
  }
  for (const CheckpointCheck& c : checks) {
    if (c.result == CheckpointVerdict::kInconclusive) return c.detail;
  }
  if (suspect) {
    return "verifies, but was modified after the initiating fault" +
           (modified ? " (at " + FormatRfc3339(*modified) + ")" : std::string()) + ": not trusted";
  }
  return "";
}

std::string_view FormatName(CheckpointFormat f) {
  switch (f) {
    case CheckpointFormat::kUnknown:
      return "unknown";
    case CheckpointFormat::kTemporary:
      return "temporary";
    case CheckpointFormat::kTorchSave:
      return "torch.save";
    case CheckpointFormat::kSafetensors:
      return "safetensors";
    case CheckpointFormat::kDcp:
      return "DCP";
    case CheckpointFormat::kDeepSpeed:
      return "DeepSpeed";
    case CheckpointFormat::kMegatron:
      return "Megatron";
    case CheckpointFormat::kMegatronDist:
      return "Megatron torch_dist";
    case CheckpointFormat::kHfTrainer:
      return "HF Trainer";
    case CheckpointFormat::kOrbax:
      return "Orbax";
    case CheckpointFormat::kNemo:
      return "NeMo";
    case CheckpointFormat::kTorchDir:
      return "torch.save files";
    case CheckpointFormat::kAccelerate:
      return "accelerate";
    case CheckpointFormat::kNemoArchive:
      return "NeMo archive";
  }
  return "unknown";
}

std::string_view VerdictName(CheckpointVerdict v) {
  switch (v) {
    case CheckpointVerdict::kValid:
      return "VALID";
    case CheckpointVerdict::kIncomplete:
      return "INCOMPLETE";
    case CheckpointVerdict::kCorrupt:
      return "CORRUPT";
    case CheckpointVerdict::kIncompatible:
      return "INCOMPATIBLE";
    case CheckpointVerdict::kInconclusive:
      return "INCONCLUSIVE";
  }
  return "INCONCLUSIVE";
}

std::string_view CheckName(CheckKind k) {
  switch (k) {
    case CheckKind::kExistence:
      return "existence";
    case CheckKind::kShardCount:
      return "shard_count";
    case CheckKind::kSizes:
      return "sizes";
    case CheckKind::kFormat:
      return "format";
    case CheckKind::kMetadata:
      return "metadata";
    case CheckKind::kStep:
      return "step";
    case CheckKind::kSaveLog:
      return "save_log";
  }
  return "existence";
}

std::string RenderCheckpointText(const CheckpointReport& r) {
  std::ostringstream os;
  os << "checkpoints in " << r.dir << ": " << DecisionName(r.outcome.decision());
  if (r.outcome.decision() == v1::CHECKPOINT_DECISION_RESUME) os << " from " << r.outcome.path();
  os << "\n  " << r.summary << "\n";
  if (r.pointer) {
    os << "  pointer: " << r.pointer->file << " -> "
       << (r.pointer->target.empty() ? "(nothing)" : r.pointer->target)
       << (r.pointer->problem.empty() ? "" : " (" + r.pointer->problem + ")") << "\n";
  }
  os << "\n";
  for (const CheckpointCandidate& c : r.candidates) RenderCandidate(c, os);
  if (!r.notes.empty()) os << "\nnotes:\n";
  for (const std::string& n : r.notes) os << "  - " << n << "\n";
  return EscapeControlBytes(os.str());  // file names are bytes a terminal must not act on
}

v1::CheckpointVerification ToProto(const CheckpointReport& r) {
  v1::CheckpointVerification out;
  out.set_dir(r.dir);
  *out.mutable_outcome() = r.outcome;
  out.set_last_written_step(r.last_written_step);
  out.set_steps_lost(r.steps_lost);
  out.set_summary(r.summary);
  if (r.pointer) {
    auto* p = out.mutable_pointer();
    p->set_file(r.pointer->file);
    p->set_target(r.pointer->target);
    p->set_step(r.pointer->step);
    p->set_problem(r.pointer->problem);
  }
  for (const CheckpointCandidate& c : r.candidates) {
    auto* pc = out.add_candidates();
    pc->set_path(c.path);
    pc->set_step(c.step);
    pc->set_format(std::string(FormatName(c.format)));
    if (c.evaluated) pc->set_verdict(ToProto(c.verdict));
    pc->set_evaluated(c.evaluated);
    pc->set_suspect(c.suspect);
    if (c.modified) pc->set_modified(FormatRfc3339(*c.modified));
    for (const CheckpointCheck& k : c.checks) {
      auto* pk = pc->add_checks();
      pk->set_check(std::string(CheckName(k.kind)));
      pk->set_result(ToProto(k.result));
      pk->set_detail(k.detail);
    }
    for (const std::string& w : c.warnings) pc->add_warnings(w);
  }
  for (const std::string& n : r.notes) out.add_notes(n);
  return out;
}

}  // namespace denpex::engine
