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

const std::vector<std::string> kDefaultRankEnv = {"RANK", "SLURM_PROCID"};

TEST(TaskIdentity, UnderTorchrunTheFileIsNamedByRank) {
  const TaskIdentity id = DescribeTask("node-b", kDefaultRankEnv, 100,
                                       Env({{"RANK", "3"},
                                            {"LOCAL_RANK", "1"},
                                            {"WORLD_SIZE", "4"},
                                            {"TORCHELASTIC_RUN_ID", "r1"},
                                            {"HOME", "/x"}}));
  EXPECT_EQ(id.stem, "rank_3");
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.rank_source, "RANK");
  EXPECT_EQ(id.local_rank, 1);
  std::map<std::string, std::string> env(id.env.begin(), id.env.end());
  EXPECT_EQ(env.size(), 4u) << "only the identity variables, not HOME";
  EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], "r1");
}

TEST(TaskIdentity, UnderSrunTheTaskIdIsTheRank) {
  const TaskIdentity id =
      DescribeTask("sn01", kDefaultRankEnv, 100,
                   Env({{"SLURM_PROCID", "2"}, {"SLURM_LOCALID", "2"}, {"SLURM_JOB_ID", "4200"}}));
  EXPECT_EQ(id.stem, "rank_2");
  EXPECT_EQ(id.rank_source, "SLURM_PROCID");
  EXPECT_EQ(id.local_rank, 2);
}

TEST(TaskIdentity, WithoutARankVariableTheSlurmTaskOrThePidNamesTheFile) {
  EXPECT_EQ(DescribeTask("h", {"RANK"}, 100, Env({{"SLURM_PROCID", "5"}})).stem, "task_5");
  EXPECT_EQ(DescribeTask("h", kDefaultRankEnv, 4242, Env({})).stem, "pid_4242");
  EXPECT_EQ(DescribeTask("h", kDefaultRankEnv, 4242, Env({{"RANK", "x1"}})).stem, "pid_4242")
      << "a value that is not a rank is ignored";
  EXPECT_EQ(
      DescribeTask("h", {"OMPI_COMM_WORLD_RANK"}, 1, Env({{"OMPI_COMM_WORLD_RANK", "7"}})).stem,
      "rank_7");
}

TEST(TaskJson, IsValidJsonWithTheIdentityAndTheExit) {
  TaskRecord r;
  r.id = DescribeTask("node-b", kDefaultRankEnv, 100,
                      Env({{"RANK", "3"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}));
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
