// `denpex eval` end to end through the binary: suites, parallel jobs, shards and merge,
// frozen corpora, the regression gate and its committed baseline, the HTML report rendered
// by headless Chromium.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "denpex/proto/json_io.h"
#include "denpex/v1/score.pb.h"
#include "support/denpex_cmd.h"
#include "support/launchers.h"

namespace {
namespace fs = std::filesystem;

using denpex::testing::CmdResult;
using denpex::testing::Denpex;
using denpex::testing::Shell;
using denpex::testing::launchers::Required;

std::string Source(const std::string& rel) { return (fs::path(DENPEX_SOURCE_DIR) / rel).string(); }

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("denpex-eval-e2e-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

denpex::v1::EvalReport ReadReport(const std::string& path) {
  denpex::v1::EvalReport r;
  EXPECT_TRUE(denpex::proto::ReadJsonFile(path, &r).ok()) << path;
  return r;
}

// The answers of a report without wall times: what must not depend on threads or shards.
std::string Answers(const denpex::v1::EvalReport& r) {
  std::string out;
  for (const auto& s : r.incidents()) {
    out += s.suite() + "/" + s.incident() + "/" + std::to_string(s.seed()) + "/" + s.strategy() +
           ":" + std::to_string(s.answer_rank()) + (s.initiator_rank_correct() ? "+" : "-") + "\n";
  }
  return out;
}

const std::string kSmoke = Source("scenarios/smoke");

TEST(Eval, ShardsMergeIntoTheReportOfTheWholeRun) {
  TempDir tmp;
  ASSERT_EQ(Denpex("eval " + kSmoke + " --seeds 2 --json " + tmp / "whole.json").code, 0);
  for (int i = 0; i < 3; ++i) {
    const CmdResult r = Denpex("eval " + kSmoke + " --seeds 2 --shard " + std::to_string(i) +
                               "/3 --json " + tmp / ("s" + std::to_string(i) + ".json"));
    ASSERT_EQ(r.code, 0) << r.output;
  }
  const CmdResult m = Denpex("eval merge " + tmp / "s2.json" + " " + tmp / "s0.json" + " " +
                             tmp / "s1.json" + " --out " + tmp / "merged.json" + " --markdown " +
                             tmp / "merged.md");
  ASSERT_EQ(m.code, 0) << m.output;
  const auto whole = ReadReport(tmp / "whole.json");
  const auto merged = ReadReport(tmp / "merged.json");
  EXPECT_EQ(Answers(merged), Answers(whole));
  EXPECT_EQ(merged.aggregates_size(), whole.aggregates_size());
  EXPECT_EQ(merged.run().jobs_run(), 6);
  EXPECT_EQ(merged.run().shards_merged(), 3);
  EXPECT_TRUE(fs::exists(tmp / "merged.md"));
  EXPECT_EQ(Denpex("eval merge " + tmp / "s0.json" + " " + tmp / "s0.json").code, 3);
}

TEST(Eval, ReportDoesNotDependOnTheNumberOfParallelJobs) {
  TempDir tmp;
  ASSERT_EQ(Denpex("eval " + kSmoke + " --seeds 2 --jobs 1 --json " + tmp / "one.json").code, 0);
  ASSERT_EQ(Denpex("eval " + kSmoke + " --seeds 2 --jobs 4 --json " + tmp / "four.json").code, 0);
  EXPECT_EQ(Answers(ReadReport(tmp / "one.json")), Answers(ReadReport(tmp / "four.json")));
}

TEST(Eval, UsageErrorsExit2AndNameTheProblem) {
  CmdResult r = Denpex("eval " + kSmoke + " --strategies engine no-such");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("known: engine, first-error"), std::string::npos) << r.output;
  EXPECT_EQ(Denpex("eval " + kSmoke + " --shard 3/3").code, 2);
  r = Denpex("eval");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("nothing to evaluate"), std::string::npos) << r.output;
}

TEST(Eval, NoProgressLineWhenStderrIsNotATerminal) {
  const CmdResult r = Denpex("eval " + Source("scenarios/smoke/sigkill_1024_debug.textproto") +
                             " --seeds 1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos);
}

TEST(Eval, BaselinesFlagAddsEveryKnownBaselineToEveryTable) {
  TempDir tmp;
  const CmdResult r = Denpex("eval " + Source("scenarios/smoke/sigkill_1024_debug.textproto") +
                             " --seeds 1 --strategies engine --baselines --json " + tmp / "r.json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto report = ReadReport(tmp / "r.json");
  ASSERT_GE(report.run().strategies_size(), 2);
  EXPECT_EQ(report.run().strategies(0), "engine");
  for (const auto& strategy : report.run().strategies()) {
    EXPECT_NE(r.output.find("| overall              | " + strategy), std::string::npos)
        << strategy << "\n" << r.output;
  }
}

// A pilot's frozen incident: incident/ plus expected.json in the truth schema.
TEST(Eval, CorpusIncidentsAreDiagnosedAndScoredAgainstTheirExpectedFile) {
  TempDir tmp;
  const std::string inc = tmp / "pilot/kill_1024";
  ASSERT_EQ(Denpex("simulate " + Source("scenarios/smoke/sigkill_1024_debug.textproto") +
                   " --out " + inc)
                .code,
            0);
  fs::rename(inc + "/truth.json", inc + "/expected.json");
  const CmdResult r = Denpex("eval --corpus " + tmp / "pilot" + " --json " + tmp / "r.json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto report = ReadReport(tmp / "r.json");
  ASSERT_EQ(report.incidents_size(), 2);  // engine and first-error, one incident
  EXPECT_EQ(report.incidents(0).suite(), "corpus:pilot");
  EXPECT_EQ(report.incidents(0).incident(), "kill_1024");
  EXPECT_TRUE(report.incidents(0).initiator_rank_correct());
  EXPECT_TRUE(fs::exists(inc + "/incident"));  // frozen incidents are never removed
}

TEST(Eval, GateExits4AndNamesTheMetricThatDropped) {
  TempDir tmp;
  const std::string scenario = Source("scenarios/smoke/sigkill_1024_debug.textproto");
  ASSERT_EQ(Denpex("eval " + scenario + " --seeds 1 --write-gate " + tmp / "gate.json").code, 0);
  EXPECT_EQ(Denpex("eval " + scenario + " --seeds 1 --gate " + tmp / "gate.json").code, 0);

  denpex::v1::GateBaseline gate;
  ASSERT_TRUE(denpex::proto::ReadJsonFile(tmp / "gate.json", &gate).ok());
  ASSERT_GT(gate.metrics_size(), 0);
  EXPECT_NE(gate.refresh().find("--write-gate"), std::string::npos);
  gate.mutable_metrics(0)->set_value(gate.metrics(0).value() + 0.5);  // a better past
  ASSERT_TRUE(denpex::proto::WriteJsonFile(tmp / "raised.json", gate).ok());
  const CmdResult r = Denpex("eval " + scenario + " --seeds 1 --gate " + tmp / "raised.json");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(gate.metrics(0).metric()), std::string::npos) << r.output;
}

// CI fails when a tracked metric of the committed baseline drops.
TEST(Eval, CommittedGateBaselineHolds) {
  // In every collection shape too: a committed wrong answer in any shape fails CI.
  const CmdResult r = Denpex("eval " + Source("scenarios/suites/gate.suite.textproto") +
                             " --seeds 2 --shapes all --gate " +
                             Source("scenarios/suites/gate.baseline.json"));
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(Eval, HtmlReportRendersTablesTimelineAndIncidentsInHeadlessChromium) {
  if (Shell("command -v chromium").code != 0) {
    SKIP_OR_FAIL(
        "chromium is not installed; `scripts/install-deps.sh --with-services` installs "
        "it (Debian package chromium)");
  }
  TempDir tmp;
  ASSERT_EQ(Denpex("eval " + kSmoke + " --seeds 1 --html " + tmp / "r.html").code, 0);
  const CmdResult dom = Shell("timeout 120 chromium --headless --no-sandbox --disable-gpu "
                            "--user-data-dir=" + tmp / "profile" +
                            " --dump-dom file://" + tmp / "r.html");
  ASSERT_EQ(dom.code, 0) << dom.output;
  for (const char* part : {"<table class=\"aggregates\"", "<svg class=\"timeline\"",
                           "<circle class=\"pt fault\"", "<circle class=\"pt rank\"",
                           "The wave of first errors", "<table class=\"incidents\"",
                           "<tr class=\"row\"", ">engine<", ">first-error<"}) {
    EXPECT_NE(dom.output.find(part), std::string::npos) << part;
  }
  const CmdResult shot = Shell("timeout 120 chromium --headless --no-sandbox --disable-gpu "
                             "--user-data-dir=" + tmp / "profile" + " --window-size=1200,900 "
                             "--screenshot=" + tmp / "r.png" + " file://" + tmp / "r.html");
  EXPECT_EQ(shot.code, 0) << shot.output;
  EXPECT_GT(fs::file_size(tmp / "r.png"), 10'000u);
}

}  // namespace

// `--shapes`: each incident is also diagnosed in each collection shape; the report gains one
// row per shape in the text table and the JSON, and a gate file's shape floors are checked.
TEST(Eval, ShapesAddOneRowPerShapeToTheReportAndTheGate) {
  TempDir tmp;
  const std::string scenario = Source("scenarios/families/sigkill_1024_torch21.textproto");
  const CmdResult r = Denpex("eval " + scenario + " --seeds 1 --shapes renamed,cri --json " +
                             tmp / "r.json" + " --markdown " + tmp / "r.md" + " --write-gate " +
                             tmp / "gate.json");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| renamed         | 1     |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| cri             | 1     |"), std::string::npos) << r.output;
  const auto report = ReadReport(tmp / "r.json");
  ASSERT_EQ(report.shape_aggregates_size(), 2);
  EXPECT_EQ(report.shape_aggregates(0).shape(), "renamed");
  EXPECT_EQ(report.shape_aggregates(1).pairs(), 1);
  ASSERT_EQ(report.shape_results_size(), 2);
  EXPECT_NE(report.shape_results(1).outcome(), denpex::v1::SHAPE_OUTCOME_UNSPECIFIED);
  EXPECT_TRUE(report.shape_results(0).canonical().committed());
  std::ifstream md(tmp / "r.md");
  std::stringstream text;
  text << md.rdbuf();
  EXPECT_NE(text.str().find("## Collection shapes"), std::string::npos);

  denpex::v1::GateBaseline gate;
  ASSERT_TRUE(denpex::proto::ReadJsonFile(tmp / "gate.json", &gate).ok());
  ASSERT_EQ(gate.shape_floors_size(), 2);
  EXPECT_NE(gate.refresh().find("--shapes renamed,cri"), std::string::npos);
  gate.mutable_shape_floors(0)->set_same_share(2);  // a better past than possible
  ASSERT_TRUE(denpex::proto::WriteJsonFile(tmp / "raised.json", gate).ok());
  const CmdResult g = Denpex("eval " + scenario + " --seeds 1 --shapes renamed,cri --gate " +
                             tmp / "raised.json");
  EXPECT_EQ(g.code, 4) << g.output;
  EXPECT_NE(g.output.find("shape renamed same"), std::string::npos) << g.output;
  const CmdResult missing = Denpex("eval " + scenario + " --seeds 1 --gate " + tmp / "gate.json");
  EXPECT_EQ(missing.code, 4) << missing.output;
  EXPECT_EQ(Denpex("eval " + scenario + " --seeds 1 --shapes no-such").code, 2);
}
