// The static facts of one simulated job: cluster shape, the Megatron parallel layout, process
// groups and their uids, hostnames, process ids, per-node clock offsets and the timing
// parameters, all resolved from the scenario and the seed before the first event. Immutable
// once built; the model, formatters and truth builder all read it.
//
// Layout (Megatron order): rank = tp_rank + tp * (dp_rank + dp * pp_rank). Tensor-parallel
// groups are contiguous ranks inside a node; data-parallel groups stride tp; pipeline groups
// stride tp * dp. Process groups are created, on every rank, in this order: uid 0 default_pg
// (all ranks), then the TP groups, the PP groups and the DP groups, each family in Megatron's
// creation order, so a group's uid is the same on all its members.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/time.h"
#include "denpex/v1/scenario.pb.h"

namespace denpex::sim {

enum class PgKind : std::uint8_t { kDefault, kTensor, kPipeline, kData };
inline constexpr int kNumPgKinds = 4;

std::string_view PgDescription(PgKind kind);  // "default_pg", "TENSOR_MODEL_PARALLEL_GROUP", ...

// Constants of the modelled trainer: message sizes and collective costs. Not scenario
// fields (yet): they shape the numbers printed, not the failure.
struct Workload {
  std::int64_t tp_numel = 16'777'216;   // activations of one TP all-reduce
  std::int64_t p2p_numel = 16'777'216;  // activations / gradients between stages
  std::int64_t dp_numel = 40'000'000;   // one gradient bucket
  std::int64_t barrier_numel = 1;
  TimeNs tp_cost = 2 * kNsPerMs;
  TimeNs p2p_cost = 1'500 * kNsPerUs;
  TimeNs dp_cost = 45 * kNsPerMs;
  TimeNs barrier_cost = 1 * kNsPerMs;
  int train_iters = 100'000;    // the "/<N>" of the iteration line
  int samples_per_replica = 8;  // global batch = dp * this
};

// What `kubectl logs` shows of an attempt's pod once the job has failed (kubernetes.restarts):
// its current container's log, `--previous` (the container before it; kubectl keeps one), or
// nothing (an older container, or a pod that never ran).
enum class PodLog : std::uint8_t { kCurrent, kPrevious, kGone };

// What a node's files suffered before they reached the incident (realism.*_node_fraction).
enum class NodeDamage : std::uint8_t { kNone, kMissing, kTruncated };

// The realism plan (scenario `realism`), resolved after the fault is planned because the loud
// rank, the ECC node and the damaged nodes avoid the initiator (simulator.cc: PlanNoise).
struct DriverProfile;

struct Noise {
  bool benign_warnings = false;
  bool barrier_device_warning = false;  // ... and the release warns at the first barrier
  bool xid45_on_kill = false;  // a SIGKILLed worker leaves Xid 45 on its GPU
  bool nvidia_smi = false;     // <host>/nvidia-smi.log at the end
  bool nvidia_smi_query = false;  // ... with `nvidia-smi -q` after the table
  bool dcgm = false;              // ... and DCGM's health, diag and exporter output
  int dcgm_diag_level = 1;        // dcgmi diag -r N
  int loud_rank = -1;  // repeats a UserWarning every step; -1: none
  bool kernel_logs = false;
  int ecc_node = -1;               // an old corrected ECC event in its kern.log; -1: none
  // The fault node whose kern.log is rate limited (realism.kernel_ratelimit): printk.time=0,
  // rsyslog folds repeats, printk's rate limit thins an Xid storm; -1: none.
  int ratelimit_node = -1;
  bool deepspeed_overflow = false;  // rank 0's fp16 loss-scaler overflow notices
  std::vector<NodeDamage> damage;  // node -> damage (empty: none anywhere)
};

// The flight recorder's trace buffer (timeouts.flight_recorder): buffer_size 0 is off (no dump
// files). `version` empty: the dump format of format.torch's release (format/flight_recorder.h).
struct FlightRecorderPlan {
  int buffer_size = 0;
  bool json = false;
  v1::FlightRecorderCoverage coverage = v1::FLIGHT_RECORDER_COVERAGE_UNSPECIFIED;
  std::string version;
  bool timing = false;  // TORCH_NCCL_ENABLE_TIMING=1
};

// The operator's RAS poller (scenario `nccl_ras`): every 0 is off (no poller, no file).
struct NcclRasPlan {
  TimeNs every = 0;
  bool json = false;
  int queries = 0;  // 0: every poll from the fault on (at least one)
  bool verbose = false;
};

struct Job {
  static Job Build(const v1::Scenario& scenario, std::uint64_t seed);
  // The job's controller restarted it (kubernetes.restarts): the same job from `start`, attempt 1.
  // JobSet recreates the pods (new 5-character suffixes); a PyTorchJob keeps its pods.
  Job Restarted(const v1::Scenario& scenario, TimeNs start) const;
  // PyTorchJob under kubernetes.restarts: restartPolicy OnFailure, containers restart in place and
  // the operator deletes no pod when one fails.
  bool KubeRestartsInPlace() const {
    return kube_restarts > 0 && kube_controller != v1::KUBE_CONTROLLER_JOBSET;
  }
  // What kubectl shows of this attempt's pod log on `node` (LAYOUT_KUBECTL_LOGS): a PyTorchJob's
  // last attempt is the current container, the one before it `--previous`, older ones are gone;
  // a JobSet's pods are new with each attempt (new names), so each keeps its log.
  PodLog PodLogOf(int node) const;

  // Shape.
  std::uint64_t seed = 0;
  int nodes = 0, gpus_per_node = 0, world = 0, tp = 1, pp = 1, dp = 1;
  // Timing (ns; absolute times are ns since the epoch, true time).
  TimeNs start = 0;
  TimeNs nccl_timeout = 0, monitor_interval = 0, sigterm_grace = 0, step_time = 0;
  int warmup_steps = 0, tp_rounds = 0, log_interval = 1;
  int microbatches = 1;                 // 1F1B microbatches per step
  bool zero = false;                    // DP: reduce-scatter + all-gather instead of all-reduce
  v1::TrainerLog trainer_log = v1::TRAINER_LOG_MEGATRON;
  double compute_jitter = 0;
  bool nccl_debug_info = false;
  bool torchrun_info_logs = false;  // format.torchrun_info_logs: LOGLEVEL=INFO for the agents
  bool nccl_socket = false;
  int nccl_socket_threads = 0;  // NCCL_SOCKET_NTHREADS: helper threads warn `socket progress error`  // NCCL_IB_DISABLE=1: NET/Socket transport (FAULT_KIND_SOCKET_RESET, _SOCKET_LINK_FAILURE)
  bool roce = false;         // format.fabric RoCE: GIDs in NCCL >= 2.19 IB WARNs, eth0 for OOB
  const DriverProfile* driver = nullptr;  // the NVRM lines' era (driver.h)
  bool dump_on_timeout = false;  // TORCH_NCCL_DUMP_ON_TIMEOUT: flight-recorder dump lines
  FlightRecorderPlan flight_recorder;  // ... and with a trace buffer, the dump files
  NcclRasPlan nccl_ras;                // ncclras polled on the first node
  int async_error_handling = 3;  // TORCH_NCCL_ASYNC_ERROR_HANDLING (0-3)
  bool blocking_wait = false;    // TORCH_NCCL_BLOCKING_WAIT=1
  TimeNs heartbeat_timeout = 0;  // TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC
  double watchdog_stuck_fraction = 0;  // ncclCommAbort hangs on this share of timed-out ranks
  double interleaved_line_rate = 0;    // srun splits this share of task lines (combined file)
  bool per_rank_timers = false;  // DeepSpeed-style per-rank timer lines every log_interval
  // Scenario `checkpointing` with a layout whose framework logs its saves (LogsSaves: Megatron,
  // DeepSpeed, HF Trainer, accelerate, Lightning, NeMo): rank 0 logs that framework's save
  // lines every `save_every` steps (none otherwise); the newest save's finish line is missing
  // when it never finished (a kill during it, in flight, finished after the fault).
  v1::CheckpointLayout save_log = v1::CHECKPOINT_LAYOUT_UNSPECIFIED;
  int save_every = 0;
  bool newest_save_unfinished = false;
  // Launcher, layout and scheduler.
  v1::Launcher launcher = v1::LAUNCHER_TORCHRUN;
  v1::Layout layout = v1::LAYOUT_PER_RANK_FILES;
  std::int64_t job_id = 0;
  bool kill_on_bad_exit = false;
  bool requeue = false;  // sbatch --requeue: a node failure requeues the job
  TimeNs kill_wait = 0, slurmd_timeout = 0;
  // mpirun (LAUNCHER_MPIRUN): Open MPI 5's PRRTE shapes instead of Open MPI 4's ORTE ones, and
  // --report-bindings (each node's daemon names its host and the ranks it starts).
  bool open_mpi5 = false;
  bool report_bindings = true;
  // DeepSpeed's runner started the job through mpirun or srun (Scenario.deepspeed_runner): its
  // `cmd = ...` line heads the console, every rank prints DeepSpeed's comm start-up lines.
  bool deepspeed_runner = false;
  // pdsh (LAUNCHER_PDSH): the login host's ssh ServerAliveInterval and ServerAliveCountMax.
  TimeNs ssh_alive_interval = 0;
  int ssh_alive_count = 0;
  std::string partition;
  TimeNs controller_offset = 0;  // slurmctld's host clock minus true time
  Workload workload;
  // Per node / per rank facts.
  // node -> the name its processes print (NCCL `host:`, torchrun's table): "gpu-0001"; under
  // Kubernetes the pod's hostname ("llama-worker-3", "llama-workers-0-3").
  std::vector<std::string> hostnames;
  // Kubernetes: node -> the Kubernetes node ("gpu-0004") and the pod name; empty otherwise.
  std::vector<std::string> node_names;
  std::vector<std::string> pod_names;
  v1::KubeController kube_controller = v1::KUBE_CONTROLLER_UNSPECIFIED;
  bool pod_timestamps = false;
  std::string kube_job, kube_namespace;
  int kube_restarts = 0;  // kubernetes.restarts: the controller restarts the failed job this often
  int kube_attempt = 0;   // which attempt this Job runs (0: the first; 1: after the restart)
  int kube_pending_node = -1;  // a restarted attempt's pod the scheduler never placed; -1: none
  std::vector<TimeNs> clock_offset;      // node -> printed time minus true time
  std::vector<std::int32_t> agent_pid;   // node -> torchrun's pid
  std::vector<TimeNs> agent_start;       // node -> when torchrun printed its banner
  std::vector<std::int32_t> worker_pid;  // rank -> pid
  // CUDA_VISIBLE_DEVICES (realism.gpu_order): node * gpus_per_node + local rank -> the
  // nvidia-smi index of the GPU it runs on. Empty: CUDA's default order (the identity).
  v1::GpuOrder gpu_order = v1::GPU_ORDER_UNSPECIFIED;
  std::vector<std::int8_t> gpu_of_local;
  Noise noise;                           // filled by PlanNoise once the fault is known

  // The rank that prints the per-step lines: Megatron's last rank, DeepSpeed's rank 0.
  int LoggingRank() const { return trainer_log == v1::TRAINER_LOG_DEEPSPEED ? 0 : world - 1; }
  int NodeOf(int rank) const { return rank / gpus_per_node; }
  // The machine: its kern.log folder, the truth's node.
  const std::string& NodeName(int node) const { return node_names.empty() ? hostnames[node] : node_names[node]; }
  int LocalRank(int rank) const { return rank % gpus_per_node; }
  // The nvidia-smi index (and PCI bus id slot) of the GPU the rank runs on.
  int PhysicalGpu(int rank) const {
    return gpu_of_local.empty() ? LocalRank(rank) : gpu_of_local[static_cast<std::size_t>(rank)];
  }
  // The local rank that runs on the node's GPU `gpu` (nvidia-smi index).
  int LocalOfGpu(int node, int gpu) const;
  int TpRank(int rank) const { return rank % tp; }
  int DpRank(int rank) const { return rank / tp % dp; }
  int PpRank(int rank) const { return rank / (tp * dp); }
  // The rank's neighbours in its DP ring and its pipeline that sit on another node: the links
  // its NIC carries (TP peers are on the same node, over NVLink). DP ring first.
  std::vector<int> InterNodePeers(int rank) const;

  // Process groups.
  int NumTpGroups() const { return world / tp; }
  int NumPpGroups() const { return world / pp; }
  int NumDpGroups() const { return world / dp; }
  int NumGroups() const { return 1 + NumTpGroups() + NumPpGroups() + NumDpGroups(); }
  int GroupUid(int rank, PgKind kind) const;
  int GroupRank(int rank, PgKind kind) const;  // position in the sorted member list
  int GroupSize(PgKind kind) const;
  PgKind KindOfGroup(int uid) const;
  // The member of group `uid` at group rank `i` (members sorted by global rank).
  int GroupMember(int uid, int i) const;
};

}  // namespace denpex::sim
