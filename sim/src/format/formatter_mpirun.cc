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

// mpirun's words by Open MPI release (profiles.h's VersionRow): 4.x's ORTE, 5.x's PRRTE.
struct MpirunWords {
  // The runtime's name in "<name> has lost communication with a remote daemon."
  std::string_view runtime;
  // A process's name ({0} ORTE's job family, {1} the job: 0 the daemons, 1 the application,
  // {2} the vpid, {3} prterun's pid): [[J,0],k] / [[J,1],R], or [prterun-<launch host>-<pid>@0,k]
  // (the nspace names the launch).
  std::string_view process_name;
  // A --report-bindings line after "[host:pid] " ({0} the rank, {1} its package, {2}-{3} its
  // cores): Open MPI 4 under --bind-to none (the usual GPU launch), PRRTE bound to 12 cores.
  std::string_view binding;
  // The abort blocks ({0} the rank, {1} its pid, {2} its node, {3} the signal, {4} its name,
  // {5} the process name, {6} the exit code); the line that starts with '!' is the one a truth
  // cites. PRRTE prints no "Primary job" block first, wraps the signal onto its own line and
  // indents the process-name block by three spaces.
  std::span<const std::string_view> signal_block, exit_block;
};

constexpr std::string_view kOrteSignal[] = {
    kRule,
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    kRule,
    kRule,
    "!mpirun noticed that process rank {0} with PID {1} on node {2} exited on signal {3} ({4}).",
    kRule};
constexpr std::string_view kOrteExit[] = {
    kRule,
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    kRule,
    kRule,
    "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:",
    "",
    "!  Process name: {5}",
    "  Exit code:    {6}",
    kRule};
constexpr std::string_view kPrrteSignal[] = {
    kRule, "!prterun noticed that process rank {0} with PID {1} on node {2} exited on",
    "signal {3} ({4}).", kRule};
constexpr std::string_view kPrrteExit[] = {
    kRule,
    "prterun detected that one or more processes exited with non-zero status,",
    "thus causing the job to be terminated. The first process to do so was:",
    "",
    "!   Process name: {5}",
    "   Exit code:    {6}",
    kRule};

constexpr VersionRow<MpirunWords> kMpirunWords[] = {
    {{"", "4"},
     {"ORTE", "[[{0},{1}],{2}]", "MCW rank {0} is not bound (or bound to all available processors)",
      kOrteSignal, kOrteExit}},
    {{"5", ""},
     {"PRTE", "[prterun-login-01-{3}@{1},{2}]", "Rank {0} bound to package[{1}][core:{2}-{3}]",
      kPrrteSignal, kPrrteExit}},
};

// The row of the job's Open MPI (Job::open_mpi5: 5.x, or 4.x).
const MpirunWords& WordsOf(bool open_mpi5) { return RowFor(kMpirunWords, open_mpi5 ? "5" : "4"); }
const MpirunWords& WordsOf(const Job& job) { return WordsOf(job.open_mpi5); }

std::span<const std::string_view> AbortBlock(const MpirunWords& words, const MpirunNotice& r) {
  return r.notice == MpiNotice::kSignal ? words.signal_block : words.exit_block;
}

std::string ProcessName(const Job& job, int jobid, int vpid) {
  std::string text;
  LineBuilder(&text).Fill(WordsOf(job).process_name,
                          {MpiJobFamily(job.job_id), jobid, vpid, PrterunPid(job)});
  return text;
}

// --report-bindings, one line per rank from its node's daemon (opal_output's "[host:pid] ").
void Bindings(const Job& job, const MpirunNotice& r, LineBuilder& out) {
  const std::string_view binding = WordsOf(job).binding;
  const std::string& host = job.hostnames[r.node];
  const int daemon_pid = DaemonPid(job, r.node);
  const int half = std::max(1, job.gpus_per_node / 2);
  for (int local = 0; local < job.gpus_per_node; ++local) {
    out.Char('[').Str(host).Char(':').Padded(daemon_pid, 5, '0').Str("] ");
    out.Fill(binding, {r.rank + local, local / half, local * 12, local * 12 + 11}).EndLine();
  }
}

void LostDaemon(const Job& job, const MpirunNotice& r, LineBuilder& out) {
  out.Str(kRule).EndLine();
  out.Str(WordsOf(job).runtime).Str(" has lost communication with a remote daemon.").EndLine();
  out.EndLine();
  out.Str("  HNP daemon   : ").Str(ProcessName(job, 0, 0)).Str(" on node login-01").EndLine();
  out.Str("  Remote daemon: ").Str(ProcessName(job, 0, r.node + 1));
  out.Str(" on node ").Str(job.hostnames[r.node]).EndLine();
  out.EndLine();
  out.Str("This is usually due to either a failure of the TCP network").EndLine();
  out.Str("connection to the node, or possibly an internal failure of").EndLine();
  out.Str("the daemon itself. We cannot recover from this failure, and").EndLine();
  out.Str("therefore will terminate the job.").EndLine();
  out.Str(kRule).EndLine();
}

}  // namespace

// Returns the line of the block that names the rank (or the lost daemon's node), counted from
// the block's first line: in the abort blocks, the row's line marked '!'.
std::int64_t LineFormatter::Format(const MpirunNotice& r, LineBuilder& out) const {
  switch (r.notice) {
    case MpiNotice::kBindings:
      Bindings(job_, r, out);
      return 0;  // never cited
    case MpiNotice::kLostDaemon:
      LostDaemon(job_, r, out);
      return 4;  // "  Remote daemon: ... on node <host>"
    case MpiNotice::kExitCode:
    case MpiNotice::kSignal:
      break;
  }
  const std::string process = ProcessName(job_, 1, r.rank);
  std::int64_t cited = 0;
  std::int64_t at = 0;
  for (std::string_view line : AbortBlock(WordsOf(job_), r)) {
    if (line.starts_with('!')) {
      line.remove_prefix(1);
      cited = at;
    }
    out.Fill(line, {r.rank, job_.worker_pid[r.rank], job_.hostnames[job_.NodeOf(r.rank)],
                    -r.exit_code, SignalName(r.exit_code), process, r.exit_code})
        .EndLine();
    ++at;
  }
  return cited;
}

}  // namespace denpex::sim
