# Writes OUT, a C++ file defining denpex::cli::kBuildCommit: `git describe --always --dirty`
# of SOURCE_DIR, or "unknown" outside a git checkout (an exported tree, a source package).
# Run at every build (cli/CMakeLists.txt), it rewrites OUT only when the value changed, so a
# new commit recompiles this one file and relinks `denpex`, nothing else.
#   cmake -DSOURCE_DIR=<repo> -DOUT=<file.cc> -P cmake/BuildInfo.cmake
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  # Only SOURCE_DIR's own checkout: an exported tree unpacked inside another repository is not.
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
    OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  file(REAL_PATH "${SOURCE_DIR}" source_real)
  if(top)
    file(REAL_PATH "${top}" top)
  endif()
endif()
if(GIT_FOUND AND top STREQUAL source_real)
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty --tags
    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND described MATCHES "^[A-Za-z0-9._+-]+$")
    set(commit "${described}")
  endif()
endif()
set(text "// Generated at build time by cmake/BuildInfo.cmake. Do not edit.
namespace denpex::cli {
extern const char* const kBuildCommit;
const char* const kBuildCommit = \"${commit}\";
}  // namespace denpex::cli
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
