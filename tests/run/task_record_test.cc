// What identifies a task (its file names in the layout) and task.json.
#include "run/task_record.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "run_test_util.h"

namespace denpex::cli::run {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// The identity of a task started as `command` (default: a training script) on `local_host`.
TaskIdentity Describe(std::map<std::string, std::string> vars, std::string local_host = "h",
                      std::vector<std::string> command = {"python3", "train.py"},
                      std::vector<std::string> rank_env = DefaultRankEnv()) {
  return DescribeTask({.local_host = std::move(local_host),
                       .rank_env = std::move(rank_env),
                       .command = std::move(command),
                       .wrapper_pid = 4242},
                      Env(std::move(vars)));
}

TEST(TaskIdentity, UnderTorchrunTheFileIsNamedByRank) {
  const TaskIdentity id = Describe({{"RANK", "3"},
                                    {"LOCAL_RANK", "1"},
                                    {"GROUP_RANK", "1"},
                                    {"WORLD_SIZE", "4"},
                                    {"TORCHELASTIC_RUN_ID", "r1"},
                                    {"HOME", "/x"}},
                                   "node-b");
  EXPECT_EQ(id.stem, "rank_3");
  EXPECT_EQ(id.rank.value, 3);
  EXPECT_EQ(id.rank.source, "RANK");
  EXPECT_EQ(id.local_rank.value, 1);
  EXPECT_EQ(id.node_rank.value, 1);
  EXPECT_EQ(id.node_rank.source, "GROUP_RANK");
  EXPECT_EQ(id.world_size.value, 4);
  EXPECT_EQ(id.host, "node-b");
  EXPECT_EQ(id.host_source, "hostname");
  EXPECT_EQ(id.launchers, std::vector<std::string>{"torchrun"});
  std::map<std::string, std::string> env(id.env.begin(), id.env.end());
  EXPECT_EQ(env.size(), 5u) << "only the identity variables, not HOME";
  EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], "r1");
}

TEST(TaskIdentity, UnderSrunTheTaskIdIsTheRankAndSlurmNamesTheNode) {
  const TaskIdentity id = Describe({{"SLURM_PROCID", "2"},
                                    {"SLURM_LOCALID", "2"},
                                    {"SLURM_NODEID", "0"},
                                    {"SLURM_NTASKS", "4"},
                                    {"SLURM_JOB_ID", "4200"},
                                    {"SLURMD_NODENAME", "sn01"}},
                                   "sn01.cluster.example");
  EXPECT_EQ(id.stem, "rank_2");
  EXPECT_EQ(id.rank.source, "SLURM_PROCID");
  EXPECT_EQ(id.local_rank.value, 2);
  EXPECT_EQ(id.local_rank.source, "SLURM_LOCALID");
  EXPECT_EQ(id.node_rank.source, "SLURM_NODEID");
  EXPECT_EQ(id.world_size.value, 4);
  EXPECT_EQ(id.host, "sn01") << "Slurm's name for this machine, as its daemons' logs write it";
  EXPECT_EQ(id.host_source, "SLURMD_NODENAME");
  EXPECT_EQ(id.launchers, std::vector<std::string>{"slurm"});
}

TEST(TaskIdentity, ASlurmNodeNameThatIsNotThisMachineIsNotTheHost) {
  // Inherited from the node that started the process (mpirun over ssh with -x, a copied
  // environment): the host name is this machine's, Slurm's variable is only recorded.
  const TaskIdentity id =
      Describe({{"SLURMD_NODENAME", "gpu001"}, {"SLURM_PROCID", "0"}}, "gpu017");
  EXPECT_EQ(id.host, "gpu017");
  EXPECT_EQ(id.host_source, "hostname");
  EXPECT_EQ(Describe({{"SLURMD_NODENAME", "gpu0"}}, "gpu017").host, "gpu017")
      << "a prefix that is not the first label";
}

TEST(TaskIdentity, UnderOpenMpiTheWorldRankNamesTheFileEvenInsideAnSbatchScript) {
  // What Open MPI 4.1's mpirun sets (docs/run_wrapper.md), inside a batch script whose own
  // SLURM_PROCID=0 every rank inherits.
  const TaskIdentity id = Describe({{"OMPI_COMM_WORLD_RANK", "5"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                    {"OMPI_COMM_WORLD_NODE_RANK", "1"},
                                    {"OMPI_COMM_WORLD_SIZE", "8"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                    {"PMIX_RANK", "5"},
                                    {"SLURM_JOB_ID", "77"},
                                    {"SLURM_PROCID", "0"},
                                    {"SLURM_LOCALID", "0"},
                                    {"SLURM_NODEID", "0"}});
  EXPECT_EQ(id.stem, "rank_5");
  EXPECT_EQ(id.rank.source, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(id.local_rank.value, 1);
  EXPECT_EQ(id.local_rank.source, "OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(id.world_size.value, 8);
  EXPECT_EQ(id.node_rank.source, "SLURM_NODEID")
      << "OMPI_COMM_WORLD_NODE_RANK is a rank's index on its node, not the node's";
  EXPECT_EQ(id.launchers, (std::vector<std::string>{"openmpi", "pmix", "slurm"}));
}

TEST(TaskIdentity, UnderMpichIntelMpiAndMvapichTheirRankVariablesNameTheFile) {
  // Hydra (MPICH's and Intel MPI's mpiexec): PMI_RANK, MPI_LOCALRANKID, PMI_SIZE.
  TaskIdentity id = Describe(
      {{"PMI_RANK", "6"}, {"PMI_SIZE", "8"}, {"MPI_LOCALRANKID", "2"}, {"MPI_LOCALNRANKS", "4"}});
  EXPECT_EQ(id.stem, "rank_6");
  EXPECT_EQ(id.rank.source, "PMI_RANK");
  EXPECT_EQ(id.local_rank.value, 2);
  EXPECT_EQ(id.local_rank.source, "MPI_LOCALRANKID");
  EXPECT_EQ(id.world_size.value, 8);
  EXPECT_EQ(id.launchers, std::vector<std::string>{"mpich"});
  // MVAPICH2's mpirun_rsh.
  id = Describe({{"MV2_COMM_WORLD_RANK", "9"},
                 {"MV2_COMM_WORLD_LOCAL_RANK", "1"},
                 {"MV2_COMM_WORLD_SIZE", "16"}});
  EXPECT_EQ(id.stem, "rank_9");
  EXPECT_EQ(id.local_rank.source, "MV2_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(id.world_size.value, 16);
  EXPECT_EQ(id.launchers, std::vector<std::string>{"mvapich"});
  // srun --mpi=pmix: PMIX_RANK and SLURM_PROCID agree.
  id = Describe({{"PMIX_RANK", "3"}, {"SLURM_PROCID", "3"}, {"SLURM_JOB_ID", "1"}});
  EXPECT_EQ(id.stem, "rank_3");
}

TEST(TaskIdentity, InAKubernetesIndexedJobThePodIndexIsTheRankAndThePodAndNodeAreRecorded) {
  const TaskIdentity id = Describe({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                    {"JOB_COMPLETION_INDEX", "12"},
                                    {"POD_NAME", "train-12-x7k2p"},
                                    {"POD_NAMESPACE", "ml"},
                                    {"NODE_NAME", "gke-a3-pool-9f2c"}},
                                   "train-12");
  EXPECT_EQ(id.stem, "rank_12");
  EXPECT_EQ(id.rank.source, "JOB_COMPLETION_INDEX");
  EXPECT_EQ(id.host, "train-12") << "the pod's host name";
  EXPECT_EQ(id.pod, "train-12-x7k2p");
  EXPECT_EQ(id.node_name, "gke-a3-pool-9f2c");
  EXPECT_EQ(id.launchers, std::vector<std::string>{"kubernetes"});
  // KubeRay's downward API names.
  EXPECT_EQ(Describe({{"MY_POD_NAME", "rc-worker-abc"}}).pod, "rc-worker-abc");
  // torchrun in the pod: its RANK wins over the pod's index.
  EXPECT_EQ(Describe({{"RANK", "50"}, {"JOB_COMPLETION_INDEX", "6"}}).stem, "rank_50");
}

TEST(TaskIdentity, ARayTrainWorkerIsNamedByItsRankOnItsOwnNode) {
  // What a Ray Train TorchTrainer worker's process holds (ray.train.torch.config, the raylet,
  // KubeRay): MASTER_ADDR is rank 0's node and RAY_IP the head's service; neither is this
  // worker's host.
  const TaskIdentity id = Describe({{"RANK", "5"},
                                    {"LOCAL_RANK", "1"},
                                    {"NODE_RANK", "2"},
                                    {"WORLD_SIZE", "8"},
                                    {"LOCAL_WORLD_SIZE", "2"},
                                    {"MASTER_ADDR", "10.0.0.1"},
                                    {"RAY_RAYLET_PID", "311"},
                                    {"RAY_JOB_ID", "02000000"},
                                    {"RAY_IP", "raycluster-head-svc"},
                                    {"MY_POD_NAME", "raycluster-worker-gpu-7xk"},
                                    {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}},
                                   "raycluster-worker-gpu-7xk");
  EXPECT_EQ(id.stem, "rank_5");
  EXPECT_EQ(id.host, "raycluster-worker-gpu-7xk");
  EXPECT_EQ(id.node_rank.value, 2);
  EXPECT_EQ(id.node_rank.source, "NODE_RANK");
  EXPECT_EQ(id.launchers, (std::vector<std::string>{"ray", "kubernetes"}));
}

TEST(TaskIdentity, AroundALauncherTheRankVariablesNameTheLaunchersTaskNotARank) {
  // srun --ntasks-per-node=1 around torchrun: SLURM_PROCID is the node's agent.
  const std::map<std::string, std::string> srun = {
      {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"}, {"SLURM_NODEID", "1"}};
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"torchrun", "--nproc-per-node", "8", "train.py"},
           {"/usr/bin/python3", "-m", "torch.distributed.run", "train.py"},
           {"python3.11", "-u", "-m", "torch.distributed.launch", "train.py"},
           {"/opt/ompi/bin/mpirun", "-np", "8", "a.out"}}) {
    const TaskIdentity id = Describe(srun, "h", cmd);
    EXPECT_EQ(id.stem, "task_1") << cmd[0];
    EXPECT_TRUE(id.wraps_launcher);
    EXPECT_FALSE(id.rank.value);
    EXPECT_FALSE(id.local_rank.value) << "the agent's, not a rank's";
    EXPECT_EQ(id.node_rank.value, 1);
  }
  EXPECT_FALSE(Describe(srun, "h", {"python3", "-m", "mymodule"}).wraps_launcher);
  EXPECT_EQ(Describe({}, "h", {"torchrun", "train.py"}).stem, "pid_4242");
}

TEST(TaskIdentity, WithoutARankVariableTheSlurmTaskOrThePidNamesTheFile) {
  EXPECT_EQ(Describe({{"SLURM_PROCID", "5"}}, "h", {"sh"}, {"RANK"}).stem, "task_5");
  EXPECT_EQ(Describe({}).stem, "pid_4242");
  EXPECT_EQ(Describe({{"RANK", "x1"}}).stem, "pid_4242") << "a value that is not a rank is ignored";
  EXPECT_EQ(Describe({{"OMPI_COMM_WORLD_RANK", "7"}, {"RANK", "1"}}, "h", {"sh"},
                     {"OMPI_COMM_WORLD_RANK"})
                .stem,
            "rank_7")
      << "--rank-env decides";
}

TEST(TaskIdentity, TheHostFlagWinsAndTheDefaultRankOrderIsTheTables) {
  const TaskIdentity id =
      DescribeTask({.host_flag = "node-x", .local_host = "h", .command = {"sh"}, .wrapper_pid = 1},
                   Env({{"SLURMD_NODENAME", "h"}}));
  EXPECT_EQ(id.host, "node-x");
  EXPECT_EQ(id.host_source, "--host");
  EXPECT_EQ(DefaultRankEnvText(),
            "RANK,OMPI_COMM_WORLD_RANK,PMIX_RANK,PMI_RANK,MV2_COMM_WORLD_RANK,SLURM_PROCID,"
            "JOB_COMPLETION_INDEX");
}

TEST(TaskJson, IsValidJsonWithTheIdentityAndTheExit) {
  TaskRecord r;
  r.id = Describe({{"RANK", "3"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}, "node-b");
  r.command = {"python3", "train.py", "--note", "a \"quoted\"\targ\xff"};
  r.cwd = "/work";
  r.wrapper_pid = 100;
  r.child_pid = 101;
  r.child_pgid = 101;
  r.start = 1'772'442'000 * kNsPerSec;
  r.end = r.start + 5 * kNsPerSec;
  r.exit = {.kind = ExitInfo::Kind::kSignaled, .signal = 9};
  r.signals.push_back({.signal = SIGTERM, .sender = 77, .time = r.start, .forwarded = true});
  r.log_file = "rank_3.log";
  r.kernel = {.status = "ok", .file = "kernel.log", .lines = 2};
  r.nvidia_smi = {.status = "not found"};
  const std::string json = RenderTaskJson(r);

  google::protobuf::Struct s;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &s).ok()) << json;
  const auto& f = s.fields();
  EXPECT_EQ(f.at("format").string_value(), "denpex.run.task.v1");
  EXPECT_EQ(f.at("host").string_value(), "node-b");
  EXPECT_EQ(f.at("rank").number_value(), 3);
  EXPECT_EQ(f.at("local_rank").kind_case(), google::protobuf::Value::kNullValue);
  EXPECT_EQ(f.at("rank_source").string_value(), "RANK");
  EXPECT_EQ(f.at("host_source").string_value(), "hostname");
  EXPECT_EQ(f.at("world_size").kind_case(), google::protobuf::Value::kNullValue);
  EXPECT_EQ(f.at("launchers").list_value().values_size(), 0);
  EXPECT_FALSE(f.at("wraps_launcher").bool_value());
  EXPECT_EQ(f.at("pod").kind_case(), google::protobuf::Value::kNullValue);
  EXPECT_EQ(f.at("command").list_value().values(3).string_value(), "a \"quoted\"\targ\xEF\xBF\xBD");
  EXPECT_EQ(f.at("start_time").string_value(), "2026-03-02T09:00:00.000000Z");
  EXPECT_EQ(f.at("end_time").string_value(), "2026-03-02T09:00:05.000000Z");
  const auto& exit = f.at("exit").struct_value().fields();
  EXPECT_EQ(exit.at("state").string_value(), "signaled");
  EXPECT_EQ(exit.at("signal").number_value(), 9);
  EXPECT_EQ(exit.at("signal_name").string_value(), "SIGKILL");
  EXPECT_EQ(exit.at("wrapper_exit_code").number_value(), 137);
  const auto& sig = f.at("signals_received").list_value().values(0).struct_value().fields();
  EXPECT_EQ(sig.at("signal").string_value(), "SIGTERM");
  EXPECT_EQ(sig.at("from_pid").number_value(), 77);
  EXPECT_TRUE(sig.at("forwarded").bool_value());
  EXPECT_EQ(f.at("env").struct_value().fields().at("CUDA_VISIBLE_DEVICES").string_value(), "0,1");
  EXPECT_EQ(f.at("kernel_log").struct_value().fields().at("file").string_value(), "kernel.log");
  EXPECT_EQ(f.at("nvidia_smi").struct_value().fields().at("status").string_value(), "not found");
}

TEST(TaskJson, ARunningTaskHasNoEndTimeAndAnExitedOneItsCode) {
  TaskRecord r;
  r.start = 1;
  std::string json = RenderTaskJson(r);
  EXPECT_NE(json.find("\"end_time\": null"), std::string::npos);
  EXPECT_NE(json.find("\"state\": \"running\""), std::string::npos);
  r.exit = {.kind = ExitInfo::Kind::kExited, .code = 1};
  r.end = 2;
  json = RenderTaskJson(r);
  EXPECT_NE(json.find("\"code\": 1,"), std::string::npos);
  EXPECT_NE(json.find("\"description\": \"exited with code 1\""), std::string::npos);
}

TEST(JsonString, EscapesQuotesControlsAndBadUtf8) {
  EXPECT_EQ(JsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\u000a\\u0001\"");
  EXPECT_EQ(JsonString("é✓😀"), "\"é✓😀\"");
  EXPECT_EQ(JsonString("\xc3"), "\"\\ufffd\"") << "a truncated sequence";
}

TEST(WriteFileAtomically, ReplacesTheFileAndLeavesNoTemporary) {
  run_test::TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() / "t.json", "one").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() / "t.json", "two").ok());
  EXPECT_EQ(run_test::ReadFile(dir.path() / "t.json"), "two");
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace denpex::cli::run
