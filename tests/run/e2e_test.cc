// `denpex run` under the real launchers (issue #5): a DDP job (corpora/capture/train.py, gloo
// on CPU, world size 4) whose rank is SIGKILLed, once under two torchrun agents on loopback
// and once under srun on the single-node Slurm of scripts/services.sh. For each: the layout
// the wrapper wrote and that the launcher still sees the rank die by SIGKILL; and that
// `denpex diagnose` on the wrapper's output alone names the killed rank and its node.
//
// They skip when PyTorch (/usr/bin/python3 with torch) or Slurm is missing, unless
// DENPEX_REQUIRE_SERVICES=1 (CI), where they fail instead.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "denpex/proto/json_io.h"
#include "denpex/v1/diagnosis.pb.h"
#include "run_test_util.h"
#include "support/launchers.h"

namespace denpex::run_test {
namespace {

using namespace denpex::testing::launchers;  // NOLINT(google-build-using-namespace)

constexpr auto kJobLimit = std::chrono::seconds(90);

// train.py: 8 steps of 0.1 s, `rank` SIGKILLs itself after the forward pass of step 4. Its
// peers fail at once (the kernel closes its sockets); the long collective timeout only keeps
// a slow start on a busy machine from failing the rendezvous.
std::vector<std::string> TrainCommand(const fs::path& scratch, int rank) {
  return {kPython,        (fs::path(DENPEX_SOURCE_DIR) / "corpora/capture/train.py").string(),
          "--steps",      "8",
          "--ckpt-every", "100",
          "--ckpt-dir",   (scratch / "checkpoints").string(),
          "--compute-s",  "0.1",
          "--timeout-s",  "60",
          "--fault",      "sigkill",
          "--fault-rank", std::to_string(rank),
          "--fault-step", "4"};
}

std::string Field(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return {};
  const std::size_t from = at + key.size() + 4;
  return json.substr(from, json.find_first_of(",\n", from) - from);
}

// What the wrapper must have written for a world of 4 with `killed` SIGKILLed.
void ExpectLayout(const fs::path& out, const std::map<int, std::string>& node_of_rank, int killed) {
  for (const auto& [rank, node] : node_of_rank) {
    const fs::path dir = out / node;
    const std::string stem = "rank_" + std::to_string(rank);
    ASSERT_TRUE(fs::exists(dir / (stem + ".log"))) << dir / (stem + ".log");
    ASSERT_TRUE(fs::exists(dir / (stem + ".errors.log")));
    const std::string task = ReadFile(dir / (stem + ".task.json"));
    EXPECT_EQ(Field(task, "rank"), std::to_string(rank));
    EXPECT_EQ(Field(task, "host"), "\"" + node + "\"");
    EXPECT_NE(Field(task, "end_time"), "null") << "every wrapper recorded its end";
    const bool kmsg_ok = Field(task.substr(task.find("\"kernel_log\"")), "status") == "\"ok\"";
    EXPECT_EQ(fs::exists(dir / "kernel.log"), kmsg_ok)
        << "kernel.log exists where /dev/kmsg is readable";
    if (rank == killed) {
      EXPECT_EQ(Field(task, "signal_name"), "\"SIGKILL\"") << task;
      const std::vector<std::string> notes = Payload(dir / (stem + ".log"), /*notes=*/true);
      ASSERT_FALSE(notes.empty());
      EXPECT_NE(notes.back().find("killed by signal 9 (SIGKILL)"), std::string::npos)
          << notes.back();
    } else {
      EXPECT_NE(Field(task, "state"), "\"running\"");
    }
  }
}

// `denpex diagnose` on the wrapper's output alone.
v1::Diagnosis Diagnose(const fs::path& out, const fs::path& scratch) {
  const fs::path json = scratch / "diagnosis.json";
  const int rc = RunToEnd({DENPEX_BINARY, "diagnose", out.string(), "--json", json.string()},
                          CleanEnv(), scratch / "diagnose.txt");
  EXPECT_EQ(rc, 0) << ReadFile(scratch / "diagnose.txt");
  v1::Diagnosis d;
  EXPECT_TRUE(proto::ReadJsonFile(json, &d).ok());
  return d;
}

void ExpectDiagnosed(const v1::Diagnosis& d, int rank, const std::string& node,
                     const fs::path& scratch) {
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << ReadFile(scratch / "diagnose.txt");
  EXPECT_EQ(d.initiator().rank(), rank) << ReadFile(scratch / "diagnose.txt");
  EXPECT_EQ(d.initiator().node(), node);
}

// One wrapped job, run at most once per test process (ctest runs each test in its own).
struct JobRun {
  std::string unavailable;  // why the job could not be run: the tests skip (or fail in CI)
  TempDir scratch;
  fs::path out;           // the wrapper's incident directory
  std::string node;       // the killed rank's node
  bool finished = false;  // the launcher ended before the time limit
};

// Two torchrun agents on loopback (node-a: ranks 0-1, node-b: ranks 2-3); rank 3 is killed.
const JobRun& TorchrunJob() {
  static JobRun run;
  static bool done = false;
  if (done) return run;
  done = true;
  if (!HaveTorch(run.scratch.path())) {
    run.unavailable = "PyTorch is not installed (/usr/bin/python3 -c 'import torch')";
    return run;
  }
  run.out = run.scratch.path() / "incident";
  run.node = "node-b";
  const int port = FreePort();
  std::vector<std::unique_ptr<Job>> agents;
  for (int node_rank = 0; node_rank < 2; ++node_rank) {
    const std::string node = node_rank == 0 ? "node-a" : "node-b";
    // torch 1.13 under Python 3.11 needs non-zero --redirects/--tee to start
    // (corpora/real/FORMATS-OBSERVED.md §9); they apply to the wrapper's stderr.
    std::vector<std::string> argv = {kPython,
                                     "-m",
                                     "torch.distributed.run",
                                     "--nnodes",
                                     "2",
                                     "--node_rank",
                                     std::to_string(node_rank),
                                     "--nproc_per_node",
                                     "2",
                                     "--master_addr",
                                     "127.0.0.1",
                                     "--master_port",
                                     std::to_string(port),
                                     "--redirects",
                                     "2",
                                     "--tee",
                                     "2",
                                     "--monitor_interval",
                                     "0.5",
                                     "--log_dir",
                                     (run.scratch.path() / "torchelastic" / node).string(),
                                     "--no_python",
                                     DENPEX_BINARY,
                                     "run",
                                     "--out",
                                     run.out.string(),
                                     "--host",
                                     node,
                                     "--no-nvidia-smi",
                                     "--"};
    for (const std::string& a : TrainCommand(run.scratch.path(), 3)) argv.push_back(a);
    agents.push_back(std::make_unique<Job>(
        argv, CleanEnv(), run.scratch.path() / ("agent-" + node + ".log"), run.scratch.path()));
  }
  const auto deadline = std::chrono::steady_clock::now() + kJobLimit;
  run.finished = true;
  for (auto& a : agents) run.finished = a->WaitUntil(deadline) && run.finished;
  return run;
}

// `srun --label` with 4 tasks on the Slurm of scripts/services.sh; task (rank) 1 is killed.
const JobRun& SrunJob() {
  static JobRun run;
  static bool done = false;
  if (done) return run;
  done = true;
  if (!HaveTorch(run.scratch.path())) {
    run.unavailable = "PyTorch is not installed (/usr/bin/python3 -c 'import torch')";
    return run;
  }
  const std::string conf = SlurmConf(run.scratch.path());
  if (conf.empty()) {
    run.unavailable = "no Slurm is running (SLURM_CONF, or scripts/services.sh start)";
    return run;
  }
  run.out = run.scratch.path() / "incident";
  fs::create_directories(run.out);
  std::vector<std::string> argv = {"/usr/bin/srun",
                                   "--label",
                                   "--ntasks",
                                   "4",
                                   "--nodes",
                                   "1",
                                   "--kill-on-bad-exit=0",
                                   DENPEX_BINARY,
                                   "run",
                                   "--out",
                                   run.out.string(),
                                   "--no-nvidia-smi",
                                   "--"};
  for (const std::string& a : TrainCommand(run.scratch.path(), 1)) argv.push_back(a);
  Job srun(argv,
           CleanEnv({{"SLURM_CONF", conf},
                     {"MASTER_ADDR", "127.0.0.1"},
                     {"MASTER_PORT", std::to_string(FreePort())}}),
           run.scratch.path() / "srun.out", run.scratch.path());
  run.finished = srun.WaitUntil(std::chrono::steady_clock::now() + kJobLimit);
  // The node is whatever host name the tasks saw (sn01 under scripts/services.sh).
  for (const auto& e : fs::directory_iterator(run.out)) run.node = e.path().filename().string();
  return run;
}

// Open MPI's mpirun (Debian's openmpi-bin) with 4 processes on this machine; rank 2 is killed.
// The ranks know themselves only by OMPI_COMM_WORLD_*; train.py reads them too.
const JobRun& MpirunJob() {
  static JobRun run;
  static bool done = false;
  if (done) return run;
  done = true;
  if (!HaveTorch(run.scratch.path())) {
    run.unavailable = "PyTorch is not installed (/usr/bin/python3 -c 'import torch')";
    return run;
  }
  if (!fs::exists("/usr/bin/mpirun")) {
    run.unavailable = "Open MPI's mpirun is not installed (apt-get install openmpi-bin)";
    return run;
  }
  run.out = run.scratch.path() / "incident";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  run.node = host;
  // As root mpirun refuses to start without --allow-run-as-root; --oversubscribe lets 4
  // processes share fewer cores. Open MPI SIGKILLs the survivors 1 s after its SIGTERM
  // (odls_base_sigkill_timeout): too soon for a wrapper to see its command stop and record it.
  std::vector<std::string> argv = {"/usr/bin/mpirun",
                                   "--allow-run-as-root",
                                   "--oversubscribe",
                                   "--mca",
                                   "odls_base_sigkill_timeout",
                                   "10",
                                   "-np",
                                   "4",
                                   "-x",
                                   "MASTER_ADDR=127.0.0.1",
                                   "-x",
                                   "MASTER_PORT=" + std::to_string(FreePort()),
                                   DENPEX_BINARY,
                                   "run",
                                   "--out",
                                   run.out.string(),
                                   "--no-nvidia-smi",
                                   "--"};
  for (const std::string& a : TrainCommand(run.scratch.path(), 2)) argv.push_back(a);
  Job mpirun(argv, CleanEnv(), run.scratch.path() / "mpirun.out", run.scratch.path());
  run.finished = mpirun.WaitUntil(std::chrono::steady_clock::now() + kJobLimit);
  return run;
}

TEST(RunE2eTorchrun, TheWrapperRecordsEveryRankAndTorchrunStillSeesTheKill) {
  const JobRun& run = TorchrunJob();
  if (!run.unavailable.empty()) SKIP_OR_FAIL(run.unavailable);
  ASSERT_TRUE(run.finished) << "the torchrun agents did not finish within " << kJobLimit.count()
                            << " s";
  ExpectLayout(run.out, {{0, "node-a"}, {1, "node-a"}, {2, "node-b"}, {3, "node-b"}}, 3);
  const std::string task = ReadFile(run.out / "node-b" / "rank_3.task.json");
  EXPECT_EQ(Field(task, "rank_source"), "\"RANK\"");
  EXPECT_EQ(Field(task, "local_rank"), "1");
  EXPECT_EQ(Field(task, "node_rank"), "1") << "torchrun's GROUP_RANK";
  EXPECT_EQ(Field(task, "world_size"), "4");
  // The wrapper died by its command's signal, so torchrun saw rank 3 die by SIGKILL.
  const std::string agent = ReadFile(run.scratch.path() / "agent-node-b.log");
  EXPECT_NE(agent.find("Signal 9 (SIGKILL) received by PID"), std::string::npos) << agent;
}

// The engine reads the `denpex run` layout (docs/log_formats.md §15): the RFC 3339 stamp
// prefix, the `[denpex-run]` exit lines as each rank's exit, `*.errors.log` as copies.
TEST(RunE2eTorchrun, DiagnoseNamesTheKilledRankFromTheWrappersOutput) {
  const JobRun& run = TorchrunJob();
  if (!run.unavailable.empty()) SKIP_OR_FAIL(run.unavailable);
  ASSERT_TRUE(run.finished);
  ExpectDiagnosed(Diagnose(run.out, run.scratch.path()), 3, "node-b", run.scratch.path());
}

TEST(RunE2eSrun, TheWrapperRecordsEveryTaskAndSrunStillSeesTheKill) {
  const JobRun& run = SrunJob();
  if (!run.unavailable.empty()) SKIP_OR_FAIL(run.unavailable);
  const std::string srun = ReadFile(run.scratch.path() / "srun.out");
  ASSERT_TRUE(run.finished) << "srun did not finish within " << kJobLimit.count() << " s:\n"
                            << srun;
  ASSERT_FALSE(run.node.empty()) << "the wrapper wrote nothing; srun said:\n" << srun;
  ExpectLayout(run.out, {{0, run.node}, {1, run.node}, {2, run.node}, {3, run.node}}, 1);
  const std::string task = ReadFile(run.out / run.node / "rank_3.task.json");
  EXPECT_EQ(Field(task, "rank_source"), "\"SLURM_PROCID\"");
  EXPECT_EQ(Field(task, "host_source"), "\"SLURMD_NODENAME\"") << task;
  EXPECT_EQ(Field(task, "local_rank"), "3");
  EXPECT_EQ(Field(task, "world_size"), "4");
  EXPECT_NE(srun.find("task 1: Killed"), std::string::npos) << "srun saw task 1 die by SIGKILL:\n"
                                                            << srun;
}

// The same under srun.
TEST(RunE2eSrun, DiagnoseNamesTheKilledRankFromTheWrappersOutput) {
  const JobRun& run = SrunJob();
  if (!run.unavailable.empty()) SKIP_OR_FAIL(run.unavailable);
  ASSERT_TRUE(run.finished);
  ExpectDiagnosed(Diagnose(run.out, run.scratch.path()), 1, run.node, run.scratch.path());
}

// scancel: slurmstepd signals every process of the step, so the command gets SIGTERM once,
// from Slurm, and the wrapper records it without sending it again. The command takes 0.5 s
// to stop, so that Slurm's signal reaches the wrapper while the command still runs (a
// wrapper that has already exited cannot record anything).
TEST(RunE2eSrun, ScancelReachesTheCommandOnceAndIsRecorded) {
  TempDir scratch;
  const std::string conf = SlurmConf(scratch.path());
  if (conf.empty()) SKIP_OR_FAIL("no Slurm is running (SLURM_CONF, or scripts/services.sh start)");
  const fs::path out = scratch.path() / "incident";
  const std::string name = "denpex-scancel-" + std::to_string(::getpid());
  Job srun(
      {"/usr/bin/srun", "--label", "--ntasks", "2", "--job-name", name, DENPEX_BINARY, "run",
       "--out", out.string(), "--no-nvidia-smi", "--", "/bin/sh", "-c",
       "trap 'echo got TERM; sleep 0.5; exit 5' TERM; echo ready; while :; do sleep 0.05; done"},
      CleanEnv({{"SLURM_CONF", conf}}), scratch.path() / "srun.out", scratch.path());
  std::string node;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(out, ec)) node = e.path().filename().string();
        return !node.empty() &&
               ReadFile(out / node / "rank_0.log").find(" ready\n") != std::string::npos &&
               ReadFile(out / node / "rank_1.log").find(" ready\n") != std::string::npos;
      },
      std::chrono::seconds(30)))
      << ReadFile(scratch.path() / "srun.out");
  ASSERT_EQ(RunToEnd({"/usr/bin/scancel", "--name", name}, CleanEnv({{"SLURM_CONF", conf}}),
                     scratch.path() / "scancel.out"),
            0);
  ASSERT_TRUE(srun.WaitUntil(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  const std::vector<std::string> lines = Payload(out / node / "rank_0.log", /*notes=*/true);
  int got = 0;
  for (const std::string& l : lines) got += l == "got TERM" ? 1 : 0;
  EXPECT_EQ(got, 1) << ReadFile(out / node / "rank_0.log");
  EXPECT_NE(ReadFile(out / node / "rank_0.log").find("[denpex-run] received SIGTERM from pid "),
            std::string::npos);
  EXPECT_NE(ReadFile(out / node / "rank_0.log")
                .find("; not forwarded: slurmstepd sends it to every process of the step"),
            std::string::npos);
  const std::string task = ReadFile(out / node / "rank_0.task.json");
  EXPECT_EQ(Field(task, "forwarded"), "false");
  EXPECT_EQ(Field(task, "code"), "5");
}

// `denpex preflight --collect` as a step of each node (here the one node of scripts/services.sh):
// the node's folder is named as the task's host, every tool is tried and its status printed (on
// this machine nvidia-smi and ibstat are not installed: "not found"), and `--from` then reads
// the folder (nothing there is a GPU or port finding: exit 3 names what it looked for).
TEST(RunE2eSrun, PreflightCollectWritesEachNodesFolderFromASlurmStep) {
  TempDir scratch;
  const std::string conf = SlurmConf(scratch.path());
  if (conf.empty()) SKIP_OR_FAIL("no Slurm is running (SLURM_CONF, or scripts/services.sh start)");
  const fs::path out = scratch.path() / "preflight";
  const int rc = RunToEnd({"/usr/bin/srun", "--nodes", "1", "--ntasks-per-node", "1", DENPEX_BINARY,
                           "preflight", "--collect", out.string()},
                          CleanEnv({{"SLURM_CONF", conf}}), scratch.path() / "srun.out");
  const std::string said = ReadFile(scratch.path() / "srun.out");
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out, ec))
    nodes.push_back(e.path().filename().string());
  ASSERT_EQ(nodes.size(), 1u) << said;
  EXPECT_NE(said.find("denpex preflight --collect: " + nodes[0] + " into "), std::string::npos)
      << said;
  for (const char* tool :
       {"  nvidia-smi -q: ", "  nvidia-smi topo -m: ", "  ibstat: ", "  dmesg: "}) {
    EXPECT_NE(said.find(tool), std::string::npos) << tool << "\n" << said;
  }
  // 0 when at least one tool ran (dmesg, where the kernel log may be read), else 3 saying so.
  if (rc != 0) {
    EXPECT_EQ(rc, 3) << said;
    EXPECT_NE(said.find("no tool ran on " + nodes[0]), std::string::npos) << said;
  }
  const int judged = RunToEnd({DENPEX_BINARY, "preflight", "--from", out.string()}, CleanEnv(),
                              scratch.path() / "from.out");
  const std::string from = ReadFile(scratch.path() / "from.out");
  EXPECT_TRUE(judged == 0 || judged == 5 || judged == 3) << from;
  if (judged == 3) {
    EXPECT_NE(from.find("no tool output recognised"), std::string::npos) << from;
  }
}

TEST(RunE2eMpirun, EveryFileIsNamedByItsWorldRankAndMpirunStillSeesTheKill) {
  const JobRun& run = MpirunJob();
  if (!run.unavailable.empty()) SKIP_OR_FAIL(run.unavailable);
  const std::string said = ReadFile(run.scratch.path() / "mpirun.out");
  ASSERT_TRUE(run.finished) << "mpirun did not finish within " << kJobLimit.count() << " s:\n"
                            << said;
  ExpectLayout(run.out, {{0, run.node}, {1, run.node}, {2, run.node}, {3, run.node}}, 2);
  for (int rank = 0; rank < 4; ++rank) {
    const std::string task =
        ReadFile(run.out / run.node / ("rank_" + std::to_string(rank) + ".task.json"));
    EXPECT_EQ(Field(task, "rank_source"), "\"OMPI_COMM_WORLD_RANK\"");
    EXPECT_EQ(Field(task, "local_rank"), std::to_string(rank)) << "one node: local = world rank";
    EXPECT_EQ(Field(task, "local_rank_source"), "\"OMPI_COMM_WORLD_LOCAL_RANK\"");
    EXPECT_EQ(Field(task, "world_size"), "4");
    EXPECT_NE(task.find("\"openmpi\""), std::string::npos) << task;
  }
  EXPECT_NE(said.find("exited on signal 9"), std::string::npos)
      << "mpirun saw rank 2 die by SIGKILL:\n"
      << said;
}

TEST(RunE2eMpirun, DiagnoseNamesTheKilledRankFromTheWrappersOutput) {
  const JobRun& run = MpirunJob();
  if (!run.unavailable.empty()) SKIP_OR_FAIL(run.unavailable);
  ASSERT_TRUE(run.finished);
  ExpectDiagnosed(Diagnose(run.out, run.scratch.path()), 2, run.node, run.scratch.path());
}

}  // namespace
}  // namespace denpex::run_test
