// The srun launcher and the Slurm scheduler around it (docs/log_formats.md §10-12). srun
// starts every rank as a task of one job step and forwards their output, labelled, into
// slurm-<jobid>.out. It reports task exits per node ("srun: error: <host>: tasks 8-15:
// Terminated"); with KillOnBadExit the first non-zero exit ends the step. The controller
// (slurmctld) allocates the job, ends it at its time limit, on scancel or preemption, and
// sets a silent node DOWN after SlurmdTimeout, killing the job with it. Each node's
// slurmstepd prints the "*** STEP ... CANCELLED AT ... ***" line when the step is cancelled.
// A node whose slurmd stops answering while the host runs on (FAULT_KIND_SLURMD_UNRESPONSIVE)
// is set DOWN the same way, though its ranks were training; its slurmd answers again later
// ("Node <host> now responding"). With sbatch --requeue (slurm.requeue) a node failure
// requeues the job instead: "requeue JobId=J due to failure of node <host>", and the next run
// (SLURM_RESTART_COUNT=1) starts on a new allocation, appends to the same slurm-<jobid>.out,
// loads the latest checkpoint and is still training when the logs are collected.
#pragma once

#include <cstdint>
#include <vector>

#include "event_queue.h"
#include "faults.h"
#include "job.h"
#include "records.h"
#include "rng.h"
#include "workers.h"

namespace denpex::sim {

class SlurmLauncher : public WorkerExitListener {
 public:
  SlurmLauncher(const Job& job, const FaultPlan& fault, EventQueue& queue, RecordSink& sink,
                Workers& workers);

  void ScheduleStarts();
  void OnWorkerExit(int rank, TimeNs t) override;
  void OnNodeLost(int node, TimeNs t) override;
  void OnSlurmdSilent(int node, TimeNs t);             // kFault of FAULT_KIND_SLURMD_UNRESPONSIVE
  void OnReport(int node, TimeNs t);                   // kSrunReport
  void OnJobFault(TimeNs t);                           // kFault of a job-wide (scheduler) fault
  void OnControllerCheck(std::uint32_t id, TimeNs t);  // kSlurmNodeDown
  void OnStepKill(TimeNs t);                           // kStepKill: KillWait is over

  // "srun: error: <host>: task(s) ...: <status>" lines printed.
  int task_lines() const { return task_lines_; }
  // The task line that reported `rank`'s exit (0-based, in print order); -1: none.
  int task_line(int rank) const { return task_line_[static_cast<std::size_t>(rank)]; }
  TimeNs end_time() const { return end_time_; }

  // kSlurmNodeDown's phase, above the node id: not responding (no bit), DOWN, responding
  // again, and (both bits) the requeued run's start.
  static constexpr std::uint32_t kDownPhaseBit = 1u << 19;
  static constexpr std::uint32_t kRespondPhaseBit = 1u << 18;
  static constexpr std::uint32_t kPhaseBits = kDownPhaseBit | kRespondPhaseBit;

 private:
  void CancelStep(TimeNs t, CancelReason reason, bool by_scheduler);
  void TaskGone(TimeNs t);
  void ScheduleControllerChecks(int node, TimeNs t);
  void NodeDown(int node, TimeNs t);
  void StartRequeuedRun(TimeNs t);

  const Job& job_;
  FaultPlan fault_;
  EventQueue& queue_;
  RecordSink& sink_;
  Workers& workers_;
  Rng rng_;
  std::vector<int> task_line_;                // per rank: the task line that reported its exit, -1
  std::vector<std::uint8_t> report_pending_;  // per node
  int tasks_left_;
  int task_lines_ = 0;
  bool step_cancelled_ = false;
  bool cancelled_by_scheduler_ = false;
  int silent_node_ = -1;   // its slurmd stopped answering; the host and its ranks run on
  int failed_node_ = -1;   // the node whose failure ended (or requeued) the job
  bool requeued_ = false;
  TimeNs end_time_ = -1;
};

}  // namespace denpex::sim
