// `denpex collect --slurm-job ID --out DIR` (docs/run_wrapper.md "denpex collect"): a finished
// Slurm job's evidence outside its ranks' output, laid out beside what `denpex run` wrote:
//
//   DIR/slurmctld.log                  the controller's lines of the job (JobScope)
//   DIR/<node>/slurmd.log              each node's slurmd lines of the job, where readable here
//   DIR/<node>/dmesg.log               each node's kernel log (`dmesg -T`) from the job's start
//                                      to its end, with a margin; by `srun` on the node
//   DIR/slurm-job-<ID>.scontrol.txt    `scontrol show job -o ID`, while the controller knows it
//   DIR/slurm-job-<ID>.sacct.txt       `sacct -j ID --long --parsable2`, where accounting runs
//
// Every tool runs with a time limit; one that is missing or fails is reported, and the rest
// is collected.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "collect/slurm_lines.h"
#include "denpex/common/status.h"

namespace denpex::cli::collect {

enum class KernelFrom { kSrun, kLocal, kNone };

struct SlurmCollectOptions {
  std::string job_id;
  std::filesystem::path out;
  std::filesystem::path slurmctld_log;  // empty: scontrol show config's SlurmctldLogFile
  std::filesystem::path slurmd_log;     // empty: SlurmdLogFile; %n and %h are the node
  KernelFrom kernel = KernelFrom::kSrun;
  std::int64_t kernel_margin_s = 300;
};

// One thing collected (or not), as the report lists it.
struct Collected {
  std::string what;    // "slurmctld.log", "slurmd.log of sn01", "scontrol show job", ...
  std::string file;    // relative to DIR; empty when nothing was written
  std::string status;  // "ok", "not found", "failed: ...", "skipped: ..."
  std::uint64_t lines = 0;
  std::string detail;  // e.g. "12 lines of 4 other jobs left out"
};

struct SlurmCollectReport {
  JobScope scope;
  std::string scope_source;  // "scontrol", "sacct" or "slurmctld.log"
  std::vector<Collected> items;
};

// Fails only when DIR cannot be written or nothing tells which nodes and times the job had.
Result<SlurmCollectReport> CollectSlurmJob(const SlurmCollectOptions& options);

}  // namespace denpex::cli::collect
