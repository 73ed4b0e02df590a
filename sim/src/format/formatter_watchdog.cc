// What a rank prints after its watchdog caught a timeout when it is not simply taken down
// (docs/log_formats.md §3, "async error handling"): mode 0 logs and hangs, mode 2 aborts the
// communicators and the main thread raises, blocking wait raises the timeout from the main
// thread, a stuck communicator abort is ended by the heartbeat monitor; and the heartbeat
// monitor's report of another rank's flight-recorder dump signal.
#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

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
      if (torch_.prefix_inconsistency) {
        WritePgPrefix(out, r.rank, r.group);
      } else {
        out.Str("[Rank ").Int(job_.GroupRank(r.rank, r.group)).Char(']');
      }
      out.Str(" Work ");
      WorkNccl(out, r);
      out.Str(" timed out in blocking wait").Str(torch_.blocking_wait_suffix).Char('.').EndLine();
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
  WriteC10Header(out, r.rank, t, torch_.line_some_ops_failed);
  if (torch_.prefix_inconsistency) {
    WritePgPrefix(out, r.rank, r.group);
    out.Char(' ');
  }
  out.Str(
      "Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
      "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.");
  if (take_down && !torch_.split_inconsistency) {
    out.Str(" To avoid this inconsistency, we are taking the entire process down.");
  }
  out.EndLine();
  if (!take_down || !torch_.split_inconsistency) return;
  WriteC10Header(out, r.rank, t + 3 * kNsPerUs, torch_.line_taking_down);
  if (torch_.prefix_inconsistency) {
    WritePgPrefix(out, r.rank, r.group);
    out.Char(' ');
  }
  out.Str("To avoid data inconsistency, we are taking the entire process down.").EndLine();
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
  if (torch_.stuck_names_event_destroy) out.Str("(e.g., CudaEventDestroy) ");
  out.Str("hang blocking the watchdog, and could be triggered by another thread holding the GIL "
          "inside a CUDA api");
  if (torch_.stuck_names_event_destroy) out.Str(" (for example, CudaEventDestroy)");
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
    if (torch_.rank_prefixed_tracebacks) out.Str("[rank").Int(r.rank).Str("]: ");
    if (!python_lib.empty()) out.Str("  File \"").Str(python_lib);
    out.Str(text);
    out.EndLine();
  };
  for (std::string_view text : kCollectiveFrames) line(text);
  if (torch_.rank_prefixed_tracebacks) {  // torch >= 2.2 wraps the c10d API in a logger
    line("/torch/distributed/c10d_logger.py\", line 79, in wrapper", torch_.python_lib);
    line("    return func(*args, **kwargs)");
  }
  const bool blocking = r.reaction == WatchdogReaction::kBlockingWait;
  const C10dCall& call = CallOf(r.op);
  line(call.frame, torch_.python_lib);
  line(blocking ? call.wait : call.issue);
  if (torch_.rank_prefixed_tracebacks) out.Str("[rank").Int(r.rank).Str("]: ");
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
