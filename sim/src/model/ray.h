// The Ray launcher (LAUNCHER_RAY, docs/log_formats.md §25): Ray Train's TorchTrainer runs one
// RayTrainWorker actor per GPU; the driver waits on their training futures. When a worker
// process dies, the driver's ray.get raises ActorDiedError 20-300 ms later (a rank's watchdog
// abort during a hang is such a death: the driver names a victim); when a worker's training
// function raises, the driver's ray.get raises RayTaskError(<Exc>) with the worker's
// traceback (modelled at the worker's teardown, 0.3-1.5 s after its own traceback); when a node dies,
// the GCS marks it dead once it has missed its health checks (15-45 s) and the actors on it die
// with it. The driver then prints the trial's error and shuts the worker group down (the other
// workers are killed 5 s later, when the shutdown's patience runs out, silently).
#pragma once

#include <cstdint>

#include "event_queue.h"
#include "faults.h"
#include "job.h"
#include "records.h"
#include "rng.h"
#include "workers.h"

namespace denpex::sim {

class RayLauncher : public WorkerExitListener {
 public:
  RayLauncher(const Job& job, const FaultPlan& fault, EventQueue& queue, RecordSink& sink, Workers& workers);

  void ScheduleStarts();
  void OnWorkerExit(int rank, TimeNs t) override;
  void OnNodeLost(int node, TimeNs t) override;
  void OnDriver(std::uint32_t id, TimeNs t);  // kRayDriver
  void OnNodeDead(int node, TimeNs t);        // kRayNodeDead
  TimeNs end_time() const { return end_time_; }

 private:
  void Detect(TimeNs t, int rank, RayDeath cause);

  const Job& job_;
  FaultPlan fault_;
  EventQueue& queue_;
  RecordSink& sink_;
  Workers& workers_;
  Rng rng_;
  int first_rank_ = -1;
  bool detected_ = false;
  TimeNs end_time_ = -1;
};

}  // namespace denpex::sim
