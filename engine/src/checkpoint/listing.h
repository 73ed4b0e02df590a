// One directory level of a checkpoint, read with lstat: a symbolic link is followed only
// when its target lies inside the checkpoint directory; special files are never opened.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"

namespace denpex::engine::ckpt {

enum class EntryKind { kFile, kDir, kLinkOut, kOther };

struct Entry {
  std::string name;
  EntryKind kind = EntryKind::kOther;
  std::uint64_t size = 0;
  TimeNs mtime = 0;
  std::filesystem::path path;  // what to open (for a link: its target inside the root)
  bool link = false;           // a symbolic link (followed or not)
};

struct Listing {
  std::filesystem::path dir;
  std::vector<Entry> entries;  // sorted by name
  TimeNs newest = 0;           // the newest mtime of the directory and its entries

  const Entry* Find(std::string_view name) const;
  const Entry* FindFile(std::string_view name) const;  // a regular file only
  const Entry* FindDir(std::string_view name) const;
};

// Lists `dir` (one level). `root` is the canonical checkpoint directory links must stay in.
Result<Listing> ListDir(const std::filesystem::path& dir, const std::filesystem::path& root);

bool EndsWith(std::string_view s, std::string_view suffix);
bool StartsWith(std::string_view s, std::string_view prefix);

}  // namespace denpex::engine::ckpt
