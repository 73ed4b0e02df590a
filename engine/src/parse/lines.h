// Recognisers for single log lines (docs/log_formats.md §2–§6). Pure functions over a
// string_view: no allocation, no state. Each returns kNo when the line is not of its shape,
// kYes when it parsed, and kMalformed when the line clearly has the shape but a field does
// not parse (the caller counts it and moves on).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
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
  bool has_year = false;  // the stamp carries its year (glog >= 0.6: `W20261202`)
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
// A loopback name (`localhost`, `localhost.localdomain`, `127.0.0.1`, `::1`): what torchrun's
// table prints as `host :` (socket.getfqdn()) where /etc/hosts maps 127.0.0.1 to localhost
// first. It names the machine the line was written on, not which one: no host.
bool IsLoopbackName(std::string_view host);
bool ParseRankField(std::string_view value, std::int32_t* rank, std::int32_t* local_rank);
bool ParseExitcodeField(std::string_view value, std::int32_t* exit_code, std::int64_t* pid);
// `[<k>]:` opening a table entry.
bool IsTableEntryStart(std::string_view line);

// A key=value step line of a trainer (`rank=2 step=8/20 loss=10.1 data_ms=1502.4 step_ms=1760.0`,
// corpora/real/FORMATS-OBSERVED.md): the step, the total when printed, and the two durations in
// microseconds (`data_ms`: the rank's own time before the step's collectives, `step_ms`: the
// whole step). kNo unless `step=`, `data_ms=` and `step_ms=` are all there.
struct StepMetricsFields {
  std::int64_t step = -1;
  std::int64_t total = 0;
  std::int64_t data_us = -1;
  std::int64_t step_us = -1;
  std::int64_t rank = -1;  // `rank=<R>`: the line's own word on whose step it is
};
Match ParseStepMetrics(std::string_view msg, StepMetricsFields* out);

// The next `key=value` word of `*msg` (words split at spaces; a word without `=` is passed
// over), consumed from `*msg`; false when none is left. Shared by the `key=value` step lines'
// readers (ParseStepMetrics, the metrics reader's).
inline bool NextKeyValue(std::string_view* msg, std::string_view* key, std::string_view* value) {
  while (!msg->empty()) {
    const std::size_t sp = msg->find(' ');
    const std::string_view token = msg->substr(0, sp);
    *msg = sp == std::string_view::npos ? std::string_view() : msg->substr(sp + 1);
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos) continue;
    *key = token.substr(0, eq);
    *value = token.substr(eq + 1);
    return true;
  }
  return false;
}

// Where a second record starts inside `line`, or npos. Writers that share one descriptor and
// write a line in two calls (python -u, PYTHONUNBUFFERED=1: print() writes its text, then its
// newline) glue one writer's line to the other's and leave a newline alone on the next line:
//   `2026-12-05 12:56:27.826 rank=0 step=2/40 ... step_ms=110.62026-12-05 12:56:27.826 rank=1 ...`
// The second record starts with the date of the line's first date and time (ScanDateTime's:
// `YYYY-MM-DD hh:mm:ss`, a `T` or `_` between them) right after the end of a word: not after a
// space, a quote, a bracket, `=`, `/`, `-`, `_`, `:` or `,`, which put a date inside a message.
std::size_t GluedRecord(std::string_view line);

// The date of the last stamp ParseIteration read: the lines of a run share it, so only their
// time of day is read (the result is what ParseRfc3339 gives).
struct IterationStampCache {
  char date[10] = {};
  TimeNs midnight = 0;
  bool valid = false;
};
// Megatron ` [YYYY-MM-DD hh:mm:ss] iteration <i>/<N> | ...`.
Match ParseIteration(std::string_view line, TimeNs* time, std::int64_t* iteration,
                     std::int64_t* total, IterationStampCache* cache = nullptr);

namespace quick_iteration {
inline std::uint64_t Load8(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
constexpr std::uint64_t kOnes = 0x0101010101010101;
// Bit 7 of each byte of `d` (bytes minus '0') that was not a digit; a carry out of a byte >= 0x8a
// may mark the byte after it too: only bytes up to the first non-digit are read.
constexpr std::uint64_t NotDigits(std::uint64_t d) { return ((d + kOnes * 0x76) | d) & (kOnes * 0x80); }
// `spaces digits` at line[*i] (1 to 7 digits and a byte after them in the line); false: not that.
inline bool Number(std::string_view line, std::size_t* i, std::int64_t* v) {
  std::size_t at = *i;
  while (at < line.size() && line[at] == ' ') ++at;
  if (at + 8 > line.size()) return false;
  const std::uint64_t d = Load8(line.data() + at) ^ (kOnes * '0');
  const std::uint64_t stop = NotDigits(d);
  const auto n = static_cast<unsigned>(std::countr_zero(stop)) / 8;  // 8: no stop (countr_zero(0) = 64)
  if (n == 0 || n == 8) return false;
  std::uint64_t x = d << (8 * (8 - n));  // the digits in the top bytes, zeros below them
  x = x * 10 + (x >> 8);                 // pairs
  x = (((x & 0x000000ff000000ff) * (100 + (1000000ULL << 32))) + (((x >> 16) & 0x000000ff000000ff) * (1 + (10000ULL << 32)))) >> 32;
  *v = static_cast<std::int64_t>(x);
  *i = at + n;
  return true;
}
}  // namespace quick_iteration

// ParseIteration's common case, inlined where progress lines are read: ` [<date> hh:mm:ss]
// iteration <i>/<n>` with the cached date and numbers of up to 7 digits, read 8 bytes a step.
// True: what ParseIteration gives; false: not that case (ParseIteration decides). Inlined, it
// saves most of the call's cost on a progress line, the commonest line of a large job.
inline bool IterationFast(std::string_view line, const IterationStampCache& cache, TimeNs* time,
                           std::int64_t* iteration, std::int64_t* total) {
  using namespace quick_iteration;
  constexpr std::size_t kWordAt = 21, kNumbersAt = 33;  // " [" + 19-byte stamp; "] iteration " is 12 bytes
  if (!cache.valid || line.size() < kNumbersAt + 3) return false;
  const char* p = line.data();
  std::uint64_t date_a, date_b;
  std::memcpy(&date_a, cache.date, 8);
  std::memcpy(&date_b, cache.date + 2, 8);
  if (((p[0] ^ ' ') | (p[1] ^ '[') | (p[12] != 'T' && p[12] != ' ')) != 0 ||
      ((Load8(p + 2) ^ date_a) | (Load8(p + 4) ^ date_b) | (Load8(p + kWordAt) ^ Load8("] iteration ")) |
       (Load8(p + kWordAt + 4) ^ Load8("] iteration " + 4))) != 0) {
    return false;
  }
  const std::uint64_t d = Load8(p + 13) ^ 0x30303a30303a3030;  // hh:mm:ss: digits -> 0..9, colons -> 0
  if ((NotDigits(d) | (d & 0x0000ff0000ff0000)) != 0) return false;
  const std::uint64_t pairs = d * 10 + (d >> 8);  // bytes 0, 3, 6: hours, minutes, seconds
  const auto h = static_cast<std::int64_t>(pairs & 0xff), m = static_cast<std::int64_t>(pairs >> 24 & 0xff),
             sec = static_cast<std::int64_t>(pairs >> 48 & 0xff);
  if (h > 23 || m > 59 || sec > 60) return false;
  std::size_t i = kNumbersAt;
  std::int64_t it, n;
  if (!Number(line, &i, &it) || line[i] != '/') return false;
  ++i;
  if (!Number(line, &i, &n)) return false;
  *time = cache.midnight + (h * 3600 + m * 60 + sec) * kNsPerSec;
  *iteration = it;
  *total = n;
  return true;
}

// `<host>:<pid>:<tid> [<dev>] NCCL INFO comm 0x.. rank r nranks n cudaDev d ... commId 0x..
// - Init COMPLETE`; NCCL 2.21 and later name the call first (`ncclCommInitRank comm 0x..`,
// `ncclCommInitRankConfig`, `ncclCommSplit ... parent 0x.. color c key k commId 0x..`). NCCL 2.23
// and later print a split communicator's line without its commId (`parent 0x.. splitCount s color
// c key k - Init COMPLETE`): nothing in it names the communicator across ranks, so it is not read
// (Match::kMalformed).
struct CommInitFields {
  std::string_view comm_id;
  std::int32_t comm_rank = -1;
  std::int32_t nranks = 0;
  std::int32_t cuda_dev = -1;
  std::string_view bus_id;  // NCCL's packed PCI id: `9b000` is 0000:9b:00.0; empty when absent
};
Match ParseCommInit(std::string_view line, CommInitFields* out);
// `text` past the name of the call NCCL 2.21 and later put before `comm 0x..` (`ncclCommInitRank `,
// `ncclCommSplit `, ...); `text` itself where it starts with no such name.
std::string_view PastCommCall(std::string_view text);

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
