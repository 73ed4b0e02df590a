// Helpers shared by the `denpex run` tests: a temporary directory, whole-file reads, the
// denpex binary as a child process, and the log lines without their stamps.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace denpex::run_test {
namespace fs = std::filesystem;

using denpex::testing::TempDir;

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// `2026-03-02T09:00:41.123456Z ` is 28 bytes.
constexpr std::size_t kStampBytes = 28;

inline bool HasStamp(const std::string& l) {
  return l.size() >= kStampBytes && l[4] == '-' && l[10] == 'T' && l[19] == '.' && l[26] == 'Z' &&
         l[27] == ' ';
}

// The lines of a log with the stamps removed; the wrapper's own `[denpex-run]` lines are
// left out unless `notes`.
inline std::vector<std::string> Payload(const fs::path& log, bool notes = false) {
  std::vector<std::string> out;
  for (const std::string& l : Lines(ReadFile(log))) {
    if (!HasStamp(l)) {
      out.push_back("<no stamp>" + l);
      continue;
    }
    std::string body = l.substr(kStampBytes);
    if (!notes && body.rfind("[denpex-run] ", 0) == 0) continue;
    out.push_back(body);
  }
  return out;
}

// The denpex binary running `args`, stdin from /dev/null, stdout and stderr to files.
class Process {
 public:
  Process(const std::vector<std::string>& args, const fs::path& console_dir,
          const std::map<std::string, std::string>& env = {}) {
    out_ = console_dir / "console.out";
    err_ = console_dir / "console.err";
    std::vector<std::string> argv = {DENPEX_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int in = ::open("/dev/null", O_RDONLY);
      const int o = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(in, 0);
      ::dup2(o, 1);
      ::dup2(e, 2);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execv(cargv[0], cargv.data());
      ::_exit(126);
    }
  }
  ~Process() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  pid_t pid() const { return pid_; }
  void Signal(int sig) const { ::kill(pid_, sig); }
  // The wait status.
  int Wait() {
    if (!waited_) {
      while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
      }
      waited_ = true;
    }
    return status_;
  }
  std::string Stdout() const { return ReadFile(out_); }
  std::string Stderr() const { return ReadFile(err_); }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  int status_ = 0;
  fs::path out_, err_;
};

// Polls `cond` every 10 ms for up to `limit`.
inline bool WaitFor(const std::function<bool()>& cond,
                    std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

}  // namespace denpex::run_test
