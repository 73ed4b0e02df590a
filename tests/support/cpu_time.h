// The CPU time this process has used, for the tests that bound how an input's size scales the
// work (a linear read against a quadratic one). CPU time, not wall time: a loaded CI machine
// stretches the wall clock, not the work. Shared by every test binary.
#pragma once

#include <time.h>

namespace denpex::testing {

inline double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace denpex::testing
