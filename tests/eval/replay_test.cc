// The schedule of `denpex simulate --replay` (cli/src/replay.cc): which lines are due when, in
// what order, and how a batch writes them. No clock is read: the batches are taken at chosen
// wall times.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "replay.h"

namespace {
using denpex::TimeNs;
using denpex::cli::PlanReplay;
using denpex::cli::ReplayOptions;
using denpex::cli::ReplayPlan;
using denpex::cli::ReplayWrite;
using denpex::cli::TakeDue;

constexpr TimeNs kSec = 1'000'000'000;
const TimeNs kStart = *denpex::ParseRfc3339("2026-03-02T09:00:00Z");

// Slurm, a c10/glog stamp without its year, a kernel log booted weeks before the job, a
// snapshot with no stamp, an empty file, and a file whose last line was cut (no newline).
const std::vector<std::string> kFiles = {
    "[2026-03-02T09:00:00.000] sched: Allocate JobId=1\n"
    "[2026-03-02T09:00:02.000] two seconds in\n"
    "  an untimed continuation\n"
    "[2026-03-02T09:00:01.000] a stamp older than the line before\n",
    "a line before the first stamp\n"
    "I0302 09:00:01.500000 123 train.py:1] one and a half seconds in\n",
    "Jan 22 12:35:05 gpu-0001 kernel: [    0.000000] Linux version 5.15.0\n"
    "Mar  2 09:00:03 gpu-0001 kernel: NVRM: Xid (PCI:0000:18:00): 79\n",
    "+-----------------------------------------+\n"
    "| NVIDIA-SMI 535.161.08                   |\n",
    "",
    "[2026-03-02T09:00:00.500] the last line was cut\n"
    "[2026-03-02T09:00:04.000] cut mid-li",
};

// Their paths: the snapshot is nvidia-smi's table, written whole.
const std::vector<std::string> kPaths = {"slurmctld.log",       "gpu-0001/rank_0.log",
                                         "gpu-0001/kern.log",   "gpu-0001/nvidia-smi.log",
                                         "gpu-0001/stdout.log", "gpu-0001/torchrun.log"};

std::vector<std::string_view> Views() { return {kFiles.begin(), kFiles.end()}; }

ReplayPlan Plan(const ReplayOptions& options, std::optional<TimeNs> start = kStart) {
  const auto views = Views();
  return PlanReplay(views, kPaths, 2026, start, options);
}

// Each step of file `f` as (seconds after kStart, end).
std::vector<std::pair<TimeNs, std::size_t>> StepsOf(const ReplayPlan& plan, std::uint32_t f) {
  std::vector<std::pair<TimeNs, std::size_t>> out;
  for (const auto& s : plan.steps) {
    if (s.file == f) out.emplace_back(s.time - kStart, s.end);
  }
  return out;
}

TEST(Replay, StepsComeInTimeOrderAndEachFilesInFileOrder) {
  const ReplayPlan plan = Plan({.speed = 2});
  EXPECT_EQ(plan.start, kStart);
  EXPECT_EQ(plan.end, kStart + 4 * kSec);
  EXPECT_EQ(plan.wall_ns, 2 * kSec);
  std::map<std::uint32_t, std::size_t> last_end;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const auto& s = plan.steps[i];
    if (i > 0) {
      EXPECT_LE(plan.steps[i - 1].wall_ns, s.wall_ns) << i;
      EXPECT_LE(plan.steps[i - 1].time, s.time) << i;
    }
    EXPECT_EQ(s.wall_ns, (s.time - kStart) / 2) << i;
    if (last_end.contains(s.file)) {
      EXPECT_LT(last_end[s.file], s.end) << i;
    }
    last_end[s.file] = s.end;
    // A step ends at a line's end (or at the file's end: a cut last line).
    const std::string& text = kFiles[s.file];
    EXPECT_TRUE(s.end == text.size() || (s.end > 0 && text[s.end - 1] == '\n')) << i;
  }
  for (std::uint32_t f = 0; f < kFiles.size(); ++f) EXPECT_EQ(last_end[f], kFiles[f].size()) << f;
}

TEST(Replay, UntimedLinesGoWithTheLineBeforeAndLeadingOnesWithTheFirstStamp) {
  const ReplayPlan plan = Plan({.speed = 1});
  std::map<std::uint32_t, std::vector<std::pair<TimeNs, std::size_t>>> by_file;
  for (const auto& s : plan.steps) by_file[s.file].emplace_back(s.time - kStart, s.end);
  // The continuation and the older stamp come at two seconds, after the line before them.
  ASSERT_EQ(by_file[0].size(), 2u);
  EXPECT_EQ(by_file[0][0], std::make_pair(TimeNs{0}, kFiles[0].find('\n') + 1));
  EXPECT_EQ(by_file[0][1], std::make_pair(2 * kSec, kFiles[0].size()));
  // The line before the first stamp goes out with it.
  ASSERT_EQ(by_file[1].size(), 1u);
  EXPECT_EQ(by_file[1][0], std::make_pair(kSec + kSec / 2, kFiles[1].size()));
  // Boot lines stamped before the job are there at once.
  ASSERT_EQ(by_file[2].size(), 2u);
  EXPECT_EQ(by_file[2][0].first, 0);
  EXPECT_EQ(by_file[2][1].first, 3 * kSec);
}

// nvidia-smi's table is written whole when the replay ends; the empty file is created at its
// start.
TEST(Replay, ASnapshotWithoutAStampIsWrittenWhenTheReplayEndsAndEmptyFilesAtItsStart) {
  const ReplayPlan plan = Plan({.speed = 1});
  EXPECT_EQ(plan.timed, (std::vector<bool>{true, true, true, false, false, true}));
  EXPECT_EQ(plan.paced, std::vector<bool>(kFiles.size(), false));
  for (std::uint32_t f : {3u, 4u}) {
    int steps = 0;
    for (const auto& s : plan.steps) {
      if (s.file != f) continue;
      ++steps;
      EXPECT_EQ(s.wall_ns, f == 3 ? plan.wall_ns : 0) << f;
      EXPECT_EQ(s.end, kFiles[f].size()) << f;
    }
    EXPECT_EQ(steps, 1) << f;
  }
}

TEST(Replay, AnUntimedLineIsDueWithTheStampBeforeItNeverAfterTheNextOne) {
  const std::vector<std::string> files = {
      "untimed before the first stamp\n"
      "[2026-03-02T09:00:01.000] one second in\n"
      "untimed between\n"
      "  and its continuation\n"
      "[2026-03-02T09:00:05.000] five seconds in\n"
      "untimed after the last stamp\n",
      "[2026-03-02T09:00:09.000] the incident ends\n"};
  const std::vector<std::string_view> views(files.begin(), files.end());
  const std::vector<std::string> paths = {"slurm-7.out", "slurmctld.log"};
  const ReplayPlan plan = PlanReplay(views, paths, 2026, kStart, {.speed = 1});
  EXPECT_EQ(plan.paced, (std::vector<bool>{false, false}));
  // Each line's due time against its own stamp and the next stamped line's of its file.
  const std::string_view text = files[0];
  const std::vector<std::pair<std::string_view, TimeNs>> lines = {
      {"untimed before", kSec},       {"one second", kSec},       {"untimed between", kSec},
      {"and its continuation", kSec}, {"five seconds", 5 * kSec}, {"untimed after", 5 * kSec}};
  const auto steps = StepsOf(plan, 0);
  for (const auto& [line, due] : lines) {
    const std::size_t at = text.find(line);
    ASSERT_NE(at, std::string_view::npos) << line;
    // The first step whose end lies past the line's start writes it.
    const auto it =
        std::find_if(steps.begin(), steps.end(), [&](const auto& s) { return s.second > at; });
    ASSERT_NE(it, steps.end()) << line;
    EXPECT_EQ(it->first, due) << line;
  }
}

TEST(Replay, AFileWithNoStampIsPacedEvenlyOverTheSpanItsLastLineAtTheEnd) {
  const std::vector<std::string> files = {
      "[2026-03-02T09:00:02.000] sched: Allocate JobId=7\n"
      "[2026-03-02T09:00:08.000] _job_complete: JobId=7 done\n",
      "step 1 loss 2.5\nstep 2 loss 2.4\nstep 3 loss 2.3\nValueError: bad sample\n", "prepared\n",
      "step 1\ncut mid-li"};
  const std::vector<std::string_view> views(files.begin(), files.end());
  const std::vector<std::string> paths = {"slurmctld.log", "slurm-7.out", "slurm-8.out",
                                          "gpu-0001/rank_3.log"};
  const ReplayPlan plan = PlanReplay(views, paths, 2026, kStart, {.speed = 1});
  EXPECT_EQ(plan.end, kStart + 8 * kSec);
  EXPECT_EQ(plan.timed, (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(plan.paced, (std::vector<bool>{false, true, true, true}));
  // Four lines over the 8 s from the job's start: one every 2 s, none before the start, the
  // last when the replay ends.
  const std::string_view out = files[1];
  const std::vector<std::pair<TimeNs, std::size_t>> four = {{2 * kSec, out.find("step 2")},
                                                            {4 * kSec, out.find("step 3")},
                                                            {6 * kSec, out.find("ValueError")},
                                                            {8 * kSec, out.size()}};
  EXPECT_EQ(StepsOf(plan, 1), four);
  // One line: there when the replay ends. A cut last line is a line of its own.
  EXPECT_EQ(StepsOf(plan, 2), (std::vector<std::pair<TimeNs, std::size_t>>{{8 * kSec, 9}}));
  EXPECT_EQ(StepsOf(plan, 3),
            (std::vector<std::pair<TimeNs, std::size_t>>{{4 * kSec, 7}, {8 * kSec, 17}}));
}

// `eval --watch` (by default): the latest a file with no stamp can come, whole.
TEST(Replay, WithoutPacingAFileWithNoStampComesWholeWhenTheReplayEnds) {
  const std::vector<std::string> files = {"[2026-03-02T09:00:08.000] the last stamp\n",
                                          "step 1\nstep 2\nValueError: bad sample\n"};
  const std::vector<std::string_view> views(files.begin(), files.end());
  const std::vector<std::string> paths = {"slurmctld.log", "slurm-7.out"};
  const ReplayPlan plan =
      PlanReplay(views, paths, 2026, kStart, {.speed = 1, .pace_untimed = false});
  EXPECT_EQ(plan.paced, (std::vector<bool>{false, false}));
  EXPECT_EQ(StepsOf(plan, 1),
            (std::vector<std::pair<TimeNs, std::size_t>>{{8 * kSec, files[1].size()}}));
}

TEST(Replay, WhatIsWrittenWholeComesWhenTheReplayEnds) {
  for (std::string_view path :
       {"gpu-0001/nvidia-smi.log", "nvidia-smi-gpu-0001.txt", "gpu-0001/ib_counters.log",
        "describe/trainer-0.txt", "k8s/describe/trainer-0.txt", "events.txt", "checkpoints/latest",
        "run/checkpoints/step_5/meta.json"}) {
    EXPECT_TRUE(denpex::cli::WrittenWhole(path)) << path;
  }
  for (std::string_view path :
       {"slurm-5430.out", "gpu-0001/rank_3.log", "train.log", "logs/job1/attempt_0/0/stderr.log",
        "mycheckpoints/notes.txt", "pods/trainer-0.log", "events.txt.log"}) {
    EXPECT_FALSE(denpex::cli::WrittenWhole(path)) << path;
  }
  const std::vector<std::string> files = {"[2026-03-02T09:00:04.000] the last stamp\n",
                                          "GPU 0: 12 W\nGPU 1: 13 W\n", "step_5.pt\n"};
  const std::vector<std::string_view> views(files.begin(), files.end());
  const std::vector<std::string> paths = {"slurmctld.log", "gpu-0001/nvidia-smi.log",
                                          "checkpoints/latest"};
  const ReplayPlan plan = PlanReplay(views, paths, 2026, kStart, {.speed = 1});
  EXPECT_EQ(plan.paced, (std::vector<bool>{false, false, false}));
  for (std::uint32_t f : {1u, 2u}) {
    EXPECT_EQ(StepsOf(plan, f),
              (std::vector<std::pair<TimeNs, std::size_t>>{{4 * kSec, files[f].size()}}))
        << f;
  }
}

TEST(Replay, WithoutTheJobsStartTheEarliestStampIsWallZero) {
  const ReplayPlan plan = Plan({.speed = 1}, std::nullopt);
  EXPECT_EQ(plan.start, *denpex::ParseRfc3339("2026-01-22T12:35:05Z"));
  EXPECT_EQ(plan.steps.front().file, 2u);
  EXPECT_EQ(plan.steps.front().wall_ns, 0);
}

TEST(Replay, MaxGapCapsEveryIdleGap) {
  const ReplayPlan plan = Plan({.speed = 1, .max_gap_s = 0.25});
  for (std::size_t i = 1; i < plan.steps.size(); ++i) {
    EXPECT_LE(plan.steps[i].wall_ns - plan.steps[i - 1].wall_ns, kSec / 4) << i;
  }
  // Stamps at 0, 0.5, 1.5, 2, 3 and 4 seconds: five gaps, each capped.
  EXPECT_EQ(plan.wall_ns, 5 * kSec / 4);
}

TEST(Replay, BatchesWriteEachFileOnceAndRebuildItExactly) {
  const ReplayPlan plan = Plan({.speed = 1});
  std::vector<std::string> out(kFiles.size());
  std::vector<bool> created(kFiles.size(), false);
  std::vector<std::size_t> written(kFiles.size(), 0);
  std::size_t next = 0;
  int batches = 0;
  // Wake every 700 ms of wall time, as a loaded scheduler might.
  for (std::int64_t now = 0; next < plan.steps.size(); now += 7 * kSec / 10) {
    const std::vector<ReplayWrite> batch = TakeDue(plan, &next, now, &written);
    if (batch.empty()) continue;
    ++batches;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(batch[i - 1].file, batch[i].file);  // one write per file
      }
      const ReplayWrite& w = batch[i];
      EXPECT_EQ(w.begin, out[w.file].size());
      out[w.file] += kFiles[w.file].substr(w.begin, w.end - w.begin);
      created[w.file] = true;
    }
  }
  EXPECT_EQ(out, kFiles);
  EXPECT_EQ(created, std::vector<bool>(kFiles.size(), true));
  // Stamps at 0, 0.5, 1.5, 2, 3 and 4 s: taken at 0 (and the empty file), 0.7 (0.5), 2.1 (1.5,
  // 2), 3.5 (3), 4.2 (4 and the snapshot without a stamp).
  EXPECT_EQ(batches, 5);
}

TEST(Replay, ABatchTakesOnlyWhatIsDue) {
  const ReplayPlan plan = Plan({.speed = 1});
  std::vector<std::size_t> written(kFiles.size(), 0);
  std::size_t next = 0;
  const auto batch = TakeDue(plan, &next, 0, &written);
  ASSERT_EQ(batch.size(), 3u);  // Slurm's first line, the kernel's boot line, the empty file
  EXPECT_EQ(batch[0].file, 0u);
  EXPECT_EQ(batch[1].file, 2u);
  EXPECT_EQ(batch[2].file, 4u);
  EXPECT_EQ(batch[2].end, 0u);
  EXPECT_TRUE(TakeDue(plan, &next, kSec / 4, &written).empty());
}

}  // namespace
