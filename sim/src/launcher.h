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
  Launcher(const Job& job, EventQueue& queue, RecordSink& sink, Workers& workers);

  void ScheduleStarts();
  void OnAgentStart(int node, TimeNs t);
  void OnWorkerExit(int rank, TimeNs t) override;
  void OnNodeLost(int node, TimeNs t) override;
  void OnPoll(int node, TimeNs t);
  void OnReport(int node, TimeNs t);
  void OnAgentExit(int node, TimeNs t);

  bool reported(int node) const { return reported_[node] != 0; }
  bool exited(int node) const { return phase_[node] == Phase::kExited; }
  bool lost(int node) const { return lost_[node] != 0; }
  TimeNs exit_time(int node) const { return exit_time_[node]; }

 private:
  enum class Phase : std::uint8_t { kMonitoring, kStopping, kExited };
  TimeNs NextPollAfter(int node, TimeNs t) const;

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
};

}  // namespace denpex::sim
