// `denpex run` as a process: exit status, the console copy, signals to the wrapper and to
// the command, and that no line is lost when either is killed.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "run_test_util.h"

namespace denpex::run_test {
namespace {

// The wrapper's flags for these tests: no kernel log, no nvidia-smi, host "h".
std::vector<std::string> RunArgs(const fs::path& out, const std::string& script,
                                 std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"run", "--out",           out.string(),     "--host",
                                "h",   "--no-kernel-log", "--no-nvidia-smi"};
  a.insert(a.end(), extra.begin(), extra.end());
  a.insert(a.end(), {"--", "sh", "-c", script});
  return a;
}

google::protobuf::Struct TaskJson(const fs::path& path) {
  google::protobuf::Struct s;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(path), &s).ok()) << path;
  return s;
}

const google::protobuf::Struct& Field(const google::protobuf::Struct& s, const std::string& key) {
  return s.fields().at(key).struct_value();
}

bool LogHas(const fs::path& log, const std::string& text) {
  return ReadFile(log).find(text) != std::string::npos;
}

TEST(RunProcess, ExitsWithTheCommandsCodeAndRecordsIt) {
  TempDir dir;
  Process p(RunArgs(dir.path() / "out", "echo hi; exit 3", {"--rank-env", "NO_SUCH_VAR"}),
            dir.path(), {{"SLURM_PROCID", ""}});
  const int ws = p.Wait();
  ASSERT_TRUE(WIFEXITED(ws));
  EXPECT_EQ(WEXITSTATUS(ws), 3);
  const fs::path node = dir.path() / "out" / "h";
  const std::string stem = "pid_" + std::to_string(p.pid());
  EXPECT_EQ(Payload(node / (stem + ".log")), std::vector<std::string>{"hi"});
  const auto exit = Field(TaskJson(node / (stem + ".task.json")), "exit");
  EXPECT_EQ(exit.fields().at("state").string_value(), "exited");
  EXPECT_EQ(exit.fields().at("code").number_value(), 3);
  const std::vector<std::string> notes = Payload(node / (stem + ".log"), /*notes=*/true);
  EXPECT_EQ(notes.front().rfind("[denpex-run] started pid ", 0), 0u);
  EXPECT_EQ(notes.back().find("exited with code 3"), notes.back().size() - 18);
}

TEST(RunProcess, CopiesStdoutAndStderrToTheConsoleUnchanged) {
  TempDir dir;
  Process p(RunArgs(dir.path() / "out", R"(printf 'a\r\nb\000c\npartial'; printf 'e1\ne2' >&2)"),
            dir.path(), {{"RANK", "5"}});
  ASSERT_EQ(p.Wait(), 0);
  EXPECT_EQ(p.Stdout(), std::string("a\r\nb\0c\npartial", 14));
  EXPECT_EQ(p.Stderr(), "e1\ne2");
  std::vector<std::string> lines = Payload(dir.path() / "out" / "h" / "rank_5.log");
  std::multiset<std::string> got(lines.begin(), lines.end());
  EXPECT_EQ(got, (std::multiset<std::string>{"a", "b\\x00c", "partial", "e1", "e2"}));
}

TEST(RunProcess, LosesNoLineWhenTheCommandIsSigkilled) {
  TempDir dir;
  constexpr int kLines = 50'000;
  Process p(
      RunArgs(dir.path() / "out", "i=0; while [ $i -lt " + std::to_string(kLines) +
                                      " ]; do echo \"line $i\"; i=$((i+1)); done; kill -9 $$"),
      dir.path(), {{"RANK", "1"}});
  const int ws = p.Wait();
  ASSERT_TRUE(WIFSIGNALED(ws)) << "the wrapper dies by the command's signal";
  EXPECT_EQ(WTERMSIG(ws), SIGKILL);
  const fs::path node = dir.path() / "out" / "h";
  const std::vector<std::string> lines = Payload(node / "rank_1.log");
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kLines));
  for (int i = 0; i < kLines; ++i)
    ASSERT_EQ(lines[static_cast<std::size_t>(i)], "line " + std::to_string(i));
  const auto exit = Field(TaskJson(node / "rank_1.task.json"), "exit");
  EXPECT_EQ(exit.fields().at("signal_name").string_value(), "SIGKILL");
  EXPECT_EQ(exit.fields().at("wrapper_exit_code").number_value(), 137);
  EXPECT_TRUE(LogHas(node / "rank_1.log", "[denpex-run] pid "));
  EXPECT_TRUE(LogHas(node / "rank_1.errors.log", " killed by signal 9 (SIGKILL)\n"));
}

// Issue #31 through the binary: a command prints ~100 MB under --max-bytes 1MiB; its first
// distinct error sits in the middle the cap drops, and the error index holds the 50 lines
// before it and the 20 after (the defaults).
TEST(RunProcess, ACappedLogKeepsThe50LinesBeforeItsFirstDistinctError) {
  TempDir dir;
  const std::string awk =
      "awk 'BEGIN { for (i = 0; i < 1000000; i++) {"
      " if (i == 600000 || i == 600100) print \"RuntimeError: CUDA error: an illegal memory "
      "access was encountered\";"
      " else printf \"step %d loading shard %d batch %d ......................................"
      "\\n\", i, i % 97, i * 3 } }'";
  Process p(RunArgs(dir.path() / "out", awk, {"--max-bytes", "1MiB"}), dir.path(), {{"RANK", "5"}});
  ASSERT_EQ(p.Wait(), 0);
  const fs::path node = dir.path() / "out" / "h";
  const auto step = [](int i) {
    return "step " + std::to_string(i) + " loading shard " + std::to_string(i % 97) + " batch " +
           std::to_string(i * 3) + " ......................................";
  };
  const auto log = Field(TaskJson(node / "rank_5.task.json"), "log");
  EXPECT_GE(log.fields().at("bytes").number_value(), 100e6);
  EXPECT_TRUE(log.fields().at("capped").bool_value());
  EXPECT_EQ(log.fields().at("error_context_before").number_value(), 50);
  EXPECT_EQ(log.fields().at("error_context_lines").number_value(), 70);
  EXPECT_LE(fs::file_size(node / "rank_5.log"), (1u << 20) + 1024);
  EXPECT_FALSE(LogHas(node / "rank_5.log", "Z RuntimeError: CUDA error")) << "dropped by the cap";

  std::vector<std::string> want;
  for (int i = 599'950; i < 600'000; ++i) want.push_back(step(i));
  want.push_back("RuntimeError: CUDA error: an illegal memory access was encountered");
  for (int i = 600'001; i <= 600'020; ++i) want.push_back(step(i));
  EXPECT_EQ(Payload(node / "rank_5.errors.log"), want);
}

TEST(RunProcess, DiesByTheCommandsSignalWithoutACoreOfItsOwn) {
  TempDir dir;
  Process p(RunArgs(dir.path() / "out", "echo before; kill -SEGV $$"), dir.path(), {{"RANK", "0"}});
  const int ws = p.Wait();
  ASSERT_TRUE(WIFSIGNALED(ws));
  EXPECT_EQ(WTERMSIG(ws), SIGSEGV);
  EXPECT_FALSE(WCOREDUMP(ws));
  const auto exit = Field(TaskJson(dir.path() / "out" / "h" / "rank_0.task.json"), "exit");
  EXPECT_EQ(exit.fields().at("signal").number_value(), SIGSEGV);
}

TEST(RunProcess, ForwardsSignalsToTheCommandAndExitsWithItsStatus) {
  TempDir dir;
  const fs::path log = dir.path() / "out" / "h" / "rank_0.log";
  Process p(RunArgs(dir.path() / "out",
                    "trap 'echo got USR1' USR1; trap 'echo got TERM; exit 7' TERM; echo ready; "
                    "while :; do sleep 0.05; done"),
            dir.path(), {{"RANK", "0"}});
  ASSERT_TRUE(WaitFor([&] { return LogHas(log, " ready\n"); }));
  p.Signal(SIGUSR1);
  ASSERT_TRUE(WaitFor([&] { return LogHas(log, " got USR1\n"); }));
  p.Signal(SIGTERM);
  const int ws = p.Wait();
  ASSERT_TRUE(WIFEXITED(ws));
  EXPECT_EQ(WEXITSTATUS(ws), 7) << "the command trapped SIGTERM and exited 7";
  EXPECT_TRUE(LogHas(log, " got TERM\n"));
  EXPECT_TRUE(LogHas(log, "[denpex-run] received SIGTERM from pid " + std::to_string(::getpid()) +
                              "; forwarded to process group "));
  const auto task = TaskJson(dir.path() / "out" / "h" / "rank_0.task.json");
  const auto& signals = task.fields().at("signals_received").list_value();
  ASSERT_EQ(signals.values_size(), 2);
  EXPECT_EQ(signals.values(0).struct_value().fields().at("signal").string_value(), "SIGUSR1");
  EXPECT_EQ(signals.values(1).struct_value().fields().at("signal").string_value(), "SIGTERM");
  EXPECT_TRUE(signals.values(1).struct_value().fields().at("forwarded").bool_value());
  EXPECT_EQ(Field(task, "exit").fields().at("code").number_value(), 7);
}

TEST(RunProcess, LosesNothingWhenTheWrapperIsSigtermed) {
  TempDir dir;
  const fs::path side = dir.path() / "written";
  const fs::path log = dir.path() / "out" / "h" / "rank_2.log";
  // Each line goes to stdout first, then to a file of the command's own: every line in that
  // file was written to the pipe before the command died.
  Process p(RunArgs(dir.path() / "out", "i=0; while :; do echo \"line $i\"; echo \"line $i\" >> '" +
                                            side.string() + "'; i=$((i+1)); done"),
            dir.path(), {{"RANK", "2"}});
  ASSERT_TRUE(WaitFor([&] { return Lines(ReadFile(side)).size() >= 2000; }));
  p.Signal(SIGTERM);
  const int ws = p.Wait();
  ASSERT_TRUE(WIFSIGNALED(ws));
  EXPECT_EQ(WTERMSIG(ws), SIGTERM) << "exit status 143 in a shell";
  const std::vector<std::string> written = Lines(ReadFile(side));
  const std::vector<std::string> logged = Payload(log);
  ASSERT_GE(logged.size(), written.size());
  for (std::size_t i = 0; i < logged.size(); ++i) {
    ASSERT_EQ(logged[i], "line " + std::to_string(i)) << "no gap, no cut line";
  }
  EXPECT_TRUE(LogHas(log, "[denpex-run] received SIGTERM"));
  EXPECT_TRUE(LogHas(log, "killed by signal 15 (SIGTERM)"));
}

TEST(RunProcess, ACommandThatCannotBeFoundExits127) {
  TempDir dir;
  Process p({"run", "--out", (dir.path() / "out").string(), "--host", "h", "--no-kernel-log", "--",
             "denpex-no-such-cmd"},
            dir.path(), {{"RANK", "0"}});
  const int ws = p.Wait();
  ASSERT_TRUE(WIFEXITED(ws));
  EXPECT_EQ(WEXITSTATUS(ws), 127);
  EXPECT_NE(p.Stderr().find("denpex run: cannot run denpex-no-such-cmd: No such file or directory"),
            std::string::npos);
  EXPECT_EQ(Field(TaskJson(dir.path() / "out" / "h" / "rank_0.task.json"), "exit")
                .fields()
                .at("state")
                .string_value(),
            "not_started");
}

TEST(RunProcess, TheCommandDiesWhenTheWrapperIsSigkilled) {
  TempDir dir;
  const fs::path pidfile = dir.path() / "child.pid";
  Process p(RunArgs(dir.path() / "out", "echo $$ > '" + pidfile.string() + "'; exec sleep 30"),
            dir.path(), {{"RANK", "0"}});
  ASSERT_TRUE(WaitFor([&] { return ReadFile(pidfile).size() > 1; }));
  const pid_t child = std::stoi(ReadFile(pidfile));
  p.Signal(SIGKILL);
  p.Wait();
  EXPECT_TRUE(WaitFor(
      [&] {
        return ::kill(child, 0) != 0 ||
               ReadFile("/proc/" + std::to_string(child) + "/stat").find(" Z ") !=
                   std::string::npos;
      },
      std::chrono::seconds(5)))
      << "no job left running unseen";
}

TEST(RunProcess, KeepsReadingWhatAChildOfTheCommandWritesJustAfterItExits) {
  TempDir dir;
  Process p(RunArgs(dir.path() / "out", "(sleep 0.3; echo late) & echo early"), dir.path(),
            {{"RANK", "0"}});
  ASSERT_EQ(p.Wait(), 0);
  EXPECT_EQ(Payload(dir.path() / "out" / "h" / "rank_0.log"),
            (std::vector<std::string>{"early", "late"}));
}

TEST(RunProcess, KernelLinesPrintedWhileTheTaskRanGoToTheNodesKernelLog) {
  if (::access("/dev/kmsg", R_OK | W_OK) != 0) {
    GTEST_SKIP() << "/dev/kmsg is not readable and writable here (needs root)";
  }
  TempDir dir;
  const std::string marker = "denpex run test marker " + std::to_string(::getpid());
  Process p({"run", "--out", (dir.path() / "out").string(), "--host", "h", "--no-nvidia-smi", "--",
             "sh", "-c", "echo '" + marker + "' > /dev/kmsg"},
            dir.path(), {{"RANK", "0"}});
  ASSERT_EQ(p.Wait(), 0);
  const std::string kernel = ReadFile(dir.path() / "out" / "h" / "kernel.log");
  const std::size_t at = kernel.find(marker);
  ASSERT_NE(at, std::string::npos) << kernel;
  EXPECT_EQ(kernel.rfind('[', at), kernel.rfind('\n', at) + 1)
      << "dmesg's `[uptime] message` shape";
  const auto task = TaskJson(dir.path() / "out" / "h" / "rank_0.task.json");
  EXPECT_EQ(Field(task, "kernel_log").fields().at("status").string_value(), "ok");
}

TEST(RunProcess, LocalRankZeroTakesTheNvidiaSmiSnapshot) {
  TempDir dir;
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  {
    std::ofstream fake(bin / "nvidia-smi");
    fake << "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the "
            "NVIDIA "
            "driver.'\nexit 9\n";
  }
  fs::permissions(bin / "nvidia-smi", fs::perms::owner_all);
  const std::string path = bin.string() + ":/usr/bin:/bin";
  for (const char* local_rank : {"0", "1"}) {
    Process p({"run", "--out", (dir.path() / "out").string(), "--host", "h", "--no-kernel-log",
               "--", "true"},
              dir.path(), {{"RANK", local_rank}, {"LOCAL_RANK", local_rank}, {"PATH", path}});
    ASSERT_EQ(p.Wait(), 0);
  }
  EXPECT_EQ(ReadFile(dir.path() / "out" / "h" / "nvidia-smi.log"),
            "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\n");
  const auto zero = Field(TaskJson(dir.path() / "out" / "h" / "rank_0.task.json"), "nvidia_smi");
  EXPECT_EQ(zero.fields().at("status").string_value(), "failed: nvidia-smi exited with code 9");
  EXPECT_EQ(zero.fields().at("file").string_value(), "nvidia-smi.log");
  const auto one = Field(TaskJson(dir.path() / "out" / "h" / "rank_1.task.json"), "nvidia_smi");
  EXPECT_EQ(one.fields().at("status").string_value(),
            "skipped: local rank 0 takes the node's snapshot");
}

TEST(RunProcess, RejectsBadUsage) {
  TempDir dir;
  Process no_command({"run", "--out", (dir.path() / "out").string()}, dir.path());
  EXPECT_EQ(WEXITSTATUS(no_command.Wait()), 2);
  Process tiny_cap(
      {"run", "--out", (dir.path() / "out").string(), "--max-bytes", "100", "--", "true"},
      dir.path());
  EXPECT_EQ(WEXITSTATUS(tiny_cap.Wait()), 2);
  Process bad_dir({"run", "--out", "/proc/denpex-cannot-write", "--", "true"}, dir.path());
  EXPECT_EQ(WEXITSTATUS(bad_dir.Wait()), 3);
  EXPECT_NE(bad_dir.Stderr().find("choose a writable --out"), std::string::npos);
}

}  // namespace
}  // namespace denpex::run_test
