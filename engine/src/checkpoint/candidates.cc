#include "checkpoint/candidates.h"

#include <algorithm>

#include "checkpoint/byte_file.h"
#include "checkpoint/layouts.h"
#include "checkpoint/torch_file.h"

namespace denpex::engine::ckpt {
namespace {

constexpr std::string_view kTrackerFile = "latest_checkpointed_iteration.txt";

std::optional<std::int64_t> Digits(std::string_view s, std::size_t* used = nullptr) {
  std::size_t n = 0;
  while (n < s.size() && n < 18 && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0) return std::nullopt;
  if (used != nullptr) *used = n;
  return std::stoll(std::string(s.substr(0, n)));
}

bool IsTemporaryFile(std::string_view name) {
  return EndsWith(name, ".tmp") || EndsWith(name, ".partial") || EndsWith(name, ".incomplete");
}

// Entries that point at a checkpoint rather than hold one: a file or a symbolic link named
// latest, last or latest_checkpointed_iteration.txt (a real folder named last/ is a checkpoint).
bool IsPointer(const Entry& e) {
  return (e.name == "latest" || e.name == "last" || e.name == kTrackerFile) &&
         (e.kind != EntryKind::kDir || e.link);
}

// NeMo's marker: the checkpoint path without ".ckpt" and without "-EMA", plus "-unfinished".
std::string UnfinishedMarker(std::string_view name) {
  if (EndsWith(name, ".ckpt")) name.remove_suffix(5);
  if (EndsWith(name, "-EMA")) name.remove_suffix(4);
  return std::string(name) + "-unfinished";
}

// A directory whose name holds no step is a candidate only when it looks like one: a known
// layout, or checkpoint files at its top level (best/model.pt); logs/ and the like are not.
bool LooksLikeCheckpointDir(const Candidate& c) {
  if (c.report.format != CheckpointFormat::kUnknown) return true;
  return std::any_of(c.listing->entries.begin(), c.listing->entries.end(),
                     [](const Entry& e) { return IsCheckpointFile(e.name); });
}

std::optional<Candidate> MakeCandidate(const Entry& e, const Listing& root) {
  if (EndsWith(e.name, "-unfinished") || IsPointer(e)) return std::nullopt;
  const auto step = StepFromName(e.name);
  Candidate c;
  c.entry = e;
  c.report.path = e.name;
  c.report.step = step.value_or(-1);
  c.report.step_source = step ? StepSource::kName : StepSource::kNone;
  c.report.modified = e.mtime;
  if (e.kind == EntryKind::kDir) {
    auto l = ListDir(e.path, root.dir);
    if (l.ok()) {
      c.report.format = ClassifyDir(e.name, *l);
      c.report.modified = l->newest;
      c.listing = std::move(*l);
    }
    if (!step && (!c.listing || !LooksLikeCheckpointDir(c))) return std::nullopt;
  } else if (e.kind == EntryKind::kLinkOut) {
    if (!step) return std::nullopt;
    c.report.format = CheckpointFormat::kUnknown;  // verified as INCONCLUSIVE: never followed
  } else if (IsTemporaryFile(e.name)) {
    if (!step) return std::nullopt;
    c.report.format = CheckpointFormat::kTemporary;
  } else if (IsCheckpointFile(e.name)) {
    c.report.format = EndsWith(e.name, ".safetensors") ? CheckpointFormat::kSafetensors
                      : EndsWith(e.name, ".nemo")      ? CheckpointFormat::kNemoArchive
                                                       : CheckpointFormat::kTorchSave;
    if (!step && c.report.format == CheckpointFormat::kTorchSave) {
      if (auto inside = RecordedStep(e.path)) {  // Lightning's last.ckpt: global_step
        c.report.step = *inside;
        c.report.step_source = StepSource::kContents;
      }
    }
  } else {
    return std::nullopt;
  }
  if (const std::string marker = UnfinishedMarker(e.name); root.Find(marker) != nullptr)
    c.unfinished_marker = marker;
  return c;
}

std::string Trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

}  // namespace

std::optional<std::int64_t> StepFromName(std::string_view name) {
  std::size_t used = 0;
  if (auto v = Digits(name, &used)) {  // Orbax: "1000", "1000.orbax-checkpoint-tmp-<ts>"
    if (used == name.size() || StartsWith(name.substr(used), ".orbax-checkpoint-tmp")) return v;
  }
  for (std::string_view token :
       {"global_step", "iter_", "iter-", "iteration_", "iteration-", "checkpoint-", "checkpoint_",
        "ckpt_", "ckpt-", "step=", "step_", "step-", "step"}) {
    for (auto at = name.find(token); at != std::string_view::npos; at = name.find(token, at + 1)) {
      if (auto v = Digits(name.substr(at + token.size()))) return v;
    }
  }
  return std::nullopt;
}

std::vector<Candidate> FindCandidates(const Listing& root) {
  std::vector<Candidate> stepped, unstepped;
  for (const Entry& e : root.entries) {
    if (auto c = MakeCandidate(e, root))
      (c->report.step >= 0 ? stepped : unstepped).push_back(std::move(*c));
  }
  const bool only_files = std::all_of(unstepped.begin(), unstepped.end(), [](const Candidate& c) {
    return c.entry.kind == EntryKind::kFile;
  });
  if (stepped.empty() && only_files) {
    // No step anywhere: the directory itself is the checkpoint (a DCP directory, one
    // DeepSpeed tag, or model.pt beside optimizer.pt), its files verified together.
    CheckpointFormat self = ClassifyDir(root.dir.filename().string(), root);
    if (self == CheckpointFormat::kUnknown && !unstepped.empty()) self = CheckpointFormat::kTorchDir;
    if (self == CheckpointFormat::kUnknown || self == CheckpointFormat::kTemporary) return {};
    Candidate c;
    c.entry = {root.dir.filename().string(), EntryKind::kDir, 0, root.newest, root.dir};
    c.listing = root;
    c.report.path = std::string(1, '.');
    const auto step = StepFromName(root.dir.filename().string());
    c.report.step = step.value_or(-1);
    c.report.step_source = step ? StepSource::kName : StepSource::kNone;
    c.report.format = self;
    c.report.modified = root.newest;
    return {std::move(c)};
  }
  std::stable_sort(stepped.begin(), stepped.end(), [](const Candidate& a, const Candidate& b) {
    const bool ta = a.report.format == CheckpointFormat::kTemporary,
               tb = b.report.format == CheckpointFormat::kTemporary;
    if (a.report.step != b.report.step) return a.report.step > b.report.step;
    if (ta != tb) return tb;
    return a.report.path < b.report.path;
  });
  // Candidates without a step are placed by modification time: before the first stepped
  // candidate they are newer than.
  const auto time = [](const Candidate& c) { return c.report.modified.value_or(0); };
  std::stable_sort(unstepped.begin(), unstepped.end(), [&](const Candidate& a, const Candidate& b) {
    return time(a) != time(b) ? time(a) > time(b) : a.report.path < b.report.path;
  });
  // A NeMo archive holds weights only (no optimizer, no step): NeMo restores from it but
  // resumes training from its .ckpt saves, so it comes after every stepped candidate, however
  // new (always_save_nemo rewrites it after each save).
  std::vector<Candidate> archives;
  for (auto it = unstepped.begin(); it != unstepped.end();) {
    if (it->report.format != CheckpointFormat::kNemoArchive || stepped.empty()) {
      ++it;
      continue;
    }
    archives.push_back(std::move(*it));
    it = unstepped.erase(it);
  }
  std::vector<Candidate> out;
  auto s = stepped.begin();
  auto u = unstepped.begin();
  while (s != stepped.end() || u != unstepped.end()) {
    const bool take_u = s == stepped.end() || (u != unstepped.end() && time(*u) > time(*s));
    out.push_back(std::move(take_u ? *u++ : *s++));
  }
  for (Candidate& a : archives) out.push_back(std::move(a));
  return out;
}

bool HasUnorderedCheckpoints(const Listing& root) {
  return std::any_of(root.entries.begin(), root.entries.end(), [](const Entry& e) {
    return !IsPointer(e) && (e.kind == EntryKind::kDir || e.kind == EntryKind::kLinkOut);
  });
}

bool IsCheckpointFile(std::string_view name) {
  for (std::string_view ext : {".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".tar", ".nemo"}) {
    if (EndsWith(name, ext)) return true;
  }
  return false;
}

std::optional<CheckpointPointer> ReadPointer(const Listing& root) {
  const Entry* e = nullptr;
  for (std::string_view name : {std::string_view("latest"), std::string_view("last"), kTrackerFile}) {
    e = root.Find(name);
    if (e != nullptr && IsPointer(*e)) break;
    e = nullptr;
  }
  if (e == nullptr) return std::nullopt;
  CheckpointPointer p;
  p.file = e->name;
  if (e->link) {  // latest -> step_200: the link's target names the checkpoint
    if (e->kind == EntryKind::kLinkOut) {
      p.problem = "a symbolic link out of the checkpoint directory";
      return p;
    }
    p.target = e->path.lexically_relative(root.dir).generic_string();
    p.step = StepFromName(p.target).value_or(-1);
    return p;
  }
  auto f = ByteFile::Open(e->path);
  auto text = f.ok() ? f->Read(0, std::min<std::uint64_t>(f->size(), 4096))
                     : Result<std::string>(f.status());
  if (!text.ok()) {
    p.problem = "unreadable (" + text.status().message() + ")";
    return p;
  }
  p.target = Trim(*text);
  if (p.target.empty()) {
    p.problem =
        "empty (Megatron exits with 'Invalid metadata file'; DeepSpeed starts from scratch)";
  } else if (e->name == kTrackerFile) {
    std::size_t used = 0;
    auto step = Digits(p.target, &used);
    if (step && used == p.target.size()) {
      p.step = *step;
    } else if (p.target != "release") {
      p.problem = "not an iteration number (Megatron: 'Invalid metadata file')";
    }
  } else {
    p.step = StepFromName(p.target).value_or(-1);
  }
  return p;
}

const Candidate* PointerTarget(const CheckpointPointer& p, const std::vector<Candidate>& cands,
                               const std::filesystem::path& root) {
  if (!p.problem.empty() || p.target.empty()) return nullptr;
  if (p.file == kTrackerFile) {
    for (const Candidate& c : cands) {
      if (p.step >= 0 && c.report.step == p.step) return &c;
    }
    return nullptr;
  }
  // A path: relative ("step_200", "./step_200/", "step_200/model.pt") or absolute, inside
  // the directory or under another mount of it; every component is tried, the last first.
  std::filesystem::path target(p.target);
  if (target.is_absolute()) {
    const auto rel = target.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") target = rel;
  }
  std::vector<std::string> parts;
  for (const auto& part : target.lexically_normal()) {
    if (!part.empty() && part != "." && part != "/") parts.push_back(part.string());
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    for (const Candidate& c : cands) {
      if (c.entry.name == *it || c.report.path == *it) return &c;
    }
  }
  if (cands.size() == 1 && cands[0].report.path == "." && !parts.empty()) {
    for (const Entry& e : cands[0].listing->entries) {
      if (e.name == parts.front()) return &cands[0];  // latest -> model.pt in a flat checkpoint
    }
  }
  std::size_t used = 0;
  if (const auto step = Digits(p.target, &used); step && used == p.target.size()) {
    for (const Candidate& c : cands) {
      if (c.report.step == *step) return &c;  // latest holds a bare step number
    }
  }
  return nullptr;
}

}  // namespace denpex::engine::ckpt
