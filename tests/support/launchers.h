// Real launchers for the e2e tests (`denpex run`, `denpex watch`): a job as a child process
// with its own process group and a clean environment, whether PyTorch and the Slurm of
// scripts/services.sh are there, a free loopback port, a memory cgroup to OOM-kill a rank in.
// Tests that need them skip without them, unless DENPEX_REQUIRE_SERVICES=1 (CI), where they fail
// instead (SKIP_OR_FAIL); a machine without a writable memory cgroup skips in any case.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace denpex::testing::launchers {
namespace fs = std::filesystem;

inline std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline constexpr const char* kPython = "/usr/bin/python3";
inline bool Required() {
  const char* v = std::getenv("DENPEX_REQUIRE_SERVICES");
  return v != nullptr && std::string(v) == "1";
}

#define SKIP_OR_FAIL(why)                                                \
  do {                                                                   \
    if (Required()) FAIL() << (why) << " (DENPEX_REQUIRE_SERVICES=1)";   \
    GTEST_SKIP() << (why)                                                \
                 << "; install and start them: scripts/install-deps.sh " \
                    "--with-services && scripts/services.sh start";      \
  } while (0)

// A child process with its own process group, a clean environment, and its output in a file;
// killed with its whole group if it outlives the test.
class Job {
 public:
  Job(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
      const fs::path& output, const fs::path& cwd) {
    std::vector<std::string> a = argv;
    std::vector<char*> cargv;
    for (auto& s : a) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    std::vector<std::string> e;
    for (const auto& [k, v] : env) e.push_back(k + "=" + v);
    std::vector<char*> cenv;
    for (auto& s : e) cenv.push_back(s.data());
    cenv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      if (::chdir(cwd.c_str()) != 0) ::_exit(126);
      ::execve(cargv[0], cargv.data(), cenv.data());
      ::_exit(127);
    }
  }
  ~Job() {
    if (!done_) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
    }
  }
  // Waits until `deadline`; false when the job was still running (it is then killed).
  bool WaitUntil(std::chrono::steady_clock::time_point deadline) {
    while (!done_) {
      const pid_t p = ::waitpid(pid_, &status_, WNOHANG);
      if (p == pid_) {
        done_ = true;
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  int status() const { return status_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool done_ = false;
};

// Runs argv to its end (60 s at most); its exit code, or -1.
inline int RunToEnd(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env, const fs::path& output) {
  Job job(argv, env, output, fs::temp_directory_path());
  if (!job.WaitUntil(std::chrono::steady_clock::now() + std::chrono::seconds(60))) return -1;
  return WIFEXITED(job.status()) ? WEXITSTATUS(job.status()) : -1;
}

inline std::map<std::string, std::string> CleanEnv(std::map<std::string, std::string> extra = {}) {
  // As on a cluster node: no PYTHONUNBUFFERED, so stdout to a pipe is block-buffered.
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"}, {"HOME", "/root"}, {"LANG", "C.UTF-8"}};
  env.merge(extra);
  return env;
}

inline bool HaveTorch(const fs::path& scratch) {
  return RunToEnd({kPython, "-c", "import torch.distributed.run"}, CleanEnv(),
                  scratch / "torch-check.log") == 0;
}

// The Slurm configuration of a running cluster: $SLURM_CONF, else scripts/services.sh's. The
// cluster runs when its node is up: idle, mixed, allocated or completing (ctest -j2 runs one srun
// test while the job of another holds cores or is still completing; a new step then waits for
// its cores, it is not refused). A node in another state (down or unknown while slurmd starts)
// is asked about again for up to 20 s; no answer from sinfo is no cluster.
inline std::string SlurmConf(const fs::path& scratch) {
  std::string conf;
  if (const char* c = std::getenv("SLURM_CONF")) conf = c;
  if (conf.empty()) {
    const char* d = std::getenv("DENPEX_SERVICES_DIR");
    conf = std::string(d ? d : "/tmp/denpex-services") + "/etc/slurm.conf";
  }
  if (!fs::exists(conf)) return {};
  const fs::path out = scratch / "sinfo.log";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    if (RunToEnd({"/usr/bin/sinfo", "-h", "-o", "%T"}, CleanEnv({{"SLURM_CONF", conf}}), out) != 0)
      return {};
    const std::string state = ReadAll(out);
    for (const char* up : {"idle", "mix", "alloc", "completing"})
      if (state.find(up) != std::string::npos) return conf;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (std::chrono::steady_clock::now() < deadline);
  return {};
}

// Whether `dmesg` can read the kernel log (root, CAP_SYSLOG or kernel.dmesg_restrict=0).
inline bool KernelLogReadable(const fs::path& scratch) {
  return RunToEnd({"/usr/bin/dmesg"}, CleanEnv(), scratch / "dmesg-check.log") == 0;
}

// A fresh memory cgroup with a hard limit and no swap, for a process to move itself into
// (train.py --fault oom with DENPEX_OOM_CGROUP): the kernel's memory-cgroup OOM killer then
// takes that process alone, as Slurm's task/cgroup or a Kubernetes memory limit would. cgroup
// v1's memory controller (/sys/fs/cgroup/memory) as a child of its root; cgroup v2 beside this
// process's own cgroup, or under the root, where the memory controller is handed down. Its
// name is unique to this process and object; it is removed, with any process still in it
// killed, when the object goes, whatever the test did.
class MemoryCgroup {
 public:
  explicit MemoryCgroup(std::uint64_t limit_bytes) {
    static std::atomic<int> count{0};
    const std::string name =
        "denpex-test-oom-" + std::to_string(::getpid()) + "-" + std::to_string(count++);
    const fs::path v1 = "/sys/fs/cgroup/memory";
    if (fs::exists(v1 / "cgroup.procs")) {
      if (!Make(v1 / name)) return;
      // memory.memsw.limit_in_bytes (where swap accounting is on) may not be below the memory
      // limit: the memory limit first.
      if (!Write("memory.limit_in_bytes", std::to_string(limit_bytes))) return;
      if (fs::exists(path_ / "memory.memsw.limit_in_bytes") &&
          !Write("memory.memsw.limit_in_bytes", std::to_string(limit_bytes)))
        return;
      ok_ = true;
      return;
    }
    const fs::path unified = "/sys/fs/cgroup";
    if (ReadAll(unified / "cgroup.controllers").find("memory") == std::string::npos) {
      why_ =
          "no memory cgroup controller (neither /sys/fs/cgroup/memory nor memory in "
          "/sys/fs/cgroup/cgroup.controllers)";
      return;
    }
    // A sibling of this process's own cgroup (its parent hands the memory controller to its
    // children: a delegated cgroup), else a child of the hierarchy's root (root on a host).
    // cgroup v2 lets no cgroup with processes of its own hand controllers down, so this
    // process's own cgroup cannot be the parent (but at the root).
    std::string own;  // `0::/path` in /proc/self/cgroup
    std::istringstream in(ReadAll("/proc/self/cgroup"));
    for (std::string l; std::getline(in, l);) {
      if (l.rfind("0::", 0) == 0) own = l.substr(3);
    }
    std::vector<fs::path> parents;
    if (!fs::path(own).relative_path().empty())
      parents.push_back((unified / fs::path(own).relative_path()).parent_path());
    parents.push_back(unified);
    fs::path parent;
    for (const fs::path& p : parents) {
      if (ReadAll(p / "cgroup.subtree_control").find("memory") != std::string::npos) {
        parent = p;
        break;
      }
    }
    if (parent.empty()) {
      why_ =
          "cgroup v2: neither the parent of this process's cgroup nor the root hands the "
          "memory controller to its children (cgroup.subtree_control)";
      return;
    }
    if (!Make(parent / name)) return;
    if (!Write("memory.max", std::to_string(limit_bytes))) return;
    if (fs::exists(path_ / "memory.swap.max") && !Write("memory.swap.max", "0")) return;
    ok_ = true;
  }
  ~MemoryCgroup() {
    if (path_.empty()) return;
    // The OOM-killed process leaves the cgroup as it exits; anything left (a failed test) is
    // killed so that the directory can go.
    for (int i = 0; i < 100; ++i) {
      std::istringstream procs(ReadAll(path_ / "cgroup.procs"));
      for (std::string pid; std::getline(procs, pid);) {
        if (!pid.empty()) ::kill(std::stoi(pid), SIGKILL);
      }
      if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Empty when the cgroup is ready; else why it could not be made.
  std::string unavailable() const { return ok_ ? std::string() : why_; }
  const fs::path& path() const { return path_; }

 private:
  bool Make(const fs::path& dir) {
    if (::mkdir(dir.c_str(), 0755) != 0) {
      why_ = "cannot create the memory cgroup " + dir.string() + ": " +
             std::generic_category().message(errno);
      return false;
    }
    path_ = dir;
    return true;
  }
  bool Write(const std::string& file, const std::string& value) {
    std::ofstream out(path_ / file);
    out << value;
    out.flush();
    if (!out) why_ = "cannot write " + (path_ / file).string();
    return static_cast<bool>(out);
  }

  fs::path path_;
  std::string why_;
  bool ok_ = false;
};

inline int FreePort() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

}  // namespace denpex::testing::launchers
