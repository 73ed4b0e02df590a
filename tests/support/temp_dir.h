// A scratch directory for one test, under the system's temp directory, removed with everything
// in it when the test ends. Shared by every test binary (tests/CMakeLists.txt puts tests/ on
// their include path).
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <system_error>

namespace denpex::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "denpex-test-") {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / (prefix + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace denpex::testing
