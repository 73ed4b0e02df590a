// mpirun's own messages (Open MPI 4.x, ORTE; docs/log_formats.md §26). They are help-file
// blocks between lines of 74 dashes; mpirun prints them on its stderr, unlabelled, in
// mpirun.out. mpirun runs on the launch host (login-01), which holds the HNP daemon
// [[J,0],0]; the orted of node i is [[J,0],i+1] and the application's processes are [[J,1],R].
#include "formatter.h"
#include "writer.h"

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

std::int64_t MpirunCitedLine(const MpirunNotice& r) {
  switch (r.notice) {
    case MpiNotice::kExitCode: return 8;    // "  Process name: [[J,1],R]"
    case MpiNotice::kSignal: return 5;      // "mpirun noticed that process rank R ..."
    case MpiNotice::kLostDaemon: return 4;  // "  Remote daemon: [[J,0],k] on node <host>"
  }
  return 0;
}

void LineFormatter::Format(const MpirunNotice& r, LineBuilder& out) const {
  const int family = MpiJobFamily(job_.job_id);
  if (r.notice == MpiNotice::kLostDaemon) {
    out.Str(kRule).EndLine();
    out.Str("ORTE has lost communication with a remote daemon.").EndLine();
    out.EndLine();
    out.Str("  HNP daemon   : [[").Int(family).Str(",0],0] on node login-01").EndLine();
    out.Str("  Remote daemon: [[").Int(family).Str(",0],").Int(r.node + 1).Str("] on node ");
    out.Str(job_.hostnames[r.node]).EndLine();
    out.EndLine();
    out.Str("This is usually due to either a failure of the TCP network").EndLine();
    out.Str("connection to the node, or possibly an internal failure of").EndLine();
    out.Str("the daemon itself. We cannot recover from this failure, and").EndLine();
    out.Str("therefore will terminate the job.").EndLine();
    out.Str(kRule).EndLine();
    return;
  }
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
    out.Str("  Process name: [[").Int(family).Str(",1],").Int(r.rank).Str("]").EndLine();
    out.Str("  Exit code:    ").Int(r.exit_code).EndLine();
  }
  out.Str(kRule).EndLine();
}

}  // namespace denpex::sim
