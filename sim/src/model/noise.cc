// The realism plan and the kernel log's boot lines (see noise.h).
#include "noise.h"

#include <algorithm>

#include "rng.h"

namespace denpex::sim {

namespace {

constexpr TimeNs kHour = 3600 * kNsPerSec;
constexpr TimeNs kDay = 24 * kHour;

// A node other than `avoid` (the initiator's), drawn; -1 when there is none.
int OtherNode(Rng& rng, const Job& job, int avoid) {
  if (job.nodes < 2 && avoid == 0) return -1;
  int node = static_cast<int>(rng.UniformInt(0, job.nodes));
  if (node == avoid) node = (node + 1) % job.nodes;
  return node;
}

std::vector<NodeDamage> PlanDamage(const v1::Realism& r, const Job& job, int initiator_node) {
  const double missing = r.missing_node_fraction();
  const double truncated = r.truncated_node_fraction();
  if (missing <= 0 && truncated <= 0 && !r.missing_initiator_node()) return {};
  std::vector<NodeDamage> damage(static_cast<std::size_t>(job.nodes), NodeDamage::kNone);
  if (r.missing_initiator_node() && initiator_node >= 0) damage[initiator_node] = NodeDamage::kMissing;
  for (int node = 0; node < job.nodes; ++node) {
    if (node == initiator_node && r.missing_initiator_node()) continue;
    if (node == initiator_node && !r.damage_initiator_node()) continue;
    const double u =
        Rng(job.seed, StreamId::kNoise, 1 + static_cast<std::uint64_t>(node)).Uniform();
    if (u < missing) {
      damage[node] = NodeDamage::kMissing;
    } else if (u < missing + truncated) {
      damage[node] = NodeDamage::kTruncated;
    }
  }
  return damage;
}

}  // namespace

Noise PlanNoise(const v1::Realism& realism, const Job& job, const FaultPlan& fault) {
  Noise noise;
  Rng rng(job.seed, StreamId::kNoise, 0);
  noise.benign_warnings = realism.benign_warnings();
  if (realism.loud_rank() && job.nodes > 1) {
    // Not the initiator, nor any rank of its node: a red herring must point elsewhere.
    const int node = OtherNode(rng, job, fault.node);
    noise.loud_rank =
        node * job.gpus_per_node + static_cast<int>(rng.UniformInt(0, job.gpus_per_node));
  }
  noise.kernel_logs = realism.kernel_logs();
  noise.xid45_on_kill = realism.kernel_logs() && realism.xid45_on_kill();
  noise.nvidia_smi = realism.nvidia_smi();
  noise.deepspeed_overflow = realism.deepspeed_overflow();
  noise.nvidia_smi_query = realism.nvidia_smi_query();
  noise.dcgm = realism.dcgm();
  noise.dcgm_diag_level = realism.dcgm_diag_level() > 0 ? realism.dcgm_diag_level() : 1;
  if (realism.kernel_logs() && realism.old_ecc_event()) {
    noise.ecc_node = OtherNode(rng, job, fault.node);
  }
  noise.damage = PlanDamage(realism, job, fault.node);
  if (realism.kernel_logs() && realism.kernel_ratelimit() > 0 && fault.node >= 0) {
    // Its own stream: drawing it leaves every other realism draw as it was.
    Rng limit(job.seed, StreamId::kNoise, (1ULL << 40) + 1);
    if (limit.Uniform() < realism.kernel_ratelimit()) noise.ratelimit_node = fault.node;
  }
  return noise;
}

namespace {

// One node's boot-time kernel lines, drawn in one order (EmitKernelBoot prints them; the
// nvidia-smi snapshot needs the old ECC event's GPU).
struct BootDraws {
  TimeNs uptime = 0, nic_firmware[2] = {}, taint = 0, nvrm = 0, nic_up[2] = {};
  TimeNs ecc_at = 0, ecc_xid = 0;
  int ecc_gpu = -1;
};

BootDraws DrawBoot(const Job& job, int node) {
  BootDraws d;
  Rng rng(job.seed, StreamId::kKernel, static_cast<std::uint64_t>(node));
  d.uptime = rng.UniformInt(2 * kDay, 40 * kDay);
  TimeNs t = rng.UniformInt(3'800, 4'600) * kNsPerMs;
  for (int nic = 0; nic < 2; ++nic) {
    d.nic_firmware[nic] = t + rng.UniformInt(1, 90'000) * kNsPerUs * (nic + 1);
  }
  t += rng.UniformInt(9'000, 14'000) * kNsPerMs;
  d.taint = t;
  d.nvrm = t + rng.UniformInt(40, 900) * kNsPerUs;
  t += rng.UniformInt(2'000, 6'000) * kNsPerMs;
  for (int nic = 0; nic < 2; ++nic) {
    d.nic_up[nic] = t + rng.UniformInt(1, 400'000) * kNsPerUs * (nic + 1);
  }
  if (node != job.noise.ecc_node) return d;
  const TimeNs latest = std::min(d.uptime - kHour, 10 * kDay);
  d.ecc_at = d.uptime - rng.UniformInt(2 * kHour, std::max(latest, 2 * kHour + 1));
  d.ecc_gpu = static_cast<int>(rng.UniformInt(0, job.gpus_per_node));
  d.ecc_xid = d.ecc_at + rng.UniformInt(1, 300) * kNsPerUs;
  return d;
}

}  // namespace

int OldEccGpu(const Job& job) {
  return job.noise.ecc_node < 0 ? -1 : DrawBoot(job, job.noise.ecc_node).ecc_gpu;
}

// rsyslog's kern.log from the boot on: the kernel banner, the NICs, the NVIDIA driver, and
// on the ECC node a corrected-error row remapping (Xid 63) hours before the job.
void EmitKernelBoot(const Job& job, RecordSink& sink) {
  if (!job.noise.kernel_logs) return;
  for (int node = 0; node < job.nodes; ++node) {
    const BootDraws d = DrawBoot(job, node);
    const TimeNs boot = job.start - d.uptime;
    auto emit = [&](TimeNs at, KernelEvent event, int arg) {
      sink.Emit(KernelMessage{node, boot + at, boot, event, arg});
    };
    emit(0, KernelEvent::kLinuxVersion, 0);
    emit(0, KernelEvent::kCommandLine, 0);
    for (int nic = 0; nic < 2; ++nic) emit(d.nic_firmware[nic], KernelEvent::kNicFirmware, nic);
    emit(d.taint, KernelEvent::kNvidiaTaint, 0);
    emit(d.nvrm, KernelEvent::kNvrmLoaded, 0);
    for (int nic = 0; nic < 2; ++nic) emit(d.nic_up[nic], KernelEvent::kNicLinkUp, nic);
    if (d.ecc_gpu < 0) continue;
    emit(d.ecc_at, KernelEvent::kGpuAt, d.ecc_gpu);
    emit(d.ecc_at, KernelEvent::kGpuSerial, d.ecc_gpu);
    emit(d.ecc_xid, KernelEvent::kXid63, d.ecc_gpu);
  }
}

}  // namespace denpex::sim
