// `denpex preflight --collect DIR` (docs/preflight.md, "Collecting"): runs this node's health
// tools, each with a time limit, and writes what each printed into DIR/<host>/, the layout
// `denpex preflight --from DIR` reads. Run once per node (`srun --ntasks-per-node=1`, pdsh, a
// DaemonSet); a tool that is not installed is skipped and said so.
#include "preflight_collect.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <ostream>
#include <system_error>

#include "run/system_info.h"

namespace denpex::cli {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

struct Tool {
  std::string what;  // as the report names it
  std::string file;
  std::vector<std::string> argv;
  seconds limit;
};

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string h(buf);
  return h.substr(0, h.find('.'));  // the short name, as Slurm names nodes
}

}  // namespace

int RunPreflightCollect(const PreflightArgs& args, std::ostream& out, std::ostream& err) {
  const std::string host = args.host.empty() ? HostName() : args.host;
  if (host.find('/') != std::string::npos || host == "." || host == "..") {
    err << "denpex preflight --collect: --host '" << host << "' is not a node name\n";
    return kExitUsage;
  }
  const fs::path dir = args.collect / host;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    err << "denpex preflight --collect: " << dir.string() << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  std::vector<Tool> tools = {
      {"nvidia-smi -q", "nvidia-smi-q.txt", {"nvidia-smi", "-q"}, seconds(60)},
      {"nvidia-smi topo -m", "nvidia-smi-topo.txt", {"nvidia-smi", "topo", "-m"}, seconds(60)},
      {"ibstat", "ibstat.txt", {"ibstat"}, seconds(30)},
      {"ibv_devinfo -v", "ibv_devinfo.txt", {"ibv_devinfo", "-v"}, seconds(30)},
      {"dmesg", "dmesg.txt", {"dmesg"}, seconds(30)},
  };
  if (args.dcgm_level > 0) {
    // Level 1 takes seconds, 2 about two minutes, 3 about fifteen (DCGM's documentation).
    tools.push_back({"dcgmi diag -r " + std::to_string(args.dcgm_level) + " -j",
                     "dcgmi-diag.json",
                     {"dcgmi", "diag", "-r", std::to_string(args.dcgm_level), "-j"},
                     seconds(args.dcgm_level >= 3 ? 3600 : 600)});
  }
  sigset_t mask;
  ::sigprocmask(SIG_BLOCK, nullptr, &mask);  // the tools run with this process's mask
  int ran = 0;
  out << "denpex preflight --collect: " << host << " into " << dir.string() << "\n";
  for (const Tool& t : tools) {
    const run::SideFile f = run::RunToolInto(dir, t.file, t.argv, mask, t.limit);
    ran += f.status == "ok";
    out << "  " << t.what << ": " << f.status;
    if (!f.file.empty()) out << " (" << t.file << ", " << f.lines << " lines)";
    out << "\n";
  }
  if (ran == 0) {
    err << "denpex preflight --collect: no tool ran on " << host
        << " (nvidia-smi, ibstat, dmesg, dcgmi: none found on PATH or every one failed)\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace denpex::cli
