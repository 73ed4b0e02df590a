// Whether this test binary is built with AddressSanitizer (DENPEX_SANITIZE; GCC says so with
// __SANITIZE_ADDRESS__, Clang with __has_feature). The tests whose bounds or observations the
// instrumentation changes (CPU time, whose heap serves malloc) ask here. Shared by every test
// binary.
#pragma once

namespace denpex::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace denpex::testing
