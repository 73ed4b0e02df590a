// `denpex simulate --replay`: the plan (each file's lines and their due times) and the loop
// that writes them (see replay.h).
#include "replay.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "shapes/shapes_internal.h"

namespace denpex::cli {
namespace fs = std::filesystem;

namespace {

// The scheduler wakes at most this often: every line due by then goes out in one batch, so the
// number of writes is bounded by the wall time and the files, not the lines.
constexpr std::int64_t kTickNs = 10 * kNsPerMs;

struct FileSteps {
  std::vector<std::pair<TimeNs, std::size_t>> steps;  // (time, end), times non-decreasing
  bool timed = false;

  // The line ending at `end` is due at `t`: one step with the lines before it due then too.
  void Add(TimeNs t, std::size_t end) {
    if (!steps.empty() && steps.back().first == t) {
      steps.back().second = end;
    } else {
      steps.emplace_back(t, end);
    }
  }
};

// One file's lines merged into steps of equal time. Lines before `start` are due at `start`.
FileSteps StepsOf(std::string_view text, int year, std::optional<TimeNs> start) {
  FileSteps f;
  std::optional<TimeNs> cur;  // the lines before the first stamp go out with it
  for (std::size_t b = 0; b < text.size();) {
    std::size_t e = text.find('\n', b);
    e = e == std::string_view::npos ? text.size() : e + 1;
    if (auto t = shapes::LineTime(text.substr(b, e - b), year)) {
      if (start) t = std::max(*t, *start);
      cur = cur ? std::max(*cur, *t) : *t;  // file order is kept: never back in time
    }
    if (cur) f.Add(*cur, e);
    b = e;
  }
  f.timed = cur.has_value();
  return f;
}

// A file with no stamp of its own, written as its process ran: its n lines spread evenly over
// [start, end], the k-th (from 1) due at start + k/n of the span, so none comes before the job
// began and the last is there when the replay ends (the file is whole when it is collected).
// Nothing in the file says when each line was written; an even pace is what a job printing at
// a steady rate writes. The file's own lines are all it goes by: a short file that ends in a
// traceback gets it earlier than it was written, a long one later.
FileSteps PaceUntimed(std::string_view text, TimeNs start, TimeNs end) {
  std::size_t n = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++n;  // a cut last line is a line
  FileSteps f;
  const double span = static_cast<double>(end - start);
  std::size_t k = 0;
  for (std::size_t b = 0; b < text.size();) {
    std::size_t e = text.find('\n', b);
    e = e == std::string_view::npos ? text.size() : e + 1;
    ++k;
    const TimeNs t =
        k == n
            ? end
            : start + static_cast<TimeNs>(span * static_cast<double>(k) / static_cast<double>(n));
    f.Add(t, e);
    b = e;
  }
  return f;
}

}  // namespace

bool WrittenWhole(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.starts_with("nvidia-smi") || name.starts_with("ib_counters") || name == "events.txt") {
    return true;
  }
  // A folder of its path: checkpoint files, `kubectl describe` of each pod.
  for (std::size_t b = 0; slash != std::string_view::npos && b < slash;) {
    const std::size_t e = path.find('/', b);
    const std::string_view folder = path.substr(b, e - b);
    if (folder == "checkpoints" || folder == "describe") return true;
    b = e + 1;
  }
  return false;
}

ReplayPlan PlanReplay(std::span<const std::string_view> texts, std::span<const std::string> paths,
                      int year, std::optional<TimeNs> start, const ReplayOptions& options) {
  ReplayPlan plan;
  std::vector<FileSteps> files;
  files.reserve(texts.size());
  std::optional<TimeNs> first, last;
  for (std::string_view text : texts) {
    files.push_back(StepsOf(text, year, start));
    const auto& s = files.back().steps;
    if (s.empty()) continue;
    first = first ? std::min(*first, s.front().first) : s.front().first;
    last = last ? std::max(*last, s.back().first) : s.back().first;
  }
  plan.start = start ? *start : first.value_or(0);
  plan.end = std::max(plan.start, last.value_or(plan.start));
  for (std::uint32_t i = 0; i < files.size(); ++i) {
    plan.timed.push_back(files[i].timed);
    plan.paced.push_back(options.pace_untimed && !files[i].timed && !texts[i].empty() &&
                         !WrittenWhole(paths[i]));
    if (texts[i].empty()) {  // opened by its process when it started, and never written
      plan.steps.push_back({.time = plan.start, .file = i, .end = 0});
      continue;
    }
    if (plan.paced[i]) {
      files[i] = PaceUntimed(texts[i], plan.start, plan.end);
    } else if (!files[i].timed) {  // collected after the fact: whole, when the replay ends
      plan.steps.push_back({.time = plan.end, .file = i, .end = texts[i].size()});
      continue;
    }
    for (const auto& [t, end] : files[i].steps) {
      plan.steps.push_back({.time = t, .file = i, .end = end});
    }
  }
  std::sort(plan.steps.begin(), plan.steps.end(), [](const ReplayStep& a, const ReplayStep& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.file != b.file) return a.file < b.file;
    return a.end < b.end;
  });
  const double max_gap_ns =
      options.max_gap_s ? *options.max_gap_s * 1e9 : std::numeric_limits<double>::infinity();
  TimeNs prev = plan.start;
  std::int64_t wall = 0;
  for (ReplayStep& s : plan.steps) {
    const double gap = static_cast<double>(s.time - prev) / options.speed;
    wall += static_cast<std::int64_t>(std::min(gap, max_gap_ns));
    prev = s.time;
    s.wall_ns = wall;
  }
  plan.wall_ns = wall;
  return plan;
}

std::vector<ReplayWrite> TakeDue(const ReplayPlan& plan, std::size_t* next, std::int64_t now_ns,
                                 std::vector<std::size_t>* written) {
  std::vector<ReplayWrite> out;
  std::size_t k = *next;
  for (; k < plan.steps.size() && plan.steps[k].wall_ns <= now_ns; ++k) {
    const ReplayStep& s = plan.steps[k];
    out.push_back({.file = s.file, .begin = (*written)[s.file], .end = s.end});
    (*written)[s.file] = s.end;
  }
  *next = k;
  // One write per file: a file's steps come in file order, so its writes join end to end.
  std::stable_sort(out.begin(), out.end(),
                   [](const ReplayWrite& a, const ReplayWrite& b) { return a.file < b.file; });
  std::vector<ReplayWrite> joined;
  for (const ReplayWrite& w : out) {
    if (!joined.empty() && joined.back().file == w.file) {
      joined.back().end = w.end;
    } else {
      joined.push_back(w);
    }
  }
  return joined;
}

namespace {

Result<std::string> ReadAll(const fs::path& p, struct timespec* mtime) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(p.string() + ": cannot read: " + std::strerror(errno));
  struct stat st {};
  std::string data;
  if (::fstat(fd, &st) == 0) {
    *mtime = st.st_mtim;
    data.resize(static_cast<std::size_t>(st.st_size));
  }
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

}  // namespace

Result<Staged> ReadStaged(const fs::path& from) {
  Staged s;
  std::error_code ec;
  const std::size_t prefix = (from / "").generic_string().size();
  for (auto it = fs::recursive_directory_iterator(from, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    // Below `from`: its path with `from/` taken off (fs::relative resolves links, a syscall each).
    const std::string rel = it->path().generic_string().substr(prefix);
    if (it->is_symlink(ec)) {
      s.moved.push_back(rel);
    } else if (it->is_directory(ec)) {
      s.dirs.push_back(rel);
    } else if (it->is_regular_file(ec)) {
      s.texts.push_back(rel);
    } else {
      s.moved.push_back(rel);
    }
  }
  if (ec) return Status::IoError(from.string() + ": " + ec.message());
  std::sort(s.dirs.begin(), s.dirs.end());
  std::sort(s.texts.begin(), s.texts.end());
  std::vector<std::string> texts;
  for (const std::string& rel : s.texts) {
    struct timespec mtime {};
    auto data = ReadAll(from / rel, &mtime);
    if (!data.ok()) return data.status();
    if (std::memchr(data->data(), 0, data->size()) != nullptr) {
      s.moved.push_back(rel);
      continue;
    }
    texts.push_back(rel);
    s.contents.push_back(std::move(*data));
    s.mtime.push_back(mtime);
  }
  s.texts = std::move(texts);
  std::sort(s.moved.begin(), s.moved.end());
  return s;
}

namespace {

std::string Seconds(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(s < 10 ? 2 : 1) << s << " s";
  return o.str();
}

// The scheduler: sleeps until the next step is due, then writes every due line, one write
// per file, and waits at least kTickNs before the next batch.
Status WriteInTime(const ReplayPlan& plan, const Staged& s, const fs::path& to,
                   const ReplayOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::vector<std::size_t> written(s.texts.size(), 0);
  ReplayFiles files(s, to);
  for (std::size_t next = 0; next < plan.steps.size();) {
    const auto due = t0 + std::chrono::nanoseconds(plan.steps[next].wall_ns);
    if (Clock::now() < due) std::this_thread::sleep_until(due);
    const auto batch = Clock::now();
    const std::int64_t now_ns = std::chrono::nanoseconds(batch - t0).count();
    for (const ReplayWrite& w : TakeDue(plan, &next, now_ns, &written)) {
      DENPEX_RETURN_IF_ERROR(files.Write(w));
    }
    if (options.on_batch) options.on_batch(now_ns, plan.wall_ns);
    if (next < plan.steps.size()) std::this_thread::sleep_until(batch + Nanos(kTickNs));
  }
  return Status::Ok();
}

}  // namespace

ReplayFiles::ReplayFiles(const Staged& staged, fs::path to)
    : staged_(staged),
      to_(std::move(to)),
      fds_(staged.texts.size(), -1),
      made_(staged.texts.size(), false) {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    if (lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &lim);
      ::getrlimit(RLIMIT_NOFILE, &lim);
    }
    const auto n = static_cast<std::size_t>(std::min<rlim_t>(lim.rlim_cur, 1 << 20));
    cap_ = n > 2 * kSpareFds ? n - kSpareFds : n / 2;
  }
}

std::atomic<std::size_t> ReplayFiles::kept_{0};

ReplayFiles::~ReplayFiles() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
  kept_.fetch_sub(open_);
}

// One write, unless the kernel takes less; a file past the descriptors' cap is opened for each.
Status ReplayFiles::Write(const ReplayWrite& w) {
  const fs::path path = to_ / staged_.texts[w.file];
  if (!made_[w.file]) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      return Status::IoError(path.parent_path().string() + ": cannot create: " + ec.message());
    made_[w.file] = true;
  }
  std::string_view data =
      std::string_view(staged_.contents[w.file]).substr(w.begin, w.end - w.begin);
  int fd = fds_[w.file];
  if (fd < 0) fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(path.string() + ": cannot write: " + std::strerror(errno));
  Status st = Status::Ok();
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      st = Status::IoError(path.string() + ": write failed: " + std::strerror(errno));
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  bool keep = false;
  if (fds_[w.file] < 0 && st.ok()) {
    keep = kept_.fetch_add(1) < cap_;
    if (!keep) kept_.fetch_sub(1);
  }
  if (keep) {
    fds_[w.file] = fd;
    ++open_;
  } else if (fds_[w.file] < 0) {
    ::close(fd);
  }
  return st;
}

Status Replay(const fs::path& from, const fs::path& to, int year, std::optional<TimeNs> start,
              const ReplayOptions& options, std::ostream& out) {
  auto staged = ReadStaged(from);
  if (!staged.ok()) return staged.status();
  const Staged& s = *staged;
  std::vector<std::string_view> views(s.contents.begin(), s.contents.end());
  const ReplayPlan plan = PlanReplay(views, s.texts, year, start, options);

  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) return Status::IoError(to.string() + ": cannot create: " + ec.message());
  std::size_t at_end = s.moved.size(), empty = 0, paced = 0;
  for (std::size_t i = 0; i < views.size(); ++i) {
    if (views[i].empty()) {
      ++empty;
    } else if (plan.paced[i]) {
      ++paced;
    } else if (!plan.timed[i]) {
      ++at_end;
    }
  }
  out << "replaying into " << to.string() << ": "
      << Seconds(static_cast<double>(plan.end - plan.start) / 1e9) << " simulated from "
      << FormatRfc3339(plan.start) << " in " << Seconds(static_cast<double>(plan.wall_ns) / 1e9)
      << " of wall time (--replay " << options.speed << "); "
      << views.size() - at_end + s.moved.size() - empty << " files line by line (" << paced
      << " without a stamp, paced over the span), " << at_end << " written at the end, " << empty
      << " empty (created at the start)\n"
      << std::flush;

  DENPEX_RETURN_IF_ERROR(WriteInTime(plan, s, to, options));

  // What is not text moves whole; empty directories are made; every replayed file takes the
  // modification time it had when staged (checkpoint verification compares them with the logs).
  for (const std::string& rel : s.dirs) fs::create_directories(to / rel, ec);
  for (const std::string& rel : s.moved) {
    fs::create_directories((to / rel).parent_path(), ec);
    fs::rename(from / rel, to / rel, ec);
    if (ec) return Status::IoError((to / rel).string() + ": cannot move: " + ec.message());
  }
  for (std::size_t i = 0; i < s.texts.size(); ++i) {
    const struct timespec times[2] = {{.tv_sec = 0, .tv_nsec = UTIME_OMIT}, s.mtime[i]};
    if (::utimensat(AT_FDCWD, (to / s.texts[i]).c_str(), times, 0) != 0) {
      return Status::IoError((to / s.texts[i]).string() +
                             ": cannot set its time: " + std::strerror(errno));
    }
  }
  fs::remove_all(from, ec);
  if (ec) return Status::IoError(from.string() + ": cannot remove: " + ec.message());
  return Status::Ok();
}

}  // namespace denpex::cli
