// The attempts of a restarted Kubernetes job (see restarts.h).
#include "restarts.h"

namespace denpex::sim {

namespace {

// A fault that leaves its node unusable (node loss, Xid 79) keeps the replacement pod Pending: the
// others wait in the rendezvous for it (FAULT_KIND_RENDEZVOUS_TIMEOUT's model, the Pending pod's
// node the one that never joins); any other fault recurs on the same rank.
v1::Fault RestartFault(const v1::Scenario& s, const FaultPlan& first) {
  v1::Fault fault;
  if (first.traits->Has(kNodeUnusable)) {
    fault.set_kind(v1::FAULT_KIND_RENDEZVOUS_TIMEOUT);
    fault.set_node(first.node);
    return fault;
  }
  fault = s.faults(0);
  fault.set_rank(first.rank);
  fault.set_step(first.step);
  fault.set_at_fraction(first.at_fraction);
  fault.set_variant(first.variant);
  return fault;
}

}  // namespace

KubeAttemptPlan PlanKubeAttempt(const v1::Scenario& scenario, const FaultPlan& first,
                                const Job& before, TimeNs before_end) {
  const int k = before.kube_attempt + 1;
  // A JobSet deletes the old Jobs (foreground) and creates new pods; the kubelet restarts a
  // container in place after its back-off (10 s, doubling with each restart). Torchrun starts
  // 40 s after its pod is placed.
  const bool in_place = before.KubeRestartsInPlace();
  const TimeNs restart = before_end + (in_place ? (10LL << (k - 1)) : 2) * kNsPerSec;
  KubeAttemptPlan p{
      before.Restarted(scenario, restart + (in_place ? 0 : 40 * kNsPerSec)), {}, restart};
  if (first.traits->Has(kNodeUnusable)) {
    p.unplaced = first.node;
    p.node_lost = first.kind() == v1::FAULT_KIND_NODE_LOSS;
    p.job.kube_pending_node = first.node;
  }
  p.fault = PlanFault(RestartFault(scenario, first), p.job, 0);
  return p;
}

}  // namespace denpex::sim
