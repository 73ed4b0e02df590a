// What a GPU, memory or CUDA fault leaves behind besides the rank's traceback: the node's
// kern.log lines (an Xid burst on the rank's GPU, or the OOM killer's report), the CUDA error
// the rank raises, and the nvidia-smi snapshot taken when the job ends. The shapes per driver
// era are in formatter_gpu.cc; docs/log_formats.md ("xid", "host_oom") lists them.
#pragma once

#include "faults.h"
#include "job.h"
#include "records.h"

namespace denpex::sim {

// When the node booted (the kern.log "[uptime]" origin), as EmitKernelBoot drew it.
TimeNs NodeBoot(const Job& job, int node);

// The CUDA error a kCudaError fault makes its rank raise.
CudaFailureKind CudaFailureOf(const FaultPlan& fault);

// The fault's kernel lines on the rank's node, in time order from `t` (the fault) to `exit_at`
// (when the rank's process is gone: the driver's Xid 45 cleanup). Nothing without kernel logs.
void EmitFaultKernelLines(const Job& job, const FaultPlan& fault, int rank, TimeNs t,
                          TimeNs exit_at, RecordSink& sink);

// The OOM killer's report of the rank's process (host OOM), from `t`.
void EmitOomKill(const Job& job, int rank, TimeNs t, RecordSink& sink);

// Xid 45 ("Preemptive cleanup") on the rank's GPU after its process was SIGKILLed.
void EmitKillCleanup(const Job& job, int rank, TimeNs t, RecordSink& sink);

// The last Xid the fault leaves on its GPU (DCGM_FI_DEV_XID_ERRORS); 0 for kinds with none.
int LastXid(const FaultPlan& fault);

// One nvidia-smi snapshot per node at `t` (the job's end), when the scenario collects them.
void EmitNvidiaSmi(const Job& job, const FaultPlan& fault, TimeNs t, RecordSink& sink);

}  // namespace denpex::sim
