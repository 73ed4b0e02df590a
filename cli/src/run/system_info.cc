#include "run/system_info.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <unordered_set>

#include "run/child.h"

namespace denpex::cli::run {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kMaxKernelFileBytes = 64u << 20;
constexpr std::size_t kMaxSnapshotBytes = 4u << 20;

std::optional<std::uint64_t> ParseU64(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// The whole file (up to `limit` bytes); empty when it does not exist.
Result<std::string> ReadSmallFile(const fs::path& path, std::uint64_t limit) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::string();
    return Status::IoError(ErrnoText("cannot open " + path.string(), errno));
  }
  std::string out;
  char buf[65536];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(ErrnoText("cannot read " + path.string(), errno));
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// Reads the child's stdout and stderr into `out` until both close or `deadline` passes.
// Returns false on the deadline.
bool CollectOutput(Child& c, std::chrono::steady_clock::time_point deadline, std::string* out) {
  Fd* streams[] = {&c.out, &c.err};
  while (c.out.valid() || c.err.valid()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2];
    nfds_t n = 0;
    for (Fd* s : streams) {
      if (s->valid()) fds[n++] = {s->get(), POLLIN, 0};
    }
    if (::poll(fds, n, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
    for (Fd* s : streams) {
      if (!s->valid()) continue;
      char buf[16384];
      const ssize_t r = ::read(s->get(), buf, sizeof buf);
      if (r > 0 && out->size() < kMaxSnapshotBytes) out->append(buf, static_cast<std::size_t>(r));
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) s->Reset();
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> FormatKmsgRecord(std::string_view record) {
  const std::size_t semi = record.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  // <prio>,<seq>,<µs>,<flags>[,...]
  std::string_view head = record.substr(0, semi);
  std::string_view fields[3];
  for (auto& f : fields) {
    const std::size_t comma = head.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    f = head.substr(0, comma);
    head.remove_prefix(comma + 1);
  }
  const auto us = ParseU64(fields[2]);
  if (!us || !ParseU64(fields[0]) || !ParseU64(fields[1])) return std::nullopt;
  std::string_view msg = record.substr(semi + 1);
  msg = msg.substr(0, msg.find('\n'));  // continuation lines (" SUBSYSTEM=...") are dropped
  std::string secs = std::to_string(*us / 1'000'000);
  std::string frac = std::to_string(*us % 1'000'000);
  std::string line = "[";
  if (secs.size() < 5) line.append(5 - secs.size(), ' ');
  line += secs + "." + std::string(6 - frac.size(), '0') + frac + "] ";
  line.append(msg);
  return line;
}

std::optional<std::uint64_t> KernelLineMicros(std::string_view line) {
  if (line.empty() || line[0] != '[') return std::nullopt;
  const std::size_t close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view stamp = line.substr(1, close - 1);
  while (!stamp.empty() && stamp[0] == ' ') stamp.remove_prefix(1);
  const std::size_t dot = stamp.find('.');
  if (dot == std::string_view::npos || stamp.size() - dot - 1 != 6) return std::nullopt;
  const auto secs = ParseU64(stamp.substr(0, dot));
  const auto us = ParseU64(stamp.substr(dot + 1));
  if (!secs || !us) return std::nullopt;
  return *secs * 1'000'000 + *us;
}

// ---------------------------------------------------------------------------- KernelLogReader

KernelLogReader KernelLogReader::Open(const char* path) {
  KernelLogReader r;
  r.fd_.Reset(::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!r.fd_.valid()) {
    r.status_ = "unavailable: " + ErrnoText(path, errno);
    return r;
  }
  // Only what is printed from now on: no clock comparison between the kernel's printk
  // stamps and ours is needed.
  ::lseek(r.fd_.get(), 0, SEEK_END);
  r.status_ = "ok";
  return r;
}

void KernelLogReader::ReadAvailable() {
  char buf[16384];
  while (fd_.valid()) {
    const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      if (errno == EPIPE) {  // records overwritten before we read them
        lost_ += 1;
        continue;
      }
      status_ = "stopped: " + ErrnoText("read", errno);
      fd_.Reset();
      return;
    }
    if (n == 0) return;
    auto line = FormatKmsgRecord(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!line) continue;
    if (bytes_ + line->size() > kMaxBytes) {
      lost_ += 1;
      continue;
    }
    bytes_ += line->size();
    lines_.push_back(std::move(*line));
  }
}

Status MergeKernelLog(const fs::path& node_dir, const std::vector<std::string>& lines) {
  Fd dir(::open(node_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return Status::IoError(ErrnoText("cannot open " + node_dir.string(), errno));
  while (::flock(dir.get(), LOCK_EX) != 0) {
    if (errno != EINTR)
      return Status::IoError(ErrnoText("cannot lock " + node_dir.string(), errno));
  }
  const fs::path path = node_dir / "kernel.log";
  const bool exists = ::access(path.c_str(), F_OK) == 0;
  auto text = ReadSmallFile(path, kMaxKernelFileBytes);
  if (!text.ok()) return text.status();
  std::vector<std::string_view> merged = SplitLines(*text);
  std::unordered_set<std::string_view> have(merged.begin(), merged.end());
  const std::size_t before = merged.size();
  for (const std::string& l : lines) {
    if (have.insert(l).second) merged.push_back(l);
  }
  if (exists && merged.size() == before) return Status::Ok();
  std::stable_sort(merged.begin(), merged.end(), [](std::string_view a, std::string_view b) {
    return KernelLineMicros(a).value_or(0) < KernelLineMicros(b).value_or(0);
  });
  std::string out;
  for (std::string_view l : merged) {
    out.append(l);
    out += '\n';
  }
  return WriteFileAtomically(path, out);  // the lock is released when `dir` closes
}

// ---------------------------------------------------------------------------- nvidia-smi

std::optional<std::string> FindInPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const std::size_t colon = dirs.find(':');
    std::string candidate(dirs.substr(0, colon));
    if (candidate.empty())
      candidate.push_back('.');  // an empty PATH entry is the current directory
    candidate.push_back('/');
    candidate.append(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

ToolRun RunTool(const std::vector<std::string>& argv, const sigset_t& child_mask,
                std::chrono::milliseconds limit) {
  ToolRun r;
  const auto exe = FindInPath(argv.front());
  if (!exe) {
    r.status = "not found";
    return r;
  }
  std::vector<std::string> command = argv;
  command.front() = *exe;
  auto child = SpawnChild(command, child_mask, /*own_group=*/false);
  if (!child.ok() || child->exec_errno != 0) {
    r.status = "failed: " + (child.ok() ? ErrnoText("exec " + *exe, child->exec_errno)
                                        : child.status().message());
    return r;
  }
  r.started = true;
  const bool finished = CollectOutput(*child, std::chrono::steady_clock::now() + limit, &r.output);
  if (!finished) ::kill(child->pid, SIGKILL);
  int ws = 0;
  while (::waitpid(child->pid, &ws, 0) < 0 && errno == EINTR) {
  }
  const ExitInfo e = ExitFromWaitStatus(ws);
  if (!finished) {
    r.status = "timed out after " + std::to_string(limit.count()) + " ms";
  } else {
    r.status = (e.kind == ExitInfo::Kind::kExited && e.code == 0)
                   ? "ok"
                   : "failed: " + argv.front() + " " + DescribeExit(e);
  }
  return r;
}

SideFile RunToolInto(const fs::path& dir, const std::string& file,
                     const std::vector<std::string>& argv, const sigset_t& child_mask,
                     std::chrono::milliseconds limit) {
  ToolRun r = RunTool(argv, child_mask, limit);
  SideFile f{.status = std::move(r.status)};
  if (!r.started) return f;
  if (Status st = WriteFileAtomically(dir / file, r.output); !st.ok()) {
    f.status += "; " + st.message();
    return f;
  }
  f.file = file;
  f.lines = static_cast<std::uint64_t>(std::count(r.output.begin(), r.output.end(), '\n'));
  return f;
}

SideFile SnapshotNvidiaSmi(const fs::path& node_dir, const sigset_t& child_mask,
                           std::chrono::milliseconds limit) {
  return RunToolInto(node_dir, "nvidia-smi.log", {"nvidia-smi"}, child_mask, limit);
}

}  // namespace denpex::cli::run
