// Helpers shared by the simulator tests: temporary output directories, reading files back
// as lines, and running a small scenario.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "denpex/sim/simulator.h"

namespace denpex::sim::testing_util {

namespace fs = std::filesystem;

// Where test incidents go: tmpfs when the machine has one (simulated incidents are thousands
// of small files, and creating files on a shared disk is slow), else the test temp dir.
inline fs::path TestRoot() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return ::testing::TempDir();
}

// A fresh directory under the test root, named after the running test and this process, so
// two test runs at once (two worktrees, ctest -j) never share one.
inline fs::path FreshDir(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = TestRoot() / (std::string("denpex_") + std::to_string(::getpid()) + "_" +
                               info->test_suite_name() + "_" + info->name() + suffix);
  fs::remove_all(dir);
  // Removed when the test process exits: tmpfs is memory, and the pid makes names unique.
  struct Cleanup {
    std::vector<fs::path> dirs;
    ~Cleanup() {
      std::error_code ec;
      for (const auto& d : dirs) fs::remove_all(d, ec);
    }
  };
  static Cleanup cleanup;
  cleanup.dirs.push_back(dir);
  return dir;
}

inline std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> ReadLines(const fs::path& p) {
  std::vector<std::string> lines;
  std::istringstream in(ReadAll(p));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every regular file under `dir`, by path relative to it, with its bytes.
inline std::map<std::string, std::string> ReadTree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadAll(e.path());
  }
  return files;
}

// Shape tests read clean logs: a scenario text without a `realism` block gets the realism
// noise switched off (realism_test.cc and the determinism test set it explicitly).
inline v1::Scenario MustParse(std::string_view text, std::vector<std::string> overrides = {}) {
  if (text.find("realism") == std::string_view::npos) {
    overrides.insert(overrides.begin(), {"realism.benign_warnings=false", "realism.loud_rank=false",
                                         "realism.kernel_logs=false"});
  }
  auto s = ParseScenario(text, "test", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : v1::Scenario();
}

inline SimulateResult MustSimulate(const v1::Scenario& s, const fs::path& out,
                                   std::optional<std::uint64_t> seed = std::nullopt) {
  auto r = Simulate(s, {.out_dir = out, .seed = seed});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : SimulateResult();
}

}  // namespace denpex::sim::testing_util
