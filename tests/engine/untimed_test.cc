// Events with no stamp of their own (analyze/facts.h HasOwnTime): a borrowed time is only a lower
// bound (the line before it in the file may be another process's, or minutes older), so it
// stands for the event's time only when anchored: the stamp's line is an error of the same
// stream a few lines before. Unanchored, it stays out of the wave's start and of every exit's
// order against the wave.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/clocks.h"
#include "analyze/describe.h"
#include "analyze/facts.h"
#include "fixture.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;
using testing::Write;

Incident Load(const fs::path& dir) {
  auto inc = LoadIncident(dir, 1);
  EXPECT_TRUE(inc.ok()) << inc.status().message();
  return inc.ok() ? std::move(*inc) : Incident();
}

std::int32_t FirstOf(const Incident& inc, Kind kind) {
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    if (inc.events[i].kind == kind) return i;
  }
  return -1;
}

// torch 2.1 c10 watchdog lines under srun --label carry no time; the stamped line before them is
// task 3's DeepSpeed log line ten minutes earlier.
std::string TimeoutsAfterAnotherTasksLine() {
  std::string out = "3: [2026-03-02 09:00:25,373] [INFO] [logging.py:96:log_dist] [Rank 3] step=10, skipped=0, lr=[0.0001]\n";
  for (int r = 0; r < 8; ++r) {
    if (r == 5) continue;
    out += std::to_string(r) + ": [E ProcessGroupNCCL.cpp:475] [Rank " + std::to_string(r) +
           "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=25, OpType=ALLREDUCE, NumelIn=16777216, "
           "NumelOut=16777216, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n";
  }
  return out;
}

TEST(Untimed, ATimeoutsBorrowedTimeFromAnotherTasksLineIsNoWaveStart) {
  TempDir dir;
  Write(dir.path() / "slurm-4242.out", TimeoutsAfterAnotherTasksLine() + "srun: error: gpu-0002: task 5: Killed\n");
  const Incident inc = Load(dir.path());
  const std::int32_t t = FirstOf(inc, Kind::kWatchdogTimeout);
  ASSERT_GE(t, 0);
  ASSERT_TRUE(inc.events[t].time_borrowed);  // 09:00:25.373, ten minutes before it fired
  EXPECT_FALSE(HasOwnTime(inc, t));
  JobFacts facts = CollectFacts(inc);
  ASSERT_TRUE(facts.HasWave());
  EXPECT_FALSE(facts.wave.start.has_value());  // was 09:00:25.373: ten minutes early
  ApplyOffsets(inc, AlignClocks(inc, facts), &facts);
  EXPECT_FALSE(facts.wave.start.has_value());
}

TEST(Untimed, AnUntimedExitIsNotOrderedAgainstATimedWave) {
  TempDir dir;
  // srun's task exit carries no time (it borrows the timeout's line before it, or nothing);
  // a stamped timeout from a torch 2.4 rank log is the wave's start.
  Write(dir.path() / "slurm-4242.out", "srun: error: gpu-0002: task 5: Killed\n" + TimeoutsAfterAnotherTasksLine());
  Write(dir.path() / "gpu-0001" / "rank_4.log",
        "[rank4]:[E302 09:10:05.123456789 ProcessGroupNCCL.cpp:632] [Rank 4] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=25, OpType=ALLREDUCE, NumelIn=16777216, NumelOut=16777216, Timeout(ms)=600000) ran for 600010 "
        "milliseconds before timing out.\n");
  const Incident inc = Load(dir.path());
  JobFacts facts = CollectFacts(inc);
  ASSERT_TRUE(facts.wave.start.has_value());
  EXPECT_EQ(ClockTime(*facts.wave.start), "09:10:05.123");
  ASSERT_TRUE(facts.ranks[5].exit_event.has_value());
  EXPECT_FALSE(facts.ranks[5].exit_timed);  // its time (0) is not "well before" the wave
}

// torch 2.4's abort after a watchdog timeout (rank_<R>.log): the stamped `watchdog thread
// terminated` line, the C++ stack, then the untimed `what():` of std::terminate.
std::string Abort(int frames) {
  const std::string what =
      "[PG 644 (DATA_PARALLEL_GROUP) Rank 0] Process group watchdog thread terminated with exception: [PG 644 (DATA_PARALLEL_GROUP) "
      "Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=40000000, "
      "NumelOut=40000000, Timeout(ms)=600000) ran for 600015 milliseconds before timing out.";
  std::string out = "[rank3]:[E302 09:10:22.439879596 ProcessGroupNCCL.cpp:1515] " + what + "\n" +
                    "[rank3]:Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent "
                    "call first):\n";
  for (int i = 0; i < frames; ++i) {
    out += "[rank3]:frame #" + std::to_string(i) +
           ": c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f0e6b55f873 in /usr/local/lib/python3.10/dist-packages/torch/lib/"
           "libtorch_cuda.so)\n";
  }
  return out + "[rank3]:\nterminate called after throwing an instance of 'c10::DistBackendError'\n  what():  " + what + "\n";
}

// The borrowed-time events of `inc`, whether each has a time of its own.
std::vector<bool> Borrowed(const Incident& inc) {
  std::vector<bool> out;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(inc.events.size()); ++i) {
    if (inc.events[i].time_borrowed) out.push_back(HasOwnTime(inc, i));
  }
  return out;
}

TEST(Untimed, AnAbortsWhatIsAnchoredToItsStampedWatchdogLine) {
  TempDir dir;
  Write(dir.path() / "gpu-0001" / "rank_3.log", Abort(7));
  EXPECT_EQ(Borrowed(Load(dir.path())), std::vector<bool>{true});  // 11 lines on, the same process's error
}

TEST(Untimed, ABorrowedTimeFarFromItsStampIsNotAnchored) {
  TempDir dir;
  Write(dir.path() / "gpu-0001" / "rank_3.log", Abort(static_cast<int>(kAnchorLines) + 2));
  EXPECT_EQ(Borrowed(Load(dir.path())), std::vector<bool>{false});
}

}  // namespace
}  // namespace denpex::engine
