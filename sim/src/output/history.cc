// Scenario.history -> history.jsonl and the truth's recurrence (see history.h). The rules the
// truth applies are docs/history_format.md's: entries on the initiator's node count; those on
// its GPU count when the logs name the GPU; only hardware-owned entries escalate a hardware
// failure.
#include "history.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>

#include "format/formatter.h"
#include "model/gpu_faults.h"

namespace denpex::sim {

namespace fs = std::filesystem;

namespace {

constexpr TimeNs kDay = 24 * 3600 * kNsPerSec;

bool HardwareOwned(v1::Owner o) { return o == v1::OWNER_GPU_HARDWARE || o == v1::OWNER_HOST; }

// "0000:18:00": the normalised bus id of local GPU `gpu`, as the engine keys GPUs.
std::string GpuKey(int gpu) { return "0000:" + std::string(NcclBusId(gpu).substr(0, 2)) + ":00"; }

// Whether the incident's logs name the initiator's GPU (an Xid on it, or its health snapshot
// reporting the memory fault), so a diagnosis can key it.
bool LogsNameGpu(const Job& job, const FaultPlan& fault) {
  if (fault.traits->scope != FaultScope::kRank) return false;
  if (job.noise.kernel_logs && LastXid(fault) != 0) return true;
  const bool health = job.noise.nvidia_smi_query || job.noise.dcgm;
  return health && (fault.kind() == v1::FAULT_KIND_XID_ECC || fault.kind() == v1::FAULT_KIND_XID_FALLEN_OFF_BUS);
}

// Another GPU of the node than `gpu`: the index-th after it.
int OtherGpu(const Job& job, int gpu, int index) {
  const int n = job.gpus_per_node;
  return (gpu + 1 + index % (n - 1)) % n;
}

v1::HistoryEntry EntryOf(const v1::PriorIncident& p, int index, const Job& job, const FaultPlan& fault,
                         TimeNs fault_time) {
  const int node = fault.node < 0 ? 0 : fault.node;
  const int gpu = fault.traits->scope == FaultScope::kRank ? job.PhysicalGpu(fault.rank) : 0;
  v1::HistoryEntry e;
  e.set_time(FormatRfc3339(fault_time - static_cast<TimeNs>(p.days_before() * static_cast<double>(kDay))));
  switch (p.target()) {
    case v1::HISTORY_TARGET_OTHER_NODE:
      e.set_node(job.NodeName((node + 1 + index % (job.nodes - 1)) % job.nodes));
      e.set_gpu(GpuKey(gpu));
      break;
    case v1::HISTORY_TARGET_SAME_NODE:
      e.set_node(job.NodeName(node));
      e.set_gpu(GpuKey(OtherGpu(job, gpu, index)));
      break;
    default:
      e.set_node(job.NodeName(node));
      e.set_gpu(GpuKey(gpu));
      break;
  }
  e.set_failure_class(p.failure_class());
  e.set_owner(p.owner());
  e.set_incident("/fleet/incidents/" + std::to_string(job.job_id - 1000 * (index + 1)));
  e.set_action(p.action());
  return e;
}

// The escalated recovery: the repeat offender's preconditions first, replacing the reset,
// restart or reboot they supersede (docs/history_format.md).
void Escalate(const v1::Initiator& in, const std::string& gpu, bool gpu_repeat, bool node_repeat,
              int gpu_count, int node_count, v1::Recovery* recovery) {
  std::vector<v1::Precondition> first, kept;
  if (gpu_repeat) {
    v1::Precondition p;
    p.set_action("drain_and_rma");
    p.set_target(in.node() + " GPU " + gpu);
    p.set_text("GPU " + gpu + " of " + in.node() + " failed " + std::to_string(gpu_count) +
               " time(s) before: drain it and start the RMA flow instead of resetting it.");
    first.push_back(p);
  }
  if (node_repeat) {
    v1::Precondition p;
    p.set_action("drain_node");
    p.set_target(in.node());
    p.set_text(in.node() + " failed " + std::to_string(node_count) +
               " times before: drain it and run the field diagnostics before it takes work again.");
    first.push_back(p);
  }
  for (const auto& p : recovery->preconditions()) {
    const std::string& a = p.action();
    if (gpu_repeat && (a == "reset_gpu" || a == "restart_app" || a == "drain_and_rma")) continue;
    if (node_repeat && (a == "reboot_node" || a == "drain_node")) continue;
    kept.push_back(p);
  }
  recovery->clear_preconditions();
  for (auto& p : first) *recovery->add_preconditions() = std::move(p);
  for (auto& p : kept) *recovery->add_preconditions() = std::move(p);
}

}  // namespace

Status WriteHistory(const v1::Scenario& scenario, const Job& job, const FaultPlan& fault, TimeNs fault_time,
                    const fs::path& out_dir, v1::Truth* truth) {
  const fs::path path = out_dir / kHistoryFile;
  std::error_code ec;
  fs::remove(path, ec);  // a rerun without history leaves no stale store behind
  if (scenario.history_size() == 0) return Status::Ok();
  std::vector<v1::HistoryEntry> entries;
  for (int i = 0; i < scenario.history_size(); ++i) entries.push_back(EntryOf(scenario.history(i), i, job, fault, fault_time));
  std::ofstream out(path, std::ios::binary);
  if (!out) return Status::IoError(path.string() + ": cannot write the history store");
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  for (const auto& e : entries) {
    std::string line;
    if (!google::protobuf::util::MessageToJsonString(e, &line, opts).ok()) {
      return Status::Internal("history entry does not print as JSON");
    }
    out << line << "\n";
  }
  if (!out.flush()) return Status::IoError(path.string() + ": write failed");

  const v1::Initiator& in = truth->initiator();
  const std::string gpu = LogsNameGpu(job, fault) ? GpuKey(job.PhysicalGpu(fault.rank)) : "";
  std::vector<const v1::HistoryEntry*> earlier;
  for (const auto& e : entries) {
    if (!in.node().empty() && e.node() == in.node()) earlier.push_back(&e);
  }
  std::stable_sort(earlier.begin(), earlier.end(), [](const auto* a, const auto* b) { return a->time() < b->time(); });
  v1::Recurrence* r = truth->mutable_recurrence();
  r->set_history(kHistoryFile);
  int hardware_node = 0, hardware_gpu = 0;
  for (const v1::HistoryEntry* e : earlier) {
    const bool same_gpu = !gpu.empty() && e->gpu() == gpu;
    r->set_node_incidents(r->node_incidents() + 1);
    if (same_gpu) r->set_gpu_incidents(r->gpu_incidents() + 1);
    if (HardwareOwned(e->owner())) ++hardware_node, hardware_gpu += same_gpu ? 1 : 0;
    *r->add_earlier() = *e;
  }
  if (!HardwareOwned(truth->owner())) return Status::Ok();
  const bool gpu_repeat = truth->owner() == v1::OWNER_GPU_HARDWARE && hardware_gpu > 0;
  const bool node_repeat = hardware_node >= 2;
  if (!gpu_repeat && !node_repeat) return Status::Ok();
  r->set_escalated(true);
  Escalate(in, gpu, gpu_repeat, node_repeat, hardware_gpu, hardware_node, truth->mutable_recovery());
  return Status::Ok();
}

}  // namespace denpex::sim
