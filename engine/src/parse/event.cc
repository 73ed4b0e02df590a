#include "parse/event.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace denpex::engine {

std::string_view FamilyName(Family f) {
  switch (f) {
    case Family::kOther: return "other";
    case Family::kNcclWatchdog: return "nccl_watchdog";
    case Family::kNccl: return "nccl";
    case Family::kCuda: return "cuda";
    case Family::kCudaOom: return "cuda_oom";
    case Family::kHostOom: return "host_oom";
    case Family::kXid: return "xid";
    case Family::kSlurm: return "slurm";
    case Family::kTorchrun: return "torchrun";
    case Family::kDeepSpeed: return "deepspeed";
    case Family::kFsdp: return "fsdp";
    case Family::kKubernetes: return "kubernetes";
    case Family::kRay: return "ray";
    case Family::kGloo: return "gloo";
    case Family::kTrainer: return "trainer";
    case Family::kPython: return "python";
    case Family::kBareMetal: return "bare_metal";
    case Family::kFlightRecorder:
      return "flight_recorder";
    case Family::kNcclRas:
      return "nccl_ras";
  }
  return "other";
}

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kUnknownError: return "unknown_error";
    case Kind::kWatchdogTimeout: return "watchdog_timeout";
    case Kind::kBlockingWaitTimeout: return "blocking_wait_timeout";
    case Kind::kWatchdogTerminated: return "watchdog_terminated";
    case Kind::kTakingDown: return "taking_process_down";
    case Kind::kHeartbeatTimeout: return "heartbeat_timeout";
    case Kind::kWatchdogStuck: return "watchdog_stuck";
    case Kind::kDumpSignal: return "dump_signal";
    case Kind::kCommInit: return "comm_init";
    case Kind::kNcclWarn: return "warn";
    case Kind::kIbCompletionError: return "ib_completion_error";
    case Kind::kSocketError: return "socket_error";
    case Kind::kNcclError: return "nccl_error";
    case Kind::kDuplicateGpu: return "duplicate_gpu";
    case Kind::kSocketInterface: return "socket_interface";
    case Kind::kCudaError: return "cuda_error";
    case Kind::kDeviceAssert: return "device_assert";
    case Kind::kCudaOom: return "cuda_oom";
    case Kind::kOomKill: return "oom_kill";
    case Kind::kOomInvoked: return "oom_invoked";
    case Kind::kDataLoaderKilled: return "dataloader_killed";
    case Kind::kCpuAllocFailed: return "cpu_alloc_failed";
    case Kind::kXid: return "xid";
    case Kind::kFallenOffBus: return "fallen_off_bus";
    case Kind::kRmInitFailed: return "rm_init_failed";
    case Kind::kGpuSlot: return "gpu_slot";
    case Kind::kGpuUnreachable: return "gpu_unreachable";
    case Kind::kCancelled: return "cancelled";
    case Kind::kTaskExit: return "task_exit";
    case Kind::kSlurmOom: return "oom";
    case Kind::kStepAborted: return "step_aborted";
    case Kind::kStepTerminated: return "step_terminated";
    case Kind::kJobComplete: return "job_complete";
    case Kind::kJobAllocated: return "job_allocated";
    case Kind::kJobId: return "job_id";
    case Kind::kNodeFailure: return "node_failure";
    case Kind::kRequeue: return "requeue";
    case Kind::kNodeResponding: return "node_responding";
    case Kind::kWorkerFailed: return "worker_failed";
    case Kind::kWorkerSignalled: return "worker_signalled";
    case Kind::kFailureEntry: return "failure_entry";
    case Kind::kGroupFailed: return "worker_group_failed";
    case Kind::kRendezvousError: return "rendezvous_error";
    case Kind::kStoreError: return "store_error";
    case Kind::kExitBarrier: return "exit_barrier";
    case Kind::kLauncherExit: return "launcher_exit";
    case Kind::kKillingSubprocess: return "killing_subprocess";
    case Kind::kLauncherLayout: return "launcher_layout";
    case Kind::kAgentRanks: return "agent_ranks";
    case Kind::kWorldInfo: return "world_info";
    case Kind::kHungTask: return "hung_task";
    case Kind::kFsdpError: return "fsdp_error";
    case Kind::kPinMemory: return "pin_memory";
    case Kind::kZeroError: return "zero_error";
    case Kind::kOffloadError: return "offload_error";
    case Kind::kPipelineError: return "pipeline_error";
    case Kind::kCheckpointLoad: return "checkpoint_load";
    case Kind::kOverflow: return "overflow";
    case Kind::kMemoryUsage: return "memory_usage";
    case Kind::kEvicted: return "evicted";
    case Kind::kOomKilled: return "oom_killed";
    case Kind::kCrashLoop: return "crash_loop_back_off";
    case Kind::kContainerExit: return "container_exit";
    case Kind::kActorDied: return "actor_died";
    case Kind::kRayOom: return "ray_oom";
    case Kind::kRayletOomKills: return "raylet_oom_kills";
    case Kind::kRayWorker: return "ray_worker";
    case Kind::kRankBinding: return "rank_binding";
    case Kind::kActorField: return "actor_field";
    case Kind::kActorCause: return "actor_cause";
    case Kind::kRayTaskError: return "ray_task_error";
    case Kind::kRayNodeDead: return "ray_node_dead";
    case Kind::kPodNode: return "pod_node";
    case Kind::kNodeNotReady: return "node_not_ready";
    case Kind::kPodKilling: return "pod_killing";
    case Kind::kJobFailed: return "job_failed";
    case Kind::kJobRestarting: return "job_restarting";
    case Kind::kFailedScheduling: return "failed_scheduling";
    case Kind::kRestartCount: return "restart_count";
    case Kind::kAgentSignalled: return "agent_signalled";
    case Kind::kGlooConnectionClosed: return "connection_closed";
    case Kind::kGlooReadError: return "read_error";
    case Kind::kGlooTimeout: return "timeout";
    case Kind::kGlooConnectFailed: return "connect_failed";
    case Kind::kGlooIoException: return "io_exception";
    case Kind::kIteration: return "iteration";
    case Kind::kStepTimers: return "step_timers";
    case Kind::kException: return "exception";
    case Kind::kFatalSignal: return "fatal_signal";
    case Kind::kProcessExit: return "process_exit";
    case Kind::kProcessSignalled: return "process_signalled";
    case Kind::kSaveStarted: return "save_started";
    case Kind::kSaveFinished: return "save_finished";
    case Kind::kFrDump:
      return "fr_dump";
    case Kind::kFrGroup:
      return "fr_group";
    case Kind::kFrCollective:
      return "fr_collective";
    case Kind::kRasReport:
      return "ras_report";
    case Kind::kRasComm:
      return "ras_comm";
    case Kind::kRasRank:
      return "ras_rank";
  }
  return "unknown_error";
}

bool JobOwnSlurmLine(const Event& e) {
  if (e.family != Family::kSlurm) return false;
  if (e.kind == Kind::kStepAborted || e.kind == Kind::kJobId) return true;
  const auto* n = std::get_if<SlurmNote>(&e.detail);
  return n != nullptr && (n->tasks != kNoStr || (e.kind == Kind::kRequeue && n->exit_code > 0));
}

namespace {

std::int64_t Leading(std::string_view s) {
  std::int64_t v = -1;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

std::vector<std::string> ExpandHostlist(std::string_view list) {
  std::vector<std::string> out;
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  while (!list.empty()) {
    std::size_t end = 0;
    for (int depth = 0; end < list.size() && (depth > 0 || list[end] != ','); ++end)
      depth += list[end] == '[' ? 1 : list[end] == ']' ? -1 : 0;
    const std::string_view item = list.substr(0, end);
    list.remove_prefix(std::min(list.size(), end + 1));
    const std::size_t open = item.find('['), close = item.find(']');
    if (open == std::string_view::npos) {
      out.push_back(lower(std::string(item)));
      continue;
    }
    if (close == std::string_view::npos || close < open) return {};
    std::string_view ranges = item.substr(open + 1, close - open - 1);
    while (!ranges.empty()) {
      const std::string_view range = ranges.substr(0, ranges.find(','));
      ranges.remove_prefix(std::min(ranges.size(), range.size() + 1));
      const std::string_view lo = range.substr(0, range.find('-'));
      const std::int64_t first = Leading(lo),
                         last = range.find('-') == std::string_view::npos
                                    ? first
                                    : Leading(range.substr(range.find('-') + 1));
      if (first < 0 || last < first || last - first > (1 << 20) || out.size() > (1U << 20))
        return {};
      for (std::int64_t n = first; n <= last; ++n) {
        std::string digits = std::to_string(n);
        if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
        out.push_back(lower(std::string(item.substr(0, open)) + digits +
                            std::string(item.substr(close + 1))));
      }
    }
  }
  return out;
}

}  // namespace denpex::engine
