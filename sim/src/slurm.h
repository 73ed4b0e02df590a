// The srun launcher and the Slurm scheduler around it (docs/log_formats.md §10-12). srun
// starts every rank as a task of one job step and forwards their output, labelled, into
// slurm-<jobid>.out. It reports task exits per node ("srun: error: <host>: tasks 8-15:
// Terminated"); with KillOnBadExit the first non-zero exit ends the step. The controller
// (slurmctld) allocates the job, ends it at its time limit, on scancel or preemption, and
// sets a silent node DOWN after SlurmdTimeout, killing the job with it. Each node's
// slurmstepd prints the "*** STEP ... CANCELLED AT ... ***" line when the step is cancelled.
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
  void OnReport(int node, TimeNs t);                   // kSrunReport
  void OnJobFault(TimeNs t);                           // kFault of a job-wide (scheduler) fault
  void OnControllerCheck(std::uint32_t id, TimeNs t);  // kSlurmNodeDown
  void OnStepKill(TimeNs t);                           // kStepKill: KillWait is over

  // "srun: error: <host>: task(s) ...: <status>" lines printed.
  int task_lines() const { return task_lines_; }
  TimeNs end_time() const { return end_time_; }

  static constexpr std::uint32_t kDownPhaseBit = 1u << 19;

 private:
  void CancelStep(TimeNs t, CancelReason reason, bool by_scheduler);
  void TaskGone(TimeNs t);

  const Job& job_;
  FaultPlan fault_;
  EventQueue& queue_;
  RecordSink& sink_;
  Workers& workers_;
  Rng rng_;
  std::vector<std::uint8_t> reported_;        // per rank: its exit was reported
  std::vector<std::uint8_t> report_pending_;  // per node
  int tasks_left_;
  int task_lines_ = 0;
  bool step_cancelled_ = false;
  bool cancelled_by_scheduler_ = false;
  TimeNs end_time_ = -1;
};

}  // namespace denpex::sim
