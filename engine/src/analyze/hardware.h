// GPU evidence for the initiating rank: what the node's kernel log (with nvidia-smi and NCCL's
// busId lines for the topology) says about the rank's own GPU. An Xid burst on it makes the
// owner GPU hardware (or, for an application's MMU fault, links the Xid to the CUDA error).
// Recovery preconditions follow NVIDIA's Xid catalog (its
// XID Errors documentation; the codes read here: docs/log_formats.md §16). Host evidence about the rank's process (the OOM killer) is facts.h's
// HostCauseOf.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/clocks.h"
#include "analyze/facts.h"
#include "analyze/finding.h"
#include "analyze/gpu_health.h"
#include "incident/incident.h"

namespace denpex::engine {

// The rank's GPU as a normalised PCI id (`dddd:bb:dd`), from the topology evidence the job
// left: its own NCCL `busId` line first; else the node's CUDA_VISIBLE_DEVICES line (`health`),
// whose local-rank-th entry names the GPU by nvidia-smi index or `GPU-<uuid>` (matched against
// the nvidia-smi table, `-L` or `-q`); else the nvidia-smi table at index = local rank (CUDA's
// default order). Empty when none is there. `how` says which, as words for a blank.
std::string GpuOfRank(const Incident& inc, const JobFacts& facts, std::int32_t rank, Reason* how,
                      const NodeGpuHealth* health = nullptr);

// The rank on `node` whose GPU (GpuOfRank) is `pci`; -1 when no rank maps to it. The way back
// from an Xid's bus id to a global rank.
std::int32_t RankOfGpu(const Incident& inc, const JobFacts& facts, std::int32_t node, std::string_view pci,
                       const NodeGpuHealth* health = nullptr);

struct KernelCause {
  v1::FailureClass failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
  v1::Owner owner = v1::OWNER_UNSPECIFIED;
  std::int32_t initiating = -1;        // the Xid line that explains the failure; -1: health files only
  std::vector<std::int32_t> related;   // other lines of the same burst worth citing
  std::vector<LineCitation> lines;     // nvidia-smi -q / DCGM lines (no event stands for them)
  std::string gpu;                     // the GPU it names (`dddd:bb:dd`)
  Reason phrase;                       // a sentence for the diagnosis' reason
  std::vector<Action> recovery;        // before the generic restart

  bool application() const { return owner == v1::OWNER_APPLICATION; }
};

// What the kernel says about the GPU of `rank`, failing around `when` (aligned time; nullopt:
// the wave's start, facts.wave.start after ApplyOffsets; neither: the job's span).
// Xids long before the job (an old corrected ECC event) and secondary Xids (45 after a kill,
// 43, 63 alone, 154) never explain a failure on their own.
std::optional<KernelCause> FindKernelCause(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks,
                                           std::int32_t rank, std::optional<TimeNs> when);

// The catalog's words for an Xid code that can start an incident (`the GPU fell off the bus`)
// and whether it is the application's fault rather than the GPU's; nullopt for the secondary
// codes (45, 63, 92, 121, 154, ...), which never explain one. -1 is the multi-line "fallen off
// the bus" form that prints no code.
struct XidWords {
  std::string_view what;
  bool application;
};
std::optional<XidWords> DescribeXid(std::int32_t code);

// Failure class and owner of a rank's own error line (CUDA error, CUDA OOM, host allocation). A
// CUDA error whose runtime message names a hardware fault (`uncorrectable ECC error
// encountered`) is the GPU's, with or without the kernel's Xid.
bool ClassOfOwnError(const Incident& inc, const Event& e, v1::FailureClass* failure_class, v1::Owner* owner);

// True when the rank's own CUDA error `e` says what a GPU failing under it raises as readily as a
// faulty kernel (`unknown error`, `unspecified launch failure`: Xid 79 or 31 as much as the
// code's own fault) and the kernel cannot tell which (FindKernelCause found nothing): no kernel
// log of the rank's node was read (no kernel log file placed on it, no Xid line naming it), or
// one was, no topology maps the rank's GPU, and it shows a GPU fault during the job (several
// agents behind one host name, nvidia-smi tables of many nodes in one file). The class is then
// open, not the application's.
bool CudaErrorUndetermined(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks, std::int32_t rank,
                           const Event& e);

}  // namespace denpex::engine
