// The per-layout verifiers. Each runs the ordered checks of checkpoints.md §0.3 on one
// candidate (existence, shard count, sizes, format, metadata, step) and records them; the
// first definitive failure ends the candidate. One file per layout family.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/deep.h"
#include "checkpoint/listing.h"
#include "checkpoint/reader_finding.h"
#include "denpex/engine/checkpoint.h"

namespace denpex::engine::ckpt {

struct VerifyContext {
  const CheckpointOptions& options;
  std::filesystem::path root;                // canonical checkpoint directory
  std::optional<std::int64_t> tracker_step;  // Megatron latest_checkpointed_iteration.txt
  // The next older candidate of the same layout, whose file set this one should match.
  const Listing* previous = nullptr;
  std::string previous_path;
  std::int64_t previous_step = -1;
  // Set with options.deep: reads every record and tensor (one buffer for the whole run).
  DeepReader* deep = nullptr;
};

// Records checks on one candidate.
class Checks {
 public:
  explicit Checks(CheckpointCandidate& c) : c_(c) {}

  void Add(CheckKind kind, const Finding& f) { c_.checks.push_back({kind, f.verdict, f.detail}); }
  void Pass(CheckKind kind, std::string detail) { Add(kind, Valid(std::move(detail))); }
  void Warn(std::string warning) { c_.warnings.push_back(std::move(warning)); }
  // The candidate's files include this listing: its mtimes count for suspicion.
  void Saw(const Listing& l);
  // A definitive failure has been recorded: stop checking.
  bool stopped() const;
  // The first definitive failure's verdict; else INCONCLUSIVE if a check was undecided.
  CheckpointVerdict Verdict() const;
  std::int64_t step() const { return c_.step; }
  StepSource step_source() const { return c_.step_source; }

 private:
  CheckpointCandidate& c_;
};

// kSizes then kFormat over a set of files: zero-byte files are INCOMPLETE, then each file
// is read by the reader its name implies (.safetensors, .json, else torch.save).
void CheckFileSet(const std::vector<const Entry*>& files, const VerifyContext& ctx, Checks& checks);

// kMetadata: rank files of the step against their peers (consistency.h, CheckRankShapes).
void CheckRanksAgree(const std::vector<std::pair<std::string, const Entry*>>& files, bool even,
                     Checks& checks);

// A listing one level down, or the failure recorded as `kind` when it cannot be read.
std::optional<Listing> ListSub(const Entry& dir, const VerifyContext& ctx, Checks& checks,
                               CheckKind kind);

// "a, b, c and 4 more": a few names for a message.
std::string FewNames(const std::vector<std::string>& names, std::size_t shown = 3);

void VerifySingleFile(const Entry& file, CheckpointFormat format, const VerifyContext& ctx,
                      Checks& checks);
void VerifyDcp(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyDeepSpeed(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyMegatron(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyMegatronDist(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyNemo(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyHfTrainer(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyOrbax(const Listing& dir, const VerifyContext& ctx, Checks& checks);
// Any directory: every file a reader exists for, nested known layouts, the previous step's
// file set; what has no reader is named (torch_dir.cc).
void VerifyFiles(const Listing& dir, const VerifyContext& ctx, Checks& checks);
void VerifyAccelerate(const Listing& dir, const VerifyContext& ctx, Checks& checks);

using LayoutVerifier = void (*)(const Listing&, const VerifyContext&, Checks&);
// The verifier of a directory layout (VerifyFiles for kUnknown and kTorchDir).
LayoutVerifier VerifierFor(CheckpointFormat format);

// Shard files named by a safetensors / bin index's weight_map; nullopt when unreadable.
std::optional<std::set<std::string>> IndexShards(const Entry& index);
// Recognises a checkpoint directory's layout from its name and entries.
CheckpointFormat ClassifyDir(std::string_view name, const Listing& dir);

}  // namespace denpex::engine::ckpt
