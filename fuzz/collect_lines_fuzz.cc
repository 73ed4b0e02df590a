// Fuzz target for `denpex collect`'s reading of Slurm daemon logs (cli/src/collect/
// slurm_lines.h): any bytes as a slurmctld.log or slurmd.log, the first byte choosing the job
// (one of ids that share digits) and whether the log is a node's own. Every line it keeps is a
// line of the input, in order; no kept line names another job; the counts add up; no id it
// reads is empty; the stamp readers take any line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "collect/slurm_lines.h"

namespace {

using denpex::cli::collect::DaemonLineTime;
using denpex::cli::collect::DmesgLineTime;
using denpex::cli::collect::FilterDaemonLog;
using denpex::cli::collect::JobIdsNamed;
using denpex::cli::collect::JobScope;

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const char* const kIds[] = {"1", "12", "120", "4240", "7_3"};
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  JobScope scope{.job_id = kIds[data[0] % 5], .nodes = {"sn01", "gpu-0002"}};
  scope.start = 0;
  if (data[0] & 0x80) scope.end = std::int64_t{4'000'000'000};
  const std::string node = (data[0] & 0x40) ? "sn01" : "";

  const std::vector<std::string> lines = SplitLines(input);
  for (const std::string& l : lines) {
    for (const std::string& id : JobIdsNamed(l)) {
      if (id.empty()) std::abort();
    }
    (void)DaemonLineTime(l);
    (void)DmesgLineTime(l);
  }
  std::istringstream in(input);
  std::ostringstream out;
  const auto c = FilterDaemonLog(in, scope, node, out);
  const std::vector<std::string> kept = SplitLines(out.str());
  if (c.lines != lines.size()) std::abort();
  if (c.job_lines + c.node_lines + c.other_job_lines > c.lines) std::abort();
  if (kept.size() != c.job_lines + c.node_lines) std::abort();
  std::size_t at = 0;
  for (const std::string& k : kept) {
    while (at < lines.size() && lines[at] != k) ++at;  // a subsequence of the input
    if (at++ == lines.size()) std::abort();
    const std::vector<std::string> ids = JobIdsNamed(k);
    bool ours = ids.empty();
    for (const std::string& id : ids) ours = ours || id == scope.job_id;
    if (!ours) std::abort();
  }
  return 0;
}
