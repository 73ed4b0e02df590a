// `denpex simulate --replay SPEED` end to end: a replayed incident, once the replay ends, is the
// one a plain simulate writes (bytes and, where the simulator sets them, file times), and a bad
// SPEED is a usage error. The replays run fast (SPEED 100000): nothing here is timed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

struct CmdResult {
  int code = -1;
  std::string output;  // stdout and stderr
};

CmdResult Denpex(const std::string& args) {
  const std::string cmd = std::string(DENPEX_BINARY) + " " + args + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

using denpex::testing::TempDir;

std::string Scenario(const std::string& name) {
  return (fs::path(DENPEX_SOURCE_DIR) / "scenarios" / name).string();
}

// Relative path -> contents of every entry under `dir` ("<dir>" for a directory).
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> tree;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).generic_string();
    if (e.is_directory()) {
      tree[rel] = "<dir>";
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    tree[rel] = ss.str();
  }
  return tree;
}

// Relative path -> modification time (ns) of every file under `dir`.
std::map<std::string, long long> Times(const fs::path& dir) {
  std::map<std::string, long long> times;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) continue;
    times[fs::relative(e.path(), dir).generic_string()] =
        static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  }
  return times;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Simulates `scenario` plainly and replayed; expects the same incident and truth.
void ExpectReplayedIsPlain(const std::string& scenario, bool same_times) {
  TempDir tmp;
  const fs::path plain = tmp.path() / "plain", replayed = tmp.path() / "replayed";
  const std::string sim = "simulate " + Scenario(scenario) + " --seed 7 --out ";
  CmdResult r = Denpex(sim + plain.string());
  ASSERT_EQ(r.code, 0) << r.output;
  r = Denpex(sim + replayed.string() + " --replay 100000");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("replaying into " + (replayed / "incident").string()), 0u) << r.output;
  EXPECT_NE(r.output.find("\nsimulated "), std::string::npos) << r.output;

  EXPECT_EQ(Tree(replayed / "incident"), Tree(plain / "incident"));
  EXPECT_EQ(Slurp(replayed / "truth.json"), Slurp(plain / "truth.json"));
  EXPECT_FALSE(fs::exists(replayed / ".replay-staging"));
  // Only what a plain simulate leaves is there (the staging directory is gone).
  std::map<std::string, bool> top_plain, top_replayed;
  for (const auto& e : fs::directory_iterator(plain)) top_plain[e.path().filename()] = true;
  for (const auto& e : fs::directory_iterator(replayed)) top_replayed[e.path().filename()] = true;
  EXPECT_EQ(top_replayed, top_plain);
  if (same_times) {
    EXPECT_EQ(Times(replayed / "incident"), Times(plain / "incident"));
  }
}

TEST(ReplayCli, ReplayedIncidentIsThePlainOneByteForByte) {
  ExpectReplayedIsPlain("smoke/sigkill_1024_debug.textproto", false);
}

// The checkpoint tree (binary files moved whole) and the file times the simulator sets for
// checkpoint verification survive the replay.
TEST(ReplayCli, ReplayedCheckpointIncidentKeepsItsBytesAndFileTimes) {
  ExpectReplayedIsPlain("checkpoint/torch_save_1024.textproto", true);
}

TEST(ReplayCli, ANegativeSpeedIsAUsageErrorThatSaysWhy) {
  TempDir tmp;
  const std::string sim = "simulate " + Scenario("smoke/sigkill_1024_debug.textproto") + " --out " +
                          (tmp.path() / "o").string();
  CmdResult r = Denpex(sim + " --replay -1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--replay -1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("must be > 0"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(tmp.path() / "o" / "incident"));
  r = Denpex(sim + " --replay-max-gap 5");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("needs --replay"), std::string::npos) << r.output;
  r = Denpex(sim + " --replay 60 --replay-max-gap 0");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("must be > 0"), std::string::npos) << r.output;
}

}  // namespace
