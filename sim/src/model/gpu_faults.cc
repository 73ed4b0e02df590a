// The kernel-log side of GPU, memory and CUDA faults (see gpu_faults.h). Cascades follow
// NVIDIA's Xid documentation (docs/log_formats.md §16): 79 then GSP 119 repeats (rate-limited);
// 48 -> 63/64 -> 94/95 within milliseconds, 45 when the process is gone, 154 on drivers that
// report recovery actions; 74 on the GPU and, sympathetic, on an NVLink peer; 120 then 119;
// an application's MMU fault 31 then 43.
#include "gpu_faults.h"

#include "driver.h"
#include "noise.h"
#include "rng.h"

namespace denpex::sim {

namespace {

constexpr TimeNs kDay = 24 * 3600 * kNsPerSec;

// Appends kernel lines of one node in time order. On a rate-limited node (realism.kernel_ratelimit)
// rsyslog folds a line identical to the one before into one `message repeated N times: [ ... ]`
// line, written when a different line arrives (or the burst ends). The driver's NVRM lines do
// not go through printk's rate limit (nv_printf calls vprintk directly): every line of an Xid
// storm is printed. The first line is always written.
class KernelBurst {
 public:
  KernelBurst(const Job& job, int node, RecordSink& sink)
      : node_(node),
        boot_(NodeBoot(job, node)),
        sink_(sink),
        limited_(node == job.noise.ratelimit_node) {}
  ~KernelBurst() { FlushRepeats(); }

  void Line(TimeNs t, KernelEvent event, int gpu, int code = 0, int detail = 0,
            bool cite = false) {
    if (t < last_) t = last_;  // the kernel log is monotonic
    last_ = t;
    const KernelMessage m{node_, t, boot_, event, gpu, code, detail, cite};
    if (limited_ && !cite && event == KernelEvent::kXid && SameText(m, previous_)) {
      ++repeats_;
      repeat_time_ = t;
      return;
    }
    FlushRepeats();
    sink_.Emit(m);
    previous_ = m;
  }
  void Xid(TimeNs t, int gpu, int code, int detail = 0, bool cite = false) {
    Line(t, KernelEvent::kXid, gpu, code, detail, cite);
  }
  bool limited() const { return limited_; }

 private:
  // rsyslog compares the message text: same Xid, same GPU, same body (119's names no detail).
  static bool SameText(const KernelMessage& a, const KernelMessage& b) {
    return a.event == b.event && a.arg == b.arg && a.code == b.code && (a.code == 119 || a.detail == b.detail);
  }
  void FlushRepeats() {
    if (repeats_ == 0) return;
    KernelMessage m = previous_;
    m.time = repeat_time_;
    m.cite = false;
    m.repeats = repeats_;
    sink_.Emit(m);
    repeats_ = 0;
  }

  int node_;
  TimeNs boot_;
  RecordSink& sink_;
  bool limited_;
  TimeNs last_ = 0;
  KernelMessage previous_{-1, 0, 0, KernelEvent::kLinuxVersion, -1};
  int repeats_ = 0;
  TimeNs repeat_time_ = 0;
};

// GSP RPC timeouts every ~6 s after the GPU stopped answering, then the rate-limit notice.
void GspTimeouts(KernelBurst& b, Rng& rng, int gpu, TimeNs from, TimeNs until) {
  TimeNs t = from + rng.UniformInt(5'800, 6'300) * kNsPerMs;
  for (int i = 0; i < 3 && t < until; ++i) {
    b.Xid(t, gpu, 119, i);
    t += rng.UniformInt(5'900, 6'200) * kNsPerMs;
  }
  b.Line(t - rng.UniformInt(1, 900) * kNsPerUs, KernelEvent::kGspRateLimit, gpu);
}

// The GPU's context lines before its first Xid since boot (its UUID and serial).
void Context(KernelBurst& b, TimeNs t, int gpu) {
  b.Line(t, KernelEvent::kGpuAt, gpu);
  b.Line(t, KernelEvent::kGpuSerial, gpu);
}

void FallenOffBus(const Job& job, KernelBurst& b, Rng& rng, int gpu, TimeNs t, TimeNs exit_at) {
  Context(b, t, gpu);
  b.Xid(t, gpu, 79, 0, true);
  b.Line(t + rng.UniformInt(1, 40) * kNsPerUs, KernelEvent::kGpuFellOff, gpu);
  b.Line(t + rng.UniformInt(200, 900) * kNsPerMs, KernelEvent::kCrashDump, gpu);
  if (job.driver->gsp) GspTimeouts(b, rng, gpu, t, exit_at + 20 * kNsPerSec);
}

// 48 (DBE), then the row remapper (63 pending, or 64 failed) and the containment verdict
// (94 contained / 95 uncontained) within milliseconds; 45 when the process is gone; 154.
void Ecc(const Job& job, KernelBurst& b, Rng& rng, int gpu, int variant, TimeNs t,
         TimeNs exit_at) {
  Context(b, t, gpu);
  b.Xid(t, gpu, 48, variant, true);
  if (!job.driver->row_remapping) return;
  TimeNs at = t + rng.UniformInt(100, 900) * kNsPerUs;
  const int shape = variant % 3;  // 0: 63 + 94, 1: 63 + 95, 2: 64 + 95
  b.Xid(at, gpu, shape == 2 ? 64 : 63, variant);
  at += rng.UniformInt(100, 3'000) * kNsPerUs;
  b.Xid(at, gpu, shape == 0 ? 94 : 95, variant);
  b.Xid(exit_at + rng.UniformInt(1, 30) * kNsPerMs, gpu, 45, 0);
  if (job.driver->recovery_action) {
    b.Xid(exit_at + rng.UniformInt(40, 200) * kNsPerMs, gpu, 154, shape == 2 ? 2 : 1);
  }
}

// The GPU's NVLink peer on an HGX board: its neighbour in the pair.
int NvlinkPeer(const Job& job, int gpu) {
  const int peer = gpu ^ 1;
  return peer < job.gpus_per_node ? peer : -1;
}

void Nvlink(const Job& job, KernelBurst& b, Rng& rng, int gpu, TimeNs t, TimeNs exit_at) {
  Context(b, t, gpu);
  const int link = static_cast<int>(rng.UniformInt(0, 18));
  b.Xid(t, gpu, 74, link, true);
  const int peer = NvlinkPeer(job, gpu);
  if (peer >= 0) {  // the other end of the link went down with it: a sympathetic report
    const TimeNs at = t + rng.UniformInt(1, 20) * kNsPerMs;
    Context(b, at, peer);
    b.Xid(at, peer, 74, (link + 5) % 18);
  }
  b.Xid(exit_at + rng.UniformInt(1, 30) * kNsPerMs, gpu, 45, 0);
}

void Gsp(const Job& job, KernelBurst& b, Rng& rng, int gpu, TimeNs t, TimeNs exit_at) {
  Context(b, t, gpu);
  b.Xid(t, gpu, 120, static_cast<int>(rng.UniformInt(0, 4)), true);
  GspTimeouts(b, rng, gpu, t, exit_at + 20 * kNsPerSec);
  if (job.driver->recovery_action) b.Xid(t + rng.UniformInt(2, 9) * kNsPerSec, gpu, 154, 1);
}

// An application's out-of-bounds access: the MMU fault (31) names its process; the channel
// reset (43) follows.
void MmuFault(KernelBurst& b, Rng& rng, int gpu, int pid, TimeNs t) {
  Context(b, t, gpu);
  b.Xid(t, gpu, 31, pid, true);
  b.Xid(t + rng.UniformInt(1, 15) * kNsPerMs, gpu, 43, pid);
}

// An application's kernel fault: Xid 13's SM warp / global exception and ESR lines for each
// faulting TPC (one burst), then the channel reset 43; or (odd variants) 43 alone.
void AppException(KernelBurst& b, Rng& rng, int gpu, int pid, int variant, TimeNs t) {
  Context(b, t, gpu);
  if (variant % 2 == 1) {
    b.Xid(t, gpu, 43, pid, true);
    return;
  }
  // The rate-limited scenarios' node shows a longer storm (every line printed).
  const int tpcs = b.limited() ? 5 + variant % 4 : 2 + variant % 3;
  TimeNs at = t;
  for (int i = 0; i < tpcs; ++i) {
    for (int body = 0; body < 3; ++body) {
      b.Xid(at, gpu, 13, body + 4 * i, i == 0 && body == 0);
      at += rng.UniformInt(1, 40) * kNsPerUs;
    }
  }
  at += rng.UniformInt(1, 15) * kNsPerMs;
  b.Xid(at, gpu, 43, pid);
}

}  // namespace

TimeNs NodeBoot(const Job& job, int node) {
  Rng rng(job.seed, StreamId::kKernel, static_cast<std::uint64_t>(node));
  return job.start - rng.UniformInt(2 * kDay, 40 * kDay);  // EmitKernelBoot's first draw
}

CudaFailureKind CudaFailureOf(const FaultPlan& fault) {
  switch (fault.kind()) {
    case v1::FAULT_KIND_XID_FALLEN_OFF_BUS:
      return fault.variant % 2 == 0 ? CudaFailureKind::kUnspecifiedLaunch
                                    : CudaFailureKind::kUnknown;
    case v1::FAULT_KIND_XID_ECC:
      return CudaFailureKind::kEccUncorrectable;
    case v1::FAULT_KIND_XID_NVLINK:
      return CudaFailureKind::kNvlinkUncorrectable;
    case v1::FAULT_KIND_CUDA_OOM:
      return CudaFailureKind::kOutOfMemory;
    case v1::FAULT_KIND_CUDA_ILLEGAL_ADDRESS:
      return CudaFailureKind::kIllegalAddress;
    case v1::FAULT_KIND_DEVICE_ASSERT:
      return CudaFailureKind::kDeviceAssert;
    case v1::FAULT_KIND_XID_APP_EXCEPTION:
      return fault.variant % 2 == 0 ? CudaFailureKind::kIllegalInstruction
                                    : CudaFailureKind::kUnspecifiedLaunch;
    default:
      return CudaFailureKind::kUnspecifiedLaunch;
  }
}

void EmitFaultKernelLines(const Job& job, const FaultPlan& fault, int rank, TimeNs t,
                          TimeNs exit_at, RecordSink& sink) {
  if (!job.noise.kernel_logs) return;
  const int node = job.NodeOf(rank), gpu = job.PhysicalGpu(rank);
  KernelBurst b(job, node, sink);
  Rng rng(job.seed, StreamId::kKernel, (1ULL << 32) + static_cast<std::uint64_t>(rank));
  switch (fault.kind()) {
    case v1::FAULT_KIND_XID_FALLEN_OFF_BUS:
      return FallenOffBus(job, b, rng, gpu, t, exit_at);
    case v1::FAULT_KIND_XID_ECC:
      return Ecc(job, b, rng, gpu, fault.variant, t, exit_at);
    case v1::FAULT_KIND_XID_NVLINK:
      return Nvlink(job, b, rng, gpu, t, exit_at);
    case v1::FAULT_KIND_XID_GSP:
      return Gsp(job, b, rng, gpu, t, exit_at);
    case v1::FAULT_KIND_CUDA_ILLEGAL_ADDRESS:
      return MmuFault(b, rng, gpu, job.worker_pid[rank], t);
    case v1::FAULT_KIND_XID_APP_EXCEPTION:
      return AppException(b, rng, gpu, job.worker_pid[rank], fault.variant, t);
    default:
      return;  // CUDA OOM and device asserts leave nothing in the kernel log
  }
}

void EmitOomKill(const Job& job, int rank, TimeNs t, RecordSink& sink) {
  if (!job.noise.kernel_logs) return;
  KernelBurst b(job, job.NodeOf(rank), sink);
  Rng rng(job.seed, StreamId::kKernel, (1ULL << 32) + static_cast<std::uint64_t>(rank));
  const int pid = job.worker_pid[rank], gpu = job.LocalRank(rank);
  b.Line(t, KernelEvent::kOomInvoked, gpu, 0, pid);
  const TimeNs killed = t + rng.UniformInt(2, 40) * kNsPerMs;
  b.Line(killed, KernelEvent::kOomConstraint, gpu, 0, pid);
  b.Line(killed, KernelEvent::kOomKilled, gpu, 0, pid, true);
  b.Line(killed + rng.UniformInt(20, 400) * kNsPerMs, KernelEvent::kOomReaped, gpu, 0, pid);
}

void EmitKillCleanup(const Job& job, int rank, TimeNs t, RecordSink& sink) {
  if (!job.noise.xid45_on_kill) return;
  KernelBurst b(job, job.NodeOf(rank), sink);
  Rng rng(job.seed, StreamId::kKernel, (2ULL << 32) + static_cast<std::uint64_t>(rank));
  b.Xid(t + rng.UniformInt(1, 50) * kNsPerMs, job.PhysicalGpu(rank), 45, job.worker_pid[rank]);
}

// The last Xid DCGM saw on the fault's GPU (DCGM_FI_DEV_XID_ERRORS).
int LastXid(const FaultPlan& fault) {
  switch (fault.kind()) {
    case v1::FAULT_KIND_XID_FALLEN_OFF_BUS: return 79;
    case v1::FAULT_KIND_XID_ECC: return 48;
    case v1::FAULT_KIND_XID_NVLINK: return 74;
    case v1::FAULT_KIND_XID_GSP: return 119;
    case v1::FAULT_KIND_CUDA_ILLEGAL_ADDRESS: return 43;
    case v1::FAULT_KIND_XID_APP_EXCEPTION: return 43;
    default: return 0;
  }
}

void EmitNvidiaSmi(const Job& job, const FaultPlan& fault, TimeNs t, RecordSink& sink) {
  if (!job.noise.nvidia_smi) return;
  const bool rank_fault = fault.rank >= 0 && fault.traits->scope == FaultScope::kRank;
  const int gpu = rank_fault ? job.PhysicalGpu(fault.rank) : -1;
  const int old_ecc_gpu = OldEccGpu(job);
  for (int node = 0; node < job.nodes; ++node) {
    const bool hit = rank_fault && node == fault.node;
    NvidiaSmiSnapshot s{node, t + (node % 97) * kNsPerMs, -1, -1};
    if (hit && fault.kind() == v1::FAULT_KIND_XID_FALLEN_OFF_BUS) s.lost_gpu = gpu;
    if (hit && fault.kind() == v1::FAULT_KIND_XID_ECC) {
      s.ecc_gpu = gpu;
      s.remap = fault.variant % 3 == 2 ? RemapState::kFailed : RemapState::kPending;
    }
    if (hit && fault.kind() == v1::FAULT_KIND_STRAGGLER && fault.variant % 3 != 2) {
      s.throttle_gpu = gpu;
      s.throttle = fault.variant % 3 == 0 ? Throttle::kThermal : Throttle::kPowerBrake;
    }
    // variant 2: a PCIe link downgrade, which no clock reason shows (only dcgmi diag's PCIe test)
    if (hit && fault.kind() == v1::FAULT_KIND_STRAGGLER && fault.variant % 3 == 2) s.pcie_gpu = gpu;
    if (hit && LastXid(fault) != 0) s.xid_gpu = gpu, s.xid = LastXid(fault);
    if (hit && fault.kind() == v1::FAULT_KIND_XID_NVLINK) s.nvlink_gpu = gpu;
    if (node == job.noise.ecc_node) s.corrected_gpu = old_ecc_gpu;
    sink.Emit(s);
  }
}

}  // namespace denpex::sim
