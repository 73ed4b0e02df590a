// A scratch directory of the fuzzing process, for the targets that read a directory tree
// (checkpoint layouts, incidents): made on first use, removed at exit.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace denpex::fuzz {

inline const std::filesystem::path& Scratch(const std::string& name) {
  struct ScratchDir {
    std::filesystem::path path;
    explicit ScratchDir(const std::string& n) {
      std::error_code ec;
      std::filesystem::path base = std::filesystem::temp_directory_path(ec);
      if (ec) base = "/tmp";
      path = base / ("denpex-" + n + "-fuzz-" + std::to_string(::getpid()));
      std::filesystem::create_directories(path, ec);
    }
    ~ScratchDir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const ScratchDir dir(name);
  return dir.path;
}

}  // namespace denpex::fuzz
