// Scope: which lines of daemon and host logs belong to this job (docs/log_formats.md, "Scope").
// slurmctld.log and slurmd.log hold every job of the cluster, and a shared node's kernel log
// every process's OOM kills and every GPU's Xids. Such a line becomes evidence only when its
// content ties it to this job: the Slurm job ids the job's own output names (slurmstepd's and
// srun's lines, a `SLURM_JOB_ID=` echo), else slurmctld's allocation of the job's nodes, else
// the one job the daemon logs speak of; the job's pids (NCCL `host:pid:tid`, torchrun's `pid`);
// the GPUs its NCCL lines name. The rest is left out and counted.
#pragma once

#include "incident/incident.h"

namespace denpex::engine {

// Drops the events of daemon and host logs that belong to other jobs, other nodes or other
// processes, counts them (InputCounts::out_of_scope) and says what was left out, and what could
// not be decided, in InputCounts::problems. The job's own output is never touched. Leaves the
// kind index (Incident::IndexKinds) built for the events it keeps.
void ScopeToJob(Incident* inc);

}  // namespace denpex::engine
