// Runtime-dispatched x86 SIMD for the parse hot paths. The build targets plain x86-64, so
// functions that use AVX2 carry DENPEX_AVX2 and run only when HasAvx2() says the CPU has it
// (a scalar or SSE2 twin runs otherwise). The target also names the bit instructions every
// AVX2 CPU has (POPCNT, BMI1/2, LZCNT): without them std::popcount is a libgcc call.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DENPEX_X86 1
#define DENPEX_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt,lzcnt")))

namespace denpex::engine {

inline bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                          __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
  return has;
}

}  // namespace denpex::engine
#endif
