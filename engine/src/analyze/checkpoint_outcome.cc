#include "analyze/checkpoint_outcome.h"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>

#include "analyze/describe.h"
#include "denpex/engine/checkpoint.h"
#include "ingest/walk.h"

namespace denpex::engine {
namespace fs = std::filesystem;
namespace {

// Log files are written until the job's last line; a copy made later carries later times.
// Beyond this much after the last stamped line, the file times are not the job's.
constexpr TimeNs kCopySlack = 15 * 60 * kNsPerSec;
// Every log and checkpoint file written within this window: a checkout or a copy, not a job (a
// job's saves of different steps and its last log lines are seconds apart at least).
constexpr TimeNs kCopyBurst = 100 * kNsPerMs;
// A diagnosis reads tensor values (--deep: NaN/Inf, CRC-32) up to this many bytes, newest
// candidate first: a job's small checkpoints entirely, a large one's first records (about
// 0.1 s from the page cache); `checkpoint verify --deep` reads everything.
constexpr std::uint64_t kDiagnosisDeepBytes = 256ull << 20;

bool IsInside(const fs::path& p, const fs::path& root) {
  auto [pi, ri] = std::mismatch(p.begin(), p.end(), root.begin(), root.end());
  return ri == root.end();
}

std::optional<TimeNs> ModTime(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return static_cast<TimeNs>(st.st_mtim.tv_sec) * kNsPerSec + st.st_mtim.tv_nsec;
}

std::string Minutes(TimeNs d) { return std::to_string(d / (60 * kNsPerSec)) + " min"; }

// The oldest and newest modification time over the incident's log files and the regular files
// under the checkpoint directory (links not followed); {0, 0} when none could be read.
std::pair<TimeNs, TimeNs> ModTimeSpan(const Incident& inc, const fs::path& checkpoint_dir) {
  TimeNs lo = 0;
  TimeNs hi = 0;
  auto take = [&](const fs::path& p) {
    if (auto t = ModTime(p)) {
      lo = lo == 0 ? *t : std::min(lo, *t);
      hi = std::max(hi, *t);
    }
  };
  for (const LogFile& lf : inc.files) take(inc.root / lf.path);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(checkpoint_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) take(it->path());
  }
  return {lo, hi};
}

std::string Joined(const std::string& dir, const std::string& path) {
  if (path.empty() || path == ".") return dir;
  return dir.empty() ? path : dir + "/" + path;
}

// Lines that report a failure as it happens (not warnings, not progress, not noise).
bool ReportsFailure(Kind k) {
  switch (k) {
    case Kind::kWatchdogTimeout: case Kind::kBlockingWaitTimeout: case Kind::kTaskExit:
    case Kind::kWorkerFailed: case Kind::kWorkerSignalled: case Kind::kFailureEntry: case Kind::kException:
    case Kind::kFatalSignal: case Kind::kCancelled: case Kind::kStepAborted:
    case Kind::kStepTerminated: case Kind::kNodeFailure: case Kind::kCudaError:
    case Kind::kDeviceAssert: case Kind::kCudaOom: case Kind::kOomKill: case Kind::kXid:
    case Kind::kFallenOffBus: case Kind::kNcclError: case Kind::kIbCompletionError:
    case Kind::kSocketError: case Kind::kGlooConnectionClosed: case Kind::kGlooReadError:
    case Kind::kGlooTimeout: case Kind::kEvicted: case Kind::kOomKilled:
    case Kind::kContainerExit: case Kind::kActorDied:
      return true;
    default:
      return false;
  }
}

bool Stamped(const Event& e) { return e.clock != Clock::kNone && !e.time_borrowed; }

// When the job was evidently failing: the first stamped line that reports a failure, after
// the job's first line (an old ECC event in a kernel log is not this job's fault), a watchdog
// timeout counted from when its collective began. It is at or just after the initiating
// fault; the initiator's own time can be far earlier (a SIGKILLed rank's last line). nullopt
// when no such line carries a time.
std::optional<TimeNs> FailureOnset(const Incident& inc) {
  // The job's first stamped line; kernel Xid lines can be days older than the job.
  TimeNs training = 0;
  for (const Event& e : inc.events) {
    if (e.family != Family::kXid && Stamped(e) && (training == 0 || e.time < training)) training = e.time;
  }
  // No iteration line survived (the logging rank's buffered stdout died with it): the job's own
  // earliest stamped line stands for its start, so a kernel log's days-old Xid is still not it.
  for (const Event& e : inc.events) {
    if (training != 0) break;
    if (e.family == Family::kXid || e.family == Family::kHostOom || !Stamped(e)) continue;
    TimeNs first = e.time;
    for (const Event& o : inc.events) {
      if (o.family != Family::kXid && o.family != Family::kHostOom && Stamped(o) && o.time < first) first = o.time;
    }
    training = first;
  }
  std::optional<TimeNs> onset;
  for (const Event& e : inc.events) {
    if (!ReportsFailure(e.kind) || !Stamped(e) || e.time < training) continue;
    // A stamp without a fraction (torchrun's failure table, syslog and kernel lines, Slurm)
    // says the failure happened within that second, not at its start: a save that finished
    // 36 ms into the second of a kernel's `Mar  2 09:00:34 ... Xid` line is not after it.
    TimeNs t = e.time % kNsPerSec == 0 ? e.time + kNsPerSec - 1 : e.time;
    // A watchdog timeout reports a collective that began `ran_for` earlier, waiting for the
    // initiator: progress stopped then (srun's task-exit lines carry no time at all).
    if (const auto* w = std::get_if<WatchdogTimeout>(&e.detail); w != nullptr && w->ran_for_ms > 0)
      t = std::max(training, t - w->ran_for_ms * kNsPerMs);
    if (!onset || t < *onset) onset = t;
  }
  return onset;
}

// Whether `later` was logged after `e`: by line in one file, else by time.
bool LoggedAfter(const Event& later, const Event& e) {
  if (later.file == e.file) return later.line > e.line;
  return Stamped(later) && Stamped(e) && later.time >= e.time;
}

// Whether two save lines are about the same save: the same step, else the same path or tag;
// lines that name neither (torchtitan's) pair with each other.
bool SameSave(const CheckpointSave& a, const CheckpointSave& b) {
  if (a.step >= 0 && b.step >= 0) return a.step == b.step;
  if (a.path != kNoStr && b.path != kNoStr) return a.path == b.path;
  return a.step < 0 && b.step < 0 && a.path == kNoStr && b.path == kNoStr;
}

// "rank0.log:120 at 09:00:01.204 (saving step 100 to /ckpt)"
std::string CiteSave(const Incident& inc, const Event& e) {
  const auto& d = std::get<CheckpointSave>(e.detail);
  std::string what = e.kind == Kind::kSaveStarted ? "saving" : "saved";
  if (d.step >= 0) what += " step " + std::to_string(d.step);
  if (d.path != kNoStr) what += (e.kind == Kind::kSaveStarted ? " to " : " in ") + std::string(inc.str(d.path));
  if (d.step < 0 && d.path == kNoStr) what += " a checkpoint";
  return Where(inc, e) + (Stamped(e) ? " at " + ClockTime(e.time) : std::string()) + " (" + what + ")";
}

// The saves the logs show, one per start line: finished when a finish line of the same save
// follows it, or a start of another save does (saves run one after another). Where no finish
// line is logged anywhere (the HF Trainer logs none), a progress line of a later step after the
// start also says that the save returned. A start of a framework that logs no finish with
// nothing after it is undecided. `began` only where file times are the job's.
std::vector<LoggedSave> SavesInLogs(const Incident& inc, std::optional<TimeNs> fault, bool times) {
  std::vector<const Event*> starts, finishes, progress;
  for (const Event& e : inc.events) {
    if (e.kind == Kind::kSaveStarted) starts.push_back(&e);
    if (e.kind == Kind::kSaveFinished) finishes.push_back(&e);
    if (e.kind == Kind::kIteration) progress.push_back(&e);
  }
  std::vector<LoggedSave> out;
  for (const Event* s : starts) {
    const auto& d = std::get<CheckpointSave>(s->detail);
    LoggedSave save{.step = d.step,
                    .path = d.path == kNoStr ? std::string() : std::string(inc.str(d.path))};
    save.cite = CiteSave(inc, *s);
    if (times && Stamped(*s)) save.began = s->time;
    for (const Event* f : finishes) {
      if (!SameSave(d, std::get<CheckpointSave>(f->detail)) || !LoggedAfter(*f, *s)) continue;
      save.finished = true;
      save.after_fault = fault && Stamped(*f) && f->time > *fault;
      save.cite += ", finished " + CiteSave(inc, *f);
      break;
    }
    for (const Event* other : starts) {
      if (save.finished) break;
      if (!SameSave(d, std::get<CheckpointSave>(other->detail)) && LoggedAfter(*other, *s)) {
        save.finished = true;
        save.cite += ", followed by the next save, " + CiteSave(inc, *other);
      }
    }
    // Other ranks log the saved step's own iteration line while rank 0 saves: only a later step
    // (or, for a save that names none, the saving process's own next line) says it returned.
    for (const Event* e : progress) {
      if (save.finished || !finishes.empty() || !LoggedAfter(*e, *s)) continue;
      const auto* it = std::get_if<Iteration>(&e->detail);
      const bool later = d.step >= 0 ? it != nullptr && it->iteration > d.step : e->file == s->file;
      if (!later) continue;
      save.finished = true;
      save.cite += ", then training went on (" + Where(inc, *e) + ")";
    }
    // A framework that never logs a finish: a fault before its next logged step leaves a
    // finished save looking like one in flight; only the files can tell.
    save.undecided = !save.finished && d.no_finish;
    out.push_back(std::move(save));
  }
  return out;
}

// A recovery step of the diagnosis as written (its words already rendered by report/).
struct Step {
  std::string action;
  std::string target;
  std::string text;
};

// The recovery step the checkpoint outcome implies.
Step CheckpointAction(const v1::CheckpointOutcome& o, const std::vector<std::string>& notes) {
  const std::string& dir = o.dir();
  switch (o.decision()) {
    case v1::CHECKPOINT_DECISION_RESUME: {
      // A checkpoint without a step (best.pt, a flat model.pt) is named by its path only.
      std::string text = (o.step() >= 0 ? "Resume from step " + std::to_string(o.step()) + " at "
                                        : std::string("Resume from ")) +
                         Joined(dir, o.path()) + ", the newest checkpoint that verifies";
      if (o.steps_lost() > 0) {
        text += " (" + std::to_string(o.steps_lost()) + " steps lost against step " +
                std::to_string(o.last_written_step()) + ")";
      }
      for (int k = 0; k < o.rejected_size() && k < 2; ++k) {
        text += k == 0 ? "; do not resume from " : ", nor from ";
        text += o.rejected(k).path() + " (" + o.rejected(k).reason() + ")";
      }
      if (!notes.empty()) text += "; " + notes.front();
      return {"resume_from_checkpoint", Joined(dir, o.path()), text + "."};
    }
    case v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT:
      return {"no_safe_checkpoint", dir,
              "No checkpoint in " + dir + " verifies (" + o.summary() +
                  "); restart from an older copy or from scratch, not from the newest directory."};
    default:
      return {"verify_checkpoint", dir,
              "The checkpoints in " + dir + " could not be verified (" + o.summary() +
                  "); check them by hand before resuming, and do not trust the newest name or "
                  "the latest pointer."};
  }
}

// The analysis's generic restart sentence, made specific now that checkpoints were read.
void RewordRestart(const v1::CheckpointOutcome& o, std::vector<Step>* recovery) {
  constexpr std::string_view kGeneric =
      "the newest checkpoint that verifies (checkpoints were not evaluated by this diagnosis)";
  const std::string specific = o.decision() == v1::CHECKPOINT_DECISION_RESUME
                                   ? (o.step() >= 0 ? "step " + std::to_string(o.step()) + " ("
                                                    : std::string("(")) +
                                         Joined(o.dir(), o.path()) + ", verified)"
                                   : "a checkpoint only once one is known to be safe (below)";
  for (Step& a : *recovery) {
    if (a.action != "restart_job") continue;
    if (const auto at = a.text.find(kGeneric); at != std::string::npos)
      a.text.replace(at, kGeneric.size(), specific);
  }
}

// The scheduler ended a job no rank of which had failed (a time limit, a cancel, a preemption):
// the training state stayed sound until its processes were signalled, after the controller's
// decision, so a save finished in between (or by a handler of that signal) is judged by its
// contents alone, as a save cut short by the kill is.
bool SchedulerEndedSoundJob(const Finding& f) {
  switch (f.failure_class) {
    case v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT: case v1::FAILURE_CLASS_SCHEDULER_CANCEL:
    case v1::FAILURE_CLASS_SCHEDULER_PREEMPTION:
      return f.verdict == v1::VERDICT_DIAGNOSED && f.rank < 0 && f.node < 0;
    default:
      return false;
  }
}

v1::CheckpointOutcome Verified(const Incident& inc, const Finding& f, const CheckpointDir& dir,
                               std::vector<std::string>* notes) {
  v1::CheckpointOutcome o;
  CheckpointOptions opts{
      .world_size = f.world_size, .deep = true, .deep_max_bytes = kDiagnosisDeepBytes};
  std::string why;
  const bool times = FileTimesPreserved(inc, dir.path, &why);
  const std::optional<TimeNs> fault = FailureOnset(inc) ? FailureOnset(inc) : f.time;
  const bool sound = SchedulerEndedSoundJob(f);
  if (times && fault && !sound) opts.not_after = *fault;
  opts.saves = SavesInLogs(inc, fault, times);
  auto r = VerifyCheckpointDir(dir.path, opts);
  if (!r.ok()) {
    o.set_decision(v1::CHECKPOINT_DECISION_INCONCLUSIVE);
    o.set_summary(r.status().message());
    return o;
  }
  o = r->outcome;
  o.set_summary(r->summary);
  o.set_last_written_step(std::max<std::int64_t>(0, r->last_written_step));
  o.set_steps_lost(std::max<std::int64_t>(0, r->steps_lost));
  if (sound) {
    o.set_summary(o.summary() + " (the scheduler ended a job no rank of which had failed: a save finished after its "
                                "decision is judged by its contents)");
  } else if (!times) {
    o.set_summary(o.summary() + " (file times not compared with the fault: " + why + ")");
  } else if (!fault) {
    o.set_summary(o.summary() + " (no fault time: checkpoints written after it cannot be told)");
  }
  *notes = r->notes;
  return o;
}

}  // namespace

Result<std::optional<CheckpointDir>> FindCheckpointDir(const fs::path& incident_root,
                                                       const fs::path& given) {
  std::error_code ec;
  if (!given.empty()) {
    if (!fs::is_directory(given, ec)) {
      return Status::NotFound("--checkpoint-dir " + given.string() +
                              " is not a directory: pass the folder the job saved checkpoints in");
    }
    const fs::path canon = fs::canonical(given, ec);
    const bool inside = !ec && IsInside(canon, incident_root);
    return std::optional<CheckpointDir>(CheckpointDir{
        given, inside ? canon.lexically_relative(incident_root).generic_string() : given.string()});
  }
  // The incident dir, then each of its lone folders (a tarball's or ticket's), shallowest first.
  const std::string lone = LoneFolders(incident_root);
  for (std::size_t end = 0;;) {
    const std::string in = lone.substr(0, end);
    for (std::string_view name : kCheckpointFolders) {
      const std::string rel = in.empty() ? std::string(name) : in + "/" + std::string(name);
      const fs::path p = incident_root / rel;
      if (fs::is_directory(fs::symlink_status(p, ec)))
        return std::optional<CheckpointDir>(CheckpointDir{p, rel});
    }
    if (end >= lone.size()) break;
    end = lone.find('/', end + 1);
    if (end == std::string::npos) end = lone.size();
  }
  return std::optional<CheckpointDir>();
}

bool FileTimesPreserved(const Incident& inc, const fs::path& checkpoint_dir, std::string* why) {
  TimeNs last_logged = 0;
  for (const Event& e : inc.events) {
    if (Stamped(e)) last_logged = std::max(last_logged, e.time);
  }
  if (last_logged == 0) {
    *why = "no log line carries a date";
    return false;
  }
  TimeNs newest = 0;
  for (const LogFile& lf : inc.files) {
    if (auto t = ModTime(inc.root / lf.path)) newest = std::max(newest, *t);
  }
  if (newest > last_logged + kCopySlack) {
    *why = "the log files were modified " + Minutes(newest - last_logged) +
           " after their last logged line, so the incident was copied without its file times";
    return false;
  }
  // A job that saved and ran on leaves its files' times spread over the run; a copy or a
  // checkout writes every file within one burst, whatever the logs span.
  const auto [oldest, newest_any] = ModTimeSpan(inc, checkpoint_dir);
  if (oldest > 0 && newest_any - oldest <= kCopyBurst) {
    *why = "every log and checkpoint file was modified within the same " +
           std::to_string(kCopyBurst / kNsPerMs) +
           " ms, so the incident was copied or checked out without its file times";
    return false;
  }
  return true;
}

void AttachCheckpoints(const Incident& inc, const Finding& f, const CheckpointDir& dir, bool blind,
                       v1::Diagnosis* d) {
  v1::CheckpointOutcome o;
  std::vector<std::string> notes;
  if (blind) {
    auto r = NewestCheckpointBlindly(dir.path);
    if (r.ok()) {
      o = *r;
    } else {
      o.set_decision(v1::CHECKPOINT_DECISION_INCONCLUSIVE);
      o.set_summary(r.status().message());
    }
  } else {
    o = Verified(inc, f, dir, &notes);
  }
  o.set_dir(dir.shown);
  *d->mutable_checkpoint() = o;
  std::vector<Step> recovery;
  for (const auto& p : d->recovery().preconditions()) recovery.push_back({p.action(), p.target(), p.text()});
  RewordRestart(o, &recovery);
  recovery.push_back(CheckpointAction(o, notes));
  d->mutable_recovery()->clear_preconditions();
  for (const Step& a : recovery) {
    v1::Precondition* p = d->mutable_recovery()->add_preconditions();
    p->set_action(a.action);
    p->set_target(a.target);
    p->set_text(a.text);
  }
}

}  // namespace denpex::engine
