// The watcher's progress stall (analyze/stall.h through engine::Watcher), in virtual time: per-rank
// key=value step lines written as a job writes them, the directory read and evaluated at chosen
// wall times. A healthy job with jitter never commits; a rank behind its peers once every rank's
// progress stopped is named; ranks that stopped together name no one.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "denpex/common/time.h"
#include "denpex/engine/watch.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;

constexpr TimeNs kSecond = 1'000'000'000;

class Job {
 public:
  explicit Job(int ranks) : ranks_(ranks) { fs::create_directories(tmp_.path() / "node-a"); }
  const fs::path& dir() const { return tmp_.path(); }
  // Rank `rank`'s line for `step`, finished at `t`.
  void Step(int rank, int step, TimeNs t) {
    std::ofstream out(tmp_.path() / "node-a" / ("rank_" + std::to_string(rank) + ".log"),
                      std::ios::app);
    char line[160];
    std::snprintf(line, sizeof line, " rank=%d step=%d/1000 loss=1.5 data_ms=12.0 step_ms=1000.0\n",
                  rank, step);
    out << FormatRfc3339(t) << line;
  }
  int ranks() const { return ranks_; }

 private:
  denpex::testing::TempDir tmp_;
  int ranks_;
};

const TimeNs kStart = *ParseRfc3339("2026-03-02T09:00:00Z");

v1::Diagnosis Look(Watcher* w, TimeNs wall) {
  EXPECT_TRUE(w->Refresh(nullptr, wall).ok());
  auto d = w->Evaluate(wall);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : v1::Diagnosis();
}

// `steps` lockstep steps of ~1 s with jitter, each rank's line written as it finishes, looked at
// after each; returns the time of the last step. No look commits.
TimeNs RunHealthy(Job* job, Watcher* w, int steps, std::mt19937* rng, int stop_rank = -1,
                  int stop_step = 0) {
  std::normal_distribution<double> jitter(0, 0.05);
  TimeNs t = kStart;
  for (int s = 1; s <= steps; ++s) {
    t += kSecond + static_cast<TimeNs>(jitter(*rng) * 1e9);
    for (int r = 0; r < job->ranks(); ++r) {
      if (r == stop_rank && s >= stop_step) continue;
      job->Step(r, s, t + static_cast<TimeNs>(std::abs(jitter(*rng)) * 1e8));
    }
    const v1::Diagnosis d = Look(w, t + kSecond / 2);
    EXPECT_NE(d.verdict(), v1::VERDICT_DIAGNOSED) << "step " << s << ": " << d.reason();
  }
  return t;
}

TEST(WatchStall, AHealthyJobWithJitterNeverCommits) {
  std::mt19937 rng(3);
  Job job(8);
  auto w = Watcher::Open(job.dir(), {.threads = 2});
  ASSERT_TRUE(w.ok());
  RunHealthy(&job, &*w, 60, &rng);
}

TEST(WatchStall, RanksThatStoppedTogetherNameNoOne) {
  std::mt19937 rng(4);
  Job job(8);
  auto w = Watcher::Open(job.dir(), {.threads = 2});
  ASSERT_TRUE(w.ok());
  const TimeNs last = RunHealthy(&job, &*w, 20, &rng);
  v1::Diagnosis d;
  for (int s = 1; s <= 10; ++s) d = Look(&*w, last + s * kSecond);
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE);
  EXPECT_NE(d.reason().find("it stalled at step 20, every rank together"), std::string::npos)
      << d.reason();
}

// Rank 5 never printed step 21; its peers did, and then every rank stopped (they wait on it in
// step 22's collective): rank 5 stopped first.
TEST(WatchStall, TheRankBehindOnceEveryRankStoppedIsNamedWithinTheStallLimit) {
  std::mt19937 rng(5);
  Job job(8);
  auto w = Watcher::Open(job.dir(), {.threads = 2, .stall_factor = 5});
  ASSERT_TRUE(w.ok());
  const TimeNs last = RunHealthy(&job, &*w, 21, &rng, /*stop_rank=*/5, /*stop_step=*/21);
  int named_after = -1;
  for (int s = 1; s <= 12 && named_after < 0; ++s) {
    const v1::Diagnosis d = Look(&*w, last + s * kSecond);
    if (d.verdict() == v1::VERDICT_DIAGNOSED) {
      EXPECT_EQ(d.initiator().rank(), 5) << d.reason();
      EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
      EXPECT_NE(d.reason().find("reached step 21"), std::string::npos) << d.reason();
      named_after = s;
    }
  }
  EXPECT_GE(named_after, 5) << "not before the stall limit (5 step times)";
  EXPECT_LE(named_after, 7);
}

// Ranks that do not wait on each other (a pipeline's earlier stages, an asynchronous job): one
// rank's step lines stop while its peers' go on.
TEST(WatchStall, ARankWhosePeersGoOnIsNamed) {
  Job job(4);
  auto w = Watcher::Open(job.dir(), {.threads = 2});
  ASSERT_TRUE(w.ok());
  TimeNs t = kStart;
  v1::Diagnosis d;
  for (int s = 1; s <= 30; ++s) {
    t += kSecond;
    for (int r = 0; r < job.ranks(); ++r) {
      if (r != 2 || s <= 10) job.Step(r, s, t);
    }
    d = Look(&*w, t + kSecond / 2);
    if (s <= 15) {
      EXPECT_NE(d.verdict(), v1::VERDICT_DIAGNOSED) << s << ": " << d.reason();
    }
  }
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 2);
  EXPECT_NE(d.reason().find("went on until"), std::string::npos) << d.reason();
}

}  // namespace
}  // namespace denpex::engine
