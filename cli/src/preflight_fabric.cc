// `denpex preflight --fabric DIR` (docs/preflight.md, "Fabric"): the plan's rounds run one after
// the other, the probes of a round at the same time, each through the launcher (srun: one step
// over the group's nodes; torchrun: one agent per node, started with the --on template). Each
// probe's output goes to DIR/fabric-<round>-<nodes>.txt under a first line that says where it
// ran and how it ended, and DIR is then judged as `--from DIR` judges it, so that the same
// folder read again later gives the same answer.
#include "preflight_fabric.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "denpex/engine/preflight.h"
#include "run/system_info.h"
#include "run/task_record.h"

namespace denpex::cli {

extern const char kGlooProbe[];  // preflight_probe.py, embedded at build time (CMakeLists.txt)

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kProbeScript = "denpex-gloo-probe.py";

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string Replace(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// One process to start for a probe: srun's step, or one node's torchrun agent.
struct Launch {
  std::vector<std::string> argv;
  std::string node;
  run::ToolOutput result;
};

struct Probe {
  std::string round;
  std::vector<std::string> nodes;
  std::vector<Launch> launches;
  std::string file;
  std::string status;
  double seconds = 0;
};

// Slurm's `NodeAddr` of each node (`scontrol -o show node LIST`): where slurmctld reaches it, and
// where the other ranks of a probe reach its rank 0 (node names need not resolve). A node
// scontrol does not list keeps its name.
std::map<std::string, std::string> SlurmNodeAddrs(const std::string& list, const sigset_t& mask) {
  std::map<std::string, std::string> addr;
  const run::ToolOutput t =
      run::RunTool({"scontrol", "-o", "show", "node", list}, mask, std::chrono::seconds(60));
  if (t.status != "ok") return addr;
  std::istringstream in(t.output);
  for (std::string line; std::getline(in, line);) {
    std::string name, node_addr;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (w.starts_with("NodeName=")) name = w.substr(9);
      if (w.starts_with("NodeAddr=")) node_addr = w.substr(9);
    }
    if (!name.empty() && !node_addr.empty()) addr[name] = node_addr;
  }
  return addr;
}

class FabricRunner {
 public:
  FabricRunner(const PreflightArgs& a, std::string launcher, fs::path script,
               std::map<std::string, std::string> addrs)
      : a_(a),
        launcher_(std::move(launcher)),
        script_(std::move(script)),
        addrs_(std::move(addrs)) {}

  // Where the other ranks reach the group's first node: its NodeAddr (srun), this machine
  // (torchrun with --on '': every agent is here), else its name.
  std::string MasterAddr(const std::string& node) const {
    if (launcher_ == "torchrun" && a_.on.empty()) return "127.0.0.1";
    const auto it = addrs_.find(node);
    return it == addrs_.end() ? node : it->second;
  }

  // What each rank runs: the gloo probe under the python interpreter, or --probe's command.
  std::vector<std::string> ProbeCommand() const {
    if (!a_.probe.empty()) return Words(a_.probe);
    return {a_.python,     script_.string(),
            "--max-bytes", std::to_string(a_.probe_max_bytes),
            "--timeout",   std::to_string(a_.probe_timeout)};
  }

  std::vector<Launch> Launches(const std::vector<std::string>& group, int port) const {
    const std::string k = std::to_string(group.size());
    const std::string r = std::to_string(a_.ranks_per_node);
    std::vector<Launch> out;
    if (launcher_ == "srun") {
      Launch l{.argv = {"srun", "--nodes=" + k,
                        "--ntasks=" + std::to_string(group.size() * a_.ranks_per_node),
                        "--ntasks-per-node=" + r, "--nodelist=" + Join(group, ","),
                        "--kill-on-bad-exit=1",
                        "--export=ALL,MASTER_ADDR=" + MasterAddr(group.front()) +
                            ",MASTER_PORT=" + std::to_string(port)},
               .node = group.front(),
               .result = {}};
      for (std::string& w : ProbeCommand()) l.argv.push_back(std::move(w));
      out.push_back(std::move(l));
      return out;
    }
    for (std::size_t i = 0; i < group.size(); ++i) {
      Launch l{.argv = Words(Replace(a_.on, "{host}", group[i])), .node = group[i], .result = {}};
      for (std::string w :
           {std::string("env"), "DENPEX_PROBE_HOST=" + group[i], a_.python, std::string("-m"),
            std::string("torch.distributed.run"), "--nnodes=" + k,
            "--node_rank=" + std::to_string(i), "--nproc_per_node=" + r,
            "--master_addr=" + MasterAddr(group.front()), "--master_port=" + std::to_string(port),
            // torch 1.13 under Python 3.11 starts its workers only with non-zero --redirects and
            // --tee (stderr to its log folder and the console); later releases accept them too.
            std::string("--redirects=2"), std::string("--tee=2"),
            // The agent sees its workers end within a second (the default polls every 5 s).
            std::string("--monitor_interval=1")}) {
        l.argv.push_back(std::move(w));
      }
      std::vector<std::string> probe = ProbeCommand();
      if (a_.probe.empty()) {
        probe.erase(probe.begin());  // torchrun runs the script with its own interpreter
      } else {
        l.argv.push_back("--no_python");
      }
      for (std::string& w : probe) l.argv.push_back(std::move(w));
      out.push_back(std::move(l));
    }
    return out;
  }

  // Runs every probe of a round at the same time and writes each one's file.
  Status Run(std::size_t index, const engine::FabricRound& round, std::vector<Probe>* done) {
    std::vector<Probe> probes;
    for (std::size_t g = 0; g < round.groups.size(); ++g) {
      const auto& group = round.groups[g];
      probes.push_back({.round = round.name,
                        .nodes = group,
                        .launches = Launches(group, a_.port + static_cast<int>(g)),
                        .file = "fabric-" + std::to_string(index + 1) + "-" + round.name + "-" +
                                Join(group, "_") + ".txt",
                        .status = {},
                        .seconds = 0});
    }
    sigset_t mask;
    ::sigprocmask(SIG_BLOCK, nullptr, &mask);
    const auto limit = std::chrono::seconds(a_.probe_timeout + 30);
    const auto start = std::chrono::steady_clock::now();
    {
      std::vector<std::jthread> threads;
      for (Probe& p : probes) {
        for (Launch& l : p.launches) {
          threads.emplace_back(
              [&l, &mask, limit] { l.result = run::RunTool(l.argv, mask, limit); });
        }
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (Probe& p : probes) {
      p.seconds = seconds;
      p.status = "ok";
      for (const Launch& l : p.launches) {
        if (l.result.status == "ok") continue;
        p.status =
            (p.launches.size() > 1 ? "on " + l.node + ": " : std::string()) + l.result.status;
        break;
      }
      std::string text = engine::FormatFabricProbeHeader({.round = p.round,
                                                          .nodes = p.nodes,
                                                          .launcher = launcher_,
                                                          .ranks_per_node = a_.ranks_per_node,
                                                          .status = p.status,
                                                          .line = 0}) +
                         "\n";
      for (const Launch& l : p.launches) {
        if (p.launches.size() > 1) text += "# denpex fabric probe: output on " + l.node + "\n";
        text += l.result.output;
        if (!l.result.output.empty() && l.result.output.back() != '\n') text += "\n";
      }
      if (Status st = run::WriteFileAtomically(a_.fabric / p.file, text); !st.ok()) return st;
      done->push_back(std::move(p));
    }
    return Status::Ok();
  }

 private:
  const PreflightArgs& a_;
  std::string launcher_;
  fs::path script_;
  std::map<std::string, std::string> addrs_;  // srun: each node's NodeAddr
};

// The probe files an earlier --fabric run left in DIR (ours by name and first line): removed,
// so that two runs' probes are not judged as one.
void RemoveEarlierProbes(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !name.starts_with("fabric-") || !name.ends_with(".txt")) continue;
    std::ifstream in(e.path());
    std::string first;
    std::getline(in, first);
    if (engine::ParseFabricProbeHeader(first)) fs::remove(e.path(), ec);
  }
}

}  // namespace

int RunPreflightFabric(const PreflightArgs& args, std::ostream& out, std::ostream& err) {
  std::string list = args.nodes;
  if (list.empty()) {
    if (const char* env = std::getenv("SLURM_JOB_NODELIST")) list = env;
  }
  if (list.empty()) {
    err << "denpex preflight --fabric: give --nodes LIST (Slurm's host list syntax, e.g. "
           "gpu-[0001-0064]); outside a Slurm job there is no SLURM_JOB_NODELIST to take\n";
    return kExitUsage;
  }
  const std::vector<std::string> nodes = engine::ExpandSlurmHostList(list);
  if (nodes.empty()) {
    err << "denpex preflight --fabric: --nodes '" << list
        << "' is not a host list (gpu-[0001-0004,0007],login1)\n";
    return kExitUsage;
  }
  std::string launcher = args.launcher;
  if (launcher.empty()) launcher = std::getenv("SLURM_JOB_ID") != nullptr ? "srun" : "torchrun";
  if (launcher != "srun" && launcher != "torchrun") {
    err << "denpex preflight --fabric: --launcher '" << launcher << "': srun or torchrun\n";
    return kExitUsage;
  }
  if (launcher == "torchrun" && nodes.size() > 1 && !args.on.empty() &&
      args.on.find("{host}") == std::string::npos) {
    err << "denpex preflight --fabric: --on '" << args.on
        << "' does not name {host}: torchrun needs one agent on each node (e.g. --on 'ssh "
           "{host}'; --on '' starts every agent here)\n";
    return kExitUsage;
  }
  const auto rounds = engine::PlanFabric(nodes, args.ranks_per_node >= 2);
  std::size_t widest = 0;  // a round's probes take ports --port, --port + 1, ...
  for (const auto& r : rounds) widest = std::max(widest, r.groups.size());
  if (static_cast<std::size_t>(args.port) + widest > 65536) {
    err << "denpex preflight --fabric: --port " << args.port << ": a round of " << widest
        << " probes needs ports up to " << args.port + widest - 1 << "; give a lower --port\n";
    return kExitUsage;
  }
  std::error_code ec;
  fs::create_directories(args.fabric, ec);
  if (ec) {
    err << "denpex preflight --fabric: " << args.fabric.string() << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  RemoveEarlierProbes(args.fabric);
  const fs::path script = fs::absolute(args.fabric) / kProbeScript;
  if (args.probe.empty()) {
    if (Status st = run::WriteFileAtomically(script, kGlooProbe); !st.ok()) {
      err << "denpex preflight --fabric: " << st.message() << "\n";
      return kExitBadInput;
    }
  }

  const engine::ProbeCost every = engine::EveryPairCost(static_cast<std::int64_t>(nodes.size()));
  std::size_t planned = 0;
  for (const auto& r : rounds) planned += r.groups.size();
  out << "denpex preflight --fabric: " << nodes.size() << " nodes, " << launcher << ", "
      << (args.probe.empty() ? "the gloo probe" : "probe '" + args.probe + "'") << ", "
      << args.ranks_per_node << " rank(s) per node: " << rounds.size() << " rounds, " << planned
      << " probes (every pair apart: " << every.probes << " in " << every.rounds
      << " rounds); outputs in " << args.fabric.string() << "\n";
  sigset_t mask;
  ::sigprocmask(SIG_BLOCK, nullptr, &mask);
  FabricRunner runner(
      args, launcher, script,
      launcher == "srun" ? SlurmNodeAddrs(list, mask) : std::map<std::string, std::string>{});
  std::vector<Probe> probes;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const std::size_t before = probes.size();
    if (Status st = runner.Run(i, rounds[i], &probes); !st.ok()) {
      err << "denpex preflight --fabric: " << st.message() << "\n";
      return kExitBadInput;
    }
    const auto ok = std::count_if(probes.begin() + static_cast<std::ptrdiff_t>(before),
                                  probes.end(), [](const Probe& p) { return p.status == "ok"; });
    out << "  round " << (i + 1) << " (" << rounds[i].name << "): " << probes.size() - before
        << " probes, " << ok << " finished, " << std::fixed << std::setprecision(1)
        << probes.back().seconds << " s\n";
    out.unsetf(std::ios::floatfield);
  }

  auto report = engine::PreflightFrom(args.fabric,
                                      {.busbw_floor = args.busbw_floor, .history = args.history});
  if (!report.ok()) {
    err << "denpex preflight --fabric: " << report.status().message() << "\n";
    return kExitBadInput;
  }
  v1::PreflightFabric* fabric = report->mutable_fabric();
  fabric->set_launcher(launcher);
  fabric->set_probe(args.probe.empty() ? "gloo" : args.probe);
  fabric->set_ranks_per_node(args.ranks_per_node);
  fabric->set_rounds(static_cast<std::int32_t>(rounds.size()));
  fabric->set_every_pair_probes(every.probes);
  fabric->set_every_pair_rounds(every.rounds);
  for (const Probe& p : probes) {
    v1::PreflightProbe* q = fabric->add_probes();
    q->set_round(p.round);
    for (const std::string& n : p.nodes) q->add_nodes(n);
    q->set_file(p.file);
    q->set_status(p.status);
    q->set_seconds(p.seconds);
  }
  return WritePreflightReport(args, *report, out, err);
}

}  // namespace denpex::cli
