// Where `denpex diagnose` spends its time, stage by stage, for the benchmarks
// (docs/benchmarks.md, "Engine at scale"). With DENPEX_STAGES set in the environment, each Stage
// prints one line to standard error when it ends:
//   stage <name> <wall ms> <thread cpu ms> <process cpu ms> <resident MiB at its end>
// The first CPU figure is the calling thread's, the second every thread's: a stage that runs in
// parallel shows more process than wall time, one that leaves the other cores idle the same.
// Without it a Stage reads no clock. Stages nest; bench/engine/stages.sh sums a run's lines.
#pragma once

#include <chrono>

namespace denpex::engine {

class Stage {
 public:
  explicit Stage(const char* name);
  ~Stage() { End(); }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  // Ends the stage now (once; the destructor then does nothing).
  void End();

 private:
  const char* name_;
  bool on_;
  std::chrono::steady_clock::time_point wall_{};
  double cpu_ = 0;
  double process_cpu_ = 0;
};

}  // namespace denpex::engine
