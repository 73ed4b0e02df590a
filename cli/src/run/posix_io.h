// Small POSIX I/O helpers for the `denpex run` wrapper: an owning file descriptor (UniqueFd),
// writes that retry on EINTR and partial writes, and the wall clock. Nothing here buffers: a byte
// handed to WriteAll is in the kernel when it returns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/common/unique_fd.h"

namespace denpex::cli::run {

// Owns one file descriptor; closes it on destruction.
using Fd = UniqueFd;

// Writes all of `data`, retrying on EINTR and partial writes. Fails with the errno text.
Status WriteAll(int fd, std::string_view data);
// Same, at `offset` (pwrite), leaving the file offset alone.
Status PWriteAll(int fd, std::string_view data, std::uint64_t offset);

// "what: strerror(errno)".
std::string ErrnoText(std::string_view what, int err);

// Wall-clock now (CLOCK_REALTIME), ns since the epoch.
TimeNs WallNow();

// SIGINT and SIGTERM only set a flag from here on, for a loop that ends cleanly on them
// (`denpex watch`, `denpex canary`); StopRequested says whether one came.
void CatchStopSignals();
bool StopRequested();
// CLOCK_MONOTONIC now, µs: the clock /dev/kmsg stamps records with.
std::uint64_t MonotonicMicros();

// "2026-03-02T09:00:41.123456Z" (microseconds, UTC).
std::string FormatStamp(TimeNs t);

}  // namespace denpex::cli::run
