// The version profile tables. Line numbers are those printed by the named release (see
// docs/log_formats.md and ../shared/reference/log-formats.md for where they come from).
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
     .rank_prefixed_tracebacks = true,
     .torchrun_traceback = kTorchrunTraceback24},
    // Known releases whose shapes land with issue #3.
    {.name = "1.13", .supported = false},
    {.name = "2.1", .supported = false},
    {.name = "2.6", .supported = false},
};

constexpr NcclProfile kNcclProfiles[] = {
    {.name = "2.21.5", .supported = true, .version_banner = "NCCL version 2.21.5+cuda12.4"},
    {.name = "2.18.5", .supported = false, .version_banner = "NCCL version 2.18.5+cuda12.2"},
};

constexpr SlurmProfile kSlurmProfiles[] = {
    {.name = "22.05",
     .terminating_step = "srun: Terminating StepId=",
     .node_failure = " DUE TO NODE FAILURE"},
    {.name = "23.02",
     .terminating_step = "srun: launch/slurm: _step_signal: Terminating StepId=",
     .node_failure = " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"},
};

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

std::string_view SupportedTorchProfiles() { return "\"2.4\""; }
std::string_view SupportedNcclProfiles() { return "\"2.21.5\""; }

}  // namespace denpex::sim
