#include "fixture.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace denpex::engine::testing {
namespace fs = std::filesystem;
namespace {

enum class Kind { kTp, kDp, kPp };

struct Group {
  int uid = 0;
  const char* desc = "";
  int group_rank = 0;
  std::vector<int> members;
  std::int64_t seq = 0;
  const char* op = "";
};

// Megatron's layout: rank = tp_i + tp * (dp_i + dp * pp_i); every rank creates every group,
// so a group's uid is the same on all its members.
Group GroupOf(const Job& j, int r, Kind kind) {
  const int tp_i = r % j.tp, dp_i = (r / j.tp) % j.dp, pp_i = r / (j.tp * j.dp);
  const int tp_groups = j.world() / j.tp, dp_groups = j.world() / j.dp;
  Group g;
  int base = 0, stride = 1, size = 1;
  switch (kind) {
    case Kind::kTp:
      g = {.uid = 1 + r / j.tp, .desc = "TENSOR_MODEL_PARALLEL_GROUP", .group_rank = tp_i, .seq = 86, .op = "ALLREDUCE"};
      base = r - tp_i, stride = 1, size = j.tp;
      break;
    case Kind::kDp:
      g = {.uid = 1 + tp_groups + pp_i * j.tp + tp_i, .desc = "DATA_PARALLEL_GROUP", .group_rank = dp_i, .seq = 21,
           .op = "_REDUCE_SCATTER_BASE"};
      base = tp_i + j.tp * j.dp * pp_i, stride = j.tp, size = j.dp;
      break;
    case Kind::kPp:
      g = {.uid = 1 + tp_groups + dp_groups + dp_i * j.tp + tp_i, .desc = "PIPELINE_MODEL_PARALLEL_GROUP",
           .group_rank = pp_i, .seq = 40, .op = "RECV"};
      base = tp_i + j.tp * dp_i, stride = j.tp * j.dp, size = j.pp;
      break;
  }
  for (int k = 0; k < size; ++k) g.members.push_back(base + stride * k);
  return g;
}

int SizeOf(const Job& j, Kind k) { return k == Kind::kTp ? j.tp : k == Kind::kDp ? j.dp : j.pp; }

// The group a live rank times out in: the first that holds a dead rank, else the one it is
// most plausibly stuck in behind a blocked peer.
Group TimeoutGroup(const Job& j, int r, const std::vector<bool>& dead, bool zero) {
  if (zero) {  // blocked behind the initiator's TP peers: in the DP group's reduce-scatter
    Group tp = GroupOf(j, r, Kind::kTp);
    return std::any_of(tp.members.begin(), tp.members.end(), [&](int m) { return dead[m]; }) ? tp : GroupOf(j, r, Kind::kDp);
  }
  for (Kind k : {Kind::kTp, Kind::kDp, Kind::kPp}) {
    if (SizeOf(j, k) < 2) continue;
    Group g = GroupOf(j, r, k);
    if (std::any_of(g.members.begin(), g.members.end(), [&](int m) { return dead[m]; })) return g;
  }
  return GroupOf(j, r, j.pp > 1 ? Kind::kPp : j.tp > 1 ? Kind::kTp : Kind::kDp);
}

std::string Pad(std::int64_t v, int width) {
  std::string s = std::to_string(v);
  return std::string(std::max<int>(0, width - static_cast<int>(s.size())), ' ') + s;
}

std::string WatchdogBlock(int r, const Group& g, TimeNs t, std::int64_t timeout_ms, std::int64_t ran_ms) {
  const std::string pre = "[rank" + std::to_string(r) + "]:";
  const std::string pg = "[PG " + std::to_string(g.uid) + " (" + g.desc + ") Rank " + std::to_string(g.group_rank) + "]";
  const std::string work = "WorkNCCL(SeqNum=" + std::to_string(g.seq) + ", OpType=" + g.op +
                           ", NumelIn=4194304, NumelOut=4194304, Timeout(ms)=" + std::to_string(timeout_ms) + ")";
  const std::string caught = pg + " Watchdog caught collective operation timeout: " + work + " ran for " +
                             std::to_string(ran_ms) + " milliseconds before timing out.";
  const std::string e = C10Stamp('E', t);
  std::ostringstream o;
  o << pre << "[" << e << " ProcessGroupNCCL.cpp:607] " << caught << "\n"
    << pre << "[" << e << " ProcessGroupNCCL.cpp:1664] " << pg << " Exception (either an error or timeout) detected by watchdog at work: "
    << g.seq << ", last enqueued NCCL work: " << g.seq << ", last completed NCCL work: " << g.seq - 1 << ".\n"
    << pre << "[" << e << " ProcessGroupNCCL.cpp:621] " << pg
    << " Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
    << pre << "[" << e << " ProcessGroupNCCL.cpp:627] " << pg << " To avoid data inconsistency, we are taking the entire process down.\n"
    << pre << "[" << e << " ProcessGroupNCCL.cpp:1515] " << pg << " Process group watchdog thread terminated with exception: " << caught << "\n"
    << pre << "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):\n"
    << pre << "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f2a1c4b1446 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n"
    << pre << "frame #1: <unknown function> + 0xdc253 (0x7f2a1c8dc253 in /lib/x86_64-linux-gnu/libstdc++.so.6)\n"
    << pre << "\n"
    << "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    << "  what():  " << pg << " Process group watchdog thread terminated with exception: " << caught << "\n"
    << "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):\n"
    << "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f2a1c4b1446 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n";
  return o.str();
}

std::string AgentBanner(TimeNs t) {
  const std::string h = GlogStamp('W', t) + " 139872 torch/distributed/run.py:779] ";
  return h + "\n" + h + "*****************************************\n" + h +
         "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. \n" +
         h + "*****************************************\n";
}

// The agent's report when local worker `failed_local` (global `failed_rank`) exits first.
std::string AgentFailure(const Job& j, int node, int failed_local, int exit_code, TimeNs t) {
  const std::string api = " 139872 torch/distributed/elastic/multiprocessing/api.py:";
  const int pid = 31240 + failed_local;
  const int rank = node * j.gpus + failed_local;
  std::ostringstream o;
  for (int l = 0; l < j.gpus; ++l) {
    if (l != failed_local) o << GlogStamp('W', t) << api << "858] Sending process " << 31240 + l << " closing signal SIGTERM\n";
  }
  const int sig = -exit_code;
  const char* name = sig == 9 ? "SIGKILL" : sig == 6 ? "SIGABRT" : "SIGSEGV";
  o << GlogStamp('E', t) << api << "833] failed (exitcode: " << exit_code << ") local_rank: " << failed_local
    << " (pid: " << pid << ") of binary: /usr/bin/python3\n"
    << "Traceback (most recent call last):\n  File \"/usr/local/bin/torchrun\", line 8, in <module>\n    sys.exit(main())\n"
    << "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    << "============================================================\ntrain.py FAILED\n"
    << "------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
    << "------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n"
    << "  time      : " << TableStamp(t) << "\n  host      : " << j.Host(node) << "\n"
    << "  rank      : " << rank << " (local_rank: " << failed_local << ")\n"
    << "  exitcode  : " << exit_code << " (pid: " << pid << ")\n  error_file: <N/A>\n"
    << "  traceback : Signal " << sig << " (" << name << ") received by PID " << pid << "\n"
    << "============================================================\n";
  return o.str();
}

}  // namespace

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string Job::Host(int node) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "gpu-%04d", node + 1);
  return buf;
}

std::string C10Stamp(char severity, TimeNs t) {
  const CivilTime c = ToCivil(t);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%c%d%02d %02d:%02d:%02d.%09lld", severity, c.month, c.day, c.hour, c.minute,
                c.second, static_cast<long long>(c.nanos));
  return buf;
}

std::string GlogStamp(char severity, TimeNs t) {
  const CivilTime c = ToCivil(t);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%c%02d%02d %02d:%02d:%02d.%06lld", severity, c.month, c.day, c.hour, c.minute,
                c.second, static_cast<long long>(c.nanos / 1000));
  return buf;
}

std::string TableStamp(TimeNs t) {
  const CivilTime c = ToCivil(t);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d_%02d:%02d:%02d", c.year, c.month, c.day, c.hour, c.minute, c.second);
  return buf;
}

void WriteIncident(const fs::path& dir, const Incident& s) {
  const Job& j = s.job;
  const int init_node = s.initiator / j.gpus;
  std::vector<bool> dead(j.world(), false);
  for (int r = 0; r < j.world(); ++r) {
    dead[r] = s.fault == Fault::kSigkill ? r / j.gpus == init_node : r == s.initiator;
  }
  auto skew = [&](int node) { return (s.skew_ms.count(node) ? s.skew_ms.at(node) : 0) * kNsPerMs; };
  const TimeNs start = s.fault_time - 17 * 60 * kNsPerSec;
  std::vector<TimeNs> timeout_at(j.world(), 0);
  for (int r = 0; r < j.world(); ++r) {
    const int node = r / j.gpus;
    std::string text = "[rank" + std::to_string(r) + "]:[" + C10Stamp('I', start + 5 * kNsPerSec + skew(node)) +
                       " ProcessGroupNCCL.cpp:850] [PG 0 (default_pg) Rank " + std::to_string(r) +
                       "] ProcessGroupNCCL initialization options: size: " + std::to_string(j.world()) +
                       ", global rank: " + std::to_string(r) + ", TIMEOUT(ms): " + std::to_string(s.timeout_ms) + "\n";
    if (r == j.world() - 1 && s.iteration_lines) {
      for (int i = 1; i <= 20; ++i) {
        const std::string stamp = FormatRfc3339(start + (60 + 45 * i) * kNsPerSec).substr(0, 19);
        text += " [" + stamp.substr(0, 10) + " " + stamp.substr(11) + "] iteration " + Pad(i, 8) + "/" + Pad(1000, 8) +
                " | consumed samples: " + Pad(i * 1024, 12) + " | elapsed time per iteration (ms): 1500.2 | lm loss: 2.5E+00 |\n";
      }
    }
    if (!dead[r]) {
      const std::int64_t ran = s.timeout_ms + 100 + r % 7;
      timeout_at[r] = s.fault_time + ran * kNsPerMs + skew(node);
      if (!s.cut_short.count(r)) text += WatchdogBlock(r, TimeoutGroup(j, r, dead, s.zero), timeout_at[r], s.timeout_ms, ran);
    }
    Write(dir / j.Host(node) / ("rank_" + std::to_string(r) + ".log"), text);
  }
  if (!s.agent_logs) return;
  for (int node = 0; node < j.nodes; ++node) {
    std::string text = AgentBanner(start + 512 * kNsPerMs + skew(node));
    if (s.fault == Fault::kSigkill && node == init_node) {
      text += AgentFailure(j, node, s.initiator % j.gpus, -9, s.fault_time + 100 * kNsPerMs + skew(node));
    } else {
      int first = -1;  // the node's first live worker to abort after its watchdog
      for (int l = 0; l < j.gpus; ++l) {
        const int r = node * j.gpus + l;
        if (dead[r] || s.cut_short.count(r)) continue;
        if (first < 0 || timeout_at[r] < timeout_at[node * j.gpus + first]) first = l;
      }
      if (first >= 0) text += AgentFailure(j, node, first, -6, timeout_at[node * j.gpus + first] + kNsPerSec);
    }
    Write(dir / j.Host(node) / "torchrun.log", text);
  }
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("denpex-engine-test-" + std::to_string(rd()) + std::to_string(rd()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace denpex::engine::testing
