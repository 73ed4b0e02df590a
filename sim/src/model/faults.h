// The fault registry: one row per FaultKind saying what the fault hits (a rank, a node, the
// job), what the model does when it fires (its FaultAction), what it needs of the scenario and
// where it lands (its FaultRules), and what the truth says about it (owner, failure class, what
// to do before restarting). The truth cites by one table of rules (truth.cc `kRules`, by action,
// or by kind where a launcher tells a kind apart); a kind that reuses an action is a row here,
// its proto enum value, and whatever line shape is new. A new action is also a case in
// Workers::FireRankFault (or the scheduler's), the lines it marks as evidence (evidence.cc) and
// its rows in kRules; a GPU fault's kernel-log burst and CUDA error are in gpu_faults.cc.
#pragma once

#include <cstdint>
#include <string_view>

#include "denpex/common/time.h"
#include "records.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/vocabulary.pb.h"

namespace denpex::sim {

struct Job;

enum class FaultScope : std::uint8_t { kRank, kNode, kJob };

// What the model does at the fault's instant.
enum class FaultAction : std::uint8_t {
  kSigkill,          // the rank dies at once, silently
  kSegfault,         // faulthandler dump on stderr, then death by SIGSEGV
  kException,        // Python traceback on stderr, exit(1) after the interpreter tears down
  kHang,             // the rank never issues another collective
  kMismatch,         // the rank's next collective differs from its peers': nobody completes
  kNodeLoss,         // every process of the node vanishes, the agent too
  kSchedulerCancel,  // the scheduler signals every task (time limit, scancel, preemption)
  // The rank's GPU (or the rank's own kernel) fails: the node's kern.log gets the fault's
  // Xid burst (gpu_faults.cc), the rank raises a CUDA error at its next synchronisation and
  // exits 1 after the interpreter tears down.
  kCudaError,
  kHostOom,  // the kernel OOM killer SIGKILLs the rank (kern.log lines, srun "Out Of Memory")
  kSlowdown,         // fail-slow: the rank's (or node's) compute takes `slowdown` times longer
  kNicFailure,       // the rank's IB NIC fails: completion errors, then NCCL aborts on both ends
  kNcclSetup,        // the node's ranks fail in NCCL init (bootstrap interface, duplicate GPU)
  // The node's slurmd stops answering the controller; its ranks train on until slurmctld
  // sets the node DOWN and ends the job (slurm.cc), then slurmd answers again.
  kSlurmdSilent,
  // Every rank raises the same Python exception at once (loading the checkpoint it resumes
  // from) and exits 1: the job fails as one, no rank waits on another.
  kJobException,
  kEvict,            // Kubernetes: the kubelet SIGTERMs the pod's torchrun, which stops its workers
  // torchrun's c10d rendezvous never completes: the node's agent cannot reach the endpoint, the
  // others time out waiting for it (launcher.cc); no worker starts.
  kRendezvousTimeout,
  // A node never launches under pdsh (its ssh hangs); the static TCPStore's server on rank 0
  // times out waiting for its clients, and every rank that joined fails on the store (workers).
  kStoreJoinTimeout,
};

// What a kind needs of the scenario (checked by scenario_validate.cc), where it lands when the
// scenario leaves its place to the draw, and what else it changes (FaultTraits::rules, or-ed).
enum FaultRule : std::uint32_t {
  kNoRules = 0,
  kNeedsSlurm = 1u << 0,        // only the srun launcher has a scheduler that can do it
  kNeedsStaticStore = 1u << 1,  // a launcher that sets MASTER_ADDR (init_method env://)
  kNeedsGspDriver = 1u << 2,    // a driver with GSP firmware (format.driver)
  kNeedsOffRoot = 1u << 3,      // a node other than node 0 (the bootstrap root), nodes >= 2
  kDrawnOffRoot = 1u << 4,      // a drawn node is never node 0 (it cannot fail to reach itself)
  kOnStoreHost = 1u << 5,       // the default node is node 0, the rendezvous endpoint's host
  kUnderRay = 1u << 6,          // simulated under LAUNCHER_RAY too
  kRecursOnRestart = 1u << 7,   // kubernetes.restarts: each restarted pod hits it again
  kNodeUnusable = 1u << 8,      // kubernetes.restarts: the replacement pod cannot be placed
  kGpuState = 1u << 9,          // the epilogue's nvidia-smi runs by default (realism)
  kSocketTransport = 1u << 10,  // NCCL runs over NET/Socket (NCCL_IB_DISABLE=1)
  kLink = 1u << 11,             // a link between two nodes: the fault has a far end (`peer`)
  kAtSetup = 1u << 12,          // raised while setting up: `step` defaults to 0, not warm-up's end
  kNeedsZero = 1u << 13,        // ZeRO's reduce-scatter (data_parallel ZERO) in a DP group of >= 3
};

// kMismatch: what the rank issues where its peers issue the collective the fault hits.
enum class OddCollective : std::uint8_t {
  kOpOrSize,  // its next TP all-reduce (DP, p2p) as another op or size, by variant
  // It skipped ZeRO's gradient reduce-scatter: the group's next collective (the parameter
  // all-gather) takes its SeqNum, as PyTorch counts each rank's collectives on its own.
  kSkipped,
};

struct FaultTraits {
  v1::FaultKind kind;
  FaultScope scope;
  FaultAction action;
  v1::Owner owner;
  v1::FailureClass failure_class;
  std::uint32_t rules;  // FaultRule flags
  // Recovery: the first precondition's action verb and sentence ("{who}" is replaced by
  // "rank R on HOST", "HOST" or "the job").
  std::string_view recovery_action;
  std::string_view recovery_text;
  // The only launcher that can do it (LAUNCHER_UNSPECIFIED: any).
  v1::Launcher needs_launcher = v1::LAUNCHER_UNSPECIFIED;
  OddCollective odd_collective = OddCollective::kOpOrSize;

  bool Has(FaultRule rule) const { return (rules & rule) != 0; }
};

// nullptr for FAULT_KIND_UNSPECIFIED and values not in the table.
const FaultTraits* FindFault(v1::FaultKind kind);

// The fault resolved against the seed: who and when, and the drawn details of its shape.
struct FaultPlan {
  const FaultTraits* traits = nullptr;
  int rank = 0;  // kRank: the rank; kNode: the node's first rank; kJob: -1
  int node = 0;  // kRank/kNode: its node; kJob: -1
  int step = 0;
  double at_fraction = 0;
  TimeNs offset = 0;  // into the step: at_fraction * step_time
  int variant = 0;    // which traceback / which mismatch (drawn, or the scenario's `variant`)
  int peer = -1;      // IsLinkFault: the rank at the link's far end
  // kSlowdown: the compute factor, how many slow steps, and whether the rank then stalls.
  double slowdown = 1;
  int slow_steps = 0;
  bool stall = false;

  v1::FaultKind kind() const { return traits->kind; }
  FaultAction action() const { return traits->action; }
};

FaultPlan PlanFault(const v1::Fault& fault, const Job& job, int fault_index);

// The kind has the rule (false for kinds not in the table).
bool HasRule(v1::FaultKind kind, FaultRule rule);

// One link between two nodes fails (FAULT_KIND_LINK_FAILURE over IB,
// FAULT_KIND_SOCKET_LINK_FAILURE over NCCL's socket transport): the fault has a far end (`peer`).
inline bool IsLinkFault(v1::FaultKind kind) { return HasRule(kind, kLink); }

// Whose traceback a kException / kJobException fault prints (records.h AppError).
AppError AppErrorOf(v1::FaultKind kind);

// The fault is a DeepSpeed op's JIT build failing on the rank's node (FAULT_KIND_DEEPSPEED_ERROR's
// cpu_adam variant): the rank held the node's build lock; its local peers wait, then fail to
// import the op (AppError::kExtensionImport).
bool NodeJitBuildFailure(const FaultPlan& plan);

}  // namespace denpex::sim
