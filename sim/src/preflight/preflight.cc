// Preflight scenarios: textproto in (parsed strictly by scenario/'s ParseTextProtoStrict, errors
// at source:line:column), defaults filled and checked; the cluster's collected
// tool outputs and its truth out.
#include "denpex/sim/preflight.h"

#include <google/protobuf/text_format.h>

#include <fstream>
#include <optional>
#include <set>
#include <system_error>

#include "cluster.h"
#include "denpex/proto/json_io.h"
#include "scenario/scenario_internal.h"

namespace denpex::sim {
namespace {

namespace pb = google::protobuf;
namespace fs = std::filesystem;

// Where a field was written: `faults[2].node` -> source:line:column (the deepest part the text
// wrote; source:1:1 when none).
class Where {
 public:
  Where(std::string source, const pb::TextFormat::ParseInfoTree* tree)
      : source_(std::move(source)), tree_(tree) {}
  std::string At(std::string_view field, int index = -1, std::string_view sub = {}) const {
    int line = 0, column = 0;
    const pb::Descriptor* d = v1::PreflightScenario::descriptor();
    if (const pb::FieldDescriptor* f = d->FindFieldByName(std::string(field))) {
      const auto loc = tree_->GetLocation(f, f->is_repeated() ? std::max(index, 0) : -1);
      if (loc.line >= 0) line = loc.line, column = loc.column;
      if (!sub.empty() && f->message_type() != nullptr && loc.line >= 0) {
        const pb::TextFormat::ParseInfoTree* nested =
            tree_->GetTreeForNested(f, std::max(index, 0));
        const pb::FieldDescriptor* sf = f->message_type()->FindFieldByName(std::string(sub));
        if (nested != nullptr && sf != nullptr) {
          const auto sl = nested->GetLocation(sf, -1);
          if (sl.line >= 0) line = sl.line, column = sl.column;
        }
      }
    }
    return source_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1);
  }
  Status Error(const std::string& at, const std::string& what, const std::string& hint) const {
    return Status::InvalidInput(at + ": " + what + "; hint: " + hint);
  }

 private:
  std::string source_;
  const pb::TextFormat::ParseInfoTree* tree_;
};

std::string Str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status FillAndValidate(v1::PreflightScenario* s, const Where& w) {
  if (s->host_prefix().empty()) s->set_host_prefix("gpu-");
  if (s->gpus_per_node() == 0) s->set_gpus_per_node(8);
  if (s->gpu_model().empty()) s->set_gpu_model("NVIDIA H100 80GB HBM3");
  if (s->driver().empty()) s->set_driver("550.54.15");
  if (s->cuda().empty()) s->set_cuda("12.4");
  if (s->nvlinks_per_pair() == 0) s->set_nvlinks_per_pair(18);
  if (s->ib_ports() == 0) s->set_ib_ports(8);
  if (s->ib_rate_gbps() == 0) s->set_ib_rate_gbps(400);
  if (s->node_busbw_gbps() == 0) s->set_node_busbw_gbps(480);
  if (s->pair_busbw_gbps() == 0) s->set_pair_busbw_gbps(370);
  if (s->busbw_jitter() == 0) s->set_busbw_jitter(0.02);
  if (s->plan() == v1::PREFLIGHT_PLAN_UNSPECIFIED) s->set_plan(v1::PREFLIGHT_PLAN_NODES_AND_RING);

  if (s->nodes() < 3 || s->nodes() > 4096) {
    return w.Error(w.At("nodes"),
                   "nodes is " + std::to_string(s->nodes()) + "; it must be 3 to 4096",
                   "preflight judges a node against what most nodes show: give at least 3");
  }
  if (s->gpus_per_node() < 1 || s->gpus_per_node() > 16) {
    return w.Error(
        w.At("gpus_per_node"),
        "gpus_per_node is " + std::to_string(s->gpus_per_node()) + "; it must be 1 to 16",
        "8 on an HGX board");
  }
  if (s->nvlinks_per_pair() < 0 || s->nvlinks_per_pair() > 32) {
    return w.Error(
        w.At("nvlinks_per_pair"),
        "nvlinks_per_pair is " + std::to_string(s->nvlinks_per_pair()) + "; it must be 1 to 32",
        "18 on H100 SXM, 12 on A100 SXM");
  }
  if (s->ib_ports() < 1 || s->ib_ports() > 16) {
    return w.Error(w.At("ib_ports"),
                   "ib_ports is " + std::to_string(s->ib_ports()) + "; it must be 1 to 16",
                   "one compute port per GPU is usual: 8");
  }
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"ib_rate_gbps", s->ib_rate_gbps()},
        {"node_busbw_gbps", s->node_busbw_gbps()},
        {"pair_busbw_gbps", s->pair_busbw_gbps()}}) {
    if (!(value > 0) || value > 1e5) {
      return w.Error(w.At(name), std::string(name) + " is " + Str(value) + "; it must be above 0",
                     "leave it out for the default");
    }
  }
  if (!(s->busbw_jitter() > 0) || s->busbw_jitter() > 0.04) {
    return w.Error(
        w.At("busbw_jitter"),
        "busbw_jitter is " + Str(s->busbw_jitter()) + "; it must be above 0 and at most 0.04",
        "a healthy run's relative standard deviation; past 0.04 a healthy run 4 sd slow would come "
        "near "
        "preflight's 0.8 floor");
  }
  std::set<int> hit;  // nodes named by a fault (SLOW_LINK: both ends)
  for (int i = 0; i < s->faults_size(); ++i) {
    v1::PreflightFault* f = s->mutable_faults(i);
    const std::string where = w.At("faults", i);
    const std::string fault = "faults[" + std::to_string(i) + "]";
    if (f->kind() == v1::PREFLIGHT_FAULT_KIND_UNSPECIFIED) {
      return w.Error(where, fault + " has no kind",
                     "set kind: PREFLIGHT_FAULT_PCIE_DOWNTRAINED, ..., or PREFLIGHT_FAULT_HEALTHY");
    }
    const bool fractional =
        f->kind() == v1::PREFLIGHT_FAULT_SLOW_NODE || f->kind() == v1::PREFLIGHT_FAULT_SLOW_LINK;
    if (fractional && f->fraction() == 0) f->set_fraction(0.5);
    if (fractional && !(f->fraction() > 0 && f->fraction() < 1)) {
      return w.Error(
          w.At("faults", i, "fraction"),
          fault + ".fraction is " + Str(f->fraction()) + "; it must be between 0 and 1, exclusive",
          "the bandwidth left: 0.5 is half");
    }
    if (!fractional && f->fraction() != 0) {
      return w.Error(w.At("faults", i, "fraction"),
                     fault + ".fraction is set on a " + v1::PreflightFaultKind_Name(f->kind()),
                     "only SLOW_NODE and SLOW_LINK take a fraction; remove it");
    }
    if (f->node() < 0 || f->node() > s->nodes()) {
      return w.Error(w.At("faults", i, "node"),
                     fault + ".node is " + std::to_string(f->node()) + "; it must be 1 to " +
                         std::to_string(s->nodes()),
                     "nodes count from 1; 0 or none lets the seed choose");
    }
    if (f->kind() == v1::PREFLIGHT_FAULT_SLOW_LINK &&
        s->plan() != v1::PREFLIGHT_PLAN_NODES_AND_RING) {
      return w.Error(w.At("faults", i, "kind"),
                     fault + " is a SLOW_LINK, which only a multi-node run shows",
                     "set plan: PREFLIGHT_PLAN_NODES_AND_RING (or leave plan out)");
    }
    if ((f->kind() == v1::PREFLIGHT_FAULT_GPU_LOST ||
         f->kind() == v1::PREFLIGHT_FAULT_NVLINK_DOWN) &&
        s->gpus_per_node() < 2) {
      return w.Error(w.At("faults", i, "kind"), fault + " needs at least 2 GPUs per node",
                     "raise gpus_per_node");
    }
    if (f->kind() == v1::PREFLIGHT_FAULT_NVLINK_DOWN && s->nvlinks_per_pair() < 2) {
      return w.Error(w.At("faults", i, "kind"),
                     fault + " halves a pair's NVLinks, which needs nvlinks_per_pair of 2 or more",
                     "raise nvlinks_per_pair");
    }
    if (f->node() == 0 || f->kind() == v1::PREFLIGHT_FAULT_HEALTHY) continue;
    std::vector<int> nodes = {f->node()};
    if (f->kind() == v1::PREFLIGHT_FAULT_SLOW_LINK) nodes.push_back(f->node() % s->nodes() + 1);
    for (const int n : nodes) {
      if (!hit.insert(n).second) {
        return w.Error(
            w.At("faults", i, "node"),
            fault + " hits node " + std::to_string(n) + ", which another fault already hits",
            "at most one fault per node (a SLOW_LINK holds both its ends); name another node, or 0 "
            "to let the seed choose");
      }
    }
  }
  // With the ring plan, another fault's node next to a slow link makes the link's end slow in
  // both its runs, which no report can tell from a slow node: keep a placed SLOW_LINK's
  // neighbours free of placed faults (the seed keeps them free of the faults it places).
  for (int i = 0; i < s->faults_size(); ++i) {
    const v1::PreflightFault& f = s->faults(i);
    if (f.kind() != v1::PREFLIGHT_FAULT_SLOW_LINK || f.node() == 0) continue;
    const int n = s->nodes();
    for (const int beside : {(f.node() + n - 2) % n + 1, (f.node() + 1) % n + 1}) {
      if (hit.count(beside) == 0 || beside == f.node() || beside == f.node() % n + 1) continue;
      return w.Error(w.At("faults", i, "node"),
                     "faults[" + std::to_string(i) + "]'s slow link " + std::to_string(f.node()) +
                         "->" + std::to_string(f.node() % n + 1) +
                         " has a faulty neighbour, node " + std::to_string(beside),
                     "a node with a fault next to a slow link makes the link's end look slow in "
                     "every pair run; "
                     "place them apart, or leave node 0 to let the seed choose");
    }
  }
  std::int64_t needed = 0;
  for (const auto& f : s->faults()) {
    needed += f.kind() == v1::PREFLIGHT_FAULT_SLOW_LINK ? 2
              : f.kind() == v1::PREFLIGHT_FAULT_HEALTHY ? 0
                                                        : 1;
  }
  if (needed > s->nodes()) {
    return w.Error(w.At("faults"),
                   std::to_string(s->faults_size()) + " faults need " + std::to_string(needed) +
                       " nodes; the cluster has " + std::to_string(s->nodes()),
                   "at most one fault per node: fewer faults, or more nodes");
  }
  return Status::Ok();
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError(path.string() + ": could not write");
  return Status::Ok();
}

}  // namespace

Result<v1::PreflightScenario> ParsePreflightScenario(std::string_view text,
                                                     std::string_view source) {
  v1::PreflightScenario scenario;
  pb::TextFormat::ParseInfoTree tree;
  DENPEX_RETURN_IF_ERROR(ParseTextProtoStrict(text, source, &scenario, &tree, "docs/preflight.md"));
  DENPEX_RETURN_IF_ERROR(FillAndValidate(&scenario, Where(std::string(source), &tree)));
  return scenario;
}

Result<v1::PreflightScenario> LoadPreflightScenario(const std::filesystem::path& path) {
  auto text = proto::ReadFile(path, proto::kMaxTextprotoBytes, "a preflight scenario");
  if (!text.ok()) return text.status();
  return ParsePreflightScenario(*text, path.string());
}

Result<v1::PreflightTruth> SimulatePreflight(const v1::PreflightScenario& scenario,
                                             const PreflightSimulateOptions& options) {
  // A scenario built in code gets the same defaults and checks as a file's.
  std::string text;
  pb::TextFormat::PrintToString(scenario, &text);
  auto checked =
      ParsePreflightScenario(text, scenario.name().empty() ? "<scenario>" : scenario.name());
  if (!checked.ok()) return checked.status();
  auto cluster = preflight::BuildCluster(*checked, options.seed.value_or(checked->seed()));
  if (!cluster.ok()) return cluster.status();

  const fs::path collected = options.out_dir / "collected";
  std::error_code ec;
  // A node folder or run left by an earlier cluster would be read as this one's.
  if (fs::is_directory(collected, ec) && !fs::is_empty(collected, ec)) {
    return Status::InvalidArgument(collected.string() +
                                   " already holds files; hint: simulate into an empty directory");
  }
  fs::create_directories(collected, ec);
  if (ec) return Status::IoError(collected.string() + ": " + ec.message());
  for (const preflight::Node& n : cluster->nodes) {
    const fs::path dir = collected / n.host;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError(dir.string() + ": " + ec.message());
    DENPEX_RETURN_IF_ERROR(
        WriteText(dir / "nvidia-smi-q.txt", preflight::NvidiaSmiQuery(*cluster, n)));
    DENPEX_RETURN_IF_ERROR(WriteText(dir / "topo.txt", preflight::TopoMatrix(*cluster, n)));
    DENPEX_RETURN_IF_ERROR(WriteText(dir / "ibstat.txt", preflight::Ibstat(*cluster, n)));
    DENPEX_RETURN_IF_ERROR(WriteText(dir / "dmesg.txt", preflight::KernelLog(*cluster, n)));
  }
  for (const preflight::Run& r : cluster->runs)
    DENPEX_RETURN_IF_ERROR(WriteText(collected / r.file, preflight::NcclTests(*cluster, r)));
  DENPEX_RETURN_IF_ERROR(
      proto::WriteJsonFile(options.out_dir / "preflight_truth.json", cluster->truth));
  return cluster->truth;
}

}  // namespace denpex::sim
