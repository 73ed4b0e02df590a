// The srun launcher with Slurm around it, and the torchrun --log-dir layout, on small jobs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace testing_util;

constexpr const char* kSrun = R"(name: "srun_small"
seed: 3
job { nodes: 2 tp: 4 pp: 2 }
launcher: LAUNCHER_SRUN
training { warmup_steps: 3 }
faults { kind: FAULT_KIND_SIGKILL rank: 5 }
)";

std::vector<std::string> Unlabelled(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  static const std::regex kLabel("^ ?[0-9]+: .*");
  for (const std::string& l : lines) {
    if (!std::regex_match(l, kLabel)) out.push_back(l);
  }
  return out;
}

void ExpectEvidenceMatchesFiles(const fs::path& out, const v1::Truth& truth) {
  ASSERT_GT(truth.evidence_size(), 0);
  for (const v1::Evidence& e : truth.evidence()) {
    const auto lines = ReadLines(out / "incident" / e.file());
    ASSERT_LE(static_cast<std::size_t>(e.line()), lines.size()) << e.file();
    EXPECT_EQ(lines[static_cast<std::size_t>(e.line() - 1)], e.text());
  }
}

TEST(Srun, LeavesOnlyTheCombinedOutputAndTheControllerLog) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kSrun), out);
  const auto tree = ReadTree(out / "incident");
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_TRUE(tree.count("slurm-4242001.out"));
  EXPECT_THAT(tree.at("slurmctld.log"), StartsWith("[2026-03-02T09:00:00."));
  EXPECT_THAT(tree.at("slurmctld.log"),
              HasSubstr("] sched: Allocate JobId=4242001 NodeList=gpu-[0001-0002] #CPUs=224 "
                        "Partition=gpu\n"));
}

// truth.job.launcher names the launcher (the evaluation groups scores by it).
TEST(Srun, TruthNamesTheLauncher) {
  const fs::path srun = FreshDir("_srun"), torchrun = FreshDir("_torchrun");
  EXPECT_EQ(MustSimulate(MustParse(kSrun), srun).truth.job().launcher(), "srun");
  EXPECT_EQ(MustSimulate(MustParse(kSrun, {"launcher=LAUNCHER_TORCHRUN",
                                           "layout=LAYOUT_PER_RANK_FILES"}),
                         torchrun)
                .truth.job()
                .launcher(),
            "torchrun");
}

TEST(Srun, LabelsEveryTaskLineWithItsPaddedTaskId) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kSrun, {"faults[0].kind=FAULT_KIND_EXCEPTION"}), out);
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  EXPECT_THAT(text, StartsWith(" 5: [rank5]: Traceback (most recent call last):\n"));
  EXPECT_THAT(text, HasSubstr("\n12: [rank12]:[E302 "));
}

TEST(Srun, KillOnBadExitEndsTheStepRightAfterTheKilledTask) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kSrun, {"slurm.kill_on_bad_exit=true"}), out);
  const auto lines = Unlabelled(ReadLines(out / "incident/slurm-4242001.out"));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "srun: error: gpu-0001: task 5: Killed");
  EXPECT_EQ(lines[1], "srun: launch/slurm: _step_signal: Terminating StepId=4242001.0");
  EXPECT_THAT(lines[2], StartsWith("slurmstepd: error: *** STEP 4242001.0 ON gpu-0001 "
                                   "CANCELLED AT 2026-03-02T09:00:"));
  EXPECT_THAT(ReadAll(out / "incident/slurm-4242001.out"),
              HasSubstr("srun: error: gpu-0002: tasks 8-15: Terminated\n"));
  EXPECT_THAT(ReadAll(out / "incident/slurm-4242001.out"), Not(HasSubstr("Watchdog caught")));
  EXPECT_EQ(r.truth.evidence(0).text(), "srun: error: gpu-0001: task 5: Killed");
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Srun, WithoutKillOnBadExitTheOthersAbortOnTheirWatchdogs) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kSrun), out);
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  EXPECT_THAT(text, HasSubstr("Watchdog caught collective operation timeout"));
  EXPECT_THAT(text, HasSubstr(": Aborted\n"));
  EXPECT_THAT(text, Not(HasSubstr("Terminating StepId")));
}

TEST(Srun, Slurm2205WordsTheStepTerminationDifferently) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kSrun, {"slurm.kill_on_bad_exit=true", "format.slurm=22.05"}), out);
  EXPECT_THAT(ReadAll(out / "incident/slurm-4242001.out"),
              HasSubstr("\nsrun: Terminating StepId=4242001.0\n"));
}

TEST(Srun, TimeLimitCancelsTheJobAndTruthNamesTheScheduler) {
  const fs::path out = FreshDir();
  const SimulateResult r =
      MustSimulate(MustParse(kSrun, {"faults[0].kind=FAULT_KIND_TIME_LIMIT"}), out);
  EXPECT_EQ(r.truth.owner(), v1::OWNER_SCHEDULER);
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_TIME_LIMIT);
  EXPECT_EQ(r.truth.initiator().rank(), -1);
  EXPECT_EQ(r.truth.cascade().secondary_ranks_size(), 16);
  ASSERT_EQ(r.truth.evidence_size(), 2);
  EXPECT_THAT(r.truth.evidence(0).text(), HasSubstr("] Time limit exhausted for JobId=4242001"));
  EXPECT_THAT(r.truth.evidence(1).text(),
              testing::MatchesRegex("slurmstepd: error: \\*\\*\\* JOB 4242001 ON gpu-0001 "
                                    "CANCELLED AT 2026-03-02T09:00:[0-9]{2} DUE TO TIME LIMIT "
                                    "\\*\\*\\*"));
  EXPECT_THAT(
      ReadAll(out / "incident/slurm-4242001.out"),
      HasSubstr("srun: Job step aborted: Waiting up to 32 seconds for job step to finish."));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// slurmd of node 1 stops answering while the host trains on: the controller's view is a node
// failure, but the trainer's iteration lines go on past its first "not responding", the node's
// tasks get neither a slurmstepd nor an srun line, and its slurmd answers again later.
TEST(Srun, SilentSlurmdIsSetDownWhileItsRanksTrainOn) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kSrun, {"faults[0].kind=FAULT_KIND_SLURMD_UNRESPONSIVE", "faults[0].node=1"}), out);
  EXPECT_EQ(r.truth.owner(), v1::OWNER_SCHEDULER);
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_SCHEDULER_NODE_FAILURE);
  EXPECT_EQ(r.truth.initiator().node(), "gpu-0002");
  EXPECT_EQ(r.truth.cascade().secondary_ranks_size(), 16);  // the scheduler ended every rank
  const std::string ctld = ReadAll(out / "incident/slurmctld.log");
  const auto silent = ctld.find("] error: Nodes gpu-0002 not responding\n");
  const auto down = ctld.find("] error: Nodes gpu-0002 not responding, setting DOWN\n");
  const auto kill = ctld.find("] Killing JobId=4242001 on failed node gpu-0002\n");
  const auto back = ctld.find("] Node gpu-0002 now responding\n");
  ASSERT_NE(silent, std::string::npos);
  EXPECT_LT(silent, down);
  EXPECT_LT(down, kill);
  EXPECT_LT(kill, back);
  EXPECT_NE(back, std::string::npos);
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  EXPECT_THAT(text, HasSubstr("srun: error: Node failure on gpu-0002\n"));
  EXPECT_THAT(text, Not(HasSubstr(" ON gpu-0002 CANCELLED AT")));
  EXPECT_THAT(text, Not(HasSubstr("srun: error: gpu-0002:")));
  EXPECT_THAT(text, HasSubstr("srun: error: gpu-0001: tasks 0-7: Terminated\n"));
  // Progress went on: many more iteration lines than the warm-up steps before the fault.
  std::size_t iterations = 0;
  for (const std::string& line : ReadLines(out / "incident/slurm-4242001.out")) {
    iterations += line.find("] iteration ") != std::string::npos ? 1 : 0;
  }
  EXPECT_GT(iterations, 50u);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// sbatch --requeue: the controller requeues instead of killing, the job starts again without
// the failed node, and the next run appends to the same output from its checkpoint.
TEST(Srun, RequeuedJobAppendsItsNextRunToTheSameOutput) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kSrun, {"faults[0].kind=FAULT_KIND_NODE_LOSS", "faults[0].node=0", "slurm.requeue=true"}),
      out);
  const std::string ctld = ReadAll(out / "incident/slurmctld.log");
  EXPECT_THAT(ctld, HasSubstr("] requeue JobId=4242001 due to failure of node gpu-0001\n"));
  EXPECT_THAT(ctld, Not(HasSubstr("Killing JobId")));
  EXPECT_THAT(ctld, Not(HasSubstr("_job_complete")));
  EXPECT_THAT(ctld, HasSubstr("] sched: Allocate JobId=4242001 NodeList=gpu-[0002-0003] #CPUs=224 Partition=gpu\n"));
  const auto lines = ReadLines(out / "incident/slurm-4242001.out");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=0 SLURM_JOB_NODELIST=gpu-[0001-0002]");
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  const auto failure = text.find("srun: error: Node failure on gpu-0001\n");
  const auto banner = text.find("\nSLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=1 SLURM_JOB_NODELIST=gpu-[0002-0003]\n");
  const auto resumed = text.find("\n 0:  successfully loaded checkpoint from /checkpoints/4242001 at iteration ");
  ASSERT_NE(failure, std::string::npos);
  EXPECT_LT(failure, banner);
  EXPECT_LT(banner, resumed);
  EXPECT_NE(resumed, std::string::npos);
  EXPECT_EQ(r.truth.owner(), v1::OWNER_HOST);
  EXPECT_EQ(r.truth.recovery().preconditions(1).action(), "verify_requeued_run");
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// Open MPI's mpirun: every line tagged "[1,R]<stdout>:" or "<stderr>:" in mpirun.out; the
// first failure aborts the job with its block naming the rank, the others print nothing more.
TEST(Mpirun, FirstNonZeroExitAbortsTheJobAndNamesTheProcess) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kSrun, {"launcher=LAUNCHER_MPIRUN", "layout=LAYOUT_MPIRUN_OUT", "faults[0].kind=FAULT_KIND_EXCEPTION"}),
      out);
  const auto tree = ReadTree(out / "incident");
  ASSERT_EQ(tree.size(), 1u);
  const std::string text = tree.at("mpirun.out");
  // --report-bindings: each node's daemon names its host and ranks before any rank's output.
  EXPECT_THAT(text, testing::ContainsRegex("^\\[gpu-0001:[0-9]{5}\\] MCW rank 0 is not bound \\(or bound to all available processors\\)\n"));
  EXPECT_THAT(text, testing::ContainsRegex("\n\\[gpu-0002:[0-9]{5}\\] MCW rank 15 is not bound [^\n]*\n\\[1,5\\]<stderr>:\\[rank5\\]: Traceback \\(most recent call last\\):\n"));
  EXPECT_THAT(text, HasSubstr("\nPrimary job  terminated normally, but 1 process returned\n"
                              "a non-zero exit code. Per user-direction, the job has been aborted.\n"));
  EXPECT_THAT(text, HasSubstr("\nmpirun detected that one or more processes exited with non-zero status, thus "
                              "causing\nthe job to be terminated. The first process to do so was:\n\n"
                              "  Process name: [["));
  EXPECT_THAT(text, HasSubstr(",1],5]\n  Exit code:    1\n"));
  EXPECT_THAT(text, Not(HasSubstr("Watchdog caught")));  // aborted long before any timeout
  EXPECT_EQ(r.truth.job().launcher(), "mpirun");
  ASSERT_EQ(r.truth.evidence_size(), 2);
  EXPECT_THAT(r.truth.evidence(1).text(), testing::MatchesRegex("  Process name: \\[\\[[0-9]+,1\\],5\\]"));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Mpirun, SignalDeathIsNoticedWithRankPidAndNode) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kSrun, {"launcher=LAUNCHER_MPIRUN"}), out);
  const std::string text = ReadAll(out / "incident/mpirun.out");
  EXPECT_THAT(text, testing::ContainsRegex("\nmpirun noticed that process rank 5 with PID [0-9]+ on node gpu-0001 "
                                           "exited on signal 9 \\(Killed\\)\\.\n"));
  EXPECT_THAT(text, Not(HasSubstr("[1,5]<stdout>:")));  // its buffered stdout died with it
  EXPECT_THAT(r.truth.evidence(0).text(), StartsWith("mpirun noticed that process rank 5 "));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Mpirun, LostNodeIsALostDaemon) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kSrun, {"launcher=LAUNCHER_MPIRUN", "faults[0].kind=FAULT_KIND_NODE_LOSS", "faults[0].node=1"}), out);
  const std::string text = ReadAll(out / "incident/mpirun.out");
  EXPECT_THAT(text, HasSubstr("\nORTE has lost communication with a remote daemon.\n\n  HNP daemon   : [["));
  EXPECT_THAT(text, HasSubstr(",0],0] on node login-01\n  Remote daemon: [["));
  EXPECT_THAT(text, HasSubstr(",0],2] on node gpu-0002\n"));
  EXPECT_THAT(r.truth.evidence(0).text(), HasSubstr("Remote daemon: [["));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

// Open MPI 5 (PRRTE): a space after the tag, no "Primary job" block, the signal wrapped onto its
// own line, nspace process names, "PRTE has lost communication", PRRTE's binding lines.
TEST(Mpirun, OpenMpi5WritesPrrteShapes) {
  fs::path out = FreshDir();
  SimulateResult r = MustSimulate(
      MustParse(kSrun, {"launcher=LAUNCHER_MPIRUN", "bare_metal.open_mpi=5.0", "faults[0].kind=FAULT_KIND_EXCEPTION"}), out);
  std::string text = ReadAll(out / "incident/mpirun.out");
  EXPECT_THAT(text, testing::ContainsRegex("^\\[gpu-0001:[0-9]{5}\\] Rank 0 bound to package\\[0\\]\\[core:0-11\\]\n"));
  EXPECT_THAT(text, HasSubstr("\n[1,5]<stderr>: [rank5]: Traceback (most recent call last):\n"));
  EXPECT_THAT(text, Not(HasSubstr("Primary job")));
  EXPECT_THAT(text, testing::ContainsRegex("\nprterun detected that one or more processes exited with non-zero status,\n"
                                           "thus causing the job to be terminated. The first process to do so was:\n\n"
                                           "   Process name: \\[prterun-login-01-[0-9]+@1,5\\]\n   Exit code:    1\n"));
  EXPECT_THAT(r.truth.evidence(1).text(), StartsWith("   Process name: [prterun-login-01-"));
  ExpectEvidenceMatchesFiles(out, r.truth);

  out = FreshDir();
  r = MustSimulate(MustParse(kSrun, {"launcher=LAUNCHER_MPIRUN", "bare_metal.open_mpi=5.0"}), out);
  text = ReadAll(out / "incident/mpirun.out");
  EXPECT_THAT(text, testing::ContainsRegex("\nprterun noticed that process rank 5 with PID [0-9]+ on node gpu-0001 exited on\n"
                                           "signal 9 \\(Killed\\)\\.\n"));
  EXPECT_THAT(r.truth.evidence(0).text(), StartsWith("prterun noticed that process rank 5 "));
  ExpectEvidenceMatchesFiles(out, r.truth);

  out = FreshDir();
  r = MustSimulate(MustParse(kSrun, {"launcher=LAUNCHER_MPIRUN", "bare_metal.open_mpi=5.0", "bare_metal.report_bindings=false",
                                     "faults[0].kind=FAULT_KIND_NODE_LOSS", "faults[0].node=1"}), out);
  text = ReadAll(out / "incident/mpirun.out");
  EXPECT_THAT(text, Not(HasSubstr(" bound to ")));
  EXPECT_THAT(text, testing::ContainsRegex("\nPRTE has lost communication with a remote daemon.\n\n"
                                           "  HNP daemon   : \\[prterun-login-01-[0-9]+@0,0\\] on node login-01\n"
                                           "  Remote daemon: \\[prterun-login-01-[0-9]+@0,2\\] on node gpu-0002\n"));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Mpirun, UnknownOpenMpiReleaseIsRejectedNamingTheField) {
  const std::string overrides[] = {"launcher=LAUNCHER_MPIRUN", "bare_metal.open_mpi=3.0"};
  const auto s = ParseScenario(kSrun, "x.textproto", overrides);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("bare_metal.open_mpi"));
  EXPECT_THAT(s.status().message(), HasSubstr("\"5.0\""));
}

TEST(Srun, LostNodeIsSetDownByTheControllerWhichKillsTheJob) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kSrun, {"faults[0].kind=FAULT_KIND_NODE_LOSS", "format.slurm=22.05"}), out);
  EXPECT_EQ(r.truth.owner(), v1::OWNER_HOST);
  EXPECT_THAT(r.truth.evidence(0).text(),
              HasSubstr("error: Nodes gpu-0001 not responding, setting DOWN"));
  const std::string text = ReadAll(out / "incident/slurm-4242001.out");
  EXPECT_THAT(text, HasSubstr("srun: error: Node failure on gpu-0001\n"));
  EXPECT_THAT(text, HasSubstr(" DUE TO NODE FAILURE ***\n"));
  EXPECT_THAT(text, Not(HasSubstr("Watchdog caught")));  // 300 s < 600 s
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(LogDir, SplitsEachLocalRanksStdoutAndStderrUnderTheRunDirectory) {
  const fs::path out = FreshDir();
  const v1::Scenario s =
      MustParse(kSrun, {"launcher=LAUNCHER_TORCHRUN", "layout=LAYOUT_TORCHRUN_LOG_DIR",
                        "format.nccl_debug_info=true"});
  const SimulateResult r = MustSimulate(s, out);
  const auto tree = ReadTree(out / "incident");
  EXPECT_EQ(tree.size(), 2u + 2u * 16u);
  static const std::regex kPath(
      "gpu-000[12]/logs/4242001_[a-z0-9_]{8}/attempt_0/[0-7]/std(out|err)\\.log");
  for (const auto& [path, text] : tree) {
    if (path.ends_with("torchrun.log")) continue;
    EXPECT_TRUE(std::regex_match(path, kPath)) << path;
    if (path.ends_with("stdout.log") && !text.empty()) {
      EXPECT_THAT(text, HasSubstr("NCCL INFO"));
    }
    if (path.ends_with("stderr.log")) {
      EXPECT_THAT(text, Not(HasSubstr("NCCL INFO")));
    }
  }
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(Layouts, ALayoutThatDoesNotFitTheLauncherIsRejected) {
  auto s =
      ParseScenario(kSrun, "s.textproto", std::vector<std::string>{"layout=LAYOUT_PER_RANK_FILES"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("does not fit launcher LAUNCHER_SRUN"));
  EXPECT_THAT(s.status().message(), HasSubstr("--set layout=LAYOUT_PER_RANK_FILES"));
}

}  // namespace
}  // namespace denpex::sim

namespace denpex::sim {
namespace {

// The first lines of rank 12's watchdog block (it waits in a pipeline SEND) per profile.
std::vector<std::string> WatchdogHead(const std::string& torch, std::size_t n) {
  const fs::path out = testing_util::FreshDir(torch);
  testing_util::MustSimulate(
      testing_util::MustParse(kSrun, {"launcher=LAUNCHER_TORCHRUN", "format.torch=" + torch}), out);
  auto lines = testing_util::ReadLines(out / "incident/gpu-0002/rank_12.log");
  lines.resize(std::min(lines.size(), n));
  return lines;
}

// LOGLEVEL=INFO: the rendezvous result is one multi-line message. torch >= 2.2's glog-style
// formatter heads each of its lines (the blank last one too); 2.1's Python logging only the first.
TEST(Profiles, RendezvousResultLinesCarryTheHeaderOnlyInGlogStyle) {
  constexpr const char* kTorchrun = R"(name: "info"
seed: 3
job { nodes: 2 tp: 4 pp: 2 }
training { warmup_steps: 3 }
format { torchrun_info_logs: true }
faults { kind: FAULT_KIND_SIGKILL rank: 5 }
)";
  for (const char* torch : {"2.4", "2.1"}) {
    const fs::path out = FreshDir(torch);
    v1::Scenario s = MustParse(kTorchrun);
    s.mutable_format()->set_torch(torch);
    MustSimulate(s, out);
    const auto lines = ReadLines(out / "incident/gpu-0002/torchrun.log");
    const auto result = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("Rendezvous complete for workers. Result:") != std::string::npos;
    });
    ASSERT_NE(result, lines.end()) << torch;
    ASSERT_GE(lines.end() - result, 12) << torch;
    const std::string head = result->substr(0, result->find("] [default]") + 1);
    if (std::string_view(torch) == "2.4") {
      EXPECT_THAT(head, testing::EndsWith("torch/distributed/elastic/agent/server/api.py:525]"));
      EXPECT_EQ(result[1], head + "   restart_count=0");
      EXPECT_EQ(result[8], head + "   global_ranks=[8, 9, 10, 11, 12, 13, 14, 15]");
      EXPECT_EQ(result[11], head + " ");
    } else {
      EXPECT_EQ(result[1], "  restart_count=0");
      EXPECT_EQ(result[8], "  global_ranks=[8, 9, 10, 11, 12, 13, 14, 15]");
      EXPECT_EQ(result[11], "");
    }
  }
}

TEST(Profiles, Torch113PrintsOneInconsistencyLineAndNoNumel) {
  const auto l = WatchdogHead("1.13", 4);
  ASSERT_EQ(l.size(), 4u);
  EXPECT_THAT(l[0],
              testing::MatchesRegex(
                  "\\[E ProcessGroupNCCL.cpp:737\\] \\[Rank 1\\] Watchdog caught collective "
                  "operation timeout: WorkNCCL\\(SeqNum=8, OpType=SEND, Timeout\\(ms\\)=600000\\) "
                  "ran for [0-9]+ milliseconds before timing out\\."));
  EXPECT_THAT(l[1], testing::EndsWith(
                        "To avoid this inconsistency, we are taking the entire process down."));
  EXPECT_EQ(l[2], "terminate called after throwing an instance of 'std::runtime_error'");
  EXPECT_THAT(l[3], StartsWith("  what():  [Rank 1] Watchdog caught collective operation timeout"));
}

TEST(Profiles, Torch21NamesTheNcclWatchdogThreadWithoutRankPrefixes) {
  const auto l = WatchdogHead("2.1", 6);
  ASSERT_EQ(l.size(), 6u);
  EXPECT_THAT(l[0], StartsWith("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught"));
  EXPECT_EQ(l[2],
            "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire "
            "process down.");
  EXPECT_THAT(l[3], StartsWith("[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread "
                               "terminated with exception: [Rank 1] Watchdog caught"));
  EXPECT_EQ(l[4], "terminate called after throwing an instance of 'std::runtime_error'");
}

TEST(Profiles, Torch26UsesPgIdAndGuidPrefixes) {
  const auto l = WatchdogHead("2.6", 1);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_THAT(l[0],
              testing::MatchesRegex(
                  "\\[rank12\\]:\\[E302 09:10:[0-9.]+ ProcessGroupNCCL.cpp:616\\] \\[PG ID 9 PG "
                  "GUID 9\\(PIPELINE_MODEL_PARALLEL_GROUP\\) Rank 1\\] Watchdog caught .*"));
}

TEST(Profiles, OlderTorchrunAgentsLogThroughPythonLoggingFormats) {
  for (const auto& [torch, failed] :
       {std::pair<std::string, std::string>{
            "1.13", "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6)"},
        {"2.1", "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6)"}}) {
    const fs::path out = testing_util::FreshDir(torch);
    testing_util::MustSimulate(
        testing_util::MustParse(kSrun, {"launcher=LAUNCHER_TORCHRUN", "format.torch=" + torch}),
        out);
    EXPECT_THAT(testing_util::ReadAll(out / "incident/gpu-0002/torchrun.log"), HasSubstr(failed));
  }
}

}  // namespace
}  // namespace denpex::sim

namespace denpex::sim {
namespace {

TEST(NcclInfo, EachCommunicatorLogsItsRingChannelsOverNvlinkOrItsOwnNic) {
  const fs::path out = testing_util::FreshDir();
  testing_util::MustSimulate(
      testing_util::MustParse(kSrun, {"launcher=LAUNCHER_TORCHRUN", "format.nccl_debug_info=true",
                                      "format.nccl=2.18.5"}),
      out);
  const std::string log = testing_util::ReadAll(out / "incident/gpu-0001/rank_3.log");
  // rank 3: TP ring 3 -> 0 stays on the node; its PP peer (rank 11) is on gpu-0002, via mlx5_3.
  EXPECT_THAT(log, HasSubstr("gpu-0001:"));
  EXPECT_THAT(log, HasSubstr("] NCCL INFO Bootstrap : Using ib0:10.64.0.1<0>\n"));
  EXPECT_THAT(log, HasSubstr("] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2"));
  EXPECT_THAT(log, HasSubstr("] NCCL INFO Channel 00/0 : 3[3] -> 0[0] via P2P/IPC/read\n"));
  EXPECT_THAT(log,
              HasSubstr("] NCCL INFO Channel 15/0 : 0[3] -> 1[3] [send] via NET/IB/3/GDRDMA\n"));
}

}  // namespace
}  // namespace denpex::sim

namespace denpex::sim {
namespace {

TEST(Clocks, HeavyTailGivesAFewNodesOffsetsOfSecondsAndKeepsTheRestNormal) {
  const fs::path out = testing_util::FreshDir();
  // 64 nodes: the banner's time on each node is the agent's start (0.2-0.9 s) plus its offset.
  const v1::Scenario s = testing_util::MustParse(
      "job { nodes: 64 }\nclocks { heavy_tailed: true skew_max_ms: 5000 }\nseed: 4\n"
      "training { warmup_steps: 1 }\nfaults { kind: FAULT_KIND_SIGKILL rank: 0 }\n");
  testing_util::MustSimulate(s, out);
  int far = 0;
  for (int node = 1; node <= 64; ++node) {
    char host[16];
    std::snprintf(host, sizeof host, "gpu-%04d", node);
    const std::string first = testing_util::ReadLines(out / "incident" / host / "torchrun.log")[0];
    // W0302 hh:mm:ss.uuuuuu : seconds since 09:00:00 as printed.
    const double printed = (std::stod(first.substr(6, 2)) - 9) * 3600 +
                           std::stod(first.substr(9, 2)) * 60 + std::stod(first.substr(12, 9));
    if (printed < 0.2 - 0.21 || printed > 0.9 + 0.21) ++far;
  }
  EXPECT_GE(far, 1);
  EXPECT_LE(far, 12);
}

}  // namespace
}  // namespace denpex::sim
