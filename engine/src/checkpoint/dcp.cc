// PyTorch Distributed Checkpoint (checkpoints.md §2.4): `.metadata` is written last by the
// coordinator, after every rank's `__R_T.distcp`; each item it lists is a byte range of a
// .distcp file holding one complete torch.save archive.
#include <map>
#include <set>

#include "checkpoint/byte_file.h"
#include "checkpoint/layouts.h"
#include "checkpoint/pickle.h"
#include "checkpoint/torch_file.h"
#include "checkpoint/zip.h"

namespace denpex::engine::ckpt {
namespace {

constexpr std::uint64_t kMaxMetadata = 256ull << 20;
// .distcp files may be written by other nodes whose clocks run a little ahead.
constexpr TimeNs kClockSlack = 60 * kNsPerSec;

// R of `[hint]__R_T.distcp`; -1 otherwise.
int DistcpRank(std::string_view name) {
  if (!EndsWith(name, ".distcp")) return -1;
  name.remove_suffix(7);
  const auto t = name.find_last_not_of("0123456789");
  if (t == std::string_view::npos || t + 1 == name.size() || name[t] != '_') return -1;
  name = name.substr(0, t);
  const auto r = name.find_last_not_of("0123456789");
  if (r == std::string_view::npos || r + 1 == name.size() || r < 1 || name.substr(r - 1, 2) != "__")
    return -1;
  const auto digits = name.substr(r + 1);
  if (digits.size() > 7) return -1;
  return std::stoi(std::string(digits));
}

// One item of `.metadata`: bytes [offset, offset + length) of `file`.
struct Slice {
  std::string file;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool transformed = false;  // transform_descriptors set (PyTorch >= 2.8): not a plain zip
  std::string fqn;           // the tensor's name (its MetadataIndex key), when known
};

// storage_data maps MetadataIndex(fqn, ...) to _StorageInfo(...): the fqn of each
// _StorageInfo, by the container index of its state dict.
std::map<std::uint32_t, std::string> FqnsByStorageInfo(const Pickle& p) {
  std::map<std::uint32_t, std::string> out;
  for (std::uint32_t d : p.dicts) {
    const auto& items = p.containers[d].items;
    for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
      const PyValue& key = items[k];
      const PyValue& value = items[k + 1];
      if (key.kind != PyValue::Kind::kObject || value.kind != PyValue::Kind::kObject) continue;
      const PyValue* fqn = p.Get(key, "fqn");
      const PyValue& state = p.containers[value.ref].state;
      if (fqn != nullptr && fqn->kind == PyValue::Kind::kStr && state.kind == PyValue::Kind::kDict)
        out[state.ref] = std::string(p.Str(*fqn));
    }
  }
  return out;
}

struct Metadata {
  Finding finding;
  std::vector<Slice> slices;
};

// The `_StorageInfo` records of `.metadata` (a pickle; some versions torch.save it).
Metadata ReadMetadata(const Entry& meta) {
  auto f = ByteFile::Open(meta.path);
  if (!f.ok()) return {Unreadable(".metadata", f.status()), {}};
  if (f->size() > kMaxMetadata)
    return {Inconclusive(".metadata is larger than this verifier reads"), {}};
  auto bytes = f->Read(0, f->size());
  if (!bytes.ok()) return {Unreadable(".metadata", bytes.status()), {}};
  std::optional<Pickle> p =
      bytes->compare(0, 4, "PK\x03\x04") == 0 ? ReadTorchObject(*f) : RunPickle(*bytes);
  if (!p) return {Corrupt(".metadata is a zip archive without a readable data.pkl"), {}};
  if (p->error == PickleError::kUnsupported)
    return {Inconclusive(".metadata: " + p->error_detail), {}};
  if (!p->ok()) return {Corrupt(".metadata is not a complete pickle: " + p->error_detail), {}};
  Metadata out;
  const std::map<std::uint32_t, std::string> fqns = FqnsByStorageInfo(*p);
  for (std::uint32_t d : p->dicts) {
    const PyValue dict{PyValue::Kind::kDict, 0, d};
    const PyValue* path = p->Get(dict, "relative_path");
    auto offset = p->GetInt(dict, "offset");
    auto length = p->GetInt(dict, "length");
    if (path == nullptr || path->kind != PyValue::Kind::kStr || !offset || !length) continue;
    if (*offset < 0 || *length < 0)
      return {Corrupt(".metadata lists a negative offset or length"), {}};
    const PyValue* tf = p->Get(dict, "transform_descriptors");
    const bool transformed =
        tf != nullptr && tf->kind != PyValue::Kind::kNone && !p->Items(*tf).empty();
    auto fqn = fqns.find(d);
    out.slices.push_back({std::string(p->Str(*path)), static_cast<std::uint64_t>(*offset),
                          static_cast<std::uint64_t>(*length), transformed,
                          fqn == fqns.end() ? std::string() : fqn->second});
  }
  out.finding = Valid(".metadata lists " + std::to_string(out.slices.size()) + " items");
  return out;
}

bool CheckExistence(const Listing& dir, int shards, Checks& checks) {
  const Entry* meta = dir.FindFile(".metadata");
  if (meta == nullptr && dir.Find(".metadata.tmp") != nullptr) {
    checks.Add(
        CheckKind::kExistence,
        Incomplete(".metadata.tmp without .metadata: the coordinator died while finishing the save "
                   "(it renames .metadata.tmp to .metadata last)"));
  } else if (meta == nullptr) {
    checks.Add(
        CheckKind::kExistence,
        Incomplete(
            "no .metadata beside " + std::to_string(shards) +
            " .distcp files: the coordinator "
            "writes it last, after every rank's data (torch: FileNotFoundError ... .metadata)"));
  } else if (meta->size == 0) {
    checks.Add(CheckKind::kExistence, Incomplete(".metadata is empty (0 bytes)"));
  } else {
    checks.Pass(CheckKind::kExistence, ".metadata present (" + Thousands(meta->size) + " bytes), " +
                                           std::to_string(shards) + " .distcp files");
    return true;
  }
  return false;
}

// Every file `.metadata` references exists; rank coverage against the world size.
void CheckShardSet(const Listing& dir, const Metadata& md, const std::set<int>& ranks,
                   const VerifyContext& ctx, Checks& checks) {
  std::vector<std::string> missing;
  std::set<std::string> referenced;
  for (const Slice& s : md.slices) {
    if (referenced.insert(s.file).second && dir.FindFile(s.file) == nullptr)
      missing.push_back(s.file);
  }
  if (!missing.empty()) {
    return checks.Add(CheckKind::kShardCount,
                      Incomplete(".metadata references " + FewNames(missing) +
                                 ", missing: a rank did not write its shard"));
  }
  const int ws = ctx.options.world_size;
  const int top = ranks.empty() ? -1 : *ranks.rbegin();
  if (static_cast<int>(ranks.size()) != top + 1) {
    checks.Warn("the .distcp ranks are not contiguous (0.." + std::to_string(top) +
                " with gaps); .metadata does "
                "not need the missing ones");
  } else if (ws > 0 && top + 1 != ws) {
    checks.Warn(std::to_string(top + 1) + " ranks wrote .distcp files, the job has " +
                std::to_string(ws) + " (DCP reshards on load)");
  }
  checks.Pass(CheckKind::kShardCount, std::to_string(referenced.size()) +
                                          " files referenced by .metadata, all "
                                          "present; ranks 0.." +
                                          std::to_string(top));
}

// Slices against file sizes, then each slice as a complete torch.save archive.
void CheckSlices(const Listing& dir, const Metadata& md, const VerifyContext& ctx, Checks& checks) {
  std::map<std::string, ByteFile> open;
  for (const Slice& s : md.slices) {
    const Entry* e = dir.FindFile(s.file);
    if (s.offset > e->size || s.length > e->size - s.offset) {
      return checks.Add(
          CheckKind::kSizes,
          Corrupt(".metadata places an item at bytes " + Thousands(s.offset) + "+" +
                  Thousands(s.length) + " of " + s.file + ", which has " + Thousands(e->size) +
                  ": a stale .metadata after an "
                  "interrupted re-save, or a damaged shard"));
    }
  }
  checks.Pass(CheckKind::kSizes, std::to_string(md.slices.size()) +
                                     " items lie inside their files (zero-byte "
                                     ".distcp files are legitimate: deduplicated ranks)");
  int verified = 0, skipped = 0;
  for (const Slice& s : md.slices) {
    if (s.transformed || s.length == 0) {
      ++skipped;
      continue;
    }
    auto it = open.find(s.file);
    if (it == open.end()) {
      auto f = ByteFile::Open(dir.FindFile(s.file)->path);
      if (!f.ok()) return checks.Add(CheckKind::kFormat, Unreadable(s.file, f.status()));
      it = open.emplace(s.file, std::move(*f)).first;
    }
    ZipRead z = ReadZip(it->second, s.offset + s.length, s.offset);
    Finding r = z.finding.ok() ? CheckTorchArchive(it->second, z.archive) : z.finding;
    if (r.ok() && ctx.deep != nullptr) r = ctx.deep->TorchArchive(it->second, z.archive, s.fqn);
    if (!r.ok()) {
      return checks.Add(
          CheckKind::kFormat,
          {r.verdict == CheckpointVerdict::kIncomplete ? CheckpointVerdict::kCorrupt : r.verdict,
           s.file + " bytes " + Thousands(s.offset) + "+" + Thousands(s.length) + ": " + r.detail});
    }
    ++verified;
  }
  std::string detail = std::to_string(verified) + " items are complete torch.save archives";
  if (skipped > 0)
    detail += " (" + std::to_string(skipped) + " empty or transformed items not read)";
  checks.Pass(CheckKind::kFormat, detail);
}

}  // namespace

void VerifyDcp(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  std::set<int> ranks;
  int shards = 0;
  for (const Entry& e : dir.entries) {
    if (int r = DistcpRank(e.name); r >= 0) {
      ranks.insert(r);
      ++shards;
    }
  }
  if (!CheckExistence(dir, shards, checks)) return;
  const Entry* meta = dir.FindFile(".metadata");
  const Metadata md = ReadMetadata(*meta);
  if (!md.finding.ok()) return checks.Add(CheckKind::kMetadata, md.finding);
  if (md.slices.empty() && shards > 0) {
    return checks.Add(CheckKind::kMetadata,
                      Inconclusive(".metadata lists no storage items this verifier "
                                   "recognises (an unknown DCP version?)"));
  }
  CheckShardSet(dir, md, ranks, ctx, checks);
  if (checks.stopped()) return;
  CheckSlices(dir, md, ctx, checks);
  if (checks.stopped()) return;
  std::vector<std::string> newer;
  for (const Entry& e : dir.entries) {
    if (DistcpRank(e.name) >= 0 && e.mtime > meta->mtime + kClockSlack) newer.push_back(e.name);
  }
  if (!newer.empty()) {
    return checks.Add(CheckKind::kMetadata,
                      Corrupt(FewNames(newer) + " changed after .metadata was written: a "
                                                "re-save into this directory did not finish"));
  }
  checks.Pass(CheckKind::kMetadata, md.finding.detail + "; no .distcp file is newer than it");
}

}  // namespace denpex::engine::ckpt
