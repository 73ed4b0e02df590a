// Defaults and semantic validation of a parsed scenario. The rules and defaults are the
// ones docs/scenario_format.md lists; a change here changes that file in the same commit.
// Every error names the offending field's location (Locator) and says what to do.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "denpex/common/time.h"
#include "format/profiles.h"
#include "model/checkpoints.h"
#include "model/driver.h"
#include "model/faults.h"
#include "scenario_internal.h"

namespace denpex::sim {

namespace {

constexpr int kDefaultGpusPerNode = 8;
constexpr int kMaxGpusPerNode = 16;  // the PCI bus-id table covers 16 GPUs
// Event payloads hold 20-bit ids and a job has fewer than 3 * world + 1 rendezvous.
constexpr std::int64_t kMaxWorld = 1 << 18;
constexpr int kMaxNodes = 99'999;  // hostnames carry at most 5 digits
constexpr std::int64_t kDefaultJobId = 4242001;
constexpr std::int64_t kDefaultNcclTimeoutMs = 600'000;
constexpr std::int64_t kDefaultMonitorIntervalMs = 100;
constexpr std::int64_t kDefaultSigtermGraceMs = 30'000;
constexpr std::int64_t kDefaultKillWaitMs = 30'000;
constexpr std::int64_t kDefaultSlurmdTimeoutMs = 300'000;
constexpr std::int64_t kMaxDurationMs = 7LL * 24 * 3600 * 1000;  // a week
constexpr int kDefaultWarmupSteps = 20;
constexpr int kMaxSteps = 100'000;                  // every step is simulated, rank by rank
constexpr std::int64_t kMaxStepTimeMs = 3'600'000;  // an hour
constexpr int kMaxTpCollectives = 1000;
constexpr int kMaxMicrobatches = 64;
constexpr int kMaxOpsPerStep = 16384;  // microbatches x TP collectives (a rank's program)
constexpr std::int64_t kMinNcclTimeoutMs = 10'000;
constexpr std::int64_t kDefaultStepTimeMs = 1500;
constexpr int kDefaultTpCollectives = 4;
constexpr double kDefaultComputeJitter = 0.02;
constexpr double kDefaultSkewSigmaMs = 50;
constexpr double kMaxSkewSigmaMs = 60'000;
constexpr int kMaxHistory = 1000;
constexpr const char* kDefaultStartTime = "2026-03-02T09:00:00Z";

std::string Str(std::int64_t v) { return std::to_string(v); }

// Shortest text that reads back as `v` ("1", "0.25"), for echoing a value in a message.
std::string StrD(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "?";
}

bool ValidHostnamePrefix(const std::string& p) {
  if (p.empty()) return false;
  for (char c : p) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return p != "." && p != "..";
}

Status CheckNonNegative(const Locator& loc, std::string_view path, std::int64_t v,
                        std::string_view hint) {
  if (v >= 0) return Status::Ok();
  return loc.Error(path, std::string(path) + " must not be negative (got " + Str(v) + ")", hint);
}

Status CheckDurationMs(const Locator& loc, std::string_view path, std::int64_t v) {
  DENPEX_RETURN_IF_ERROR(CheckNonNegative(loc, path, v,
                                          "give a duration in milliseconds, or "
                                          "leave it out for the default"));
  if (v <= kMaxDurationMs) return Status::Ok();
  return loc.Error(path, std::string(path) + " is longer than a week (" + Str(v) + " ms)",
                   "durations are milliseconds: 600000 is 10 minutes");
}

// Shape fields one by one, before defaults (zero means "default", negative is an error).
Status ValidateJobFields(const v1::Scenario& s, const Locator& loc) {
  if (!s.has_job()) {
    return loc.Error("job", "the scenario has no job block",
                     "add job { nodes: N } (gpus_per_node defaults to 8)");
  }
  const v1::Job& j = s.job();
  if (j.nodes() < 1) {
    return loc.Error({"job.nodes", "job"},
                     "job.nodes must be at least 1 (got " + Str(j.nodes()) + ")",
                     "set job { nodes: N }, the number of hosts");
  }
  if (j.nodes() > kMaxNodes) {
    return loc.Error("job.nodes", "job.nodes is at most " + Str(kMaxNodes),
                     "simulate fewer, larger nodes");
  }
  if (j.gpus_per_node() < 0 || j.gpus_per_node() > kMaxGpusPerNode) {
    return loc.Error("job.gpus_per_node",
                     "job.gpus_per_node must be between 1 and " + Str(kMaxGpusPerNode) + " (got " +
                         Str(j.gpus_per_node()) + ")",
                     "leave it out for the default of 8");
  }
  const std::pair<std::string_view, int> dims[] = {
      {"job.tp", j.tp()}, {"job.pp", j.pp()}, {"job.dp", j.dp()}};
  for (auto [path, v] : dims) {
    if (v < 0) {
      return loc.Error(path, std::string(path) + " must be at least 1 (got " + Str(v) + ")",
                       "leave it out for the default");
    }
  }
  if (!j.hostname_prefix().empty() && !ValidHostnamePrefix(j.hostname_prefix())) {
    return loc.Error("job.hostname_prefix",
                     "job.hostname_prefix '" + j.hostname_prefix() + "' is not a hostname prefix",
                     "use letters, digits, '-', '_' or '.', e.g. \"gpu-\"");
  }
  return CheckNonNegative(loc, "job.job_id", j.job_id(), "leave it out for the default 4242001");
}

// Defaults and the parallel layout: world = nodes * gpus_per_node = tp * pp * dp.
Status FillJob(v1::Job* j, const Locator& loc) {
  if (j->gpus_per_node() == 0) j->set_gpus_per_node(kDefaultGpusPerNode);
  if (j->tp() == 0) j->set_tp(1);
  if (j->pp() == 0) j->set_pp(1);
  if (j->hostname_prefix().empty()) j->set_hostname_prefix("gpu-");
  if (j->job_id() == 0) j->set_job_id(kDefaultJobId);
  const std::int64_t world = std::int64_t{j->nodes()} * j->gpus_per_node();
  if (world > kMaxWorld) {
    return loc.Error(
        {"job.nodes", "job.gpus_per_node"},
        "the job has " + Str(world) + " ranks; at most " + Str(kMaxWorld) + " are supported",
        "lower job.nodes");
  }
  if (j->gpus_per_node() % j->tp() != 0) {
    return loc.Error("job.tp",
                     "job.tp " + Str(j->tp()) + " does not divide gpus_per_node " +
                         Str(j->gpus_per_node()) + " (tensor-parallel groups stay inside a node)",
                     "use a tp that divides " + Str(j->gpus_per_node()));
  }
  const std::int64_t tp_pp = std::int64_t{j->tp()} * j->pp();
  const std::string shape =
      Str(j->nodes()) + " nodes x " + Str(j->gpus_per_node()) + " GPUs = " + Str(world) + " ranks";
  if (j->dp() == 0) {
    if (world % tp_pp != 0) {
      return loc.Error({"job.pp", "job.tp", "job.nodes", "job"},
                       "tp*pp = " + Str(tp_pp) + " does not divide the world size (" + shape + ")",
                       "choose tp and pp whose product divides " + Str(world));
    }
    j->set_dp(static_cast<std::int32_t>(world / tp_pp));
  }
  if (tp_pp * j->dp() != world) {
    return loc.Error({"job", "job.dp", "job.tp", "job.pp", "job.nodes", "job.gpus_per_node"},
                     "tp*pp*dp = " + Str(j->tp()) + "*" + Str(j->pp()) + "*" + Str(j->dp()) +
                         " = " + Str(tp_pp * j->dp()) + " but the job has " + shape,
                     world % tp_pp == 0
                         ? "set dp: " + Str(world / tp_pp) + ", or leave dp out to derive it"
                         : "tp*pp*dp must equal nodes*gpus_per_node");
  }
  return Status::Ok();
}

Status FillTimeouts(v1::Timeouts* t, const Locator& loc) {
  DENPEX_RETURN_IF_ERROR(CheckDurationMs(loc, "timeouts.nccl_timeout_ms", t->nccl_timeout_ms()));
  DENPEX_RETURN_IF_ERROR(
      CheckDurationMs(loc, "timeouts.monitor_interval_ms", t->monitor_interval_ms()));
  DENPEX_RETURN_IF_ERROR(CheckDurationMs(loc, "timeouts.sigterm_grace_ms", t->sigterm_grace_ms()));
  if (t->nccl_timeout_ms() == 0) t->set_nccl_timeout_ms(kDefaultNcclTimeoutMs);
  if (t->monitor_interval_ms() == 0) t->set_monitor_interval_ms(kDefaultMonitorIntervalMs);
  if (t->sigterm_grace_ms() == 0) t->set_sigterm_grace_ms(kDefaultSigtermGraceMs);
  return Status::Ok();
}

Status CheckLauncher(const v1::Scenario& s, const Locator& loc) {
  switch (s.launcher()) {
    case v1::LAUNCHER_UNSPECIFIED:
    case v1::LAUNCHER_TORCHRUN:
    case v1::LAUNCHER_SRUN:
    case v1::LAUNCHER_MPIRUN:
    case v1::LAUNCHER_PDSH:
    case v1::LAUNCHER_KUBERNETES:
    case v1::LAUNCHER_RAY:
      return Status::Ok();
    default:
      return loc.Error("launcher", "launcher " + Str(s.launcher()) + " is not a Launcher value",
                       "use LAUNCHER_TORCHRUN (or leave launcher out)");
  }
}

// pdsh's ssh keepalive (ServerAliveInterval x ServerAliveCountMax), and its fan-out: `pdsh -f 1024`
// runs at most 1024 sessions at once, so the rest of a larger job would never start.
Status FillPdsh(v1::Scenario* s, const Locator& loc) {
  v1::Pdsh* p = s->mutable_pdsh();
  if (p->server_alive_interval_s() < 0 || p->server_alive_count_max() < 0) {
    return loc.Error("pdsh", "pdsh.server_alive_interval_s and server_alive_count_max must not be negative",
                     "leave them out for 30 s and 3");
  }
  if (p->server_alive_interval_s() == 0) p->set_server_alive_interval_s(30);
  if (p->server_alive_count_max() == 0) p->set_server_alive_count_max(3);
  if (s->deepspeed_runner() && s->launcher() != v1::LAUNCHER_MPIRUN && s->launcher() != v1::LAUNCHER_SRUN) {
    return loc.Error({"deepspeed_runner", "launcher"},
                     "deepspeed_runner starts the job through mpirun (--launcher openmpi) or srun (--launcher slurm), "
                     "but the launcher is " + v1::Launcher_Name(s->launcher()),
                     "set launcher: LAUNCHER_MPIRUN or LAUNCHER_SRUN (LAUNCHER_PDSH is always DeepSpeed's), or leave "
                     "deepspeed_runner out");
  }
  if (s->launcher() == v1::LAUNCHER_PDSH && s->job().nodes() > 1024) {
    return loc.Error({"launcher", "job.nodes"},
                     "DeepSpeed runs `pdsh -f 1024`: at most 1024 nodes run at once, and job.nodes is " +
                         std::to_string(s->job().nodes()),
                     "use at most 1024 nodes (8192 ranks of 8 GPUs) under LAUNCHER_PDSH");
  }
  return Status::Ok();
}

// The layout a launcher leaves by default; srun, Kubernetes and mpirun leave only that one.
v1::Layout OwnLayout(v1::Launcher launcher) {
  switch (launcher) {
    case v1::LAUNCHER_SRUN: return v1::LAYOUT_SLURM_OUT;
    case v1::LAUNCHER_KUBERNETES: return v1::LAYOUT_KUBECTL_LOGS;
    case v1::LAUNCHER_MPIRUN: return v1::LAYOUT_MPIRUN_OUT;
    case v1::LAUNCHER_PDSH: return v1::LAYOUT_PDSH_OUT;
    case v1::LAUNCHER_RAY: return v1::LAYOUT_RAY_DRIVER;
    default: return v1::LAYOUT_UNSPECIFIED;
  }
}

std::string LayoutHint(v1::Launcher launcher) {
  const v1::Layout own = OwnLayout(launcher);
  if (own == v1::LAYOUT_UNSPECIFIED) return "torchrun leaves LAYOUT_PER_RANK_FILES or LAYOUT_TORCHRUN_LOG_DIR";
  return v1::Launcher_Name(launcher) + " leaves " + v1::Layout_Name(own) + " (or leave layout out)";
}

// kubernetes.restarts: up to kMaxKubeRestarts restarts of the whole job, under Kubernetes only
// (each attempt fails the same way; more would only repeat it). A fault that leaves
// its node unusable needs JobSet's gang re-creation (a PyTorchJob restarts containers in place,
// on the node that is gone); any other fault must be one that recurs in the restarted attempt.
Status CheckKubeRestarts(const v1::Scenario& s, const Locator& loc) {
  const int restarts = s.kubernetes().restarts();
  if (restarts == 0) return Status::Ok();
  constexpr int kMaxKubeRestarts = 3;
  if (restarts < 0 || restarts > kMaxKubeRestarts) {
    return loc.Error("kubernetes.restarts", "kubernetes.restarts " + Str(restarts) + " is not supported",
                     "use 0 to " + Str(kMaxKubeRestarts));
  }
  if (s.launcher() != v1::LAUNCHER_KUBERNETES) {
    return loc.Error("kubernetes.restarts", "kubernetes.restarts needs launcher LAUNCHER_KUBERNETES",
                     "set launcher: LAUNCHER_KUBERNETES or drop kubernetes.restarts");
  }
  const v1::FaultKind kind = s.faults_size() > 0 ? s.faults(0).kind() : v1::FAULT_KIND_UNSPECIFIED;
  const bool node_gone = HasRule(kind, kNodeUnusable);
  const bool recurs = HasRule(kind, kRecursOnRestart);
  if (!node_gone && !recurs) {
    return loc.Error({"kubernetes.restarts", "faults"}, "kubernetes.restarts does not support fault " + v1::FaultKind_Name(kind),
                     "use FAULT_KIND_EXCEPTION, SIGSEGV, SIGKILL or CUDA_OOM (they recur), or NODE_LOSS or "
                     "XID_FALLEN_OFF_BUS under KUBE_CONTROLLER_JOBSET (the replacement pod cannot be placed)");
  }
  if (node_gone && s.kubernetes().controller() != v1::KUBE_CONTROLLER_JOBSET) {
    return loc.Error({"kubernetes.restarts", "kubernetes.controller"},
                     "kubernetes.restarts with " + v1::FaultKind_Name(kind) + " needs KUBE_CONTROLLER_JOBSET",
                     "a PyTorchJob restarts its containers in place, on the node the fault made unusable");
  }
  return Status::Ok();
}

// Layout defaults to the launcher's; srun, Kubernetes, Ray and mpirun leave only their own.
Status FillLayoutAndSlurm(v1::Scenario* s, const Locator& loc) {
  const bool srun = s->launcher() == v1::LAUNCHER_SRUN;
  const v1::Layout own = OwnLayout(s->launcher());
  if (s->layout() == v1::LAYOUT_UNSPECIFIED) {
    s->set_layout(own != v1::LAYOUT_UNSPECIFIED ? own : v1::LAYOUT_PER_RANK_FILES);
  }
  if (!v1::Layout_IsValid(s->layout())) {
    return loc.Error("layout", "layout " + Str(s->layout()) + " is not a Layout value",
                     "use LAYOUT_PER_RANK_FILES, LAYOUT_TORCHRUN_LOG_DIR, LAYOUT_SLURM_OUT, "
                     "LAYOUT_MPIRUN_OUT or LAYOUT_PDSH_OUT");
  }
  const bool own_only = s->layout() == v1::LAYOUT_SLURM_OUT || s->layout() == v1::LAYOUT_KUBECTL_LOGS ||
                        s->layout() == v1::LAYOUT_RAY_DRIVER || s->layout() == v1::LAYOUT_MPIRUN_OUT ||
                        s->layout() == v1::LAYOUT_PDSH_OUT;
  if (own != v1::LAYOUT_UNSPECIFIED ? s->layout() != own : own_only) {
    return loc.Error({"layout", "launcher"},
                     "layout " + v1::Layout_Name(s->layout()) + " does not fit launcher " +
                         v1::Launcher_Name(s->launcher()),
                     LayoutHint(s->launcher()));
  }
  (void)srun;
  v1::Kubernetes* k = s->mutable_kubernetes();
  if (k->controller() == v1::KUBE_CONTROLLER_UNSPECIFIED) k->set_controller(v1::KUBE_CONTROLLER_PYTORCHJOB);
  if (!v1::KubeController_IsValid(k->controller())) {
    return loc.Error("kubernetes.controller", "kubernetes.controller " + Str(k->controller()) + " is not a KubeController value",
                     "use KUBE_CONTROLLER_PYTORCHJOB or KUBE_CONTROLLER_JOBSET");
  }
  if (k->job_name().empty()) k->set_job_name("llama");
  if (k->namespace_().empty()) k->set_namespace_("training");
  DENPEX_RETURN_IF_ERROR(CheckKubeRestarts(*s, loc));
  v1::Slurm* slurm = s->mutable_slurm();
  DENPEX_RETURN_IF_ERROR(CheckDurationMs(loc, "slurm.kill_wait_ms", slurm->kill_wait_ms()));
  DENPEX_RETURN_IF_ERROR(
      CheckDurationMs(loc, "slurm.slurmd_timeout_ms", slurm->slurmd_timeout_ms()));
  if (slurm->kill_wait_ms() == 0) slurm->set_kill_wait_ms(kDefaultKillWaitMs);
  if (slurm->slurmd_timeout_ms() == 0) slurm->set_slurmd_timeout_ms(kDefaultSlurmdTimeoutMs);
  if (slurm->partition().empty()) slurm->set_partition("gpu");
  v1::BareMetal* bare = s->mutable_bare_metal();
  if (bare->open_mpi().empty()) bare->set_open_mpi("4.1");
  DENPEX_RETURN_IF_ERROR(FillPdsh(s, loc));
  if (bare->open_mpi() != "4.1" && bare->open_mpi() != "5.0") {
    return loc.Error("bare_metal.open_mpi", "bare_metal.open_mpi \"" + bare->open_mpi() + "\" is not supported",
                     "use \"4.1\" (ORTE) or \"5.0\" (PRRTE)");
  }
  return Status::Ok();
}

Status FillFormat(v1::FormatProfile* f, const Locator& loc) {
  if (f->slurm().empty()) f->set_slurm("23.02");
  if (FindSlurmProfile(f->slurm()) == nullptr) {
    return loc.Error("format.slurm", "slurm profile \"" + f->slurm() + "\" is not supported",
                     "use " + std::string(SupportedSlurmProfiles()));
  }
  if (f->torch().empty()) f->set_torch("2.4");
  if (f->nccl().empty()) f->set_nccl("2.21.5");
  if (f->driver().empty()) f->set_driver("535");
  if (FindDriverProfile(f->driver()) == nullptr) {
    return loc.Error("format.driver", "driver profile \"" + f->driver() + "\" is not supported",
                     "use " + std::string(SupportedDriverProfiles()));
  }
  const TorchProfile* torch = FindTorchProfile(f->torch());
  if (torch == nullptr || !torch->supported) {
    return loc.Error("format.torch",
                     "torch profile \"" + f->torch() + "\" is " +
                         (torch == nullptr ? "not a known release" : "not supported yet"),
                     "use " + std::string(SupportedTorchProfiles()));
  }
  const NcclProfile* nccl = FindNcclProfile(f->nccl());
  if (nccl == nullptr || !nccl->supported) {
    return loc.Error("format.nccl",
                     "nccl profile \"" + f->nccl() + "\" is " +
                         (nccl == nullptr ? "not a known release" : "not supported yet"),
                     "use " + std::string(SupportedNcclProfiles()));
  }
  return Status::Ok();
}

Status FillTraining(v1::Training* t, const Locator& loc) {
  DENPEX_RETURN_IF_ERROR(CheckNonNegative(loc, "training.warmup_steps", t->warmup_steps(),
                                          "the number of healthy steps before the fault"));
  DENPEX_RETURN_IF_ERROR(CheckDurationMs(loc, "training.step_time_ms", t->step_time_ms()));
  DENPEX_RETURN_IF_ERROR(CheckNonNegative(loc, "training.tp_collectives_per_step",
                                          t->tp_collectives_per_step(), "leave it out for 4"));
  DENPEX_RETURN_IF_ERROR(
      CheckNonNegative(loc, "training.log_interval", t->log_interval(), "leave it out for 1"));
  if (!(t->compute_jitter() >= 0 && t->compute_jitter() < 1)) {
    return loc.Error(
        "training.compute_jitter",
        "training.compute_jitter must be in [0, 1) (got " + StrD(t->compute_jitter()) + ")",
        "it is a relative sigma: 0.02 is 2%");
  }
  if (t->warmup_steps() > kMaxSteps) {
    return loc.Error("training.warmup_steps", "training.warmup_steps is at most " + Str(kMaxSteps),
                     "every step is simulated; a few tens show the job's rhythm");
  }
  if (t->step_time_ms() > kMaxStepTimeMs) {
    return loc.Error("training.step_time_ms", "training.step_time_ms is at most an hour",
                     "give the compute time of one step in milliseconds");
  }
  if (t->tp_collectives_per_step() > kMaxTpCollectives) {
    return loc.Error("training.tp_collectives_per_step",
                     "training.tp_collectives_per_step is at most " + Str(kMaxTpCollectives),
                     "a few per step (forward and backward) is typical");
  }
  DENPEX_RETURN_IF_ERROR(CheckNonNegative(loc, "training.microbatches", t->microbatches(),
                                          "leave it out for 1 (no pipeline interleaving)"));
  if (t->microbatches() > kMaxMicrobatches) {
    return loc.Error("training.microbatches",
                     "training.microbatches is at most " + Str(kMaxMicrobatches),
                     "a few times the pipeline depth is typical (e.g. 2 x pp)");
  }
  if (std::int64_t{t->microbatches()} * std::max(4, t->tp_collectives_per_step()) >
      kMaxOpsPerStep) {
    return loc.Error({"training.microbatches", "training.tp_collectives_per_step"},
                     "training.microbatches x training.tp_collectives_per_step is at most " +
                         Str(kMaxOpsPerStep),
                     "lower either: each is one operation of every rank's step");
  }
  if (t->warmup_steps() == 0) t->set_warmup_steps(kDefaultWarmupSteps);
  if (t->microbatches() == 0) t->set_microbatches(1);
  if (t->data_parallel() == v1::DATA_PARALLEL_UNSPECIFIED) {
    t->set_data_parallel(v1::DATA_PARALLEL_DDP);
  }
  if (t->trainer_log() == v1::TRAINER_LOG_UNSPECIFIED) t->set_trainer_log(v1::TRAINER_LOG_MEGATRON);
  if (t->step_time_ms() == 0) t->set_step_time_ms(kDefaultStepTimeMs);
  if (t->tp_collectives_per_step() == 0) t->set_tp_collectives_per_step(kDefaultTpCollectives);
  if (t->log_interval() == 0) t->set_log_interval(1);
  if (t->compute_jitter() == 0) t->set_compute_jitter(kDefaultComputeJitter);
  return Status::Ok();
}

Status FillClocksAndStart(v1::Scenario* s, const Locator& loc) {
  v1::Clocks* c = s->mutable_clocks();
  if (!c->has_skew_sigma_ms()) c->set_skew_sigma_ms(kDefaultSkewSigmaMs);
  if (!(c->skew_sigma_ms() >= 0 && c->skew_sigma_ms() <= kMaxSkewSigmaMs)) {
    return loc.Error(
        "clocks.skew_sigma_ms",
        "clocks.skew_sigma_ms must be in [0, 60000] (got " + StrD(c->skew_sigma_ms()) + ")",
        "a sigma in milliseconds; 0 disables skew");
  }
  if (!(c->skew_max_ms() >= 0 && c->skew_max_ms() <= kMaxSkewSigmaMs)) {
    return loc.Error(
        "clocks.skew_max_ms",
        "clocks.skew_max_ms must be in [0, 60000] (got " + StrD(c->skew_max_ms()) + ")",
        "the largest heavy-tailed offset in milliseconds; 5000 is the default");
  }
  if (c->skew_max_ms() == 0) c->set_skew_max_ms(5000);
  if (s->start_time().empty()) s->set_start_time(kDefaultStartTime);
  if (!ParseRfc3339(s->start_time())) {
    return loc.Error("start_time", "start_time \"" + s->start_time() + "\" is not RFC 3339",
                     "write it like \"2026-03-02T09:00:00Z\"");
  }
  return Status::Ok();
}

// Absent realism booleans are on; the damage fractions are shares of the nodes.
Status FillRealism(v1::Realism* r, bool gpu_fault, const Locator& loc) {
  if (!r->has_benign_warnings()) r->set_benign_warnings(true);
  if (!r->has_loud_rank()) r->set_loud_rank(true);
  if (!r->has_kernel_logs()) r->set_kernel_logs(true);
  if (!r->has_old_ecc_event()) r->set_old_ecc_event(r->kernel_logs());
  if (!r->has_xid45_on_kill()) r->set_xid45_on_kill(r->kernel_logs());
  if (!r->has_nvidia_smi()) r->set_nvidia_smi(gpu_fault);
  if (r->dcgm_diag_level() < 0 || r->dcgm_diag_level() > 3) {
    return loc.Error("realism.dcgm_diag_level", "realism.dcgm_diag_level must be 1, 2 or 3 (got " + Str(r->dcgm_diag_level()) + ")",
                     "dcgmi diag -r 1 (quick), 2 (medium: PCIe, GPU Memory) or 3 (long: Diagnostic, Stress)");
  }
  if (r->dcgm_diag_level() >= 2) r->set_dcgm(true);
  if (r->nvidia_smi_query() || r->dcgm()) r->set_nvidia_smi(true);  // one epilogue runs them all
  if (r->xid45_on_kill() && !r->kernel_logs()) {
    return loc.Error("realism.xid45_on_kill", "realism.xid45_on_kill needs kernel_logs",
                     "set kernel_logs: true, or xid45_on_kill: false");
  }
  const std::pair<const char*, double> fractions[] = {
      {"realism.missing_node_fraction", r->missing_node_fraction()},
      {"realism.truncated_node_fraction", r->truncated_node_fraction()},
      {"realism.kernel_ratelimit", r->kernel_ratelimit()}};
  for (const auto& [path, v] : fractions) {
    if (!(v >= 0 && v <= 1)) {
      return loc.Error(path, std::string(path) + " must be in [0, 1] (got " + StrD(v) + ")",
                       "a share of the nodes, e.g. 0.05");
    }
  }
  if (r->missing_node_fraction() + r->truncated_node_fraction() > 1) {
    return loc.Error("realism.truncated_node_fraction",
                     "realism.missing_node_fraction + truncated_node_fraction exceeds 1",
                     "a node is either missing or truncated; lower one of them");
  }
  if (r->old_ecc_event() && !r->kernel_logs()) {
    return loc.Error("realism.old_ecc_event", "realism.old_ecc_event needs kernel_logs",
                     "set kernel_logs: true, or old_ecc_event: false");
  }
  return Status::Ok();
}

// Checkpointing: counts are positive when given; a world-size change must fit the model
// parallel grid (DeepSpeed names shards by DP x MP); a save in flight needs save lines.
Status CheckCheckpointing(const v1::Scenario& s, const Locator& loc) {
  if (!s.has_checkpointing()) return Status::Ok();
  const v1::Checkpointing& c = s.checkpointing();
  const std::pair<const char*, std::int64_t> counts[] = {
      {"checkpointing.every_steps", c.every_steps()},
      {"checkpointing.keep", c.keep()},
      {"checkpointing.saved_world_size", c.saved_world_size()}};
  for (const auto& [path, v] : counts) {
    if (v < 0) {
      return loc.Error(path, std::string(path) + " must not be negative (got " + Str(v) + ")",
                       "leave it out for the default");
    }
  }
  const int mp = s.job().tp() * s.job().pp();
  if (c.saved_world_size() > 0 && mp > 0 && c.saved_world_size() % mp != 0) {
    return loc.Error("checkpointing.saved_world_size",
                     "checkpointing.saved_world_size " + Str(c.saved_world_size()) +
                         " is not a multiple of tp * pp = " + Str(mp),
                     "the run that saved it had the same model-parallel grid");
  }
  // A framework's own folders are a known layout by their names: a custom writer's files
  // there would be judged as that framework's save.
  if (c.damage() == v1::CHECKPOINT_DAMAGE_UNKNOWN_FORMAT && OwnsItsFolders(c.layout())) {
    return loc.Error("checkpointing.damage",
                     "checkpointing.damage CHECKPOINT_DAMAGE_UNKNOWN_FORMAT needs a layout of plain files",
                     "use CHECKPOINT_LAYOUT_TORCH_SAVE, CHECKPOINT_LAYOUT_TORCH_DIR, CHECKPOINT_LAYOUT_DEEPSPEED or "
                     "CHECKPOINT_LAYOUT_MEGATRON");
  }
  // torch.save, its folders and DCP log no save lines: there a save in flight is a kill.
  if (c.damage() == v1::CHECKPOINT_DAMAGE_SAVE_IN_FLIGHT && !LogsSaves(c.layout())) {
    return loc.Error("checkpointing.damage",
                     "checkpointing.damage CHECKPOINT_DAMAGE_SAVE_IN_FLIGHT needs a layout whose framework logs "
                     "its saves",
                     "use a framework's layout (Megatron, DeepSpeed, HF Trainer, accelerate, Lightning, NeMo), or "
                     "CHECKPOINT_DAMAGE_KILL_DURING_SAVE");
  }
  return Status::Ok();
}

// A timeout shorter than a healthy wait would fire without any fault; the model's waits last
// up to a few seconds at start-up and about a step afterwards.
Status CheckTimeoutAgainstSteps(const v1::Scenario& s, const Locator& loc) {
  const std::int64_t floor =
      std::max<std::int64_t>(kMinNcclTimeoutMs, 4 * s.training().step_time_ms());
  if (s.timeouts().nccl_timeout_ms() >= floor) return Status::Ok();
  return loc.Error({"timeouts.nccl_timeout_ms", "training.step_time_ms"},
                   "timeouts.nccl_timeout_ms " + Str(s.timeouts().nccl_timeout_ms()) +
                       " would fire on healthy collectives (it must be at least " + Str(floor) +
                       " ms, the larger of 10 s and 4 step times)",
                   "raise the timeout or shorten training.step_time_ms");
}

// "FAULT_KIND_SIGKILL, FAULT_KIND_SIGSEGV, ..." for hints.
std::string FaultKindList() {
  std::string out;
  const auto* kinds = v1::FaultKind_descriptor();
  for (int i = 0; i < kinds->value_count(); ++i) {
    const int k = kinds->value(i)->number();
    if (FindFault(static_cast<v1::FaultKind>(k)) == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += v1::FaultKind_Name(static_cast<v1::FaultKind>(k));
  }
  return out;
}

Status CheckFaultKind(const v1::Fault& f, const std::string& path, const v1::Scenario& s,
                      const Locator& loc) {
  const FaultTraits* traits = FindFault(f.kind());
  if (traits == nullptr) {
    return loc.Error({path + ".kind", path}, path + ".kind is missing or unknown",
                     "set kind to one of " + FaultKindList());
  }
  if (traits->Has(kNeedsSlurm) && s.launcher() != v1::LAUNCHER_SRUN) {
    return loc.Error({path + ".kind", "launcher"},
                     v1::FaultKind_Name(f.kind()) + " needs a scheduler, but the launcher is " +
                         v1::Launcher_Name(s.launcher()),
                     "set launcher: LAUNCHER_SRUN");
  }
  if (traits->needs_launcher != v1::LAUNCHER_UNSPECIFIED && s.launcher() != traits->needs_launcher) {
    return loc.Error({path + ".kind", "launcher"},
                     v1::FaultKind_Name(f.kind()) + " happens only under " + v1::Launcher_Name(traits->needs_launcher) +
                         ", but the launcher is " + v1::Launcher_Name(s.launcher()),
                     "set launcher: " + v1::Launcher_Name(traits->needs_launcher));
  }
  const bool static_store = s.launcher() == v1::LAUNCHER_PDSH || s.launcher() == v1::LAUNCHER_SRUN ||
                            s.launcher() == v1::LAUNCHER_MPIRUN;
  if (traits->Has(kNeedsStaticStore) && !static_store) {
    return loc.Error({path + ".kind", "launcher"},
                     v1::FaultKind_Name(f.kind()) +
                         " needs a launcher that sets MASTER_ADDR for init_method env:// "
                         "(a static TCPStore), but the launcher is " +
                         v1::Launcher_Name(s.launcher()),
                     "set launcher: LAUNCHER_PDSH, LAUNCHER_SRUN or LAUNCHER_MPIRUN");
  }
  if (s.launcher() == v1::LAUNCHER_RAY && !traits->Has(kUnderRay)) {
    return loc.Error({path + ".kind", "launcher"},
                     v1::FaultKind_Name(f.kind()) + " is not simulated under LAUNCHER_RAY",
                     "use FAULT_KIND_SIGKILL, FAULT_KIND_SIGSEGV, FAULT_KIND_NODE_LOSS, FAULT_KIND_RAY_OOM_KILL, "
                     "FAULT_KIND_EXCEPTION or FAULT_KIND_HANG");
  }
  if (s.launcher() == v1::LAUNCHER_KUBERNETES && traits->Has(kNeedsSlurm)) {
    return loc.Error({path + ".kind", "launcher"}, v1::FaultKind_Name(f.kind()) + " is a Slurm fault",
                     "use FAULT_KIND_POD_EVICTION for the platform ending a pod");
  }
  if (traits->Has(kNeedsGspDriver) && !FindDriverProfile(s.format().driver())->gsp) {
    return loc.Error({path + ".kind", "format.driver"},
                     v1::FaultKind_Name(f.kind()) +
                         " needs a driver with GSP firmware, but format.driver is " +
                         s.format().driver(),
                     "set format.driver: \"535\" or \"560\"");
  }
  if (traits->Has(kNeedsZero) &&
      (s.training().data_parallel() != v1::DATA_PARALLEL_ZERO || s.job().dp() < 3)) {
    return loc.Error(
        {path + ".kind", "training.data_parallel", "job.dp"},
        v1::FaultKind_Name(f.kind()) +
            " skips ZeRO's gradient reduce-scatter: it needs training.data_parallel "
            "DATA_PARALLEL_ZERO and a data-parallel group of at least 3 ranks (job.dp " +
            Str(s.job().dp()) + ")",
        "set training { data_parallel: DATA_PARALLEL_ZERO } and job.dp >= 3");
  }
  if (f.has_node() && traits->scope != FaultScope::kNode) {
    return loc.Error(path + ".node", path + ".node applies to node faults only",
                     "give the rank with rank: N instead");
  }
  const bool slow = traits->action == FaultAction::kSlowdown;
  if (!slow && (f.has_slowdown() || f.has_slow_steps() || f.stall())) {
    return loc.Error(path + (f.has_slowdown() ? ".slowdown" : f.has_slow_steps() ? ".slow_steps" : ".stall"),
                     "slowdown, slow_steps and stall apply to the fail-slow kinds only",
                     "use kind: FAULT_KIND_STRAGGLER or FAULT_KIND_SLOW_NODE, or remove them");
  }
  if (f.has_slowdown() && !(f.slowdown() >= 1 && f.slowdown() <= 100)) {
    return loc.Error(path + ".slowdown",
                     path + ".slowdown must be in [1, 100] (got " + StrD(f.slowdown()) + ")",
                     "a factor on the compute time: 1.5 is 50% slower, 1 a healthy control run; "
                     "leave it out to draw one");
  }
  if (f.has_slow_steps() && (f.slow_steps() < 3 || f.slow_steps() > 1000)) {
    return loc.Error(path + ".slow_steps",
                     path + ".slow_steps must be in [3, 1000] (got " + Str(f.slow_steps()) + ")",
                     "a fail-slow signal must persist for a few steps; leave it out for 12");
  }
  if (f.has_node() && (f.node() < 0 || f.node() >= s.job().nodes())) {
    return loc.Error(path + ".node",
                     path + ".node " + Str(f.node()) + " is outside the job's nodes [0, " +
                         Str(s.job().nodes()) + ")",
                     "use a node below " + Str(s.job().nodes()) + ", or leave it out to draw one");
  }
  // The bootstrap root is rank 0's node: it cannot fail to reach itself.
  const bool on_root = f.has_node() ? f.node() == 0 : f.has_rank() && f.rank() < s.job().gpus_per_node();
  if (traits->Has(kNeedsOffRoot) && (s.job().nodes() < 2 || on_root)) {
    return loc.Error(
        f.has_node()   ? path + ".node"
        : f.has_rank() ? path + ".rank"
                       : "job.nodes",
        v1::FaultKind_Name(f.kind()) +
            " needs a node other than node 0 (the bootstrap root, "
            "rank 0's node) in a job of at least 2 nodes",
        "pick node: 1 or higher (or leave node and rank out to draw one), and nodes >= 2");
  }
  return Status::Ok();
}

Status CheckFault(v1::Fault* f, const std::string& path, std::int64_t world, int warmup,
                  const Locator& loc) {
  if (f->has_rank() && (f->rank() < 0 || f->rank() >= world)) {
    return loc.Error(
        path + ".rank",
        path + ".rank " + Str(f->rank()) + " is outside the job's ranks [0, " + Str(world) + ")",
        "use a rank below " + Str(world) + ", or leave it out to draw one");
  }
  if (f->has_step() && f->step() < 0) {
    return loc.Error(path + ".step",
                     path + ".step must not be negative (got " + Str(f->step()) + ")",
                     "steps count from 0; leave it out to fault right after warmup");
  }
  if (f->has_at_fraction() && !(f->at_fraction() >= 0 && f->at_fraction() < 1)) {
    return loc.Error(path + ".at_fraction",
                     path + ".at_fraction must be in [0, 1) (got " + StrD(f->at_fraction()) + ")",
                     "a fraction of the step's compute time; leave it out to draw one");
  }
  if (f->has_step() && f->step() > kMaxSteps) {
    return loc.Error(path + ".step", path + ".step is at most " + Str(kMaxSteps),
                     "every step before the fault is simulated; fault earlier");
  }
  if (!f->has_step()) f->set_step(HasRule(f->kind(), kAtSetup) ? 0 : warmup);
  return Status::Ok();
}

Status CheckFaults(v1::Scenario* s, const Locator& loc) {
  if (s->faults_size() == 0) {
    return loc.Error(
        "faults", "the scenario injects no fault",
        "add faults { kind: FAULT_KIND_SIGKILL } (or another of " + FaultKindList() + ")");
  }
  if (s->faults_size() > 1) {
    return loc.Error("faults[1]", "this version simulates one fault per scenario",
                     "keep a single faults { ... } block");
  }
  const std::int64_t world = std::int64_t{s->job().nodes()} * s->job().gpus_per_node();
  for (int i = 0; i < s->faults_size(); ++i) {
    DENPEX_RETURN_IF_ERROR(CheckFaultKind(s->faults(i), "faults[" + Str(i) + "]", *s, loc));
    DENPEX_RETURN_IF_ERROR(CheckFault(s->mutable_faults(i), "faults[" + Str(i) + "]", world,
                                      s->training().warmup_steps(), loc));
  }
  return Status::Ok();
}

// Scenario.history: defaults, and targets the job and fault can have.
Status FillHistory(v1::Scenario* s, const Locator& loc) {
  if (s->history_size() > kMaxHistory) {
    return loc.Error("history", "at most " + Str(kMaxHistory) + " earlier incidents (got " + Str(s->history_size()) + ")",
                     "a store with a few entries per node is enough to test recurrence");
  }
  const FaultTraits* traits = FindFault(s->faults(0).kind());
  for (int i = 0; i < s->history_size(); ++i) {
    v1::PriorIncident* p = s->mutable_history(i);
    const std::string path = "history[" + Str(i) + "]";
    if (p->target() == v1::HISTORY_TARGET_UNSPECIFIED) p->set_target(v1::HISTORY_TARGET_SAME_GPU);
    if (p->failure_class() == v1::FAILURE_CLASS_UNSPECIFIED) p->set_failure_class(v1::FAILURE_CLASS_GPU_ECC);
    if (p->owner() == v1::OWNER_UNSPECIFIED) p->set_owner(v1::OWNER_GPU_HARDWARE);
    if (p->action().empty()) p->set_action("reset_gpu");
    if (p->days_before() == 0) p->set_days_before(7);
    if (!(p->days_before() > 0 && p->days_before() <= 3650)) {
      return loc.Error(path + ".days_before", path + ".days_before must be in (0, 3650] (got " + StrD(p->days_before()) + ")",
                       "days before the fault, e.g. 7.5");
    }
    if (!v1::HistoryTarget_IsValid(p->target())) {
      return loc.Error(path + ".target", path + ".target " + Str(p->target()) + " is not a HistoryTarget value",
                       "use HISTORY_TARGET_SAME_GPU, HISTORY_TARGET_SAME_NODE or HISTORY_TARGET_OTHER_NODE");
    }
    if (p->target() == v1::HISTORY_TARGET_SAME_GPU && traits->scope != FaultScope::kRank) {
      return loc.Error(path + ".target", path + ": HISTORY_TARGET_SAME_GPU needs a fault on one rank's GPU, but " +
                                             v1::FaultKind_Name(traits->kind) + " hits a node or the whole job",
                       "use HISTORY_TARGET_SAME_NODE or HISTORY_TARGET_OTHER_NODE");
    }
    if (p->target() != v1::HISTORY_TARGET_OTHER_NODE && traits->scope == FaultScope::kJob) {
      return loc.Error(path + ".target", path + ": " + v1::FaultKind_Name(traits->kind) + " names no node to recur on",
                       "use HISTORY_TARGET_OTHER_NODE, or a fault on a rank or node");
    }
    if (p->target() == v1::HISTORY_TARGET_SAME_NODE && s->job().gpus_per_node() < 2) {
      return loc.Error(path + ".target", path + ": HISTORY_TARGET_SAME_NODE needs another GPU on the node",
                       "set job.gpus_per_node to 2 or more, or use another target");
    }
    if (p->target() == v1::HISTORY_TARGET_OTHER_NODE && s->job().nodes() < 2) {
      return loc.Error(path + ".target", path + ": HISTORY_TARGET_OTHER_NODE needs a second node",
                       "set job.nodes to 2 or more, or use another target");
    }
  }
  return Status::Ok();
}

// format.nccl_socket_nthreads: NCCL's MAX_THREADS is 16; only the socket faults use NET/Socket.
Status CheckSocketThreads(const v1::Scenario& s, const Locator& loc) {
  const int n = s.format().nccl_socket_nthreads();
  if (n == 0) return Status::Ok();
  if (n < 0 || n > 16) {
    return loc.Error("format.nccl_socket_nthreads",
                     "format.nccl_socket_nthreads must be 0 to 16 (NCCL's MAX_THREADS), got " + Str(n),
                     "set 0 (no helper threads) to 16");
  }
  for (const v1::Fault& f : s.faults()) {
    if (HasRule(f.kind(), kSocketTransport)) return Status::Ok();
  }
  return loc.Error("format.nccl_socket_nthreads",
                   "format.nccl_socket_nthreads configures the NET/Socket transport, which only the socket faults use",
                   "use it with FAULT_KIND_SOCKET_RESET or FAULT_KIND_SOCKET_LINK_FAILURE, or leave it out");
}

}  // namespace

Status FillDefaultsAndValidate(v1::Scenario* s, const Locator& loc) {
  DENPEX_RETURN_IF_ERROR(ValidateJobFields(*s, loc));
  DENPEX_RETURN_IF_ERROR(FillJob(s->mutable_job(), loc));
  DENPEX_RETURN_IF_ERROR(FillTimeouts(s->mutable_timeouts(), loc));
  DENPEX_RETURN_IF_ERROR(CheckLauncher(*s, loc));
  if (s->launcher() == v1::LAUNCHER_UNSPECIFIED) s->set_launcher(v1::LAUNCHER_TORCHRUN);
  DENPEX_RETURN_IF_ERROR(FillLayoutAndSlurm(s, loc));
  DENPEX_RETURN_IF_ERROR(FillFormat(s->mutable_format(), loc));
  DENPEX_RETURN_IF_ERROR(FillTraining(s->mutable_training(), loc));
  DENPEX_RETURN_IF_ERROR(CheckTimeoutAgainstSteps(*s, loc));
  if (s->timeouts().dump_on_timeout() &&
      FindTorchProfile(s->format().torch())->line_dump_signal == 0) {
    return loc.Error({"timeouts.dump_on_timeout", "format.torch"},
                     "timeouts.dump_on_timeout needs the flight recorder, which torch " +
                         s->format().torch() + " does not have",
                     "set format.torch to 2.4 or later, or leave dump_on_timeout out");
  }
  DENPEX_RETURN_IF_ERROR(CheckSocketThreads(*s, loc));
  DENPEX_RETURN_IF_ERROR(CheckErrorHandling(s, loc));
  DENPEX_RETURN_IF_ERROR(CheckInterleaving(*s, loc));
  DENPEX_RETURN_IF_ERROR(CheckNcclRas(*s, loc));
  DENPEX_RETURN_IF_ERROR(FillClocksAndStart(s, loc));
  bool gpu_fault = false;
  for (const v1::Fault& f : s->faults()) {
    gpu_fault |= HasRule(f.kind(), kGpuState);
  }
  DENPEX_RETURN_IF_ERROR(FillRealism(s->mutable_realism(), gpu_fault, loc));
  if (s->realism().gpu_order() != v1::GPU_ORDER_UNSPECIFIED && s->launcher() != v1::LAUNCHER_TORCHRUN) {
    return loc.Error({"realism.gpu_order", "launcher"},
                     "realism.gpu_order prints CUDA_VISIBLE_DEVICES in the node's torchrun log, but the launcher is " +
                         v1::Launcher_Name(s->launcher()),
                     "use launcher: LAUNCHER_TORCHRUN, or leave gpu_order out");
  }
  DENPEX_RETURN_IF_ERROR(CheckCheckpointing(*s, loc));
  DENPEX_RETURN_IF_ERROR(CheckFaults(s, loc));
  DENPEX_RETURN_IF_ERROR(FillHistory(s, loc));
  // Fail-slow is seen only in per-rank timing: the timers default on for those kinds.
  v1::Training* t = s->mutable_training();
  if (!t->has_per_rank_timers()) {
    const FaultTraits* traits = FindFault(s->faults(0).kind());
    t->set_per_rank_timers(traits->action == FaultAction::kSlowdown);
  }
  return Status::Ok();
}

}  // namespace denpex::sim
