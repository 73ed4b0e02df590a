// `denpex collect` as a subcommand: flags to SlurmCollectOptions, the report to the console.
#include <iostream>

#include "collect/slurm_collect.h"
#include "denpex/cli/commands.h"
#include "denpex/common/status.h"

namespace denpex::cli {

int RunCollect(const CollectArgs& args, std::ostream& out, std::ostream& err) {
  collect::SlurmCollectOptions o;
  o.job_id = args.slurm_job;
  if (o.job_id.empty() || o.job_id.find_first_not_of("0123456789_+") != std::string::npos) {
    err << "denpex collect: --slurm-job '" << o.job_id
        << "' is not a Slurm job id (digits, or <array>_<task>)\n";
    return kExitUsage;
  }
  o.out = args.out;
  o.slurmctld_log = args.slurmctld_log;
  o.slurmd_log = args.slurmd_log;
  if (args.kernel == "srun") {
    o.kernel = collect::KernelFrom::kSrun;
  } else if (args.kernel == "local") {
    o.kernel = collect::KernelFrom::kLocal;
  } else if (args.kernel == "none") {
    o.kernel = collect::KernelFrom::kNone;
  } else {
    err << "denpex collect: --kernel '" << args.kernel << "': use srun, local or none\n";
    return kExitUsage;
  }
  o.kernel_margin_s = args.kernel_margin_s;
  auto rep = collect::CollectSlurmJob(o);
  if (!rep.ok()) {
    err << "denpex collect: " << rep.status().message() << "\n";
    return ExitCodeFor(rep.status());
  }
  out << "denpex collect: Slurm job " << o.job_id << " on " << rep->scope.nodes.size()
      << " node(s) (from " << rep->scope_source << ") into " << o.out.string() << "\n";
  int written = 0;
  for (const collect::Collected& c : rep->items) {
    out << "  " << c.what << ": " << c.status;
    if (!c.file.empty()) out << " (" << c.file << ", " << c.lines << " lines)";
    if (!c.detail.empty()) out << "; " << c.detail;
    out << "\n";
    written += c.file.empty() ? 0 : 1;
  }
  if (written == 0) {
    err << "denpex collect: nothing collected for job " << o.job_id << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace denpex::cli
