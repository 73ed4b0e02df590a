// Kubernetes (LAUNCHER_KUBERNETES): what an operator collects with kubectl once the job has
// failed, written after the run from the model's final state (docs/log_formats.md §24 (Kubernetes)):
//   events.txt           kubectl get events --sort-by=.lastTimestamp (pods, nodes, the job)
//   describe/<pod>.txt   kubectl describe pod: node, status, container state, exit code
//   pytorchjob.txt       kubectl describe pytorchjob (or jobset.txt: kubectl describe jobset)
// The pods' own logs (pods/<pod>.log) come from the incident writer.
#pragma once

#include <filesystem>
#include <vector>

#include "denpex/common/status.h"
#include "model/faults.h"
#include "model/job.h"
#include "model/model.h"
#include "writer.h"

namespace denpex::sim {

// kubernetes.restarts: an attempt the controller started after the one before failed
// (docs/log_formats.md §24, "Restarts").
struct KubeRestart {
  const Job* job = nullptr;            // attempt K >= 1 (JobSet: new pod names)
  const Launcher* launcher = nullptr;  // its agents and pods
  TimeNs start = 0;                    // when the controller restarted the job
  int unplaced = -1;                   // the node whose replacement pod stayed Pending, or -1
  bool node_lost = false;              // unplaced: its node is unreachable (else a GPU short)
};

// The lines of these files a truth cites.
struct KubeCitations {
  CitedLine evicted;        // events.txt: `Warning Evicted pod/<pod> The node was low on ...`
  CitedLine pod_reason;     // describe: `Reason: Evicted` (pod) / `Reason: OOMKilled` (container)
  CitedLine oom_event;      // events.txt: node-problem-detector's `OOMKilling` row
  CitedLine not_ready;      // events.txt: `NodeNotReady node/<node> Node <node> status is now: NodeNotReady`
  CitedLine unplaced;       // events.txt: `FailedScheduling pod/<pod> 0/N nodes are available: ...` (restarts)
  CitedLine job_end;        // events.txt: the restart budget ran out (BackoffLimitExceeded wording,
                            // ReachedMaxRestarts) (restarts)
};

// `restarts`: the restarted attempts in order (kubernetes.restarts), or none.
Result<KubeCitations> WriteKubernetesFiles(const Job& job, const FaultPlan& fault, const Model& model,
                                           TimeNs end_time, const std::filesystem::path& incident_dir,
                                           const std::vector<KubeRestart>& restarts = {});

}  // namespace denpex::sim
