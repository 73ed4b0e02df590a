// Version profiles: everything about a line's shape that differs between torch, NCCL and
// Slurm releases, kept as data so that adding a release is adding rows. Two kinds of table:
// the profiles here (one row per release: source line numbers, prefix styles, stack frames,
// tracebacks), and each line family's own table of wordings beside its formatter
// (`VersionRow`s: one row per range of releases, found with `RowFor`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

namespace denpex::sim {

// A release as one number that orders releases: "2.21.5" -> 2'021'005, "2.4" -> 2'004'000,
// "" -> 0 (major, minor, patch, each below 1000; anything after them, "+cuda12.4", ignored).
// `missing` stands for the parts the name leaves out: 999 makes "2.18" the last 2.18.x.
constexpr std::uint32_t ReleaseNumber(std::string_view name, std::uint32_t missing = 0) {
  std::uint32_t parts[3] = {0, missing, missing};
  std::size_t part = 0;
  for (const char c : name) {
    if (c == '.' && ++part < 3) {
      parts[part] = 0;
      continue;
    }
    if (c < '0' || c > '9' || part >= 3) break;
    parts[part] = parts[part] * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return parts[0] * 1'000'000 + parts[1] * 1'000 + parts[2];
}

// The releases one row of a line table covers, `from` through `through` inclusive, each
// naming as many parts as it needs ("2.18" through covers 2.18.5; "" from: every older
// release; "" through: every later one).
struct Releases {
  constexpr Releases(std::string_view from, std::string_view through)
      : first(ReleaseNumber(from)),
        last(through.empty() ? std::numeric_limits<std::uint32_t>::max()
                             : ReleaseNumber(through, 999)) {}
  constexpr bool Covers(std::uint32_t release) const { return release >= first && release <= last; }
  std::uint32_t first, last;
};

// One row of a line family's table: what its lines read (`Shape`: format strings, source
// lines, names) in a range of releases. A table lists its rows oldest first, and the rows
// cover every release the family's profile knows once (`CoversEach`).
template <typename Shape>
struct VersionRow {
  Releases releases;
  Shape shape;
};

// The shape of the row that covers `release` (a profile's name: "2.4", "2.21.5", "23.02");
// a release no row covers gets the newest row.
template <typename Shape, std::size_t N>
constexpr const Shape& RowFor(const VersionRow<Shape> (&table)[N], std::string_view release) {
  const std::uint32_t number = ReleaseNumber(release);
  for (const VersionRow<Shape>& row : table) {
    if (row.releases.Covers(number)) return row.shape;
  }
  return table[N - 1].shape;
}

// The releases each profile table knows, for the line tables' static checks
// (profiles.cc asserts that they match the profiles).
inline constexpr std::string_view kTorchReleases[] = {"1.13", "2.1", "2.4", "2.6"};
inline constexpr std::string_view kNcclReleases[] = {"2.18.5", "2.21.5", "2.24.3",
                                                     "2.26.2", "2.28.9", "2.29.2"};
inline constexpr std::string_view kSlurmReleases[] = {"22.05", "23.02"};

// Whether exactly one row of `table` covers each of `releases` (a line table's
// static_assert: no release falls between rows or under two).
template <typename Shape, std::size_t N, std::size_t M>
constexpr bool CoversEach(const VersionRow<Shape> (&table)[N],
                          const std::string_view (&releases)[M]) {
  for (const std::string_view release : releases) {
    int rows = 0;
    for (const VersionRow<Shape>& row : table) rows += row.releases.Covers(ReleaseNumber(release));
    if (rows != 1) return false;
  }
  return true;
}

// How a c10 (C++) log line starts (docs/log_formats.md §2).
enum class C10Header : std::uint8_t {
  kRankPrefixedTimestamped,  // torch >= 2.4: "[rank<G>]:[E302 09:10:36.123456789 File.cpp:607] "
  kSeverityAndFile,          // torch <= 2.3: "[E ProcessGroupNCCL.cpp:475] "
};

// How ProcessGroupNCCL names its process group (docs/log_formats.md §3).
enum class PgPrefix : std::uint8_t {
  kUidAndDescription,  // torch 2.4: "[PG <uid> (<desc>) Rank <r>]", "[PG <uid> Rank <r>]"
  kRankOnly,           // torch <= 2.2: "[Rank <r>]"
  kIdAndGuid,          // torch 2.5-2.6: "[PG ID <uid> PG GUID <uid>(<desc>) Rank <r>]"
};

// How the torchrun agent's Python logging starts a line (docs/log_formats.md §6).
enum class AgentLogStyle : std::uint8_t {
  kGlog,       // torch >= 2.2: "W0302 09:00:00.512000 139872 torch/distributed/run.py:779] "
  kBracketed,  // torch 2.1: "[2026-03-02 09:00:00,512] torch.distributed.run: [WARNING] "
  kLogger,     // torch <= 2.0: "WARNING:torch.distributed.run:"
};

// Shared objects whose load addresses appear in native stack frames.
enum class NativeLibrary : std::uint8_t { kC10, kTorchCuda, kStdCxx, kLibc, kCount };

struct NativeFrame {
  std::string_view symbol;  // "c10::Error::Error(c10::SourceLocation, std::string) + 0x96"
  NativeLibrary library;
  std::uint64_t offset;  // address minus the library's load address
};

struct PythonFrame {
  std::string_view file;  // absolute, or relative to TorchProfile::python_lib
  int line;
  std::string_view function;
  std::string_view code;
};

struct TorchProfile {
  std::string_view name;  // "2.4"
  bool supported;         // false: known release whose shapes are not implemented yet
  C10Header c10_header;
  PgPrefix pg_prefix;
  // ProcessGroupNCCL.cpp lines of the watchdog block, in print order.
  int line_watchdog_timeout;     // "Watchdog caught collective operation timeout"
  int line_exception_detected;   // "Exception (either an error or timeout) detected ..."
  int line_some_ops_failed;      // "Some NCCL operations have failed or timed out. ..."
  int line_taking_down;          // "To avoid data inconsistency, ..."
  int line_thread_terminated;    // "Process group watchdog thread terminated with exception"
  int line_check_timeout_raise;  // "Exception raised from checkTimeout at ...:<line>"
  std::span<const NativeFrame> watchdog_frames;
  std::string_view native_lib_paths[static_cast<int>(NativeLibrary::kCount)];
  // torchrun agent (Python): file:line of the banner, SIGTERM and failure lines.
  int line_run_banner;          // torch/distributed/run.py
  int line_api_sigterm;         // torch/distributed/elastic/multiprocessing/api.py
  int line_api_failed;          // same file
  std::string_view python_lib;  // "/usr/local/lib/python3.10/dist-packages"
  // What starts every line of an uncaught exception's traceback ({0} the global rank):
  // "[rank{0}]: " from torch 2.2, "" before.
  std::string_view traceback_prefix;
  std::span<const PythonFrame> torchrun_traceback;
  // "terminate called after throwing an instance of '<class>'" (the watchdog block's words by
  // release are formatter_watchdog.cc's kWatchdogWords).
  std::string_view exception_class;  // "c10::DistBackendError", "std::runtime_error"
  // The NCCL call that makes a process group's communicator (ProcessGroupNCCL via
  // NCCLComm::create): `ncclCommInitRankConfig` from torch 2.0 (NCCL >= 2.14), `ncclCommInitRank`
  // before. NCCL 2.23 and later print its name in the communicator's lines (formatter_nccl.cc).
  std::string_view nccl_init_call = "ncclCommInitRankConfig";
  AgentLogStyle agent_style;
  // Flight recorder (TORCH_NCCL_DUMP_ON_TIMEOUT, torch >= 2.4): ProcessGroupNCCL.cpp lines of
  // "Stack trace of the failed collective not found", "First PG on this rank to signal
  // dumping.", "Received a dump signal ..." and "ProcessGroupNCCL preparing to dump debug
  // info."; 0: the profile has no flight recorder.
  int line_trace_not_found = 0;
  int line_first_pg_dump = 0;
  int line_dump_signal = 0;
  int line_preparing_dump = 0;
  // Async error handling and blocking wait (docs/log_formats.md §3).
  int default_async_error_handling = 3;  // 3 SkipCleanUp (>= 2.2); 1 before (torchrun's)
  bool skip_cleanup_mode = true;         // mode 3 exists (not in 1.13)
  // The source line of "Work WorkNCCL(...) timed out in blocking wait...".
  int line_blocking_wait = 0;
  // Python classes of what the main thread raises: the timeout itself (blocking wait) and
  // "NCCL communicator was aborted on rank r." (mode 2).
  std::string_view timeout_error_class;  // "torch.distributed.DistBackendError", "RuntimeError"
  std::string_view aborted_error_class;
  // Heartbeat monitor (torch >= 2.4; 0: none): "Heartbeat monitor timed out!", "First PG on
  // this rank that detected no heartbeat of its watchdog.", the fatal "watchdog got stuck",
  // "Observed flight recorder dump signal from another rank via TCPStore.".
  int line_heartbeat_timeout = 0;
  int line_no_heartbeat_first_pg = 0;
  int line_watchdog_stuck = 0;
  int line_observed_dump = 0;
  // FSDP1's FlatParameter checks: flat_param.py's _init_flat_param ("`FlatParameter` requires
  // uniform dtype but got ...", 1.13-2.0) rather than _flat_param.py's
  // _validate_tensors_to_flatten ("Must flatten tensors with uniform dtype ...", 2.1+).
  bool fsdp_flat_param_wording = false;
  // The autograd fallback's UserWarning when a backward pass runs through c10d::allreduce_ (the
  // fallback warns since torch 2.1; empty: the release prints nothing): Python's warnings
  // module's "<file>:<line>" of the backward call (relative to python_lib), the source line it
  // echoes, and the C++ site of "(Triggered internally at ...)".
  std::string_view autograd_warning_site;    // "torch/autograd/graph.py:768"
  std::string_view autograd_warning_source;  // "  return Variable._execution_engine.run_backward(..."
  std::string_view autograd_fallback_site;   // "../torch/csrc/autograd/autograd_not_implemented_fallback.cpp:63"
  // ProcessGroupNCCL::barrier's "using GPU <n> to perform barrier as devices used by this
  // process are currently unknown" (docs/log_formats.md §13): its ProcessGroupNCCL.cpp line
  // where the release logs it with LOG(WARNING) (2.5+); 0 where it is LOG(INFO) (<= 2.4),
  // which the default TORCH_CPP_LOG_LEVEL (WARNING) hides: those ranks print nothing.
  int line_barrier_device = 0;
  bool barrier_device_spaced = false;  // 2.6: "incorrect. Specify ...device, or call ..."
};

struct NcclProfile {
  std::string_view name;  // "2.21.5"
  bool supported;
  std::string_view version_banner;  // "NCCL version 2.21.5+cuda12.4"
  std::string_view net_plugin;      // the "NET/Plugin..." line's text after "NCCL INFO "
  std::string_view p2p_transport;   // intra-node channel transport: "P2P/CUMEM/read"
  int cuda_driver;                  // "cudaDriverVersion <n>"
  // transport/net_socket.cc line of persistentSocketThread's "NET/Socket : socket progress
  // error" WARN (2.16-2.18 source: 214; 2.19-2.21 adds three net-properties lines: 217).
  int line_socket_progress_error;
  // Where its WARNs are printed (`<file>:<line>`: the WARN call's first line in the tag's source;
  // builds by older compilers print the call's last): the IB transport's failed completion, the
  // socket's reset (status 12) and close (status 5), the bootstrap connect that timed out.
  std::string_view ib_completion_site, socket_reset_site, socket_closed_site, connect_timeout_site;
  // The IB async thread's WARN of a device event (`port error`).
  std::string_view ib_async_site;
};

// Wording that changed between Slurm releases (docs/log_formats.md §10).
struct SlurmProfile {
  std::string_view name;              // "23.02"
  std::string_view terminating_step;  // srun's line when KillOnBadExit ends the step
  std::string_view node_failure;      // slurmstepd's " DUE TO NODE FAILURE..." suffix
};

// nullptr when the name is not a known release at all.
const TorchProfile* FindTorchProfile(std::string_view name);
const NcclProfile* FindNcclProfile(std::string_view name);
const SlurmProfile* FindSlurmProfile(std::string_view name);

// Names for hints: the releases the formatters implement.
std::string_view SupportedTorchProfiles();  // "\"2.4\""
std::string_view SupportedNcclProfiles();   // "\"2.21.5\""
std::string_view SupportedSlurmProfiles();  // "\"22.05\", \"23.02\""

}  // namespace denpex::sim
