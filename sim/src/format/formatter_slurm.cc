// The lines of srun, slurmstepd and slurmctld (docs/log_formats.md §10-12). srun's lines have
// no timestamp; slurmstepd's carry the node's clock to the second; slurmctld's log prefixes
// "[YYYY-MM-DDThh:mm:ss.mmm] " in the controller's clock.
#include <algorithm>
#include <cstdlib>

#include "formatter.h"

namespace denpex::sim {

namespace {

// slurmstepd's OOM notice by Slurm release ({0} the job id): the cgroup v1 plugin's words
// before 23.02, the cgroup v2 plugin's from it.
constexpr VersionRow<std::string_view> kOomEvent[] = {
    {{"", "22.05"},
     "slurmstepd: error: Detected 1 oom-kill event(s) in StepId={0}.0 cgroup. Some of your "
     "processes may have been killed by the cgroup out-of-memory handler."},
    {{"23.02", ""},
     "slurmstepd: error: Detected 1 oom_kill event in StepId={0}.0. Some of the step tasks have "
     "been OOM Killed."},
};
static_assert(CoversEach(kOomEvent, kSlurmReleases));

// How srun words a task's end: a signal's description, or the exit code.
void TaskStatus(int exit_code, LineBuilder& out) {
  switch (exit_code) {
    case -9:
      out.Str("Killed");
      return;
    case kExitOomKilled:
      out.Str("Out Of Memory");
      return;
    case -6:
      out.Str("Aborted");
      return;
    case -15:
      out.Str("Terminated");
      return;
    case -11:
      out.Str("Segmentation fault");
      return;
    case -7:
      out.Str("Bus error");
      return;
    default:
      out.Str("Exited with exit code ").Int(exit_code);
  }
}

// "0-3,5,7-9": ascending ids compressed into ranges.
void IdRanges(const int* ids, int count, LineBuilder& out) {
  for (int i = 0; i < count;) {
    int j = i;
    while (j + 1 < count && ids[j + 1] == ids[j] + 1) ++j;
    if (i > 0) out.Char(',');
    out.Int(ids[i]);
    if (j > i) out.Char('-').Int(ids[j]);
    i = j + 1;
  }
}

}  // namespace

// YYYY-MM-DDThh:mm:ss[.mmm]
void LineFormatter::SlurmTime(LineBuilder& out, TimeNs local, bool millis) const {
  const CivilTime c = ToCivil(local);
  out.Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2).Char('T');
  out.Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  if (millis) out.Char('.').Zero(c.nanos / kNsPerMs, 3);
}

// srun: error: gpu-0002: tasks 8-15: Terminated
void LineFormatter::Format(const SrunTaskExits& r, LineBuilder& out) const {
  out.Str("srun: error: ").Str(job_.hostnames[r.node]).Str(r.count > 1 ? ": tasks " : ": task ");
  IdRanges(r.ranks.data(), r.count, out);
  out.Str(": ");
  TaskStatus(r.exit_code, out);
  out.EndLine();
}

void LineFormatter::Format(const SrunMessage& r, LineBuilder& out) const {
  switch (r.notice) {
    case SrunNotice::kTerminatingStep:
      out.Str(slurm_.terminating_step).Int(job_.job_id).Str(".0").EndLine();
      return;
    case SrunNotice::kStepAborted:
      out.Str("srun: Job step aborted: Waiting up to ").Int(job_.kill_wait / kNsPerSec + 2);
      out.Str(" seconds for job step to finish.").EndLine();
      return;
    case SrunNotice::kNodeFailure:
      out.Str("srun: error: Node failure on ").Str(job_.hostnames[r.node]).EndLine();
      return;
    case SrunNotice::kOomEvent:
      out.Fill(RowFor(kOomEvent, slurm_.name), {job_.job_id}).EndLine();
      return;
  }
}

// slurmstepd: error: *** STEP 4242001.0 ON gpu-0001 CANCELLED AT 2026-03-02T13:00:00 DUE TO
// TIME LIMIT ***
void LineFormatter::Format(const StepdCancelled& r, LineBuilder& out) const {
  out.Str("slurmstepd: error: *** ").Str(r.whole_job ? "JOB " : "STEP ").Int(job_.job_id);
  if (!r.whole_job) out.Str(".0");
  out.Str(" ON ").Str(job_.hostnames[r.node]).Str(" CANCELLED AT ");
  SlurmTime(out, Local(r.node, r.time), false);
  switch (r.reason) {
    case CancelReason::kNone:
      break;
    case CancelReason::kTimeLimit:
      out.Str(" DUE TO TIME LIMIT");
      break;
    case CancelReason::kPreemption:
      out.Str(" DUE TO PREEMPTION");
      break;
    case CancelReason::kNodeFailure:
      out.Str(slurm_.node_failure);
      break;
  }
  out.Str(" ***").EndLine();
}

void LineFormatter::Format(const CtldLine& r, LineBuilder& out) const {
  out.Char('[');
  SlurmTime(out, r.time + job_.controller_offset, true);
  out.Str("] ");
  const std::string_view host = r.node >= 0 ? std::string_view(job_.hostnames[r.node]) : "";
  switch (r.event) {
    case CtldEvent::kAllocate:
    case CtldEvent::kReallocate:
      out.Str("sched: Allocate JobId=").Int(job_.job_id).Str(" NodeList=");
      NodeList(r.event == CtldEvent::kReallocate ? r.node : -1, out);
      out.Str(" #CPUs=").Int(std::int64_t{job_.nodes} * 112).Str(" Partition=");
      out.Str(job_.partition);
      break;
    case CtldEvent::kTimeLimit:
      out.Str("Time limit exhausted for JobId=").Int(job_.job_id);
      break;
    case CtldEvent::kKillRequest:
      out.Str("_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=").Int(job_.job_id).Str(" uid 1000");
      break;
    case CtldEvent::kPreempted:
      out.Str("preempted JobId=").Int(job_.job_id);
      out.Str(" has been killed to reclaim resources for JobId=").Int(job_.job_id + 37);
      break;
    case CtldEvent::kNotResponding:
      out.Str("error: Nodes ").Str(host).Str(" not responding");
      break;
    case CtldEvent::kSetDown:
      out.Str("error: Nodes ").Str(host).Str(" not responding, setting DOWN");
      break;
    case CtldEvent::kKillOnFailed:
      out.Str("Killing JobId=").Int(job_.job_id).Str(" on failed node ").Str(host);
      break;
    case CtldEvent::kJobComplete:
      out.Str("_job_complete: JobId=").Int(job_.job_id);
      if (r.status >= 0) out.Str(" WEXITSTATUS ").Int(r.status);
      if (r.status < 0) out.Str(" WTERMSIG ").Int(-r.status);
      break;
    case CtldEvent::kJobDone:
      out.Str("_job_complete: JobId=").Int(job_.job_id).Str(" done");
      break;
    case CtldEvent::kRequeue:  // job_mgr.c: info("requeue %pJ due to failure of node %s")
      out.Str("requeue JobId=").Int(job_.job_id).Str(" due to failure of node ").Str(host);
      break;
    case CtldEvent::kNowResponding:
      out.Str("Node ").Str(host).Str(" now responding");
      break;
  }
  out.EndLine();
}

// The job's hostlist as Slurm compresses it: "gpu-[0001-0128]"; with `excluded` >= 0 that node
// is left out and the next spare host takes its place: "gpu-[0001-0006,0008-0129]".
void LineFormatter::NodeList(int excluded, LineBuilder& out) const {
  const std::string& first = job_.hostnames.front();
  std::size_t prefix = 0;
  while (prefix < first.size() && (first[prefix] < '0' || first[prefix] > '9')) ++prefix;
  const int width = static_cast<int>(first.size() - prefix);
  const int base = job_.nodes == 0 ? 1 : std::atoi(first.c_str() + prefix);
  if (job_.nodes == 1 && excluded < 0) {
    out.Str(first);
    return;
  }
  out.Str(std::string_view(first).substr(0, prefix)).Char('[');
  auto range = [&](int lo, int hi) {  // host numbers, inclusive
    out.Zero(lo, width);
    if (hi > lo) out.Char('-').Zero(hi, width);
  };
  const int last = base + job_.nodes - 1;
  if (excluded < 0) {
    range(base, last);
  } else {
    const int gone = base + excluded;
    if (gone > base) range(base, gone - 1);
    if (gone > base) out.Char(',');
    range(gone + 1, last + 1);
  }
  out.Char(']');
}

// A requeue-aware batch script echoes its environment first: the restart count tells the
// runs apart in the one output file they share.
void LineFormatter::Format(const BatchBanner& r, LineBuilder& out) const {
  out.Str("SLURM_JOB_ID=").Int(job_.job_id).Str(" SLURM_RESTART_COUNT=").Int(r.restart_count);
  out.Str(" SLURM_JOB_NODELIST=");
  NodeList(r.excluded_node, out);
  out.EndLine();
}

// Megatron's checkpointing.py (print_rank_0) once the resumed run has loaded its checkpoint.
void LineFormatter::Format(const CheckpointResumed& r, LineBuilder& out) const {
  out.Str(" successfully loaded checkpoint from /checkpoints/").Int(job_.job_id);
  out.Str(" at iteration ").Int(r.iteration).EndLine();
}

}  // namespace denpex::sim
