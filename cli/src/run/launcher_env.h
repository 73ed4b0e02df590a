// Who a wrapped task is, read from the environment its launcher gave it (docs/run_wrapper.md
// "Identity"). One row per launcher, in the order the wrapper consults them: the innermost
// launcher first (torchrun inside srun, mpirun inside an sbatch allocation, a Ray Train worker
// on a Kubernetes pod), so that a variable inherited from an outer launcher never wins over
// the one the task's own launcher set.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::cli::run {

struct LauncherVars {
  std::string_view launcher;    // name recorded in task.json's `launchers`
  std::string_view marker;      // set in every process this launcher starts; "" none
  std::string_view rank;        // the global rank; "" when the launcher sets none
  std::string_view local_rank;  // the rank among the node's tasks
  std::string_view node_rank;   // the node's (or agent's) index in the job
  std::string_view world_size;  // the number of ranks
};

// The table, in the order the wrapper consults it.
std::span<const LauncherVars> LauncherTable();

// The `rank` column of the table without repeats: the default of `--rank-env`.
std::vector<std::string> DefaultRankEnv();
std::string DefaultRankEnvText();  // the same, comma-separated

// Variables that name the pod (Kubernetes downward API, metadata.name) and the machine it
// runs on (spec.nodeName), under the names in common use, in order.
std::span<const std::string_view> PodNameVars();
std::span<const std::string_view> NodeNameVars();

// True when `command` is itself a launcher of ranks (torchrun, `python -m
// torch.distributed.run` or `.launch`, mpirun, mpiexec, srun): the rank variables around it
// describe the launcher's place (a node, a pod), not a rank.
bool CommandIsLauncher(const std::vector<std::string>& command);

}  // namespace denpex::cli::run
