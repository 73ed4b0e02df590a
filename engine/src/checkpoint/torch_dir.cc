// Directories in no framework's layout: step folders of torch.save files (step_200/model.pt,
// checkpoint-7/optimizer.pt), a flat model.pt beside optimizer.pt, best/, and any folder the
// verifier does not recognise. Nothing marks such a save complete, so the evidence is every
// file it can read (zip end records and storages, safetensors headers, pickles, JSON, the
// files a sharded index names) and the file set of the previous step of the same layout; what
// it has no reader for is named, and when that may hold weights the candidate is undecided.
// accelerate's save_state folders are verified the same way, after their own expectations.
#include <set>

#include "checkpoint/byte_file.h"
#include "checkpoint/candidates.h"
#include "checkpoint/consistency.h"
#include "checkpoint/layouts.h"
#include "checkpoint/torch_file.h"
#include "checkpoint/zip.h"

namespace denpex::engine::ckpt {
namespace {

constexpr int kMaxDepth = 4;
constexpr std::size_t kMaxFiles = 100'000;
// A file with no reader this large may hold weights: the candidate cannot be judged whole.
constexpr std::uint64_t kWeightsLike = 1ull << 20;

struct Walk {
  std::vector<Entry> readable;  // a reader exists for it
  std::vector<Entry> unread;    // no reader
  std::set<std::filesystem::path> seen;  // every file's path, for the names indexes give
  std::vector<std::string> temporary;
  std::vector<std::pair<Listing, CheckpointFormat>> nested;  // known layouts below the top
  std::size_t count = 0;
  bool capped = false;
};

std::string Rel(const std::filesystem::path& p, const VerifyContext& ctx) {
  return p.lexically_relative(ctx.root).generic_string();
}

bool IsTemporary(std::string_view name) {
  return EndsWith(name, ".tmp") || EndsWith(name, ".partial") || EndsWith(name, ".incomplete");
}

// Whether a reader exists: by an unambiguous extension, else by the first bytes (a
// torch.save zip holds <folder>/data.pkl; the legacy format starts with its magic number).
// .bin and .tar name many other formats, so they are sniffed too; empty ones count (the
// size check reports them).
bool Readable(const Entry& e) {
  for (std::string_view ext : {".pt", ".pth", ".ckpt", ".safetensors", ".json", ".pkl", ".pickle", ".nemo"}) {
    if (EndsWith(e.name, ext)) return true;
  }
  if (e.size == 0) return IsCheckpointFile(e.name);
  auto f = ByteFile::Open(e.path);
  if (!f.ok() || f->size() < 22) return false;
  auto head = f->Read(0, 4);
  if (!head.ok()) return false;
  if (*head == std::string_view("\x80\x02\x8a\x0a", 4)) return true;
  if (*head != std::string_view("PK\x03\x04", 4)) return false;
  const ZipRead z = ReadZip(*f, f->size(), 0);
  if (!z.finding.ok()) return true;  // a damaged zip: let the torch.save reader say how
  for (const ZipEntry& r : z.archive.entries) {
    if (EndsWith(r.name, "/data.pkl")) return true;
  }
  return false;
}

void WalkDir(const Listing& dir, int depth, const VerifyContext& ctx, Checks& checks, Walk& w) {
  for (const Entry& e : dir.entries) {
    if (++w.count > kMaxFiles) {
      w.capped = true;
      return;
    }
    if (e.name == "latest" || e.name == "last") continue;  // a pointer, verified as one at the top
    if (IsTemporary(e.name)) w.temporary.push_back(Rel(e.path, ctx));
    if (e.kind == EntryKind::kDir) {
      if (depth >= kMaxDepth) {
        w.capped = true;
        continue;
      }
      auto sub = ListSub(e, ctx, checks, CheckKind::kExistence);
      if (!sub) continue;
      const CheckpointFormat f = ClassifyDir(e.name, *sub);
      if (f == CheckpointFormat::kUnknown || f == CheckpointFormat::kTorchDir ||
          f == CheckpointFormat::kTemporary) {
        WalkDir(*sub, depth + 1, ctx, checks, w);
      } else {
        w.nested.emplace_back(std::move(*sub), f);
      }
    } else if (e.kind == EntryKind::kFile || e.kind == EntryKind::kLinkOut) {
      if (IsTemporary(e.name)) continue;
      w.seen.insert(e.path.lexically_normal());
      (e.kind == EntryKind::kFile && !Readable(e) ? w.unread : w.readable).push_back(e);
    }
  }
}

// A top-level name with the candidate's step written as '#' (a whole run of digits only), so
// model_200.pt in step 200 and model_100.pt in step 100 compare equal.
std::string Normalized(std::string_view name, std::int64_t step) {
  if (step < 0) return std::string(name);
  const std::string digits = std::to_string(step);
  const auto is_digit = [&](std::size_t k) { return k < name.size() && name[k] >= '0' && name[k] <= '9'; };
  std::string out;
  for (std::size_t at = 0; at < name.size();) {
    const bool run_starts = at == 0 || !is_digit(at - 1);
    if (run_starts && name.substr(at, digits.size()) == digits && !is_digit(at + digits.size())) {
      out += '#';
      at += digits.size();
    } else {
      out += name[at++];
    }
  }
  return out;
}

// A step's top-level names, as written and with its step as '#'. A name matches another
// step's in either form: model_#.pt across steps, and rank files (random_states_3.pkl) whose
// numbers are ranks, even where a rank equals a step.
struct NameSet {
  std::set<std::string> raw, normalized;
  bool Holds(const std::string& name, const std::string& norm) const {
    return raw.count(name) > 0 || normalized.count(norm) > 0;
  }
};

// What the previous step of the same layout holds and this one lacks.
std::vector<std::string> MissingAgainstPrevious(const Listing& dir, const VerifyContext& ctx,
                                                std::int64_t step) {
  NameSet mine, theirs;
  for (const Entry& e : dir.entries) {
    mine.raw.insert(e.name);
    mine.normalized.insert(Normalized(e.name, step));
  }
  for (const Entry& e : ctx.previous->entries) {
    if (IsTemporary(e.name)) continue;
    theirs.raw.insert(e.name);
    theirs.normalized.insert(Normalized(e.name, ctx.previous_step));
  }
  // Only a strict subset says a save stopped early; a different naming says nothing.
  for (const Entry& e : dir.entries) {
    if (!theirs.Holds(e.name, Normalized(e.name, step))) return {};
  }
  std::vector<std::string> missing;
  for (const Entry& e : ctx.previous->entries) {
    if (IsTemporary(e.name)) continue;
    const std::string norm = Normalized(e.name, ctx.previous_step);
    if (!mine.Holds(e.name, norm)) missing.push_back(norm);
  }
  return missing;
}

std::string Counted(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::vector<std::string> Names(const std::vector<Entry>& entries, const VerifyContext& ctx) {
  std::vector<std::string> out;
  for (const Entry& e : entries) out.push_back(Rel(e.path, ctx));
  return out;
}

// The shard check: the files each sharded index names, and the previous step's file set.
void CheckShards(const Listing& dir, const Walk& w, const VerifyContext& ctx, Checks& checks) {
  std::vector<std::string> missing, indexes;
  for (const Entry& e : w.readable) {
    if (!EndsWith(e.name, ".index.json")) continue;
    indexes.push_back(e.name);
    auto shards = IndexShards(e);
    if (!shards) {
      missing.push_back("a readable " + Rel(e.path, ctx));
      continue;
    }
    for (const std::string& s : *shards) {  // looked up among the files listed, never opened
      if (w.seen.count((e.path.parent_path() / s).lexically_normal()) == 0)
        missing.push_back(s + " (named by " + e.name + ")");
    }
  }
  if (!missing.empty())
    return checks.Add(CheckKind::kShardCount, Incomplete("missing " + FewNames(missing, 4)));
  std::string detail;
  if (!indexes.empty()) detail = "every shard " + FewNames(indexes) + " names is present";
  if (ctx.previous != nullptr) {
    const auto lost = MissingAgainstPrevious(dir, ctx, checks.step());
    if (!lost.empty()) {
      return checks.Add(CheckKind::kShardCount,
                        Incomplete(ctx.previous_path + " holds " + FewNames(lost, 4) +
                                   " and this step does not: its save stopped before writing " +
                                   (lost.size() == 1 ? "it" : "them")));
    }
    detail += std::string(detail.empty() ? "" : "; ") + "every file " + ctx.previous_path +
              " holds is here too";
  }
  if (!detail.empty()) checks.Pass(CheckKind::kShardCount, detail);
}

// The step a torch.save file at the top records, against the name.
void CheckRecordedStep(const Walk& w, const Listing& dir, Checks& checks) {
  if (checks.step() < 0 || checks.step_source() != StepSource::kName) return;
  for (const Entry& e : w.readable) {
    if (e.path.parent_path() != dir.dir) continue;
    const auto inside = RecordedStep(e.path);
    if (!inside) continue;
    if (*inside != checks.step()) {
      return checks.Warn(e.name + " records step " + std::to_string(*inside) +
                         " but the name says " + std::to_string(checks.step()));
    }
    return checks.Pass(CheckKind::kStep,
                       e.name + " records step " + std::to_string(*inside) + ", as the name says");
  }
}

}  // namespace

void VerifyFiles(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  checks.Saw(dir);
  if (dir.entries.empty()) {
    return checks.Add(CheckKind::kExistence,
                      Incomplete("an empty directory: the save created it and wrote nothing"));
  }
  Walk w;
  WalkDir(dir, 0, ctx, checks, w);
  if (checks.stopped()) return;
  if (!w.temporary.empty()) {
    return checks.Add(CheckKind::kExistence,
                      Incomplete(FewNames(w.temporary) + ": left by a save that did not finish"));
  }
  std::string found = Counted(w.readable.size(), "file a reader exists for",
                              "files a reader exists for");
  if (!w.nested.empty()) found += ", " + Counted(w.nested.size(), "nested layout", "nested layouts");
  if (!w.unread.empty()) found += ", " + Counted(w.unread.size(), "file", "files") + " not judged";
  if (w.capped) found += " (more than " + Thousands(kMaxFiles) + " entries or deeper than 4: the rest not read)";
  if (w.readable.empty() && w.nested.empty()) {
    return checks.Add(CheckKind::kExistence,
                      Inconclusive("no file this verifier can read (" +
                                   FewNames(Names(w.unread, ctx), 4) + "): not judged"));
  }
  checks.Pass(CheckKind::kExistence, found);
  CheckShards(dir, w, ctx, checks);
  if (checks.stopped()) return;
  if (!w.readable.empty()) {
    std::vector<const Entry*> files;
    for (const Entry& e : w.readable) files.push_back(&e);
    CheckFileSet(files, ctx, checks);
    if (checks.stopped()) return;
    std::vector<std::pair<std::string, const Entry*>> named;
    for (const Entry& e : w.readable)
      named.push_back({e.path.lexically_relative(dir.dir).generic_string(), &e});
    CheckRanksAgree(named, /*even=*/false, checks);  // FSDP and DTensor shards may be uneven
    if (checks.stopped()) return;
    if (ctx.previous != nullptr) {
      for (std::string& change : ChangesSincePrevious(dir, *ctx.previous, ctx.previous_path))
        checks.Warn(std::move(change));
    }
  }
  VerifyContext inner = ctx;  // a nested layout has no previous step of its own here
  inner.previous = nullptr;
  for (const auto& [listing, format] : w.nested) {
    if (checks.stopped()) return;
    VerifierFor(format)(listing, inner, checks);
  }
  if (checks.stopped()) return;
  std::vector<std::string> big, small;
  for (const Entry& e : w.unread) (e.size >= kWeightsLike ? big : small).push_back(Rel(e.path, ctx));
  if (!big.empty()) {
    checks.Add(CheckKind::kFormat,
               Inconclusive(FewNames(big) + (big.size() == 1 ? " is" : " are") +
                            " large enough to hold weights and in no format this verifier "
                            "reads: not judged"));
  }
  if (!small.empty()) checks.Warn("not judged (no reader): " + FewNames(small, 5));
  CheckRecordedStep(w, dir, checks);
}

void VerifyAccelerate(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  bool weights = false;
  for (const Entry& e : dir.entries) {
    weights |= (StartsWith(e.name, "model") && EndsWith(e.name, ".safetensors")) ||
               (StartsWith(e.name, "pytorch_model") &&
                (EndsWith(e.name, ".bin") || e.kind == EntryKind::kDir));
  }
  std::vector<std::string> missing;
  if (!weights) missing.push_back("model weights (model.safetensors or pytorch_model.bin)");
  if (dir.FindFile("random_states_0.pkl") == nullptr)
    missing.push_back("random_states_0.pkl (the main process writes it after the model, "
                      "optimizer and scheduler)");
  if (!missing.empty())
    return checks.Add(CheckKind::kExistence, Incomplete("missing " + FewNames(missing)));
  std::vector<std::string> rng;
  for (int r = 1; r < ctx.options.world_size; ++r) {
    if (dir.FindFile("random_states_" + std::to_string(r) + ".pkl") == nullptr)
      rng.push_back(std::to_string(r));
  }
  if (!rng.empty()) {
    checks.Warn("no random_states for process " + FewNames(rng) +
                " (accelerate resumes, but not reproducibly)");
  }
  VerifyFiles(dir, ctx, checks);
}

}  // namespace denpex::engine::ckpt
