// Finding the log files of an incident directory. Never follows a symbolic link out of the
// directory, never opens special files, never opens the ground truth of a simulated run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"

namespace denpex::engine {

struct SourceFile {
  std::filesystem::path path;    // as it is opened (canonical incident dir + relative path)
  std::string rel;               // relative to the incident dir, '/'-separated
  std::string node;              // NodeOfPath; empty when the path names none
  std::int32_t name_rank = -1;   // R of `rank_<R>.log`
  std::int32_t local_rank = -1;  // L of a torchrun log dir's `attempt_<N>/<L>/stdout.log`
  bool kernel = false;           // a kernel log by its name (dmesg, kern.log, journal, syslog)
  // `denpex run`'s `<stem>.errors.log`: a copy of lines of `<stem>.log` (docs/run_wrapper.md),
  // evidence only where the main log lost them (capped, or missing).
  bool copy = false;
  // A rotated or compressed log (`X.log.1`, `X.log.2.gz`, `X.log-20261129`, `X.log.gz`): the
  // path without the rotation and compression suffixes, which the hints above are read from;
  // files with the same `stream` are one log split in time (ingest/load.cc joins them).
  std::string stream;
  // Its place in the stream: 0 the live file, higher older (`.N` is N; a `-YYYYMMDD` date is
  // older than every `.N`, an earlier date older than a later one).
  std::int64_t age = 0;
  // One stream of a file that relays several containers' tagged lines (ingest/streams.h): its
  // tag, and its place among the file's streams (0 the first); empty and -1 for a whole file.
  // The file's streams are listed one after another, each under the file's path.
  std::string tag;
  std::int32_t tag_index = -1;
};

struct Listing {
  std::filesystem::path root;       // canonical incident directory
  std::vector<SourceFile> files;    // sorted by `rel`
  std::vector<std::string> problems;  // "rel: what was wrong"
};

// Folders directly inside an incident directory (or its LoneFolders) that hold the job's
// checkpoints, not logs: ingest never reads them; `denpex diagnose` verifies the first one it
// finds.
inline constexpr std::string_view kCheckpointFolders[] = {"checkpoints", "checkpoint", "ckpt", "ckpts"};

// The chain of lone folders at the top of `dir` (`INC-7` for a dir whose one folder, hidden and
// checkpoint folders aside, is `INC-7`, files beside it or not; `a/b` for two such; empty when
// none): a tarball's or a ticket's folder holding the whole collection. The checkpoint folders
// directly in any of them are the incident's.
std::string LoneFolders(const std::filesystem::path& dir);

// kNotFound when `dir` does not exist, kInvalidInput when it is not a directory. The
// checkpoint folders (directly inside `dir` or its LoneFolders) and `skip` (a checkpoint
// directory given explicitly) are not listed.
Result<Listing> ListIncident(const std::filesystem::path& dir, const std::filesystem::path& skip = {});

// A file name without logrotate's suffixes: `.gz`, `.xz`, `.zst`, then `.N` or `-YYYYMMDD`; `*age`
// as SourceFile::age.
std::string_view RotationBase(std::string_view name, std::int64_t* age);

// R when `name` is `rank_<R>.log` (or `denpex run`'s `rank_<R>.errors.log`), else -1.
std::int32_t RankFromFileName(std::string_view name);

// The node a file belongs to: the nearest directory above it that is not part of a torchrun
// log dir (`<run_id>_*/attempt_<N>/<L>/`) nor a generic folder name (`logs`, `kernel`, ...).
std::string NodeOfPath(std::string_view rel);
// L when `rel` ends in `attempt_<N>/<L>/<file>` (torchrun --log_dir), else -1.
std::int32_t LocalRankOfPath(std::string_view rel);

}  // namespace denpex::engine
