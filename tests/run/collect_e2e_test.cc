// `denpex collect --slurm-job` against the real Slurm of scripts/services.sh (issue #31): three
// jobs leave their lines in the daemons' logs — one that fails before ours, ours (a 4-rank DDP
// job under srun and `denpex run`, rank 1 SIGKILLed), one that fails after — and the collector
// gathers ours beside what `denpex run` wrote. Asserted: no line of another job is collected;
// the job's own lines and records are; `denpex diagnose` reads the directory and gives the
// answer it gives with the daemons' whole logs.
//
// It skips when PyTorch or Slurm is missing, unless DENPEX_REQUIRE_SERVICES=1 (CI).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collect/slurm_lines.h"
#include "denpex/proto/json_io.h"
#include "denpex/v1/diagnosis.pb.h"
#include "run_test_util.h"
#include "support/launchers.h"

namespace denpex::run_test {
namespace {

using namespace denpex::testing::launchers;  // NOLINT(google-build-using-namespace)
using cli::collect::JobIdsNamed;

constexpr auto kJobLimit = std::chrono::seconds(90);

// The value after `key` up to the end of its line or a quote.
std::string After(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return {};
  const std::size_t from = at + key.size();
  return text.substr(from, text.find_first_of("\"\n", from) - from);
}

v1::Diagnosis Diagnose(const fs::path& dir, const fs::path& scratch, const std::string& name) {
  const fs::path json = scratch / (name + ".json");
  const int rc = RunToEnd({DENPEX_BINARY, "diagnose", dir.string(), "--json", json.string()},
                          CleanEnv(), scratch / (name + ".txt"));
  EXPECT_EQ(rc, 0) << ReadFile(scratch / (name + ".txt"));
  v1::Diagnosis d;
  EXPECT_TRUE(proto::ReadJsonFile(json, &d).ok()) << json;
  return d;
}

// Another job's id, printed by its one task. A task that prints and then dies at once may lose
// the line: slurmstepd can end the step before it has sent the task's output on to srun (seen
// on a loopback Slurm: 0 of 3 lines arrived), so a script that kills itself waits first.
std::string OtherJob(const std::map<std::string, std::string>& env, const fs::path& out,
                     const std::string& script) {
  RunToEnd({"/usr/bin/srun", "--ntasks", "1", "sh", "-c", "echo id=$SLURM_JOB_ID; " + script}, env,
           out);
  return After(ReadFile(out), "id=");
}

TEST(CollectE2eSlurm, GathersTheFailedJobsEvidenceAndNoLineOfAnotherJob) {
  TempDir scratch;
  if (!HaveTorch(scratch.path()))
    SKIP_OR_FAIL("PyTorch is not installed (/usr/bin/python3 -c 'import torch')");
  const std::string conf = SlurmConf(scratch.path());
  if (conf.empty()) SKIP_OR_FAIL("no Slurm is running (SLURM_CONF, or scripts/services.sh start)");
  const auto env = CleanEnv({{"SLURM_CONF", conf}});
  const fs::path out = scratch.path() / "incident";

  const std::string before = OtherJob(env, scratch.path() / "before.out", "sleep 1; kill -9 $$");
  std::vector<std::string> argv = {
      "/usr/bin/srun",
      "--label",
      "--ntasks",
      "4",
      "--nodes",
      "1",
      "--kill-on-bad-exit=0",
      DENPEX_BINARY,
      "run",
      "--out",
      out.string(),
      "--no-nvidia-smi",
      "--",
      kPython,
      (fs::path(DENPEX_SOURCE_DIR) / "corpora/capture/train.py").string(),
      "--steps",
      "8",
      "--ckpt-every",
      "100",
      "--ckpt-dir",
      (scratch.path() / "checkpoints").string(),
      "--compute-s",
      "0.1",
      "--timeout-s",
      "60",
      "--fault",
      "sigkill",
      "--fault-rank",
      "1",
      "--fault-step",
      "4"};
  auto job_env = env;
  job_env["MASTER_ADDR"] = "127.0.0.1";
  job_env["MASTER_PORT"] = std::to_string(FreePort());
  Job srun(argv, job_env, scratch.path() / "srun.out", scratch.path());
  ASSERT_TRUE(srun.WaitUntil(std::chrono::steady_clock::now() + kJobLimit))
      << ReadFile(scratch.path() / "srun.out");
  const std::string after = OtherJob(env, scratch.path() / "after.out", "exit 7");
  std::string node;
  for (const auto& e : fs::directory_iterator(out)) node = e.path().filename().string();
  ASSERT_FALSE(node.empty()) << ReadFile(scratch.path() / "srun.out");
  const std::string job = After(ReadFile(out / node / "rank_0.task.json"), "\"SLURM_JOB_ID\": \"");
  ASSERT_FALSE(job.empty());
  ASSERT_FALSE(before.empty());
  ASSERT_FALSE(after.empty());
  ASSERT_NE(job, before);
  ASSERT_NE(job, after);

  const int rc = RunToEnd({DENPEX_BINARY, "collect", "--slurm-job", job, "--out", out.string()},
                          env, scratch.path() / "collect.out");
  const std::string said = ReadFile(scratch.path() / "collect.out");
  ASSERT_EQ(rc, 0) << said;

  // The daemons' lines: the job's, and none of another job.
  const std::string ctld = ReadFile(out / "slurmctld.log");
  const std::string slurmd = ReadFile(out / node / "slurmd.log");
  EXPECT_NE(ctld.find("JobId=" + job + " NodeList="), std::string::npos) << ctld;
  EXPECT_NE(ctld.find("_job_complete: JobId=" + job + " "), std::string::npos) << ctld;
  EXPECT_NE(slurmd.find("launch task StepId=" + job + ".0 "), std::string::npos) << slurmd;
  EXPECT_NE(slurmd.find("[" + job + ".0] "), std::string::npos) << slurmd;
  for (const std::string& text : {ctld, slurmd}) {
    for (const std::string& line : Lines(text)) {
      for (const std::string& other : {before, after}) {
        for (const std::string& named :
             {"JobId=" + other + " ", "StepId=" + other + ".", "[" + other + ".", "job " + other}) {
          EXPECT_EQ(line.find(named), std::string::npos) << "another job's line: " << line;
        }
      }
      const std::vector<std::string> ids = JobIdsNamed(line);
      EXPECT_TRUE(ids.empty() || ids == std::vector<std::string>{job}) << line;
    }
  }
  // The job's record, while the controller still knows it (MinJobAge 60 s).
  EXPECT_NE(ReadFile(out / ("slurm-job-" + job + ".scontrol.txt")).find("JobId=" + job + " "),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("  sacct: "), std::string::npos) << "sacct is tried and its status said";

  // The same answer as from the daemons' whole logs beside the wrapper's output.
  const fs::path full = scratch.path() / "full";
  fs::create_directories(full);
  fs::copy(out, full, fs::copy_options::recursive);
  fs::remove(full / "slurmctld.log");
  fs::remove(full / node / "slurmd.log");
  for (const auto& e : fs::directory_iterator(full)) {
    if (e.path().filename().string().rfind("slurm-job-", 0) == 0) fs::remove(e.path());
  }
  const fs::path logs = fs::path(conf).parent_path().parent_path() / "log";
  fs::copy_file(logs / "slurmctld.log", full / "slurmctld.log");
  fs::copy_file(logs / "slurmd.log", full / node / "slurmd.log",
                fs::copy_options::overwrite_existing);
  const v1::Diagnosis collected = Diagnose(out, scratch.path(), "collected");
  const v1::Diagnosis whole = Diagnose(full, scratch.path(), "whole");
  EXPECT_EQ(collected.verdict(), v1::VERDICT_DIAGNOSED)
      << ReadFile(scratch.path() / "collected.txt");
  EXPECT_EQ(collected.initiator().rank(), 1) << ReadFile(scratch.path() / "collected.txt");
  EXPECT_EQ(collected.initiator().node(), node);
  EXPECT_EQ(collected.verdict(), whole.verdict()) << ReadFile(scratch.path() / "whole.txt");
  EXPECT_EQ(collected.initiator().rank(), whole.initiator().rank());
  EXPECT_EQ(collected.initiator().node(), whole.initiator().node());
  EXPECT_EQ(collected.initiator().failure_class(), whole.initiator().failure_class());
  EXPECT_EQ(collected.owner(), whole.owner());
}

}  // namespace
}  // namespace denpex::run_test
