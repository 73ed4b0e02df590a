// The `denpex` binary end to end: exit codes, messages, the eval acceptance criterion of
// issue #2, and that diagnose leaves the incident directory untouched.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "denpex/proto/json_io.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"
#include "support/denpex_cmd.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using denpex::testing::CmdResult;
using denpex::testing::Denpex;

using denpex::testing::TempDir;

std::string Scenario(const std::string& name) {
  return (fs::path(DENPEX_SOURCE_DIR) / "scenarios" / name).string();
}

// Path -> (size, contents hash) of every file under `dir`.
std::map<std::string, std::size_t> Snapshot(const fs::path& dir) {
  std::map<std::string, std::size_t> snap;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) {
      snap[e.path().string()] = 0;
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    snap[e.path().string()] = std::hash<std::string>{}(ss.str());
  }
  return snap;
}

TEST(Cli, HelpListsSubcommandsAndExitCodes) {
  const CmdResult r = Denpex("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"simulate", "diagnose", "score", "eval", "demo", "Exit codes"}) {
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(Denpex("diagnose --help").code, 0);
}

TEST(Cli, UnknownFlagIsAUsageError) { EXPECT_EQ(Denpex("diagnose --no-such-flag x").code, 2); }

TEST(Cli, ScenarioWithUnknownFieldIsRejectedWithLocation) {
  TempDir tmp;
  const fs::path bad = tmp.path() / "typo.textproto";
  std::ofstream(bad) << "name: \"typo\"\njob {\n  nodse: 4\n}\n";
  const CmdResult r = Denpex("simulate " + bad.string() + " --out " + (tmp.path() / "o").string());
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(bad.string() + ":3:"), std::string::npos) << r.output;
}

TEST(Cli, DiagnoseMissingDirectoryExits3) {
  const CmdResult r = Denpex("diagnose /nonexistent/denpex/incident");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.output.find("/nonexistent/denpex/incident"), std::string::npos) << r.output;
}

TEST(Cli, DiagnoseEmptyDirectoryExits3) {
  TempDir tmp;
  const CmdResult r = Denpex("diagnose " + tmp.path().string());
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(tmp.path().string()), std::string::npos) << r.output;
}

TEST(Cli, SimulateDiagnoseScoreRoundTripLeavesIncidentUntouched) {
  TempDir tmp;
  const fs::path out = tmp.path() / "run";
  CmdResult r = Denpex("simulate " + Scenario("smoke/sigkill_4096.textproto") + " --out " + out.string() +
                 " --seed 3");
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_TRUE(fs::exists(out / "truth.json"));
  ASSERT_FALSE(fs::exists(out / "incident" / "truth.json"));

  const auto before = Snapshot(out / "incident");
  const fs::path diag = tmp.path() / "diagnosis.json";
  r = Denpex("diagnose " + (out / "incident").string() + " --json " + diag.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(Snapshot(out / "incident"), before);

  // --json inside the incident directory is refused, and nothing is written there.
  r = Denpex("diagnose " + (out / "incident").string() + " --json " +
             (out / "incident" / "d.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Snapshot(out / "incident"), before);

  const fs::path score = tmp.path() / "score.json";
  r = Denpex("score --truth " + (out / "truth.json").string() + " --diagnosis " + diag.string() +
             " --json " + score.string());
  ASSERT_EQ(r.code, 0) << r.output;
  denpex::v1::IncidentScore s;
  ASSERT_TRUE(denpex::proto::ReadJsonFile(score, &s).ok());
  EXPECT_TRUE(s.initiator_rank_correct()) << r.output;
  EXPECT_TRUE(s.initiator_node_correct());
  EXPECT_TRUE(s.owner_correct());
}

TEST(Cli, ScoreRejectsMalformedJsonWithItsPath) {
  TempDir tmp;
  const fs::path bad = tmp.path() / "bad.json";
  std::ofstream(bad) << "{ not json";
  const CmdResult r = Denpex("score --truth " + bad.string() + " --diagnosis " + bad.string());
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.output.find(bad.string()), std::string::npos);
}

// Issue #2's acceptance criterion: over scenarios/smoke/ with 5 seeds the engine names the
// right initiator every time, and the first-error baseline is printed beside it.
TEST(Cli, EvalSmokeSuiteEngineRightEverySeedBaselineBeside) {
  TempDir tmp;
  const fs::path report_path = tmp.path() / "report.json";
  const CmdResult r = Denpex("eval " + Scenario("smoke") + " --seeds 5 --json " + report_path.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("first-error"), std::string::npos) << r.output;
  denpex::v1::EvalReport report;
  ASSERT_TRUE(denpex::proto::ReadJsonFile(report_path, &report).ok());
  int engine_runs = 0;
  for (const auto& s : report.incidents()) {
    if (s.strategy() != "engine") continue;
    ++engine_runs;
    EXPECT_TRUE(s.initiator_rank_correct()) << s.incident() << " seed " << s.seed();
    EXPECT_TRUE(s.owner_correct()) << s.incident() << " seed " << s.seed();
  }
  EXPECT_GE(engine_runs, 5);
}

TEST(Cli, DemoPrintsVerdictAndScore) {
  TempDir tmp;
  const CmdResult r = Denpex("demo --out " + (tmp.path() / "demo").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("DIAGNOSED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("initiator rank RIGHT"), std::string::npos) << r.output;
}

}  // namespace

// Every subcommand's outputs, and flags that must not wrap (a seed past 64 bits) or fall through
// (an unknown subcommand, even with --help).
TEST(CliHardening, AnUnknownSubcommandIsAUsageErrorEvenWithHelp) {
  for (const char* args : {"frobnicate --help", "frobnicate", "checkpoint frobnicate --help"}) {
    const CmdResult r = Denpex(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("unknown subcommand"), std::string::npos) << r.output;
  }
  EXPECT_EQ(Denpex("checkpoint verify --help").code, 0);
  EXPECT_EQ(Denpex("preflight --help").code, 0);
}

TEST(CliHardening, ASeedOutsideSixtyFourBitsIsAUsageError) {
  TempDir tmp;
  for (const char* seed : {"-1", "18446744073709551616", "99999999999999999999999", "3x", "0x10"}) {
    const CmdResult r = Denpex("simulate " + Scenario("smoke/sigkill_1024_debug.textproto") + " --out " +
                               (tmp.path() / "o").string() + " --seed " + seed);
    EXPECT_EQ(r.code, 2) << seed << "\n" << r.output;
    EXPECT_NE(r.output.find("--seed"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "o"));
}

TEST(CliHardening, SimulateRefusesToDeleteAnIncidentUnlessForced) {
  TempDir tmp;
  const fs::path incident = tmp.path() / "o" / "incident";
  fs::create_directories(incident / "node-a");
  std::ofstream(incident / "node-a" / "real.log") << "a real incident's log\n";
  const std::string cmd = "simulate " + Scenario("smoke/sigkill_1024_debug.textproto") + " --out " +
                          (tmp.path() / "o").string() + " --seed 3";
  CmdResult r = Denpex(cmd);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(incident.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(incident / "node-a" / "real.log"));
  r = Denpex(cmd + " --force");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(incident / "node-a" / "real.log"));
  // A simulated incident (the truth beside it) is replaced again without --force.
  EXPECT_EQ(Denpex(cmd).code, 0);
  // An empty incident folder is no one's work: replaced without --force.
  fs::remove_all(tmp.path() / "o");
  fs::create_directories(incident);
  EXPECT_EQ(Denpex(cmd).code, 0);
}

TEST(CliHardening, DemoRefusesToDeleteAnIncidentUnlessForcedOrSimulated) {
  TempDir tmp;
  const fs::path incident = tmp.path() / "d" / "incident";
  fs::create_directories(incident / "node-a");
  std::ofstream(incident / "node-a" / "real.log") << "a real incident's log\n";
  const std::string cmd = "demo --out " + (tmp.path() / "d").string();
  CmdResult r = Denpex(cmd);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(incident / "node-a" / "real.log"));
  ASSERT_EQ(Denpex(cmd + " --force").code, 0);
  EXPECT_FALSE(fs::exists(incident / "node-a" / "real.log"));
  EXPECT_EQ(Denpex(cmd).code, 0) << "the demo's own incident is replaced when it runs again";
}

TEST(CliHardening, OutputsAreRegularFilesOrStandardOutput) {
  TempDir tmp;
  const fs::path out = tmp.path() / "run";
  ASSERT_EQ(Denpex("simulate " + Scenario("smoke/sigkill_1024_debug.textproto") + " --out " + out.string() + " --seed 3").code, 0);
  const std::string diagnose = "diagnose " + (out / "incident").string() + " --threads 2 --json ";
  struct stat st;
  // A device: refused before the diagnosis, and it stays a device.
  for (const char* dev : {"/dev/null", "/dev/full"}) {
    const CmdResult r = Denpex(diagnose + dev);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("character device"), std::string::npos) << r.output;
    ASSERT_EQ(::lstat(dev, &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << dev;
  }
  // A FIFO: refused (opening it would block), and it stays one.
  const fs::path fifo = tmp.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(Denpex(diagnose + fifo.string()).code, 2);
  EXPECT_TRUE(fs::is_fifo(fifo));
  // A missing parent directory is named, not created.
  CmdResult r = Denpex(diagnose + (tmp.path() / "new" / "d.json").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find((tmp.path() / "new").string()), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(tmp.path() / "new"));
  // A symlink planted at the old temporary name, into the incident: never followed.
  const auto before = Snapshot(out / "incident");
  fs::path victim;
  for (const auto& e : fs::recursive_directory_iterator(out / "incident")) {
    if (e.is_regular_file()) victim = e.path();
  }
  ASSERT_FALSE(victim.empty());
  fs::create_symlink(victim, tmp.path() / "d.json.tmp");
  r = Denpex(diagnose + (tmp.path() / "d.json").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(Snapshot(out / "incident"), before);
  // `-`: the JSON alone on standard output.
  r = Denpex(diagnose + "-");
  ASSERT_EQ(r.code, 0) << r.output;
  denpex::v1::Diagnosis d;
  EXPECT_TRUE(denpex::proto::FromJson(r.output, "stdout", &d).ok()) << r.output.substr(0, 300);
  // checkpoint verify refuses to write into what it verifies, by inode, through a link.
  fs::create_directories(tmp.path() / "ckpt");
  fs::create_directory_symlink(tmp.path() / "ckpt", tmp.path() / "alias");
  r = Denpex("checkpoint verify " + (tmp.path() / "ckpt").string() + " --json " + (tmp.path() / "alias" / "v.json").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(fs::is_empty(tmp.path() / "ckpt"));
}

TEST(CliHardening, InvalidUtf8InAScenarioIsAnErrorWithItsLine) {
  TempDir tmp;
  const fs::path bad = tmp.path() / "latin1.textproto";
  std::ofstream(bad, std::ios::binary) << "name: \"latin1\"\ndescription: \"caf\xe9\"\n";
  const CmdResult r = Denpex("simulate " + bad.string() + " --out " + (tmp.path() / "o").string());
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(bad.string() + ":2:18:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("UTF-8"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libprotobuf"), std::string::npos) << r.output;
}

namespace {

// `denpex preflight --from`: exit 0 when every node passes, 5 naming the failed ones (text, JSON
// and the exclude file), 2 without --from, 3 for a folder where nothing is recognised.
TEST(Cli, PreflightExitsFiveAndWritesTheExcludeList) {
  TempDir tmp;
  const fs::path data = fs::path(DENPEX_SOURCE_DIR) / "tests/data/preflight";
  const fs::path dir = tmp.path() / "collected";
  for (const char* n : {"gpu-0001", "gpu-0002", "gpu-0003"}) {
    fs::create_directories(dir / n);
    fs::copy_file(data / "ibstat/h100_ndr_all_active.txt", dir / n / "ibstat.txt");
  }
  CmdResult r = Denpex("preflight --from " + dir.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("PREFLIGHT PASS: 3 nodes, 0 failed"), std::string::npos) << r.output;

  fs::create_directories(dir / "gpu-0004");
  std::ifstream in(data / "ibstat/h100_ndr_all_active.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::string slow = text.str();
  slow.replace(slow.find("Rate: 400"), 9, "Rate: 200");  // mlx5_0's port at half rate
  std::ofstream(dir / "gpu-0004" / "ibstat.txt") << slow;
  const fs::path json = tmp.path() / "preflight.json", exclude = tmp.path() / "exclude.txt";
  r = Denpex("preflight --from " + dir.string() + " --json " + json.string() + " --exclude-file " +
             exclude.string());
  EXPECT_EQ(r.code, 5) << r.output;
  EXPECT_NE(r.output.find("FAIL gpu-0004 IB_PORT_SLOW: port mlx5_0/1 runs at 200 Gb/s"),
            std::string::npos)
      << r.output;
  std::ifstream excluded(exclude);
  std::string list;
  std::getline(excluded, list);
  EXPECT_EQ(list, "gpu-0004");
  std::ifstream report(json);
  std::stringstream body;
  body << report.rdbuf();
  EXPECT_NE(body.str().find("\"verdict\": \"PREFLIGHT_FAIL\""), std::string::npos) << body.str();

  EXPECT_EQ(Denpex("preflight").code, 2);
  fs::create_directories(tmp.path() / "empty" / "node");
  r = Denpex("preflight --from " + (tmp.path() / "empty").string());
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("no tool output recognised"), std::string::npos) << r.output;
}

}  // namespace

namespace {

// `denpex preflight --fabric`: what it cannot run is a usage error before anything is written
// (the probes themselves run in tests/run/fabric_e2e_test.cc).
TEST(Cli, PreflightFabricRefusesWhatItCannotRunBeforeWritingAnything) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "fabric";
  CmdResult r = Denpex("preflight --fabric " + dir.string() + " --nodes 'gpu-[0001-'");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a host list"), std::string::npos) << r.output;
  r = Denpex("preflight --fabric " + dir.string() +
             " --nodes 'gpu-[0001-0004]' --launcher torchrun --on 'ssh'");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("does not name {host}"), std::string::npos) << r.output;
  r = Denpex("preflight --fabric " + dir.string() +
             " --nodes 'gpu-[0001-2048]' --launcher torchrun --port 64999");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("needs ports up to 66022"), std::string::npos) << r.output;
  r = Denpex("preflight --fabric " + dir.string() + " --from " + dir.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace

namespace {

// Simulated clusters: `simulate --preflight` writes collected/ and the truth beside it, and
// `eval --preflight` scores the judgement of each against its truth.
TEST(Cli, PreflightScenariosAreSimulatedAndScored) {
  TempDir tmp;
  const std::string slow =
      (fs::path(DENPEX_SOURCE_DIR) / "scenarios/preflight/slow_node_256.textproto").string();
  CmdResult r =
      Denpex("simulate --preflight " + slow + " --out " + tmp.path().string() + " --seed 7");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::is_directory(tmp.path() / "collected"));
  EXPECT_TRUE(fs::exists(tmp.path() / "preflight_truth.json"));
  EXPECT_FALSE(fs::exists(tmp.path() / "collected" / "preflight_truth.json"));
  r = Denpex("preflight --from " + (tmp.path() / "collected").string());
  EXPECT_EQ(r.code, 5) << r.output;
  EXPECT_NE(r.output.find("BUSBW_LOW"), std::string::npos) << r.output;
  // A real collection is not replaced without --force.
  fs::remove(tmp.path() / "preflight_truth.json");
  EXPECT_EQ(Denpex("simulate --preflight " + slow + " --out " + tmp.path().string()).code, 2);

  r = Denpex("eval --preflight " + slow + " " +
             (fs::path(DENPEX_SOURCE_DIR) / "scenarios/preflight/healthy_256.textproto").string() +
             " --seeds 2 --jobs 2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| SLOW_NODE (slow_node_256) | 2 | 256 | 2/2 (100.0%) | 0 |"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| HEALTHY (healthy_256) | 2 | 256 | 2/2 (100.0%) | 0 |"),
            std::string::npos)
      << r.output;
  // An incident scenario is not a preflight scenario: the error names the file.
  r = Denpex("eval --preflight " + Scenario("smoke/sigkill_4096.textproto") + " --seeds 1");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("sigkill_4096.textproto"), std::string::npos) << r.output;
}

}  // namespace
