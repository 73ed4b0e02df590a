// Builds the Job from a validated scenario: layout arithmetic, hostnames and the per-node and
// per-rank draws (clock offsets, pids, start times) from their seeded streams.
#include "job.h"

#include <algorithm>
#include <cmath>

#include "checkpoints.h"
#include "driver.h"
#include "faults.h"
#include "rng.h"

namespace denpex::sim {

std::string_view PgDescription(PgKind kind) {
  switch (kind) {
    case PgKind::kDefault:
      return "default_pg";
    case PgKind::kTensor:
      return "TENSOR_MODEL_PARALLEL_GROUP";
    case PgKind::kPipeline:
      return "PIPELINE_MODEL_PARALLEL_GROUP";
    case PgKind::kData:
      return "DATA_PARALLEL_GROUP";
  }
  return "";
}

int Job::GroupUid(int rank, PgKind kind) const {
  switch (kind) {
    case PgKind::kDefault:
      return 0;
    case PgKind::kTensor:
      return 1 + rank / tp;
    case PgKind::kPipeline:
      return 1 + NumTpGroups() + rank % (tp * dp);
    case PgKind::kData:
      return 1 + NumTpGroups() + NumPpGroups() + PpRank(rank) * tp + TpRank(rank);
  }
  return 0;
}

int Job::GroupRank(int rank, PgKind kind) const {
  switch (kind) {
    case PgKind::kDefault:
      return rank;
    case PgKind::kTensor:
      return TpRank(rank);
    case PgKind::kPipeline:
      return PpRank(rank);
    case PgKind::kData:
      return DpRank(rank);
  }
  return 0;
}

int Job::GroupSize(PgKind kind) const {
  switch (kind) {
    case PgKind::kDefault:
      return world;
    case PgKind::kTensor:
      return tp;
    case PgKind::kPipeline:
      return pp;
    case PgKind::kData:
      return dp;
  }
  return 0;
}

PgKind Job::KindOfGroup(int uid) const {
  if (uid == 0) return PgKind::kDefault;
  uid -= 1;
  if (uid < NumTpGroups()) return PgKind::kTensor;
  uid -= NumTpGroups();
  return uid < NumPpGroups() ? PgKind::kPipeline : PgKind::kData;
}

int Job::GroupMember(int uid, int i) const {
  switch (KindOfGroup(uid)) {
    case PgKind::kDefault:
      return i;
    case PgKind::kTensor:
      return (uid - 1) * tp + i;
    case PgKind::kPipeline:
      return (uid - 1 - NumTpGroups()) + i * tp * dp;
    case PgKind::kData: {
      const int index = uid - 1 - NumTpGroups() - NumPpGroups();  // pp_rank * tp + tp_rank
      return (index / tp) * tp * dp + index % tp + i * tp;
    }
  }
  return 0;
}

namespace {

// prefix + zero-padded (node + 1): "gpu-" -> gpu-0001.
std::string Hostname(const std::string& prefix, int node, int digits) {
  const std::string n = std::to_string(node + 1);
  std::string out = prefix;
  out.append(static_cast<std::size_t>(std::max(0, digits - static_cast<int>(n.size()))), '0');
  out += n;
  return out;
}

// Per-node draws: clock offset (normal, clamped to +-4 sigma so it stays bounded), torchrun's
// start and pid, and its workers' pids (spawned one after another).
// A heavy-tailed node's offset: log-uniform magnitude in [4 sigma, max], random sign.
double HeavyTailOffsetMs(Rng& rng, double sigma_ms, double max_ms) {
  const double lo = std::max(1.0, 4.0 * sigma_ms);
  const double hi = std::max(lo, max_ms);
  const double magnitude = lo * std::pow(hi / lo, rng.Uniform());
  return rng.Uniform() < 0.5 ? -magnitude : magnitude;
}

void DrawNodes(Job& job, const std::string& prefix, const v1::Clocks& clocks) {
  const double skew_sigma_ms = clocks.skew_sigma_ms();
  const int digits = std::max<int>(4, static_cast<int>(std::to_string(job.nodes).size()));
  const double limit = 4.0 * skew_sigma_ms;
  for (int node = 0; node < job.nodes; ++node) {
    job.hostnames.push_back(Hostname(prefix, node, digits));
    Rng skew(job.seed, StreamId::kNodeSkew, static_cast<std::uint64_t>(node));
    double offset_ms = std::clamp(skew.Normal() * skew_sigma_ms, -limit, limit);
    if (clocks.heavy_tailed() && skew.Uniform() < 0.05) {
      offset_ms = HeavyTailOffsetMs(skew, skew_sigma_ms, clocks.skew_max_ms());
    }
    job.clock_offset.push_back(static_cast<TimeNs>(offset_ms * static_cast<double>(kNsPerMs)));
    Rng procs(job.seed, StreamId::kNodeProcesses, static_cast<std::uint64_t>(node));
    job.agent_start.push_back(job.start + procs.UniformInt(200, 900) * kNsPerMs);
    const auto agent = static_cast<std::int32_t>(procs.UniformInt(10'000, 3'000'000));
    job.agent_pid.push_back(agent);
    std::int32_t pid = agent + static_cast<std::int32_t>(procs.UniformInt(30, 90));
    for (int local = 0; local < job.gpus_per_node; ++local) {
      job.worker_pid.push_back(pid);
      pid += static_cast<std::int32_t>(procs.UniformInt(1, 5));
    }
  }
}

// CUDA_VISIBLE_DEVICES per node: the second half first (ROTATED), or a drawn order of the
// device plugin's UUIDs (UUID).
void DrawGpuOrder(Job& job) {
  if (job.gpu_order == v1::GPU_ORDER_UNSPECIFIED) return;
  const int n = job.gpus_per_node;
  job.gpu_of_local.resize(static_cast<std::size_t>(job.world));
  for (int node = 0; node < job.nodes; ++node) {
    std::int8_t* order = job.gpu_of_local.data() + static_cast<std::ptrdiff_t>(node) * n;
    for (int l = 0; l < n; ++l) order[l] = static_cast<std::int8_t>((l + n / 2) % n);
    if (job.gpu_order != v1::GPU_ORDER_UUID) continue;
    Rng rng(job.seed, StreamId::kNodeProcesses, static_cast<std::uint64_t>(node) + (3ULL << 32));
    for (int l = n - 1; l > 0; --l) std::swap(order[l], order[rng.UniformInt(0, l + 1)]);
  }
}

// Kubernetes: the drawn hostnames become the nodes' names; the processes see their pod's
// hostname. PyTorchJob: <job>-master-0 and <job>-worker-<i>; JobSet (one replicated job,
// indexed): hostname <jobset>-workers-0-<i>, pod name with the Job controller's 5-character
// suffix.
constexpr std::string_view kSuffixChars = "bcdfghjklmnpqrstvwxz2456789";

// The Job controller's 5-character pod name suffix; `attempt` draws a fresh one for a pod the
// JobSet recreated.
std::string PodSuffix(const Job& job, int node, int attempt) {
  Rng rng(job.seed, StreamId::kNodeProcesses, static_cast<std::uint64_t>(node) + (static_cast<std::uint64_t>(2 + attempt) << 32));
  std::string s;
  for (int i = 0; i < 5; ++i) s += kSuffixChars[rng.UniformInt(0, kSuffixChars.size())];
  return s;
}

void NamePods(Job& job, const v1::Kubernetes& k) {
  job.kube_controller = k.controller();
  job.pod_timestamps = k.timestamps();
  job.kube_job = k.job_name();
  job.kube_namespace = k.namespace_();
  job.kube_restarts = k.restarts();
  job.node_names = job.hostnames;
  for (int node = 0; node < job.nodes; ++node) {
    std::string host, pod;
    if (k.controller() == v1::KUBE_CONTROLLER_JOBSET) {
      host = k.job_name() + "-workers-0-" + std::to_string(node);
      pod = host + "-" + PodSuffix(job, node, 0);
    } else {
      host = node == 0 ? k.job_name() + "-master-0" : k.job_name() + "-worker-" + std::to_string(node - 1);
      pod = host;
    }
    job.hostnames[node] = host;
    job.pod_names.push_back(pod);
  }
}

}  // namespace

Job Job::Restarted(const v1::Scenario& scenario, TimeNs start) const {
  v1::Scenario s = scenario;
  s.set_start_time(FormatRfc3339(start));
  Job job = Build(s, seed);
  job.kube_attempt = kube_attempt + 1;
  job.nccl_ras = {};  // the incident keeps the first attempt's poller file
  if (job.kube_controller == v1::KUBE_CONTROLLER_JOBSET) {
    for (int node = 0; node < job.nodes; ++node) job.pod_names[node] = job.hostnames[node] + "-" + PodSuffix(job, node, job.kube_attempt);
  }
  return job;
}

PodLog Job::PodLogOf(int node) const {
  if (node == kube_pending_node) return PodLog::kGone;
  if (!KubeRestartsInPlace() || kube_attempt == kube_restarts) return PodLog::kCurrent;
  return kube_attempt + 1 == kube_restarts ? PodLog::kPrevious : PodLog::kGone;
}

int Job::LocalOfGpu(int node, int gpu) const {
  if (gpu_of_local.empty()) return gpu;
  for (int l = 0; l < gpus_per_node; ++l) {
    if (gpu_of_local[static_cast<std::size_t>(node * gpus_per_node + l)] == gpu) return l;
  }
  return gpu;
}

std::vector<int> Job::InterNodePeers(int rank) const {
  std::vector<int> peers;
  auto add = [&](int p) {
    if (p != rank && NodeOf(p) != NodeOf(rank) && std::find(peers.begin(), peers.end(), p) == peers.end()) peers.push_back(p);
  };
  const int tp_i = TpRank(rank), dp_i = DpRank(rank), pp_i = PpRank(rank);
  auto at = [&](int d, int p) { return tp_i + tp * (d + dp * p); };
  if (dp > 1) {
    add(at((dp_i + 1) % dp, pp_i));
    add(at((dp_i + dp - 1) % dp, pp_i));
  }
  if (pp_i + 1 < pp) add(at(dp_i, pp_i + 1));
  if (pp_i > 0) add(at(dp_i, pp_i - 1));
  return peers;
}

Job Job::Build(const v1::Scenario& s, std::uint64_t seed) {
  Job job;
  job.seed = seed;
  job.nodes = s.job().nodes();
  job.gpus_per_node = s.job().gpus_per_node();
  job.world = job.nodes * job.gpus_per_node;
  job.tp = s.job().tp();
  job.pp = s.job().pp();
  job.dp = s.job().dp();
  job.start = ParseRfc3339(s.start_time()).value_or(0);
  job.nccl_timeout = s.timeouts().nccl_timeout_ms() * kNsPerMs;
  job.monitor_interval = s.timeouts().monitor_interval_ms() * kNsPerMs;
  job.sigterm_grace = s.timeouts().sigterm_grace_ms() * kNsPerMs;
  job.step_time = s.training().step_time_ms() * kNsPerMs;
  job.warmup_steps = s.training().warmup_steps();
  job.tp_rounds = s.training().tp_collectives_per_step();
  job.log_interval = s.training().log_interval();
  job.compute_jitter = s.training().compute_jitter();
  job.microbatches = std::max(1, s.training().microbatches());
  job.zero = s.training().data_parallel() == v1::DATA_PARALLEL_ZERO;
  job.trainer_log = s.training().trainer_log();
  if (s.has_checkpointing()) {
    const v1::Checkpointing& c = s.checkpointing();
    if (LogsSaves(c.layout())) {
      job.save_log = c.layout();
      job.save_every = c.every_steps() > 0 ? c.every_steps() : 5;
    }
    job.newest_save_unfinished = c.damage() == v1::CHECKPOINT_DAMAGE_KILL_DURING_SAVE ||
                                 c.damage() == v1::CHECKPOINT_DAMAGE_SAVE_IN_FLIGHT ||
                                 c.damage() == v1::CHECKPOINT_DAMAGE_WRITTEN_AFTER_FAULT;
  }
  job.nccl_debug_info = s.format().nccl_debug_info();
  job.torchrun_info_logs = s.format().torchrun_info_logs();
  job.roce = s.format().fabric() == v1::FABRIC_ROCE;
  job.nccl_socket_threads = s.format().nccl_socket_nthreads();
  for (const v1::Fault& f : s.faults()) job.nccl_socket |= HasRule(f.kind(), kSocketTransport);
  job.driver = FindDriverProfile(s.format().driver().empty() ? "535" : s.format().driver());
  job.dump_on_timeout = s.timeouts().dump_on_timeout();
  if (s.has_nccl_ras()) {
    const v1::NcclRas& ras = s.nccl_ras();
    job.nccl_ras.every = (ras.every_s() > 0 ? ras.every_s() : 60) * kNsPerSec;
    job.nccl_ras.json = ras.format() == v1::NCCL_RAS_FORMAT_JSON;
    job.nccl_ras.queries = ras.queries();
    job.nccl_ras.verbose = ras.verbose();
  }
  if (s.timeouts().has_flight_recorder()) {
    const v1::FlightRecorder& fr = s.timeouts().flight_recorder();
    job.flight_recorder.buffer_size = fr.buffer_size();
    job.flight_recorder.json = fr.format() == v1::FLIGHT_RECORDER_FORMAT_JSON;
    job.flight_recorder.coverage = fr.coverage();
    job.flight_recorder.version = fr.version();
    job.flight_recorder.timing = fr.enable_timing();
  }
  job.async_error_handling = s.timeouts().async_error_handling();
  job.blocking_wait = s.timeouts().blocking_wait();
  job.heartbeat_timeout = s.timeouts().heartbeat_timeout_ms() * kNsPerMs;
  job.watchdog_stuck_fraction = s.timeouts().watchdog_stuck_fraction();
  job.interleaved_line_rate = s.realism().interleaved_line_rate();
  job.per_rank_timers = s.training().per_rank_timers();
  job.launcher = s.launcher();
  job.layout = s.layout();
  job.job_id = s.job().job_id();
  job.kill_on_bad_exit = s.slurm().kill_on_bad_exit();
  job.requeue = s.slurm().requeue();
  job.kill_wait = s.slurm().kill_wait_ms() * kNsPerMs;
  job.slurmd_timeout = s.slurm().slurmd_timeout_ms() * kNsPerMs;
  job.partition = s.slurm().partition();
  job.open_mpi5 = s.bare_metal().open_mpi().starts_with("5");
  job.report_bindings = !s.bare_metal().has_report_bindings() || s.bare_metal().report_bindings();
  job.deepspeed_runner = s.deepspeed_runner();
  job.ssh_alive_interval = s.pdsh().server_alive_interval_s() * kNsPerSec;
  job.ssh_alive_count = s.pdsh().server_alive_count_max();
  DrawNodes(job, s.job().hostname_prefix(), s.clocks());
  job.gpu_order = s.realism().gpu_order();
  DrawGpuOrder(job);
  if (job.launcher == v1::LAUNCHER_KUBERNETES) NamePods(job, s.kubernetes());
  if (job.launcher == v1::LAUNCHER_RAY) {  // Ray names its nodes by IP address
    for (int node = 0; node < job.nodes; ++node) {
      job.hostnames[node] = "10.64." + std::to_string(node / 250) + "." + std::to_string(node % 250 + 2);
    }
  }
  job.controller_offset = static_cast<TimeNs>(
      Rng(seed, StreamId::kNodeSkew, static_cast<std::uint64_t>(job.nodes)).Normal() *
      s.clocks().skew_sigma_ms() * static_cast<double>(kNsPerMs) / 4);
  return job;
}

}  // namespace denpex::sim
