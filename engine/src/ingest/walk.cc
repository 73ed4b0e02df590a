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

// A simulated run's ground truth (written beside the incident dir) is never opened, even
// when someone copies it inside.
bool IsGroundTruth(const fs::path& p) { return p.stem() == "truth" && p.extension() == ".json"; }

}  // namespace

std::int32_t RankFromFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "rank_", kSuffix = ".log";
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

Result<Listing> ListIncident(const fs::path& dir) {
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
      continue;
    } else if (!entry.is_regular_file(ec)) {
      out.problems.push_back(rel + ": not a regular file, skipped");
    } else if (IsGroundTruth(p)) {
      out.problems.push_back(rel + ": ground truth of a simulated run, never read by the engine");
    } else {
      const bool top = p.parent_path() == out.root;
      out.files.push_back({.path = p,
                           .rel = rel,
                           .node = top ? std::string() : p.parent_path().filename().string(),
                           .name_rank = RankFromFileName(p.filename().string())});
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.rel < b.rel; });
  return out;
}

}  // namespace denpex::engine
