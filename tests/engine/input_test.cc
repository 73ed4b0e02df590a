// Bad input is data: missing or empty directories are clear errors; binary files, huge lines,
// non-UTF-8 bytes and links out of the directory are counted and skipped. The engine never
// modifies the incident, and its answer does not depend on the thread count.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <map>
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
