#include "checkpoint/listing.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace denpex::engine::ckpt {
namespace {

TimeNs MtimeOf(const struct stat& st) {
  return static_cast<TimeNs>(st.st_mtim.tv_sec) * kNsPerSec + st.st_mtim.tv_nsec;
}

void Describe(const struct stat& st, Entry& e) {
  e.kind = S_ISREG(st.st_mode)   ? EntryKind::kFile
           : S_ISDIR(st.st_mode) ? EntryKind::kDir
                                 : EntryKind::kOther;
  e.size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  e.mtime = MtimeOf(st);
}

bool IsInside(const std::filesystem::path& p, const std::filesystem::path& root) {
  auto [ip, ir] = std::mismatch(p.begin(), p.end(), root.begin(), root.end());
  return ir == root.end();
}

// A link is followed only when its target exists inside `root`.
void ResolveLink(Entry& e, const std::filesystem::path& root) {
  e.link = true;
  std::error_code ec;
  const auto target = std::filesystem::canonical(e.path, ec);
  struct stat st {};
  if (ec || !IsInside(target, root) || ::stat(target.c_str(), &st) != 0) {
    e.kind = EntryKind::kLinkOut;
    return;
  }
  Describe(st, e);
  e.path = target;
}

}  // namespace

const Entry* Listing::Find(std::string_view name) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != entries.end() && it->name == name ? &*it : nullptr;
}

const Entry* Listing::FindFile(std::string_view name) const {
  const Entry* e = Find(name);
  return e != nullptr && e->kind == EntryKind::kFile ? e : nullptr;
}

const Entry* Listing::FindDir(std::string_view name) const {
  const Entry* e = Find(name);
  return e != nullptr && e->kind == EntryKind::kDir ? e : nullptr;
}

Result<Listing> ListDir(const std::filesystem::path& dir, const std::filesystem::path& root) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::IoError(dir.string() + ": cannot list: " + std::strerror(errno));
  Listing out;
  out.dir = dir;
  struct stat self {};
  if (::fstat(::dirfd(d), &self) == 0) out.newest = MtimeOf(self);
  while (const dirent* de = ::readdir(d)) {
    const std::string name = de->d_name;
    if (name == "." || name == "..") continue;
    Entry e;
    e.name = name;
    e.path = dir / name;
    struct stat st {};
    if (::fstatat(::dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished
    Describe(st, e);
    if (S_ISLNK(st.st_mode)) ResolveLink(e, root);
    out.newest = std::max(out.newest, e.mtime);
    out.entries.push_back(std::move(e));
  }
  ::closedir(d);
  std::sort(out.entries.begin(), out.entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace denpex::engine::ckpt
