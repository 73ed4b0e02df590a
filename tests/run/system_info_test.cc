// The kernel log records as dmesg prints them, their per-node merge, and the PATH search
// that decides whether nvidia-smi runs.
#include "run/system_info.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_test_util.h"

namespace denpex::cli::run {
namespace {

using run_test::ReadFile;
using run_test::TempDir;

TEST(KmsgRecord, IsPrintedAsDmesgDoes) {
  EXPECT_EQ(FormatKmsgRecord(
                "6,1234,2686172733,-;Memory cgroup out of memory: Killed process 5337 (python3)\n"),
            "[ 2686.172733] Memory cgroup out of memory: Killed process 5337 (python3)");
  EXPECT_EQ(
      FormatKmsgRecord(
          "4,9,518050606,-,caller=T1;NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off "
          "the bus.\n SUBSYSTEM=pci\n DEVICE=+pci:0000:18:00.0\n"),
      "[  518.050606] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.")
      << "an extra header field and the continuation lines";
  EXPECT_EQ(FormatKmsgRecord("6,1,5,-;early"), "[    0.000005] early");
  EXPECT_EQ(FormatKmsgRecord("6,1,123456789012,-;late"), "[123456.789012] late");
  EXPECT_FALSE(FormatKmsgRecord("garbage"));
  EXPECT_FALSE(FormatKmsgRecord("6,x,5,-;bad seq"));
}

TEST(KernelLine, ItsUptimeIsReadBack) {
  EXPECT_EQ(KernelLineMicros("[ 2686.172733] msg"), 2686172733u);
  EXPECT_EQ(KernelLineMicros("[123456.789012] msg"), 123456789012u);
  EXPECT_FALSE(KernelLineMicros("no stamp"));
  EXPECT_FALSE(KernelLineMicros("[Mon Mar  2 09:00:00 2026] msg"));
}

TEST(KernelLog, TheTasksOfANodeMergeIntoOneFileInOrderWithoutRepeats) {
  TempDir dir;
  // Two tasks that started at different times saw overlapping parts of the kernel log; the
  // one that started first finishes last.
  const std::vector<std::string> late_starter = {"[  20.000000] b", "[  30.000000] c"};
  const std::vector<std::string> early_starter = {"[  10.000000] a", "[  20.000000] b",
                                                  "[  30.000000] c", "[  40.000000] d"};
  ASSERT_TRUE(MergeKernelLog(dir.path(), late_starter).ok());
  ASSERT_TRUE(MergeKernelLog(dir.path(), early_starter).ok());
  ASSERT_TRUE(MergeKernelLog(dir.path(), {}).ok());
  EXPECT_EQ(ReadFile(dir.path() / "kernel.log"),
            "[  10.000000] a\n[  20.000000] b\n[  30.000000] c\n[  40.000000] d\n");
}

TEST(KernelLog, NothingToAddStillLeavesTheFile) {
  TempDir dir;
  ASSERT_TRUE(MergeKernelLog(dir.path(), {}).ok());
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "kernel.log"));
  EXPECT_EQ(ReadFile(dir.path() / "kernel.log"), "");
}

TEST(KernelLogReader, AnUnreadableDeviceIsAStatusNotAFailure) {
  KernelLogReader r = KernelLogReader::Open("/nonexistent/kmsg");
  EXPECT_EQ(r.fd(), -1);
  EXPECT_EQ(r.status().rfind("unavailable: /nonexistent/kmsg: ", 0), 0u) << r.status();
  r.ReadAvailable();
  EXPECT_TRUE(r.lines().empty());
}

TEST(FindInPath, FindsExecutablesOnly) {
  EXPECT_TRUE(FindInPath("sh"));
  EXPECT_FALSE(FindInPath("denpex-no-such-tool"));
}

}  // namespace
}  // namespace denpex::cli::run
