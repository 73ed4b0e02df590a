// The one way Denpex writes a file a user named (--json, --markdown, --html, --write-gate, the
// history store, truth.json, `denpex run`'s records). Only a regular file is ever written: a
// device, FIFO, socket, symbolic link or directory at the path is refused, so `--json /dev/null`
// cannot turn /dev/null into a file, and a link cannot redirect the write. A whole file is
// written to a new temporary file in the target's directory (created with O_CREAT | O_EXCL |
// O_NOFOLLOW under a random name, so nothing planted there is followed or reused), fsync'd and
// renamed over the target. The directory the file lands in is compared by device and inode with
// the trees being read (the incident, a checkpoint directory): none of them, and nothing below
// them, is ever written. No directory is created: a missing parent is an error that names it.
// Every write, fsync and close is checked; a full disk is an error naming the path.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>

#include "denpex/common/status.h"

namespace denpex {

// True for "-": the user asked for standard output instead of a file.
bool IsStdout(const std::filesystem::path& path);

// Checks, without writing anything, that `path` could be written: its directory exists and lies
// outside every tree of `read_only`, and what is at `path`, if anything, is a regular file.
// kInvalidArgument (a usage error) naming the path and what is wrong otherwise.
Status CheckOutputPath(const std::filesystem::path& path,
                       std::span<const std::filesystem::path> read_only = {});

// Replaces `path` with `data` atomically, after CheckOutputPath's checks. kIoError naming the
// path when a write, fsync, close or rename fails (ENOSPC, EFBIG, EIO); nothing is left behind.
Status WriteOutputFile(const std::filesystem::path& path, std::string_view data,
                       std::span<const std::filesystem::path> read_only = {});

// Appends `data` to `path` (created when absent), after the same checks; a file with other hard
// links is refused too (appending would change the other names' contents).
Status AppendOutputFile(const std::filesystem::path& path, std::string_view data,
                        std::span<const std::filesystem::path> read_only = {});

}  // namespace denpex
