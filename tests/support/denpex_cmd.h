// A shell command, or the denpex binary with arguments, run to its end: its exit code and its
// stdout and stderr together. Shared by the e2e tests that drive the binary.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace denpex::testing {

struct CmdResult {
  int code = -1;
  std::string output;  // stdout and stderr
};

inline CmdResult Shell(const std::string& cmd) {
  CmdResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CmdResult Denpex(const std::string& args) {
  return Shell(std::string(DENPEX_BINARY) + " " + args);
}

}  // namespace denpex::testing
