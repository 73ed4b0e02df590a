#include "ingest/walk.h"

#include <algorithm>
#include <system_error>

#include "parse/event.h"

namespace denpex::engine {
namespace fs = std::filesystem;
namespace {

bool IsInside(const fs::path& p, const fs::path& root) {
  auto [pi, ri] = std::mismatch(p.begin(), p.end(), root.begin(), root.end());
  return ri == root.end();
}

// A symbolic link is never followed: one that points inside the directory is skipped (its
// target is read where it lies), one that points outside is reported.
void NoteLink(const fs::directory_entry& entry, const fs::path& root, const std::string& rel,
              std::vector<std::string>* problems) {
  std::error_code ec;
  const fs::path target = fs::canonical(entry.path(), ec);
  if (ec) {
    problems->push_back(rel + ": dangling symbolic link, skipped");
  } else if (!IsInside(target, root)) {
    problems->push_back(rel + ": symbolic link to a path outside the incident directory, not followed");
  }
}

// A simulated run's ground truth (written beside the incident dir) and a frozen incident's
// expected outcome are never opened, even when someone copies them inside.
bool IsGroundTruth(const fs::path& p) {
  return (p.stem() == "truth" || p.stem() == "expected") && p.extension() == ".json";
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 7 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsAttempt(std::string_view s) { return s.starts_with("attempt_") && AllDigits(s.substr(8)); }

bool IsGenericFolder(std::string_view s) {
  static constexpr std::string_view kNames[] = {"logs", "log", "output", "outputs", "kernel", "dmesg", "slurm",
                                                "k8s", "kubernetes", "ray", "torchrun", "journal", "syslog", "events",
                                                "pods", "describe"};
  return std::find(std::begin(kNames), std::end(kNames), s) != std::end(kNames);
}

std::vector<std::string_view> Folders(std::string_view rel) {
  std::vector<std::string_view> parts;
  for (std::size_t at = rel.find('/'); at != std::string_view::npos; at = rel.find('/')) {
    parts.push_back(rel.substr(0, at));
    rel.remove_prefix(at + 1);
  }
  return parts;  // the file name itself is left out
}

// `denpex run` side files: the identity record (JSON, not a log) and the error-line copy.
constexpr std::string_view kTaskSuffix = ".task.json";
constexpr std::string_view kErrorsSuffix = ".errors.log";

bool IsKernelLogName(std::string_view name) {
  return name.find("dmesg") != std::string_view::npos || name.starts_with("kern") ||
         name.find("journal") != std::string_view::npos || name.find("syslog") != std::string_view::npos ||
         name == "messages";
}

// The job's checkpoints are verified separately (analyze/checkpoints.cc), never read as logs.
bool IsCheckpointDir(const fs::path& p, int depth, const fs::path& skip) {
  if (!skip.empty() && p == skip) return true;
  if (depth != 0) return false;
  const std::string name = p.filename().string();
  return std::find(std::begin(kCheckpointFolders), std::end(kCheckpointFolders), name) !=
         std::end(kCheckpointFolders);
}

}  // namespace

std::int32_t RankFromFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "rank_", kSuffix = ".log";
  if (name.ends_with(kErrorsSuffix)) name.remove_suffix(kErrorsSuffix.size() - kSuffix.size());
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return -1;
  const std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 7) return -1;
  std::int32_t r = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    r = r * 10 + (c - '0');
  }
  return r <= kMaxRank ? r : -1;
}

std::string NodeOfPath(std::string_view rel) {
  const std::vector<std::string_view> dirs = Folders(rel);
  for (std::size_t i = dirs.size(); i-- > 0;) {
    const bool run_dir = i + 1 < dirs.size() && IsAttempt(dirs[i + 1]);
    if (IsAttempt(dirs[i]) || AllDigits(dirs[i]) || run_dir || IsGenericFolder(dirs[i])) continue;
    return std::string(dirs[i]);
  }
  return {};
}

std::int32_t LocalRankOfPath(std::string_view rel) {
  const std::vector<std::string_view> dirs = Folders(rel);
  if (dirs.size() < 2 || !IsAttempt(dirs[dirs.size() - 2]) || !AllDigits(dirs.back())) return -1;
  std::int32_t l = 0;
  for (char c : dirs.back()) l = l * 10 + (c - '0');
  return l;
}

Result<Listing> ListIncident(const fs::path& dir, const fs::path& skip) {
  constexpr std::string_view kHint = ": pass the directory that holds the job's logs";
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) {
    return Status::NotFound("incident directory " + dir.string() + " does not exist" + std::string(kHint));
  }
  if (!fs::is_directory(st)) {
    return Status::InvalidInput(dir.string() + " is not a directory" + std::string(kHint));
  }
  Listing out;
  out.root = fs::canonical(dir, ec);
  if (ec) return Status::IoError("cannot resolve " + dir.string() + ": " + ec.message());
  const fs::path skip_canonical = skip.empty() ? fs::path() : fs::weakly_canonical(skip, ec);

  fs::recursive_directory_iterator it(out.root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      out.problems.push_back(dir.string() + ": listing stopped early: " + ec.message());
      break;
    }
    const fs::directory_entry& entry = *it;
    const fs::path& p = entry.path();
    const std::string rel = p.lexically_relative(out.root).generic_string();
    if (entry.is_symlink(ec)) {
      NoteLink(entry, out.root, rel, &out.problems);
    } else if (entry.is_directory(ec)) {
      if (IsCheckpointDir(p, it.depth(), skip_canonical)) it.disable_recursion_pending();
      continue;
    } else if (!entry.is_regular_file(ec)) {
      out.problems.push_back(rel + ": not a regular file, skipped");
    } else if (IsGroundTruth(p)) {
      out.problems.push_back(rel + ": ground truth of a simulated run, never read by the engine");
    } else if (rel.ends_with(kTaskSuffix)) {
      continue;  // `denpex run`'s identity record: its facts are in the rank's own log too
    } else {
      const std::string name = p.filename().string();
      out.files.push_back({.path = p,
                           .rel = rel,
                           .node = NodeOfPath(rel),
                           .name_rank = RankFromFileName(name),
                           .local_rank = LocalRankOfPath(rel),
                           .kernel = IsKernelLogName(name),
                           .copy = name.ends_with(kErrorsSuffix)});
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.rel < b.rel; });
  return out;
}

}  // namespace denpex::engine
