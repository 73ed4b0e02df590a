// Runtime-dispatched x86 SIMD for the parse hot paths. The build targets plain x86-64, so
// functions that use AVX2 carry DENPEX_AVX2 and run only when HasAvx2() says the CPU has it
// (a scalar or SSE2 twin runs otherwise). The target also names the bit instructions every
// AVX2 CPU has (POPCNT, BMI1/2, LZCNT): without them std::popcount is a libgcc call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace denpex::engine {

// A label colon: `:` with a digit before it and a space after it, where an srun label
// (`  13: `) ends (interleave.cc). Reads p[-1], p[0], p[1].
inline bool IsLabelColonAt(const unsigned char* p) {
  return p[0] == ':' && p[1] == ' ' && p[-1] >= '0' && p[-1] <= '9';
}

}  // namespace denpex::engine

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

// Bit j: IsLabelColonAt(p + j), for 32 places (reads p[-1..33)). A digit: (c - '0') as an
// unsigned byte below 10, i.e. as a signed byte below 10 - 128.
DENPEX_AVX2 inline unsigned LabelColonMask32(const unsigned char* p) {
  const __m256i before = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p - 1));
  const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i after = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
  const __m256i biased = _mm256_xor_si256(_mm256_sub_epi8(before, _mm256_set1_epi8('0')), _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i digit_before = _mm256_cmpgt_epi8(_mm256_set1_epi8(static_cast<char>(10 - 128)), biased);
  const __m256i colon = _mm256_cmpeq_epi8(at, _mm256_set1_epi8(':'));
  const __m256i space_after = _mm256_cmpeq_epi8(after, _mm256_set1_epi8(' '));
  return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_and_si256(digit_before, _mm256_and_si256(colon, space_after))));
}

}  // namespace denpex::engine
#endif

namespace denpex::engine {

#if DENPEX_X86
DENPEX_AVX2 inline std::size_t CountNewlinesAvx2(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const __m256i newline = _mm256_set1_epi8('\n');
  std::size_t n = 0, i = 0;
  for (; i + 32 <= text.size(); i += 32) {
    const __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    n += static_cast<std::size_t>(__builtin_popcount(
        static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(block, newline)))));
  }
  return n + static_cast<std::size_t>(
                 std::count(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(), '\n'));
}
#endif

// The newlines in `text`, as std::count says, 32 bytes a step where the CPU has AVX2: the
// compiler's loop for std::count widens each byte's match to a 64-bit sum (~1.8 GB/s here,
// against ~10 for a mask and a popcount).
inline std::size_t CountNewlines(std::string_view text) {
#if DENPEX_X86
  if (HasAvx2()) return CountNewlinesAvx2(text);
#endif
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace denpex::engine
