#include "run/launcher_env.h"

#include <algorithm>
#include <array>

namespace denpex::cli::run {
namespace {

// What each launcher sets in the processes it starts, from its own documentation:
//   torchrun      RANK, LOCAL_RANK, GROUP_RANK (the agent's), WORLD_SIZE, TORCHELASTIC_RUN_ID
//   Ray Train     its TorchTrainer sets RANK, LOCAL_RANK, NODE_RANK, WORLD_SIZE in each worker
//                 (ray.train.torch.config); the raylet sets RAY_RAYLET_PID and RAY_JOB_ID in
//                 every worker process it starts. Ray puts no node address in a worker's
//                 environment (it passes --node-ip-address on the worker's command line), and
//                 MASTER_ADDR (rank 0's node) and KubeRay's RAY_IP / FQ_RAY_IP (the head's
//                 service) name other nodes: the host is always this machine's own.
//   Open MPI      OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE (and PMIX_RANK from 4.x on).
//                 OMPI_COMM_WORLD_NODE_RANK is the rank's index among the ranks of its node
//                 (as the local rank is), not the node's index: it is recorded, never used.
//   PMIx          PMIX_RANK (Open MPI 5's prterun, srun --mpi=pmix)
//   MPICH, Intel MPI (Hydra)   PMI_RANK, MPI_LOCALRANKID, PMI_SIZE
//   MVAPICH2      MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_SIZE
//   Slurm         SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS; an sbatch script
//                 has SLURM_PROCID=0, which every process it starts inherits: it comes after
//                 the MPI launchers' variables for that reason
//   Kubernetes    an Indexed Job's JOB_COMPLETION_INDEX (the pod's index, a rank when each pod
//                 runs one rank); KUBERNETES_SERVICE_HOST in every container
constexpr std::array<LauncherVars, 8> kLaunchers = {{
    {"torchrun", "TORCHELASTIC_RUN_ID", "RANK", "LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE"},
    {"ray", "RAY_RAYLET_PID", "RANK", "LOCAL_RANK", "NODE_RANK", "WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "",
     "OMPI_COMM_WORLD_SIZE"},
    {"pmix", "PMIX_RANK", "PMIX_RANK", "", "", ""},
    {"mpich", "MPI_LOCALRANKID", "PMI_RANK", "MPI_LOCALRANKID", "", "PMI_SIZE"},
    {"mvapich", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "",
     "MV2_COMM_WORLD_SIZE"},
    {"slurm", "SLURM_JOB_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS"},
    {"kubernetes", "KUBERNETES_SERVICE_HOST", "JOB_COMPLETION_INDEX", "", "", ""},
}};

constexpr std::array<std::string_view, 2> kPodName = {"POD_NAME", "MY_POD_NAME"};
constexpr std::array<std::string_view, 3> kNodeName = {"NODE_NAME", "MY_NODE_NAME",
                                                       "KUBERNETES_NODE_NAME"};

std::string_view Basename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::span<const LauncherVars> LauncherTable() { return kLaunchers; }

std::vector<std::string> DefaultRankEnv() {
  std::vector<std::string> names;
  for (const LauncherVars& l : kLaunchers) {
    if (!l.rank.empty() && std::find(names.begin(), names.end(), l.rank) == names.end())
      names.emplace_back(l.rank);
  }
  return names;
}

std::string DefaultRankEnvText() {
  std::string s;
  for (const std::string& n : DefaultRankEnv()) s += (s.empty() ? "" : ",") + n;
  return s;
}

std::span<const std::string_view> PodNameVars() { return kPodName; }
std::span<const std::string_view> NodeNameVars() { return kNodeName; }

bool CommandIsLauncher(const std::vector<std::string>& command) {
  if (command.empty()) return false;
  const std::string_view exe = Basename(command[0]);
  if (exe == "torchrun" || exe == "mpirun" || exe == "mpiexec" || exe == "mpiexec.hydra" ||
      exe == "orterun" || exe == "prterun" || exe == "srun") {
    return true;
  }
  if (exe.rfind("python", 0) != 0) return false;
  for (std::size_t i = 1; i + 1 < command.size(); ++i) {
    if (command[i] == "-m") {
      return command[i + 1] == "torch.distributed.run" ||
             command[i + 1] == "torch.distributed.launch";
    }
  }
  return false;
}

}  // namespace denpex::cli::run
