#pragma once
#include <time.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
namespace denpex::engine {
inline double ProcCpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
struct StageClock {
  const char* name;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double c0 = ProcCpu();
  explicit StageClock(const char* n) : name(n) {}
  ~StageClock() {
    static const bool on = std::getenv("DENPEX_STAGES") != nullptr;
    if (on) std::fprintf(stderr, "stage %-28s %8.1f ms %8.1f cpu\n", name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), (ProcCpu() - c0) * 1e3);
  }
};
}  // namespace denpex::engine
#define DENPEX_STAGE_CAT2(a, b) a##b
#define DENPEX_STAGE_CAT(a, b) DENPEX_STAGE_CAT2(a, b)
#define DENPEX_STAGE(n) ::denpex::engine::StageClock DENPEX_STAGE_CAT(stage_, __LINE__)(n)
