// The version profile tables. Line numbers are those printed by the named release (see
// docs/log_formats.md for where they come from).
#include "profiles.h"

namespace denpex::sim {

namespace {

// The watchdog thread's stack as torch 2.4.x prints it under "Exception raised from
// checkTimeout". Offsets are plausible fixed positions within each library; the library
// load address is drawn per process (ASLR).
constexpr NativeFrame kWatchdogFrames24[] = {
    {"c10::Error::Error(c10::SourceLocation, std::string) + 0x96", NativeLibrary::kC10, 0x96897},
    {"c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
     "std::ratio<1l, 1000l> > >) + 0x1d2",
     NativeLibrary::kTorchCuda, 0x1031a92},
    {"c10d::ProcessGroupNCCL::watchdogHandler() + 0x233", NativeLibrary::kTorchCuda, 0x1038873},
    {"c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c", NativeLibrary::kTorchCuda, 0x1039b1c},
    {"<unknown function> + 0xdc253", NativeLibrary::kStdCxx, 0xdc253},
    {"<unknown function> + 0x94ac3", NativeLibrary::kLibc, 0x94ac3},
    {"clone + 0x44", NativeLibrary::kLibc, 0x126850},
};

// What Python prints when ChildFailedError escapes torchrun's main (torch 2.4.x).
constexpr PythonFrame kTorchrunTraceback24[] = {
    {"/usr/local/bin/torchrun", 8, "<module>", "sys.exit(main())"},
    {"torch/distributed/elastic/multiprocessing/errors/__init__.py", 348, "wrapper",
     "return f(*args, **kwargs)"},
    {"torch/distributed/run.py", 901, "main", "run(args)"},
    {"torch/distributed/run.py", 892, "run", "elastic_launch("},
    {"torch/distributed/launcher/api.py", 133, "__call__",
     "return launch_agent(self._config, self._entrypoint, list(args))"},
    {"torch/distributed/launcher/api.py", 264, "launch_agent", "raise ChildFailedError("},
};

// torch 2.6.x: same frames, other offsets.
constexpr NativeFrame kWatchdogFrames26[] = {
    {"c10::Error::Error(c10::SourceLocation, std::string) + 0x96", NativeLibrary::kC10, 0x99a96},
    {"c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
     "std::ratio<1l, 1000l> > >) + 0x2b0",
     NativeLibrary::kTorchCuda, 0x11f7c40},
    {"c10d::ProcessGroupNCCL::watchdogHandler() + 0x617", NativeLibrary::kTorchCuda, 0x11fa4e7},
    {"c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d", NativeLibrary::kTorchCuda, 0x11fbc6d},
    {"<unknown function> + 0xecdb4", NativeLibrary::kStdCxx, 0xecdb4},
    {"<unknown function> + 0x9caa4", NativeLibrary::kLibc, 0x9caa4},
    {"<unknown function> + 0x129c3c", NativeLibrary::kLibc, 0x129c3c},
};

constexpr PythonFrame kTorchrunTraceback26[] = {
    {"/usr/local/bin/torchrun", 8, "<module>", "sys.exit(main())"},
    {"torch/distributed/elastic/multiprocessing/errors/__init__.py", 355, "wrapper",
     "return f(*args, **kwargs)"},
    {"torch/distributed/run.py", 918, "main", "run(args)"},
    {"torch/distributed/run.py", 909, "run", "elastic_launch("},
    {"torch/distributed/launcher/api.py", 138, "__call__",
     "return launch_agent(self._config, self._entrypoint, list(args))"},
    {"torch/distributed/launcher/api.py", 269, "launch_agent", "raise ChildFailedError("},
};

constexpr PythonFrame kTorchrunTraceback21[] = {
    {"/usr/local/bin/torchrun", 8, "<module>", "sys.exit(main())"},
    {"torch/distributed/elastic/multiprocessing/errors/__init__.py", 346, "wrapper",
     "return f(*args, **kwargs)"},
    {"torch/distributed/run.py", 806, "main", "run(args)"},
    {"torch/distributed/run.py", 797, "run", "elastic_launch("},
    {"torch/distributed/launcher/api.py", 134, "__call__",
     "return launch_agent(self._config, self._entrypoint, list(args))"},
    {"torch/distributed/launcher/api.py", 264, "launch_agent", "raise ChildFailedError("},
};

constexpr PythonFrame kTorchrunTraceback113[] = {
    {"/usr/local/bin/torchrun", 8, "<module>", "sys.exit(main())"},
    {"torch/distributed/elastic/multiprocessing/errors/__init__.py", 346, "wrapper",
     "return f(*args, **kwargs)"},
    {"torch/distributed/run.py", 762, "main", "run(args)"},
    {"torch/distributed/run.py", 753, "run", "elastic_launch("},
    {"torch/distributed/launcher/api.py", 132, "__call__",
     "return launch_agent(self._config, self._entrypoint, list(args))"},
    {"torch/distributed/launcher/api.py", 246, "launch_agent", "raise ChildFailedError("},
};

// The source line Python's warnings module echoes under the autograd fallback's UserWarning:
// torch.autograd.backward's own call (2.1, 2.2: autograd/__init__.py), then graph.py's
// _engine_run_backward (2.3+), which returns it.
constexpr std::string_view kRunBackwardCall =
    "  Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass";
constexpr std::string_view kRunBackwardReturn =
    "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward "
    "pass";

constexpr TorchProfile kTorchProfiles[] = {
    {.name = "2.4",
     .supported = true,
     .c10_header = C10Header::kRankPrefixedTimestamped,
     .pg_prefix = PgPrefix::kUidAndDescription,
     .line_watchdog_timeout = 607,
     .line_exception_detected = 1664,
     .line_some_ops_failed = 621,
     .line_taking_down = 627,
     .line_thread_terminated = 1515,
     .line_check_timeout_raise = 609,
     .watchdog_frames = kWatchdogFrames24,
     .native_lib_paths = {"/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so",
                          "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so",
                          "/lib/x86_64-linux-gnu/libstdc++.so.6",
                          "/lib/x86_64-linux-gnu/libc.so.6"},
     .line_run_banner = 779,
     .line_api_sigterm = 858,
     .line_api_failed = 833,
     .python_lib = "/usr/local/lib/python3.10/dist-packages",
     .traceback_prefix = "[rank{0}]: ",
     .torchrun_traceback = kTorchrunTraceback24,
     .exception_class = "c10::DistBackendError",
     .agent_style = AgentLogStyle::kGlog,
     // As printed by a torch 2.7 build (public logs); 2.4-2.6 builds print nearby numbers.
     .line_trace_not_found = 670,
     .line_first_pg_dump = 2106,
     .line_dump_signal = 1746,
     .line_preparing_dump = 1536,
     .default_async_error_handling = 3,
     .skip_cleanup_mode = true,
     .line_blocking_wait = 1390,
     .timeout_error_class = "torch.distributed.DistBackendError",
     .aborted_error_class = "torch.distributed.DistBackendError",
     .line_heartbeat_timeout = 1424,
     .line_no_heartbeat_first_pg = 1417,
     .line_watchdog_stuck = 1266,
     .line_observed_dump = 1382,
     .autograd_warning_site = "torch/autograd/graph.py:768",
     .autograd_warning_source = kRunBackwardReturn,
     .autograd_fallback_site = "../torch/csrc/autograd/autograd_not_implemented_fallback.cpp:63"},
    {.name = "2.6",
     .supported = true,
     .c10_header = C10Header::kRankPrefixedTimestamped,
     .pg_prefix = PgPrefix::kIdAndGuid,
     .line_watchdog_timeout = 616,
     .line_exception_detected = 1785,
     .line_some_ops_failed = 630,
     .line_taking_down = 636,
     .line_thread_terminated = 1601,
     .line_check_timeout_raise = 618,
     .watchdog_frames = kWatchdogFrames26,
     .native_lib_paths = {"/usr/local/lib/python3.12/dist-packages/torch/lib/libc10.so",
                          "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so",
                          "/lib/x86_64-linux-gnu/libstdc++.so.6",
                          "/lib/x86_64-linux-gnu/libc.so.6"},
     .line_run_banner = 792,
     .line_api_sigterm = 897,
     .line_api_failed = 869,
     .python_lib = "/usr/local/lib/python3.12/dist-packages",
     .traceback_prefix = "[rank{0}]: ",
     .torchrun_traceback = kTorchrunTraceback26,
     .exception_class = "c10::DistBackendError",
     .agent_style = AgentLogStyle::kGlog,
     // As printed by a torch 2.7 build (public logs); 2.4-2.6 builds print nearby numbers.
     .line_trace_not_found = 670,
     .line_first_pg_dump = 2106,
     .line_dump_signal = 1746,
     .line_preparing_dump = 1536,
     .default_async_error_handling = 3,
     .skip_cleanup_mode = true,
     .line_blocking_wait = 712,
     .timeout_error_class = "torch.distributed.DistBackendError",
     .aborted_error_class = "torch.distributed.DistBackendError",
     .line_heartbeat_timeout = 1529,
     .line_no_heartbeat_first_pg = 1522,
     .line_watchdog_stuck = 1347,
     .line_observed_dump = 1922,
     .autograd_warning_site = "torch/autograd/graph.py:823",
     .autograd_warning_source = kRunBackwardReturn,
     .autograd_fallback_site =
         "/pytorch/torch/csrc/autograd/autograd_not_implemented_fallback.cpp:62",
     // Real 2.6.0 logs (pytorch#144599, deepspeedai/DeepSpeed#7266): LOG(WARNING) at 4561,
     // the product string's missing spaces fixed.
     .line_barrier_device = 4561,
     .barrier_device_spaced = true},
    {.name = "2.1",
     .supported = true,
     .c10_header = C10Header::kSeverityAndFile,
     .pg_prefix = PgPrefix::kRankOnly,
     .line_watchdog_timeout = 475,
     .line_exception_detected = 0,
     .line_some_ops_failed = 489,
     .line_taking_down = 495,
     .line_thread_terminated = 916,
     .line_check_timeout_raise = 0,
     .watchdog_frames = {},
     .native_lib_paths = {},
     .line_run_banner = 0,
     .line_api_sigterm = 0,
     .line_api_failed = 0,
     .python_lib = "/usr/local/lib/python3.10/dist-packages",
     .traceback_prefix = "",
     .torchrun_traceback = kTorchrunTraceback21,
     .exception_class = "std::runtime_error",
     .agent_style = AgentLogStyle::kBracketed,
     .default_async_error_handling = 1,
     .skip_cleanup_mode = true,
     .line_blocking_wait = 568,
     .timeout_error_class = "RuntimeError",
     .aborted_error_class = "torch.distributed.DistBackendError",
     .autograd_warning_site = "torch/autograd/__init__.py:251",
     .autograd_warning_source = kRunBackwardCall,
     .autograd_fallback_site = "../torch/csrc/autograd/autograd_not_implemented_fallback.cpp:63"},
    {.name = "1.13",
     .supported = true,
     .c10_header = C10Header::kSeverityAndFile,
     .pg_prefix = PgPrefix::kRankOnly,
     .line_watchdog_timeout = 737,
     .line_exception_detected = 0,
     .line_some_ops_failed = 414,
     .line_taking_down = 0,
     .line_thread_terminated = 0,
     .line_check_timeout_raise = 0,
     .watchdog_frames = {},
     .native_lib_paths = {},
     .line_run_banner = 0,
     .line_api_sigterm = 0,
     .line_api_failed = 0,
     .python_lib = "/usr/local/lib/python3.8/dist-packages",
     .traceback_prefix = "",
     .torchrun_traceback = kTorchrunTraceback113,
     .exception_class = "std::runtime_error",
     .nccl_init_call = "ncclCommInitRank",
     .agent_style = AgentLogStyle::kLogger,
     .default_async_error_handling = 1,
     .skip_cleanup_mode = false,
     .line_blocking_wait = 460,
     .timeout_error_class = "RuntimeError",
     .aborted_error_class = "RuntimeError",
     .fsdp_flat_param_wording = true},
};

constexpr NcclProfile kNcclProfiles[] = {
    // 2.24 on: the releases with RAS (scenario `nccl_ras`). Their plugin line is plugin_open.cc's
    // from 2.26 ("internal net plugin"); net_socket.cc's WARN line from each tag's source.
    {.name = "2.29.2",
     .supported = true,
     .version_banner = "NCCL version 2.29.2+cuda12.9",
     .net_plugin = "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.",
     .p2p_transport = "P2P/CUMEM/read",
     .cuda_driver = 12090,
     .line_socket_progress_error = 267,
     .ib_completion_site = "transport/net_ib/p2p.cc:550",
     .socket_reset_site = "os/linux.cc:267",
     .socket_closed_site = "misc/socket.cc:34",
     .connect_timeout_site = "os/linux.cc:199",
     .ib_async_site = "transport/net_ib/common.cc:88"},
    {.name = "2.28.9",
     .supported = true,
     .version_banner = "NCCL version 2.28.9+cuda12.9",
     .net_plugin = "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.",
     .p2p_transport = "P2P/CUMEM/read",
     .cuda_driver = 12090,
     .line_socket_progress_error = 266,
     .ib_completion_site = "transport/net_ib.cc:2543",
     .socket_reset_site = "misc/socket.cc:46",
     .socket_closed_site = "misc/socket.cc:71",
     .connect_timeout_site = "misc/socket.cc:582",
     .ib_async_site = "transport/net_ib.cc:253"},
    {.name = "2.26.2",
     .supported = true,
     .version_banner = "NCCL version 2.26.2+cuda12.8",
     .net_plugin = "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.",
     .p2p_transport = "P2P/CUMEM/read",
     .cuda_driver = 12080,
     .line_socket_progress_error = 253,
     .ib_completion_site = "transport/net_ib.cc:2358",
     .socket_reset_site = "misc/socket.cc:46",
     .socket_closed_site = "misc/socket.cc:71",
     .connect_timeout_site = "misc/socket.cc:544",
     .ib_async_site = "transport/net_ib.cc:179"},
    {.name = "2.24.3",
     .supported = true,
     .version_banner = "NCCL version 2.24.3+cuda12.6",
     .net_plugin = "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
     .p2p_transport = "P2P/CUMEM/read",
     .cuda_driver = 12060,
     .line_socket_progress_error = 225,
     .ib_completion_site = "transport/net_ib.cc:2244",
     .socket_reset_site = "misc/socket.cc:46",
     .socket_closed_site = "misc/socket.cc:71",
     .connect_timeout_site = "misc/socket.cc:543",
     .ib_async_site = "transport/net_ib.cc:173"},
    {.name = "2.21.5",
     .supported = true,
     .version_banner = "NCCL version 2.21.5+cuda12.4",
     .net_plugin = "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
     .p2p_transport = "P2P/CUMEM/read",
     .cuda_driver = 12040,
     // v2.20.3-1's net_socket.cc (no change above it in 2.21).
     .line_socket_progress_error = 217,
     .ib_completion_site = "transport/net_ib.cc:1909",
     .socket_reset_site = "misc/socket.cc:30",
     .socket_closed_site = "misc/socket.cc:50",
     .connect_timeout_site = "misc/socket.cc:525",
     .ib_async_site = "transport/net_ib.cc:101"},
    {.name = "2.18.5",
     .supported = true,
     .version_banner = "NCCL version 2.18.5+cuda12.2",
     .net_plugin = "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
                   "cannot open shared object file: No such file or directory",
     .p2p_transport = "P2P/IPC/read",
     .cuda_driver = 12020,
     // The 2.16-2.18 net_socket.cc (net API v6, before the device-handle properties).
     .line_socket_progress_error = 214,
     .ib_completion_site = "transport/net_ib.cc:1295",
     .socket_reset_site = "misc/socket.cc:29",
     .socket_closed_site = "misc/socket.cc:49",
     .connect_timeout_site = "misc/socket.cc:524",
     .ib_async_site = "transport/net_ib.cc:95"},
};

constexpr SlurmProfile kSlurmProfiles[] = {
    {.name = "22.05",
     .terminating_step = "srun: Terminating StepId=",
     .node_failure = " DUE TO NODE FAILURE"},
    {.name = "23.02",
     .terminating_step = "srun: launch/slurm: _step_signal: Terminating StepId=",
     .node_failure = " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"},
};

// Whether the profiles are exactly the releases profiles.h names for the line tables' checks.
template <typename Profile, std::size_t N, std::size_t M>
constexpr bool SameReleases(const Profile (&profiles)[N], const std::string_view (&releases)[M]) {
  if (N != M) return false;
  for (const Profile& p : profiles) {
    bool named = false;
    for (const std::string_view release : releases) named = named || p.name == release;
    if (!named) return false;
  }
  return true;
}

static_assert(SameReleases(kTorchProfiles, kTorchReleases));
static_assert(SameReleases(kNcclProfiles, kNcclReleases));
static_assert(SameReleases(kSlurmProfiles, kSlurmReleases));

}  // namespace

const SlurmProfile* FindSlurmProfile(std::string_view name) {
  for (const SlurmProfile& p : kSlurmProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string_view SupportedSlurmProfiles() { return "\"22.05\", \"23.02\""; }

const TorchProfile* FindTorchProfile(std::string_view name) {
  for (const TorchProfile& p : kTorchProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const NcclProfile* FindNcclProfile(std::string_view name) {
  for (const NcclProfile& p : kNcclProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string_view SupportedTorchProfiles() { return "\"1.13\", \"2.1\", \"2.4\" or \"2.6\""; }
std::string_view SupportedNcclProfiles() {
  return "\"2.18.5\", \"2.21.5\", \"2.24.3\", \"2.26.2\", \"2.28.9\" or \"2.29.2\"";
}

}  // namespace denpex::sim
