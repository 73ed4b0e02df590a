// DeepSpeed's launcher over pdsh (bare metal, docs/log_formats.md §26b): `deepspeed --hostfile`
// on the login host runs `pdsh -S -f 1024 -w <hosts> ... python -u -m deepspeed.launcher.launch
// --node_rank=%n ...`; each node's launch.py starts one process per GPU and polls them once a
// second. The first child that exits non-zero makes it kill every child of its node ("Killing
// subprocess <pid>", SIGTERM, SIGKILL after 30 s), log "[ERROR] ... exits with return code = <rc>"
// and exit with that code; ssh returns it and pdsh prints "pdsh@login-01: <host>: ssh exited with
// exit code <n>". Nothing tells the other nodes: their ranks wait in their collectives until
// their own NCCL timeouts end them, and their launchers report the same way. A node that dies
// under its ssh session is noticed only when ssh's ServerAlive probes run out ("Timeout, server
// <host> not responding.", exit 255). pdsh waits for every node.
#pragma once

#include <cstdint>
#include <vector>

#include "event_queue.h"
#include "job.h"
#include "records.h"
#include "rng.h"
#include "workers.h"

namespace denpex::sim {

class PdshLauncher : public WorkerExitListener {
 public:
  // `silent_node`: FAULT_KIND_STORE_JOIN_TIMEOUT's node, whose ssh session hangs before its
  // launcher runs: it prints nothing and never returns (-1: none).
  PdshLauncher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers, int silent_node = -1);

  void Start();  // the runner's command line; each node's launch.py spawning its ranks
  // `deepspeed --launcher openmpi|slurm` (Job::deepspeed_runner): only the runner's lines, just
  // before mpirun or srun starts the ranks.
  void StartRunnerOnly();
  void OnWorkerExit(int rank, TimeNs t) override;
  void OnNodeLost(int node, TimeNs t) override;
  void OnPoll(int node, TimeNs t);        // launch.py finds a child exited non-zero
  void OnDone(int node, TimeNs t);        // its children are gone: ERROR line, exit, pdsh's line
  void OnSshTimeout(int node, TimeNs t);  // ssh gives up on a dead node

  TimeNs end_time() const { return end_time_; }
  // Its launch.py printed "[ERROR] ... exits with return code" (a failure report, like a
  // torchrun agent's): a secondary error on every node but the fault's (truth.cc).
  bool reported(int node) const { return phase_[node] == Phase::kExited; }

 private:
  enum class Phase : std::uint8_t { kRunning, kKilling, kExited, kLost };
  void KillNext(int node, TimeNs t);  // sigkill_handler's loop over the node's children
  void NodeEnded(TimeNs t);

  const Job& job_;
  EventQueue& queue_;
  RecordSink& sink_;
  Workers& workers_;
  std::vector<Phase> phase_;
  std::vector<std::uint8_t> poll_pending_;
  std::vector<int> next_kill_;    // per node: the local rank sigkill_handler kills next
  std::vector<int> return_code_;  // per node: the child's return code launch.py reports
  std::vector<Rng> rng_;          // per node
  int silent_node_;
  int nodes_left_;
  TimeNs end_time_ = -1;
};

// ssh's exit status for launch.py's sys.exit(rc): a negative return code (a signal) wraps to
// 256 + rc, as the shell sees it.
int SshExitStatus(int return_code);

}  // namespace denpex::sim
