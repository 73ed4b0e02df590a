// mpirun's own messages (Open MPI 4.x, ORTE, and 5.x, PRRTE; docs/log_formats.md §26). They are help-file
// blocks between lines of 74 dashes; mpirun prints them on its stderr, unlabelled, in
// mpirun.out. mpirun runs on the launch host (login-01), which holds the HNP daemon
// [[J,0],0]; the orted of node i is [[J,0],i+1] and the application's processes are [[J,1],R].
#include <algorithm>

#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kRule =
    "--------------------------------------------------------------------------";

std::string_view SignalName(int exit_code) {
  switch (exit_code) {
    case -6: return "Aborted";
    case -7: return "Bus error";
    case -9: return "Killed";
    case -11: return "Segmentation fault";
    case -15: return "Terminated";
    default: return "Unknown signal";
  }
}

}  // namespace

// ORTE's job family number: the "35221" of [[35221,1],3].
int MpiJobFamily(std::int64_t job_id) { return static_cast<int>(job_id % 60000) + 1024; }

namespace {

// prterun's pid on the launch host (it names PRRTE's nspace) and each node's daemon's pid.
int PrterunPid(const Job& job) {
  return static_cast<int>(Rng(job.seed, StreamId::kMpirun, 1ULL << 32).UniformInt(20000, 400000));
}
int DaemonPid(const Job& job, int node) {
  return static_cast<int>(Rng(job.seed, StreamId::kMpirun, (1ULL << 32) + 1 + static_cast<std::uint64_t>(node)).UniformInt(1000, 99999));
}

}  // namespace

std::int64_t MpirunCitedLine(const MpirunNotice& r, bool open_mpi5) {
  switch (r.notice) {
    case MpiNotice::kExitCode: return open_mpi5 ? 4 : 8;  // "  Process name: ..."
    case MpiNotice::kSignal: return open_mpi5 ? 1 : 5;    // "mpirun noticed that process rank R ..."
    case MpiNotice::kLostDaemon: return 4;                // "  Remote daemon: ... on node <host>"
    case MpiNotice::kBindings: return 0;                  // never cited
  }
  return 0;
}

namespace {

// The daemon's (or the HNP's) name: ORTE's [[J,0],k] / [[J,1],R], PRRTE's
// [prterun-<launch host>-<pid>@0,k] / [prterun-...@1,R] (the nspace names the launch).
void ProcessName(const Job& job, int jobid, int vpid, LineBuilder& out) {
  if (job.open_mpi5) {
    out.Str("[prterun-login-01-").Int(PrterunPid(job)).Char('@').Int(jobid).Char(',').Int(vpid).Char(']');
  } else {
    out.Str("[[").Int(MpiJobFamily(job.job_id)).Char(',').Int(jobid).Str("],").Int(vpid).Char(']');
  }
}

// --report-bindings, one line per rank from its node's daemon (opal_output's "[host:pid] "):
// Open MPI 4 under --bind-to none (the usual GPU launch), PRRTE bound to 12 cores per rank.
void Bindings(const Job& job, const MpirunNotice& r, LineBuilder& out) {
  const std::string& host = job.hostnames[r.node];
  const int daemon_pid = DaemonPid(job, r.node);
  const int half = std::max(1, job.gpus_per_node / 2);
  for (int local = 0; local < job.gpus_per_node; ++local) {
    out.Char('[').Str(host).Char(':').Padded(daemon_pid, 5, '0').Str("] ");
    if (job.open_mpi5) {
      out.Str("Rank ").Int(r.rank + local).Str(" bound to package[").Int(local / half).Str("][core:");
      out.Int(local * 12).Char('-').Int(local * 12 + 11).Char(']').EndLine();
    } else {
      out.Str("MCW rank ").Int(r.rank + local).Str(" is not bound (or bound to all available processors)").EndLine();
    }
  }
}

void LostDaemon(const Job& job, const MpirunNotice& r, LineBuilder& out) {
  out.Str(kRule).EndLine();
  out.Str(job.open_mpi5 ? "PRTE" : "ORTE").Str(" has lost communication with a remote daemon.").EndLine();
  out.EndLine();
  out.Str("  HNP daemon   : ");
  ProcessName(job, 0, 0, out);
  out.Str(" on node login-01").EndLine();
  out.Str("  Remote daemon: ");
  ProcessName(job, 0, r.node + 1, out);
  out.Str(" on node ").Str(job.hostnames[r.node]).EndLine();
  out.EndLine();
  out.Str("This is usually due to either a failure of the TCP network").EndLine();
  out.Str("connection to the node, or possibly an internal failure of").EndLine();
  out.Str("the daemon itself. We cannot recover from this failure, and").EndLine();
  out.Str("therefore will terminate the job.").EndLine();
  out.Str(kRule).EndLine();
}

// PRRTE's abort blocks: no "Primary job" block first; the signal wraps onto its own line and the
// process-name block is indented by three spaces.
void PrrteAbort(const Job& job, const MpirunNotice& r, LineBuilder& out) {
  out.Str(kRule).EndLine();
  if (r.notice == MpiNotice::kSignal) {
    out.Str("prterun noticed that process rank ").Int(r.rank).Str(" with PID ").Int(job.worker_pid[r.rank]);
    out.Str(" on node ").Str(job.hostnames[job.NodeOf(r.rank)]).Str(" exited on").EndLine();
    out.Str("signal ").Int(-r.exit_code).Str(" (").Str(SignalName(r.exit_code)).Str(").").EndLine();
  } else {
    out.Str("prterun detected that one or more processes exited with non-zero status,").EndLine();
    out.Str("thus causing the job to be terminated. The first process to do so was:").EndLine();
    out.EndLine();
    out.Str("   Process name: ");
    ProcessName(job, 1, r.rank, out);
    out.EndLine();
    out.Str("   Exit code:    ").Int(r.exit_code).EndLine();
  }
  out.Str(kRule).EndLine();
}

}  // namespace

void LineFormatter::Format(const MpirunNotice& r, LineBuilder& out) const {
  if (r.notice == MpiNotice::kBindings) return Bindings(job_, r, out);
  if (r.notice == MpiNotice::kLostDaemon) return LostDaemon(job_, r, out);
  if (job_.open_mpi5) return PrrteAbort(job_, r, out);
  out.Str(kRule).EndLine();
  out.Str("Primary job  terminated normally, but 1 process returned").EndLine();
  out.Str("a non-zero exit code. Per user-direction, the job has been aborted.").EndLine();
  out.Str(kRule).EndLine();
  out.Str(kRule).EndLine();
  if (r.notice == MpiNotice::kSignal) {
    out.Str("mpirun noticed that process rank ").Int(r.rank).Str(" with PID ");
    out.Int(job_.worker_pid[r.rank]).Str(" on node ").Str(job_.hostnames[job_.NodeOf(r.rank)]);
    out.Str(" exited on signal ").Int(-r.exit_code).Str(" (").Str(SignalName(r.exit_code)).Str(").");
    out.EndLine();
  } else {
    out.Str("mpirun detected that one or more processes exited with non-zero status, thus causing")
        .EndLine();
    out.Str("the job to be terminated. The first process to do so was:").EndLine();
    out.EndLine();
    out.Str("  Process name: ");
    ProcessName(job_, 1, r.rank, out);
    out.EndLine();
    out.Str("  Exit code:    ").Int(r.exit_code).EndLine();
  }
  out.Str(kRule).EndLine();
}

}  // namespace denpex::sim
