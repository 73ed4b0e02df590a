// Real launchers for the e2e tests (`denpex run`, `denpex watch`): a job as a child process
// with its own process group and a clean environment, whether PyTorch and the Slurm of
// scripts/services.sh are there, a free loopback port. Tests that need them skip without them,
// unless DENPEX_REQUIRE_SERVICES=1 (CI), where they fail instead (SKIP_OR_FAIL).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
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

// The Slurm configuration of a running cluster: $SLURM_CONF, else scripts/services.sh's.
inline std::string SlurmConf(const fs::path& scratch) {
  std::string conf;
  if (const char* c = std::getenv("SLURM_CONF")) conf = c;
  if (conf.empty()) {
    const char* d = std::getenv("DENPEX_SERVICES_DIR");
    conf = std::string(d ? d : "/tmp/denpex-services") + "/etc/slurm.conf";
  }
  if (!fs::exists(conf)) return {};
  const fs::path out = scratch / "sinfo.log";
  if (RunToEnd({"/usr/bin/sinfo", "-h", "-o", "%T"}, CleanEnv({{"SLURM_CONF", conf}}), out) != 0)
    return {};
  const std::string state = ReadAll(out);
  return (state.find("idle") != std::string::npos || state.find("mix") != std::string::npos)
             ? conf
             : std::string();
}

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
