// Launchers and schedulers (docs/log_formats.md): Slurm's srun,
// slurmstepd, slurmd and slurmctld; the torchrun agent; the DeepSpeed launcher; Kubernetes;
// Ray's raylet.
#include <algorithm>
#include <charconv>

#include "parse/families.h"
#include "parse/lines.h"
#include "parse/prefix.h"
#include "parse/scan.h"
#include "parse/world_info.h"

namespace denpex::engine {
namespace {

// The Slurm job id that opens `s` (`4250`, `4250.0`, `4250.batch`); an array task's
// `<array>_<task>(<id>)` gives its own id; -1 when `s` opens with no digits.
std::int64_t JobIdAt(std::string_view s) {
  Scanner sc(s);
  std::int64_t id = -1;
  if (!sc.Digits(1, 18, &id)) return -1;
  if (sc.Char('_')) {
    const std::string_view rest = sc.Rest();
    const std::size_t open = rest.find('(');
    std::int64_t own = -1;
    if (open != std::string_view::npos && open < 24) {
      Scanner in(rest.substr(open + 1));
      if (in.Digits(1, 18, &own) && in.Char(')')) return own;
    }
  }
  return id;
}

// The job id after the first `key` in `s` (-1 when none).
std::int64_t JobIdAfter(std::string_view s, std::string_view key) {
  const std::size_t at = s.find(key);
  return at == std::string_view::npos ? -1 : JobIdAt(s.substr(at + key.size()));
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// `*** JOB 123 ON node-1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***` and the
// older forms (`*** JOB 830329 CANCELLED AT ... DUE TO TIME LIMIT on n447 ***`,
// `*** STEP 1.0 FAILED (non-zero exit code or other failure mode) ***`).
bool Banner(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.SkipPast("*** ")) return false;
  std::string_view body = s.Rest();
  // It ends the line, or the quote it was pasted in (`...LIMIT ***\``, `...LIMIT ***". I set ...`).
  const std::size_t close = body.rfind(" ***");
  if (close == std::string_view::npos) return false;
  const std::string_view after = body.substr(close + 4);
  if (!after.empty() && after[0] != '`' && after[0] != '"' && after[0] != '\'') return false;
  body = body.substr(0, close + 4);
  SlurmNote n;
  n.node = strings->Intern(TokenAfter(body, " ON ", " "));
  if (n.node == kNoStr) n.node = strings->Intern(TokenAfter(body, " on ", " "));
  std::string_view reason = TokenAfter(body, " DUE TO ", "*");
  if (reason.ends_with(" ")) reason.remove_suffix(1);
  if (const std::size_t on = reason.find(" on "); on != std::string_view::npos) reason = reason.substr(0, on);
  if (const std::size_t comma = reason.find(','); comma != std::string_view::npos) reason = reason.substr(0, comma);
  out->kind = Kind::kCancelled;
  if (Has(body, "STEPD TERMINATED")) {
    out->kind = Kind::kStepTerminated;
  } else if (Has(body, " FAILED")) {
    reason = "FAILED";
  } else if (!Has(body, "CANCELLED")) {
    return false;
  } else if (reason.empty()) {
    reason = "CANCELLED";  // scancel: no reason given
  }
  n.reason = strings->Intern(reason);
  n.job = body.starts_with("JOB ") ? JobIdAt(body.substr(4)) : body.starts_with("STEP ") ? JobIdAt(body.substr(5)) : -1;
  n.in_job_output = true;
  Scanner at(body);
  if (at.SkipPast(" AT ") && ScanDateTime(&at, &out->time)) out->timed = true;  // no zone: the node's clock
  out->family = Family::kSlurm;
  out->detail = n;
  return true;
}

// `srun: error: node-3: task 5: Exited with exit code 1`, `tasks 2,4-5,7: Terminated`,
// `task 0: Out Of Memory`, `task 0: Killed`, `task 289: Bus error`.
bool SrunTask(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.Lit("error: ")) return false;
  const std::string_view node = s.Token(":");
  if (!s.Lit(": task")) return false;
  s.Char('s');
  s.Char(' ');
  const std::string_view tasks = s.Token(":");
  if (tasks.empty() || !s.Lit(": ")) return false;
  SlurmNote n{.node = strings->Intern(node), .tasks = strings->Intern(tasks)};
  std::string_view reason = s.Rest();
  std::int64_t code = 0;
  if (reason.starts_with("Exited with exit code ")) {
    IntAfter(reason, "exit code ", &code);
    reason = "Exited";
  }
  n.exit_code = static_cast<std::int32_t>(code);
  n.reason = strings->Intern(reason);
  out->family = Family::kSlurm;
  out->kind = reason == "Out Of Memory" ? Kind::kSlurmOom : Kind::kTaskExit;
  out->detail = n;
  return true;
}

// The job's requeue and its node's return: slurmctld's `requeue JobId=1 due to failure of node
// gpu-1` (job_mgr.c, a node failure of an sbatch --requeue job: a node-failure event naming the
// node; Slurm 22.05 prints `requeue job JobId=1 due to ...`), `Requeuing JobId=1`, `Node gpu-1 now responding` (node_mgr.c), and a batch script's
// echo of `SLURM_RESTART_COUNT=<n>` (n >= 1: a later run of a requeued job).
bool Requeue(std::string_view msg, StringTable* strings, Recognised* out) {
  if ((msg.starts_with("requeue JobId=") || msg.starts_with("requeue job JobId=")) && Has(msg, " due to failure of node ")) {
    out->family = Family::kSlurm;
    out->kind = Kind::kNodeFailure;
    out->detail = SlurmNote{.reason = strings->Intern("REQUEUED"),
                            .node = strings->Intern(TokenAfter(msg, "failure of node ", " ")),
                            .job = JobIdAfter(msg, "JobId=")};
    return true;
  }
  std::int64_t count = 0;
  const bool requeuing = msg.starts_with("Requeuing JobId=");
  if (requeuing || (Has(msg, "SLURM_RESTART_COUNT=") && IntAfter(msg, "SLURM_RESTART_COUNT=", &count) && count > 0)) {
    out->family = Family::kSlurm;
    out->kind = Kind::kRequeue;
    out->error = false;
    out->detail = SlurmNote{.reason = strings->Intern("REQUEUED"),
                            .exit_code = static_cast<std::int32_t>(count),
                            .job = requeuing ? JobIdAfter(msg, "JobId=") : JobIdAfter(msg, "SLURM_JOB_ID=")};
    return true;
  }
  // A batch script's echo of its job id (`SLURM_JOB_ID=4250`, `SLURM_JOBID=4250`): whose lines
  // the daemon logs' `JobId=4250` are (analyze/scope.h).
  if (const std::int64_t job = std::max(JobIdAfter(msg, "SLURM_JOB_ID="), JobIdAfter(msg, "SLURM_JOBID=")); job >= 0) {
    out->family = Family::kSlurm;
    out->kind = Kind::kJobId;
    out->error = false;
    out->detail = SlurmNote{.job = job};
    return true;
  }
  if (msg.starts_with("Node ") && msg.ends_with(" now responding")) {
    out->family = Family::kSlurm;
    out->kind = Kind::kNodeResponding;
    out->error = false;
    out->detail = SlurmNote{.reason = strings->Intern("RESPONDING"), .node = strings->Intern(TokenAfter(msg, "Node ", " "))};
    return true;
  }
  return false;
}

}  // namespace

namespace {

bool RecogniseSlurmLine(std::string_view msg, StringTable* strings, Recognised* out);

}  // namespace

bool RecogniseSlurm(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  std::int64_t step_job = -1;
  if (s.Char('[')) {  // slurmd: `[63532.0] error: ...`, the step's job id first
    step_job = JobIdAt(s.Token("]"));
    s.Lit("] ");
    msg = s.Rest();
  }
  if (!RecogniseSlurmLine(msg, strings, out)) return false;
  if (auto* n = std::get_if<SlurmNote>(&out->detail)) {
    if (n->job < 0) n->job = step_job;
    if (step_job >= 0) n->in_job_output = false;  // slurmd's log of the step
  }
  return true;
}

namespace {

bool RecogniseSlurmLine(std::string_view msg, StringTable* strings, Recognised* out) {
  // salloc (an interactive allocation) reports a lost node in srun's words.
  const bool salloc = msg.starts_with("salloc: error: Node failure on ");
  if (msg.starts_with("srun: ") || salloc) {
    msg.remove_prefix(salloc ? 8 : 6);
    if (SrunTask(msg, strings, out)) return true;
    if (msg.starts_with("error: Node failure on ")) {
      out->family = Family::kSlurm;
      out->kind = Kind::kNodeFailure;
      out->detail = SlurmNote{.reason = strings->Intern("NODE FAILURE"), .node = strings->Intern(msg.substr(23))};
      return true;
    }
    if (msg.starts_with("Job step aborted") || Has(msg, "Terminating ") || msg.starts_with("Force Terminated")) {
      out->family = Family::kSlurm;  // `Force Terminated StepId=4200.0`, `Terminating StepId=4200.0`
      out->kind = Kind::kStepAborted;
      out->detail = SlurmNote{.reason = InternCapped(strings, msg), .job = JobIdAfter(msg, "StepId=")};
      return true;
    }
    return Banner(msg, strings, out);
  }
  if (msg.starts_with("slurmstepd")) msg = TokenAfter(msg, ": ", "\n");
  if (msg.starts_with("error: ")) msg.remove_prefix(7);
  // slurmstepd before 15.08 ends a step whose task exited by itself: `Terminating job step
  // 113904.0; task 0 exit code 1 exited without notification`.
  if (msg.starts_with("Terminating job step ") && Has(msg, "; task ")) {
    std::int64_t code = 0;
    IntAfter(msg, " exit code ", &code);
    out->family = Family::kSlurm;
    out->kind = Kind::kTaskExit;
    out->detail = SlurmNote{.reason = strings->Intern("Exited"), .tasks = strings->Intern(TokenAfter(msg, "; task ", " ")),
                            .exit_code = static_cast<std::int32_t>(code), .job = JobIdAfter(msg, "job step ")};
    return true;
  }
  if (msg.starts_with("*** ")) return Banner(msg, strings, out);
  if (msg.starts_with("Detected ") && (Has(msg, " oom-kill event") || Has(msg, " oom_kill event"))) {
    out->family = Family::kSlurm;
    out->kind = Kind::kSlurmOom;
    // `in StepId=<job>.<step>` (Slurm 20.11+), `in step <job>.<step> cgroup` before.
    std::int64_t job = JobIdAfter(msg, "StepId=");
    if (job < 0) job = JobIdAfter(msg, " in step ");
    out->detail = SlurmNote{.reason = strings->Intern("OOM"), .job = job};
    return true;
  }
  if (Requeue(msg, strings, out)) return true;
  if (const bool down = msg.starts_with("Nodes "); down || msg.starts_with("Killing JobId=")) {
    // slurmctld: `error: Nodes gpu-1 not responding[, setting DOWN]`, `Killing JobId=1 on failed node gpu-1`
    if (!Has(msg, down ? " not responding" : " on failed node ")) return false;
    const std::string_view node = down ? TokenAfter(msg, "Nodes ", " ") : TokenAfter(msg, "on failed node ", " ");
    out->family = Family::kSlurm;
    out->kind = Kind::kNodeFailure;
    out->detail = SlurmNote{.reason = strings->Intern(down ? (Has(msg, "setting DOWN") ? "DOWN" : "NOT RESPONDING")
                                                           : "KILLED ON FAILED NODE"),
                            .node = strings->Intern(node),
                            .job = down ? -1 : JobIdAfter(msg, "JobId=")};
    return true;
  }
  // slurmctld's word that the scheduler ends the job.
  struct Reason {
    std::string_view opens;
    std::string_view reason;
  };
  for (const Reason& r : {Reason{"Time limit exhausted for JobId=", "TIME LIMIT"},
                          Reason{"_slurm_rpc_kill_job: REQUEST_KILL_JOB", "CANCELLED"}, Reason{"preempted JobId=", "PREEMPTION"}}) {
    if (!msg.starts_with(r.opens)) continue;
    out->family = Family::kSlurm;
    out->kind = Kind::kCancelled;
    out->detail = SlurmNote{.reason = strings->Intern(r.reason), .job = JobIdAfter(msg, "JobId=")};
    return true;
  }
  if (msg.starts_with("sched: Allocate JobId=")) {  // slurmctld: the job's start (bounds untimed failures)
    out->family = Family::kSlurm;
    out->kind = Kind::kJobAllocated;
    out->detail = SlurmNote{.reason = strings->Intern(TokenAfter(msg, "JobId=", " ")),
                            .node = strings->Intern(TokenAfter(msg, " NodeList=", " ")),  // the job's nodes, in task order
                            .job = JobIdAfter(msg, "JobId=")};
    return true;
  }
  if (msg.starts_with("_job_complete: JobId=")) {  // slurmctld: `WTERMSIG 9` / `WEXITSTATUS 1`
    std::int64_t v = 0;
    SlurmNote n;
    if (IntAfter(msg, "WTERMSIG ", &v)) {
      n.exit_code = static_cast<std::int32_t>(-v);
    } else if (IntAfter(msg, "WEXITSTATUS ", &v)) {
      n.exit_code = static_cast<std::int32_t>(v);
    }
    n.reason = strings->Intern(TokenAfter(msg, "JobId=", " "));
    n.job = JobIdAfter(msg, "JobId=");
    out->family = Family::kSlurm;
    out->kind = Kind::kJobComplete;
    out->error = n.exit_code != 0;
    out->detail = n;
    return true;
  }
  return false;
}

}  // namespace

// The torchrun agent's rendezvous result (LOGLEVEL=INFO, §6): its `  global_ranks=[g0, g1, ...]`
// line, the node's workers in local-rank order. Numbered contiguously, they give the node's
// first rank: a NodeLayout whose first_rank is g0 (nnodes and node_rank unknown here).
bool RecogniseAgentRanks(std::string_view msg, StringTable* /*strings*/, Recognised* out) {
  Scanner s(msg);
  std::int64_t first = 0, v = 0, n = 0;
  if (!s.Lit("  global_ranks=[") || !s.Digits(1, 9, &first)) return false;
  for (n = 1; s.Lit(", "); ++n) {
    if (!s.Digits(1, 9, &v) || v != first + n) return false;
  }
  if (!s.Lit("]")) return false;
  out->family = Family::kTorchrun;
  out->kind = Kind::kAgentRanks;
  out->error = false;
  out->detail = NodeLayout{.local_procs = static_cast<std::int32_t>(n), .first_rank = static_cast<std::int32_t>(first)};
  return true;
}

bool RecogniseAgent(std::string_view msg, StringTable* strings, Recognised* out) {
  out->family = Family::kTorchrun;
  WorkerFailedFields f;
  if (ParseWorkerFailed(msg, &f) == Match::kYes) {
    out->kind = Kind::kWorkerFailed;
    out->detail = WorkerFailed{.local_rank = f.local_rank, .exit_code = f.exit_code, .pid = f.pid};
    return true;
  }
  std::int64_t pid;
  std::string_view signal;
  if (ParseWorkerSignalled(msg, &pid, &signal) == Match::kYes) {
    out->kind = Kind::kWorkerSignalled;
    out->error = false;
    out->detail = WorkerSignalled{pid, strings->Intern(signal)};
    return true;
  }
  Scanner s(msg);
  if (s.Lit("Unable to shutdown process ") && s.Digits(1, 12, &pid)) {  // `... forcefully exitting via 9`
    out->kind = Kind::kWorkerSignalled;
    out->error = false;
    out->detail = WorkerSignalled{pid, strings->Intern("SIGKILL")};
    return true;
  }
  if (msg.starts_with("Received Signals.SIGTERM death signal") || msg.starts_with("Received SIGTERM death signal")) {
    out->kind = Kind::kAgentSignalled;  // torchrun itself was SIGTERMed (a pod stopped, a job cancelled)
    out->error = false;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (msg.starts_with("Local worker group finished (FAILED)")) {
    out->kind = Kind::kGroupFailed;
    out->error = false;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (msg.starts_with("Error waiting on exit barrier")) {  // torch 1.13: `... Elapsed: 300.74 seconds`
    out->kind = Kind::kExitBarrier;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (Has(msg, "failed on SocketImpl(")) {  // TCPStore: `[c10d] recvValue failed on SocketImpl(..., remote=[h]:p): ...`
    out->kind = Kind::kStoreError;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (Has(msg, "[c10d] The client socket has timed out") || Has(msg, "RendezvousConnectionError") ||
      Has(msg, "failed to bind")) {
    out->kind = Kind::kRendezvousError;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  return false;
}

bool RecogniseWrapper(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.Lit(kWrapperTag)) return false;
  std::int64_t pid, n;
  out->family = Family::kOther;
  if (s.Lit("pid ") && s.Digits(1, 12, &pid) && s.Char(' ')) {
    if (s.Lit("killed by signal ") && s.Digits(1, 3, &n)) {
      out->kind = Kind::kProcessExit;
      out->detail = WorkerFailed{.exit_code = -static_cast<std::int32_t>(n), .pid = pid};
      return true;
    }
    if (s.Lit("exited with code ") && s.Digits(1, 3, &n)) {
      out->kind = Kind::kProcessExit;
      out->error = n != 0;
      out->detail = WorkerFailed{.exit_code = static_cast<std::int32_t>(n), .pid = pid};
      return true;
    }
    return false;
  }
  Scanner r(msg);
  r.Lit(kWrapperTag);
  if (r.Lit("received ")) {
    const std::string_view signal = r.Token(" ");
    if (!signal.starts_with("SIG") || !r.Lit(" from pid ") || !r.Digits(1, 12, &pid)) return false;
    out->kind = Kind::kProcessSignalled;
    out->error = false;
    out->detail = WorkerSignalled{pid, strings->Intern(signal)};
    return true;
  }
  return false;
}

namespace {

// The decimal number after `key` (`used = 1956.1`); false when there is none.
bool DecimalAfter(std::string_view s, std::string_view key, double* v) {
  const std::size_t at = s.find(key);
  if (at == std::string_view::npos) return false;
  const char* begin = s.data() + at + key.size();
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), *v);
  return ec == std::errc() && end != begin;
}

// DeepSpeed's routine rank-0 notes (§10): the fp16 loss scaler's overflow (`[deepspeed]
// OVERFLOW! Rank 0 Skipping step. ...`, `Grad overflow on iteration N`) and see_memory_usage's
// `CPU Virtual Memory:  used = X GB, percent = Y%`. Not errors: an overflow skips one step.
bool RecogniseDeepSpeedNote(std::string_view msg, StringTable* strings, Recognised* out) {
  if (Has(msg, "OVERFLOW! Rank ") || Has(msg, "Grad overflow on iteration") ||
      Has(msg, "loss scale overflow! ")) {
    out->family = Family::kDeepSpeed;
    out->kind = Kind::kOverflow;
    out->error = false;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  double used = 0, percent = 0;
  if (Has(msg, "CPU Virtual Memory:") && DecimalAfter(msg, "used = ", &used) &&
      DecimalAfter(msg, "percent = ", &percent)) {
    out->family = Family::kDeepSpeed;
    out->kind = Kind::kMemoryUsage;
    out->error = false;
    out->detail = HostMemory{static_cast<float>(used), static_cast<float>(percent)};
    return true;
  }
  return false;
}

}  // namespace

bool RecogniseDeepSpeed(std::string_view msg, StringTable* strings, Recognised* out) {
  if (RecogniseDeepSpeedNote(msg, strings, out)) return true;
  std::int64_t v;
  if (Has(msg, " exits with return code = ") && IntAfter(msg, "return code = ", &v)) {
    out->family = Family::kDeepSpeed;
    out->kind = Kind::kLauncherExit;
    out->detail = WorkerFailed{.exit_code = static_cast<std::int32_t>(v)};
    return true;
  }
  std::int64_t nnodes = 0, procs = 0, node_rank = 0;
  if (msg.starts_with("nnodes=") && IntAfter(msg, "nnodes=", &nnodes) &&
      IntAfter(msg, "num_local_procs=", &procs) && IntAfter(msg, "node_rank=", &node_rank) && procs > 0 &&
      node_rank >= 0 && node_rank < nnodes) {
    out->family = Family::kDeepSpeed;
    out->kind = Kind::kLauncherLayout;
    out->error = false;
    out->detail = NodeLayout{static_cast<std::int32_t>(nnodes), static_cast<std::int32_t>(procs),
                             static_cast<std::int32_t>(node_rank)};
    return true;
  }
  // runner.py's `cmd = pdsh ... --world_info=<b64> ...`: the job's host -> slots map, kept whole
  // (ingest decodes it: ingest/world_info.h).
  if (msg.starts_with("cmd = ")) {
    const std::string_view value = WorldInfoArgument(msg);
    if (value.empty()) return false;
    out->family = Family::kDeepSpeed;
    out->kind = Kind::kWorldInfo;
    out->error = false;
    out->detail = Note{strings->Intern(value)};
    return true;
  }
  Scanner s(msg);
  if (s.Lit("Killing subprocess ") && s.Digits(1, 12, &v)) {
    out->family = Family::kDeepSpeed;
    out->kind = Kind::kKillingSubprocess;
    out->error = false;
    out->detail = WorkerSignalled{v, strings->Intern("SIGKILL")};
    return true;
  }
  (void)strings;
  return false;
}

namespace {

// The next run of non-blank characters; advances past it and the blanks after it.
std::string_view Word(std::string_view* s) {
  *s = TrimLeft(*s);
  std::size_t n = 0;
  while (n < s->size() && (*s)[n] != ' ' && (*s)[n] != '\t') ++n;
  const std::string_view w = s->substr(0, n);
  *s = TrimLeft(s->substr(n));
  return w;
}

bool IsAge(std::string_view w) {  // `45s`, `3m12s`, `12m`, `2d`, `<unknown>`, `12m (x2 over 13m)`
  if (w == "<unknown>") return true;
  return !w.empty() && IsDigit(w.front()) && (w.back() == 's' || w.back() == 'm' || w.back() == 'h' || w.back() == 'd');
}

// A row of `kubectl get events` (`LAST SEEN  TYPE  REASON  OBJECT  MESSAGE`) or of the Events
// table of `kubectl describe` (`Type  Reason  Age  From  Message`), by its reason.
bool EventRow(std::string_view t, StringTable* strings, Recognised* out) {
  std::string_view rest = t;
  std::string_view type = Word(&rest);
  if (IsAge(type)) type = Word(&rest);
  if (type != "Warning" && type != "Normal") return false;
  const std::string_view reason = Word(&rest);
  std::string_view object = Word(&rest);  // `pod/<name>`, `node/<name>`, `pytorchjob/<name>`; describe: the age
  std::string_view name;
  if (const std::size_t slash = object.find('/'); slash != std::string_view::npos && slash + 1 < object.size()) {
    name = object.substr(slash + 1);
    object = object.substr(0, slash);
  }
  const bool node = object == "node";
  Kind kind;
  bool error = true;
  if (reason == "Evicted") {
    kind = Kind::kEvicted;
  } else if (reason == "OOMKilling") {  // node-problem-detector's kernel monitor
    kind = Kind::kOomKilled;
  } else if (reason == "NodeNotReady") {
    kind = Kind::kNodeNotReady;
    error = node;  // the node's own row; its pods' `Node is not ready` rows follow from it
  } else if (reason == "Killing" || reason == "TaintManagerEviction" || reason == "SuccessfulDeletePod") {
    kind = Kind::kPodKilling;
    error = false;
  } else if (reason == "PyTorchJobFailed" || reason == "FailedJobs" || reason == "BackoffLimitExceeded" ||
             reason == "ReachedMaxRestarts") {
    kind = Kind::kJobFailed;
    error = false;
  } else if (reason == "Restarting") {  // JobSet: `restarting jobset, attempt 1`
    kind = Kind::kJobRestarting;
    error = false;
  } else if (reason == "BackOff" && Has(rest, "Back-off restarting failed container")) {  // describe: age, from first
    kind = Kind::kCrashLoop;  // the kubelet waits out the back-off before the next restart
    error = false;
  } else if (reason == "FailedScheduling") {  // kube-scheduler: `0/N nodes are available: ...`
    kind = Kind::kFailedScheduling;
    error = false;
    name = {};  // the Pending pod runs on no node
  } else if (reason == "Scheduled" && object == "pod") {  // `Successfully assigned <ns>/<pod> to <node>`
    const std::size_t to = rest.rfind(" to ");
    if (to == std::string_view::npos || !rest.starts_with("Successfully assigned ")) return false;
    out->family = Family::kKubernetes;
    out->kind = Kind::kPodNode;
    out->error = false;
    std::string_view node_name = rest.substr(to + 4);
    while (!node_name.empty() && (node_name.back() == ' ' || node_name.back() == '\r')) node_name.remove_suffix(1);
    out->host = node_name;
    out->detail = Note{InternCapped(strings, t)};
    return true;
  } else {
    return false;
  }
  out->family = Family::kKubernetes;
  out->kind = kind;
  out->error = error;
  if ((object == "pod" || node) && !name.empty()) out->host = name;
  out->detail = Note{InternCapped(strings, t)};
  return true;
}

bool IsReadyCount(std::string_view w) {  // `0/1`
  const std::size_t slash = w.find('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == w.size()) return false;
  for (char c : w) {
    if (!IsDigit(c) && c != '/') return false;
  }
  return true;
}

// A row of `kubectl get pods` (`[NAMESPACE]  NAME  READY  STATUS  RESTARTS  AGE ...`) whose STATUS
// names how the pod ended: `istio-citadel-894d98c88-zkt23   0/1   Evicted   0   102d`.
bool PodRow(std::string_view t, Kind* kind) {
  std::string_view rest = t;
  Word(&rest);  // the pod's name, or its namespace (`-A`)
  std::string_view ready = Word(&rest);
  if (!IsReadyCount(ready)) ready = Word(&rest);  // after the name
  if (!IsReadyCount(ready)) return false;
  const std::string_view status = Word(&rest);
  const std::string_view restarts = Word(&rest);
  if (restarts.empty() || !IsDigit(restarts.front()) || !IsAge(Word(&rest))) return false;
  if (status == "Evicted") {
    *kind = Kind::kEvicted;
  } else if (status == "OOMKilled") {
    *kind = Kind::kOomKilled;
  } else if (status == "CrashLoopBackOff") {
    *kind = Kind::kCrashLoop;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool RecogniseKubernetes(std::string_view msg, StringTable* strings, Recognised* out) {
  const std::string_view t = TrimLeft(msg);
  Kind kind;
  bool error = true;
  if ((t.starts_with("Warning ") || t.starts_with("Normal ") || (!t.empty() && IsDigit(t.front()))) &&
      EventRow(t, strings, out)) {
    return true;
  }
  if ((Has(t, "The node was low on ") && Has(t, "Evicted")) || t.starts_with("The node was low on resource: ")) {
    // The kubelet's eviction message with its reason on one line: an event's (`Evicted: The node was
    // low on resource: memory. ...` of an e2e dump), a pod's status (`kubectl get pod -o jsonpath`).
    // (describe's `Message:` line is not one: its `Reason: Evicted` line above it is the event.) The
    // message alone on its line (`kubectl get pod -o jsonpath='{.status.message}'`, a paste) is one.
    kind = Kind::kEvicted;
  } else if ((t.starts_with("back-off ") || t.starts_with("Back-off ")) && Has(t, " restarting failed container")) {
    // The kubelet's CrashLoopBackOff waiting message: `back-off 5m0s restarting failed container=<c> pod=<p>`.
    kind = Kind::kCrashLoop;
    error = false;
  } else if (t.starts_with("Warning ") || t.starts_with("Normal ") || (!t.empty() && IsDigit(t.front()))) {
    return false;
  } else if (t.starts_with("Reason:") || t.starts_with("reason: ")) {  // describe's; a pod's status as YAML
    const std::string_view r = TrimLeft(t.substr(7));
    if (r.starts_with("OOMKilled")) {
      kind = Kind::kOomKilled;
    } else if (r.starts_with("CrashLoopBackOff")) {
      kind = Kind::kCrashLoop;
    } else if (r.starts_with("Evicted")) {
      kind = Kind::kEvicted;
    } else {
      return false;
    }
  } else if (t.starts_with("Node:") && msg.starts_with("Node:")) {  // describe pod: `Node:  <node>/<ip>`
    const std::string_view v = TrimLeft(t.substr(5));
    const std::size_t slash = v.find('/');
    if (slash == 0 || slash == std::string_view::npos) return false;
    out->host = v.substr(0, slash);
    kind = Kind::kPodNode;
    error = false;
  } else if (t.starts_with("Restart Count:")) {  // describe pod: how often its container restarted in place
    kind = Kind::kRestartCount;
    error = false;
  } else if (t.starts_with("command terminated with exit code ")) {
    kind = Kind::kContainerExit;
  } else if (t.starts_with("\"Eviction manager: pods ranked for eviction\"")) {
    kind = Kind::kEvicted;
  } else if (PodRow(t, &kind)) {
    error = kind != Kind::kCrashLoop;
  } else {
    return false;
  }
  out->family = Family::kKubernetes;
  out->kind = kind;
  out->error = error;
  out->detail = Note{InternCapped(strings, t)};
  return true;
}

namespace {

bool TaskExit(std::string_view rank, std::string_view reason, std::int32_t code, std::string_view node,
              StringTable* strings, Recognised* out) {
  out->family = Family::kBareMetal;
  out->kind = Kind::kTaskExit;
  out->detail = SlurmNote{.reason = strings->Intern(reason), .node = strings->Intern(node), .tasks = strings->Intern(rank),
                          .exit_code = code};
  return true;
}

bool LostNode(std::string_view node, std::string_view reason, StringTable* strings, Recognised* out) {
  out->family = Family::kBareMetal;
  out->kind = Kind::kNodeFailure;
  out->detail = SlurmNote{.reason = strings->Intern(reason), .node = strings->Intern(node)};
  return true;
}

// `mpirun noticed that process rank 3 with PID 12345 on node gpu-0001 exited on signal 9 (Killed).`
// PRRTE may wrap before `signal`: the first line alone still names the rank (status `signal`).
bool MpiNoticed(std::string_view msg, StringTable* strings, Recognised* out) {
  const std::size_t at = msg.find(" noticed that process rank ");
  if (at == std::string_view::npos) return false;
  const std::string_view tool = msg.substr(0, at);
  if (tool != "mpirun" && tool != "prterun" && tool != "mpiexec" && tool != "orterun") return false;
  const std::string_view rank = TokenAfter(msg, "process rank ", " ");
  if (rank.empty()) return false;
  std::int64_t signal = 0;
  std::string_view reason = "signal";
  if (IntAfter(msg, "exited on signal ", &signal)) {
    reason = TokenAfter(msg, "(", ")");
    if (reason.empty()) reason = "signal";
  }
  return TaskExit(rank, reason, static_cast<std::int32_t>(-signal), TokenAfter(msg, " on node ", " "), strings, out);
}

// An Open MPI process name's vpid in job `jobid`: ORTE's `[[J,<jobid>],R]`, PRRTE's
// `[prterun-<host>-<pid>@<jobid>,R]`.
std::string_view ProcessVpid(std::string_view name, std::string_view jobid) {
  const bool orte = name.starts_with("[[");
  std::string key(orte ? "," : "@");  // appended, not `"lit" + std::string`: GCC 12's -Wrestrict false positive
  key.append(jobid).append(orte ? "]," : ",");
  return TokenAfter(name, key, "]");
}

// --report-bindings: `[<host>:<pid>] MCW rank R bound to ...` / `... is not bound (or bound to
// all available processors)` (Open MPI 4, PRRTE's documented form) and `[<host>:<pid>] Rank R
// bound to package[P][core:C]` (Open MPI 5): the daemon on <host> started rank R.
bool RankBinding(std::string_view t, Recognised* out) {
  Scanner s(t);
  std::string_view host;
  std::int64_t rank = 0;
  if (!DaemonTag(&s, &host)) return false;
  if (!s.Lit("MCW rank ") && !s.Lit("Rank ")) return false;
  if (!s.Digits(1, 9, &rank) || rank > kMaxRank || !(s.Lit(" bound to ") || s.Lit(" is not bound") || s.Lit(" not bound"))) {
    return false;
  }
  out->family = Family::kBareMetal;
  out->kind = Kind::kRankBinding;
  out->error = false;
  out->host = host;
  out->rank = static_cast<std::int32_t>(rank);
  out->detail = WorkerSignalled{.pid = 0};  // the pid printed is the daemon's, not the rank's
  return true;
}

bool IsIp(std::string_view s) {
  int dots = 0;
  for (char c : s) {
    if (c == '.') {
      ++dots;
    } else if (!IsDigit(c)) {
      return false;
    }
  }
  return dots == 3 && !s.empty();
}

}  // namespace

bool RecogniseBareMetal(std::string_view msg, StringTable* strings, Recognised* out) {
  const std::string_view t = TrimLeft(msg);
  if (t.starts_with("Process name: [")) {  // mpirun / prterun detected ... The first process to do so was:
    const std::string_view rank = ProcessVpid(t.substr(14), "1");
    if (rank.empty()) return false;
    return TaskExit(rank, "Exited", 1, "", strings, out);  // its `Exit code:` line follows
  }
  if (RankBinding(t, out)) return true;
  if (t.starts_with("Remote daemon: [")) {  // ORTE / PRTE has lost communication with a remote daemon.
    const std::string_view node = TokenAfter(t, " on node ", " ");
    return !node.empty() && LostNode(node, "LOST DAEMON", strings, out);
  }
  if (MpiNoticed(t, strings, out)) return true;
  if (t.starts_with("pdsh@") && Has(t, ": ssh exited with exit code 255")) {  // pdsh@h: gpu-7: ssh exited ...
    Scanner s(t);
    s.Token(":");
    s.Lit(": ");
    const std::string_view node = s.Token(":");
    return !node.empty() && LostNode(node, "SSH FAILED", strings, out);
  }
  if (t.starts_with("ssh: connect to host ")) {  // ssh: connect to host gpu-7 port 22: Connection timed out
    const std::string_view node = TokenAfter(t, "connect to host ", " ");
    return !node.empty() && LostNode(node, "SSH UNREACHABLE", strings, out);
  }
  // An established ssh session lost (openssh clientloop.c; ssh then exits 255): the host went
  // away under it (`quit_message`, EPIPE: rebooted, powered off) or stopped answering keepalives
  // (ServerAliveInterval x ServerAliveCountMax).
  if (t.starts_with("Connection to ") && Has(t, " closed by remote host.")) {
    const std::string_view node = TokenAfter(t, "Connection to ", " ");
    return !node.empty() && LostNode(node, "SSH CLOSED", strings, out);
  }
  if (t.starts_with("Timeout, server ") && Has(t, " not responding.")) {
    const std::string_view node = TokenAfter(t, "Timeout, server ", " ");
    return !node.empty() && LostNode(node, "SSH TIMEOUT", strings, out);
  }
  return false;
}

bool RecogniseRay(std::string_view msg, StringTable* strings, Recognised* out) {
  out->family = Family::kRay;
  std::int64_t v = 0;
  if (Has(msg, "killed due to memory pressure (OOM)")) {  // the raylet's memory-monitor summary
    out->kind = Kind::kRayletOomKills;
    const std::string_view ip = TokenAfter(msg, "IP: ", ")");
    if (IsIp(ip)) out->host = ip;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (Has(msg, "System memory low at node with IP ")) {  // Ray 2.1's memory monitor, before the periodic summary
    out->kind = Kind::kRayletOomKills;
    const std::string_view ip = TokenAfter(msg, "node with IP ", ". ");
    if (IsIp(ip)) out->host = ip;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  // ray.exceptions.OutOfMemoryError's message without its type: its first sentence (a title, a
  // trainer's own log line) or its second line alone (`Memory on the node (IP: ...) where the task ...`).
  if (Has(msg, "Task was killed due to the node running low on memory") ||
      (Has(msg, "Memory on the node (IP: ") && Has(msg, "exceeds the memory usage threshold"))) {
    out->kind = Kind::kRayOom;
    const std::string_view ip = TokenAfter(msg, "(IP: ", ",");
    if (IsIp(ip)) out->host = ip;
    out->detail = PythonError{.message = InternCapped(strings, msg)};  // as the typed error's
    return true;
  }
  // A worker's death as the raylet or the driver's worker.py reports it (`A worker died or was killed
  // while executing a task by an unexpected system error. ... Worker IP address: <ip> ...`): the
  // cause an actor's death is read with, not the driver's ActorDiedError itself.
  if (Has(msg, "A worker died or was killed while executing")) {
    out->kind = Kind::kActorCause;
    const std::string_view ip = TokenAfter(msg, "Worker IP address: ", " ");
    if (IsIp(ip)) out->host = ip;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  // ActorDiedError's message quoted by a trainer's own line (`... exception is The actor died
  // unexpectedly before finishing this task.`), without the exception's type.
  if (Has(msg, "The actor died unexpectedly before finishing this task")) {
    out->kind = Kind::kActorDied;
    out->detail = PythonError{.message = InternCapped(strings, msg)};  // as the typed error's
    return true;
  }
  if (Has(msg, " has been marked dead because the detector has missed too many heartbeats")) {  // GCS
    out->kind = Kind::kRayNodeDead;
    const std::string_view ip = TokenAfter(msg, " and address: ", " ");
    if (IsIp(ip)) out->host = ip;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (msg.starts_with("- (node_id=") || msg.starts_with("- (ip=")) {
    // Ray Train's worker table: `- (node_id=<id>, ip=<ip>, pid=<pid>) world_rank=R, local_rank=L, node_rank=N`
    const std::string_view ip = TokenAfter(msg, "ip=", ",");
    std::int64_t pid = 0, rank = -1;
    if (!IsIp(ip) || !IntAfter(msg, "pid=", &pid) || !IntAfter(msg, "world_rank=", &rank) || rank > kMaxRank) return false;
    out->kind = Kind::kRayWorker;
    out->error = false;
    out->host = ip;
    out->rank = static_cast<std::int32_t>(rank);
    out->detail = WorkerSignalled{.pid = pid};  // a pid, not an exit: no launcher report
    return true;
  }
  if (msg.starts_with("ray.exceptions.RayTaskError(")) {
    // The driver's word that a worker's training function raised: `ray.exceptions.RayTaskError(
    // <Exc>): ray::_RayTrainWorker__execute.get_next() (pid=<pid>, ip=<ip>, actor_id=..., repr=...)`
    const std::string_view ip = TokenAfter(msg, " ip=", ",");
    if (!IntAfter(msg, "(pid=", &v)) return false;
    out->kind = Kind::kRayTaskError;
    if (IsIp(ip)) out->host = ip;
    out->detail = WorkerSignalled{.pid = v, .signal = strings->Intern(TokenAfter(msg, "RayTaskError(", ")"))};
    return true;
  }
  if (msg.starts_with("\tpid: ") && IntAfter(msg, "pid: ", &v)) {  // ActorDiedError's fields
    out->kind = Kind::kActorField;
    out->error = false;
    out->detail = WorkerSignalled{.pid = v};
    return true;
  }
  if (msg.starts_with("\tip: ") && IsIp(msg.substr(5))) {
    out->kind = Kind::kActorField;
    out->error = false;
    out->host = msg.substr(5);
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  if (msg.starts_with("The actor is dead because its worker process has died.") ||
      msg.starts_with("The actor died because its node has died.")) {
    out->kind = Kind::kActorCause;
    const std::string_view ip = TokenAfter(msg, "(IP: ", ",");  // the memory monitor's word names the node
    if (IsIp(ip)) out->host = ip;
    out->detail = Note{InternCapped(strings, msg)};
    return true;
  }
  return false;
}

// The actor's owner on its death (Ray core worker, core_worker/actor_manager.cc
// HandleActorStateNotification; python-core-driver-*.log, python-core-worker-*.log):
// `received notification on actor, state: DEAD, actor_id: <id>, ip address: <ip>, port: <n>,
// worker_id: <id>, raylet_id: <id>, num_restarts: <n>`, then Ray 1.x `, has
// creation_task_exception=<0|1>` or Ray 2.x `, death context type=<cause>`. An actor's death only
// where the line says it failed: its creation task raised (`creation_task_exception=1`,
// `CreationTaskFailureContext`) or the memory monitor killed it (`OOMContext`). A DEAD actor with
// no cause, or `ActorDiedErrorContext`, is also what `ray.kill` and an actor out of scope leave.
bool RecogniseRayActorState(std::string_view msg, StringTable* strings, Recognised* out) {
  constexpr std::string_view kDead = "received notification on actor, state: DEAD,";
  if (!msg.starts_with(kDead)) return false;
  const std::string_view fields = msg.substr(kDead.size());
  if (!Has(fields, ", has creation_task_exception=1") && !Has(fields, ", death context type=CreationTaskFailureContext") &&
      !Has(fields, ", death context type=OOMContext")) {
    return false;
  }
  out->family = Family::kRay;
  out->kind = Kind::kActorDied;
  const std::string_view ip = TokenAfter(fields, "ip address: ", ",");
  if (IsIp(ip)) out->host = ip;
  out->detail = PythonError{.message = InternCapped(strings, msg)};  // as ActorDiedError's
  return true;
}

}  // namespace denpex::engine
