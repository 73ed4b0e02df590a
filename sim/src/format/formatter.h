// Records -> log lines, in the shapes of one version profile (docs/log_formats.md). Applies
// each node's clock offset to every printed time. Knows nothing about files: it appends to
// a LineBuilder that the writer points at the right buffer.
#pragma once

#include <cstdint>
#include <string>

#include "model/driver.h"
#include "model/job.h"
#include "model/records.h"
#include "profiles.h"
#include "text.h"

namespace denpex::sim {

// "10.<a>.<b>.<c>": the node's address on its IB OOB interface, as NCCL's lines print it and its
// RAS reports name a node (formatter_nccl.cc).
void NodeAddress(LineBuilder& out, int node);
std::string NodeAddressText(int node);

// Where, within the lines one AgentFailureReport produced, the lines a truth cites are
// (0-based, counted from the first line of the report).
struct ReportLineOffsets {
  std::int64_t failed_line = 0;     // "... failed (exitcode: ...) local_rank: ..."
  std::int64_t root_rank_line = 0;  // "  rank      : <G> (local_rank: <lr>)" of the root cause
};

// ProcessGroupNCCL's line when the flight recorder has no trace buffer.
extern const std::string_view kTraceNotFound;

// NCCL's spelling of local GPU i's PCI bus id: "ab000" is 0000:ab:00.0.
// Where the cited lines of the driver's ActorDiedError block are (0-based, within it).
struct RayLineOffsets {
  std::int64_t error_line = 0;  // `ray.exceptions.ActorDiedError: ...`
  // `The actor is dead because ...` / `The actor died because its node has died. ...`; for a
  // RayTaskError, the worker's exception line in it.
  std::int64_t cause_line = 0;
};

std::string_view NcclBusId(int local_gpu);
// The first host's address as DeepSpeed resolves it (`hostname -I`): the runner's master address
// and MPI discovery's master_addr (formatter_pdsh.cc).
void DeepSpeedMasterIp(LineBuilder& out);

class LineFormatter {
 public:
  LineFormatter(const Job& job, const TorchProfile& torch, const NcclProfile& nccl,
                const SlurmProfile& slurm);
  const TorchProfile& torch() const { return torch_; }
  const NcclProfile& nccl() const { return nccl_; }

  // Worker output (a rank's file).
  void Format(const NcclVersionBanner& r, LineBuilder& out) const;
  void Format(const NcclProcessInfo& r, LineBuilder& out) const;  // formatter_nccl.cc
  void Format(const NcclCommInit& r, LineBuilder& out) const;
  void Format(const TrainerIteration& r, LineBuilder& out) const;
  void Format(const RankTimers& r, LineBuilder& out) const;
  void Format(const NcclIbError& r, LineBuilder& out) const;     // formatter_nccl.cc
  void Format(const NcclIbPortError& r, LineBuilder& out) const;         // formatter_nccl.cc
  void FormatSocketError(const NcclIbError& r, LineBuilder& out) const;  // NET/Socket
  void SocketErrorText(const NcclIbError& r, LineBuilder& out) const;
  void IbErrorText(const NcclIbError& r, LineBuilder& out) const;
  void Format(const NcclAsyncError& r, LineBuilder& out) const;  // formatter_nccl.cc
  void Format(const NcclSetupFailure& r, LineBuilder& out) const;  // formatter_nccl.cc
  void Format(const WatchdogTimeout& r, LineBuilder& out) const;
  void Format(const DumpSignalObserved& r, LineBuilder& out) const;  // formatter_watchdog.cc
  void Format(const WatchdogAftermath& r, LineBuilder& out) const;
  // formatter_app.cc; returns the 0-based line, within what it appended, that a truth cites.
  std::int64_t Format(const PythonException& r, LineBuilder& out) const;
  void Format(const DeepSpeedLine& r, LineBuilder& out) const;  // formatter_rank.cc
  void Format(const SegfaultDump& r, LineBuilder& out) const;
  // Realism (formatter_noise.cc): benign warnings and the node's kernel log.
  void Format(const BenignWarning& r, LineBuilder& out) const;
  void BarrierDeviceWarning(const BenignWarning& r, LineBuilder& out) const;
  void Format(const KernelMessage& r, LineBuilder& out) const;
  // GPU, memory and CUDA faults (formatter_gpu.cc). Returns the 0-based line, within what it
  // appended, of the error line a truth cites (`RuntimeError: CUDA error: ...`).
  std::int64_t Format(const CudaFailure& r, LineBuilder& out) const;
  void Format(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  // torchrun agent output (a node's torchrun.log).
  void Format(const AgentBanner& r, LineBuilder& out) const;
  void Format(const AgentSigterm& r, LineBuilder& out) const;
  void Format(const AgentSignalled& r, LineBuilder& out) const;
  // The c10d store's host lost (formatter_store.cc): a worker's and an agent's view.
  void Format(const StoreConnectionReset& r, LineBuilder& out) const;
  // Returns the 0-based line, within what it appended, of its exception line.
  std::int64_t Format(const StoreJoinTimeout& r, LineBuilder& out) const;
  void Format(const AgentStoreFailure& r, LineBuilder& out) const;
  // Returns the 0-based line, within what it appended, of its exception line (the truth cites it).
  std::int64_t Format(const AgentRendezvousFailure& r, LineBuilder& out) const;
  // Ray (formatter_ray.cc): driver.log, gcs_server.out.
  void Format(const RayWorkerTable& r, LineBuilder& out) const;
  RayLineOffsets Format(const RayActorDied& r, LineBuilder& out) const;
  std::int64_t TaskError(const RayActorDied& r, LineBuilder& out) const;  // formatter_ray.cc
  void Format(const RayNodeDead& r, LineBuilder& out) const;
  void Format(const RayletOomKill& r, LineBuilder& out) const;
  ReportLineOffsets Format(const AgentFailureReport& r, LineBuilder& out) const;
  // srun, slurmstepd and slurmctld (formatter_slurm.cc).
  void Format(const SrunTaskExits& r, LineBuilder& out) const;
  void Format(const SrunMessage& r, LineBuilder& out) const;
  void Format(const StepdCancelled& r, LineBuilder& out) const;
  void Format(const CtldLine& r, LineBuilder& out) const;
  void Format(const BatchBanner& r, LineBuilder& out) const;
  // Returns the line of the block that names the rank (or the lost daemon's node).
  std::int64_t Format(const MpirunNotice& r, LineBuilder& out) const;  // formatter_mpirun.cc
  // DeepSpeed's runner and launcher over pdsh (formatter_pdsh.cc); returns the 0-based line,
  // within what it appended, that a truth cites (the ERROR line, pdsh's exit line).
  std::int64_t Format(const PdshNotice& r, LineBuilder& out) const;
  void Format(const CheckpointSave& r, LineBuilder& out) const;  // formatter_rank.cc
  void Format(const CheckpointResumed& r, LineBuilder& out) const;
  void Format(const ResumedIteration& r, LineBuilder& out) const { Format(r.line, out); }

 private:
  TimeNs Local(int node, TimeNs t) const { return t + job_.clock_offset[node]; }
  void NodeList(int excluded, LineBuilder& out) const;  // Slurm's compressed hostlist
  void KernelPrefix(const KernelMessage& r, LineBuilder& out) const;
  void HungTask(const KernelMessage& r, LineBuilder& out) const;  // formatter_gpu.cc
  void FormatFaultKernel(const KernelMessage& r, std::uint64_t word, LineBuilder& out) const;
  void XidAttribution(LineBuilder& out, int pid) const;
  void DcgmDiagTests(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  void XidBody(const KernelMessage& r, std::uint64_t word, LineBuilder& out) const;
  int PidOfGpu(const KernelMessage& r) const;
  // `GPU-8-4-4-4-12` of the node's GPU (nvidia-smi index), as NVRM, nvidia-smi and DCGM print it.
  void GpuUuid(LineBuilder& out, int node, int gpu) const;
  // formatter_gpu_health.cc: `nvidia-smi -L`, `nvidia-smi -q`, DCGM after the table.
  void NvidiaSmiList(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  void NvidiaSmiQuery(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  void NvidiaSmiQueryGpu(const NvidiaSmiSnapshot& r, int gpu, LineBuilder& out) const;
  void DcgmHealth(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  void DcgmDiag(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  void DcgmMetrics(const NvidiaSmiSnapshot& r, LineBuilder& out) const;
  // The launch script's `CUDA_VISIBLE_DEVICES=...` line (realism.gpu_order).
  void VisibleDevices(int node, LineBuilder& out) const;
  void OomMessage(LineBuilder& out, int rank, int variant) const;
  void AssertLines(LineBuilder& out, int variant) const;
  void WriteC10Header(LineBuilder& out, int rank, TimeNs t, int source_line) const;
  void MegatronIteration(const TrainerIteration& r, LineBuilder& out) const;
  void DeepSpeedStep(const TrainerIteration& r, LineBuilder& out) const;
  void DeepSpeedPrefix(LineBuilder& out, int node, TimeNs t) const;
  void FrameworkSave(const CheckpointSave& r, LineBuilder& out) const;  // HF, accelerate, Lightning, NeMo
  void CommInit(const DeepSpeedLine& r, LineBuilder& out) const;  // formatter_rank.cc
  void FlightRecorderDump(LineBuilder& out, const WatchdogTimeout& r, TimeNs t) const;
  // Any c10 line: severity 'E'/'W'/'I', source file and line; `rank` < 0: no "[rank<G>]:".
  void WriteC10Line(LineBuilder& out, int rank, int node, TimeNs t, char severity,
                    std::string_view file, int source_line) const;
  void WritePgPrefix(LineBuilder& out, int rank, PgKind group) const;
  void WorkNccl(LineBuilder& out, const WatchdogTimeout& r) const;
  void NcclPrefix(LineBuilder& out, int rank) const;  // "<host>:<pid>:<pid> [<dev>] NCCL INFO "
  void NcclThreadHead(LineBuilder& out, int rank, int tid) const;  // "<host>:<pid>:<tid> [<dev>] "
  void InitTimings(const NcclCommInit& r, std::string_view call, int grank, int size,
                   LineBuilder& out) const;
  void TimeoutMessage(LineBuilder& out, const WatchdogTimeout& r) const;
  // formatter_watchdog.cc: what follows the timeout in the modes other than tear-down.
  void FormatReaction(const WatchdogTimeout& r, TimeNs t, LineBuilder& out) const;
  void SomeOperationsFailed(LineBuilder& out, const WatchdogTimeout& r, TimeNs t, bool take_down) const;
  void HeartbeatMonitorKill(LineBuilder& out, const WatchdogTimeout& r, TimeNs t) const;
  void MainThreadRaises(LineBuilder& out, const WatchdogTimeout& r) const;
  void DumpSignalText(LineBuilder& out, std::string_view from, std::int64_t enqueued,
                      std::int64_t completed) const;
  void ThreadTerminated(LineBuilder& out, const WatchdogTimeout& r) const;
  void NativeFrames(LineBuilder& out, int rank, bool rank_prefix) const;
  enum class Logger : std::uint8_t { kRun, kApi, kAgent };  // torch.distributed.run / ...api / agent.server.api
  void RendezvousInfo(int node, TimeNs t, LineBuilder& out) const;
  void AgentHeader(LineBuilder& out, char severity, int node, TimeNs t, Logger logger,
                   int line) const;
  void Traceback(LineBuilder& out) const;
  // One traceback frame (`  File "<file>", line N, in <function>` and its code line); a relative
  // file is under the torch profile's python_lib.
  void Frame(LineBuilder& out, const PythonFrame& f) const;
  void SlurmTime(LineBuilder& out, TimeNs local, bool millis) const;
  std::string FailureBlock(int index, const AgentFailure& f, int node, TimeNs poll_time) const;

  const Job& job_;
  const TorchProfile& torch_;
  const NcclProfile& nccl_;
  const SlurmProfile& slurm_;
};

}  // namespace denpex::sim
