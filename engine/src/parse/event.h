// Event: one recognised log record, flat and small. A multi-line record (the watchdog block,
// one entry of the ChildFailedError table) is one event. Events never own text: strings are
// interned (StrId), and the cited line is found again by its byte offset when a report
// quotes it.
#pragma once

#include <cstdint>
#include <variant>

#include "denpex/common/time.h"
#include "parse/strings.h"

namespace denpex::engine {

// The torch ProcessGroupNCCL watchdog block (docs/log_formats.md §3): its first line
// (`Watchdog caught collective operation timeout`) plus the `last enqueued / last completed`
// numbers of the line that follows it.
struct WatchdogTimeout {
  StrId pg = kNoStr;       // process-group uid as printed; kNoStr for `[Rank r]` / `[PG  Rank r]`
  StrId pg_desc = kNoStr;  // TENSOR_MODEL_PARALLEL_GROUP, default_pg, ...; kNoStr when absent
  std::int32_t group_rank = -1;  // rank within the process group
  std::int64_t seq = -1;         // SeqNum of the collective that timed out
  StrId op = kNoStr;             // ALLREDUCE, RECV, ...
  std::int64_t timeout_ms = -1;
  std::int64_t ran_for_ms = -1;
  std::int64_t last_enqueued = -1;   // -1 until the status line is seen
  std::int64_t last_completed = -1;
};

// torchrun agent: `failed (exitcode: X) local_rank: L (pid: P) of binary: ...` (§6).
struct WorkerFailed {
  std::int32_t local_rank = -1;
  std::int32_t exit_code = 0;
  std::int64_t pid = 0;
};

// torchrun agent: `Sending process P closing signal SIGTERM`.
struct WorkerSignalled {
  std::int64_t pid = 0;
  StrId signal = kNoStr;
};

// One entry of the ChildFailedError table (`[k]:` and its fields). Event::rank is its
// `rank` field; Event::line is the line of that field (the one a diagnosis cites).
struct FailureEntry {
  bool root_cause = false;  // under "Root Cause (first observed failure)"
  std::int32_t local_rank = -1;
  std::int32_t exit_code = 0;
  std::int64_t pid = 0;
  StrId host = kNoStr;
};

// Megatron iteration line (§5).
struct Iteration {
  std::int64_t iteration = 0;
  std::int64_t total = 0;
};

// NCCL communicator init, NCCL_DEBUG=INFO (§4).
struct CommInit {
  StrId comm_id = kNoStr;
  std::int32_t comm_rank = -1;
  std::int32_t nranks = 0;
  std::int32_t cuda_dev = -1;
};

// The `SomeError: message` line that ends a rank's Python traceback.
struct PythonError {
  StrId type = kNoStr;
};

using EventDetail = std::variant<WatchdogTimeout, WorkerFailed, WorkerSignalled, FailureEntry,
                                 Iteration, CommInit, PythonError>;

enum class Clock : std::uint8_t {
  kNone,    // the line carries no time
  kFull,    // a full date and time
  kNoYear,  // c10 / glog stamps: held in the year 2000 until the incident's year is known
};

struct Event {
  TimeNs time = 0;
  Clock clock = Clock::kNone;
  std::int32_t rank = -1;      // global rank; -1 when the line does not say
  std::uint32_t file = 0;      // index into the incident's files
  std::uint32_t line = 0;      // 1-based line of the cited text
  std::uint64_t offset = 0;    // byte offset of that line in its file
  std::uint32_t length = 0;    // its length in bytes (without the newline)
  StrId signature = kNoStr;    // masked message, for cascade grouping (error events only)
  EventDetail detail;
};

// Larger rank numbers are treated as malformed (a corrupted line must not size an array).
inline constexpr std::int32_t kMaxRank = (1 << 22) - 1;

// The year that yearless stamps are parsed into: a leap year, so 29 February survives.
inline constexpr int kPlaceholderYear = 2000;

}  // namespace denpex::engine
