// The fault registry table and the resolution of a scenario's fault against the seed.
#include "faults.h"

#include "job.h"
#include "rng.h"

namespace denpex::sim {

namespace {

constexpr FaultTraits kFaults[] = {
    {v1::FAULT_KIND_SIGKILL, FaultScope::kRank, FaultAction::kSigkill, v1::OWNER_UNKNOWN,
     v1::FAILURE_CLASS_SIGNAL_KILL, kUnderRay | kRecursOnRestart, "inspect_host_logs",
     "{who} was killed by SIGKILL and printed nothing; check the host's kernel log (OOM killer) "
     "and the scheduler's records before scheduling work on it again."},
    {v1::FAULT_KIND_SIGSEGV, FaultScope::kRank, FaultAction::kSegfault, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_SEGFAULT, kUnderRay | kRecursOnRestart, "fix_application",
     "{who} crashed with a segmentation fault; the faulthandler stack names the code to fix "
     "(or the native extension to update) before restarting."},
    {v1::FAULT_KIND_EXCEPTION, FaultScope::kRank, FaultAction::kException, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_PYTHON_EXCEPTION, kUnderRay | kRecursOnRestart, "fix_application",
     "{who} raised an uncaught Python exception; fix what its traceback names before "
     "restarting."},
    {v1::FAULT_KIND_HANG, FaultScope::kRank, FaultAction::kHang, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_HANG, kUnderRay, "fix_application",
     "{who} stopped issuing collectives while its peers waited for it; take a stack dump "
     "(py-spy) of a rerun and fix the code path that blocks before restarting."},
    {v1::FAULT_KIND_COLLECTIVE_MISMATCH, FaultScope::kRank, FaultAction::kMismatch,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_COLLECTIVE_MISMATCH, kNoRules, "fix_application",
     "{who} issued a collective that differs from its peers' (op or size); fix the "
     "rank-dependent code path, and rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL to confirm."},
    // A rank-dependent branch around ZeRO's gradient reduce-scatter: the rank issues the
    // parameter all-gather where its peers reduce-scatter (docs/scenario_format.md).
    {v1::FAULT_KIND_SKIPPED_COLLECTIVE, FaultScope::kRank, FaultAction::kMismatch,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_COLLECTIVE_MISMATCH, kNeedsZero, "fix_application",
     "{who} skipped a collective its peers issued (ZeRO's gradient reduce-scatter) and issued the "
     "group's next one in its place; fix the rank-dependent code path that skips it, and rerun "
     "with TORCH_DISTRIBUTED_DEBUG=DETAIL to confirm.",
     v1::LAUNCHER_UNSPECIFIED, OddCollective::kSkipped},
    {v1::FAULT_KIND_NODE_LOSS, FaultScope::kNode, FaultAction::kNodeLoss, v1::OWNER_HOST,
     v1::FAILURE_CLASS_NODE_LOSS, kUnderRay | kNodeUnusable, "drain_node",
     "{who} disappeared (its logs stop mid-run); drain it and check its BMC/console logs "
     "before it takes work again."},
    {v1::FAULT_KIND_TIME_LIMIT, FaultScope::kJob, FaultAction::kSchedulerCancel,
     v1::OWNER_SCHEDULER, v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT, kNeedsSlurm, "extend_time_limit",
     "{who} reached its Slurm time limit; resubmit with a longer --time or checkpoint more "
     "often."},
    {v1::FAULT_KIND_SCANCEL, FaultScope::kJob, FaultAction::kSchedulerCancel, v1::OWNER_SCHEDULER,
     v1::FAILURE_CLASS_SCHEDULER_CANCEL, kNeedsSlurm, "confirm_cancel",
     "{who} was cancelled (scancel); confirm with its owner or the admins that this was "
     "intended."},
    {v1::FAULT_KIND_PREEMPTION, FaultScope::kJob, FaultAction::kSchedulerCancel,
     v1::OWNER_SCHEDULER, v1::FAILURE_CLASS_SCHEDULER_PREEMPTION, kNeedsSlurm, "resubmit",
     "{who} was preempted by a higher-priority job; resubmit (or let Slurm requeue it)."},
    // GPU hardware: recovery as NVIDIA's Xid catalog prescribes (docs/scenario_format.md).
    {v1::FAULT_KIND_XID_FALLEN_OFF_BUS, FaultScope::kRank, FaultAction::kCudaError,
     v1::OWNER_GPU_HARDWARE, v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS, kNodeUnusable | kGpuState,
     "reboot_node",
     "The GPU of {who} fell off the bus (Xid 79): drain the node, reboot it (RESTART_BM), check "
     "its PCIe, power and thermal event logs, and RMA the board if it recurs."},
    {v1::FAULT_KIND_XID_ECC, FaultScope::kRank, FaultAction::kCudaError, v1::OWNER_GPU_HARDWARE,
     v1::FAILURE_CLASS_GPU_ECC, kGpuState, "reset_gpu",
     "The GPU of {who} had an uncorrectable ECC error (Xid 48): reset the GPU (or reboot), then "
     "confirm no remapping is pending or failed; drain and RMA it if row remapping failed "
     "(Xid 64)."},
    {v1::FAULT_KIND_XID_NVLINK, FaultScope::kRank, FaultAction::kCudaError, v1::OWNER_GPU_HARDWARE,
     v1::FAILURE_CLASS_GPU_NVLINK, kGpuState, "reset_gpu",
     "The GPU of {who} reported a fatal NVLink error (Xid 74): reset the GPU (or reboot the "
     "node) and check its NVLink error counters before it takes work again."},
    {v1::FAULT_KIND_XID_GSP, FaultScope::kRank, FaultAction::kCudaError, v1::OWNER_GPU_HARDWARE,
     v1::FAILURE_CLASS_GPU_OTHER, kGpuState | kNeedsGspDriver, "reset_gpu",
     "The GSP firmware of the GPU of {who} failed (Xid 120/119): reset the GPU; power-cycle the "
     "node if the error persists."},
    // Memory tiers.
    {v1::FAULT_KIND_CUDA_OOM, FaultScope::kRank, FaultAction::kCudaError, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_CUDA_OOM, kRecursOnRestart | kGpuState, "fix_application",
     "{who} ran out of GPU memory (HBM); reduce the micro-batch or activation memory (or set "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) before restarting."},
    {v1::FAULT_KIND_HOST_OOM, FaultScope::kRank, FaultAction::kHostOom, v1::OWNER_HOST,
     v1::FAILURE_CLASS_HOST_OOM, kGpuState, "reduce_host_memory",
     "{who} was killed by the kernel OOM killer (host memory); lower host-memory use (data "
     "loader workers, pinned buffers, offload) or raise the job's memory limit before "
     "restarting."},
    // CUDA errors in the application.
    {v1::FAULT_KIND_CUDA_ILLEGAL_ADDRESS, FaultScope::kRank, FaultAction::kCudaError,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_CUDA_ERROR, kGpuState, "fix_application",
     "{who} made an illegal memory access (Xid 31, an application-level MMU fault); rerun with "
     "CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer to find the kernel before restarting."},
    {v1::FAULT_KIND_DEVICE_ASSERT, FaultScope::kRank, FaultAction::kCudaError,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_CUDA_ERROR, kGpuState, "fix_application",
     "{who} hit a device-side assert (an index out of bounds); fix the input or the indexing "
     "that the assertion names before restarting."},
    // DeepSpeed and FSDP: the frameworks' own errors (formatter_frameworks.cc has the wordings).
    {v1::FAULT_KIND_DEEPSPEED_ERROR, FaultScope::kRank, FaultAction::kException,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_PYTHON_EXCEPTION, kNoRules, "fix_application",
     "{who} raised a DeepSpeed error (ZeRO partitioning, offload or the pipeline engine); fix "
     "the model or DeepSpeed configuration its traceback names before restarting."},
    // FSDP's wrap runs the same code over the same model on every rank: every rank raises.
    {v1::FAULT_KIND_FSDP_ERROR, FaultScope::kJob, FaultAction::kJobException, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_PYTHON_EXCEPTION, kAtSetup, "fix_application",
     "{who} failed as a whole: every rank raised the same FSDP error wrapping the model (mixed "
     "dtypes or mixed "
     "requires_grad in one FlatParameter); fix the wrapping policy or the module's dtypes "
     "before restarting."},
    {v1::FAULT_KIND_CHECKPOINT_LOAD_ERROR, FaultScope::kJob, FaultAction::kJobException,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_CHECKPOINT_LOAD, kNoRules, "fix_checkpoint_config",
     "{who} could not load the checkpoint it resumes from (every rank raised the same error); "
     "resume with the world size and model shape that wrote it, convert it (a universal "
     "checkpoint), or point the job at a complete one."},
    // Memory tiers: pinned host memory, ZeRO offload's host memory, checkpoint saves.
    {v1::FAULT_KIND_PINNED_OOM, FaultScope::kRank, FaultAction::kException, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_PINNED_OOM, kNoRules, "reduce_pinned_memory",
     "{who} could not page-lock (pin) host memory for a batch; lower the pinned buffers (data "
     "loader workers x prefetch, offload buffers) or disable pin_memory before restarting."},
    {v1::FAULT_KIND_OFFLOAD_HOST_OOM, FaultScope::kRank, FaultAction::kHostOom, v1::OWNER_HOST,
     v1::FAILURE_CLASS_HOST_OOM, kNoRules, "reduce_host_memory",
     "{who} was killed by the kernel OOM killer after ZeRO offload's host memory grew step after "
     "step; lower the offloaded state per node (more nodes, NVMe offload) or raise the job's "
     "memory limit before restarting."},
    {v1::FAULT_KIND_SAVE_OOM_HBM, FaultScope::kRank, FaultAction::kException, v1::OWNER_APPLICATION,
     v1::FAILURE_CLASS_CUDA_OOM, kNoRules, "fix_application",
     "{who} ran out of GPU memory (HBM) gathering the full state dict for a checkpoint; save "
     "sharded state dicts (or offload the gather to CPU) before restarting."},
    {v1::FAULT_KIND_SAVE_OOM_HOST, FaultScope::kRank, FaultAction::kHostOom, v1::OWNER_HOST,
     v1::FAILURE_CLASS_HOST_OOM, kNoRules, "reduce_host_memory",
     "{who} was killed by the kernel OOM killer while materialising a checkpoint in host memory; "
     "save sharded checkpoints or raise the node's memory limit before restarting."},
    {v1::FAULT_KIND_XID_APP_EXCEPTION, FaultScope::kRank, FaultAction::kCudaError,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_CUDA_ERROR, kGpuState, "fix_application",
     "{who} faulted in a kernel (the driver's Xid 13 graphics exception or Xid 43 channel reset "
     "name its process; the GPU is fine); find the kernel with compute-sanitizer and fix it "
     "before restarting."},
    {v1::FAULT_KIND_STRAGGLER, FaultScope::kRank, FaultAction::kSlowdown, v1::OWNER_GPU_HARDWARE,
     v1::FAILURE_CLASS_STRAGGLER, kNoRules, "inspect_gpu",
     "{who} computes slower than its peers every step (a throttled GPU: thermal, power brake or "
     "a PCIe link downgrade); check its clock event reasons and PCIe link, or exclude the GPU, "
     "before restarting."},
    {v1::FAULT_KIND_SLOW_NODE, FaultScope::kNode, FaultAction::kSlowdown, v1::OWNER_HOST,
     v1::FAILURE_CLASS_STRAGGLER, kNoRules, "drain_node",
     "every rank of {who} computes slower than its peers (a noisy host: CPU contention or a "
     "rogue process); drain it or find what else runs there before restarting."},
    {v1::FAULT_KIND_NIC_FAILURE, FaultScope::kRank, FaultAction::kNicFailure, v1::OWNER_NETWORK,
     v1::FAILURE_CLASS_NETWORK, kNoRules, "inspect_nic",
     "the IB NIC of {who} stopped completing work (NCCL retry exceeded, status 12); check the "
     "port (ibstat, link flaps, symbol errors) and its cable or switch port, or exclude the "
     "node, before restarting."},
    {v1::FAULT_KIND_NCCL_BOOTSTRAP, FaultScope::kNode, FaultAction::kNcclSetup, v1::OWNER_NETWORK,
     v1::FAILURE_CLASS_NCCL_SETUP, kNoRules, "fix_network_config",
     "{who} has no network interface that NCCL_SOCKET_IFNAME names (NCCL bootstrap found none); "
     "fix the interface name or the node's network configuration before restarting."},
    {v1::FAULT_KIND_DUPLICATE_GPU, FaultScope::kNode, FaultAction::kNcclSetup,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_NCCL_SETUP, kNoRules, "fix_launch_config",
     "two ranks on {who} were given the same GPU (the CUDA_VISIBLE_DEVICES / LOCAL_RANK mapping "
     "of the launch script); fix the device assignment before restarting."},
    {v1::FAULT_KIND_SLURMD_UNRESPONSIVE, FaultScope::kNode, FaultAction::kSlurmdSilent,
     v1::OWNER_SCHEDULER, v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE, kNeedsSlurm, "resume_node",
     "slurmctld set {who} DOWN because its slurmd stopped answering (Reason=Not responding) "
     "while the host and its ranks kept training; check slurmd and munge there and the "
     "controller's network path to it, then return it to service (scontrol update "
     "NodeName=<host> State=RESUME) or leave it out of the restart."},
    // Kubernetes: the pod's container hit its memory limit; cgroup v2 kills the whole group
    // (torchrun and every worker) at once, as a lost node's processes vanish.
    {v1::FAULT_KIND_POD_OOMKILLED, FaultScope::kNode, FaultAction::kNodeLoss, v1::OWNER_HOST,
     v1::FAILURE_CLASS_HOST_OOM, kNoRules, "reduce_host_memory",
     "the container of {who}'s pod was OOMKilled (exit code 137) at its memory limit; lower the "
     "workers' host memory (data loader workers, pinned buffers, checkpoint copies) or raise the "
     "container's memory limit before restarting.",
     v1::LAUNCHER_KUBERNETES},
    {v1::FAULT_KIND_POD_EVICTION, FaultScope::kNode, FaultAction::kEvict, v1::OWNER_SCHEDULER,
     v1::FAILURE_CLASS_SCHEDULER_EVICTION, kNoRules, "resubmit",
     "the kubelet of {who} evicted the job's pod under node memory pressure; nothing in the job "
     "failed: set memory requests equal to limits (Guaranteed QoS) or find what else uses the "
     "node's memory, then resubmit.",
     v1::LAUNCHER_KUBERNETES},
    // Ray: the raylet's memory monitor SIGKILLs the worker it picks (the newest task).
    {v1::FAULT_KIND_RAY_OOM_KILL, FaultScope::kRank, FaultAction::kSigkill, v1::OWNER_HOST,
     v1::FAILURE_CLASS_HOST_OOM, kUnderRay, "reduce_host_memory",
     "Ray's memory monitor killed the worker of {who} when the node ran low on memory; lower the "
     "workers' host memory or the number of tasks per node (or raise RAY_memory_usage_threshold "
     "with care) before restarting.",
     v1::LAUNCHER_RAY},
    {v1::FAULT_KIND_SOCKET_RESET, FaultScope::kRank, FaultAction::kNicFailure, v1::OWNER_NETWORK,
     v1::FAILURE_CLASS_NETWORK, kSocketTransport, "inspect_nic",
     "the network link of {who} reset under NCCL's socket transport (Connection reset by peer "
     "on its sockets); check its NIC and link (ip -s link, ethtool -S: carrier changes, resets) "
     "and the switch port, or exclude the node, before restarting."},
    {v1::FAULT_KIND_BOOTSTRAP_TIMEOUT, FaultScope::kNode, FaultAction::kNcclSetup,
     v1::OWNER_NETWORK, v1::FAILURE_CLASS_NCCL_SETUP, kNeedsOffRoot | kDrawnOffRoot,
     "fix_network_config",
     "{who} cannot reach NCCL's bootstrap root (its connects time out); check its route and "
     "firewall to the root's address on the NCCL_SOCKET_IFNAME interface before restarting."},
    // The c10d store's host lost its processes (the kernel stays up and resets their sockets):
    // for the job, a node that vanished; the store errors everywhere else are its echo.
    {v1::FAULT_KIND_STORE_HOST_LOSS, FaultScope::kNode, FaultAction::kNodeLoss, v1::OWNER_HOST,
     v1::FAILURE_CLASS_NODE_LOSS, kOnStoreHost, "drain_node",
     "{who}, the host of the job's c10d store (the rendezvous endpoint), lost its processes, so "
     "every other agent and rank lost the store; check its kernel log (OOM killer) and what "
     "else ran there, and drain it or move the rendezvous endpoint before restarting.",
     v1::LAUNCHER_TORCHRUN},
    {v1::FAULT_KIND_SLOW_NIC, FaultScope::kRank, FaultAction::kSlowdown, v1::OWNER_NETWORK,
     v1::FAILURE_CLASS_STRAGGLER, kNoRules, "inspect_nic",
     "the IB port of {who} degraded (symbol errors, link flaps, a lower rate): its inter-node "
     "transfers slow the whole job; reseat or replace its cable or transceiver (check the switch "
     "port) or exclude the node before restarting."},
    // DeepSpeed configuration errors: deepspeed.initialize raises the same on every rank.
    {v1::FAULT_KIND_DEEPSPEED_AIO_INCOMPATIBLE, FaultScope::kJob, FaultAction::kJobException,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_PYTHON_EXCEPTION, kAtSetup, "fix_application",
     "{who} failed as a whole: every rank failed to load DeepSpeed's async_io op for NVMe offload "
     "(ZeRO-Infinity); "
     "install libaio (libaio-dev / libaio-devel) in the image, or pre-build the op "
     "(DS_BUILD_AIO=1), or offload to CPU instead before restarting."},
    {v1::FAULT_KIND_DEEPSPEED_ZERO_PIPELINE, FaultScope::kJob, FaultAction::kJobException,
     v1::OWNER_APPLICATION, v1::FAILURE_CLASS_PYTHON_EXCEPTION, kAtSetup, "fix_application",
     "{who} failed as a whole: every rank asked DeepSpeed's pipeline engine for ZeRO stage 2 or 3, "
     "which it does "
     "not support; use ZeRO stage 0 or 1 with pipeline parallelism before restarting."},
    // One link between two nodes (an HCA pair, a cable, a switch port): the rank is the end
    // that failed first; the NICs' other links work, so neither node needs excluding.
    {v1::FAULT_KIND_LINK_FAILURE, FaultScope::kRank, FaultAction::kNicFailure, v1::OWNER_NETWORK,
     v1::FAILURE_CLASS_NETWORK, kLink, "inspect_link",
     "the IB link between the HCA of {who} and its peer's across nodes stopped carrying traffic "
     "(retry exceeded, status 12, on both ends); drain that link and test it (ibdiagnet, "
     "ibporterrors or perfquery on both ports), reseat or swap the cable or move the switch port "
     "before restarting."},
    // The same under NCCL's socket transport: the TCP connections between the rank and its peer
    // across nodes are reset; both nodes' other connections work.
    {v1::FAULT_KIND_SOCKET_LINK_FAILURE, FaultScope::kRank, FaultAction::kNicFailure,
     v1::OWNER_NETWORK, v1::FAILURE_CLASS_NETWORK, kSocketTransport | kLink, "inspect_link",
     "the network path between {who} and its peer across nodes reset their TCP connections "
     "(Connection reset by peer) under NCCL's socket transport; check both NICs' counters (ip -s "
     "link, ethtool -S), the switch ports and any firewall or conntrack on the path between the "
     "two nodes before restarting."},
    {v1::FAULT_KIND_RENDEZVOUS_TIMEOUT, FaultScope::kNode, FaultAction::kRendezvousTimeout,
     v1::OWNER_NETWORK, v1::FAILURE_CLASS_NCCL_SETUP, kDrawnOffRoot, "fix_network_config",
     "{who} never joined the c10d rendezvous (its agent could not reach the rendezvous endpoint, "
     "so every other agent timed out waiting for it); check its route and firewall to the "
     "endpoint's host and port (29400) or leave it out, then restart.",
     v1::LAUNCHER_TORCHRUN},
    {v1::FAULT_KIND_STORE_JOIN_TIMEOUT, FaultScope::kNode, FaultAction::kStoreJoinTimeout,
     v1::OWNER_HOST, v1::FAILURE_CLASS_NCCL_SETUP, kDrawnOffRoot | kNeedsStaticStore, "drain_node",
     "{who} never started its ranks (under pdsh its ssh session from the launch host hung; under "
     "srun or mpirun its tasks hung before init_process_group: no line came back), so rank 0's "
     "TCPStore timed out waiting for them; check that a command on it returns (its home and "
     "software mounts, sshd) or leave it out of the job, then restart."},
};

}  // namespace

bool HasRule(v1::FaultKind kind, FaultRule rule) {
  const FaultTraits* traits = FindFault(kind);
  return traits != nullptr && traits->Has(rule);
}

AppError AppErrorOf(v1::FaultKind kind) {
  switch (kind) {
    case v1::FAULT_KIND_DEEPSPEED_ERROR: return AppError::kDeepSpeed;
    case v1::FAULT_KIND_FSDP_ERROR: return AppError::kFsdp;
    case v1::FAULT_KIND_CHECKPOINT_LOAD_ERROR: return AppError::kCheckpointLoad;
    case v1::FAULT_KIND_PINNED_OOM: return AppError::kPinnedMemory;
    case v1::FAULT_KIND_SAVE_OOM_HBM: return AppError::kSaveOom;
    case v1::FAULT_KIND_DEEPSPEED_AIO_INCOMPATIBLE: return AppError::kDeepSpeedAio;
    case v1::FAULT_KIND_DEEPSPEED_ZERO_PIPELINE: return AppError::kZeroPipeline;
    default: return AppError::kMegatron;
  }
}

bool NodeJitBuildFailure(const FaultPlan& plan) {
  const int v = plan.variant < 0 ? -plan.variant : plan.variant;
  return plan.kind() == v1::FAULT_KIND_DEEPSPEED_ERROR && v % 4 == 2;  // AppTracebackOf's offload case
}

const FaultTraits* FindFault(v1::FaultKind kind) {
  for (const FaultTraits& t : kFaults) {
    if (t.kind == kind) return &t;
  }
  return nullptr;
}

FaultPlan PlanFault(const v1::Fault& fault, const Job& job, int fault_index) {
  FaultPlan plan;
  plan.traits = FindFault(fault.kind());
  const auto stream = static_cast<std::uint64_t>(fault_index) * 4;
  const int drawn_rank =
      static_cast<int>(Rng(job.seed, StreamId::kFaultPlan, stream).UniformInt(0, job.world));
  switch (plan.traits->scope) {
    case FaultScope::kRank:
      plan.rank = fault.has_rank() ? fault.rank() : drawn_rank;
      plan.node = job.NodeOf(plan.rank);
      break;
    case FaultScope::kNode:
      plan.node = fault.has_node() ? fault.node()
                                   : job.NodeOf(fault.has_rank() ? fault.rank() : drawn_rank);
      plan.rank = plan.node * job.gpus_per_node;
      break;
    case FaultScope::kJob:
      plan.rank = -1;
      plan.node = -1;
      break;
  }
  // The bootstrap root is rank 0's node: a drawn node that cannot reach it is another one.
  if (plan.traits->Has(kDrawnOffRoot) && !fault.has_node() && plan.node == 0 && job.nodes > 1) {
    plan.node = 1;
    plan.rank = job.gpus_per_node;
  }
  // The c10d store lives on the rendezvous endpoint, the first node, unless the scenario says.
  if (plan.traits->Has(kOnStoreHost) && !fault.has_node()) {
    plan.node = 0;
    plan.rank = 0;
  }
  plan.step = fault.step();
  plan.at_fraction = fault.has_at_fraction()
                         ? fault.at_fraction()
                         : Rng(job.seed, StreamId::kFaultPlan, stream + 1).Uniform();
  plan.offset = static_cast<TimeNs>(plan.at_fraction * static_cast<double>(job.step_time));
  plan.variant =
      fault.has_variant()
          ? fault.variant()
          : static_cast<int>(Rng(job.seed, StreamId::kFaultPlan, stream + 2).UniformInt(0, 1 << 20));
  if (IsLinkFault(fault.kind())) {
    const std::vector<int> peers = job.InterNodePeers(plan.rank);
    plan.peer = peers.empty() ? -1 : peers.front();
  }
  if (plan.action() == FaultAction::kSlowdown) {
    // Fail-slow starts with the fault step: every compute slice of it is slow.
    plan.at_fraction = 0;
    plan.offset = 0;
    plan.slowdown = fault.has_slowdown()
                        ? fault.slowdown()
                        : 1.25 + 0.75 * Rng(job.seed, StreamId::kFaultPlan, stream + 3).Uniform();
    plan.slow_steps = fault.has_slow_steps() ? fault.slow_steps() : 12;
    plan.stall = fault.stall();
  }
  return plan;
}

}  // namespace denpex::sim
