// Bad input is data: missing or empty directories are clear errors; binary files, huge lines,
// non-UTF-8 bytes and links out of the directory are counted and skipped. The engine never
// modifies the incident, and its answer does not depend on the thread count.
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "fixture.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

// Path -> contents of every entry under `dir` (links by their target, not followed).
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> snap;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = e.path().lexically_relative(dir).string();
    if (e.is_symlink()) {
      snap[rel] = "-> " + fs::read_symlink(e.path()).string();
    } else if (e.is_regular_file()) {
      snap[rel] = testing::Slurp(e.path());
    } else {
      snap[rel] = "<dir>";
    }
  }
  return snap;
}

bool HasProblem(const v1::Diagnosis& d, const std::string& needle) {
  for (const auto& p : d.input().problems()) {
    if (p.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(EngineInput, MissingDirectoryIsNotFoundAndNamesThePath) {
  auto d = Diagnose("/nonexistent/denpex/incident", {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound);
  EXPECT_NE(d.status().message().find("/nonexistent/denpex/incident"), std::string::npos);
}

TEST(EngineInput, EmptyDirectoryOrAFileIsInvalidInput) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "gpu-0001");
  auto d = Diagnose(tmp.path(), {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(d.status().message().find("no log files found under " + tmp.path().string()), std::string::npos)
      << d.status().message();
  std::ofstream(tmp.path() / "x.log") << "hello\n";
  d = Diagnose(tmp.path() / "x.log", {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput);
}

TEST(EngineInput, OnlyBinaryFilesIsInvalidInput) {
  TempDir tmp;
  std::ofstream(tmp.path() / "core", std::ios::binary) << std::string("\x7f" "ELF\0\0\0", 7);
  auto d = Diagnose(tmp.path(), {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput);
}

TEST(EngineInput, BadFilesAreCountedNotFatal) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  const fs::path node = tmp.path() / "gpu-0002";
  std::ofstream(node / "core.1234", std::ios::binary) << std::string("\x7f" "ELF\0\0\0\x01\x02", 9);
  std::ofstream(node / "huge.log", std::ios::binary) << std::string(10 << 20, 'x') << "\nshort line\n";
  std::ofstream(node / "latin1.log", std::ios::binary) << "caf\xe9 \xff\xfe garbage\n[rank9]:caf\xe9\n";
  // A watchdog line with a stray non-UTF-8 byte spliced into its tail still counts.
  {
    std::ofstream(node / "rank_9.log", std::ios::app | std::ios::binary)
        << "[rank9]:[E302 09:27:14.000000000 ProcessGroupNCCL.cpp:607] [PG 9 Rank 0] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
           "for 600000 milliseconds before timing out.\xff\n";
  }
  fs::create_symlink("/etc/passwd", node / "passwd.log");
  fs::create_symlink(node / "rank_8.log", node / "alias.log");  // inside: read once, where it lies

  auto d = Diagnose(tmp.path(), {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 3);
  EXPECT_EQ(d->input().unreadable_files(), 1);
  EXPECT_GE(d->input().malformed_lines(), 1);  // the 10 MB line
  EXPECT_TRUE(HasProblem(*d, "gpu-0002/core.1234: binary file"));
  EXPECT_TRUE(HasProblem(*d, "gpu-0002/passwd.log: symbolic link to a path outside"));
  EXPECT_FALSE(HasProblem(*d, "alias.log"));
  EXPECT_EQ(d->input().files(), 36 + 3);  // the links are not files of the incident
  // Protobuf JSON needs UTF-8; the report must still serialise.
  EXPECT_NE(proto::ToJson(*d).find("\"verdict\""), std::string::npos);
}

TEST(EngineInput, GroundTruthInsideTheDirectoryIsNeverRead) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  std::ofstream(tmp.path() / "truth.json") << "{\"initiator\": {\"rank\": 17}}\n";
  auto d = Diagnose(tmp.path(), {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->input().files(), 36);
  EXPECT_TRUE(HasProblem(*d, "ground truth"));
}

TEST(EngineInput, DiagnoseDoesNotModifyTheIncident) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  fs::create_symlink("/etc/passwd", tmp.path() / "gpu-0001" / "passwd.log");
  const auto before = Snapshot(tmp.path());
  for (Strategy s : {Strategy::kEngine, Strategy::kFirstError}) {
    auto d = Diagnose(tmp.path(), {.strategy = s});
    ASSERT_TRUE(d.ok());
    (void)RenderText(*d);
  }
  EXPECT_EQ(Snapshot(tmp.path()), before);
}

TEST(EngineInput, ResultIsIndependentOfThreadCount) {
  TempDir tmp;
  testing::Incident spec;
  spec.skew_ms = {{0, 13}, {1, -250}, {2, 77}, {3, 4}};
  testing::WriteIncident(tmp.path(), spec);
  std::ofstream(tmp.path() / "gpu-0003" / "noise.log", std::ios::binary) << "[rank99999999999]: x\n\xff\n";
  for (Strategy s : {Strategy::kEngine, Strategy::kFirstError}) {
    auto one = Diagnose(tmp.path(), {.strategy = s, .threads = 1});
    auto two = Diagnose(tmp.path(), {.strategy = s, .threads = 2});
    auto all = Diagnose(tmp.path(), {.strategy = s, .threads = 0});
    ASSERT_TRUE(one.ok() && two.ok() && all.ok());
    EXPECT_EQ(proto::ToJson(*one), proto::ToJson(*two));
    EXPECT_EQ(proto::ToJson(*one), proto::ToJson(*all));
  }
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

TEST(EngineInput, TruncatedFilesAndFifosAreCountedAndTheRestDiagnosed) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  const fs::path node = tmp.path() / "gpu-0003";
  // Cut mid-record: a watchdog line with no end, a traceback with no last line, a table entry.
  std::ofstream(node / "rank_20.log", std::ios::app | std::ios::binary)
      << "[rank20]:[E302 09:27:14.000000000 ProcessGroupNCCL.cpp:607] [PG 9 Rank 0] Watchdog caught collective "
         "operation timeout: WorkNCCL(SeqNum=1, OpTy";
  std::ofstream(node / "rank_21.log", std::ios::app | std::ios::binary)
      << "[rank21]: Traceback (most recent call last):\n[rank21]:   File \"train.py\", line 1";
  std::ofstream(node / "torchrun.log", std::ios::app | std::ios::binary)
      << "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \nRoot Cause (first observed failure):\n[0]:\n  ti";
  // As root every file is readable; a FIFO stands for a file that cannot be read as a log.
  ASSERT_EQ(::mkfifo((node / "pipe.log").c_str(), 0644), 0);
  std::ofstream(tmp.path() / "expected.json") << "{\"initiator\": {\"rank\": 17}}\n";
  auto d = Diagnose(tmp.path(), {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 3);
  EXPECT_TRUE(HasProblem(*d, "gpu-0003/pipe.log: not a regular file"));
  EXPECT_TRUE(HasProblem(*d, "expected.json: ground truth"));
  EXPECT_GE(d->input().malformed_lines(), 1);  // the table entry without a rank
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// A skipped file contributes nothing: a binary `rank_9000.log` is reported skipped and makes
// neither the world size 9,001 nor any change to the confidence or the reason.
TEST(EngineInput, ASkippedFileChangesNoFact) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  auto before = Diagnose(tmp.path(), {.threads = 1});
  ASSERT_TRUE(before.ok());
  std::ofstream(tmp.path() / "gpu-0002" / "rank_9000.log", std::ios::binary) << std::string("\x7f" "ELF\0\0\0\x01", 8);
  fs::create_directories(tmp.path() / "gpu-9999");
  std::ofstream(tmp.path() / "gpu-9999" / "rank_31.log", std::ios::binary) << std::string("core\0\0\0", 7);
  auto after = Diagnose(tmp.path(), {.threads = 1});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(HasProblem(*after, "rank_9000.log"));
  EXPECT_EQ(after->input().unreadable_files(), 2);
  EXPECT_EQ(after->input().world_size(), before->input().world_size());
  EXPECT_EQ(after->input().ranks_seen(), before->input().ranks_seen());
  EXPECT_EQ(after->initiator().rank(), before->initiator().rank());
  EXPECT_EQ(after->initiator().node(), before->initiator().node());
  EXPECT_EQ(after->initiator().confidence(), before->initiator().confidence());
  EXPECT_EQ(after->reason(), before->reason());
}

// Runs `denpex diagnose DIR --json -` as the user nobody; its stdout, or nullopt when this
// process may not change its user (not root).
std::optional<std::string> DiagnoseAsNobody(const fs::path& dir) {
  int out[2];
  if (::pipe(out) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) {
      ::_exit(77);
    }
    ::execl(DENPEX_BINARY, "denpex", "diagnose", dir.c_str(), "--threads", "1", "--json", "-", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 77) return std::nullopt;
  return text;
}

// The diagnosis of `dir` by a reader that `folder` refuses. As root (refused nothing), the binary
// run as nobody, the folder's mode `for_others`; else this process, the folder's mode `for_owner`
// (given back after). nullopt: root, but nobody could not be become (the test is skipped).
std::optional<v1::Diagnosis> DiagnoseRefused(const fs::path& dir, const fs::path& folder,
                                             fs::perms for_others, fs::perms for_owner) {
  if (::geteuid() == 0) {
    fs::permissions(folder, for_others);
    const std::optional<std::string> json = DiagnoseAsNobody(dir);
    if (!json) return std::nullopt;
    v1::Diagnosis d;
    EXPECT_TRUE(proto::FromJson(*json, "stdout", &d).ok()) << *json;
    return d;
  }
  fs::permissions(folder, for_owner);
  auto r = Diagnose(dir, {.threads = 1});
  fs::permissions(folder, fs::perms::owner_all);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : v1::Diagnosis();
}

// A folder the reader may not open is counted and named, not skipped silently (which would
// leave "0 unreadable files", no problem, and a reason that says the node's logs are missing).
TEST(EngineInput, AnUnreadableDirectoryIsCountedAndNamed) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  // 0700 for nobody (only its owner); nothing for the owner
  const auto d =
      DiagnoseRefused(tmp.path(), tmp.path() / "gpu-0004", fs::perms::owner_all, fs::perms::none);
  if (!d) GTEST_SKIP() << "root, but cannot become nobody to be refused";
  EXPECT_TRUE(HasProblem(*d, "gpu-0004/: unreadable directory (Permission denied)"));
  EXPECT_NE(RenderText(*d).find("problem: gpu-0004/: unreadable directory"), std::string::npos) << RenderText(*d);
}

// A folder the reader may list but not enter (read permission without search) is as unreadable:
// its files' names are known, but none of them can be opened. Named once, as the folder.
TEST(EngineInput, AFolderThatCanBeListedButNotEnteredIsUnreadable) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  // r-- for nobody, r-- for the owner
  const auto d =
      DiagnoseRefused(tmp.path(), tmp.path() / "gpu-0004",
                      fs::perms::owner_all | fs::perms::others_read, fs::perms::owner_read);
  if (!d) GTEST_SKIP() << "root, but cannot become nobody to be refused";
  EXPECT_TRUE(HasProblem(*d, "gpu-0004/: unreadable directory (Permission denied)"));
  EXPECT_FALSE(HasProblem(*d, "gpu-0004/rank_")) << "its files are not listed one by one";
  EXPECT_EQ(d->input().unreadable_files(), 0);
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// Bytes of a log line reach the text report (quoted evidence, file names, problems);
// a terminal must not act on them. JSON escapes them by its own rules.
TEST(EngineInput, TheTextReportEscapesTerminalControls) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  std::ofstream(tmp.path() / "gpu-0001" / "evil\x1b[2J.log", std::ios::binary) << std::string("\x7f" "ELF\0", 5);
  auto d = Diagnose(tmp.path(), {.threads = 1});
  ASSERT_TRUE(d.ok());
  d->set_reason(d->reason() + " \x1b]0;owned\x07 \xc2\x9b" "31m\r");
  const std::string text = RenderText(*d);
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b >= 0x20 || c == '\n' || c == '\t') << "control byte " << int(b);
    EXPECT_NE(b, 0x7f);
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos);
  EXPECT_NE(text.find("evil\\x1b[2J.log"), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1b]0;owned\\x07 \\u009b31m\\x0d"), std::string::npos) << text;
}

}  // namespace
}  // namespace denpex::engine
