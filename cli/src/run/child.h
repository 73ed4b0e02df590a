// The wrapped command as a child process: fork/exec with stdout and stderr on two pipes,
// the signals the wrapper takes over (read through a signalfd) and forwards, and how the
// child ended.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <array>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "run/posix_io.h"

namespace denpex::cli::run {

// Signals forwarded to the child: what launchers and schedulers send to stop or poke a job.
inline constexpr std::array<int, 6> kForwardedSignals = {SIGTERM, SIGINT,  SIGHUP,
                                                         SIGUSR1, SIGUSR2, SIGQUIT};

// "SIGKILL", or "signal 42" for one without a name.
std::string SignalName(int sig);

struct ExitInfo {
  enum class Kind { kRunning, kExited, kSignaled, kNotStarted };
  Kind kind = Kind::kRunning;
  int code = 0;    // kExited; kNotStarted: 127 (not found) or 126 (not executable)
  int signal = 0;  // kSignaled
  bool core_dumped = false;
};
ExitInfo ExitFromWaitStatus(int status);
// What a shell reports: the exit code, or 128 + the signal.
int ShellExitCode(const ExitInfo& e);
// "exited with code 1", "killed by signal 9 (SIGKILL)", "killed by signal 11 (SIGSEGV), core
// dumped".
std::string DescribeExit(const ExitInfo& e);

// While alive, the wrapper owns SIGCHLD and the forwarded signals: they are blocked and read
// from fd(); SIGPIPE is ignored (a closed console must not kill the wrapper) and SIGCHLD is
// set to its default action (an inherited SIG_IGN would reap the child behind our back).
// The destructor restores the mask and the actions.
class SignalGuard {
 public:
  static Result<SignalGuard> Install();
  SignalGuard(SignalGuard&& o) noexcept;
  SignalGuard& operator=(SignalGuard&&) = delete;
  SignalGuard(const SignalGuard&) = delete;
  ~SignalGuard();

  int fd() const { return fd_.get(); }
  const sigset_t& old_mask() const { return old_mask_; }

 private:
  SignalGuard() = default;
  bool active_ = false;
  Fd fd_;
  sigset_t old_mask_{};
  struct sigaction old_pipe_ {};
  struct sigaction old_chld_ {};
};

struct Child {
  pid_t pid = -1;
  pid_t pgid = -1;  // the child's own process group, or -1 when it shares the wrapper's
  Fd out;           // read ends, non-blocking
  Fd err;
  int exec_errno = 0;  // non-zero: exec failed (the child is already reaped)
};

// Starts argv[0] (searched in PATH) with the old signal mask and default actions, stdout and
// stderr on pipes, stdin inherited. `own_group`: in a process group of its own, so that
// signals can reach its whole tree. The child gets SIGKILL if the wrapper dies (a wrapper
// killed with SIGKILL must not leave the job running unseen).
Result<Child> SpawnChild(const std::vector<std::string>& argv, const sigset_t& child_mask,
                         bool own_group);

}  // namespace denpex::cli::run
