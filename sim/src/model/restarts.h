// kubernetes.restarts: the attempts a Kubernetes controller starts once the one before has failed
// (docs/log_formats.md §24, "Restarts"). Each attempt is a job of its own (Job::Restarted), its
// fault the first attempt's recurring or, when that fault left its node unusable, the replacement
// pod left Pending. Which of an attempt's pod logs kubectl still shows is the Job's
// (Job::PodLogOf), so every attempt's writer puts its pod logs under their final names.
#pragma once

#include "denpex/v1/scenario.pb.h"
#include "faults.h"
#include "job.h"

namespace denpex::sim {

struct KubeAttemptPlan {
  Job job;             // attempt K >= 1 (JobSet: new pod names; its Pending pod, if any, named)
  FaultPlan fault;     // the first attempt's fault again, or the Pending pod's rendezvous timeout
  TimeNs restart = 0;  // when the controller restarted the job
  int unplaced = -1;   // the node whose replacement pod stayed Pending, or -1
  bool node_lost = false;  // unplaced: its node is unreachable (else a GPU short)
};

// The attempt after `before` (which ran `first`'s fault in attempt 0 and ended at `before_end`).
KubeAttemptPlan PlanKubeAttempt(const v1::Scenario& scenario, const FaultPlan& first,
                                const Job& before, TimeNs before_end);

}  // namespace denpex::sim
