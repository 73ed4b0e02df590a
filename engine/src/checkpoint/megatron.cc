// Megatron-LM (checkpoints.md §3.2) and NeMo 2.0 (§3.3). The legacy format is one
// model_optim_rng.pt per (TP, PP) rank directory and does not reshard; the distributed
// format (torch_dist) is DCP plus metadata.json, which rank 0 writes last.
#include <map>
#include <set>

#include "checkpoint/byte_file.h"
#include "checkpoint/json.h"
#include "checkpoint/layouts.h"
#include "checkpoint/torch_file.h"

namespace denpex::engine::ckpt {
namespace {

struct RankDir {
  const Entry* entry = nullptr;
  int tp = -1;
  int pp = 0;  // 0 when the name has no PP part (PP == 1)
  bool has_pp = false;
};

// mp_rank_TT, mp_rank_TT_PPP, mp_rank_TT_PPP_EEE.
std::optional<RankDir> ParseRankDir(const Entry& e) {
  if (e.kind != EntryKind::kDir || !StartsWith(e.name, "mp_rank_")) return std::nullopt;
  std::vector<int> parts;
  std::string_view s = std::string_view(e.name).substr(8);
  while (!s.empty()) {
    std::size_t n = 0;
    while (n < s.size() && n < 7 && s[n] >= '0' && s[n] <= '9') ++n;
    if (n == 0) return std::nullopt;
    parts.push_back(std::stoi(std::string(s.substr(0, n))));
    s.remove_prefix(n);
    if (!s.empty() && s[0] != '_') return std::nullopt;
    if (!s.empty()) s.remove_prefix(1);
  }
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  return RankDir{&e, parts[0], parts.size() > 1 ? parts[1] : 0, parts.size() > 1};
}

struct Saved {
  std::optional<std::int64_t> tp, pp, iteration;
};

Saved ReadSaved(const Entry* e) {
  Saved s;
  auto obj = e != nullptr ? ReadTorchObject(e->path) : std::nullopt;
  if (!obj) return s;
  s.iteration = obj->GetInt(obj->root, "iteration");
  if (const PyValue* args = obj->Get(obj->root, "args")) {
    s.tp = obj->GetInt(*args, "tensor_model_parallel_size");
    s.pp = obj->GetInt(*args, "pipeline_model_parallel_size");
  }
  return s;
}

// The (TP, PP) grid against the saved and the given sizes.
void CheckGrid(const std::set<std::pair<int, int>>& grid, bool has_pp, const Saved& saved,
               const VerifyContext& ctx, Checks& checks) {
  int found_tp = 0, found_pp = 0;
  for (auto [t, p] : grid)
    found_tp = std::max(found_tp, t + 1), found_pp = std::max(found_pp, p + 1);
  const ParallelDims& dims = ctx.options.dims;
  const int tp = saved.tp ? static_cast<int>(*saved.tp) : dims.tp;
  const int pp = saved.pp ? static_cast<int>(*saved.pp) : (has_pp ? dims.pp : 1);
  if (tp <= 0 || pp <= 0) {
    if (static_cast<int>(grid.size()) != found_tp * found_pp) {
      return checks.Add(CheckKind::kShardCount,
                        Incomplete("the rank directories do not form a full TP x PP grid"));
    }
    if (ctx.tracker_step && *ctx.tracker_step == checks.step()) {
      return checks.Pass(CheckKind::kShardCount,
                         "TP/PP unknown; a full " + std::to_string(found_tp) + " x " +
                             std::to_string(found_pp) +
                             " grid, and the tracker (written "
                             "after every rank's save) names this iteration");
    }
    return checks.Add(CheckKind::kShardCount,
                      Inconclusive("TP/PP unknown (no args in the checkpoint; pass --tp/--pp): "
                                   "found a " +
                                   std::to_string(found_tp) + " x " + std::to_string(found_pp) +
                                   " grid and cannot tell "
                                   "whether it is complete"));
  }
  std::vector<std::string> missing;
  for (int t = 0; t < tp; ++t) {
    for (int p = 0; p < pp; ++p) {
      if (!grid.count({t, p}))
        missing.push_back("TP " + std::to_string(t) + " PP " + std::to_string(p));
    }
  }
  if (!missing.empty()) {
    return checks.Add(
        CheckKind::kShardCount,
        Incomplete("expected TP " + std::to_string(tp) + " x PP " + std::to_string(pp) +
                   " rank directories, missing " + FewNames(missing)));
  }
  if ((dims.tp > 0 && dims.tp != tp) || (dims.pp > 0 && has_pp && dims.pp != pp)) {
    return checks.Add(
        CheckKind::kShardCount,
        Incompatible("saved with TP " + std::to_string(tp) + " x PP " + std::to_string(pp) +
                     ", the job runs TP " + std::to_string(dims.tp) + " x PP " +
                     std::to_string(dims.pp) +
                     ": the legacy format does not reshard (convert it with tools/checkpoint/)"));
  }
  checks.Pass(CheckKind::kShardCount, "TP " + std::to_string(tp) + " x PP " + std::to_string(pp) +
                                          " rank directories present");
}

}  // namespace

void VerifyMegatron(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  std::vector<RankDir> ranks;
  for (const Entry& e : dir.entries) {
    if (auto r = ParseRankDir(e)) ranks.push_back(*r);
  }
  std::vector<Listing> subs;
  subs.reserve(ranks.size());
  std::vector<const Entry*> files;
  std::vector<std::string> missing;
  int with_distrib_optim = 0;
  const Entry* first = nullptr;
  for (const RankDir& r : ranks) {
    auto l = ListSub(*r.entry, ctx, checks, CheckKind::kExistence);
    if (!l) return;
    subs.push_back(std::move(*l));
    const Entry* model = subs.back().FindFile("model_optim_rng.pt");
    if (model == nullptr) missing.push_back(r.entry->name + "/model_optim_rng.pt");
    if (model != nullptr && r.tp == 0 && r.pp == 0) first = model;
    with_distrib_optim += subs.back().FindFile("distrib_optim.pt") != nullptr;
    for (const Entry& e : subs.back().entries) {
      if (EndsWith(e.name, ".pt")) files.push_back(&e);
    }
  }
  if (!missing.empty()) {
    return checks.Add(CheckKind::kExistence,
                      Incomplete(FewNames(missing) + " missing (Megatron: 'No such file or "
                                                     "directory: .../model_optim_rng.pt')"));
  }
  if (with_distrib_optim > 0 && with_distrib_optim != static_cast<int>(ranks.size())) {
    return checks.Add(CheckKind::kExistence,
                      Incomplete("distrib_optim.pt is in " + std::to_string(with_distrib_optim) +
                                 " of " + std::to_string(ranks.size()) + " rank directories"));
  }
  checks.Pass(CheckKind::kExistence,
              std::to_string(ranks.size()) + " rank directories with model_optim_rng.pt");
  std::set<std::pair<int, int>> grid;
  bool has_pp = false;
  for (const RankDir& r : ranks) grid.insert({r.tp, r.pp}), has_pp |= r.has_pp;
  const Saved saved = ReadSaved(first);
  CheckGrid(grid, has_pp, saved, ctx, checks);
  if (checks.stopped()) return;
  CheckFileSet(files, ctx, checks);
  if (checks.stopped()) return;
  std::vector<std::pair<std::string, const Entry*>> named;
  for (const Entry* e : files)
    named.push_back({e->path.parent_path().filename().string() + "/" + e->name, e});
  CheckRanksAgree(named, /*even=*/true, checks);  // tensor parallelism splits evenly
  if (checks.stopped() || !saved.iteration || checks.step() < 0) return;
  if (*saved.iteration == checks.step()) {
    checks.Pass(CheckKind::kStep,
                "iteration " + std::to_string(*saved.iteration) + " in model_optim_rng.pt agrees");
  } else {
    checks.Warn("model_optim_rng.pt records iteration " + std::to_string(*saved.iteration) +
                ", the name says " + std::to_string(checks.step()));
  }
}

void VerifyMegatronDist(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  const Entry* md = dir.FindFile("metadata.json");
  if (md == nullptr) {
    return checks.Add(CheckKind::kExistence,
                      Incomplete("no metadata.json: Megatron writes it last, after every "
                                 "shard (CheckpointingException: ... is not a distributed "
                                 "checkpoint)"));
  }
  auto f = ByteFile::Open(md->path);
  if (!f.ok()) return checks.Add(CheckKind::kExistence, Unreadable("metadata.json", f.status()));
  auto text = f->Read(0, std::min<std::uint64_t>(f->size(), 1 << 20));
  std::string name;
  const Status st = !text.ok() ? text.status()
                               : ReadJsonObject(*text, [&](const std::string& key, JsonReader& r) {
                                   if (key == "sharded_backend" && r.Peek() == '"') {
                                     name = r.String().value_or("");
                                   } else {
                                     r.Skip();
                                   }
                                 });
  if (!st.ok())
    return checks.Add(CheckKind::kExistence, Corrupt("metadata.json is not a JSON object"));
  if (name != "torch_dist") {
    return checks.Add(CheckKind::kExistence,
                      Inconclusive("metadata.json names the sharded backend '" + name +
                                   "'; only torch_dist (DCP) is verified"));
  }
  checks.Pass(CheckKind::kExistence, "metadata.json present (torch_dist)");
  VerifyDcp(dir, ctx, checks);
  if (checks.stopped()) return;
  if (const Entry* common = dir.FindFile("common.pt")) CheckFileSet({common}, ctx, checks);
  if (dir.FindFile("integrity.json") != nullptr && ctx.options.deep) {
    checks.Warn("integrity.json is present; its SHA-256 digests are not checked by this verifier");
  }
}

void VerifyNemo(const Listing& dir, const VerifyContext& ctx, Checks& checks) {
  auto weights = ListSub(*dir.FindDir("weights"), ctx, checks, CheckKind::kExistence);
  if (!weights) return;
  VerifyMegatronDist(*weights, ctx, checks);
  if (checks.stopped()) return;
  auto context = ListSub(*dir.FindDir("context"), ctx, checks, CheckKind::kMetadata);
  if (!context) return;
  if (const Entry* io = context->FindFile("io.json")) {
    CheckFileSet({io}, ctx, checks);
  } else {
    checks.Warn(
        "context/io.json is missing: NeMo cannot rebuild the model from this checkpoint alone");
  }
}

}  // namespace denpex::engine::ckpt
