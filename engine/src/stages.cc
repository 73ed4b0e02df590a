#include "stages.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace denpex::engine {
namespace {

bool StagesOn() {
  static const bool on = std::getenv("DENPEX_STAGES") != nullptr;
  return on;
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

Stage::Stage(const char* name) : name_(name), on_(StagesOn()) {
  if (!on_) return;
  wall_ = std::chrono::steady_clock::now();
  cpu_ = ThreadCpuSeconds();
}

void Stage::End() {
  if (!on_) return;
  on_ = false;
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_).count();
  std::fprintf(stderr, "stage %s %.1f %.1f\n", name_, wall_ms, (ThreadCpuSeconds() - cpu_) * 1e3);
}

}  // namespace denpex::engine
