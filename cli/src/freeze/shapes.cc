#include "freeze/shapes.h"

#include <cstdint>

namespace denpex::freeze {

// Whether the digits at [at, end) name a Slurm job: `JobId=N`, `job N`, `*** JOB N`,
// `STEP N.s`, `StepId=N.s`, slurmd's `[N.s]`, `slurm-N.out`, `SLURM_JOB_ID=N`. A training
// log's `step N` is a step, never a job.
bool JobContext(std::string_view text, std::size_t at, std::size_t end) {
  const bool dotted = end + 1 < text.size() && text[end] == '.' && IsDigit(text[end + 1]);
  // slurmd's `[5370.0]`, `[5370.batch]`; never the kernel's uptime stamp `[2359191.562732]`.
  if (at > 0 && text[at - 1] == '[' && end < text.size() && text[end] == '.') {
    const std::size_t close = text.find(']', end);
    const std::string_view step =
        close == std::string_view::npos ? "" : text.substr(end + 1, close - end - 1);
    if ((AllDigits(step) && step.size() <= 3) || step == "batch" || step == "extern" ||
        step == "interactive")
      return true;
  }
  std::size_t from = at >= 24 ? at - 24 : 0;
  std::string before = Lower(text.substr(from, at - from));
  if (const std::size_t nl = before.rfind('\n'); nl != std::string::npos)
    before = before.substr(nl + 1);
  // Only the last word before the number counts.
  std::size_t k = before.size();
  while (k > 0 && !IsAlnum(before[k - 1])) --k;
  const std::size_t gap = before.size() - k;
  std::size_t w = k;
  while (w > 0 && (IsAlnum(before[w - 1]) || before[w - 1] == '_')) --w;
  const std::string word = before.substr(w, k - w);
  if (gap > 3) return false;
  if (word == "step" || word == "stepid") return dotted;
  return word == "job" || word == "jobid" || word == "job_id" || word == "slurm_job_id" ||
         word == "slurm" || word == "slurm_jobid" || word == "slurm_array_job_id";
}

}  // namespace denpex::freeze
