#include "run/child.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace denpex::cli::run {

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

ExitInfo ExitFromWaitStatus(int status) {
  ExitInfo e;
  if (WIFEXITED(status)) {
    e.kind = ExitInfo::Kind::kExited;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.kind = ExitInfo::Kind::kSignaled;
    e.signal = WTERMSIG(status);
    e.core_dumped = WCOREDUMP(status);
  }
  return e;
}

int ShellExitCode(const ExitInfo& e) {
  switch (e.kind) {
    case ExitInfo::Kind::kExited:
      return e.code;
    case ExitInfo::Kind::kSignaled:
      return 128 + e.signal;
    case ExitInfo::Kind::kNotStarted:
      return e.code != 0 ? e.code : 127;
    case ExitInfo::Kind::kRunning:
      break;
  }
  return 127;
}

std::string DescribeExit(const ExitInfo& e) {
  switch (e.kind) {
    case ExitInfo::Kind::kExited:
      return "exited with code " + std::to_string(e.code);
    case ExitInfo::Kind::kSignaled:
      return "killed by signal " + std::to_string(e.signal) + " (" + SignalName(e.signal) + ")" +
             (e.core_dumped ? ", core dumped" : "");
    case ExitInfo::Kind::kRunning:
      return "still running";
    case ExitInfo::Kind::kNotStarted:
      return "could not be started";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------- SignalGuard

Result<SignalGuard> SignalGuard::Install() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int sig : kForwardedSignals) sigaddset(&set, sig);
  SignalGuard g;
  if (::sigprocmask(SIG_BLOCK, &set, &g.old_mask_) != 0)
    return Status::Internal(ErrnoText("sigprocmask", errno));
  g.active_ = true;  // from here on the destructor restores the mask
  g.fd_.Reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!g.fd_.valid()) return Status::Internal(ErrnoText("signalfd", errno));
  struct sigaction ign {
  }, dfl{};
  ign.sa_handler = SIG_IGN;
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &ign, &g.old_pipe_);
  ::sigaction(SIGCHLD, &dfl, &g.old_chld_);
  return g;
}

SignalGuard::SignalGuard(SignalGuard&& o) noexcept
    : active_(o.active_),
      fd_(std::move(o.fd_)),
      old_mask_(o.old_mask_),
      old_pipe_(o.old_pipe_),
      old_chld_(o.old_chld_) {
  o.active_ = false;
}

SignalGuard::~SignalGuard() {
  if (!active_) return;
  // Signals that arrived after the loop ended are consumed here: unblocking them would apply
  // their default action to the wrapper while it writes its last records.
  if (fd_.valid()) {
    signalfd_siginfo info;
    while (::read(fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    }
  }
  ::sigaction(SIGPIPE, &old_pipe_, nullptr);
  ::sigaction(SIGCHLD, &old_chld_, nullptr);
  ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

// ---------------------------------------------------------------------------- SpawnChild

namespace {

struct PipePair {
  Fd read, write;
};

Result<PipePair> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::Internal(ErrnoText("pipe2", errno));
  return PipePair{Fd(fds[0]), Fd(fds[1])};
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecChild(char* const* argv, const sigset_t& mask, bool own_group, pid_t parent,
                            int out, int err, int status) {
  if (own_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the wrapper is already gone
  if (::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0) ::_exit(127);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, nullptr);
  ::sigaction(SIGCHLD, &dfl, nullptr);
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::execvp(argv[0], argv);
  const int e = errno;
  [[maybe_unused]] const ssize_t n = ::write(status, &e, sizeof e);
  ::_exit(e == ENOENT ? 127 : 126);
}

}  // namespace

Result<Child> SpawnChild(const std::vector<std::string>& argv, const sigset_t& child_mask,
                         bool own_group) {
  if (argv.empty()) return Status::InvalidArgument("no command to run");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  auto out = MakePipe();
  if (!out.ok()) return out.status();
  auto err = MakePipe();
  if (!err.ok()) return err.status();
  auto status = MakePipe();
  if (!status.ok()) return status.status();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Internal(ErrnoText("fork", errno));
  if (pid == 0) {
    ExecChild(cargv.data(), child_mask, own_group, parent, out->write.get(), err->write.get(),
              status->write.get());
  }
  Child child;
  child.pid = pid;
  if (own_group) {
    ::setpgid(pid, pid);  // also done by the child: whichever runs first wins the race
    child.pgid = pid;
  }
  out->write.Reset();
  err->write.Reset();
  status->write.Reset();
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(status->read.get(), &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    child.exec_errno = exec_errno;
    int ws;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    return child;
  }
  ::fcntl(out->read.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err->read.get(), F_SETFL, O_NONBLOCK);
  child.out = std::move(out->read);
  child.err = std::move(err->read);
  return child;
}

}  // namespace denpex::cli::run
