// What a rank's ProcessGroupNCCL watchdog prints when it caught a timeout (docs/log_formats.md
// §3): the watchdog block and its flight-recorder dump; what follows when the rank is not
// simply taken down ("async error handling": mode 0 logs and hangs, mode 2 aborts the
// communicators and the main thread raises, blocking wait raises the timeout from the main
// thread, a stuck communicator abort is ended by the heartbeat monitor); and the heartbeat
// monitor's report of another rank's flight-recorder dump signal. The wording by release is
// kWatchdogWords, the source lines and stack frames the torch profile's.
#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

std::string_view OpName(OpType op) {
  switch (op) {
    case OpType::kAllreduce:
      return "ALLREDUCE";
    case OpType::kSend:
      return "SEND";
    case OpType::kRecv:
      return "RECV";
    case OpType::kAllgatherBase:
      return "_ALLGATHER_BASE";
    case OpType::kReduceScatterBase:
      return "_REDUCE_SCATTER_BASE";
  }
  return "";
}

// Per-process random addresses: the stream index packs (rank, what) so each is independent.
enum AddressSlot : std::uint64_t { kLibraryBases = 0 };
Rng AddressRng(const Job& job, int rank, AddressSlot slot) {
  return Rng(job.seed, StreamId::kRankAddresses, static_cast<std::uint64_t>(rank) * 4 + slot);
}

// The watchdog's words by torch release (profiles.h's VersionRow); "" where a release prints
// no such words or line.
struct WatchdogWords {
  // WorkNCCL(...)'s sizes after its OpType ({0} NumelIn, {1} NumelOut).
  std::string_view numel;
  // The watchdog's exception line after the group prefix ({0} the work's SeqNum, {1} the last
  // enqueued work, {2} the last completed).
  std::string_view exception_detected;
  // handleException's lines: whether they carry the group prefix, and the tear-down sentence
  // at the end of "Some NCCL operations ..." or as a line of its own.
  bool handler_prefixed;
  std::string_view taking_down_inline, taking_down_line;
  // What the thread's end says before the timeout message ("": what() is the timeout message).
  std::string_view terminated;
  // "Work WorkNCCL(...) timed out in blocking wait<suffix>."
  std::string_view blocking_wait_suffix;
  // The heartbeat monitor's fatal line: its example of a hanging CUDA call, in both places.
  std::string_view stuck_example, stuck_gil_example;
  // The main thread's traceback: the frame of the logger torch >= 2.2 wraps the c10d API in.
  std::string_view c10d_logger_frame;
};

constexpr std::string_view kNumel = ", NumelIn={0}, NumelOut={1}";
constexpr std::string_view kTakingDown =
    "To avoid data inconsistency, we are taking the entire process down.";
constexpr std::string_view kExceptionDetected =
    " Exception (either an error or timeout) detected by watchdog at work: {0}, last enqueued "
    "NCCL work: {1}, last completed NCCL work: {2}.";
constexpr std::string_view kThreadTerminated =
    "Process group watchdog thread terminated with exception: ";
constexpr std::string_view kC10dLogger = "/torch/distributed/c10d_logger.py\", line 79, in wrapper";

constexpr VersionRow<WatchdogWords> kWatchdogWords[] = {
    {{"", "1.13"},
     {"", "", false, " To avoid this inconsistency, we are taking the entire process down.", "", "",
      " (NCCL_BLOCKING_WAIT=1)", "", "", ""}},
    // The words of 2.1, the release of this row the profiles know.
    {{"2.0", "2.3"},
     {kNumel, "", false, "", kTakingDown,
      "NCCL watchdog thread terminated with exception: ", " (NCCL_BLOCKING_WAIT=1)", "", "", ""}},
    {{"2.4", "2.5"},
     {kNumel, kExceptionDetected, true, "", kTakingDown, kThreadTerminated,
      " (TORCH_NCCL_BLOCKING_WAIT=1)", "", "", kC10dLogger}},
    {{"2.6", ""},
     {kNumel, kExceptionDetected, true, "", kTakingDown, kThreadTerminated, "",
      "(e.g., CudaEventDestroy) ", " (for example, CudaEventDestroy)", kC10dLogger}},
};
static_assert(CoversEach(kWatchdogWords, kTorchReleases));

const WatchdogWords& WordsOf(const TorchProfile& torch) {
  return RowFor(kWatchdogWords, torch.name);
}

constexpr std::string_view kSomeOperationsFailed =
    "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
    "kernels, subsequent GPU operations might run on corrupted/incomplete data.";

// The main thread's frames down to the collective it issued (Megatron's gradient all-reduce
// at the end of the step), then torch.distributed's own frames.
constexpr std::string_view kCollectiveFrames[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/megatron-lm/pretrain_gpt.py\", line 278, in <module>",
    "    pretrain(",
    "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 386, in pretrain",
    "    iteration, num_floating_point_operations_so_far = train(",
    "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 1402, in train",
    "    train_step(forward_step_func,",
    "  File \"/workspace/megatron-lm/megatron/training/training.py\", line 754, in train_step",
    "    losses_reduced = forward_backward_func(",
    "  File \"/workspace/megatron-lm/megatron/core/pipeline_parallel/schedules.py\", line 1468, in "
    "forward_backward_pipelining_without_interleaving",
    "    config.finalize_model_grads_func(",
    "  File \"/workspace/megatron-lm/megatron/core/distributed/finalize_model_grads.py\", line 200, in "
    "finalize_model_grads",
    "    model_chunk.finish_grad_sync()",
    "  File \"/workspace/megatron-lm/megatron/core/distributed/distributed_data_parallel.py\", line 427, in "
    "finish_grad_sync",
    "    bucket_group.finish_grad_sync()",
    "  File \"/workspace/megatron-lm/megatron/core/distributed/param_and_grad_buffer.py\", line 311, in "
    "finish_grad_sync",
    "    self.start_grad_sync()",
    "  File \"/workspace/megatron-lm/megatron/core/distributed/param_and_grad_buffer.py\", line 274, in "
    "start_grad_sync",
    "    self.communication_handle = torch.distributed.all_reduce(",
};

// The torch.distributed function the collective went through (distributed_c10d.py) and the
// line that raises: `work.wait()` (blocking wait) or the call into the process group (mode 2).
struct C10dCall {
  std::string_view frame, issue, wait;
};

const C10dCall& CallOf(OpType op) {
  static constexpr C10dCall kAllreduce{"/torch/distributed/distributed_c10d.py\", line 2288, in all_reduce",
                                       "    work = group.allreduce([tensor], opts)", "    work.wait()"};
  static constexpr C10dCall kAllgather{
      "/torch/distributed/distributed_c10d.py\", line 3145, in all_gather_into_tensor",
      "    work = group._allgather_base(output_tensor, input_tensor, opts)", "    work.wait()"};
  static constexpr C10dCall kReduceScatter{
      "/torch/distributed/distributed_c10d.py\", line 3619, in reduce_scatter_tensor",
      "    work = group._reduce_scatter_base(output, input, opts)", "    work.wait()"};
  static constexpr C10dCall kP2p{"/torch/distributed/distributed_c10d.py\", line 2160, in batch_isend_irecv",
                                 "    work = p2p_op.op(p2p_op.tensor, p2p_op.peer, p2p_op.group, p2p_op.tag)",
                                 "    req.wait()"};
  switch (op) {
    case OpType::kAllgatherBase: return kAllgather;
    case OpType::kReduceScatterBase: return kReduceScatter;
    case OpType::kSend: case OpType::kRecv: return kP2p;
    case OpType::kAllreduce: break;
  }
  return kAllreduce;
}

}  // namespace

const std::string_view kTraceNotFound =
    "Stack trace of the failed collective not found, potentially because FlightRecorder is "
    "disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.";

void LineFormatter::WorkNccl(LineBuilder& out, const WatchdogTimeout& r) const {
  out.Str("WorkNCCL(SeqNum=").Int(r.seq).Str(", OpType=").Str(OpName(r.op));
  out.Fill(WordsOf(torch_).numel, {r.numel, r.numel_out});
  out.Str(", Timeout(ms)=").Int(r.timeout_ms).Char(')');
}

// "<pgprefix> Watchdog caught collective operation timeout: WorkNCCL(...) ran for X
// milliseconds before timing out."
void LineFormatter::TimeoutMessage(LineBuilder& out, const WatchdogTimeout& r) const {
  WritePgPrefix(out, r.rank, r.group);
  out.Str(" Watchdog caught collective operation timeout: ");
  WorkNccl(out, r);
  out.Str(" ran for ").Int(r.ran_for_ms).Str(" milliseconds before timing out.");
}

void LineFormatter::NativeFrames(LineBuilder& out, int rank, bool rank_prefix) const {
  Rng rng = AddressRng(job_, rank, kLibraryBases);
  std::uint64_t base[static_cast<int>(NativeLibrary::kCount)];
  for (std::uint64_t& b : base) b = 0x7f0000000000ULL | (rng.Next() & 0xfffffff000ULL);
  int index = 0;
  for (const NativeFrame& f : torch_.watchdog_frames) {
    const auto lib = static_cast<int>(f.library);
    if (rank_prefix) out.Str("[rank").Int(rank).Str("]:");
    out.Str("frame #").Int(index++).Str(": ").Str(f.symbol).Str(" (0x").Hex(base[lib] + f.offset);
    out.Str(" in ").Str(torch_.native_lib_paths[lib]).Char(')').EndLine();
  }
}

// The watchdog block (docs/log_formats.md §3), in the profile's shape. torch 2.4: five c10
// lines, the prefixed exception with its frames, then libstdc++'s unprefixed terminate
// message with the frames again. Older releases drop lines, prefixes and frames.
// TORCH_NCCL_DUMP_ON_TIMEOUT with no trace buffer (docs/log_formats.md §3): the watchdog
// signals the dump, and the heartbeat monitor, on its next wake-up, prints for default_pg
// that it received the signal "from this local rank" and prepares the dump.
void LineFormatter::FlightRecorderDump(LineBuilder& out, const WatchdogTimeout& r, TimeNs t) const {
  Rng rng(job_.seed, StreamId::kLineTiming, (1ULL << 33) + static_cast<std::uint64_t>(r.rank));
  t += rng.UniformInt(10, 80) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_trace_not_found);
  out.Str(kTraceNotFound).EndLine();
  t += rng.UniformInt(20, 120) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_first_pg_dump);
  WritePgPrefix(out, r.rank, r.group);
  out.Str(" First PG on this rank to signal dumping.").EndLine();
  t = r.time + r.dump_signal_delay;
  WriteC10Header(out, r.rank, t, torch_.line_dump_signal);
  WritePgPrefix(out, r.rank, PgKind::kDefault);
  DumpSignalText(out, "this local rank", r.default_enqueued, r.default_completed);
  t += rng.UniformInt(50, 300) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_preparing_dump);
  WritePgPrefix(out, r.rank, PgKind::kDefault);
  out.Str(" ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1").EndLine();
}

void LineFormatter::Format(const WatchdogTimeout& r, LineBuilder& out) const {
  const WatchdogWords& words = WordsOf(torch_);
  Rng rng(job_.seed, StreamId::kLineTiming, static_cast<std::uint64_t>(r.rank));
  TimeNs t = r.time;
  WriteC10Header(out, r.rank, t, torch_.line_watchdog_timeout);
  TimeoutMessage(out, r);
  out.EndLine();
  t += rng.UniformInt(20, 90) * kNsPerUs;
  if (!words.exception_detected.empty()) {
    WriteC10Header(out, r.rank, t, torch_.line_exception_detected);
    WritePgPrefix(out, r.rank, r.group);
    out.Fill(words.exception_detected, {r.seq, r.last_enqueued, r.last_completed}).EndLine();
  }
  if (r.dump_observed) {  // the monitor dumped already; the watchdog goes on at once
    t += rng.UniformInt(10, 80) * kNsPerUs;
    WriteC10Header(out, r.rank, t, torch_.line_trace_not_found);
    out.Str(kTraceNotFound).EndLine();
  } else if (r.dump_signal_delay > 0) {
    FlightRecorderDump(out, r, t);
    t = r.time + r.dump_abort_delay - rng.UniformInt(200, 900) * kNsPerUs;
  }
  if (r.reaction != WatchdogReaction::kTearDown) {
    FormatReaction(r, t, out);
    return;
  }
  t += rng.UniformInt(5, 30) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_some_ops_failed);
  if (words.handler_prefixed) {
    WritePgPrefix(out, r.rank, r.group);
    out.Char(' ');
  }
  out.Str(kSomeOperationsFailed).Str(words.taking_down_inline).EndLine();
  t += rng.UniformInt(1, 8) * kNsPerUs;
  if (!words.taking_down_line.empty()) {
    WriteC10Header(out, r.rank, t, torch_.line_taking_down);
    if (words.handler_prefixed) {
      WritePgPrefix(out, r.rank, r.group);
      out.Char(' ');
    }
    out.Str(words.taking_down_line).EndLine();
  }
  t += rng.UniformInt(100, 900) * kNsPerUs;
  if (!words.terminated.empty()) {
    WriteC10Header(out, r.rank, t, torch_.line_thread_terminated);
    ThreadTerminated(out, r);
    out.EndLine();
  }
  const bool frames = !torch_.watchdog_frames.empty();
  if (frames) {
    out.Str("[rank").Int(r.rank).Str(
        "]:Exception raised from checkTimeout at "
        "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:");
    out.Int(torch_.line_check_timeout_raise).Str(" (most recent call first):").EndLine();
    NativeFrames(out, r.rank, /*rank_prefix=*/true);
    out.Str("[rank").Int(r.rank).Str("]:").EndLine();
  }
  out.Str("terminate called after throwing an instance of '").Str(torch_.exception_class);
  out.Str("'").EndLine();
  out.Str("  what():  ");
  if (words.terminated.empty()) {
    TimeoutMessage(out, r);
  } else {
    ThreadTerminated(out, r);
  }
  out.EndLine();
  if (frames) {
    out.Str(
        "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:");
    out.Int(torch_.line_check_timeout_raise).Str(" (most recent call first):").EndLine();
    NativeFrames(out, r.rank, /*rank_prefix=*/false);
  }
}

// "<pgprefix> Process group watchdog thread terminated with exception: <timeout message>"
void LineFormatter::ThreadTerminated(LineBuilder& out, const WatchdogTimeout& r) const {
  WritePgPrefix(out, r.rank, r.group);
  out.Char(' ').Str(WordsOf(torch_).terminated);
  TimeoutMessage(out, r);
}

void LineFormatter::FormatReaction(const WatchdogTimeout& r, TimeNs t, LineBuilder& out) const {
  Rng rng(job_.seed, StreamId::kLineTiming, (5ULL << 32) + static_cast<std::uint64_t>(r.rank));
  t += rng.UniformInt(5, 30) * kNsPerUs;
  switch (r.reaction) {
    case WatchdogReaction::kNoHandling:
    case WatchdogReaction::kCleanUpOnly:
      SomeOperationsFailed(out, r, t, /*take_down=*/false);
      return;
    case WatchdogReaction::kBlockingWait:
      // The main thread's own check: "Work WorkNCCL(...) timed out in blocking wait", the
      // abort, then handleException(TearDown) on the main thread, which raises.
      t = r.time + r.raise_delay - rng.UniformInt(40, 400) * kNsPerUs;
      WriteC10Header(out, r.rank, t, torch_.line_blocking_wait);
      WritePgPrefix(out, r.rank, r.group);  // torch <= 2.3's is "[Rank <group rank>]"
      out.Str(" Work ");
      WorkNccl(out, r);
      out.Str(" timed out in blocking wait").Str(WordsOf(torch_).blocking_wait_suffix).Char('.');
      out.EndLine();
      SomeOperationsFailed(out, r, t + rng.UniformInt(100, 900) * kNsPerUs, /*take_down=*/true);
      return;
    case WatchdogReaction::kStuck:  // the watchdog hangs in ncclCommAbort: nothing more now
    case WatchdogReaction::kTearDown:
      return;
  }
}

void LineFormatter::Format(const WatchdogAftermath& a, LineBuilder& out) const {
  const WatchdogTimeout& r = a.timeout;
  if (r.reaction == WatchdogReaction::kStuck) {
    HeartbeatMonitorKill(out, r, r.time + r.heartbeat_delay);
  } else {
    MainThreadRaises(out, r);
  }
}

// handleException's lines: "Some NCCL operations have failed or timed out. ..." always, and
// "To avoid data inconsistency, we are taking the entire process down." when it tears down
// (torch 1.13 prints both sentences on one line).
void LineFormatter::SomeOperationsFailed(LineBuilder& out, const WatchdogTimeout& r, TimeNs t,
                                         bool take_down) const {
  const WatchdogWords& words = WordsOf(torch_);
  WriteC10Header(out, r.rank, t, torch_.line_some_ops_failed);
  if (words.handler_prefixed) {
    WritePgPrefix(out, r.rank, r.group);
    out.Char(' ');
  }
  out.Str(kSomeOperationsFailed);
  if (take_down) out.Str(words.taking_down_inline);
  out.EndLine();
  if (!take_down || words.taking_down_line.empty()) return;
  WriteC10Header(out, r.rank, t + 3 * kNsPerUs, torch_.line_taking_down);
  if (words.handler_prefixed) {
    WritePgPrefix(out, r.rank, r.group);
    out.Char(' ');
  }
  out.Str(words.taking_down_line).EndLine();
}

// The heartbeat monitor (torch >= 2.4) of a watchdog stuck in ncclCommAbort:
//   [rank3]:[E... ProcessGroupNCCL.cpp:1417] [PG 3 (TENSOR...) Rank 3] First PG on this rank that detected no heartbeat of its watchdog.
//   [rank3]:[E... ProcessGroupNCCL.cpp:1424] [PG ...] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1
//   [rank3]:[E... ProcessGroupNCCL.cpp:1536] [PG ...] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1
//   [rank3]:[F... ProcessGroupNCCL.cpp:1266] [PG ...] [PG ...] ProcessGroupNCCL's watchdog got stuck for 480 seconds ...
void LineFormatter::HeartbeatMonitorKill(LineBuilder& out, const WatchdogTimeout& r, TimeNs t) const {
  Rng rng(job_.seed, StreamId::kLineTiming, (6ULL << 32) + static_cast<std::uint64_t>(r.rank));
  WriteC10Header(out, r.rank, t, torch_.line_no_heartbeat_first_pg);
  WritePgPrefix(out, r.rank, r.group);
  out.Str(" First PG on this rank that detected no heartbeat of its watchdog.").EndLine();
  t += rng.UniformInt(5, 40) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_heartbeat_timeout);
  WritePgPrefix(out, r.rank, r.group);
  out.Str(" Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
          "workMetaList_.size()=").Int(r.pending_works).EndLine();
  t += rng.UniformInt(100, 600) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_preparing_dump);
  WritePgPrefix(out, r.rank, r.group);
  out.Str(" ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1").EndLine();
  t += rng.UniformInt(1, 30) * kNsPerMs;
  WriteC10Line(out, r.rank, job_.NodeOf(r.rank), t, 'F', "ProcessGroupNCCL.cpp", torch_.line_watchdog_stuck);
  WritePgPrefix(out, r.rank, r.group);
  out.Char(' ');
  WritePgPrefix(out, r.rank, r.group);
  out.Str(" ProcessGroupNCCL's watchdog got stuck for ").Int(job_.heartbeat_timeout / kNsPerSec);
  out.Str(" seconds without making progress in monitoring enqueued collectives. This typically "
          "indicates a NCCL/CUDA API ");
  out.Str(WordsOf(torch_).stuck_example);
  out.Str("hang blocking the watchdog, and could be triggered by another thread holding the GIL "
          "inside a CUDA api");
  out.Str(WordsOf(torch_).stuck_gil_example);
  out.Str(", or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck "
          "and a longer timeout would help, you can either increase the timeout "
          "(TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor "
          "(TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file "
          "an issue to PyTorch about the short timeout or false positive abort; otherwise, please "
          "attempt to debug the hang. workMetaList_.size() = ").Int(r.pending_works).EndLine();
}

// The main thread's traceback, ending in the exception it raised: the timeout itself
// (blocking wait), or the aborted communicator at its next NCCL call (mode 2).
void LineFormatter::MainThreadRaises(LineBuilder& out, const WatchdogTimeout& r) const {
  auto line = [&](std::string_view text, std::string_view python_lib = {}) {
    out.Fill(torch_.traceback_prefix, {r.rank});
    if (!python_lib.empty()) out.Str("  File \"").Str(python_lib);
    out.Str(text);
    out.EndLine();
  };
  for (std::string_view text : kCollectiveFrames) line(text);
  const WatchdogWords& words = WordsOf(torch_);
  if (!words.c10d_logger_frame.empty()) {
    line(words.c10d_logger_frame, torch_.python_lib);
    line("    return func(*args, **kwargs)");
  }
  const bool blocking = r.reaction == WatchdogReaction::kBlockingWait;
  const C10dCall& call = CallOf(r.op);
  line(call.frame, torch_.python_lib);
  line(blocking ? call.wait : call.issue);
  out.Fill(torch_.traceback_prefix, {r.rank});
  if (blocking) {
    out.Str(torch_.timeout_error_class).Str(": ");
  } else {
    out.Str(torch_.aborted_error_class).Str(": NCCL communicator was aborted on rank ");
    out.Int(job_.GroupRank(r.rank, r.group)).Str(".  Original reason for failure was: ");
  }
  TimeoutMessage(out, r);
  out.EndLine();
}

// "<pgprefix> Received a dump signal due to a collective timeout from <from> and we will try
// our best to dump the debug info. Last enqueued NCCL work: E, last completed NCCL work:
// C.This is most likely caused by ..." (`from`: "this local rank" or " rank N", so that the
// remote form has two spaces).
void LineFormatter::DumpSignalText(LineBuilder& out, std::string_view from, std::int64_t enqueued,
                                   std::int64_t completed) const {
  out.Str(" Received a dump signal due to a collective timeout from ").Str(from);
  out.Str(" and we will try our best to dump the debug info. Last enqueued NCCL work: ");
  out.Int(enqueued).Str(", last completed NCCL work: ").Int(completed);
  out.Str(
      ".This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used "
      "across ranks, the order of collectives is not same for all ranks or the scheduled "
      "collective, for some reason, didn't run. Additionally, this can be caused by GIL "
      "deadlock or other reasons such as network errors or bugs in the communications library "
      "(e.g. NCCL), etc. ");
  out.EndLine();
}

// The heartbeat monitor of default_pg finds another rank's dump signal in the TCPStore:
//   [rank5]:[E... ProcessGroupNCCL.cpp:1382] [PG 0 (default_pg) Rank 5] Observed flight recorder dump signal from another rank via TCPStore.
//   [rank5]:[E... ProcessGroupNCCL.cpp:1746] [PG 0 (default_pg) Rank 5] Received a dump signal due to a collective timeout from  rank 34 and we will ...
//   [rank5]:[E... ProcessGroupNCCL.cpp:1536] [PG 0 (default_pg) Rank 5] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1
void LineFormatter::Format(const DumpSignalObserved& r, LineBuilder& out) const {
  Rng rng(job_.seed, StreamId::kLineTiming, (7ULL << 32) + static_cast<std::uint64_t>(r.rank));
  TimeNs t = r.time;
  WriteC10Header(out, r.rank, t, torch_.line_observed_dump);
  WritePgPrefix(out, r.rank, PgKind::kDefault);
  out.Str(" Observed flight recorder dump signal from another rank via TCPStore.").EndLine();
  t += rng.UniformInt(20, 200) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_dump_signal);
  WritePgPrefix(out, r.rank, PgKind::kDefault);
  std::string from = " rank " + std::to_string(r.from);
  DumpSignalText(out, from, r.default_enqueued, r.default_completed);
  t += rng.UniformInt(50, 300) * kNsPerUs;
  WriteC10Header(out, r.rank, t, torch_.line_preparing_dump);
  WritePgPrefix(out, r.rank, PgKind::kDefault);
  out.Str(" ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1").EndLine();
}

}  // namespace denpex::sim
