#include "analyze/hardware.h"

#include <algorithm>
#include <set>

#include "analyze/describe.h"
#include "analyze/scoring.h"

namespace denpex::engine {
namespace {

constexpr TimeNs kMinute = 60 * kNsPerSec;
// An Xid explains a failure when it was logged shortly before it (a hung rank's stall time is
// an estimate, and the CUDA error surfaces at the next synchronisation) or just after it.
constexpr TimeNs kXidBefore = 20 * kMinute, kXidAfter = 2 * kMinute;

// What an Xid code says, for the codes that can start an incident (the catalog's initiating
// codes, and 43 as the application's). Secondary codes (45, 63, 92, 121, 154) are not here:
// they never explain one.
struct XidMeaning {
  std::int32_t code;
  v1::FailureClass failure_class;
  bool application;  // an application's fault (the catalog's RESTART_APP, application owner)
  int priority;      // the most telling code of a burst wins
  std::string_view what;
};

constexpr XidMeaning kXids[] = {
    {79, v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS, false, 100, "the GPU fell off the bus"},
    {-1, v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS, false, 99, "the GPU fell off the bus"},
    {48, v1::FAILURE_CLASS_GPU_ECC, false, 90, "an uncorrectable double-bit ECC error"},
    {95, v1::FAILURE_CLASS_GPU_ECC, false, 88, "an uncontained memory error"},
    {64, v1::FAILURE_CLASS_GPU_ECC, false, 87, "a row-remapping failure"},
    {94, v1::FAILURE_CLASS_GPU_ECC, false, 86, "a contained memory error"},
    {140, v1::FAILURE_CLASS_GPU_ECC, false, 85, "an unrecoverable ECC error escape"},
    {171, v1::FAILURE_CLASS_GPU_ECC, false, 84, "an uncorrectable DRAM error"},
    {74, v1::FAILURE_CLASS_GPU_NVLINK, false, 80, "a fatal NVLink error"},
    {136, v1::FAILURE_CLASS_GPU_NVLINK, false, 79, "an NVLink training failure"},
    {149, v1::FAILURE_CLASS_GPU_NVLINK, false, 78, "an NVLink network error"},
    {120, v1::FAILURE_CLASS_GPU_OTHER, false, 70, "a GSP firmware error"},
    {119, v1::FAILURE_CLASS_GPU_OTHER, false, 69, "GSP RPC timeouts"},
    {62, v1::FAILURE_CLASS_GPU_OTHER, false, 68, "a micro-controller halt"},
    {46, v1::FAILURE_CLASS_GPU_OTHER, false, 67, "a GPU timeout"},
    {109, v1::FAILURE_CLASS_GPU_OTHER, false, 66, "a context-switch timeout"},
    {158, v1::FAILURE_CLASS_GPU_OTHER, false, 65, "a fatal GPU timeout"},
    {8, v1::FAILURE_CLASS_GPU_OTHER, false, 64, "the GPU stopped processing"},
    {32, v1::FAILURE_CLASS_GPU_OTHER, false, 63, "a corrupted push buffer (PCIe)"},
    {38, v1::FAILURE_CLASS_GPU_OTHER, false, 62, "a driver firmware error"},
    {31, v1::FAILURE_CLASS_CUDA_ERROR, true, 50, "a GPU memory page fault (MMU fault)"},
    {13, v1::FAILURE_CLASS_CUDA_ERROR, true, 49, "a graphics engine exception"},
    {137, v1::FAILURE_CLASS_CUDA_ERROR, true, 48, "an illegal NVLink peer access"},
    // Alone, a channel reset says the application's kernel faulted and the GPU is fine; after 13
    // or 31 it is their follow-up (they rank higher).
    {43, v1::FAILURE_CLASS_CUDA_ERROR, true, 40, "a channel reset after an application fault (the GPU is fine)"},
};

const XidMeaning* MeaningOf(std::int32_t code) {
  for (const XidMeaning& m : kXids) {
    if (m.code == code) return &m;
  }
  return nullptr;
}

// When an Xid must have been logged to explain the failure (aligned times, inclusive).
struct Window {
  TimeNs lo = 0;
  TimeNs hi = 0;
  bool whole_job = false;  // the failure itself has no time: the job's span bounds it
  bool Holds(TimeNs t) const { return t >= lo && t <= hi; }
};

Window Around(TimeNs when) { return {when - kXidBefore, when + kXidAfter, false}; }

// The job's span when the failure has no time of its own (srun with torch <= 2.1: untimed c10
// lines and tracebacks, srun's untimed task exit): from slurmctld's `Allocate` to its
// `_job_complete` (or the scheduler's cancellation), else from the earliest to the latest
// stamped line outside the kernel logs. nullopt when nothing of the job carries a time.
std::optional<Window> JobWindow(const Incident& inc, const ClockOffsets& clocks) {
  std::optional<TimeNs> start, end, first, last;
  for (const Event& e : inc.events) {
    if (e.clock == Clock::kNone || e.file >= inc.files.size() || inc.files[e.file].kernel) continue;
    const TimeNs t = clocks.Aligned(e);
    if (e.kind == Kind::kJobAllocated && (!start || t < *start)) start = t;
    if ((e.kind == Kind::kJobComplete || e.kind == Kind::kCancelled) && (!end || t > *end)) end = t;
    if (!first || t < *first) first = t;
    if (!last || t > *last) last = t;
  }
  if (!start) start = first;
  if (!end) end = last;
  if (!start || *end <= *start) return std::nullopt;
  return Window{*start - kSkewWindow, *end + kXidAfter, true};
}

// The latest Xid 154's recovery action (`... to 0x2 (Node Reboot Required)`), if any.
std::string RecoveryActionOf(const Incident& inc, const std::vector<std::int32_t>& burst) {
  std::string out;
  for (std::int32_t i : burst) {
    const auto& x = std::get<Xid>(inc.events[i].detail);
    if (x.code != 154) continue;
    const std::string_view text = inc.str(x.text);
    const std::size_t to = text.rfind(" to 0x");
    const std::size_t open = text.find('(', to == std::string_view::npos ? 0 : to);
    const std::size_t close = text.find(')', open == std::string_view::npos ? 0 : open);
    if (to != std::string_view::npos && open != std::string_view::npos && close != std::string_view::npos) {
      out = std::string(text.substr(open + 1, close - open - 1));
    }
  }
  return out;
}

bool HasCode(const Incident& inc, const std::vector<std::int32_t>& burst, std::int32_t code) {
  return std::any_of(burst.begin(), burst.end(), [&](std::int32_t i) { return std::get<Xid>(inc.events[i].detail).code == code; });
}

// A field diagnostic failed on the GPU (dcgmi diag -r 2/3: GPU Memory, PCIe/NVLink, Diagnostic,
// the stress tests): a reset does not clear a failed hardware test. Drain it and start the RMA
// flow.
// `also`: more for the parentheses that cite the test (the Xid, the driver's word), or nothing.
Action DiagAction(const Incident& inc, const GpuHealth& g, const std::string& node,
                  const std::string& target, const Reason& also) {
  std::vector<ReasonArg> args = {{"gpu", g.pci},
                                 {"node", node},
                                 {"test", g.diag_failed},
                                 {"where", HealthWhere(inc, g.diag_line)}};
  if (also.parts.empty())
    return {"drain_and_rma", target, Say(ReasonId::kDiagFailedTest, std::move(args))};
  args.push_back({"also", also});
  return {"drain_and_rma", target, Say(ReasonId::kDiagFailedTestAlso, std::move(args))};
}

// The catalog's first action for the winning code (§1.3 "Immediate", §2.4), or the driver's own
// recovery action when an Xid 154 states one.
Action GpuAction(const Incident& inc, const std::vector<std::int32_t>& burst, const XidMeaning& m,
                 const std::string& node, const std::string& gpu, const Reason& cited,
                 const GpuHealth* health) {
  const std::string target = node + " GPU " + gpu;
  const std::string driver = RecoveryActionOf(inc, burst);
  Reason said;
  if (!driver.empty()) said.Add(ReasonId::kDriverRecoveryAction, {{"action", driver}});
  std::vector<ReasonArg> args = {{"gpu", gpu},
                                 {"node", node},
                                 {"cited", cited},
                                 {"said", said},
                                 {"what", std::string(m.what)}};
  if (health != nullptr && health->remap_failed) {
    args.push_back({"health", HealthWhere(inc, health->memory_line)});
    return {"drain_and_rma", target, Say(ReasonId::kRowRemapFailedHealth, std::move(args))};
  }
  if (health != nullptr && !health->diag_failed.empty()) {
    Reason also = cited;
    also.Add(said);
    return DiagAction(inc, *health, node, target, also);
  }
  if (HasCode(inc, burst, 64))
    return {"drain_and_rma", target, Say(ReasonId::kRowRemapFailedXid64, std::move(args))};
  switch (m.failure_class) {
    case v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS:
      return {"reboot_node", node, Say(ReasonId::kGpuFellOffBus, std::move(args))};
    case v1::FAILURE_CLASS_GPU_ECC:
      if (m.code == 94 || (!HasCode(inc, burst, 95) && HasCode(inc, burst, 94) && m.code != 48)) {
        return {"restart_app", target, Say(ReasonId::kContainedMemoryError, std::move(args))};
      }
      return {"reset_gpu", target, Say(ReasonId::kResetGpuAfterEcc, std::move(args))};
    case v1::FAILURE_CLASS_GPU_NVLINK:
      return {"reset_gpu", target, Say(ReasonId::kResetGpuAfterNvlink, std::move(args))};
    default:
      return {"reset_gpu", target, Say(ReasonId::kResetGpuAfter, std::move(args))};
  }
}

Action Canary(const std::string& node) {
  return {"run_canary", node, Say(ReasonId::kRunCanary, {{"node", node}})};
}

// What nvidia-smi -q / DCGM say about the GPU's memory, as a sentence and cited lines.
void AddHealthPhrase(const Incident& inc, const GpuHealth& g, KernelCause* c) {
  if (!g.diag_failed.empty()) {  // the field diagnostic corroborates the verdict
    c->phrase.Add(ReasonId::kDiagFailedOnGpu,
                  {{"test", g.diag_failed}, {"where", HealthWhere(inc, g.diag_line)}});
    c->lines.push_back({static_cast<std::uint32_t>(g.diag_line.file), g.diag_line.span, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  if (!g.MemoryFault() && !g.remap_pending && !g.retire_pending) return;
  Reason& s = c->phrase;
  s.Add(ReasonId::kHealthSnapshotShows, {{"where", HealthWhere(inc, g.memory_line)}});
  if (g.volatile_uncorrectable > 0)
    s.Add(ReasonId::kVolatileUncorrectable, {{"count", std::to_string(g.volatile_uncorrectable)}});
  if (g.remap_failed) s.Add(ReasonId::kFailedRowRemap);
  if (g.remap_pending) s.Add(ReasonId::kRowRemapPending);
  if (g.retire_pending) s.Add(ReasonId::kPageRetirementPending);
  if (g.last_xid > 0) s.Add(ReasonId::kDcgmLastXid, {{"xid", std::to_string(g.last_xid)}});
  if (!g.dcgm.empty()) s.Add(ReasonId::kCitedInParentheses, {{"where", g.dcgm}});
  s.Add(ReasonId::kPeriod);
  const bool same = g.memory_line.file == g.diag_line.file && g.memory_line.span.line == g.diag_line.span.line;
  if (g.memory_line.file >= 0 && !same) {
    c->lines.push_back({static_cast<std::uint32_t>(g.memory_line.file), g.memory_line.span, v1::EVIDENCE_ROLE_CORROBORATING});
  }
}

// With no Xid line (no kernel log collected), nvidia-smi -q / DCGM still tell a GPU memory
// fault on the rank's GPU: volatile uncorrectable errors, a failed remap, a retired DBE page.
// A corrected count alone (aggregate correctable, a remapped correctable row) never does.
std::optional<KernelCause> HealthCause(const Incident& inc, const JobFacts& facts,
                                       std::int32_t rank, const std::string& gpu, const Reason& how,
                                       const NodeGpuHealth& health) {
  const GpuHealth* g = gpu.empty() ? nullptr : health.ByPci(gpu);
  if (gpu.empty()) {  // no topology: the node's only GPU with a memory fault
    for (const GpuHealth& h : health.gpus) {
      if (!h.MemoryFault()) continue;
      if (g != nullptr) return std::nullopt;
      g = &h;
    }
  }
  if (g == nullptr || !g->MemoryFault()) return std::nullopt;
  const RankFacts& r = facts.ranks[rank];
  const std::string name = NodeName(inc, r.node);
  KernelCause c;
  c.failure_class = v1::FAILURE_CLASS_GPU_ECC;
  c.owner = v1::OWNER_GPU_HARDWARE;
  c.gpu = g->pci;
  const Reason mapped = how.parts.empty()
                            ? Say(ReasonId::kOnlyGpuWithMemoryFault)
                            : Say(ReasonId::kLocalRanksGpuBy,
                                  {{"local_rank", std::to_string(r.local_rank)}, {"how", how}});
  c.phrase =
      Say(ReasonId::kMemoryErrorWithoutXid, {{"gpu", g->pci}, {"node", name}, {"mapped", mapped}});
  AddHealthPhrase(inc, *g, &c);
  const std::string cited = HealthWhere(inc, g->memory_line);
  const std::string target = name + " GPU " + g->pci;
  if (!g->diag_failed.empty()) {
    c.recovery.push_back(DiagAction(inc, *g, name, target, Reason()));
  } else if (g->remap_failed) {
    c.recovery.push_back(
        {"drain_and_rma", target,
         Say(ReasonId::kRowRemapFailed, {{"gpu", g->pci}, {"node", name}, {"cited", cited}})});
  } else {
    c.recovery.push_back({"reset_gpu", target,
                          Say(ReasonId::kResetGpuAfterMemoryError,
                              {{"gpu", g->pci}, {"node", name}, {"cited", cited}})});
  }
  c.recovery.push_back(Canary(name));
  return c;
}

// The burst on the rank's GPU (or, with no topology evidence, on the one GPU of the node that
// shows an initiating Xid), and its most telling line.
std::optional<KernelCause> XidCause(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks, std::int32_t rank,
                                    const Window& window, const NodeGpuHealth& health) {
  const std::int32_t node = facts.ranks[rank].node;
  Reason how;
  const std::string gpu = GpuOfRank(inc, facts, rank, &how, &health);
  std::vector<std::int32_t> burst;
  std::int32_t best = -1;
  const XidMeaning* best_m = nullptr;
  std::string best_pci;
  std::set<std::string_view> candidates;  // with no topology: the GPUs with an initiating Xid
  for (const std::int32_t i : inc.OfKinds({Kind::kXid, Kind::kFallenOffBus})) {
    const Event& e = inc.events[i];
    if (e.node != node || e.clock == Clock::kNone) continue;
    if (!window.Holds(clocks.Aligned(e))) continue;
    const auto& x = std::get<Xid>(e.detail);
    const std::string_view pci = inc.str(x.pci);
    if (!gpu.empty() && pci != gpu) continue;
    const XidMeaning* m = MeaningOf(e.kind == Kind::kFallenOffBus ? -1 : x.code);
    if (m == nullptr) continue;
    // Over a whole job only the rank's own mapped GPU links an Xid to it: with no topology, a
    // fatal Xid on some GPU of the node hours apart from an untimed CUDA error says nothing.
    if (window.whole_job && gpu.empty()) continue;
    // A node whose files are several machines' (hosts under one name): an Xid on one of its GPUs
    // is not tied to the rank by the node alone.
    if (health.several_machines && gpu.empty()) continue;
    if (gpu.empty()) candidates.emplace(pci);
    if (best_m == nullptr || m->priority > best_m->priority) best = i, best_m = m, best_pci = std::string(pci);
  }
  // With no topology, only the one GPU of the node with an initiating Xid is the rank's: a node
  // whose kernel shows several (a node shared with other jobs, another process's MMU fault beside
  // a GPU lost at the same moment) does not say which, if any, was.
  if (candidates.size() > 1) best = -1;
  if (best < 0) return HealthCause(inc, facts, rank, gpu, how, health);
  for (const std::int32_t i : inc.OfKinds({Kind::kXid, Kind::kFallenOffBus})) {
    const Event& e = inc.events[i];
    if (e.node != node || e.clock == Clock::kNone) continue;
    if (inc.str(std::get<Xid>(e.detail).pci) == best_pci && window.Holds(clocks.Aligned(e))) burst.push_back(i);
  }
  const Event& e = inc.events[best];
  const RankFacts& r = facts.ranks[rank];
  const std::string name = NodeName(inc, node);
  const Reason code = e.kind == Kind::kFallenOffBus
                          ? Say(ReasonId::kFallenOffBus)
                          : Say(ReasonId::kXidCode, {{"code", std::to_string(best_m->code)}});
  const Reason mapped = how.parts.empty()
                            ? Say(ReasonId::kOnlyGpuWithXid, {{"node", name}})
                            : Say(ReasonId::kLocalRanksGpuBy,
                                  {{"local_rank", std::to_string(r.local_rank)}, {"how", how}});
  const GpuHealth* g = health.ByPci(best_pci);
  KernelCause c;
  c.failure_class = best_m->failure_class;
  c.owner = best_m->application ? v1::OWNER_APPLICATION : v1::OWNER_GPU_HARDWARE;
  c.initiating = best;
  c.gpu = best_pci;
  for (std::int32_t i : burst) {
    if (i != best && c.related.size() < 2) c.related.push_back(i);
  }
  c.phrase = Say(ReasonId::kKernelLogShowsXid, {{"node", name},
                                                {"code", code},
                                                {"what", std::string(best_m->what)},
                                                {"gpu", best_pci},
                                                {"mapped", mapped},
                                                {"time", ClockTime(clocks.Aligned(e))}});
  if (burst.size() > 1)
    c.phrase.Add(ReasonId::kXidBurst, {{"count", std::to_string(burst.size())}});
  if (window.whole_job) {
    c.phrase.Add(ReasonId::kDuringTheJob, {{"from", ClockTime(window.lo + kSkewWindow)},
                                           {"to", ClockTime(window.hi - kXidAfter)}});
  }
  c.phrase.Add(best_m->application ? ReasonId::kApplicationFaultByDriver
                                   : ReasonId::kGpuFailedUnderRank);
  if (g != nullptr && !best_m->application) AddHealthPhrase(inc, *g, &c);
  if (!best_m->application) {
    c.recovery.push_back(
        GpuAction(inc, burst, *best_m, name, best_pci,
                  Say(ReasonId::kCodeAt, {{"code", code}, {"where", Where(inc, e)}}), g));
    c.recovery.push_back(Canary(name));
  }
  return c;
}

// The GPU CUDA_VISIBLE_DEVICES gives local rank `local`: its entry, by nvidia-smi index or UUID.
std::string VisibleGpu(const Incident& inc, const NodeGpuHealth& health, std::int32_t node,
                       std::int32_t local, Reason* how) {
  if (local < 0 || local >= static_cast<std::int32_t>(health.visible.size())) return {};
  const std::string& entry = health.visible[static_cast<std::size_t>(local)];
  // "CUDA_VISIBLE_DEVICES (<line>) lists <entry> as its device <local>", and what maps the entry.
  const auto listed = [&](ReasonId id, std::vector<ReasonArg> mapping) {
    mapping.insert(mapping.begin(), {{"where", HealthWhere(inc, health.visible_line)},
                                     {"entry", entry},
                                     {"local", std::to_string(local)}});
    return Say(id, std::move(mapping));
  };
  if (entry.starts_with("GPU-")) {
    const GpuHealth* g = health.ByUuid(entry);
    if (g == nullptr || g->pci.empty()) return {};
    *how = listed(ReasonId::kVisibleDeviceAt, {{"pci", g->pci}});
    return g->pci;
  }
  std::int32_t index = -1;
  for (char c : entry) {
    if (c < '0' || c > '9') return {};
    index = std::max(0, index) * 10 + (c - '0');
  }
  for (const std::int32_t i : inc.OfKinds({Kind::kGpuSlot})) {
    const Event& e = inc.events[i];
    if (e.node != node) continue;
    const auto& s = std::get<GpuSlot>(e.detail);
    if (s.index == index) {
      *how = listed(ReasonId::kVisibleDeviceIndexCited,
                    {{"index", std::to_string(index)}, {"slot", Where(inc, e)}});
      return std::string(inc.str(s.pci));
    }
  }
  const GpuHealth* g = health.ByIndex(index);
  if (g == nullptr || g->pci.empty()) return {};
  *how = listed(ReasonId::kVisibleDeviceIndex, {{"index", std::to_string(index)}});
  return g->pci;
}

// nvidia-smi cannot reach a GPU that fell off the bus: it prints `Unable to determine the
// device handle for GPU<pci>: Unknown Error` and its table skips that GPU's index. When the
// node's table lists every index from 0 but `local`, and exactly one GPU is unreachable, that
// GPU is local rank `local`'s (CUDA's default order).
std::string UnreachableGpuAt(const Incident& inc, std::int32_t node, std::int32_t local,
                             Reason* how) {
  std::vector<bool> listed;
  const Event* unreachable = nullptr;
  for (const std::int32_t i : inc.OfKinds({Kind::kGpuSlot, Kind::kGpuUnreachable})) {
    const Event& e = inc.events[i];
    if (e.node != node) continue;
    const auto& s = std::get<GpuSlot>(e.detail);
    if (e.kind == Kind::kGpuUnreachable) {
      if (unreachable != nullptr && inc.str(std::get<GpuSlot>(unreachable->detail).pci) != inc.str(s.pci)) return {};
      unreachable = &e;
    } else if (s.index < 4096) {
      if (listed.size() <= static_cast<std::size_t>(s.index)) listed.resize(static_cast<std::size_t>(s.index) + 1, false);
      listed[static_cast<std::size_t>(s.index)] = true;
    }
  }
  if (unreachable == nullptr || listed.empty()) return {};
  const std::size_t missing = static_cast<std::size_t>(std::count(listed.begin(), listed.end(), false));
  const bool gap = static_cast<std::size_t>(local) < listed.size() ? missing == 1 && !listed[static_cast<std::size_t>(local)]
                                                                    : missing == 0 && static_cast<std::size_t>(local) == listed.size();
  if (!gap) return {};
  *how = Say(ReasonId::kSmiTableSkipsIndex,
             {{"index", std::to_string(local)}, {"where", Where(inc, *unreachable)}});
  return std::string(inc.str(std::get<GpuSlot>(unreachable->detail).pci));
}

}  // namespace

namespace {

// The GPU of the rank's local rank: CUDA_VISIBLE_DEVICES, nvidia-smi's index, the one GPU its
// table cannot reach.
std::string GpuOfLocalRank(const Incident& inc, const RankFacts& r, Reason* how,
                           const NodeGpuHealth* health) {
  if (r.node < 0 || r.local_rank < 0) return {};
  if (health != nullptr && health->several_machines) return {};  // whose table, whose list?
  // CUDA_VISIBLE_DEVICES reorders the GPUs: when it is there but does not map the local rank (a
  // UUID no table names, a list cut short by a hard wrap), the default order says nothing.
  if (health != nullptr && !health->visible.empty()) return VisibleGpu(inc, *health, r.node, r.local_rank, how);
  // The default order holds where nothing reorders it: a relayed stream of the node, not read for
  // one, may hold the CUDA_VISIBLE_DEVICES list that does.
  if (health != nullptr && health->streams_unread) return {};
  for (const std::int32_t i : inc.OfKinds({Kind::kGpuSlot})) {
    const Event& e = inc.events[i];
    if (e.node != r.node) continue;
    const auto& s = std::get<GpuSlot>(e.detail);
    if (s.index == r.local_rank) {
      *how =
          Say(ReasonId::kSmiIndex, {{"index", std::to_string(s.index)}, {"where", Where(inc, e)}});
      return std::string(inc.str(s.pci));
    }
  }
  return UnreachableGpuAt(inc, r.node, r.local_rank, how);
}

// The driver names the process an Xid hit (`pid=<P>, name=python3`): the rank's own pid ties that
// GPU to it, so on a shared node another GPU's Xid is not taken for its (analyze/scope.h).
std::string GpuOfPid(const Incident& inc, const RankFacts& r, Reason* how) {
  if (r.node < 0 || r.pid <= 0) return {};
  for (const std::int32_t i : inc.OfKinds({Kind::kXid})) {
    const Event& e = inc.events[i];
    if (e.node != r.node) continue;
    const auto& x = std::get<Xid>(e.detail);
    if (x.pid != r.pid || x.pci == kNoStr) continue;
    *how = Say(ReasonId::kPidInXidLine, {{"where", Where(inc, e)}});
    return std::string(inc.str(x.pci));
  }
  return {};
}

}  // namespace

std::string GpuOfRank(const Incident& inc, const JobFacts& facts, std::int32_t rank, Reason* how,
                      const NodeGpuHealth* health) {
  const RankFacts& r = facts.ranks[rank];
  for (const std::int32_t i : inc.OfKinds({Kind::kCommInit})) {
    const Event& e = inc.events[i];
    if (e.rank != rank) continue;
    const auto& c = std::get<CommInit>(e.detail);
    if (c.pci != kNoStr) {
      *how = Say(ReasonId::kNcclBusIdLine, {{"where", Where(inc, e)}});
      return std::string(inc.str(c.pci));
    }
  }
  std::string gpu = GpuOfLocalRank(inc, r, how, health);
  return gpu.empty() ? GpuOfPid(inc, r, how) : gpu;
}

std::int32_t RankOfGpu(const Incident& inc, const JobFacts& facts, std::int32_t node, std::string_view pci, const NodeGpuHealth* health) {
  for (std::int32_t rank = 0; rank < static_cast<std::int32_t>(facts.ranks.size()); ++rank) {
    if (facts.ranks[rank].node != node) continue;
    Reason how;
    if (GpuOfRank(inc, facts, rank, &how, health) == pci) return rank;
  }
  return -1;
}

std::optional<XidWords> DescribeXid(std::int32_t code) {
  const XidMeaning* m = MeaningOf(code);
  if (m == nullptr) return std::nullopt;
  return XidWords{m->what, m->application};
}

std::optional<KernelCause> FindKernelCause(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks,
                                           std::int32_t rank, std::optional<TimeNs> when) {
  if (rank < 0 || rank >= static_cast<std::int32_t>(facts.ranks.size()) || facts.ranks[rank].node < 0) return std::nullopt;
  if (!when) when = facts.wave.start;  // aligned; nullopt when the wave carries no time
  const std::optional<Window> window = when ? std::optional<Window>(Around(*when)) : JobWindow(inc, clocks);
  const NodeGpuHealth health = ReadNodeGpuHealth(inc, facts.ranks[rank].node);
  if (window) return XidCause(inc, facts, clocks, rank, *window, health);
  Reason how;  // nothing is timed: only the health snapshot, which needs no time, can tell
  const std::string gpu = GpuOfRank(inc, facts, rank, &how, &health);
  return gpu.empty() ? std::nullopt : HealthCause(inc, facts, rank, gpu, how, health);
}

namespace {

// CUDA runtime messages that name a fault of the GPU itself, not of the code (cudaGetErrorString:
// cudaErrorECCUncorrectable, cudaErrorNvlinkUncorrectable).
struct CudaHardwareMessage {
  std::string_view text;
  v1::FailureClass failure_class;
};
constexpr CudaHardwareMessage kCudaHardwareMessages[] = {
    {"uncorrectable ECC error encountered", v1::FAILURE_CLASS_GPU_ECC},
    {"an uncorrectable NVLink error was detected", v1::FAILURE_CLASS_GPU_NVLINK},
};

// The hardware class a CUDA error's own message names; UNSPECIFIED when it names none.
v1::FailureClass HardwareClassOfCudaError(const Incident& inc, const Event& e) {
  const auto* pe = std::get_if<PythonError>(&e.detail);
  if (pe == nullptr) return v1::FAILURE_CLASS_UNSPECIFIED;
  const std::string_view message = inc.str(pe->message);
  for (const CudaHardwareMessage& m : kCudaHardwareMessages) {
    if (message.find(m.text) != std::string_view::npos) return m.failure_class;
  }
  return v1::FAILURE_CLASS_UNSPECIFIED;
}

// CUDA runtime messages that a GPU lost under the rank (fallen off the bus, a fatal MMU or
// engine fault) raises as readily as a faulty kernel (cudaErrorUnknown, cudaErrorLaunchFailure).
constexpr std::string_view kCudaAmbiguousMessages[] = {"unknown error", "unspecified launch failure"};

// Whether a kernel log of `node` was read, and whether it shows a GPU fault (an initiating Xid
// the catalog puts on the hardware) within `window` (the job's span; any time without one).
struct NodeKernel {
  bool read = false;
  bool gpu_fault = false;
};

NodeKernel NodeKernelOf(const Incident& inc, const ClockOffsets& clocks, std::int32_t node, const std::optional<Window>& window) {
  NodeKernel k;
  for (const LogFile& f : inc.files) k.read |= f.kernel && f.node == node;
  for (const std::int32_t i : inc.OfKinds({Kind::kXid, Kind::kFallenOffBus})) {
    const Event& e = inc.events[i];
    if (e.node != node) continue;
    k.read = true;
    const XidMeaning* m = MeaningOf(e.kind == Kind::kFallenOffBus ? -1 : std::get<Xid>(e.detail).code);
    const bool during = e.clock != Clock::kNone && (!window || window->Holds(clocks.Aligned(e)));
    k.gpu_fault |= m != nullptr && !m->application && during;
  }
  return k;
}

}  // namespace

bool CudaErrorUndetermined(const Incident& inc, const JobFacts& facts, const ClockOffsets& clocks, std::int32_t rank,
                           const Event& e) {
  const auto* pe = std::get_if<PythonError>(&e.detail);
  if (e.family != Family::kCuda || pe == nullptr || rank < 0 || rank >= static_cast<std::int32_t>(facts.ranks.size())) return false;
  const std::string_view message = inc.str(pe->message);
  const bool ambiguous = std::any_of(std::begin(kCudaAmbiguousMessages), std::end(kCudaAmbiguousMessages),
                                     [&](std::string_view m) { return message.find(m) != std::string_view::npos; });
  if (!ambiguous) return false;
  // A rank on no known node (its lines merged into one file with every other node's): no kernel
  // log is tied to it, so none can clear its GPU.
  const std::int32_t node = facts.ranks[rank].node;
  if (node < 0) return true;
  const NodeKernel k = NodeKernelOf(inc, clocks, node, JobWindow(inc, clocks));
  if (!k.read) return true;
  if (!k.gpu_fault) return false;
  Reason how;
  const NodeGpuHealth health = ReadNodeGpuHealth(inc, node);
  return GpuOfRank(inc, facts, rank, &how, &health).empty();  // mapped: the fault was another GPU's
}

bool ClassOfOwnError(const Incident& inc, const Event& e, v1::FailureClass* failure_class, v1::Owner* owner) {
  if (e.kind == Kind::kCheckpointLoad) {  // DeepSpeed, FSDP or plain torch: the checkpoint's shape
    *failure_class = v1::FAILURE_CLASS_CHECKPOINT_LOAD;
    *owner = v1::OWNER_APPLICATION;
    return true;
  }
  switch (e.family) {
    case Family::kCuda:
      if (const v1::FailureClass hw = HardwareClassOfCudaError(inc, e); hw != v1::FAILURE_CLASS_UNSPECIFIED) {
        *failure_class = hw;
        *owner = v1::OWNER_GPU_HARDWARE;
        return true;
      }
      *failure_class = v1::FAILURE_CLASS_CUDA_ERROR;
      *owner = v1::OWNER_APPLICATION;
      return true;
    case Family::kCudaOom:
      *failure_class = v1::FAILURE_CLASS_CUDA_OOM;
      *owner = v1::OWNER_APPLICATION;
      return true;
    case Family::kHostOom:
      *failure_class = v1::FAILURE_CLASS_HOST_OOM;
      *owner = v1::OWNER_HOST;
      return true;
    default:
      return false;
  }
}

}  // namespace denpex::engine
