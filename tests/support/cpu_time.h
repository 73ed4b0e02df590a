// The CPU time this process has used, for the tests that bound how an input's size scales the
// work (a linear read against a quadratic one). CPU time, not wall time: a loaded CI machine
// stretches the wall clock, not the work. Shared by every test binary.
#pragma once

#include <time.h>

#include "support/sanitizers.h"

namespace denpex::testing {

inline double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A sanitized build (DENPEX_SANITIZE: ASan and UBSan at -O1) checks every memory access: the same
// work takes several times the CPU (the 150,000-tensor safetensors header: 0.3 s plain, 2.1 s
// sanitized). A bound is written for the plain build; `CpuBound` scales it where the test runs
// sanitized, so that it still tells a linear read from a quadratic one without failing on the
// instrumentation's own cost.
inline constexpr double kSanitizedCpuScale = kAddressSanitizer ? 10 : 1;

inline double CpuBound(double plain_seconds) { return plain_seconds * kSanitizedCpuScale; }

}  // namespace denpex::testing
