#include "checkpoint/layouts.h"

#include <algorithm>

#include "checkpoint/byte_file.h"
#include "checkpoint/candidates.h"
#include "checkpoint/consistency.h"
#include "checkpoint/json.h"
#include "checkpoint/nemo_archive.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/torch_file.h"

namespace denpex::engine::ckpt {
namespace {

constexpr std::uint64_t kMaxJson = 64ull << 20;

std::string Rel(const Entry& e, const VerifyContext& ctx) {
  const auto rel = e.path.lexically_relative(ctx.root);
  return rel.empty() ? e.name : rel.generic_string();
}

// A plain pickle (accelerate's custom objects, older random states): it must run to STOP.
Finding CheckPickleFile(const ByteFile& f) {
  if (f.size() > kMaxJson)
    return Inconclusive("a pickle larger than " + Thousands(kMaxJson) + " bytes; not parsed");
  auto bytes = f.Read(0, f.size());
  if (!bytes.ok()) return Unreadable("file", bytes.status());
  const Pickle p = RunPickle(*bytes);
  switch (p.error) {
    case PickleError::kNone:
      return Valid("pickle parses");
    case PickleError::kTruncated:
      return Incomplete("the pickle ends before its STOP opcode (" + Thousands(f.size()) +
                        " bytes): truncated");
    case PickleError::kMalformed:
      return Corrupt("the pickle is malformed: " + p.error_detail);
    case PickleError::kUnsupported:
      break;
  }
  return Inconclusive("pickle: " + p.error_detail);
}

Finding CheckOneFile(const Entry& e, const VerifyContext& ctx) {
  if (e.kind == EntryKind::kLinkOut)
    return Inconclusive("a symbolic link out of the checkpoint directory; not followed");
  auto f = ByteFile::Open(e.path);
  if (!f.ok()) return Unreadable("file", f.status());
  if (EndsWith(e.name, ".safetensors")) {
    Finding header = CheckSafetensorsFile(*f);
    if (!header.ok() || ctx.deep == nullptr) return header;
    Finding read = ctx.deep->Safetensors(*f);
    return read.ok() ? Valid(header.detail + "; " + read.detail) : read;
  }
  if (EndsWith(e.name, ".nemo")) return CheckNemoArchive(*f);
  if (EndsWith(e.name, ".json") || e.name == "_CHECKPOINT_METADATA" || e.name == "_METADATA") {
    if (f->size() > kMaxJson)
      return Inconclusive("larger than " + Thousands(kMaxJson) + " bytes; not parsed");
    auto text = f->Read(0, f->size());
    if (!text.ok()) return Unreadable("file", text.status());
    if (!CheckJsonObject(*text).ok()) return Corrupt("not a JSON object (truncated or damaged)");
    return Valid("JSON parses");
  }
  if (EndsWith(e.name, ".pkl") || EndsWith(e.name, ".pickle")) {
    auto head = f->Read(0, std::min<std::uint64_t>(f->size(), 4));
    if (head.ok() && !head->empty() && (*head)[0] == '\x80' && !StartsWith(*head, "\x80\x02\x8a\x0a"))
      return CheckPickleFile(*f);
  }
  return CheckTorchFile(*f, ctx.deep);
}

// Files only the Hugging Face Trainer writes into checkpoint-N.
bool IsHfFile(std::string_view name) {
  for (std::string_view n : {"training_args.bin", "model.safetensors", "pytorch_model.bin",
                             "adapter_model.safetensors", "adapter_model.bin", "rng_state.pth",
                             "model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (name == n) return true;
  }
  return StartsWith(name, "rng_state_") || StartsWith(name, "model-0") ||
         StartsWith(name, "pytorch_model-0") || StartsWith(name, "global_step");
}

}  // namespace

std::optional<std::set<std::string>> IndexShards(const Entry& index) {
  auto f = ByteFile::Open(index.path);
  if (!f.ok() || f->size() > (64u << 20)) return std::nullopt;
  auto text = f->Read(0, f->size());
  if (!text.ok()) return std::nullopt;
  std::set<std::string> shards;
  bool has_map = false, all_strings = true;
  const Status st = ReadJsonObject(*text, [&](const std::string& key, JsonReader& r) {
    if (key != "weight_map" || r.Peek() != '{') return (void)r.Skip();
    has_map = true;
    r.BeginObject();
    while (r.NextKey()) {  // tensor name -> shard file
      if (r.Peek() != '"') {
        all_strings = false;
        r.Skip();
      } else if (auto file = r.String()) {
        shards.insert(std::move(*file));
      }
    }
  });
  if (!st.ok() || !has_map || !all_strings) return std::nullopt;
  return shards;
}

LayoutVerifier VerifierFor(CheckpointFormat format) {
  using F = CheckpointFormat;
  static constexpr std::pair<F, LayoutVerifier> kVerifiers[] = {
      {F::kDcp, VerifyDcp},         {F::kDeepSpeed, VerifyDeepSpeed},
      {F::kMegatron, VerifyMegatron}, {F::kMegatronDist, VerifyMegatronDist},
      {F::kNemo, VerifyNemo},       {F::kHfTrainer, VerifyHfTrainer},
      {F::kOrbax, VerifyOrbax},     {F::kAccelerate, VerifyAccelerate}};
  for (const auto& [f, verifier] : kVerifiers) {
    if (f == format) return verifier;
  }
  return VerifyFiles;
}

void Checks::Saw(const Listing& l) {
  if (!c_.modified || l.newest > *c_.modified) c_.modified = l.newest;
}

bool Checks::stopped() const {
  return std::any_of(c_.checks.begin(), c_.checks.end(), [](const CheckpointCheck& c) {
    return c.result != CheckpointVerdict::kValid && c.result != CheckpointVerdict::kInconclusive;
  });
}

CheckpointVerdict Checks::Verdict() const {
  bool undecided = false;
  for (const CheckpointCheck& c : c_.checks) {
    if (c.result == CheckpointVerdict::kInconclusive) undecided = true;
    if (c.result != CheckpointVerdict::kValid && c.result != CheckpointVerdict::kInconclusive)
      return c.result;
  }
  return undecided || c_.checks.empty() ? CheckpointVerdict::kInconclusive
                                        : CheckpointVerdict::kValid;
}

std::string FewNames(const std::vector<std::string>& names, std::size_t shown) {
  std::string out;
  for (std::size_t k = 0; k < names.size() && k < shown; ++k)
    out += (k == 0 ? "" : ", ") + names[k];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

void CheckFileSet(const std::vector<const Entry*>& files, const VerifyContext& ctx,
                  Checks& checks) {
  std::vector<std::string> empty;
  std::uint64_t bytes = 0;
  for (const Entry* e : files) {
    bytes += e->size;
    if (e->kind == EntryKind::kFile && e->size == 0 && !EndsWith(e->name, ".distcp"))
      empty.push_back(Rel(*e, ctx));
  }
  if (!empty.empty()) {
    return checks.Add(CheckKind::kSizes,
                      Incomplete(FewNames(empty) + (empty.size() == 1 ? " is" : " are") +
                                 " empty (0 bytes): the save stopped right after opening "
                                 "(torch.load: 'EOFError: Ran out of input')"));
  }
  checks.Pass(CheckKind::kSizes, std::to_string(files.size()) +
                                     (files.size() == 1 ? " file, " : " files, ") +
                                     Thousands(bytes) + " bytes, none empty");
  Finding undecided;
  std::string single;
  for (const Entry* e : files) {
    Finding r = CheckOneFile(*e, ctx);
    if (r.rejects())
      return checks.Add(CheckKind::kFormat, {r.verdict, Rel(*e, ctx) + ": " + r.detail});
    if (r.verdict == CheckpointVerdict::kInconclusive && undecided.ok())
      undecided = {r.verdict, Rel(*e, ctx) + ": " + r.detail};
    single = r.detail;
  }
  if (!undecided.ok()) return checks.Add(CheckKind::kFormat, undecided);
  checks.Pass(CheckKind::kFormat,
              files.size() == 1 ? single : std::to_string(files.size()) + " files verified");
}

void CheckRanksAgree(const std::vector<std::pair<std::string, const Entry*>>& files, bool even,
                     Checks& checks) {
  if (auto f = CheckRankShapes(files, even)) checks.Add(CheckKind::kMetadata, *f);
}

std::optional<Listing> ListSub(const Entry& dir, const VerifyContext& ctx, Checks& checks,
                               CheckKind kind) {
  auto l = ListDir(dir.path, ctx.root);
  if (!l.ok()) {
    checks.Add(kind, Unreadable(Rel(dir, ctx), l.status()));
    return std::nullopt;
  }
  checks.Saw(*l);
  return std::move(*l);
}

void VerifySingleFile(const Entry& file, CheckpointFormat format, const VerifyContext& ctx,
                      Checks& checks) {
  if (file.kind == EntryKind::kLinkOut) {
    return checks.Add(
        CheckKind::kExistence,
        Inconclusive("a symbolic link out of the checkpoint directory; not followed"));
  }
  checks.Pass(CheckKind::kExistence, "file present, " + Thousands(file.size) + " bytes");
  CheckFileSet({&file}, ctx, checks);
  if (checks.stopped() || format != CheckpointFormat::kTorchSave || checks.step() < 0 ||
      checks.step_source() != StepSource::kName) {
    return;
  }
  if (auto inside = RecordedStep(file.path)) {
    if (*inside == checks.step()) {
      checks.Pass(CheckKind::kStep,
                  "the file records step " + std::to_string(*inside) + ", as its name says");
    } else {
      checks.Warn("the file records step " + std::to_string(*inside) + " but its name says " +
                  std::to_string(checks.step()));
    }
  }
}

CheckpointFormat ClassifyDir(std::string_view name, const Listing& dir) {
  using F = CheckpointFormat;
  if (name.find(".orbax-checkpoint-tmp") != std::string_view::npos ||
      StartsWith(name, "tmp-checkpoint-") || EndsWith(name, ".tmp")) {
    return F::kTemporary;
  }
  if (dir.FindFile("commit_success.txt") || dir.FindFile("_CHECKPOINT_METADATA")) return F::kOrbax;
  if (dir.FindFile("trainer_state.json")) return F::kHfTrainer;
  bool random_states = false, checkpoint_files = false, hf_files = false;
  for (const Entry& e : dir.entries) {
    // accelerate's own names (the Trainer writes optimizer.pt and scheduler.pt).
    random_states |= (StartsWith(e.name, "random_states_") && EndsWith(e.name, ".pkl")) ||
                     e.name == "optimizer.bin" || e.name == "scheduler.bin" ||
                     e.name == "sampler.bin";
    checkpoint_files |= IsCheckpointFile(e.name);
    hf_files |= IsHfFile(e.name);
  }
  if (random_states && !StartsWith(name, "checkpoint-")) return F::kAccelerate;
  // checkpoint-N without trainer_state.json: a Trainer save that stopped early, unless it
  // holds only files the Trainer never writes (a user's own checkpoint-N/model.pt).
  if (StartsWith(name, "checkpoint-") && (hf_files || !checkpoint_files)) return F::kHfTrainer;
  if (dir.FindDir("weights") && dir.FindDir("context")) return F::kNemo;
  if (dir.FindFile("metadata.json")) return F::kMegatronDist;
  bool rank_dirs = false, ds_files = false, dcp_files = false;
  for (const Entry& e : dir.entries) {
    rank_dirs |= e.kind == EntryKind::kDir && StartsWith(e.name, "mp_rank_");
    ds_files |= EndsWith(e.name, "_model_states.pt") || EndsWith(e.name, "optim_states.pt");
    dcp_files |= e.name == ".metadata" || e.name == ".metadata.tmp" || EndsWith(e.name, ".distcp");
  }
  if (rank_dirs) return F::kMegatron;
  if (ds_files) return F::kDeepSpeed;
  if (dcp_files) return StartsWith(name, "iter_") ? F::kMegatronDist : F::kDcp;
  return checkpoint_files ? F::kTorchDir : F::kUnknown;
}

}  // namespace denpex::engine::ckpt
