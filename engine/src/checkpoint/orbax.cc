// Orbax (checkpoints.md §3.6): a step directory is committed by renaming it from
// `<step>.orbax-checkpoint-tmp*` and/or by `commit_success.txt`. Array contents (OCDBT,
// zarr) are opaque without TensorStore, so only the structure around them is verified.
#include <set>

#include "checkpoint/byte_file.h"
#include "checkpoint/json.h"
#include "checkpoint/layouts.h"

namespace denpex::engine::ckpt {
namespace {

// commit_timestamp_nsecs from _CHECKPOINT_METADATA, when it parses and is set.
bool HasCommitTimestamp(const Entry* meta) {
  if (meta == nullptr) return false;
  auto f = ByteFile::Open(meta->path);
  if (!f.ok() || f->size() > (16u << 20)) return false;
  auto text = f->Read(0, f->size());
  if (!text.ok()) return false;
  bool committed = false;
  const Status st = ReadJsonObject(*text, [&](const std::string& key, JsonReader& r) {
    if (key != "commit_timestamp_nsecs") return (void)r.Skip();
    const char first = r.Peek();
    r.Skip();  // any positive number: nanoseconds since the epoch pass 2^53
    committed = first >= '1' && first <= '9';
  });
  return st.ok() && committed;
}

}  // namespace

void VerifyOrbax(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  const Entry* meta = dir.FindFile("_CHECKPOINT_METADATA");
  if (dir.FindFile("commit_success.txt") != nullptr) {
    checks.Pass(CheckKind::kExistence, "commit_success.txt present");
  } else if (HasCommitTimestamp(meta)) {
    checks.Pass(CheckKind::kExistence, "finalized: commit_timestamp_nsecs in _CHECKPOINT_METADATA");
    checks.Warn(
        "no commit_success.txt: fine for an older Orbax that renames to commit, not in commit-file "
        "mode");
  } else {
    return checks.Add(CheckKind::kExistence,
                      Incomplete("no commit_success.txt and no commit_timestamp_nsecs: the "
                                 "save was never committed (Orbax: 'Found incomplete "
                                 "checkpoint')"));
  }
  std::vector<Listing> items;
  for (const Entry& e : dir.entries) {
    if (e.kind != EntryKind::kDir) continue;
    auto l = ListSub(e, ctx, checks, CheckKind::kShardCount);
    if (!l) return;
    items.push_back(std::move(*l));
  }
  std::vector<const Entry*> json;
  if (meta != nullptr) json.push_back(meta);
  for (const Listing& item : items) {
    std::set<int> processes;
    for (const Entry& e : item.entries) {
      if (StartsWith(e.name, "ocdbt.process_")) processes.insert(std::atoi(e.name.c_str() + 14));
    }
    if (!processes.empty() && *processes.rbegin() + 1 != static_cast<int>(processes.size())) {
      return checks.Add(CheckKind::kShardCount,
                        Incomplete(item.dir.filename().string() +
                                   ": the ocdbt.process_* "
                                   "directories have gaps: a process did not write"));
    }
    if (const Entry* m = item.FindFile("_METADATA")) json.push_back(m);
  }
  checks.Pass(CheckKind::kShardCount, std::to_string(items.size()) + " items");
  checks.Warn("array contents (OCDBT/zarr) are not verified: they need TensorStore");
  CheckFileSet(json, ctx, checks);
}

}  // namespace denpex::engine::ckpt
