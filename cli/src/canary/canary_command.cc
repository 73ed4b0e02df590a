// `denpex canary` (docs/canary.md): plans the canary from the failed run's diagnosis (the drained
// nodes, the checkpoint to resume from), launches the command with the placeholders substituted
// and its output in OUT/console.log, follows OUT with the watcher (as `denpex watch` does) and
// its step lines with the metrics reader, stops the command once every rank reached the resume
// step + N (or at --timeout), and judges it against the failed run's baseline
// (engine::JudgeCanary).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "denpex/cli/commands.h"
#include "denpex/common/output_file.h"
#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/engine/canary.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/history_store.h"
#include "denpex/engine/metrics.h"
#include "denpex/engine/preflight.h"
#include "denpex/engine/watch.h"
#include "denpex/proto/json_io.h"
#include "run/posix_io.h"

namespace denpex::cli {
namespace fs = std::filesystem;
namespace {

using run::StopRequested;
using run::WallNow;

int Fail(std::ostream& err, const Status& st) {
  err << "denpex canary: " << st.message() << "\n";
  return ExitCodeFor(st);
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool Inside(const fs::path& path, const fs::path& tree) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const fs::path t = fs::weakly_canonical(fs::absolute(tree, ec), ec);
  auto [a, b] = std::mismatch(t.begin(), t.end(), p.begin(), p.end());
  return a == t.end();
}

// The command in its own process group, stdin from /dev/null, stdout and stderr into `log`,
// with `extra` added to the environment. -1 and errno when it could not be forked.
// Everything the child needs is built before the fork: the parent has threads (TBB), so the
// child only calls async-signal-safe functions.
pid_t Launch(const std::vector<std::string>& argv,
             const std::vector<std::pair<std::string, std::string>>& extra, const fs::path& log) {
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return -1;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string_view key = kv.substr(0, kv.find('='));
    if (std::none_of(extra.begin(), extra.end(), [&](const auto& x) { return x.first == key; }))
      env.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  std::vector<char*> cenv, cargv;
  for (std::string& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const std::string cannot = "denpex canary: cannot run " + argv[0] + "\n";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    (void)!::write(2, cannot.data(), cannot.size());
    ::_exit(127);
  }
  if (pid > 0) ::setpgid(pid, pid);  // also from here: no race with the first kill
  ::close(out);
  return pid;
}

std::string Ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

// SIGTERM to the command's process group, SIGKILL after `grace` seconds; reaps it.
void Stop(pid_t pid, double grace) {
  ::kill(-pid, SIGTERM);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Since(t0) > grace) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);  // what the leader left behind in its group
}

// The canary's diagnoses that named a failure, each distinct answer once, in the order they were
// last given: the last is the most complete (the final diagnosis, when there was one).
class Failures {
 public:
  // True when `d` names a failure not named before.
  bool Offer(const v1::Diagnosis& d) {
    if (d.verdict() != v1::VERDICT_DIAGNOSED) return false;
    for (auto it = list_.begin(); it != list_.end(); ++it) {
      if (it->initiator().failure_class() == d.initiator().failure_class() &&
          it->initiator().rank() == d.initiator().rank() &&
          it->initiator().node() == d.initiator().node()) {
        list_.erase(it);
        list_.push_back(d);
        return false;
      }
    }
    list_.push_back(d);
    return true;
  }
  const std::vector<v1::Diagnosis>& list() const { return list_; }

 private:
  std::vector<v1::Diagnosis> list_;
};

Status CheckArgs(const CanaryArgs& a) {
  if (a.steps < 1) return Status::InvalidArgument("--steps must be 1 or more");
  if (a.timeout <= 0 || a.grace < 0 || a.interval <= 0 || a.step_time_tolerance < 0 ||
      a.loss_tolerance < 0)
    return Status::InvalidArgument(
        "--timeout and --interval must be > 0; --grace and the tolerances >= 0");
  if (a.command.empty()) return Status::InvalidArgument("no command after --");
  if (Inside(a.out, a.incident))
    return Status::InvalidArgument("--out " + a.out.string() + " lies inside the incident " +
                                   a.incident.string() +
                                   ", which is never written; give a directory outside it");
  std::error_code ec;
  if (fs::exists(a.out, ec) && (!fs::is_directory(a.out, ec) || !fs::is_empty(a.out, ec)))
    return Status::InvalidArgument("--out " + a.out.string() +
                                   " exists and is not an empty directory: the canary's lines "
                                   "would mix with what is there; give a new directory");
  return Status::Ok();
}

// The shape's nodes: the drained ones left out of the allocation (--nodes), the ones the
// recovery's canary must include kept in it. kInvalidArgument when they cannot all hold.
Status PlanNodes(const CanaryArgs& args, const v1::Diagnosis& diagnosis,
                 engine::CanaryShape* shape) {
  const std::vector<std::string> drained = engine::DrainedNodes(diagnosis);
  const std::vector<std::string> include = engine::CanaryNodes(diagnosis);
  const auto in = [](const std::vector<std::string>& list, const std::string& n) {
    return std::find(list.begin(), list.end(), n) != list.end();
  };
  for (const std::string& n : include) {
    if (in(drained, n))
      return Status::InvalidArgument("the recovery both drains " + n +
                                     " and says the canary must include it; settle which (edit "
                                     "the diagnosis's recovery) before the canary");
  }
  shape->exclude = engine::SlurmHostList(drained);
  shape->include = engine::SlurmHostList(include);
  if (args.nodes.empty()) return Status::Ok();
  std::vector<std::string> nodes = engine::ExpandSlurmHostList(args.nodes);
  if (nodes.empty())
    return Status::InvalidArgument("--nodes " + args.nodes +
                                   ": not a Slurm host list (gpu-[01-04],login1)");
  std::erase_if(nodes, [&](const std::string& n) { return in(drained, n); });
  if (nodes.empty())
    return Status::InvalidArgument("every node of --nodes " + args.nodes +
                                   " is drained by the recovery (" + shape->exclude +
                                   "): no allocation is left to run the canary on");
  std::vector<std::string> missing;
  for (const std::string& n : include) {
    if (!in(nodes, n)) missing.push_back(n);
  }
  if (!missing.empty())
    return Status::InvalidArgument("--nodes " + args.nodes + " lacks " +
                                   engine::SlurmHostList(missing) +
                                   ", which the recovery says the canary must include (the node "
                                   "it tests); add it to --nodes");
  shape->nodes = engine::SlurmHostList(nodes);
  return Status::Ok();
}

// What following the command found.
struct Followed {
  std::string ended;  // how it ended
  std::vector<v1::Diagnosis> failures;
  std::string final_problem;  // the final diagnosis could not be made; empty when fine
};

// Follows the running command `pid` until every rank in `ranks` reached `until`, it exits, the
// timeout or a signal; stops it unless it exited. The watcher's diagnoses that named a failure,
// and the final diagnosis when it ended by itself.
Result<Followed> Follow(const CanaryArgs& args, pid_t pid, const std::vector<std::int32_t>& ranks,
                        std::int64_t until, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  auto watcher = engine::Watcher::Open(args.out, {.threads = args.threads});
  if (!watcher.ok()) {
    Stop(pid, args.grace);
    return watcher.status();
  }
  Followed f;
  Failures failures;
  // Each failure as the watcher first names it, as `denpex watch` prints a change.
  const auto offer = [&](const v1::Diagnosis& d, const char* when) {
    if (failures.Offer(d))
      out << FormatRfc3339(WallNow() / 1'000'000 * 1'000'000) << " " << when << " "
          << v1::FailureClass_Name(d.initiator().failure_class()) << " rank "
          << d.initiator().rank() << ": " << d.reason() << "\n"
          << std::flush;
  };
  std::uint64_t signals_seen = ~std::uint64_t{0};
  bool exited = false, reached = false, last_stalled = false;
  std::optional<v1::Diagnosis> last;
  const auto refresh = [&] {
    auto r = watcher->Refresh(nullptr, WallNow());
    if (!r.ok()) err << "denpex canary: " << r.status().message() << "\n";
  };
  const auto evaluate = [&] {
    if (watcher->bytes() == 0) return;
    signals_seen = watcher->signals();
    auto d = watcher->Evaluate(WallNow());
    if (!d.ok()) return;
    last_stalled = watcher->stalled();
    last = *d;
    if (!last_stalled) offer(*d, "provisional");  // a stall counts only when steps fell short
  };
  double metrics_cost = 0;
  auto last_metrics = std::chrono::steady_clock::time_point{};
  for (int status = 0;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      f.ended = Ended(status);
      break;
    }
    if (StopRequested()) {
      f.ended = "stopped by a signal to denpex canary";
      break;
    }
    if (Since(started) > args.timeout) {
      f.ended = "--timeout " + std::to_string(static_cast<long long>(args.timeout)) + " s passed";
      break;
    }
    refresh();
    if (watcher->signals() != signals_seen) evaluate();
    // The step lines: every 2 intervals, or 10 times their own cost apart on a large output.
    if (Since(last_metrics) >= std::max(2 * args.interval, 10 * metrics_cost)) {
      const auto t0 = std::chrono::steady_clock::now();
      auto m = engine::ReadTrainingMetrics(args.out);
      metrics_cost = Since(t0);
      last_metrics = std::chrono::steady_clock::now();
      if (m.ok() && engine::CanaryReached(*m, ranks, until)) {
        reached = true;
        f.ended = "stopped after every rank reached step " + std::to_string(until);
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(args.interval));
  }
  if (!exited) {
    refresh();  // what the run showed before it is stopped
    evaluate();
    if (!reached && last_stalled && last) offer(*last, "stalled");
    Stop(pid, args.grace);
  }
  { const engine::Watcher done = std::move(*watcher); }
  if (exited) {
    // It ended by itself: its final diagnosis is `denpex diagnose`'s, as `denpex watch` ends.
    auto d = engine::Diagnose(args.out, {.threads = args.threads});
    if (d.ok())
      offer(*d, "final");
    else
      f.final_problem = "the canary's final diagnosis: " + d.status().message();
  }
  f.failures = failures.list();
  return f;
}

// Prints the report, writes --json and the --history record; the exit code.
int Report(const CanaryArgs& args, const v1::Diagnosis& diagnosis, const v1::CanaryReport& report,
           std::ostream& out, std::ostream& err) {
  out << engine::RenderCanaryText(report) << std::flush;
  int rc = report.verdict() == v1::CANARY_GO      ? kExitOk
           : report.verdict() == v1::CANARY_NO_GO ? kExitCanaryNoGo
                                                  : kExitBadInput;
  if (!args.json.empty()) {
    if (IsStdout(args.json)) {
      out << proto::ToJson(report) << "\n";
    } else if (Status st = proto::WriteJsonFile(args.json, report); !st.ok()) {
      err << "denpex canary: " << st.message() << "\n";
      rc = ExitCodeFor(st);
    }
  }
  if (!args.history.empty()) {
    auto history = engine::ReadHistory(args.history);
    Status st = history.ok()
                    ? engine::RecordCanary(
                          args.history, *history,
                          engine::CanaryHistoryRecord(report, diagnosis, WallNow()), args.incident)
                    : history.status();
    if (!st.ok()) {
      err << "denpex canary: " << st.message() << "\n";
      rc = ExitCodeFor(st);
    }
  }
  return rc;
}

}  // namespace

int RunCanary(const CanaryArgs& args, std::ostream& out, std::ostream& err) {
  if (Status st = CheckArgs(args); !st.ok()) return Fail(err, st);
  const fs::path read_only[] = {args.incident};
  if (!args.json.empty() && !IsStdout(args.json)) {
    if (Status st = CheckOutputPath(args.json, read_only); !st.ok()) return Fail(err, st);
  }
  if (!args.history.empty()) {
    if (Status st = CheckOutputPath(args.history, read_only); !st.ok()) return Fail(err, st);
  }
  v1::Diagnosis diagnosis;
  if (Status st = proto::ReadJsonFile(args.diagnosis, &diagnosis); !st.ok()) return Fail(err, st);
  std::error_code ec;
  if (!fs::is_directory(args.incident, ec))
    return Fail(err, Status::NotFound("--incident " + args.incident.string() +
                                      ": not a directory; give the failed run's incident "
                                      "directory (its logs are the baseline)"));
  auto failed = engine::ReadTrainingMetrics(args.incident);
  if (!failed.ok()) return Fail(err, failed.status());
  auto resume = engine::FindResumePoint(diagnosis, args.incident, args.checkpoint);
  if (!resume.ok()) return Fail(err, resume.status());
  if (Inside(args.out, resume->dir))
    return Fail(err, Status::InvalidArgument(
                         "--out " + args.out.string() + " lies inside the checkpoint directory " +
                         resume->dir.string() + " it resumes from; give a directory outside it"));

  engine::CanaryShape shape{
      .resume = *resume, .steps = args.steps, .out = fs::absolute(args.out, ec)};
  if (Status st = PlanNodes(args, diagnosis, &shape); !st.ok()) return Fail(err, st);
  fs::create_directories(args.out, ec);
  if (ec) return Fail(err, Status::IoError("--out " + args.out.string() + ": " + ec.message()));

  v1::CanaryReport report;
  report.set_diagnosis(args.diagnosis.string());
  report.set_incident(args.incident.string());
  report.set_out(args.out.string());
  report.set_exclude(shape.exclude);
  report.set_nodes(shape.nodes);
  report.set_include(shape.include);
  report.set_checkpoint(resume->checkpoint.string());
  report.set_resume_step(resume->step);
  report.set_checkpoint_source(resume->source);
  report.set_steps(args.steps);
  const std::vector<std::string> argv = engine::ExpandCanaryCommand(args.command, shape);
  for (const std::string& a : argv) report.add_command(a);

  const fs::path console = args.out / "console.log";
  const std::int64_t until = resume->step + args.steps;
  out << "denpex canary: resuming from " << resume->checkpoint.string() << " (step " << resume->step
      << "), until every rank reaches step " << until
      << (shape.exclude.empty() ? std::string() : ", excluding " + shape.exclude) << "; output in "
      << console.string() << "\n"
      << std::flush;

  run::CatchStopSignals();
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = Launch(argv, engine::CanaryEnvironment(shape), console);
  if (pid < 0)
    return Fail(err, Status::IoError("cannot start " + argv[0] + ": " + std::strerror(errno)));
  auto run = Follow(args, pid, engine::CanaryRanks(*failed), until, out, err);
  if (!run.ok()) return Fail(err, run.status());
  report.set_ended(run->ended);
  report.set_seconds(Since(started));
  if (!run->final_problem.empty()) report.add_problems(run->final_problem);
  auto canary = engine::ReadTrainingMetrics(args.out);
  if (!canary.ok()) return Fail(err, canary.status());
  for (const std::string& p : failed->problems)
    report.add_problems(args.incident.string() + "/" + p);
  for (const std::string& p : canary->problems) report.add_problems(args.out.string() + "/" + p);
  for (const v1::Diagnosis& d : run->failures) *report.add_failures() = d;
  engine::JudgeCanary({.diagnosis = &diagnosis,
                       .failed = &*failed,
                       .canary = &*canary,
                       .resume_step = resume->step,
                       .failures = run->failures},
                      {.steps = args.steps,
                       .step_time_tolerance = args.step_time_tolerance,
                       .loss_tolerance = args.loss_tolerance},
                      &report);
  return Report(args, diagnosis, report, out, err);
}

}  // namespace denpex::cli
