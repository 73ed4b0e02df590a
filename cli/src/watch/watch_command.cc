// `denpex watch DIR`: follows a running job's incident directory (inotify on every folder, and a
// full look at intervals for what inotify cannot see: files written from other machines on a
// shared file system), evaluates the engine's provisional diagnosis when a new event arrives or
// time passes (a progress stall needs no new line), and acts on each change: the JSON file,
// one line on stdout, the --on-diagnosis command, the --webhook POST. When the job ends (its PID,
// its Slurm job, a signal, --timeout) the final diagnosis is `denpex diagnose`'s. docs/watch.md.
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "denpex/cli/commands.h"
#include "denpex/common/output_file.h"
#include "denpex/common/status.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/watch.h"
#include "denpex/proto/json_io.h"
#include "run/posix_io.h"
#include "watch/actions.h"
#include "watch/watch_eval.h"

namespace denpex::cli {
namespace fs = std::filesystem;
namespace {

using run::StopRequested;
using run::WallNow;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

int Fail(std::ostream& err, const Status& st) {
  err << "denpex watch: " << st.message() << "\n";
  return ExitCodeFor(st);
}

std::string Stamp(TimeNs t) { return FormatRfc3339(t - t % 1'000'000); }

// inotify over every folder of the incident directory: the paths of the files that changed, and
// whether a folder appeared (its files may predate its watch: a full look is due).
class Inotify {
 public:
  explicit Inotify(const fs::path& root)
      : root_(root), fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ >= 0) AddTree(root_);
  }
  Inotify(const Inotify&) = delete;
  Inotify& operator=(const Inotify&) = delete;
  ~Inotify() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0 && !lost_; }
  int fd() const { return fd_; }
  // Reads what is queued: the changed files' relative paths into *changed; true when a folder
  // appeared or the queue overflowed (look at everything).
  bool Drain(std::set<std::string>* changed) {
    bool rescan = false;
    alignas(inotify_event) std::array<char, 64 * 1024> buf;
    for (;;) {
      const ssize_t n = read(fd_, buf.data(), buf.size());
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf.data() + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
        if (ev->mask & IN_Q_OVERFLOW) {
          rescan = true;
          continue;
        }
        const auto dir = dirs_.find(ev->wd);
        if (dir == dirs_.end() || ev->len == 0) continue;
        const std::string rel =
            dir->second.empty() ? std::string(ev->name) : dir->second + "/" + ev->name;
        if (ev->mask & IN_ISDIR) {
          if (ev->mask & (IN_CREATE | IN_MOVED_TO)) AddTree(root_ / rel), rescan = true;
          continue;
        }
        changed->insert(rel);
      }
    }
    return rescan;
  }

 private:
  void AddTree(const fs::path& dir) {
    std::error_code ec;
    Add(dir);
    for (auto it = fs::recursive_directory_iterator(
             dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) Add(it->path());
    }
  }
  void Add(const fs::path& dir) {
    const int wd = inotify_add_watch(
        fd_, dir.c_str(), IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
    if (wd < 0) {
      lost_ = true;  // out of watches (fs.inotify.max_user_watches): full looks only
      return;
    }
    const std::string rel = fs::relative(dir, root_).generic_string();
    dirs_[wd] = rel == "." ? std::string() : rel;
  }

  fs::path root_;
  int fd_;
  bool lost_ = false;
  std::map<int, std::string> dirs_;
};

// Whether the job being followed has ended (its PID, its Slurm job).
class JobEnd {
 public:
  explicit JobEnd(const WatchArgs& a) : pid_(a.until_exit), slurm_(a.slurm_job) {}
  bool Ended(std::string* how) {
    if (pid_ > 0 && kill(pid_, 0) != 0 && errno == ESRCH) {
      *how = "process " + std::to_string(pid_) + " exited";
      return true;
    }
    if (slurm_.empty() || std::chrono::steady_clock::now() < next_ask_) return false;
    next_ask_ = std::chrono::steady_clock::now() + std::chrono::seconds(2);  // slurmctld is shared
    // scontrol while slurmctld keeps the job (MinJobAge after its end), then sacct where
    // accounting is kept; a job neither knows is over.
    std::string state = Ask("scontrol -o show job " + slurm_ + " 2>&1");
    if (state.find("Invalid job id") != std::string::npos) {
      const std::string acct = Ask("sacct -n -X -P -j " + slurm_ + " -o State 2>/dev/null");
      *how = "Slurm job " + slurm_ +
             (acct.empty() ? " is no longer known to slurmctld" : " is " + Word(acct));
      return true;
    }
    const std::size_t at = state.find("JobState=");
    if (at == std::string::npos) return false;  // slurmctld did not answer: ask again later
    state = Word(state.substr(at + 9));
    static constexpr std::string_view kLive[] = {
        "PENDING",  "RUNNING",      "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
        "RESIZING", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING",  "STAGE_OUT"};
    if (std::find(std::begin(kLive), std::end(kLive), state) != std::end(kLive)) return false;
    *how = "Slurm job " + slurm_ + " is " + state;
    return true;
  }

 private:
  static std::string Ask(const std::string& cmd) {
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return {};
    std::string out;
    char buf[4096];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
    return out;
  }
  static std::string Word(const std::string& s) { return s.substr(0, s.find_first_of(" \n+")); }
  int pid_;
  std::string slurm_;
  std::chrono::steady_clock::time_point next_ask_{};
};

}  // namespace

int RunWatch(const WatchArgs& args, std::ostream& out, std::ostream& err) {
  const fs::path read[] = {args.incident};
  if (!args.json.empty() && IsStdout(args.json)) {
    err << "denpex watch: --json needs a file (each change replaces it); stdout carries one line "
           "per change\n";
    return kExitUsage;
  }
  if (!args.json.empty()) {
    if (Status st = CheckOutputPath(args.json, read); !st.ok()) return Fail(err, st);
  }
  if (!args.on_diagnosis.empty() && args.json.empty()) {
    err << "denpex watch: --on-diagnosis needs --json FILE (the command is given its path)\n";
    return kExitUsage;
  }
  if (args.slurm_job.find_first_not_of("0123456789_+") != std::string::npos) {
    err << "denpex watch: --slurm-job " << args.slurm_job
        << ": not a Slurm job id (digits, 123_4 for an array task)\n";
    return kExitUsage;
  }
  if (args.interval <= 0 || args.settle < 0 || args.stall_factor <= 1 || args.time_scale <= 0) {
    err << "denpex watch: --interval and --time-scale must be > 0, --stall-factor > 1, --settle >= "
           "0\n";
    return kExitUsage;
  }
  const auto started = std::chrono::steady_clock::now();
  const auto seconds_since = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // The directory may not exist yet: a job creates its log folder when it starts.
  std::error_code ec;
  while (!fs::is_directory(args.incident, ec)) {
    if (StopRequested() || (args.timeout > 0 && seconds_since(started) > args.timeout)) {
      err << "denpex watch: " << args.incident.string() << " never appeared\n";
      return kExitBadInput;
    }
    usleep(static_cast<useconds_t>(args.interval * 1e6));
  }
  run::CatchStopSignals();
  signal(SIGPIPE, SIG_IGN);

  // A watcher runs for days beside the job: the memory an evaluation frees goes back to the
  // kernel (the binary keeps freed memory for the next parse: engine::KeepFreedMemory).
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  auto w = engine::Watcher::Open(
      args.incident,
      {.threads = args.threads, .stall_factor = args.stall_factor, .time_scale = args.time_scale});
  if (!w.ok()) return Fail(err, w.status());
  Inotify inotify(w->root());
  out << Stamp(WallNow()) << " watching " << w->root().string()
      << (inotify.ok() ? " (inotify" : " (no inotify: full looks every interval") << ", interval "
      << args.interval << " s)\n"
      << std::flush;

  // The hook runs beside the watch (one at a time, the newest diagnosis pending), bounded.
  std::optional<HookRunner> hook;
  if (!args.on_diagnosis.empty()) hook.emplace(args.on_diagnosis, std::chrono::seconds(120));
  const auto report_hooks = [&](const std::vector<Status>& outcomes) {
    for (const Status& st : outcomes) {
      if (!st.ok()) err << "denpex watch: " << st.message() << "\n";
    }
  };
  const auto act = [&](const v1::Diagnosis& d, std::string_view kind) -> void {
    const std::string json = proto::ToJson(d) + "\n";
    out << OneLine(d, Stamp(WallNow()), kind) << "\n" << std::flush;
    if (!args.json.empty()) {
      if (Status st = WriteOutputFile(args.json, json, read); !st.ok())
        err << "denpex watch: " << st.message() << "\n";
    }
    if (hook) hook->Request(args.json);
    if (!args.webhook.empty()) {
      if (Status st = PostJson(args.webhook, json, std::chrono::seconds(10)); !st.ok())
        err << "denpex watch: " << st.message() << "\n";
    }
  };

  JobEnd job_end(args);
  std::string ended;
  Announcer announcer(args.settle);
  std::uint64_t signals_seen = ~std::uint64_t{0};
  double eval_cost = 0, look_cost = 0;
  auto last_eval = std::chrono::steady_clock::time_point{},
       last_look = std::chrono::steady_clock::time_point{};
  std::set<std::string> changed;
  bool look_all = true;
  while (!StopRequested()) {
    if (args.timeout > 0 && seconds_since(started) > args.timeout) {
      ended = "--timeout " + std::to_string(args.timeout) + " s passed";
      break;
    }
    if (job_end.Ended(&ended)) break;
    // Read: what inotify named; and everything, for what inotify cannot see (writes from other
    // machines of a shared file system): every interval without inotify, every 30 otherwise; at
    // most ~0.5 % of a core either way (200 times its own cost apart).
    look_all |= seconds_since(last_look) >
                std::max((inotify.ok() ? 30 : 1) * args.interval, 200 * look_cost);
    if (look_all) {
      const double c0 = CpuSeconds();
      if (auto r = w->Refresh(nullptr, WallNow()); !r.ok())
        err << "denpex watch: " << r.status().message() << "\n";
      look_cost = CpuSeconds() - c0;
      last_look = std::chrono::steady_clock::now();
      look_all = false;
      changed.clear();
    } else if (!changed.empty()) {
      const std::vector<std::string> paths(changed.begin(), changed.end());
      if (auto r = w->Refresh(&paths, WallNow()); !r.ok())
        err << "denpex watch: " << r.status().message() << "\n";
      changed.clear();
    }
    // Evaluate: soon after a new event (at most 10 % of a core while events pour in: 10 times the
    // cost of an evaluation that analyses the incident again apart); without one, for a stall,
    // every 5 intervals when nothing was read (that costs microseconds), else at most 2 % of a
    // core (50 times that cost apart: step lines keep coming).
    // A commit waiting to settle is looked at again once it would have.
    const double since = seconds_since(last_eval);
    const bool news = w->signals() != signals_seen;
    const bool settles = announcer.settles_at() && WallNow() >= *announcer.settles_at();
    if (w->bytes() > 0 && ((news && since >= std::max(args.interval, 10 * eval_cost)) || settles ||
                           since >= std::max(5 * args.interval, w->dirty() ? 50 * eval_cost : 0))) {
      const double c0 = CpuSeconds();
      const bool full = w->dirty();
      signals_seen = w->signals();
      auto d = w->Evaluate(WallNow());
      if (full) eval_cost = CpuSeconds() - c0;
      if (full) malloc_trim(0);
      last_eval = std::chrono::steady_clock::now();
      if (d.ok() && announcer.Offer(*d, w->stalled(), WallNow())) act(*d, "provisional");
    }
    if (hook) report_hooks(hook->Poll());
    pollfd p{.fd = inotify.ok() ? inotify.fd() : -1, .events = POLLIN, .revents = 0};
    poll(&p, 1, static_cast<int>(args.interval * 1000));
    if (inotify.ok() && inotify.Drain(&changed)) look_all = true;
  }
  if (StopRequested()) ended = "stopped by a signal";
  out << Stamp(WallNow()) << " job end: " << ended << "; final diagnosis\n" << std::flush;
  {
    const engine::Watcher done = std::move(*w);
  }  // its memory is not held through the final diagnosis
  auto d = engine::Diagnose(args.incident,
                            {.threads = args.threads, .checkpoint_dir = args.checkpoint_dir});
  if (!d.ok()) return Fail(err, d.status());
  act(*d, "final");
  if (hook) report_hooks(hook->Wait());
  return kExitOk;
}

}  // namespace denpex::cli
