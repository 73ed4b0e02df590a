#include "denpex/common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "denpex/common/input_file.h"
#include "denpex/common/unique_fd.h"

namespace denpex {
namespace fs = std::filesystem;
namespace {

std::string Errno(int e) { return std::strerror(e); }

// The directory that will hold `path`, opened, and the name `path` has in it.
struct Parent {
  UniqueFd dir;
  std::string name;
};

Status OpenParent(const fs::path& path, Parent* out) {
  if (path.empty()) return Status::InvalidArgument("no output path given");
  out->name = path.filename().string();
  if (out->name.empty() || out->name == "." || out->name == "..") {
    return Status::InvalidArgument(path.string() + ": names a directory; give a file name");
  }
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  out->dir.Reset(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (out->dir.valid()) return Status::Ok();
  const int e = errno;
  if (e == ENOENT) {
    return Status::InvalidArgument(path.string() + ": the directory " + parent.string() +
                                   " does not exist; create it first (denpex creates no "
                                   "directory it was not asked for)");
  }
  if (e == ENOTDIR) {
    return Status::InvalidArgument(path.string() + ": " + parent.string() +
                                   " is not a directory");
  }
  return Status::IoError(path.string() + ": cannot open its directory " + parent.string() +
                         ": " + Errno(e));
}

// What is at `name` in `dir` may be replaced or appended to: nothing, or a regular file.
Status CheckTarget(const Parent& p, const fs::path& path, struct stat* st, bool* exists) {
  *exists = ::fstatat(p.dir.get(), p.name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0;
  if (!*exists) {
    if (errno == ENOENT) return Status::Ok();
    return Status::IoError(path.string() + ": " + Errno(errno));
  }
  if (S_ISREG(st->st_mode)) return Status::Ok();
  return Status::InvalidArgument(path.string() + " is " + FileKindName(st->st_mode) +
                                 ": denpex writes only regular files (give - for standard "
                                 "output, or a file name)");
}

// Fails when the directory `dir` is one of the `read_only` trees or lies below one, comparing
// device and inode while walking up through "..": a path spelled through links, bind mounts or
// `..` cannot hide that it lands in the incident.
Status CheckOutside(int dir, const fs::path& path, std::span<const fs::path> read_only) {
  struct Tree {
    dev_t dev;
    ino_t ino;
    const fs::path* path;
  };
  std::vector<Tree> trees;
  for (const fs::path& t : read_only) {
    struct stat st;
    if (!t.empty() && ::stat(t.c_str(), &st) == 0) trees.push_back({st.st_dev, st.st_ino, &t});
  }
  if (trees.empty()) return Status::Ok();
  UniqueFd cur(::dup(dir));
  for (int depth = 0; cur.valid() && depth < 4096; ++depth) {
    struct stat st;
    if (::fstat(cur.get(), &st) != 0) break;
    for (const Tree& t : trees) {
      if (t.dev == st.st_dev && t.ino == st.st_ino) {
        return Status::InvalidArgument(
            "refusing to write " + path.string() +
            ": it lies inside the incident directory or checkpoint directory being read (" +
            t.path->string() + "), which denpex never modifies; choose a path outside it");
      }
    }
    UniqueFd up(::openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat ust;
    if (!up.valid() || ::fstat(up.get(), &ust) != 0) break;
    if (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino) break;  // the root
    cur.Reset(::dup(up.get()));
  }
  return Status::Ok();
}

Status PrepareOutput(const fs::path& path, std::span<const fs::path> read_only, Parent* p,
                     struct stat* st, bool* exists) {
  DENPEX_RETURN_IF_ERROR(OpenParent(path, p));
  DENPEX_RETURN_IF_ERROR(CheckTarget(*p, path, st, exists));
  return CheckOutside(p->dir.get(), path, read_only);
}

// Writes all of `data` to `fd`; 0 or the errno of the write that failed.
int WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// A new, empty regular file in `p.dir` under a random hidden name: `*tmp` is its name.
Result<int> CreateTemporary(const Parent& p, const fs::path& path, std::string* tmp) {
  std::random_device rd;
  for (int attempt = 0; attempt < 64; ++attempt) {
    char name[256];
    std::snprintf(name, sizeof name, ".%.200s.%08x%08x.tmp", p.name.c_str(), rd(), rd());
    *tmp = std::string(name);
    const int fd = ::openat(p.dir.get(), tmp->c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      return Status::IoError(path.string() + ": cannot create a temporary file beside it: " +
                             Errno(errno));
    }
  }
  return Status::IoError(path.string() + ": cannot create a temporary file beside it");
}

}  // namespace

bool IsStdout(const fs::path& path) { return path == "-"; }

Status CheckOutputPath(const fs::path& path, std::span<const fs::path> read_only) {
  Parent p;
  struct stat st;
  bool exists = false;
  return PrepareOutput(path, read_only, &p, &st, &exists);
}

Status WriteOutputFile(const fs::path& path, std::string_view data,
                       std::span<const fs::path> read_only) {
  Parent p;
  struct stat st;
  bool exists = false;
  DENPEX_RETURN_IF_ERROR(PrepareOutput(path, read_only, &p, &st, &exists));
  std::string tmp;
  auto created = CreateTemporary(p, path, &tmp);
  if (!created.ok()) return created.status();
  UniqueFd fd(*created);
  int e = WriteAll(fd.get(), data);
  if (e == 0 && ::fsync(fd.get()) != 0) e = errno;
  if (const int c = fd.Close(); e == 0) e = c;
  if (e == 0 && ::renameat(p.dir.get(), tmp.c_str(), p.dir.get(), p.name.c_str()) != 0) e = errno;
  if (e != 0) {
    ::unlinkat(p.dir.get(), tmp.c_str(), 0);
    return Status::IoError(path.string() + ": cannot write: " + Errno(e));
  }
  (void)::fsync(p.dir.get());  // the rename itself; a failure here loses nothing written
  return Status::Ok();
}

Status AppendOutputFile(const fs::path& path, std::string_view data,
                        std::span<const fs::path> read_only) {
  Parent p;
  struct stat st;
  bool exists = false;
  DENPEX_RETURN_IF_ERROR(PrepareOutput(path, read_only, &p, &st, &exists));
  UniqueFd fd(::openat(p.dir.get(), p.name.c_str(),
                       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::IoError(path.string() + ": cannot open to append: " + Errno(errno));
  struct stat now;
  if (::fstat(fd.get(), &now) != 0) return Status::IoError(path.string() + ": " + Errno(errno));
  if (!S_ISREG(now.st_mode)) {
    return Status::InvalidArgument(path.string() + " is " + FileKindName(now.st_mode) +
                                   ": denpex writes only regular files");
  }
  if (now.st_nlink > 1) {
    return Status::InvalidArgument(path.string() + " has " + std::to_string(now.st_nlink) +
                                   " hard links: appending would change the other names too; "
                                   "give a file of its own");
  }
  int e = WriteAll(fd.get(), data);
  if (e == 0 && ::fsync(fd.get()) != 0) e = errno;
  if (const int c = fd.Close(); e == 0) e = c;
  if (e != 0) return Status::IoError(path.string() + ": cannot append: " + Errno(e));
  return Status::Ok();
}

}  // namespace denpex
