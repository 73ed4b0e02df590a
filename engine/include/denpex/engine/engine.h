// Start here: the diagnosis engine. An incident directory goes in (logs as a real job left
// them); a Diagnosis comes out. The engine never writes into the incident directory, never
// follows links out of it, never reads ground truth and never links the simulator.
//
//   auto d = engine::Diagnose("out/incident", {});
//   std::cout << engine::RenderText(*d);
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/v1/diagnosis.pb.h"

namespace denpex::engine {

// The real analysis and the naive baselines it is measured against.
enum class Strategy {
  kEngine,            // progress per process group + launcher evidence (the product)
  kFirstError,        // baseline: the rank of the earliest NCCL watchdog timeout line
  kLoudest,           // baseline: the rank with the most error lines
  kElasticRootCause,  // baseline: the rank of the earliest torchrun "first observed failure"
  kNewestCheckpoint,  // baseline: first-error's initiator, and resume from the newest checkpoint
                      // (the `latest` pointer, else the highest step) without verifying it
  kFrTrace,           // baseline: torch's Flight Recorder analyser on the dumps alone (fr_trace)
  kFrWavefront,       // baseline: NVRx's attribution on the dumps: the head group's missing ranks
  kRas,               // baseline: the ranks NCCL RAS's newest report lists (missing, then outliers)
};

std::optional<Strategy> ParseStrategy(std::string_view name);
std::string_view StrategyName(Strategy s);

struct DiagnoseOptions {
  Strategy strategy = Strategy::kEngine;
  int threads = 0;  // 0 = all cores; results do not depend on it
  // The job's checkpoint directory (`--checkpoint-dir`). Empty: a `checkpoints/` (or
  // `checkpoint/`, `ckpt/`, `ckpts/`) folder directly inside the incident directory, if any.
  // Verified read-only with the world size the logs show; checkpoints modified after the
  // initiating fault are not trusted (docs/checkpoint_verification.md, "In a diagnosis").
  std::filesystem::path checkpoint_dir;
  // A healthy run of the same job (`diagnose --control DIR`): the fail-slow detector measures
  // each rank's step timers against that rank's own in the control, not only against its
  // peers'. Empty: none.
  std::filesystem::path control;
  // Large files are parsed in chunks of this many bytes (0: 16 MiB). For the tests: the
  // diagnosis never depends on it.
  std::size_t chunk_bytes = 0;
  // A diagnosis's parse leaves out the texts that are only shown (`denpex events` prints them:
  // a watchdog note's message, a watchdog error's `what():`, ~80 MB at 131k ranks) unless this is
  // set. For the tests: the diagnosis never depends on them.
  bool shown_texts = false;
};

// Tells glibc's malloc to keep freed memory for the next allocation instead of handing it back
// to the kernel (allocations up to 32 MiB from the heap, no trimming). The parse of a large file
// allocates and frees ~100 MB of short-lived buffers, chunk after chunk (per-chunk events,
// progress logs, string tables); returned to the kernel, each page would be faulted in and
// zeroed again by the next chunk. Process-wide, so programs call it once at
// start (the `denpex` binary and engine_bench do); the diagnosis never depends on it.
// docs/benchmarks.md "Memory reuse" has the figures.
void KeepFreedMemory();

// Starts the program once more with glibc's heap in transparent huge pages, where that is to be
// had and not yet decided; returns at once otherwise (and in the second start, after putting the
// environment back as it was). glibc grows its heaps in 4 KiB pages unless the dynamic loader
// reads `glibc.malloc.hugetlb=1` from GLIBC_TUNABLES at start; no call can ask it later. A
// 131k-rank diagnosis touches ~190 MB of heap: ~47 k first-touch faults in 4 KiB pages, each
// 10+ us under a hypervisor, against ~17 k with the tunable (docs/benchmarks.md, "Huge pages for
// the heap"). The restart happens only when the kernel hands out huge pages on request
// (transparent_hugepage `madvise` mode; under `always` the heap has them already), GLIBC_TUNABLES
// does not name the tunable (`glibc.malloc.hugetlb=0` keeps the 4 KiB heap), the program does
// not run under valgrind (which would not follow the restart) and /proc/self/exe can be run.
// GLIBC_TUNABLES is restored in the second start, so the processes the program starts see the
// environment it was given, and so is the process's name (`ps`, `pgrep -x`: the base name of
// argv[0], not "exe"). Call first thing in main(), before any thread exists, or from the
// program's pre-initialisers (`.preinit_array`, before the static initialisers of the program and
// its libraries, so that the first start costs little more than the dynamic loader: the `denpex`
// binary does) with the `envp` they are given. Uses the C library only.
void RestartWithHugePageHeap(char** argv, char** envp = nullptr);

// kNotFound / kInvalidInput when the directory is missing, not a directory, or holds no
// readable log; kNotFound when an explicit `checkpoint_dir` does not exist. Unreadable or
// malformed files inside it are counted in Diagnosis.input.
Result<v1::Diagnosis> Diagnose(const std::filesystem::path& incident_dir,
                               const DiagnoseOptions& options);

// Each rank's first error as a person reads the cascade (`denpex diagnose --html`): the line's
// own stamp and the same time on the engine's aligned clock (docs/diagnosis_format.md, "Clock
// alignment"). An error is an event with a cascade signature, a rank and a time.
struct RankFirstError {
  std::int32_t rank = -1;
  std::string node;    // empty when unknown
  TimeNs printed = 0;  // as the line stamps it, in its node's clock
  TimeNs aligned = 0;  // printed less its node's clock offset
  std::string what;    // "<family> <kind>" (docs/events_format.md)
  std::string file;    // relative to the incident directory
  std::uint32_t line = 0;
};
// A node whose clock the engine moved, by how much (subtracted from its printed times).
struct NodeClock {
  std::string node;
  TimeNs offset = 0;
};
struct CascadeTimes {
  std::vector<RankFirstError> ranks;  // rank order
  std::vector<NodeClock> clocks;      // nodes with a non-zero offset, in node order
  bool aligned = false;  // the strategy aligned clocks (the engine, past its first detectors)
};
struct DiagnosisWithTimes {
  v1::Diagnosis diagnosis;
  CascadeTimes times;
};
// Diagnose, and each rank's first error from the same read of the incident.
Result<DiagnosisWithTimes> DiagnoseWithTimes(const std::filesystem::path& incident_dir,
                                             const DiagnoseOptions& options);

// The human summary printed by `denpex diagnose`.
std::string RenderText(const v1::Diagnosis& diagnosis);
// Who the diagnosis names, in words: "rank 3 on node-1, local rank 3", "node node-2 (rank not
// determined)", "not determined", ... (without the time). Not escaped.
std::string DescribeInitiator(const v1::Diagnosis& diagnosis);

struct EventsOptions {
  int threads = 0;
  std::string family;  // only this family (`nccl_watchdog`, `xid`, ...); empty: all
};

// The families an event can have (docs/events_format.md): `nccl_watchdog`, `nccl`, `cuda`,
// `cuda_oom`, `host_oom`, `xid`, `slurm`, `torchrun`, `deepspeed`, `fsdp`, `kubernetes`, `ray`,
// `bare_metal` (mpirun, pdsh/ssh), `gloo`, `trainer`, `python`, `other`.
std::vector<std::string> EventFamilies();

// `denpex events`: every event the engine recognised, one JSON object per line, in file order
// then line order (docs/events_format.md). Same errors as Diagnose; a `family` that is not one
// of EventFamilies() is an invalid argument.
Status WriteEvents(const std::filesystem::path& incident_dir, const EventsOptions& options, std::ostream& out);

// The names an incident gives its places, as the engine reads them from its lines and folders
// (`denpex freeze` anonymises them, docs/freeze.md). Each list sorted and distinct.
struct IncidentNames {
  std::vector<std::string>
      nodes;  // the nodes the engine resolved (a node's folder, the host its lines name)
  // Every host a line names: NCCL's `host:pid:tid`, a journal's host, a torchrun failure's
  // `host`, a Slurm line's node or hostlist as printed, a pod's node, a NCCL RAS or Ray address.
  std::vector<std::string> hosts;
  std::vector<std::int64_t> slurm_jobs;  // the Slurm job ids the lines name
};

// Same errors as Diagnose.
Result<IncidentNames> NamesIn(const std::filesystem::path& incident_dir, int threads);

}  // namespace denpex::engine
