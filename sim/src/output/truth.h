// Ground truth of a simulated incident (truth.json beside incident/): what a correct
// diagnosis says, with the exact lines it must cite. Built from the model's final state and
// from where the writer put the citable lines, never by re-reading the logs.
#pragma once

#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/truth.pb.h"
#include "kubernetes.h"
#include "model/job.h"
#include "model/model.h"
#include "writer.h"

namespace denpex::sim {

struct TruthInputs {
  const v1::Scenario& scenario;
  const Job& job;
  const FaultPlan& fault;
  const Model& model;
  const Outcome& outcome;
  const IncidentWriter& writer;
  const KubeCitations* kube = nullptr;  // LAUNCHER_KUBERNETES: the kubectl lines it may cite
  const CitedLine* nic = nullptr;       // FAULT_KIND_SLOW_NIC: the slow port's counter line
};

v1::Truth BuildTruth(const TruthInputs& in);

}  // namespace denpex::sim
