// Recognisers for single log lines (docs/log_formats.md §2–§6). Pure functions over a
// string_view: no allocation, no state. Each returns kNo when the line is not of its shape,
// kYes when it parsed, and kMalformed when the line clearly has the shape but a field does
// not parse (the caller counts it and moves on).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "denpex/common/time.h"
#include "parse/scan.h"

namespace denpex::engine {

// c10 header `[<L><M><DD> hh:mm:ss.nnnnnnnnn <File>.cpp:<line>] <message>`; the month is not
// zero-padded (E302, E1016) and there is no year: `time` is in kPlaceholderYear.
struct C10Header {
  char severity = 0;
  TimeNs time = 0;
  std::string_view source;  // ProcessGroupNCCL.cpp
  std::int64_t source_line = 0;
  std::string_view message;
};
Match ParseC10Header(std::string_view line, C10Header* out);

// Process-group log prefix: `[PG 3 (DESC) Rank 1]`, `[PG 3 Rank 1]`, `[Rank 1]`,
// `[PG ID 0 PG GUID 0(default_pg) Rank 1]`, `[PG  Rank 1]`. `uid` is the GUID when printed,
// else the `PG <uid>` token (possibly empty). On kYes, `*text` is advanced past it.
struct PgPrefix {
  std::string_view uid;
  std::string_view desc;
  std::int32_t group_rank = -1;
};
Match ParsePgPrefix(std::string_view* text, PgPrefix* out);

// `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=.., OpType=.., ...,
// Timeout(ms)=..) ran for X milliseconds before timing out.` (the text after the prefix).
// Also `Work WorkNCCL(...) timed out in blocking wait.` (`blocking` set).
struct WatchdogTimeoutFields {
  std::int64_t seq = -1;
  std::string_view op;
  std::int64_t numel_in = -1;
  std::int64_t numel_out = -1;
  bool blocking = false;
  std::int64_t timeout_ms = -1;
  std::int64_t ran_for_ms = -1;
};
Match ParseWatchdogTimeout(std::string_view message, WatchdogTimeoutFields* out);

// `... last enqueued NCCL work: E, last completed NCCL work: C.` (torch 2.3–2.6, also after
// `Timeout at NCCL work: W,`) or `... last enqueued work: E, last completed work: C` (2.7+).
struct WatchdogStatus {
  std::int64_t last_enqueued = -1;
  std::int64_t last_completed = -1;
};
Match ParseWatchdogStatus(std::string_view message, WatchdogStatus* out);

// glog-style Python header `<L><MM><DD> hh:mm:ss.uuuuuu <pid> <path>.py:<line>] <message>`
// (month zero-padded, no year; `time` is in kPlaceholderYear).
struct GlogHeader {
  char severity = 0;
  TimeNs time = 0;
  std::int64_t pid = 0;
  std::string_view source;  // torch/distributed/elastic/multiprocessing/api.py
  std::string_view message;
};
Match ParseGlogHeader(std::string_view line, GlogHeader* out);

// Agent messages (the text after the glog header).
struct WorkerFailedFields {
  std::int32_t exit_code = 0;
  std::int32_t local_rank = -1;
  std::int64_t pid = 0;
};
Match ParseWorkerFailed(std::string_view message, WorkerFailedFields* out);
Match ParseWorkerSignalled(std::string_view message, std::int64_t* pid, std::string_view* signal);

// ChildFailedError table field `  <name> : <value>` (name padded with spaces).
struct TableField {
  std::string_view name;
  std::string_view value;
};
bool SplitTableField(std::string_view line, TableField* out);
bool ParseTableTime(std::string_view value, TimeNs* out);  // 2026-03-02_09:17:03
bool ParseRankField(std::string_view value, std::int32_t* rank, std::int32_t* local_rank);
bool ParseExitcodeField(std::string_view value, std::int32_t* exit_code, std::int64_t* pid);
// `[<k>]:` opening a table entry.
bool IsTableEntryStart(std::string_view line);

// Megatron ` [YYYY-MM-DD hh:mm:ss] iteration <i>/<N> | ...`.
// A key=value step line of a trainer (`rank=2 step=8/20 loss=10.1 data_ms=1502.4 step_ms=1760.0`,
// corpora/real/FORMATS-OBSERVED.md): the step, the total when printed, and the two durations in
// microseconds (`data_ms`: the rank's own time before the step's collectives, `step_ms`: the
// whole step). kNo unless `step=`, `data_ms=` and `step_ms=` are all there.
struct StepMetricsFields {
  std::int64_t step = -1;
  std::int64_t total = 0;
  std::int64_t data_us = -1;
  std::int64_t step_us = -1;
};
Match ParseStepMetrics(std::string_view msg, StepMetricsFields* out);

// The date of the last stamp ParseIteration read: the lines of a run share it, so only their
// time of day is read (the result is what ParseRfc3339 gives).
struct IterationStampCache {
  char date[10] = {};
  TimeNs midnight = 0;
  bool valid = false;
};
Match ParseIteration(std::string_view line, TimeNs* time, std::int64_t* iteration,
                     std::int64_t* total, IterationStampCache* cache = nullptr);

// `<host>:<pid>:<tid> [<dev>] NCCL INFO comm 0x.. rank r nranks n cudaDev d ... commId 0x..
// - Init COMPLETE`.
struct CommInitFields {
  std::string_view comm_id;
  std::int32_t comm_rank = -1;
  std::int32_t nranks = 0;
  std::int32_t cuda_dev = -1;
  std::string_view bus_id;  // NCCL's packed PCI id: `9b000` is 0000:9b:00.0; empty when absent
};
Match ParseCommInit(std::string_view line, CommInitFields* out);

// The last line of a Python traceback: `RuntimeError: message`, `torch.OutOfMemoryError: ..`.
bool ParsePythonErrorLine(std::string_view line, std::string_view* type);

// The message with numbers and ids masked (`<n>`, `<hex>`), for grouping similar errors: cut
// after kMaxSignature bytes (a mask that starts before the cut is kept whole).
inline constexpr std::size_t kMaxSignature = 240;
struct SignatureBuffer {
  char text[kMaxSignature + 8];  // a mask may start below the cap and end past it
};
// Into `buffer` (the view points there): a parse masks each error's message and interns it,
// with no string made per event.
std::string_view MaskSignature(std::string_view message, SignatureBuffer* buffer);
std::string MaskSignature(std::string_view message);

}  // namespace denpex::engine
