// Where each record's lines go (the incident writer's routing table): which stream of which
// process prints them, whether srun's interleaving may split them, and what happens to the file
// after them. One RouteOf per record type; IncidentWriter::Write follows it, and its Cite
// overloads say which of the lines a truth cites (writer.cc).
#pragma once

#include <cstdint>

#include "model/records.h"

namespace denpex::sim {

enum class Stream : std::uint8_t {
  kOut,          // the rank's stdout, written at once (C stdio flushing each line: NCCL)
  kOutBuffered,  // the rank's Python stdout, block-buffered (IncidentWriter::kStdoutBufferBytes)
  kErr,          // the rank's stderr, unbuffered
  kAgent,        // the node's torchrun agent log (its pod's log under Kubernetes)
  kKernel,       // the node's kern.log
  kSmi,          // the node's nvidia-smi.log
  kConsole,     // the job's console: slurm-<jobid>.out, mpirun.out, deepspeed.log, Ray's driver.log
  kController,  // slurmctld.log; Ray's gcs_server.out
};

// After the lines are appended: keep them buffered, hand the file to the writer threads once its
// buffer is full, or hand it over now (kOutBuffered: push Python's stdout buffer to the file).
enum class Then : std::uint8_t { kKeep, kFlushIfFull, kFlush };

struct Route {
  Stream stream;
  bool may_split = false;  // never cited: srun's interleaving may split its lines
  Then then = Then::kFlushIfFull;
};

// NCCL writes through C stdio and flushes each line: it reaches the file at once, ahead of
// anything still waiting in Python's own stdout buffer.
constexpr Route RouteOf(const NcclVersionBanner&) { return {Stream::kOut, true}; }
constexpr Route RouteOf(const NcclProcessInfo&) { return {Stream::kOut, true}; }
constexpr Route RouteOf(const NcclCommInit&) { return {Stream::kOut, true}; }
constexpr Route RouteOf(const NcclIbError&) { return {Stream::kOut}; }      // NCCL WARN
constexpr Route RouteOf(const NcclIbPortError&) { return {Stream::kOut}; }  // NCCL WARN
// The set-up WARN on stdout; the traceback the rank raises after it on stderr.
constexpr Route RouteOf(const NcclSetupFailure& r) {
  return {r.traceback ? Stream::kErr : Stream::kOut};
}
// The step lines go through Python's stdout buffer.
constexpr Route RouteOf(const TrainerIteration&) {
  return {Stream::kOutBuffered, false, Then::kKeep};
}
// DeepSpeed's logger lines too; its comm start-up lines come from a rank the runner started with
// `python -u` (unbuffered): they reach the console at once, tagged as stdout.
constexpr Route RouteOf(const DeepSpeedLine& r) {
  if (r.note == DeepSpeedNote::kCommInit) return {Stream::kOut, true};
  return {Stream::kOutBuffered, false, Then::kKeep};
}
// A save's lines are flushed at once, with what the rank's stdout held before them.
constexpr Route RouteOf(const CheckpointSave&) {
  return {Stream::kOutBuffered, false, Then::kFlush};
}
constexpr Route RouteOf(const CheckpointResumed&) { return {Stream::kOut}; }
constexpr Route RouteOf(const ResumedIteration&) { return {Stream::kOut}; }
// stderr lines (c10, Python tracebacks, faulthandler, the logger's timers) are unbuffered.
// A cited watchdog block is never split (IncidentWriter::Write).
constexpr Route RouteOf(const WatchdogTimeout&) { return {Stream::kErr, true}; }
constexpr Route RouteOf(const WatchdogAftermath&) { return {Stream::kErr, true}; }
// Not an error of its own: the rank's timeout follows.
constexpr Route RouteOf(const DumpSignalObserved&) { return {Stream::kErr, true}; }
constexpr Route RouteOf(const RankTimers&) { return {Stream::kErr}; }
constexpr Route RouteOf(const NcclAsyncError&) { return {Stream::kErr}; }
constexpr Route RouteOf(const PythonException&) { return {Stream::kErr}; }
constexpr Route RouteOf(const SegfaultDump&) { return {Stream::kErr}; }
constexpr Route RouteOf(const BenignWarning&) { return {Stream::kErr, true}; }
constexpr Route RouteOf(const CudaFailure&) { return {Stream::kErr}; }
constexpr Route RouteOf(const StoreConnectionReset&) { return {Stream::kErr, true}; }
constexpr Route RouteOf(const StoreJoinTimeout&) { return {Stream::kErr}; }
// The node's files: the kernel log, the nvidia-smi snapshot (complete when taken), the agent's.
constexpr Route RouteOf(const KernelMessage&) { return {Stream::kKernel, false, Then::kKeep}; }
constexpr Route RouteOf(const NvidiaSmiSnapshot&) { return {Stream::kSmi, false, Then::kFlush}; }
constexpr Route RouteOf(const AgentBanner&) { return {Stream::kAgent, false, Then::kKeep}; }
constexpr Route RouteOf(const AgentSigterm&) { return {Stream::kAgent, false, Then::kKeep}; }
constexpr Route RouteOf(const AgentFailureReport&) { return {Stream::kAgent}; }
constexpr Route RouteOf(const AgentSignalled&) { return {Stream::kAgent}; }
constexpr Route RouteOf(const AgentStoreFailure&) { return {Stream::kAgent}; }
// The agent that never joined the rendezvous exits with it.
constexpr Route RouteOf(const AgentRendezvousFailure&) {
  return {Stream::kAgent, false, Then::kFlush};
}
// Ray: driver.log and gcs_server.out.
constexpr Route RouteOf(const RayWorkerTable&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const RayActorDied&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const RayletOomKill&) { return {Stream::kConsole, false, Then::kKeep}; }
constexpr Route RouteOf(const RayNodeDead&) { return {Stream::kController, false, Then::kKeep}; }
// Slurm: srun's and slurmstepd's lines in slurm-<jobid>.out (a requeued run's banner too), the
// controller's in slurmctld.log.
constexpr Route RouteOf(const SrunTaskExits&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const SrunMessage&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const StepdCancelled&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const BatchBanner&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const CtldLine&) { return {Stream::kController, false, Then::kKeep}; }
// mpirun's own messages (mpirun.out, unlabelled); DeepSpeed's runner, launchers and pdsh
// (deepspeed.log).
constexpr Route RouteOf(const MpirunNotice&) { return {Stream::kConsole}; }
constexpr Route RouteOf(const PdshNotice&) { return {Stream::kConsole}; }
// Not lines: a file of its own (IncidentWriter::Write(const FlightRecorderDump&)).
constexpr Route RouteOf(const FlightRecorderDump&) { return {Stream::kErr}; }
// Not lines either: the poller's file (IncidentWriter::Write(const NcclRasReport&)).
constexpr Route RouteOf(const NcclRasReport&) { return {Stream::kErr}; }

// The rank whose process printed the record; -1: none (an agent, a node, the scheduler).
template <typename R>
int RankOf(const R& r) {
  if constexpr (requires { r.rank; }) {
    return r.rank;
  } else if constexpr (requires { r.timeout.rank; }) {
    return r.timeout.rank;
  } else if constexpr (requires { r.line.rank; }) {
    return r.line.rank;
  } else {
    return -1;
  }
}

// The node whose file the record goes to (agent, kernel and nvidia-smi records).
template <typename R>
int NodeOf(const R& r) {
  if constexpr (requires { r.node; }) {
    return r.node;
  } else {
    return -1;
  }
}

}  // namespace denpex::sim
