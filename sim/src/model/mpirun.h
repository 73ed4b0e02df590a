// Open MPI's mpirun as the launcher (bare metal, docs/log_formats.md §26): it starts every
// rank itself (one process per GPU, MPI rank = global rank) through an orted daemon per node,
// forwards their output tagged "[1,R]<stdout>:" into mpirun.out, and aborts the whole job at
// the first rank that exits non-zero or by a signal: it prints its "Primary job terminated
// normally, but 1 process returned a non-zero exit code" block and the first failure
// ("mpirun detected ... Process name: [[J,1],R] / Exit code: N", or "mpirun noticed that
// process rank R ... exited on signal N (Name)."), then SIGTERMs (and later SIGKILLs) every
// other rank, which prints nothing more. A lost node is noticed when its orted's connection
// times out (TCP keepalive, minutes): "ORTE has lost communication with a remote daemon.".
// With --report-bindings each node's daemon first prints one line per rank it starts, which
// ties ranks to hosts (the tags do not). Open MPI 5 (PRRTE) words the blocks its own way
// (formatter_mpirun.cc); the behaviour is the same.
#pragma once

#include <cstdint>

#include "event_queue.h"
#include "job.h"
#include "records.h"
#include "rng.h"
#include "workers.h"

namespace denpex::sim {

class MpirunLauncher : public WorkerExitListener {
 public:
  MpirunLauncher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers);

  void Start();  // --report-bindings: each node's daemon names the ranks it starts
  void OnWorkerExit(int rank, TimeNs t) override;
  void OnNodeLost(int node, TimeNs t) override;
  void OnDaemonLost(int node, TimeNs t);  // the HNP's connection to the node's orted timed out
  void OnKill(TimeNs t);                  // the abort's SIGTERM grace is over: SIGKILL the rest

  TimeNs end_time() const { return end_time_; }

 private:
  void Abort(TimeNs t);

  const Job& job_;
  EventQueue& queue_;
  RecordSink& sink_;
  Workers& workers_;
  Rng rng_;
  bool aborting_ = false;
  int ranks_left_;
  TimeNs end_time_ = -1;
};

}  // namespace denpex::sim
