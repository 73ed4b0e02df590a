#include "ingest/walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <oneapi/tbb/parallel_for.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <system_error>

#include "denpex/common/unique_fd.h"
#include "incident/incident.h"
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
void NoteLink(const fs::path& link, const fs::path& root, const std::string& rel,
              std::vector<std::string>* problems) {
  std::error_code ec;
  const fs::path target = fs::canonical(link, ec);
  if (ec) {
    problems->push_back(rel + ": dangling symbolic link, skipped");
  } else if (!IsInside(target, root)) {
    problems->push_back(rel + ": symbolic link to a path outside the incident directory, not followed");
  }
}

// A simulated run's ground truth (written beside the incident dir) and a frozen incident's
// expected outcome are never opened, even when someone copies them inside.
bool IsGroundTruth(std::string_view name) {
  constexpr std::string_view kJson = ".json";
  if (!name.ends_with(kJson)) return false;
  name.remove_suffix(kJson.size());
  return name == "truth" || name == "expected";
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

// The job's checkpoints are verified separately (analyze/checkpoint_outcome.cc), never read as
// logs.
bool IsCheckpointName(std::string_view name) {
  return std::find(std::begin(kCheckpointFolders), std::end(kCheckpointFolders), name) !=
         std::end(kCheckpointFolders);
}

// `lone`: LoneFolders of the incident dir; a checkpoint folder sits directly in it or in one of
// them.
bool IsCheckpointDir(const fs::path& root, const std::string& rel, std::string_view name, int depth,
                     const fs::path& skip, const std::string& lone) {
  if (!skip.empty() && root / rel == skip) return true;
  if (depth == 0) return IsCheckpointName(name);
  const std::string_view in =
      std::string_view(rel).substr(0, rel.size() - name.size() - 1);  // its folder
  return InFolder(lone, in) && IsCheckpointName(name);
}

}  // namespace

std::string_view RotationBase(std::string_view name, std::int64_t* age) {
  *age = 0;
  for (std::string_view ext : {".gz", ".xz", ".zst"}) {
    if (name.size() > ext.size() && name.ends_with(ext)) {
      name.remove_suffix(ext.size());
      break;
    }
  }
  const std::size_t dot = name.rfind('.');
  // `10.0.0.5` is an address, not `10.0.0` rotated: the base ends in a name.
  if (dot != std::string_view::npos && dot > 0 && AllDigits(name.substr(dot + 1)) && name.size() - dot - 1 <= 4 &&
      !(name[dot - 1] >= '0' && name[dot - 1] <= '9')) {
    std::int64_t n = 0;
    for (char c : name.substr(dot + 1)) n = n * 10 + (c - '0');
    *age = n;
    return name.substr(0, dot);
  }
  constexpr std::size_t kDate = 8;  // logrotate's dateext: `-%Y%m%d`
  constexpr std::int64_t kDated = 1'000'000'000;  // older than any `.N`
  if (name.size() > kDate + 1 && name[name.size() - kDate - 1] == '-') {
    const std::string_view date = name.substr(name.size() - kDate);
    if (std::all_of(date.begin(), date.end(), [](char c) { return c >= '0' && c <= '9'; }) && date.starts_with("20")) {
      std::int64_t d = 0;
      for (char c : date) d = d * 10 + (c - '0');
      *age = kDated + (99991231 - d);
      return name.substr(0, name.size() - kDate - 1);
    }
  }
  return name;
}

std::int32_t RankFromFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "rank_", kSuffix = ".log";
  const std::size_t suffix = name.ends_with(kErrorsSuffix) ? kErrorsSuffix.size() : kSuffix.size();
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix) ||
      name.size() < kPrefix.size() + suffix)
    return -1;
  const std::string_view digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - suffix);
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

namespace {

// What the walk found under one entry of the incident directory (its whole subtree when it is
// a folder), in the order a single recursive walk finds it.
struct Segment {
  std::vector<SourceFile> files;
  std::vector<std::string> problems;
  bool stopped = false;  // the listing broke off here: nothing after it is listed
};

// What the walk needs of the incident directory. Folders are opened relative to their parent's
// descriptor and entries typed by getdents' d_type: a 131k-rank incident's 16k node folders
// listed with no stat, access or path lookup from `/` per folder or file (docs/benchmarks.md,
// "Per-file cost").
struct Walk {
  const fs::path& root;
  const fs::path& skip;
  const std::string& lone;   // LoneFolders(root)
  const std::string& shown;  // the incident directory as it was given, for problems
};

enum class Type { kFile, kFolder, kLink, kOther };

// The entry's type from its d_type; from an lstat when the file system gives none.
Type TypeOf(int dir, const char* name, unsigned char d_type) {
  if (d_type == DT_UNKNOWN) {
    struct stat st;
    if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return Type::kOther;
    return S_ISREG(st.st_mode)   ? Type::kFile
           : S_ISDIR(st.st_mode) ? Type::kFolder
           : S_ISLNK(st.st_mode) ? Type::kLink
                                 : Type::kOther;
  }
  return d_type == DT_REG   ? Type::kFile
         : d_type == DT_DIR ? Type::kFolder
         : d_type == DT_LNK ? Type::kLink
                            : Type::kOther;
}

struct Entry {
  std::string name;
  Type type;
};

// The entries of the open folder `dir` but `.` and `..`, in the order readdir gives them (which
// std::filesystem's iterators give too), appended to `*out`; returns 0, or the errno of a read of
// the folder that failed (the entries read before it are kept). Read into one buffer per thread:
// a buffer allocated per folder made every small allocation of the walk after it slower.
int ReadEntries(int dir, std::vector<Entry>* out) {
  constexpr std::size_t kBytes = 32 * 1024;
  thread_local const std::unique_ptr<char[]> buffer =
      std::make_unique_for_overwrite<char[]>(kBytes);
  for (;;) {
    const ssize_t n = ::getdents64(dir, buffer.get(), kBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    for (std::size_t at = 0; at < static_cast<std::size_t>(n);) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buffer.get() + at);
      at += d->d_reclen;
      const std::string_view name(d->d_name);
      if (name == "." || name == "..") continue;
      out->push_back({std::string(name), TypeOf(dir, d->d_name, d->d_type)});
    }
  }
}

// The folder `name` of the open folder `dir`, opened to be listed. Through `name/.`: that needs
// search permission on the folder as well as read (what its files need to be opened), so a
// folder the reader may not list or enter fails here, with the errno access() would give.
int OpenFolder(int dir, const char* name) {
  const std::string dot = std::string(name) + "/.";
  return ::openat(dir, dot.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

bool ListFolder(const Walk& w, int dir, const std::string& rel, int depth, Segment* out);

// One entry `name` of the open folder `dir` (`rel`: its path in the incident dir; `depth` 0:
// directly inside it); false when the listing broke off below it.
bool Visit(const Walk& w, int dir, const char* name, Type type, std::string rel, int depth,
           Segment* out) {
  if (type == Type::kLink) {
    NoteLink(w.root / rel, w.root, rel, &out->problems);
  } else if (type == Type::kFolder) {
    if (IsCheckpointDir(w.root, rel, name, depth, w.skip, w.lone)) return true;
    // A folder the reader may not open or enter is named here, not skipped without a word.
    const UniqueFd sub(OpenFolder(dir, name));
    if (sub.get() < 0) {
      out->problems.push_back(rel + "/: unreadable directory (" + std::strerror(errno) +
                              "), not listed: the logs in it are missing from the diagnosis");
      return true;
    }
    return ListFolder(w, sub.get(), rel, depth + 1, out);
  } else if (type != Type::kFile) {
    out->problems.push_back(rel + ": not a regular file, skipped");
  } else if (IsGroundTruth(name)) {
    out->problems.push_back(rel + ": ground truth of a simulated run, never read by the engine");
  } else if (rel.ends_with(kTaskSuffix)) {
    // `denpex run`'s identity record: its facts are in the rank's own log too
  } else {
    std::int64_t age = 0;
    const std::string_view name_base =
        RotationBase(name, &age);  // what the name hints, as the live file's
    SourceFile f{.path = w.root / rel,
                 .node = NodeOfPath(rel),
                 .name_rank = RankFromFileName(name_base),
                 .local_rank = LocalRankOfPath(rel),
                 .kernel = IsKernelLogName(name_base),
                 .copy = name_base.ends_with(kErrorsSuffix),
                 .stream = rel.substr(0, rel.size() - std::strlen(name)).append(name_base),
                 .age = age};
    f.rel = std::move(rel);
    out->files.push_back(std::move(f));
  }
  return true;
}

// Everything below the open folder `dir` (`rel` in the incident dir), depth first; false when
// the listing broke off (a read of a folder failed: nothing after it is listed).
bool ListFolder(const Walk& w, int dir, const std::string& rel, int depth, Segment* out) {
  std::vector<Entry> entries;
  const int error = ReadEntries(dir, &entries);
  for (const Entry& e : entries) {
    std::string sub;
    sub.reserve(rel.size() + 1 + e.name.size());
    sub.append(rel).append("/").append(e.name);
    if (!Visit(w, dir, e.name.c_str(), e.type, std::move(sub), depth, out)) return false;
  }
  if (error != 0) {
    out->problems.push_back(w.shown + ": listing stopped early: " + std::strerror(error));
    return false;
  }
  return true;
}

}  // namespace

std::string LoneFolders(const fs::path& dir) {
  std::string rel;
  for (int depth = 0; depth < 8; ++depth) {
    std::error_code ec;
    fs::directory_iterator it(dir / rel, ec), end;
    std::string only;
    int folders = 0;
    for (; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code kind;
      if (name.starts_with('.') || IsCheckpointName(name) || it->is_symlink(kind) ||
          !it->is_directory(kind))
        continue;
      if (++folders > 1) return rel;
      only = name;
    }
    if (ec || folders == 0) return rel;
    rel += (rel.empty() ? "" : "/") + only;
  }
  return rel;
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
  const UniqueFd root(OpenFolder(AT_FDCWD, out.root.c_str()));
  if (root.get() < 0)
    return Status::IoError("cannot list " + dir.string() + ": " + std::strerror(errno));
  const fs::path skip_canonical = skip.empty() ? fs::path() : fs::weakly_canonical(skip, ec);
  const std::string shown = dir.string();
  const std::string lone = LoneFolders(out.root);
  const Walk walk{.root = out.root, .skip = skip_canonical, .lone = lone, .shown = shown};

  // The incident directory's own entries first; then the folders among them are walked in
  // parallel (a 16k-rank job's 2,048 node folders took 17 ms to list on one core, before any
  // file was parsed), and the segments joined in the order one walk would have found them.
  std::vector<Entry> entries;
  const int error = ReadEntries(root.get(), &entries);
  std::vector<Segment> segments(entries.size());
  tbb::parallel_for(std::size_t{0}, entries.size(), [&](std::size_t i) {
    segments[i].stopped = !Visit(walk, root.get(), entries[i].name.c_str(), entries[i].type,
                                 entries[i].name, 0, &segments[i]);
  });
  if (error != 0) {
    segments.emplace_back();
    segments.back().problems.push_back(shown + ": listing stopped early: " + std::strerror(error));
    segments.back().stopped = true;
  }
  std::size_t files = 0;
  for (const Segment& seg : segments) files += seg.files.size();
  out.files.reserve(files);
  for (Segment& seg : segments) {
    std::move(seg.files.begin(), seg.files.end(), std::back_inserter(out.files));
    std::move(seg.problems.begin(), seg.problems.end(), std::back_inserter(out.problems));
    if (seg.stopped) break;
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.rel < b.rel; });
  return out;
}

}  // namespace denpex::engine
