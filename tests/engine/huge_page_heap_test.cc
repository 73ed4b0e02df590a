// RestartWithHugePageHeap (denpex/engine/engine.h): the program starts once more with glibc's
// heap advised for transparent huge pages, and the restarted program sees the environment it was
// given. The test runs this test binary again as the program: a child process calls the restart,
// and the restarted binary's probe (below, before any test) reports what it sees into a file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "denpex/engine/engine.h"
#include "support/sanitizers.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

bool HugePagesOnRequest() {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(thp, modes) && modes.find("[madvise]") != std::string::npos;
}

// Whether the mapping that holds `p` is advised for huge pages ("hg" in smaps' VmFlags).
bool AdvisedHuge(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.starts_with("VmFlags:")) {
      return line.find(" hg") != std::string::npos;
    }
  }
  return false;
}

// With DENPEX_TEST_PRE_INIT set, the program restarts from its pre-initialisers, as the `denpex`
// binary does (cli/src/main.cc): before any static initialiser, the probe below included. Both
// starts run it; the second puts the environment back.
void RestartBeforeStaticInit(int /*argc*/, char** argv, char** envp) {
  for (char** e = envp; *e != nullptr; ++e) {
    if (std::strncmp(*e, "DENPEX_TEST_PRE_INIT=", 21) == 0) RestartWithHugePageHeap(argv, envp);
  }
}
[[gnu::used, gnu::section(".preinit_array")]] void (*const kRestartBeforeStaticInit)(
    int, char**, char**) = RestartBeforeStaticInit;

// The restarted program's probe, before any test: with DENPEX_TEST_PROBE_OUT set (only the child
// below sets it), it reports into that file what the program sees and ends the process.
[[maybe_unused]] const bool kProbed = [] {
  const char* out = std::getenv("DENPEX_TEST_PROBE_OUT");
  if (out == nullptr) return false;
  const bool pre_init = std::getenv("DENPEX_TEST_PRE_INIT") != nullptr;  // restarted already
  if (!pre_init && std::getenv("DENPEX_SAVED_GLIBC_TUNABLES") == nullptr) {
    std::ofstream(out) << "not restarted\n";
    ::_exit(0);
  }
  // The second start, with its argv (the first start's): puts the environment and the name back.
  std::string arg0;
  std::getline(std::ifstream("/proc/self/cmdline"), arg0, '\0');
  char* argv[] = {arg0.data(), nullptr};
  if (!pre_init) RestartWithHugePageHeap(argv);
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  void* block = std::malloc(8 << 20);  // glibc maps a block this size on its own
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string seen = "unset";
  if (tunables != nullptr) seen = std::string("=").append(tunables);
  {
    std::ofstream report(out);
    report << seen << "\n"
           << (testing::kAddressSanitizer ? "-"
               : AdvisedHuge(block)       ? "huge"
                                          : "4k")
           << "\n"
           << (std::getenv("DENPEX_SAVED_GLIBC_TUNABLES") == nullptr ? "clean" : "marked") << "\n"
           << comm << "\n";
  }
  std::free(block);
  ::_exit(0);
}();

// Where the child restarts: in its code, as main() would, or (kPreInit) by starting this binary
// again, which restarts from its pre-initialisers.
enum class From { kMain, kPreInit };

// What the restarted probe reported, GLIBC_TUNABLES as given (nullptr: unset). Under
// AddressSanitizer the heap is ASan's, not glibc's: the tunable has nothing to advise, and the
// heap line is "-".
std::string RestartedReport(const char* tunables, From from = From::kMain) {
  const fs::path out =
      fs::temp_directory_path() / ("denpex-huge-heap-" + std::to_string(::getpid()));
  fs::remove(out);
  const pid_t child = ::fork();
  if (child == 0) {
    if (tunables == nullptr) {
      ::unsetenv("GLIBC_TUNABLES");
    } else {
      ::setenv("GLIBC_TUNABLES", tunables, 1);
    }
    ::setenv("DENPEX_TEST_PROBE_OUT", out.c_str(), 1);
    ::unsetenv("LD_PRELOAD");
    std::string self = fs::read_symlink("/proc/self/exe").string();
    char* argv[] = {self.data(), nullptr};
    if (from == From::kPreInit) {
      ::setenv("DENPEX_TEST_PRE_INIT", "1", 1);
      ::execv(self.c_str(), argv);
    } else {
      RestartWithHugePageHeap(argv);
    }
    ::_exit(3);  // not restarted
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  std::ifstream in(out);
  std::stringstream report;
  report << in.rdbuf();
  fs::remove(out);
  return WIFEXITED(status) ? report.str() : "killed";
}

// The name of this binary as the kernel keeps it (15 bytes) and the probe reports it.
constexpr const char* kName = "engine_huge_pag\n";

TEST(HugePageHeap, TheRestartedProgramHasAHugePageHeapAndTheEnvironmentItWasGiven) {
  if (!HugePagesOnRequest())
    GTEST_SKIP() << "this kernel's transparent huge pages are not in madvise mode";
  // The restarted process keeps its name (the kernel's 15 bytes of it), not "exe".
  const std::string rest =
      (testing::kAddressSanitizer ? "-" : "huge") + std::string("\nclean\n") + kName;
  EXPECT_EQ(RestartedReport(nullptr), "unset\n" + rest);
  EXPECT_EQ(RestartedReport("glibc.malloc.tcache_count=7"),
            "=glibc.malloc.tcache_count=7\n" + rest);
  EXPECT_EQ(RestartedReport(""), "=\n" + rest);
}

// Restarted from the pre-initialisers, before the C library has set `environ`: the same heap, and
// the environment put back where the C library's initialiser keeps it.
TEST(HugePageHeap, ARestartBeforeStaticInitialisersPutsTheEnvironmentBackToo) {
  if (!HugePagesOnRequest())
    GTEST_SKIP() << "this kernel's transparent huge pages are not in madvise mode";
  const std::string rest =
      (testing::kAddressSanitizer ? "-" : "huge") + std::string("\nclean\n") + kName;
  EXPECT_EQ(RestartedReport(nullptr, From::kPreInit), "unset\n" + rest);
  EXPECT_EQ(RestartedReport("glibc.malloc.tcache_count=7", From::kPreInit),
            "=glibc.malloc.tcache_count=7\n" + rest);
  EXPECT_EQ(RestartedReport("", From::kPreInit), "=\n" + rest);
}

// A GLIBC_TUNABLES that names the tunable is the user's choice: no restart.
TEST(HugePageHeap, ATunableAlreadySetIsLeftAlone) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1);
    char self[] = "/proc/self/exe";
    char* argv[] = {self, nullptr};
    RestartWithHugePageHeap(argv);
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    ::_exit(tunables != nullptr && std::strcmp(tunables, "glibc.malloc.hugetlb=0") == 0 ? 0 : 4);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);  // returned: not restarted, the environment untouched
}

}  // namespace
}  // namespace denpex::engine
