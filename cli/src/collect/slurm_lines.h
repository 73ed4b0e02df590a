// Which lines of a Slurm daemon's log (slurmctld.log, slurmd.log) belong to one job
// (docs/run_wrapper.md "denpex collect"): the lines that name the job by its id, and the lines
// that name no job but one of its nodes while it ran. A line that names another job is never
// the job's, whatever else it says.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::cli::collect {

// The job ids a line names, as Slurm 22.05/23.02 write them: `JobId=<id>` (an array task's
// `JobId=<array>_<task>(<id>)` names both `<array>_<task>` and `<id>`, a het job's
// `JobId=<id>+<n>(<id2>)` both), `StepId=<id>.<step>`, slurmd's and slurmstepd's
// `[<id>.<step>]` prefix, `*** JOB <id> ON`, `*** STEP <id>.<step>`, and `job <id>` (`Launching
// batch job <id>`, `prolog for job <id>`). Empty when it names none.
std::vector<std::string> JobIdsNamed(std::string_view line);

// The local time (seconds since the epoch, as mktime reads it) of a daemon line's
// `[YYYY-MM-DDThh:mm:ss.mmm]` stamp; nullopt when it has none.
std::optional<std::int64_t> DaemonLineTime(std::string_view line);

// The local time of a `dmesg -T` line's `[Fri Dec  4 11:17:16 2026]` stamp.
std::optional<std::int64_t> DmesgLineTime(std::string_view line);

// True when `line` holds `word` with no host-name character on either side.
bool NamesWord(std::string_view line, std::string_view word);

struct JobScope {
  std::string job_id;
  std::vector<std::string> nodes;     // the job's allocation, expanded
  std::optional<std::int64_t> start;  // local seconds
  std::optional<std::int64_t> end;    // nullopt: still running
};

struct FilterCounts {
  std::uint64_t lines = 0;            // read
  std::uint64_t job_lines = 0;        // naming the job
  std::uint64_t node_lines = 0;       // naming no job, one of its nodes, while it ran
  std::uint64_t other_job_lines = 0;  // naming other jobs only: left out
};

// Copies the lines of `in` that belong to the job (above) to `out`, in their order, unchanged.
// `node`: when not empty, the daemon log is that node's (slurmd's), so a line that names no
// job is its node's by where it was written.
FilterCounts FilterDaemonLog(std::istream& in, const JobScope& scope, std::string_view node,
                             std::ostream& out);

}  // namespace denpex::cli::collect
