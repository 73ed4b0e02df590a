// Realism lines (docs/log_formats.md §13, §14): the benign warnings every rank prints, and
// a node's kernel log in rsyslog's kern.log shape.
#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::string_view kNicPci[] = {"0000:0c:00.0", "0000:0c:00.1"};
constexpr std::string_view kNicName[] = {"enp12s0f0np0", "enp12s0f1np1"};

constexpr std::string_view kTypedStorage =
    "UserWarning: TypedStorage is deprecated. It will be removed in the future and "
    "UntypedStorage will be the only storage class. This should only matter to you if you are "
    "using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() "
    "instead of tensor.storage()";
// torch >= 2.1's autograd fallback (autograd_not_implemented_fallback.cpp); the profile gives
// where it was raised (TorchProfile::autograd_*).
constexpr std::string_view kAutogradFallback =
    "UserWarning: c10d::allreduce_: an autograd kernel was not registered to the Autograd "
    "key(s) but we are trying to backprop through it. This may lead to silently incorrect "
    "behavior. This behavior is deprecated and will be removed in a future version of PyTorch. "
    "If your operator is differentiable, please ensure you have registered an autograd kernel "
    "to the correct Autograd key (e.g. DispatchKey::Autograd, "
    "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or to "
    "squash this warning and use the previous behavior, please register "
    "torch::CppFunction::makeFallthrough() to DispatchKey::Autograd. (Triggered internally at ";
// ProcessGroupNCCL::barrier's guess, in two spellings: up to 2.5 the product string lacks the
// spaces after "incorrect." and "device," (the parts are concatenated), 2.6 has them.
constexpr std::string_view kBarrierDeviceHead =
    " using GPU <n> to perform barrier as devices used by this process are currently unknown. "
    "This can potentially cause a hang if this rank to GPU mapping is incorrect.";
constexpr std::string_view kBarrierDeviceTail =
    "Specify device_ids in barrier() to force use of a particular device,";
constexpr std::string_view kBarrierDeviceInit = "or call init_process_group() with a device_id.";

// Lowercase hex, zero-padded to `digits`.
void HexDigits(LineBuilder& out, std::uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) out.Char("0123456789abcdef"[(v >> (4 * i)) & 15]);
}

// "8-4-4-4-12" hex from two words.
void Uuid(LineBuilder& out, std::uint64_t a, std::uint64_t b) {
  HexDigits(out, a >> 32, 8);
  out.Char('-');
  HexDigits(out, (a >> 16) & 0xffff, 4);
  out.Char('-');
  HexDigits(out, a & 0xffff, 4);
  out.Char('-');
  HexDigits(out, b >> 48, 4);
  out.Char('-');
  HexDigits(out, b & 0xffffffffffffULL, 12);
}

}  // namespace

// c10 warnings go through the c10 header of the profile; Python warnings are
// "<file>:<line>: <Category>: <message>" and the source line of the call, indented by two.
void LineFormatter::Format(const BenignWarning& r, LineBuilder& out) const {
  const int node = job_.NodeOf(r.rank);
  switch (r.kind) {
    case WarningKind::kSocketFamily:  // before init_process_group knows the rank: no prefix
      WriteC10Line(out, -1, node, r.time, 'W', "socket.cpp", 697);
      out.Str("[c10d] The client socket cannot be initialized to connect to [");
      out.Str(job_.hostnames[0]).Str("]:29500 (errno: 97 - Address family not supported by ");
      out.Str("protocol).").EndLine();
      return;
    case WarningKind::kTypedStorage:
      out.Str(torch_.python_lib).Str("/torch/_utils.py:831: ").Str(kTypedStorage).EndLine();
      out.Str("  return self.fget.__get__(instance, owner)()").EndLine();
      return;
    case WarningKind::kBarrierDevice:  // only for a release that logs it at WARNING
      return BarrierDeviceWarning(r, out);
    case WarningKind::kAutogradFallback:  // never emitted for a release without it (simulator.cc)
      out.Str(torch_.python_lib).Char('/').Str(torch_.autograd_warning_site).Str(": ");
      out.Str(kAutogradFallback).Str(torch_.autograd_fallback_site).Str(".)").EndLine();
      out.Str(torch_.autograd_warning_source).EndLine();
      return;
  }
}

// torch >= 2.5 (LOG(WARNING); <= 2.4 logs it at INFO and prints nothing by default):
//   [rank5]:[W302 09:00:06.105600270 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 5]  using
//   GPU 5 to perform barrier ... incorrect. Specify device_ids ... device, or call ... device_id.
// The group prefix is the one the group had before init_process_group named it: no
// description (real 2.3-2.6 logs alike).
void LineFormatter::BarrierDeviceWarning(const BenignWarning& r, LineBuilder& out) const {
  WriteC10Line(out, r.rank, job_.NodeOf(r.rank), r.time, 'W', "ProcessGroupNCCL.cpp",
               torch_.line_barrier_device);
  const int uid = job_.GroupUid(r.rank, PgKind::kDefault);
  switch (torch_.pg_prefix) {
    case PgPrefix::kIdAndGuid:
      out.Str("[PG ID ").Int(uid).Str(" PG GUID ").Int(uid).Str(" Rank ").Int(r.rank).Str("] ");
      break;
    case PgPrefix::kUidAndDescription:
      out.Str("[PG ").Int(uid).Str(" Rank ").Int(r.rank).Str("] ");
      break;
    case PgPrefix::kRankOnly:
      out.Str("Rank ").Int(r.rank);
      break;
  }
  const std::string_view head = kBarrierDeviceHead;
  const std::size_t n = head.find("<n>");
  out.Str(head.substr(0, n)).Int(job_.LocalRank(r.rank)).Str(head.substr(n + 3));
  const bool spaced = torch_.barrier_device_spaced;
  if (spaced) out.Char(' ');
  out.Str(kBarrierDeviceTail);
  if (spaced) out.Char(' ');
  out.Str(kBarrierDeviceInit).EndLine();
}

// rsyslog: "Mar  2 08:55:01 gpu-0001 kernel: [  518.050606] " (local clock; the bracket is the
// kernel's uptime, "%5lu.%06lu").
void LineFormatter::KernelPrefix(const KernelMessage& r, LineBuilder& out) const {
  const CivilTime c = ToCivil(Local(r.node, r.time));
  out.Str(kMonths[c.month - 1]).Char(' ').Padded(c.day, 2, ' ').Char(' ');
  out.Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char(' ');
  out.Str(job_.NodeName(r.node)).Str(" kernel: ");
  if (r.node == job_.noise.ratelimit_node) return;  // printk.time=0: no uptime stamp
  out.Char('[');
  const TimeNs up = r.time - r.boot;
  out.Padded(up / kNsPerSec, 5, ' ').Char('.').Zero(up % kNsPerSec / kNsPerUs, 6).Str("] ");
}

void LineFormatter::GpuUuid(LineBuilder& out, int node, int gpu) const {
  const auto word = [&](std::uint64_t salt) {
    return Mix64(job_.seed ^ Mix64((static_cast<std::uint64_t>(node) << 8) + static_cast<std::uint64_t>(gpu) + salt));
  };
  out.Str("GPU-");
  Uuid(out, word(0), word(1));
}

void LineFormatter::Format(const KernelMessage& r, LineBuilder& out) const {
  KernelPrefix(r, out);
  const auto gpu_word = [&](std::uint64_t salt) {
    return Mix64(job_.seed ^ Mix64((static_cast<std::uint64_t>(r.node) << 8) + r.arg + salt));
  };
  switch (r.event) {
    case KernelEvent::kLinuxVersion:
      out.Str("Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu ");
      out.Str("11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) ");
      out.Str("#115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 (Ubuntu 5.15.0-105.115-generic ");
      out.Str("5.15.148)");
      break;
    case KernelEvent::kCommandLine:
      out.Str("Command line: BOOT_IMAGE=/boot/vmlinuz-5.15.0-105-generic root=UUID=");
      Uuid(out, gpu_word(1000), gpu_word(1001));
      out.Str(" ro console=tty0 console=ttyS0,115200n8 iommu=pt");
      break;
    case KernelEvent::kNicFirmware:
      out.Str("mlx5_core ").Str(kNicPci[r.arg]).Str(": firmware version: 28.39.2048");
      break;
    case KernelEvent::kNicLinkUp:
      out.Str("mlx5_core ").Str(kNicPci[r.arg]).Char(' ').Str(kNicName[r.arg]).Str(": Link up");
      break;
    case KernelEvent::kNvidiaTaint:
      out.Str("nvidia: loading out-of-tree module taints kernel.");
      break;
    case KernelEvent::kNvrmLoaded:
      out.Str("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  ").Str(job_.driver->version);
      out.Str("  ").Str(job_.driver->built);
      break;
    case KernelEvent::kGpuAt:
      out.Str("NVRM: GPU at PCI:0000:").Str(NcclBusId(r.arg).substr(0, 2)).Str(":00: ");
      GpuUuid(out, r.node, r.arg);
      break;
    case KernelEvent::kGpuSerial:
      out.Str("NVRM: GPU Board Serial Number: 16528230").Zero(gpu_word(2) % 100000, 5);
      break;
    case KernelEvent::kXid63:
      out.Str("NVRM: Xid (PCI:0000:").Str(NcclBusId(r.arg).substr(0, 2)).Str(":00): 63, ");
      XidAttribution(out, 0);
      out.Str("Row Remapper: New row (0x");
      HexDigits(out, 0x100000000ULL + (gpu_word(3) & 0xfffffff), 12);
      out.Str(") marked for remapping, reset gpu to activate.");
      break;
    default:  // fault lines (formatter_gpu.cc)
      FormatFaultKernel(r, gpu_word(static_cast<std::uint64_t>(r.code) * 7 + r.detail + 17), out);
      break;
  }
  out.EndLine();
}

}  // namespace denpex::sim
