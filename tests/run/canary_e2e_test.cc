// `denpex canary` on real jobs (issue 27): a DDP job (corpora/capture/train.py, gloo on CPU, two
// ranks under real torchrun, a checkpoint every 5 steps) fails with rank 1 SIGKILLed at step 13;
// `denpex diagnose --json` names it and says to resume from step 10. The canary then runs the
// same command resumed from that checkpoint ({checkpoint}) for 6 steps: with the fault removed it
// is a go (exit 0, every check passed); with the fault still injected it is a no-go (exit 5) that
// names the recurrence; with a rank still slow, a no-go on the step time. Every record lands in
// the history store.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "denpex/proto/json_io.h"
#include "denpex/v1/canary.pb.h"
#include "denpex/v1/diagnosis.pb.h"
#include "support/launchers.h"
#include "support/temp_dir.h"

namespace denpex {
namespace {
namespace fs = std::filesystem;
using namespace denpex::testing::launchers;  // NOLINT(google-build-using-namespace)

constexpr auto kLimit = std::chrono::seconds(240);  // a slow, busy CI machine included

// torchrun with two local ranks running train.py with `train` after its defaults here.
std::vector<std::string> Torchrun(const std::vector<std::string>& train) {
  std::vector<std::string> argv = {
      kPython,
      "-m",
      "torch.distributed.run",
      "--nnodes",
      "1",
      "--nproc_per_node",
      "2",
      "--master_addr",
      "127.0.0.1",
      "--master_port",
      std::to_string(FreePort()),
      "--redirects",
      "2",
      "--tee",
      "2",
      "--monitor_interval",
      "0.5",
      (fs::path(DENPEX_SOURCE_DIR) / "corpora/capture/train.py").string(),
      "--ckpt-every",
      "5",
      "--compute-s",
      "0.1",
      "--timeout-s",
      "10"};
  argv.insert(argv.end(), train.begin(), train.end());
  return argv;
}

const std::vector<std::string> kFault = {"--fault", "sigkill",      "--fault-rank",
                                         "1",       "--fault-step", "13"};

// Runs argv (a denpex command) to its end; its exit code, or -1.
int Denpex(const std::vector<std::string>& argv, const fs::path& output, const fs::path& cwd) {
  Job job(argv, CleanEnv(), output, cwd);
  if (!job.WaitUntil(std::chrono::steady_clock::now() + kLimit)) return -1;
  return WIFEXITED(job.status()) ? WEXITSTATUS(job.status()) : -1;
}

// The canary of the failed run in `scratch`, with `train` (the fault or not) after the resume.
int Canary(const fs::path& scratch, const std::string& name, const std::vector<std::string>& train,
           v1::CanaryReport* report) {
  std::vector<std::string> argv = {
      DENPEX_BINARY, "canary", "--diagnosis", (scratch / "diagnosis.json").string(), "--incident",
      (scratch / "incident").string(), "--out", (scratch / name).string(), "--steps", "6",
      // gloo over loopback on a machine whose cores other jobs
      // share: a healthy step varies by up to ~2x; the fault
      // here is no slowdown
      "--step-time-tolerance", "1.0", "--json", (scratch / (name + ".json")).string(), "--history",
      (scratch / "history.jsonl").string(), "--"};
  std::vector<std::string> job = {"--steps",           "100",      "--ckpt-dir",
                                  "{out}/checkpoints", "--resume", "{checkpoint}"};
  job.insert(job.end(), train.begin(), train.end());
  for (const std::string& a : Torchrun(job)) argv.push_back(a);
  const int rc = Denpex(argv, scratch / (name + ".out"), scratch);
  EXPECT_TRUE(proto::ReadJsonFile(scratch / (name + ".json"), report).ok())
      << ReadAll(scratch / (name + ".out"));
  return rc;
}

const v1::CanaryCheck* Check(const v1::CanaryReport& r, const std::string& name) {
  for (const v1::CanaryCheck& c : r.checks()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

TEST(CanaryE2eTorchrun, GoOnTheFixedJobAndNoGoNamingTheRecurrenceWhenTheFaultIsStillThere) {
  denpex::testing::TempDir scratch;
  if (!HaveTorch(scratch.path()))
    SKIP_OR_FAIL("PyTorch is not installed (/usr/bin/python3 -c 'import torch')");
  const fs::path incident = scratch.path() / "incident";
  fs::create_directories(incident);

  // The failed run: rank 1 SIGKILLed at step 13; checkpoints of steps 5 and 10 in the incident.
  std::vector<std::string> failed = {"--steps", "40", "--ckpt-dir",
                                     (incident / "checkpoints").string()};
  failed.insert(failed.end(), kFault.begin(), kFault.end());
  {
    Job job(Torchrun(failed), CleanEnv(), incident / "train.log", scratch.path());
    ASSERT_TRUE(job.WaitUntil(std::chrono::steady_clock::now() + kLimit)) << "torchrun hung";
  }
  ASSERT_EQ(Denpex({DENPEX_BINARY, "diagnose", incident.string(), "--json",
                    (scratch.path() / "diagnosis.json").string()},
                   scratch.path() / "diagnose.out", scratch.path()),
            0)
      << ReadAll(scratch.path() / "diagnose.out");
  v1::Diagnosis d;
  ASSERT_TRUE(proto::ReadJsonFile(scratch.path() / "diagnosis.json", &d).ok());
  ASSERT_EQ(d.initiator().rank(), 1) << ReadAll(incident / "train.log");
  ASSERT_EQ(d.checkpoint().decision(), v1::CHECKPOINT_DECISION_RESUME);
  ASSERT_EQ(d.checkpoint().step(), 10);

  // The fault removed: go, resumed at step 11, every rank to step 16.
  v1::CanaryReport go;
  EXPECT_EQ(Canary(scratch.path(), "canary-fixed", {}, &go), 0)
      << ReadAll(scratch.path() / "canary-fixed.out");
  EXPECT_EQ(go.verdict(), v1::CANARY_GO) << ReadAll(scratch.path() / "canary-fixed.out");
  EXPECT_EQ(go.resume_step(), 10);
  EXPECT_EQ(go.checkpoint(), (incident / "checkpoints/step_10.pt").string());
  ASSERT_EQ(go.checks_size(), 5);
  for (const v1::CanaryCheck& c : go.checks())
    EXPECT_EQ(c.result(), v1::CANARY_CHECK_PASS) << c.name() << ": " << c.detail();
  EXPECT_EQ(Check(go, "resumed")->canary_value(), 11);
  EXPECT_GE(Check(go, "steps_reached")->canary_value(), 16);
  EXPECT_NE(go.ended().find("stopped after every rank reached step 16"), std::string::npos);
  std::printf("%s", ReadAll(scratch.path() / "canary-fixed.out").c_str());

  // The fault still there: no-go; rank 1 killed again at step 13 is the recurrence.
  v1::CanaryReport no_go;
  EXPECT_EQ(Canary(scratch.path(), "canary-faulty", kFault, &no_go), 5)
      << ReadAll(scratch.path() / "canary-faulty.out");
  EXPECT_EQ(no_go.verdict(), v1::CANARY_NO_GO);
  ASSERT_NE(Check(no_go, "failure"), nullptr);
  EXPECT_EQ(Check(no_go, "failure")->result(), v1::CANARY_CHECK_FAIL);
  EXPECT_NE(Check(no_go, "failure")->detail().find("signature recurred: SIGNAL_KILL of rank 1"),
            std::string::npos)
      << Check(no_go, "failure")->detail();
  EXPECT_FALSE(Check(no_go, "failure")->canary_evidence().empty());
  EXPECT_EQ(Check(no_go, "steps_reached")->result(), v1::CANARY_CHECK_FAIL);
  ASSERT_GE(no_go.failures_size(), 1);
  EXPECT_EQ(no_go.failures(0).initiator().rank(), 1);
  std::printf("%s", ReadAll(scratch.path() / "canary-faulty.out").c_str());

  // A rank that is still slow (0.3 s more a step from the first step on): every rank reaches
  // its steps, but at about 4 times the failed run's step time, past even a 100% tolerance.
  v1::CanaryReport slow;
  EXPECT_EQ(
      Canary(scratch.path(), "canary-slow",
             {"--fault", "slow", "--fault-rank", "1", "--fault-step", "11", "--slow-s", "0.3"},
             &slow),
      5)
      << ReadAll(scratch.path() / "canary-slow.out");
  EXPECT_EQ(slow.verdict(), v1::CANARY_NO_GO);
  ASSERT_NE(Check(slow, "step_time"), nullptr);
  EXPECT_EQ(Check(slow, "step_time")->result(), v1::CANARY_CHECK_FAIL)
      << Check(slow, "step_time")->detail();
  EXPECT_GT(Check(slow, "step_time")->canary_value(), Check(slow, "step_time")->limit());
  EXPECT_EQ(Check(slow, "steps_reached")->result(), v1::CANARY_CHECK_PASS);
  std::printf("%s", ReadAll(scratch.path() / "canary-slow.out").c_str());

  // Every result in the history store, as canary records.
  const std::string history = ReadAll(scratch.path() / "history.jsonl");
  EXPECT_NE(history.find("\"verdict\":\"CANARY_GO\""), std::string::npos) << history;
  EXPECT_NE(history.find("\"verdict\":\"CANARY_NO_GO\""), std::string::npos) << history;
}

}  // namespace
}  // namespace denpex
