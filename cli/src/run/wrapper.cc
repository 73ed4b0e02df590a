#include "run/wrapper.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>

#include <cerrno>
#include <fstream>
#include <system_error>

#include "run/child.h"
#include "run/line_splitter.h"
#include "run/posix_io.h"
#include "run/system_info.h"

namespace denpex::cli::run {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kReadBytes = 64 * 1024;
constexpr int kMaxFinalReads = 64;  // per stream, once the drain time is over

// Where a signal sent to the wrapper also reaches the child without our help.
struct Delivery {
  bool interactive = false;  // stdin is the terminal and we are its foreground group
  bool slurm_step = false;   // started by slurmstepd, which signals every process of a step
};

std::string ProcessName(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

Delivery DetectDelivery() {
  Delivery d;
  d.interactive = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  d.slurm_step = ProcessName(::getppid()) == "slurmstepd";
  return d;
}

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Like WriteAll, but waits for a non-blocking console to accept more.
Status WriteConsole(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n >= 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
    } else if (errno != EINTR) {
      return Status::IoError(ErrnoText("write", errno));
    }
  }
  return Status::Ok();
}

struct Stream {
  Fd* fd;
  int console;
  const char* name;
  LineSplitter split;
};

// One run of the event loop: reads both pipes, the signalfd and /dev/kmsg until the child
// has exited and its output is drained.
class Session {
 public:
  Session(const WrapperOptions& o, TaskLog* log, TaskRecord* rec, Child* child, int signal_fd,
          KernelLogReader* kmsg, Delivery delivery)
      : o_(o),
        log_(log),
        rec_(rec),
        child_(child),
        signal_fd_(signal_fd),
        kmsg_(kmsg),
        delivery_(delivery),
        streams_{Stream{&child->out, o.console_out, "stdout", LineSplitter()},
                 Stream{&child->err, o.console_err, "stderr", LineSplitter()}} {}

  void Run();

 private:
  bool AnyOpen() const { return streams_[0].fd->valid() || streams_[1].fd->valid(); }
  ssize_t ReadStream(Stream& s);
  void EndStream(Stream& s);
  void HandleSignals();
  void Forward(const signalfd_siginfo& info);
  void Reap(bool block);

  const WrapperOptions& o_;
  TaskLog* log_;
  TaskRecord* rec_;
  Child* child_;
  int signal_fd_;
  KernelLogReader* kmsg_;
  Delivery delivery_;
  Stream streams_[2];
  bool child_done_ = false;
  Clock::time_point drain_until_;
  char buf_[kReadBytes];
};

void Session::Run() {
  while (!child_done_ || (AnyOpen() && Clock::now() < drain_until_)) {
    pollfd fds[4];
    Stream* owner[4] = {};
    nfds_t n = 0;
    for (Stream& s : streams_) {
      if (!s.fd->valid()) continue;
      owner[n] = &s;
      fds[n++] = {s.fd->get(), POLLIN, 0};
    }
    const nfds_t sig_at = n;
    fds[n++] = {signal_fd_, POLLIN, 0};
    const nfds_t kmsg_at = kmsg_->fd() >= 0 ? n : 4;
    if (kmsg_at != 4) fds[n++] = {kmsg_->fd(), POLLIN, 0};
    int timeout = -1;
    if (child_done_) {
      timeout = static_cast<int>(std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(drain_until_ - Clock::now())
                 .count()));
    }
    if (::poll(fds, n, timeout) < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      log_->AddNote(
          ErrnoText("poll failed", errno) + "; waiting for the command without reading its output",
          WallNow());
      Reap(/*block=*/true);
      break;
    }
    for (nfds_t i = 0; i < sig_at; ++i) {
      if (fds[i].revents != 0) ReadStream(*owner[i]);
    }
    if (fds[sig_at].revents != 0) HandleSignals();
    if (kmsg_at != 4 && fds[kmsg_at].revents != 0) kmsg_->ReadAvailable();
  }
  // What is already in the pipes was written before the child exited (or by its own
  // children): take it, then hand out partial last lines.
  for (Stream& s : streams_) {
    for (int i = 0; i < kMaxFinalReads && s.fd->valid() && ReadStream(s) > 0; ++i) {
    }
    EndStream(s);
  }
}

// One read; returns the bytes read (0 at EOF or when nothing was there).
ssize_t Session::ReadStream(Stream& s) {
  const ssize_t n = ::read(s.fd->get(), buf_, sizeof buf_);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (n <= 0) {
    EndStream(s);
    return 0;
  }
  const std::string_view data(buf_, static_cast<std::size_t>(n));
  // The file first: it is the record that must survive.
  s.split.Feed(data, WallNow(), [&](std::string_view line, TimeNs t) { log_->AddLine(line, t); });
  log_->Flush();
  if (s.console >= 0) {
    if (Status st = WriteConsole(s.console, data); !st.ok()) {
      log_->AddNote(std::string("stopped copying ") + s.name + " to the console: " + st.message(),
                    WallNow());
      log_->Flush();
      s.console = -1;
    }
  }
  return n;
}

void Session::EndStream(Stream& s) {
  s.split.Finish([&](std::string_view line, TimeNs t) { log_->AddLine(line, t); });
  log_->Flush();
  s.fd->Reset();
}

void Session::HandleSignals() {
  signalfd_siginfo info;
  while (::read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (static_cast<int>(info.ssi_signo) == SIGCHLD) {
      Reap(/*block=*/false);
    } else {
      Forward(info);
    }
  }
}

void Session::Forward(const signalfd_siginfo& info) {
  const int sig = static_cast<int>(info.ssi_signo);
  SignalNote note{.signal = sig, .sender = static_cast<pid_t>(info.ssi_pid), .time = WallNow()};
  std::string text =
      "received " + SignalName(sig) + " from pid " + std::to_string(info.ssi_pid) + "; ";
  if (child_done_) {
    text += "not forwarded: the command had already exited";
  } else if (delivery_.interactive && info.ssi_code == SI_KERNEL) {
    text += "not forwarded: the terminal sent it to the command too";
  } else if (delivery_.slurm_step &&
             ProcessName(static_cast<pid_t>(info.ssi_pid)) == "slurmstepd") {
    text += "not forwarded: slurmstepd sends it to every process of the step";
  } else {
    const bool group = child_->pgid > 0 && ::kill(-child_->pgid, sig) == 0;
    if (!group) ::kill(child_->pid, sig);
    text += group ? "forwarded to process group " + std::to_string(child_->pgid)
                  : "forwarded to pid " + std::to_string(child_->pid);
    note.forwarded = true;
  }
  rec_->signals.push_back(note);
  log_->AddNote(text, note.time);
  log_->Flush();
}

void Session::Reap(bool block) {
  const bool init = ::getpid() == 1;  // a container's entrypoint also reaps orphans
  while (true) {
    int ws = 0;
    const pid_t p = ::waitpid(init ? -1 : child_->pid, &ws, block && !child_done_ ? 0 : WNOHANG);
    if (p == 0) return;
    if (p < 0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD && !child_done_) {  // reaped by someone else: status unknown
        child_done_ = true;
        rec_->end = WallNow();
        drain_until_ = Clock::now() + o_.drain_after_exit;
      }
      return;
    }
    if (p == child_->pid) {
      rec_->exit = ExitFromWaitStatus(ws);
      rec_->end = WallNow();
      child_done_ = true;
      drain_until_ = Clock::now() + o_.drain_after_exit;
      if (!init) return;
    }
  }
}

void SaveRecord(const WrapperOptions& o, const WrapperResult& res) {
  const fs::path path = res.node_dir / (res.record.id.stem + ".task.json");
  if (Status st = WriteFileAtomically(path, RenderTaskJson(res.record));
      !st.ok() && o.console_err >= 0) {
    (void)WriteAll(o.console_err, "denpex run: " + st.message() + "\n");
  }
}

// After the child: the exit line, the counts, the kernel log and nvidia-smi, task.json.
void Finish(const WrapperOptions& o, WrapperResult* res, TaskLog* log, KernelLogReader* kmsg,
            const sigset_t& mask) {
  TaskRecord& rec = res->record;
  if (rec.exit.kind != ExitInfo::Kind::kNotStarted) {
    const bool failed = rec.exit.kind != ExitInfo::Kind::kExited || rec.exit.code != 0;
    log->AddNote("pid " + std::to_string(rec.child_pid) + " " + DescribeExit(rec.exit), WallNow(),
                 failed);
  }
  log->Flush();
  rec.log = log->log().counts();
  rec.errors = log->errors().counts();
  const auto& err = log->log().error() ? log->log().error() : log->errors().error();
  if (err) {
    rec.log_error = err->message();
    if (o.console_err >= 0)
      (void)WriteAll(o.console_err, "denpex run: log files stopped: " + err->message() + "\n");
  }
  if (o.kernel_log && kmsg->fd() >= 0) {
    kmsg->ReadAvailable();
    Status st = MergeKernelLog(res->node_dir, kmsg->lines());
    rec.kernel = {.status = st.ok() ? kmsg->status() : st.message(),
                  .file = "kernel.log",
                  .lines = kmsg->lines().size()};
    if (kmsg->lost() > 0)
      rec.kernel.status += "; " + std::to_string(kmsg->lost()) + " records lost";
  }
  res->exit_code = ShellExitCode(rec.exit);
  const bool takes_snapshot = !rec.id.local_rank.value || *rec.id.local_rank.value == 0;
  if (!o.nvidia_smi) {
    rec.nvidia_smi.status = "disabled (--no-nvidia-smi)";
  } else if (!FindInPath("nvidia-smi")) {
    rec.nvidia_smi.status = "not found";
  } else if (!takes_snapshot) {
    rec.nvidia_smi.status = "skipped: local rank 0 takes the node's snapshot";
  } else {
    rec.nvidia_smi.status = "running";
    SaveRecord(o, *res);  // the exit is on disk before nvidia-smi gets a chance to hang
    rec.nvidia_smi = SnapshotNvidiaSmi(res->node_dir, mask);
  }
  SaveRecord(o, *res);
}

}  // namespace

std::string HostName() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  std::string h(buf);
  for (char& c : h) {
    if (c == '/') c = '_';
  }
  return (h.empty() || h == "." || h == "..") ? "localhost" : h;
}

Result<WrapperResult> RunWrapped(const WrapperOptions& o, const EnvLookup& env) {
  if (o.command.empty())
    return Status::InvalidArgument("no command given: denpex run --out DIR -- COMMAND...");
  WrapperResult res;
  TaskRecord& rec = res.record;
  rec.wrapper_pid = ::getpid();
  rec.start = WallNow();
  rec.command = o.command;
  std::error_code ec;
  rec.cwd = fs::current_path(ec).string();
  rec.max_bytes = o.max_bytes;
  rec.context_before = o.context_before;
  rec.context_after = o.context_after;
  rec.id = DescribeTask({.host_flag = o.host,
                         .local_host = HostName(),
                         .rank_env = o.rank_env,
                         .command = o.command,
                         .wrapper_pid = rec.wrapper_pid},
                        env);
  res.node_dir = o.out_dir / rec.id.host;
  if (fs::create_directories(res.node_dir, ec); ec) {
    return Status::IoError("cannot create " + res.node_dir.string() + ": " + ec.message() +
                           "; choose a writable --out");
  }
  rec.log_file = rec.id.stem + ".log";
  rec.errors_file = rec.id.stem + ".errors.log";
  auto log = TaskLog::Open(res.node_dir / rec.log_file, res.node_dir / rec.errors_file, o.max_bytes,
                           {.before = o.context_before, .after = o.context_after});
  if (!log.ok()) return log.status();
  KernelLogReader kmsg = o.kernel_log ? KernelLogReader::Open() : KernelLogReader();
  rec.kernel.status = o.kernel_log ? kmsg.status() : "disabled (--no-kernel-log)";

  auto guard = SignalGuard::Install();
  if (!guard.ok()) return guard.status();
  const Delivery delivery = DetectDelivery();
  auto child =
      SpawnChild(o.command, guard->old_mask(), !delivery.interactive && !delivery.slurm_step);
  if (!child.ok()) return child.status();
  if (child->exec_errno != 0) {
    rec.exit = {.kind = ExitInfo::Kind::kNotStarted,
                .code = child->exec_errno == ENOENT ? 127 : 126};
    rec.start_error = ErrnoText("cannot run " + o.command[0], child->exec_errno);
    rec.end = WallNow();
    log->AddNote(rec.start_error, rec.end, /*is_error=*/true);
    if (o.console_err >= 0) (void)WriteAll(o.console_err, "denpex run: " + rec.start_error + "\n");
    Finish(o, &res, &*log, &kmsg, guard->old_mask());
    return res;
  }
  rec.child_pid = child->pid;
  rec.child_pgid = child->pgid > 0 ? child->pgid : 0;
  log->AddNote("started pid " + std::to_string(child->pid) + ": " + JoinCommand(o.command),
               WallNow());
  log->Flush();
  SaveRecord(o, res);
  Session(o, &*log, &rec, &*child, guard->fd(), &kmsg, delivery).Run();
  Finish(o, &res, &*log, &kmsg, guard->old_mask());
  return res;
}

}  // namespace denpex::cli::run
