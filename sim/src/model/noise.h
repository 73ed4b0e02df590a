// Realism (scenario `realism`, docs/scenario_format.md): which rank is loud, which node carries
// the old ECC event, which nodes' files are missing or truncated, and the kernel log's boot
// and NIC lines. Decided from the seed once the fault is known, so none of it lands on the
// initiator unless the scenario asks.
#pragma once

#include "denpex/v1/scenario.pb.h"
#include "faults.h"
#include "job.h"
#include "records.h"

namespace denpex::sim {

Noise PlanNoise(const v1::Realism& realism, const Job& job, const FaultPlan& fault);

// Every node's kernel log up to the job's start (boot, NICs, driver, the ECC red herring),
// as KernelMessage records in time order per node. Nothing when kernel logs are off.
void EmitKernelBoot(const Job& job, RecordSink& sink);

// The GPU (nvidia-smi index) of the old corrected ECC event on job.noise.ecc_node; -1: none.
int OldEccGpu(const Job& job);

}  // namespace denpex::sim
