// Progress on stderr (cli/src/progress.h): how often a log gets a line, what the line says, and
// the terminal's redrawn line; with the clock given, not read.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "progress.h"

namespace denpex::cli {
namespace {

using Clock = ProgressLine::Clock;

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// 100 jobs, one a second.
std::string Lines100(ProgressMode mode, double interval_s) {
  std::ostringstream err;
  const Clock::time_point t0{};
  {
    ProgressLine p(mode, err, "denpex eval", "jobs", 100, interval_s, t0);
    for (int i = 1; i <= 100; ++i) p.UpdateAt(i, "suite/x seed 1", t0 + std::chrono::seconds(i));
  }
  return err.str();
}

TEST(Progress, ALogGetsALineEveryIntervalAndTenPercentWhicheverIsRarer) {
  const std::string every30 = Lines100(ProgressMode::kLog, 30);  // 30 s is rarer than 10 jobs
  EXPECT_EQ(Lines(every30), 3) << every30;
  EXPECT_NE(every30.find(
                "denpex eval: 30% (30/100 jobs), 30s elapsed, ETA 1m10s; last: suite/x seed 1\n"),
            std::string::npos)
      << every30;
  EXPECT_EQ(every30.find('\r'), std::string::npos);
  EXPECT_EQ(every30.find('\x1b'), std::string::npos);
  const std::string every10pct = Lines100(ProgressMode::kLog, 0);  // 10 % is rarer than no wait
  EXPECT_EQ(Lines(every10pct), 10) << every10pct;
  EXPECT_NE(
      every10pct.find("denpex eval: 100% (100/100 jobs), 1m40s elapsed; last: suite/x seed 1\n"),
      std::string::npos);
  EXPECT_EQ(Lines(Lines100(ProgressMode::kLog, 1000)), 0);
}

TEST(Progress, ATerminalGetsOneRedrawnLineClearedAtTheEndAndOffGetsNothing) {
  const std::string tty = Lines100(ProgressMode::kTerminal, 30);
  EXPECT_EQ(Lines(tty), 0);
  EXPECT_NE(tty.find("\r\033[2Kdenpex eval: 1% (1/100 jobs), 1s elapsed, ETA 1m39s  suite/x"),
            std::string::npos)
      << tty;
  EXPECT_TRUE(tty.ends_with("\r\033[2K"));
  EXPECT_TRUE(Lines100(ProgressMode::kOff, 0).empty());
}

TEST(Progress, FlagsChooseTheMode) {
  EXPECT_EQ(ChooseProgress({}, true), ProgressMode::kTerminal);
  EXPECT_EQ(ChooseProgress({}, false), ProgressMode::kLog);
  EXPECT_EQ(ChooseProgress({.on = true}, false), ProgressMode::kLog);
  EXPECT_EQ(ChooseProgress({.off = true}, true), ProgressMode::kOff);
  EXPECT_EQ(Duration(3725), "1h02m");
  EXPECT_EQ(Duration(185), "3m05s");
}

}  // namespace
}  // namespace denpex::cli
