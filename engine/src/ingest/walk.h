// Finding the log files of an incident directory. Never follows a symbolic link out of the
// directory, never opens special files, never opens the ground truth of a simulated run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "denpex/common/status.h"

namespace denpex::engine {

struct SourceFile {
  std::filesystem::path path;   // as it is opened (canonical incident dir + relative path)
  std::string rel;              // relative to the incident dir, '/'-separated
  std::string node;             // the parent directory's name; empty at the top level
  std::int32_t name_rank = -1;  // R of `rank_<R>.log`
};

struct Listing {
  std::filesystem::path root;       // canonical incident directory
  std::vector<SourceFile> files;    // sorted by `rel`
  std::vector<std::string> problems;  // "rel: what was wrong"
};

// kNotFound when `dir` does not exist, kInvalidInput when it is not a directory.
Result<Listing> ListIncident(const std::filesystem::path& dir);

// R when `name` is `rank_<R>.log`, else -1.
std::int32_t RankFromFileName(std::string_view name);

}  // namespace denpex::engine
