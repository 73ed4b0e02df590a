// The torchrun agents, one per node (docs/log_formats.md §6). Each prints its banner at
// start, then polls its workers every monitor_interval. The first poll that finds an exited
// worker stops the node: SIGTERM to every live worker (they exit silently 50-500 ms later,
// or at the SIGTERM grace if that is shorter), then, once all are gone, the "failed
// (exitcode: ...)" line, the traceback and the ChildFailedError table, and the agent exits.
//
// Polls are on a fixed grid (agent start + k * interval) and only the polls that can see
// something are simulated: a worker's exit schedules its agent's next grid poll.
#pragma once

#include <cstdint>
#include <vector>

#include "event_queue.h"
#include "job.h"
#include "records.h"
#include "rng.h"
#include "workers.h"

namespace denpex::sim {

class Launcher : public WorkerExitListener {
 public:
  // `rendezvous_node`: FAULT_KIND_RENDEZVOUS_TIMEOUT's node, which never joins (-1: none).
  Launcher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers,
           bool oom_group_kill = false, int rendezvous_node = -1);

  void ScheduleStarts();
  void OnAgentStart(int node, TimeNs t);
  void OnWorkerExit(int rank, TimeNs t) override;
  void OnNodeLost(int node, TimeNs t) override;
  void OnPoll(int node, TimeNs t);
  void OnReport(int node, TimeNs t);
  void OnAgentExit(int node, TimeNs t);
  // Kubernetes: the kubelet SIGTERMs the pod's torchrun, for an eviction or because the
  // controller deletes the pods of a failed job (kPodSignal).
  void OnNodeEvicted(int node, TimeNs t) override;
  void OnPodSignal(int node, TimeNs t);
  // FAULT_KIND_STORE_HOST_LOSS: every other agent's next monitor poll fails on the store; it
  // stops its workers and raises RendezvousConnectionError (OnReport prints it).
  void OnStoreLost(int node, TimeNs t) override;
  void OnStoreError(int node, TimeNs t);
  // FAULT_KIND_RENDEZVOUS_TIMEOUT: the agent's rendezvous gives up (its connect, or the join
  // timeout); it raises and exits, no worker having started.
  void OnRendezvousFailed(int node, TimeNs t);

  bool reported(int node) const { return reported_[node] != 0; }
  bool exited(int node) const { return phase_[node] == Phase::kExited; }
  bool lost(int node) const { return lost_[node] != 0; }
  TimeNs exit_time(int node) const { return exit_time_[node]; }
  // Kubernetes: how each pod ended, and when the controller saw the first pod fail (-1: none).
  enum class PodEnd : std::uint8_t { kRunning, kError, kOomKilled, kEvicted, kNodeLost, kDeleted };
  PodEnd pod_end(int node) const { return pod_end_[node]; }
  TimeNs pod_signal_time(int node) const { return signal_time_[node]; }
  TimeNs job_failed_time() const { return job_failed_; }
  int first_failed_pod() const { return first_failed_pod_; }

 private:
  enum class Phase : std::uint8_t { kMonitoring, kStopping, kExited };
  TimeNs NextPollAfter(int node, TimeNs t) const;
  void StopWorkers(int node, TimeNs t);          // SIGTERM to every live worker, then report
  void PodFailed(int node, TimeNs t, PodEnd how);  // Kubernetes: the controller reacts
  bool kubernetes() const { return job_.launcher == v1::LAUNCHER_KUBERNETES; }

  const Job& job_;
  EventQueue& queue_;
  RecordSink& sink_;
  Workers& workers_;
  std::vector<Phase> phase_;
  std::vector<std::uint8_t> poll_pending_;
  std::vector<std::uint8_t> reported_;
  std::vector<std::uint8_t> lost_;
  std::vector<TimeNs> exit_time_;
  std::vector<AgentFailureReport> report_;  // per node, filled by the poll that saw failures
  std::vector<Rng> rng_;                    // per node: teardown delays
  std::vector<std::uint8_t> signalled_;     // per node: torchrun itself got SIGTERM
  std::vector<std::uint8_t> store_failed_;  // per node: its rendezvous store connection failed
  std::vector<PodEnd> pod_end_;
  std::vector<TimeNs> signal_time_;
  TimeNs job_failed_ = -1;
  int first_failed_pod_ = -1;
  bool oom_group_kill_ = false;
  int rendezvous_node_ = -1;  // FAULT_KIND_POD_OOMKILLED: a "lost" node is an OOMKilled pod
};

}  // namespace denpex::sim
