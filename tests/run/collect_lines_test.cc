// Which lines of Slurm's daemon logs `denpex collect --slurm-job` keeps (cli/src/collect), on
// lines as Slurm 22.05 writes them (corpora/real/sl_*, the Slurm of scripts/services.sh).
#include <gtest/gtest.h>

#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "collect/slurm_lines.h"

namespace denpex::cli::collect {
namespace {

using Ids = std::vector<std::string>;

TEST(JobIdsNamed, ReadsEveryWaySlurmNamesAJob) {
  EXPECT_EQ(JobIdsNamed("[2026-11-29T16:40:54.229] sched: Allocate JobId=4240 NodeList=sn01 "
                        "#CPUs=4 Partition=batch"),
            Ids{"4240"});
  EXPECT_EQ(JobIdsNamed("[2026-12-04T11:38:30.419] _job_complete: JobId=4 WTERMSIG 9"), Ids{"4"});
  EXPECT_EQ(JobIdsNamed("[2026-11-29T16:40:54.312] launch task StepId=4240.0 request from UID:0 "
                        "GID:0 HOST:127.0.0.1 PORT:59350"),
            Ids{"4240"});
  EXPECT_EQ(JobIdsNamed("[2026-11-29T16:41:05.295] [4240.batch] error: *** JOB 4240 ON sn01 "
                        "CANCELLED AT 2026-11-29T16:41:05 DUE TO PREEMPTION ***"),
            Ids{"4240"});
  EXPECT_EQ(JobIdsNamed("[2026-12-04T11:38:30.418] [4.0] get_exit_code task 1 died by signal: 9"),
            Ids{"4"});
  EXPECT_EQ(JobIdsNamed("[2026-11-29T16:40:54.235] Launching batch job 4240 for UID 0"),
            Ids{"4240"});
  EXPECT_EQ(JobIdsNamed("[2026-11-29T16:41:05.289] preempted JobId=4240 has been killed to "
                        "reclaim resources for JobId=4241"),
            (Ids{"4240", "4241"}));
  EXPECT_EQ(JobIdsNamed("sched: Allocate JobId=7_3(12) NodeList=gpu-[01-02]"), (Ids{"7_3", "12"}));
  EXPECT_EQ(JobIdsNamed("_job_complete: JobId=30+1(31) done"), (Ids{"30+1", "31"}));
}

TEST(JobIdsNamed, NamesNoJobWhereNoneIs) {
  EXPECT_TRUE(JobIdsNamed("[2026-12-02T10:28:21.647] error: Nodes sn01 not responding, setting "
                          "DOWN")
                  .empty());
  EXPECT_TRUE(JobIdsNamed("[2026-11-29T16:40:51.211] No job state file (/tmp/x/job_state.old) to "
                          "recover")
                  .empty());
  EXPECT_TRUE(JobIdsNamed("[2026-12-04T11:38:31.919] [6.0] done with job").size() == 1u)
      << "the step prefix, not `job` at the end";
  EXPECT_TRUE(JobIdsNamed("batch_job 12 and job 42a").empty());
  EXPECT_TRUE(JobIdsNamed("[2026-12-04T11:18:50.086] CPUs=8 Boards=1 Sockets=1").empty());
}

TEST(NamesWord, MatchesAWholeHostNameOnly) {
  EXPECT_TRUE(NamesWord("error: Nodes sn01 not responding", "sn01"));
  EXPECT_TRUE(NamesWord("Node sn01. now responding", "sn01"));
  EXPECT_FALSE(NamesWord("error: Nodes sn011 not responding", "sn01"));
  EXPECT_FALSE(NamesWord("error: Nodes gpu-sn01 not responding", "sn01"));
  EXPECT_FALSE(NamesWord("sn01.cluster", "sn01")) << "another name in the same domain";
}

TEST(LineTimes, ReadTheDaemonsAndDmesgsStamps) {
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 11;
  tm.tm_mday = 4;
  tm.tm_hour = 11;
  tm.tm_min = 38;
  tm.tm_sec = 30;
  tm.tm_isdst = -1;
  const auto want = static_cast<std::int64_t>(std::mktime(&tm));
  EXPECT_EQ(DaemonLineTime("[2026-12-04T11:38:30.419] _job_complete: JobId=4 done"), want);
  EXPECT_EQ(DmesgLineTime("[Fri Dec  4 11:38:30 2026] Out of memory: Killed process 77"), want);
  EXPECT_FALSE(DaemonLineTime("slurmd: error: no stamp"));
  EXPECT_FALSE(DmesgLineTime("[ 2686.172733] an uptime stamp"));
}

// A controller log of three jobs whose ids share digits (1, 12, 120) and node lines before,
// during and after job 12, on its node and another.
TEST(FilterDaemonLog, KeepsTheJobsLinesAndItsNodesWhileItRanAndNoOtherJobs) {
  const std::string log =
      "[2026-12-04T10:00:00.000] sched: Allocate JobId=1 NodeList=sn01 #CPUs=1 Partition=b\n"
      "[2026-12-04T10:00:05.000] _job_complete: JobId=1 done\n"
      "[2026-12-04T10:00:06.000] error: Nodes sn02 not responding\n"
      "[2026-12-04T10:01:00.000] sched: Allocate JobId=12 NodeList=sn[02-03] #CPUs=8 Partition=b\n"
      "[2026-12-04T10:01:01.000] sched: Allocate JobId=120 NodeList=sn01 #CPUs=1 Partition=b\n"
      "[2026-12-04T10:01:30.000] error: Nodes sn03 not responding\n"
      "[2026-12-04T10:01:31.000] error: Nodes sn01 not responding\n"
      "[2026-12-04T10:01:40.000] Killing JobId=12 on failed node sn03\n"
      "[2026-12-04T10:01:41.000] _job_complete: JobId=120 WEXITSTATUS 1\n"
      "[2026-12-04T10:01:42.000] _job_complete: JobId=12 WTERMSIG 9\n"
      "[2026-12-04T10:02:00.000] error: Nodes sn02 not responding, setting DOWN\n";
  JobScope scope{.job_id = "12", .nodes = {"sn02", "sn03"}};
  scope.start = DaemonLineTime("[2026-12-04T10:01:00.000]");
  scope.end = DaemonLineTime("[2026-12-04T10:01:42.000]");
  std::istringstream in(log);
  std::ostringstream out;
  const FilterCounts c = FilterDaemonLog(in, scope, "", out);
  EXPECT_EQ(out.str(),
            "[2026-12-04T10:01:00.000] sched: Allocate JobId=12 NodeList=sn[02-03] #CPUs=8 "
            "Partition=b\n"
            "[2026-12-04T10:01:30.000] error: Nodes sn03 not responding\n"
            "[2026-12-04T10:01:40.000] Killing JobId=12 on failed node sn03\n"
            "[2026-12-04T10:01:42.000] _job_complete: JobId=12 WTERMSIG 9\n");
  EXPECT_EQ(c.lines, 11u);
  EXPECT_EQ(c.job_lines, 3u);
  EXPECT_EQ(c.node_lines, 1u);
  EXPECT_EQ(c.other_job_lines, 4u);
}

TEST(FilterDaemonLog, ANodesOwnSlurmdLogKeepsItsUntaggedLinesWhileTheJobRan) {
  const std::string log =
      "[2026-12-04T10:00:59.000] CPU frequency setting not configured for this node\n"
      "[2026-12-04T10:01:00.000] launch task StepId=12.0 request from UID:0 GID:0\n"
      "[2026-12-04T10:01:20.000] error: Unable to contact slurm controller (connect failure)\n"
      "[2026-12-04T10:01:21.000] [120.0] done with job\n"
      "[2026-12-04T10:01:42.000] [12.0] done with job\n";
  JobScope scope{.job_id = "12", .nodes = {"sn02"}};
  scope.start = DaemonLineTime("[2026-12-04T10:01:00.000]");
  scope.end = DaemonLineTime("[2026-12-04T10:01:42.000]");
  std::istringstream in(log);
  std::ostringstream out;
  FilterDaemonLog(in, scope, "sn02", out);
  EXPECT_EQ(out.str(),
            "[2026-12-04T10:01:00.000] launch task StepId=12.0 request from UID:0 GID:0\n"
            "[2026-12-04T10:01:20.000] error: Unable to contact slurm controller (connect "
            "failure)\n"
            "[2026-12-04T10:01:42.000] [12.0] done with job\n");
}

}  // namespace
}  // namespace denpex::cli::collect
