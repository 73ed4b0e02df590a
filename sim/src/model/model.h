// The discrete-event model of one job: owns the event queue, the workers and the torchrun
// agents, and runs events in (time, sequence) order until no process is alive (or a safety
// horizon passes). It only emits typed records to a RecordSink; it never formats text.
#pragma once

#include <cstdint>
#include <functional>

#include "event_queue.h"
#include "faults.h"
#include "job.h"
#include "launcher.h"
#include "mpirun.h"
#include "pdsh.h"
#include "ray.h"
#include "records.h"
#include "slurm.h"
#include "workers.h"

namespace denpex::sim {

struct Outcome {
  std::uint64_t events = 0;
  TimeNs end_time = 0;           // the last process (worker or agent) exited
  bool reached_horizon = false;  // stopped with processes still alive
};

// Where a run stands, as Run reports it every kProgressEvery events to a watcher (a progress
// line) that changes nothing in the model.
struct ModelPoint {
  TimeNs now = 0;            // the simulated time reached
  std::uint64_t events = 0;  // events run so far
  int step = 0;              // rank 0's current step
  TimeNs fault_time = -1;    // when the fault fired; -1 before
};
using ModelProgress = std::function<void(const ModelPoint&)>;
inline constexpr std::uint64_t kProgressEvery = std::uint64_t{1} << 16;

class Model {
 public:
  Model(const Job& job, const FaultPlan& fault, RecordSink& sink);
  Outcome Run(const ModelProgress& progress = {});

  const Workers& workers() const { return workers_; }
  const Launcher& launcher() const { return launcher_; }
  const SlurmLauncher& slurm() const { return slurm_; }
  const PdshLauncher& pdsh() const { return pdsh_; }

 private:
  void Dispatch(const Event& e);
  TimeNs Horizon() const;

  const Job& job_;
  FaultPlan fault_;
  EventQueue queue_;
  Workers workers_;
  Launcher launcher_;    // torchrun agents (LAUNCHER_TORCHRUN)
  SlurmLauncher slurm_;  // srun and Slurm (LAUNCHER_SRUN)
  MpirunLauncher mpirun_;  // Open MPI's mpirun (LAUNCHER_MPIRUN)
  PdshLauncher pdsh_;      // DeepSpeed's launcher over pdsh (LAUNCHER_PDSH)
  RayLauncher ray_;      // Ray Train's driver and GCS (LAUNCHER_RAY)
};

}  // namespace denpex::sim
