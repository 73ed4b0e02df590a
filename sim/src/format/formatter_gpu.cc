// GPU, memory and CUDA failure lines (docs/log_formats.md "cuda_errors", "cuda_oom", "xid",
// "host_oom", "nvidia_smi"): the CUDA error a rank raises, the NVRM Xid lines of each driver
// era, the OOM killer's report, and the nvidia-smi table. Not hot paths: a fault's lines.
#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::string_view kDays[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};

// Where a CUDA error surfaces: the loss's .item() at the end of the forward step.
constexpr std::string_view kCudaFrames[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/megatron-lm/pretrain_gpt.py\", line 278, in <module>",
    "    pretrain(",
    "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 386, in pretrain",
    "    iteration, num_floating_point_operations_so_far = train(",
    "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 1402, in train",
    "    train_step(forward_step_func,",
    "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 754, in train_step",
    "    losses_reduced = forward_backward_func(",
    "  File \"/workspace/megatron-lm/megatron/core/pipeline_parallel/schedules.py\", line 1380, in "
    "forward_backward_pipelining_without_interleaving",
    "    output_tensor, num_tokens = forward_step(",
    "  File \"/workspace/megatron-lm/megatron/core/pipeline_parallel/schedules.py\", line 290, in "
    "forward_step",
    "    output_tensor, num_tokens = loss_func(output_tensor)",
    "  File \"/workspace/megatron-lm/pretrain_gpt.py\", line 166, in loss_func",
    "    num_tokens = loss_mask.sum().clone().detach().to(torch.int)",
};

// The OOM surfaces in the attention's softmax allocation instead.
constexpr std::string_view kOomFrames[] = {
    "  File \"{py}/torch/nn/modules/module.py\", line 1562, in _call_impl",
    "    return forward_call(*args, **kwargs)",
    "  File \"/workspace/megatron-lm/megatron/core/transformer/dot_product_attention.py\", line "
    "172, in forward",
    "    attention_probs: Tensor = self.scale_mask_softmax(attention_scores, attention_mask)",
};

std::string_view CudaMessage(CudaFailureKind k) {
  switch (k) {
    case CudaFailureKind::kUnspecifiedLaunch: return "unspecified launch failure";
    case CudaFailureKind::kUnknown: return "unknown error";
    case CudaFailureKind::kEccUncorrectable: return "uncorrectable ECC error encountered";
    case CudaFailureKind::kNvlinkUncorrectable:
      return "an uncorrectable NVLink error was detected during the execution";
    case CudaFailureKind::kIllegalAddress: return "an illegal memory access was encountered";
    case CudaFailureKind::kIllegalInstruction: return "an illegal instruction was encountered";
    case CudaFailureKind::kDeviceAssert: return "device-side assert triggered";
    case CudaFailureKind::kOutOfMemory: return "out of memory";
  }
  return "unknown error";
}

// "2.00 GiB" from MiB.
void Size(LineBuilder& out, std::int64_t mib) {
  if (mib < 1024) {
    out.Fixed(static_cast<double>(mib), 2).Str(" MiB");
  } else {
    out.Fixed(static_cast<double>(mib) / 1024.0, 2).Str(" GiB");
  }
}

std::string SizeText(std::int64_t mib) {
  std::string text;
  LineBuilder out(&text);
  Size(out, mib);
  return text;
}

// What torch prints for a CUDA error, by release (profiles.h's VersionRow): the caching
// allocator's out-of-memory message ({0} the request, {1} the GPU, {2} its capacity, {3}
// allocated by PyTorch, {4} free, {5} reserved in total, {6} in use by the process, {7}
// reserved but unallocated), the device-side assertion's site and condition, and the hints
// after `RuntimeError: CUDA error: ...`.
struct CudaErrorWords {
  std::string_view oom;
  std::string_view assert_site, assert_condition;
  std::span<const std::string_view> hints;
};

constexpr std::string_view kAsyncHint =
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.";
constexpr std::string_view kDsaHint =
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.";
constexpr std::string_view kHints113[] = {
    "CUDA kernel errors might be asynchronously reported at some other API call,so the "
    "stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1."};
constexpr std::string_view kHints21[] = {
    kAsyncHint, "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.", kDsaHint};
constexpr std::string_view kHints22[] = {
    kAsyncHint, "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", kDsaHint};

constexpr std::string_view kOldAssertSite = "../aten/src/ATen/native/cuda/IndexKernel.cu:92";
constexpr std::string_view kOldAssertCondition = "index >= -sizes[i] && index < sizes[i]";

constexpr VersionRow<CudaErrorWords> kCudaErrorWords[] = {
    {{"", "1.13"},
     {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate {0} (GPU {1}; {2} total "
      "capacity; {3} already allocated; {4} free; {5} reserved in total by PyTorch) If reserved "
      "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See "
      "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
      kOldAssertSite, kOldAssertCondition, kHints113}},
    {{"2.1", "2.1"},
     {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate {0}. GPU {1} has a total "
      "capacty of {2} of which {4} is free. Including non-PyTorch memory, this process has {6} "
      "memory in use. Of the allocated memory {3} is allocated by PyTorch, and {7} is reserved by "
      "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
      "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
      "PYTORCH_CUDA_ALLOC_CONF",
      kOldAssertSite, kOldAssertCondition, kHints21}},
    {{"2.2", ""},
     {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {0}. GPU {1} has a total "
      "capacity of {2} of which {4} is free. Including non-PyTorch memory, this process has {6} "
      "memory in use. Of the allocated memory {3} is allocated by PyTorch, and {7} is reserved by "
      "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
      "documentation for Memory Management  "
      "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92",
      "-sizes[i] <= index && index < sizes[i]", kHints22}},
};
static_assert(CoversEach(kCudaErrorWords, kTorchReleases));

void Hex0(LineBuilder& out, std::uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) out.Char("0123456789abcdef"[(v >> (4 * i)) & 15]);
}

// The NVRM Xid lines' words by driver release (profiles.h's VersionRow): the process an Xid
// names ({0} its pid; one form for a known pid, one for none: 418 names none, 470 the pid,
// 535+ the pid and the command), Xid 119's GSP RPC timeout ({0} the GPU; 535+ name the
// driver's nv_queue thread first, {0} its pid) and the channel words of Xid 31 and 43.
struct XidWords {
  std::string_view pid_known, pid_unknown;
  std::string_view gsp_thread, gsp_timeout;
  std::string_view mmu_fault_channel, xid43_channel;
};

constexpr std::string_view kGspTimeout =
    "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).";

constexpr VersionRow<XidWords> kXidWords[] = {
    {{"", "418"},
     {"", "", "", kGspTimeout, "Ch 0000003a, intr 10000000. ", "Ch 00000020, engmask 00000101"}},
    {{"470", "470"},
     {"pid={0}, ", "pid='<unknown>', ", "", kGspTimeout, "channel 0x00000002, intr 00000000. ",
      "Ch 00000008"}},
    {{"535", "559"},
     {"pid={0}, name=python3, ", "pid='<unknown>', name=<unknown>, ", "pid={0}, name=nv_queue, ",
      kGspTimeout, "channel 0x00000002, intr 00000000. ", "Ch 00000008"}},
    {{"560", ""},
     {"pid={0}, name=python3, ", "pid='<unknown>', name=<unknown>, ", "pid={0}, name=nv_queue, ",
      "Timeout after 6s of waiting for RPC response from GPU{0} GSP! Expected function 76 "
      "(GSP_RM_CONTROL) (0x20802a02 0x8).",
      "channel 0x00000002, intr 00000000. ", "Ch 00000008"}},
};
static_assert(CoversEach(kXidWords, kDriverReleases));

// "0000:18:00" for local GPU i.
void XidPci(LineBuilder& out, int gpu) {
  out.Str("0000:").Str(NcclBusId(gpu).substr(0, 2)).Str(":00");
}

}  // namespace

// torch's caching allocator message per era (docs/log_formats.md "cuda_oom").
void LineFormatter::OomMessage(LineBuilder& out, int rank, int variant) const {
  const std::int64_t want = 512 * (1 + variant % 8);  // MiB
  const std::int64_t total = 81'049, free_mib = 300 + variant % 700;
  const std::int64_t in_use = total - free_mib, reserved_free = 1'024 + variant % 2'048;
  const std::int64_t allocated = in_use - reserved_free - 600;
  const int gpu = job_.LocalRank(rank);
  out.Fill(RowFor(kCudaErrorWords, torch_.name).oom,
           {SizeText(want), gpu, SizeText(total), SizeText(allocated), SizeText(free_mib),
            SizeText(allocated + reserved_free), SizeText(in_use), SizeText(reserved_free)});
}

// Device-side assertion lines, one per failing GPU thread (CUDA printf: no rank prefix).
void LineFormatter::AssertLines(LineBuilder& out, int variant) const {
  const CudaErrorWords& words = RowFor(kCudaErrorWords, torch_.name);
  const int threads = 96 + variant % 225;
  const int block0 = 37 + variant % 300;
  for (int i = 0; i < threads; ++i) {
    out.Str(words.assert_site);
    out.Str(": operator(): block: [").Int(block0 + i / 32).Str(",0,0], thread: [");
    out.Int(96 + i % 32).Str(",0,0] Assertion `");
    out.Str(words.assert_condition);
    out.Str(" && \"index out of bounds\"` failed.").EndLine();
  }
}

std::int64_t LineFormatter::Format(const CudaFailure& r, LineBuilder& out) const {
  auto prefix = [&] { out.Fill(torch_.traceback_prefix, {r.rank}); };
  if (r.kind == CudaFailureKind::kDeviceAssert) AssertLines(out, r.variant);
  for (std::string_view line : kCudaFrames) {
    prefix();
    out.Str(line).EndLine();
  }
  if (r.kind == CudaFailureKind::kOutOfMemory) {
    for (std::string_view line : kOomFrames) {
      prefix();
      const std::size_t at = line.find("{py}");
      if (at == std::string_view::npos) {
        out.Str(line);
      } else {
        out.Str(line.substr(0, at)).Str(torch_.python_lib).Str(line.substr(at + 4));
      }
      out.EndLine();
    }
    prefix();
    const std::int64_t error_line = out.lines();
    OomMessage(out, r.rank, r.variant);
    out.EndLine();
    return error_line;
  }
  prefix();
  const std::int64_t error_line = out.lines();
  out.Str("RuntimeError: CUDA error: ").Str(CudaMessage(r.kind)).EndLine();
  for (const std::string_view hint : RowFor(kCudaErrorWords, torch_.name).hints) {
    prefix();
    out.Str(hint).EndLine();
  }
  prefix();
  out.EndLine();
  return error_line;
}

// "pid=N, name=comm, " / "pid='<unknown>', name=<unknown>, " / "pid=N, " / nothing, by era.
void LineFormatter::XidAttribution(LineBuilder& out, int pid) const {
  const XidWords& words = RowFor(kXidWords, job_.driver->name);
  out.Fill(pid > 0 ? words.pid_known : words.pid_unknown, {pid});
}

// The Xid's text after "NVRM: Xid (PCI:...): <code>, ".
void LineFormatter::XidBody(const KernelMessage& r, std::uint64_t word, LineBuilder& out) const {
  const XidWords& words = RowFor(kXidWords, job_.driver->name);
  switch (r.code) {
    case 79:
      XidAttribution(out, 0);
      out.Str("GPU has fallen off the bus.");
      return;
    case 48:
      XidAttribution(out, 0);
      out.Str("An uncorrectable double bit error (DBE) has been detected on GPU in the ");
      out.Str("framebuffer at physAddr 0x").Str("7f");
      Hex0(out, word & 0xfffffff, 7);
      out.Str(" partition ").Int(static_cast<int>(word >> 40) % 8).Str(", subpartition ");
      out.Int(static_cast<int>(word >> 44) % 2);
      return;
    case 63:
      XidAttribution(out, 0);
      out.Str("Row Remapper: New row (0x");
      Hex0(out, 0x100000000ULL + (word & 0xfffffff), 12);
      out.Str(") marked for remapping, reset gpu to activate.");
      return;
    case 64:
      XidAttribution(out, 0);
      out.Str("Row Remapper: Failed to mark row (0x");
      Hex0(out, 0x100000000ULL + (word & 0xfffffff), 12);
      out.Str(") for remapping, no spare rows left in bank.");
      return;
    case 94:
      XidAttribution(out, PidOfGpu(r));
      out.Str("Contained: SM (0x1). RST: No, D-RST: No");
      return;
    case 95:
      XidAttribution(out, PidOfGpu(r));
      out.Str("Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No");
      return;
    case 45:
      XidAttribution(out, PidOfGpu(r));
      out.Str("Ch 000000").Str(std::string_view("0810182028303840").substr(2 * (r.arg % 8), 2));
      return;
    case 154:
      XidAttribution(out, 0);
      out.Str(r.detail == 2 ? "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"
                            : "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
      return;
    case 74:
      XidAttribution(out, 0);
      out.Str("NVLink: fatal error detected on link ").Int(r.detail);
      return;
    case 120:
      XidAttribution(out, 0);
      out.Str("GSP task timeout @ pc:0x");
      Hex0(out, 0x4b00000 + (word & 0xfffff), 7);
      out.Str(", partition:0#").Int(r.detail);
      return;
    case 119:
      out.Fill(words.gsp_thread, {800 + r.arg}).Fill(words.gsp_timeout, {r.arg});
      return;
    case 31:
      XidAttribution(out, r.detail);
      out.Str(words.mmu_fault_channel);
      out.Str("MMU Fault: ENGINE GRAPHICS GPC").Int(static_cast<int>(word % 8));
      out.Str(" GPCCLIENT_T1_").Int(static_cast<int>(word >> 8) % 16).Str(" faulted @ 0x7f");
      Hex0(out, (word >> 16) & 0xff, 2);
      out.Str("_");
      Hex0(out, (word >> 24) & 0xfffff000, 8);
      out.Str(". Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ");
      return;
    case 13: {  // detail: 4 * TPC index + which line (warp exception, global exception, ESR)
      XidAttribution(out, PidOfGpu(r));
      const int gpc = static_cast<int>(word % 8), tpc = (static_cast<int>((word >> 8) % 9) + r.detail / 4) % 9;
      const int sm = r.detail / 4 % 2;
      switch (r.detail % 4) {
        case 0:
          out.Str("Graphics SM Warp Exception on (GPC ").Int(gpc).Str(", TPC ").Int(tpc).Str(", SM ").Int(sm);
          out.Str("): Out Of Range Address");
          return;
        case 1:
          out.Str("Graphics SM Global Exception on (GPC ").Int(gpc).Str(", TPC ").Int(tpc).Str(", SM ").Int(sm);
          out.Str("): Multiple Warp Errors");
          return;
        default:
          out.Str("Graphics Exception: ESR 0x5").Int(gpc).Str("e").Int(tpc).Str("48=0x");
          Hex0(out, 0x1000e + (word >> 20 & 0xfff), 7);
          out.Str(" 0x5").Int(gpc).Str("e").Int(tpc).Str("50=0x20 0x5").Int(gpc).Str("e").Int(tpc).Str("44=0xd3eff2 0x5");
          out.Int(gpc).Str("e").Int(tpc).Str("4c=0x17f");
          return;
      }
    }
    case 43:
      XidAttribution(out, r.detail);
      out.Str(words.xid43_channel);
      return;
    default:
      XidAttribution(out, 0);
      return;
  }
}

// The pid of the process on the message's GPU (the rank of that node and local GPU).
int LineFormatter::PidOfGpu(const KernelMessage& r) const {
  const int rank = r.node * job_.gpus_per_node + job_.LocalOfGpu(r.node, r.arg);
  return rank < job_.world ? job_.worker_pid[rank] : 0;
}

// kernel/hung_task.c (5.15): a task in D state longer than hung_task_timeout_secs, the tainted
// kernel's release, the hint, the task line and its stack (here: Python importing from a hard NFS
// mount whose server stopped answering; the wait is killable).
void LineFormatter::HungTask(const KernelMessage& r, LineBuilder& out) const {
  out.Str("INFO: task python3:").Int(r.detail).Str(" blocked for more than 120 seconds.").EndLine();
  KernelPrefix(r, out);
  out.Str("      Tainted: P           OE     5.15.0-105-generic #115-Ubuntu").EndLine();
  KernelPrefix(r, out);
  out.Str("\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.").EndLine();
  KernelPrefix(r, out);
  out.Str("task:python3         state:D stack:    0 pid:").Int(r.detail).Str(" ppid:").Int(r.detail - 1 - r.arg);
  out.Str(" flags:0x00000002").EndLine();
  static constexpr std::string_view kTrace[] = {
      "Call Trace:", " <TASK>", " __schedule+0x23d/0x590", " schedule+0x4e/0xc0",
      " rpc_wait_bit_killable+0x1e/0xa0 [sunrpc]", " __rpc_execute+0x11f/0x420 [sunrpc]",
      " rpc_execute+0x7f/0xe0 [sunrpc]", " nfs4_proc_getattr+0x9e/0x140 [nfsv4]",
      " __nfs_revalidate_inode+0xd1/0x320 [nfs]", " </TASK>"};
  for (std::size_t i = 0; i < std::size(kTrace); ++i) {
    KernelPrefix(r, out);
    out.Str(kTrace[i]);
    if (i + 1 < std::size(kTrace)) out.EndLine();
  }
}

void LineFormatter::FormatFaultKernel(const KernelMessage& r, std::uint64_t word,
                                      LineBuilder& out) const {
  switch (r.event) {
    case KernelEvent::kXid:
      if (r.repeats > 0) out.Str("message repeated ").Int(r.repeats).Str(" times: [ ");
      out.Str("NVRM: Xid (PCI:");
      XidPci(out, r.arg);
      out.Str("): ").Int(r.code).Str(", ");
      XidBody(r, word, out);
      if (r.repeats > 0) out.Char(']');
      return;
    case KernelEvent::kGpuFellOff:
      out.Str("NVRM: GPU 0000:").Str(NcclBusId(r.arg).substr(0, 2)).Str(":00.0: GPU has fallen off the bus.");
      return;
    case KernelEvent::kCrashDump:
      out.Str("NVRM: A GPU crash dump has been created. If possible, please run").EndLine();
      KernelPrefix(r, out);
      out.Str("NVRM: nvidia-bug-report.sh as root to collect this data before").EndLine();
      KernelPrefix(r, out);
      out.Str("NVRM: the NVIDIA kernel module is unloaded.");
      return;
    case KernelEvent::kGspRateLimit:
      out.Str("NVRM: Rate limiting GSP RPC error prints for GPU at PCI:");
      XidPci(out, r.arg);
      out.Str(" (printing 1 of every 30).  The GPU likely needs to be reset.");
      return;
    case KernelEvent::kOomInvoked:
      out.Str("python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), ");
      out.Str("order=0, oom_score_adj=0");
      return;
    case KernelEvent::kOomConstraint:
      if (job_.launcher == v1::LAUNCHER_SRUN) {
        out.Str("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,");
        out.Str("oom_memcg=/system.slice/slurmstepd.scope/job_").Int(job_.job_id);
        out.Str(",task_memcg=/system.slice/slurmstepd.scope/job_").Int(job_.job_id);
        out.Str("/step_0/user/task_").Int(r.arg);
      } else {
        out.Str("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,");
        out.Str("global_oom,task_memcg=/user.slice/user-1000.slice/session-3.scope");
      }
      out.Str(",task=python3,pid=").Int(r.detail).Str(",uid=1000");
      return;
    case KernelEvent::kOomKilled:
      out.Str(job_.launcher == v1::LAUNCHER_SRUN ? "Memory cgroup out of memory: " : "Out of memory: ");
      out.Str("Killed process ").Int(r.detail).Str(" (python3) total-vm:");
      out.Int(180'000'000 + static_cast<std::int64_t>(word % 40'000'000)).Str("kB, anon-rss:");
      out.Int(120'000'000 + static_cast<std::int64_t>((word >> 20) % 40'000'000));
      out.Str("kB, file-rss:").Int(300'000 + static_cast<std::int64_t>(word % 90'000));
      out.Str("kB, shmem-rss:2097152kB, UID:1000 pgtables:").Int(250'000 + static_cast<std::int64_t>(word % 9'000));
      out.Str("kB oom_score_adj:0");
      return;
    case KernelEvent::kOomReaped:
      out.Str("oom_reaper: reaped process ").Int(r.detail);
      out.Str(" (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:2097152kB");
      return;
    case KernelEvent::kNfsNotResponding:  // fs/nfs: the RPC to the server timed out (a hard mount retries)
      out.Str("nfs: server nfs-01 not responding, still trying");
      return;
    case KernelEvent::kHungTask:
      HungTask(r, out);
      return;
    default:
      return;
  }
}

// nvidia-smi's default table (535 layout): one row group per GPU, upper-case bus ids.
void LineFormatter::Format(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  const TimeNs local = Local(r.node, r.time);
  const CivilTime c = ToCivil(local);
  const std::int64_t days = DaysFromCivil(c.year, c.month, c.day);
  auto bus = [&](int gpu) {
    std::string b(NcclBusId(gpu).substr(0, 2));
    for (char& ch : b) ch = static_cast<char>(ch >= 'a' ? ch - 'a' + 'A' : ch);
    return b;
  };
  if (r.lost_gpu >= 0) {
    out.Str("Unable to determine the device handle for GPU0000:").Str(bus(r.lost_gpu)).Str(":00.0: Unknown Error").EndLine();
  }
  out.Str(kDays[((days % 7) + 7) % 7]).Char(' ').Str(kMonths[c.month - 1]).Char(' ').Padded(c.day, 2, ' ');
  out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char(' ').Int(c.year);
  out.Str("       ").EndLine();
  const std::string_view rule = "+---------------------------------------------------------------------------------------+";
  const std::string_view split = "+-----------------------------------------+----------------------+----------------------+";
  out.Str(rule).EndLine();
  out.Str("| NVIDIA-SMI ").Str(job_.driver->version).Str("             Driver Version: ");
  out.Str(job_.driver->version).Str("   CUDA Version: 12.2     |").EndLine();
  out.Str("|-----------------------------------------+----------------------+----------------------+").EndLine();
  out.Str("| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |").EndLine();
  out.Str("| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |").EndLine();
  out.Str("|                                         |                      |               MIG M. |").EndLine();
  out.Str("|=========================================+======================+======================|").EndLine();
  for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
    if (gpu == r.lost_gpu) continue;
    out.Str("| ").Padded(gpu, 3, ' ').Str("  NVIDIA H100 80GB HBM3          On  | 00000000:").Str(bus(gpu));
    out.Str(":00.0 Off |                    ").Int(gpu == r.ecc_gpu ? 1 : 0).Str(" |").EndLine();
    out.Str("| N/A   ").Int(31 + (gpu * 7 + r.node) % 9).Str("C    P0             ");
    out.Int(110 + (gpu * 13 + r.node) % 80).Str("W / 700W |      4MiB / 81559MiB |      0%      Default |").EndLine();
    out.Str("|                                         |                      |             Disabled |").EndLine();
    out.Str(split).EndLine();
  }
  if (job_.gpu_order == v1::GPU_ORDER_UUID) NvidiaSmiList(r, out);
  if (job_.noise.nvidia_smi_query) NvidiaSmiQuery(r, out);
  if (job_.noise.dcgm) {
    DcgmHealth(r, out);
    DcgmDiag(r, out);
    DcgmMetrics(r, out);
  }
}

}  // namespace denpex::sim
