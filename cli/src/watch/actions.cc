#include "watch/actions.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "denpex/common/text.h"
#include "run/child.h"
#include "run/posix_io.h"
#include "watch/http_reply.h"

extern char** environ;

namespace denpex::cli {

using run::ErrnoText;
using run::Fd;
using Clock = std::chrono::steady_clock;
using webhook::IEquals;
using webhook::JudgeReply;
using webhook::kMaxReplyBytes;
using webhook::ReplyEnd;

namespace {

#ifndef DENPEX_VERSION
#define DENPEX_VERSION "unknown"
#endif
constexpr std::string_view kUserAgent = "denpex-watch/" DENPEX_VERSION;

// Milliseconds left until `deadline`, rounded up, for poll(2); 0 once it has passed.
int MillisLeft(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

// Waits for `events` on `fd` until `deadline`: true when ready, false when the time ran out.
bool PollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

// When a POST must be done by, and the timeout that set it (for the messages).
struct Deadline {
  Clock::time_point at;
  std::chrono::milliseconds timeout;
  std::string Within() const { return "within " + std::to_string(timeout.count()) + " ms"; }
};

// ---------------------------------------------------------------------------- connect, send

Result<Fd> Connect(const HttpUrl& u, const Deadline& deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  const std::string port = std::to_string(u.port);
  const int rc = ::getaddrinfo(u.host.c_str(), port.c_str(), &hints, &list);
  if (rc != 0) {
    return Status::IoError("cannot resolve " + u.host + ": " +
                           (rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
  }
  std::string last_error = "no address";
  bool timed_out = false;
  Fd sock;
  for (addrinfo* a = list; a != nullptr && !sock.valid(); a = a->ai_next) {
    Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      last_error = ErrnoText("socket", errno);
      continue;
    }
    if (::connect(s.get(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_error = ErrnoText("connect", errno);
        continue;
      }
      if (!PollUntil(s.get(), POLLOUT, deadline.at)) {
        timed_out = true;
        break;
      }
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        last_error = ErrnoText("connect", err);
        continue;
      }
    }
    sock = std::move(s);
  }
  ::freeaddrinfo(list);
  if (sock.valid()) return sock;
  if (timed_out) return Status::IoError("no connection " + deadline.Within());
  return Status::IoError(last_error);
}

Status SendAll(int fd, std::string_view data, const Deadline& deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Status::IoError(ErrnoText("send", errno));
    if (!PollUntil(fd, POLLOUT, deadline.at)) {
      return Status::IoError("the request could not be sent " + deadline.Within());
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------- the reply

// Reads the reply until JudgeReply has its verdict (http_reply.h).
Status ReadReply(int fd, const Deadline& deadline) {
  std::string buf;
  for (;;) {
    if (!PollUntil(fd, POLLIN, deadline.at)) {
      if (auto verdict = JudgeReply(buf, ReplyEnd::kGaveUp)) return *verdict;
      return Status::IoError("no reply " + deadline.Within());
    }
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, std::min(sizeof chunk, kMaxReplyBytes - buf.size()), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      const int err = errno;
      if (auto verdict = JudgeReply(buf, ReplyEnd::kGaveUp)) return *verdict;
      return Status::IoError(ErrnoText("recv", err));
    }
    buf.append(chunk, static_cast<std::size_t>(n));
    const ReplyEnd end = n == 0 ? ReplyEnd::kClosed : ReplyEnd::kOpen;
    if (auto verdict = JudgeReply(buf, end)) return *verdict;
  }
}

}  // namespace

// ---------------------------------------------------------------------------- ParseHttpUrl

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  const auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("webhook URL '" + EscapeControlBytes(url) +
                                   "': " + std::string(why));
  };
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return bad("expected http://host[:port][/path]");
  const std::string_view scheme = url.substr(0, sep);
  if (IEquals(scheme, "https")) {
    return bad(
        "https is not supported: denpex watch posts plain HTTP only. Run a plain-HTTP relay on "
        "this node (a local forwarder listening on 127.0.0.1 that posts on over HTTPS) and give "
        "its http:// URL");
  }
  if (!IEquals(scheme, "http")) return bad("only http:// URLs are supported");
  std::string_view rest = url.substr(sep + 3);
  const std::size_t fragment = rest.find('#');
  if (fragment != std::string_view::npos) rest = rest.substr(0, fragment);
  const std::size_t path_at = rest.find_first_of("/?");
  HttpUrl u;
  u.authority = std::string(rest.substr(0, path_at));
  u.target = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
  if (u.target.front() == '?') u.target.insert(0, "/");
  if (u.target.find_first_of(" \t\r\n") != std::string::npos) {
    return bad("the path has white space or a line break (percent-encode it)");
  }
  const std::string_view auth = u.authority;
  if (auth.find('@') != std::string_view::npos)
    return bad("user info (user@host) is not supported");
  std::optional<std::string_view> port;  // the text after the host's ':', when there is one
  if (!auth.empty() && auth.front() == '[') {
    const std::size_t close = auth.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 literal needs its closing ']'");
    u.host = std::string(auth.substr(1, close - 1));
    if (u.host.empty()) return bad("the IPv6 literal is empty");
    const std::string_view after = auth.substr(close + 1);
    if (!after.empty() && after.front() != ':') return bad("expected ':port' after ']'");
    if (!after.empty()) port = after.substr(1);
  } else {
    const std::size_t colon = auth.find(':');
    u.host = std::string(auth.substr(0, colon));
    if (colon != std::string_view::npos) port = auth.substr(colon + 1);
  }
  if (u.host.empty()) return bad("no host");
  if (u.host.find_first_of(" \t\r\n") != std::string::npos) return bad("the host has white space");
  if (port) {
    unsigned value = 0;
    const char* end = port->data() + port->size();
    const auto [at, ec] = std::from_chars(port->data(), end, value);
    if (port->empty() || ec != std::errc() || at != end || value == 0 || value > 65535) {
      return bad("the port must be a number from 1 to 65535");
    }
    u.port = static_cast<std::uint16_t>(value);
  }
  return u;
}

// ---------------------------------------------------------------------------- PostJson

Status PostJson(std::string_view url, std::string_view json, std::chrono::milliseconds timeout) {
  const Deadline deadline{Clock::now() + timeout, timeout};
  auto u = ParseHttpUrl(url);
  if (!u.ok()) return u.status();
  const auto fail = [&](const Status& s) {
    return Status::IoError("POST " + EscapeControlBytes(url) + ": " + s.message());
  };
  auto sock = Connect(*u, deadline);
  if (!sock.ok()) return fail(sock.status());
  std::string head = "POST " + u->target + " HTTP/1.1\r\n";
  head += "Host: " + u->authority + "\r\n";
  head += "Content-Type: application/json\r\n";
  head += "Content-Length: " + std::to_string(json.size()) + "\r\n";
  head += "Connection: close\r\n";
  head += "User-Agent: " + std::string(kUserAgent) + "\r\n\r\n";
  Status s = SendAll(sock->get(), head, deadline);
  if (s.ok()) s = SendAll(sock->get(), json, deadline);
  // A server may answer (say, 413) and close before reading the whole body: its reply is the
  // better error than the send's broken pipe.
  const Status reply = ReadReply(sock->get(), deadline);
  if (!reply.ok()) return fail(s.ok() || reply.message().starts_with("HTTP ") ? reply : s);
  if (!s.ok()) return fail(s);
  return Status::Ok();
}

// ---------------------------------------------------------------------------- HookRunner

namespace {

std::string HookName(std::string_view command) {
  return "hook '" + EscapeControlBytes(command) + "'";
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecHook(char* const* argv, char* const* envp, pid_t parent, int status) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the watch is already gone
  const int null = ::open("/dev/null", O_RDONLY);
  if (null < 0 || ::dup2(null, STDIN_FILENO) < 0) ::_exit(127);
  if (null != STDIN_FILENO) ::close(null);
  // The watch's own descriptors (logs it follows, sockets) stay out of the hook.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGCHLD, SIGINT, SIGQUIT, SIGTERM, SIGHUP}) {
    ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(argv[0], argv, envp);
  const int e = errno;
  [[maybe_unused]] const ssize_t n = ::write(status, &e, sizeof e);
  ::_exit(127);
}

}  // namespace

HookRunner::HookRunner(std::string command, std::chrono::milliseconds timeout)
    : command_(std::move(command)), timeout_(timeout) {}

HookRunner::~HookRunner() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

void HookRunner::Request(const std::filesystem::path& diagnosis_json) {
  pending_ = diagnosis_json;
  if (pid_ <= 0) StartNext();
}

void HookRunner::StartNext() {
  if (!pending_) return;
  const std::string path = pending_->string();
  pending_.reset();

  // Everything exec needs is built before fork: the child may only make async-signal-safe
  // calls (another thread may hold the allocator's lock at the fork).
  std::vector<std::string> args = {"/bin/sh", "-c", command_, "denpex-watch", path};
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("DENPEX_DIAGNOSIS=")) env.emplace_back(*e);
  }
  env.push_back("DENPEX_DIAGNOSIS=" + path);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    outcomes_.push_back(Status::IoError(HookName(command_) + ": " + ErrnoText("pipe2", errno)));
    return;
  }
  Fd status_read(fds[0]), status_write(fds[1]);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcomes_.push_back(Status::IoError(HookName(command_) + ": " + ErrnoText("fork", errno)));
    return;
  }
  if (pid == 0) ExecHook(argv.data(), envp.data(), parent, status_write.get());
  ::setpgid(pid, pid);  // also done by the child: whichever runs first wins the race
  status_write.Reset();
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_read.get(), &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    outcomes_.push_back(
        Status::IoError(HookName(command_) + ": " + ErrnoText("cannot run /bin/sh", exec_errno)));
    return;
  }
  pid_ = pid;
  // The syscall, not glibc 2.36's wrapper: its <sys/pidfd.h> lacks C linkage. -1 on kernels
  // without it (before 5.3): Wait then polls.
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  deadline_ = Clock::now() + timeout_;
}

// The running hook's outcome once it has ended (or been killed past its deadline); nullopt
// while it runs. `block`: wait for it, up to its deadline.
std::optional<Status> HookRunner::Reap(bool block) {
  for (;;) {
    int ws = 0;
    const pid_t r = ::waitpid(pid_, &ws, WNOHANG);
    std::optional<Status> out;
    if (r == pid_) {
      const run::ExitInfo e = run::ExitFromWaitStatus(ws);
      if (e.kind == run::ExitInfo::Kind::kExited && e.code == 0) {
        out = Status::Ok();
      } else {
        out = Status::IoError(HookName(command_) + " " + run::DescribeExit(e));
      }
    } else if (r < 0 && errno != EINTR) {
      out = Status::IoError(HookName(command_) + ": " + ErrnoText("waitpid", errno));
    } else if (r == 0 && Clock::now() >= deadline_) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
      out = Status::IoError(HookName(command_) + " still ran after its timeout of " +
                            std::to_string(timeout_.count()) +
                            " ms; its process group was killed (SIGKILL)");
    }
    if (out) {
      pid_ = -1;
      if (pidfd_ >= 0) ::close(pidfd_);
      pidfd_ = -1;
      return out;
    }
    if (!block) return std::nullopt;
    if (pidfd_ >= 0) {
      PollUntil(pidfd_, POLLIN, deadline_);
    } else {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(std::chrono::milliseconds(5), deadline_ - Clock::now()));
    }
  }
}

std::vector<Status> HookRunner::Poll() {
  if (pid_ > 0) {
    if (auto s = Reap(/*block=*/false)) outcomes_.push_back(std::move(*s));
  }
  if (pid_ <= 0) StartNext();
  return std::exchange(outcomes_, {});
}

std::vector<Status> HookRunner::Wait() {
  while (busy()) {
    if (pid_ > 0) outcomes_.push_back(*Reap(/*block=*/true));
    StartNext();
  }
  return std::exchange(outcomes_, {});
}

Status RunHook(std::string_view command, const std::filesystem::path& diagnosis_json,
               std::chrono::milliseconds timeout) {
  HookRunner runner{std::string(command), timeout};
  runner.Request(diagnosis_json);
  std::vector<Status> outcomes = runner.Wait();
  return outcomes.empty() ? Status::Internal("hook produced no outcome") : outcomes.back();
}

}  // namespace denpex::cli
