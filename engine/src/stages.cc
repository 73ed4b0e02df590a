#include "stages.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace denpex::engine {
namespace {

bool StagesOn() {
  static const bool on = std::getenv("DENPEX_STAGES") != nullptr;
  return on;
}

// CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time; CLOCK_PROCESS_CPUTIME_ID: every thread's.
double CpuSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The process's resident memory now, in MiB (/proc/self/statm's second field, in pages).
double ResidentMiB() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int read = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return read == 2 ? static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
                         (1 << 20)
                   : 0;
}

}  // namespace

Stage::Stage(const char* name) : name_(name), on_(StagesOn()) {
  if (!on_) return;
  wall_ = std::chrono::steady_clock::now();
  cpu_ = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  process_cpu_ = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
}

void Stage::End() {
  if (!on_) return;
  on_ = false;
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_).count();
  std::fprintf(stderr, "stage %s %.1f %.1f %.1f %.0f\n", name_, wall_ms,
               (CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_) * 1e3,
               (CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process_cpu_) * 1e3, ResidentMiB());
}

}  // namespace denpex::engine
