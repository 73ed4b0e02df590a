// The one way Denpex reads a small file a user named whole into memory (a scenario, a suite, a
// truth or diagnosis JSON, a gate baseline, an eval report): a regular file only, bounded. A
// device, FIFO, socket or directory is refused before it is read (`/dev/zero` would never end;
// opening a FIFO never blocks), and a file larger than the reader takes is refused by its size,
// so no such file can hold the process for long or fill its memory. Incident logs, checkpoints
// and the history store have their own streaming readers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "denpex/common/status.h"

namespace denpex {

// "a character device", "a FIFO", ... for a file that is not a regular one (lstat's st_mode).
std::string FileKindName(mode_t mode);

// The whole of `path`, a regular file of at most `max_bytes` (symbolic links are followed).
// kNotFound when absent; kInvalidInput naming the path and what it is, or its size and the
// limit, with `what` ("a scenario") in the message; kIoError when a read fails.
Result<std::string> ReadInputFile(const std::filesystem::path& path, std::uint64_t max_bytes,
                                  std::string_view what);

}  // namespace denpex
