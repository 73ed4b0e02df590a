// `denpex eval --watch` (cli/src/watch/watch_eval.cc): a simulated 1,024-rank incident replayed in
// simulated time into the watcher, its provisional answers scored; the table and its false alarms.
// The structure of the result is asserted, not the engine's numbers.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "denpex/cli/commands.h"
#include "denpex/proto/json_io.h"
#include "denpex/sim/simulator.h"
#include "support/temp_dir.h"
#include "watch/watch_eval.h"

namespace {
namespace fs = std::filesystem;
using denpex::cli::IsHealthyControl;
using denpex::cli::RenderWatchTable;
using denpex::v1::WatchResult;

std::string Source(const std::string& rel) { return (fs::path(DENPEX_SOURCE_DIR) / rel).string(); }

TEST(WatchEval, ScoresTheProvisionalAnswersOfAReplayedIncident) {
  denpex::testing::TempDir tmp;
  denpex::cli::EvalArgs args{
      .scenarios = {Source("scenarios/families/sigkill_1024_torch21.textproto")},
      .seeds = 1,
      .json = tmp.path() / "report.json",
      .work_dir = tmp.path() / "work",
      .strategies = {"engine"},
      .jobs = 1,
      .watch = true};
  std::ostringstream out, err;
  ASSERT_EQ(denpex::cli::RunEval(args, out, err), 0) << err.str();
  denpex::v1::EvalReport report;
  ASSERT_TRUE(denpex::proto::ReadJsonFile(tmp.path() / "report.json", &report).ok());
  ASSERT_EQ(report.watch_results_size(), 1);
  const WatchResult& r = report.watch_results(0);
  EXPECT_EQ(r.error(), "");
  EXPECT_EQ(r.family(), report.incidents(0).family());
  EXPECT_EQ(r.world_size(), 1024);
  EXPECT_FALSE(r.healthy());
  EXPECT_GT(r.evaluations(), 0);
  // The final answer is the eval's own: right there, so right here, never earlier than the fault.
  EXPECT_EQ(r.final_right(), report.incidents(0).initiator_rank_correct());
  if (r.final_right()) {
    ASSERT_TRUE(r.has_right_seconds());
    EXPECT_GE(r.right_seconds(), 0);
  }
  EXPECT_EQ(r.has_before_watchdog(), r.has_right_seconds() && r.has_watchdog_seconds());
  EXPECT_EQ(r.false_alarms() > 0, !r.false_alarm().empty());
  EXPECT_EQ(r.gpu_hours_recovered() > 0, r.has_right_seconds() && !r.right_final_only());
  // The scratch copy is kept with --work-dir, beside the incident, never inside it.
  EXPECT_TRUE(fs::is_directory(tmp.path() / "work" / "cli" / "sigkill_1024_torch21" / "seed-1" /
                               "watch" / "incident"));
  EXPECT_NE(out.str().find("| family | incidents | right live |"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("| " + r.family() + " | 1 |"), std::string::npos) << out.str();
}

TEST(WatchEval, AControlRunAtSlowdownOneIsHealthy) {
  const std::vector<std::string> at_one = {"faults[0].slowdown=1"};
  const std::vector<std::string> stall = {"faults[0].slowdown=1", "faults[0].stall=true"};
  auto healthy = denpex::sim::LoadScenario(
      Source("scenarios/families/straggler_1024_torchrun.textproto"), at_one);
  ASSERT_TRUE(healthy.ok()) << healthy.status().message();
  EXPECT_TRUE(IsHealthyControl(*healthy));
  auto slow =
      denpex::sim::LoadScenario(Source("scenarios/families/straggler_1024_torchrun.textproto"), {});
  ASSERT_TRUE(slow.ok());
  EXPECT_FALSE(IsHealthyControl(*slow));  // drawn in [1.25, 2)
  auto stalled = denpex::sim::LoadScenario(
      Source("scenarios/families/straggler_1024_torchrun.textproto"), stall);
  ASSERT_TRUE(stalled.ok()) << stalled.status().message();
  EXPECT_FALSE(IsHealthyControl(*stalled));  // the rank stops: its peers' watchdogs fire
}

WatchResult Result(const std::string& family, bool healthy, int false_alarms) {
  WatchResult r;
  r.set_suite("s");
  r.set_incident(family + "_1024");
  r.set_seed(7);
  r.set_family(family);
  r.set_healthy(healthy);
  r.set_false_alarms(false_alarms);
  if (false_alarms > 0) r.set_false_alarm("+3.0 s provisional VERDICT_DIAGNOSED rank 5: why");
  return r;
}

TEST(WatchEval, TheTableCountsFalseAlarmsAndListsEach) {
  WatchResult right = Result("hang", false, 0);
  right.set_right_seconds(12);
  right.set_watchdog_seconds(600);
  right.set_before_watchdog(true);
  right.set_gpu_hours_recovered(100);
  WatchResult late = Result("hang", false, 1);
  late.set_right_seconds(620);
  late.set_watchdog_seconds(600);
  late.set_before_watchdog(false);
  WatchResult ahead = Result("exception", false, 0);
  ahead.set_right_seconds(0);
  ahead.set_right_ahead_seconds(12.04);
  const std::string table = RenderWatchTable(
      {right, late, Result("straggler", true, 2), Result("straggler", true, 0), ahead});
  EXPECT_NE(table.find("| hang | 2 | 2 | 0 | 1/2 | 316.0 | 1 (1) | 50.0 |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("| healthy (straggler at slowdown 1) | 2 | 0 | 0 | - | - | 2 (1) | 0.0 |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("s/hang_1024 seed 7 (hang): 1 false alarm(s), the first +3.0 s"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("s/straggler_1024 seed 7 (straggler, healthy): 2 false alarm(s)"),
            std::string::npos)
      << table;
  // A right answer before the fault is listed: its lines were replayed ahead of their writing.
  EXPECT_NE(table.find("s/exception_1024 seed 7 (exception): 12.0 s before the fault"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("hang_1024 seed 7 (hang): 12"), std::string::npos) << table;
}

}  // namespace
