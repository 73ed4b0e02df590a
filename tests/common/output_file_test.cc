// The one output writer (denpex/common/output_file.h): regular files only, a temporary file that
// nothing planted can redirect, never inside a tree being read, no directory created, every
// failed write an error naming the path.
#include "denpex/common/output_file.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace denpex {
namespace {
namespace fs = std::filesystem;

using denpex::testing::TempDir;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Only the names the test made: no temporary file was left behind.
std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OutputFile, WritesAndReplacesARegularFile) {
  TempDir t;
  const fs::path out = t.path() / "d.json";
  ASSERT_TRUE(WriteOutputFile(out, "one\n").ok());
  EXPECT_EQ(Slurp(out), "one\n");
  ASSERT_TRUE(WriteOutputFile(out, "two\n").ok());
  EXPECT_EQ(Slurp(out), "two\n");
  EXPECT_EQ(Names(t.path()), std::vector<std::string>{"d.json"});
}

TEST(OutputFile, RefusesAFifoAndLeavesIt) {
  TempDir t;
  const fs::path fifo = t.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status st = WriteOutputFile(fifo, "x");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("a FIFO"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(fifo.string()), std::string::npos) << st.message();
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(Names(t.path()), std::vector<std::string>{"pipe"});
}

TEST(OutputFile, RefusesASymlinkAndLeavesItsTarget) {
  TempDir t;
  Put(t.path() / "victim.log", "keep\n");
  fs::create_symlink(t.path() / "victim.log", t.path() / "d.json");
  EXPECT_EQ(WriteOutputFile(t.path() / "d.json", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AppendOutputFile(t.path() / "d.json", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_symlink(t.path() / "d.json"));
  EXPECT_EQ(Slurp(t.path() / "victim.log"), "keep\n");
}

TEST(OutputFile, RefusesDevicesAsRootToo) {
  const Status full = WriteOutputFile("/dev/full", "x");
  EXPECT_EQ(full.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(full.message().find("character device"), std::string::npos) << full.message();
  EXPECT_EQ(CheckOutputPath("/dev/null").code(), StatusCode::kInvalidArgument);
  // A scratch device node (the same as /dev/null): it stays a device.
  TempDir t;
  const fs::path node = t.path() / "null";
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod needs root (and a container that allows it)";
  }
  EXPECT_EQ(WriteOutputFile(node, "x").code(), StatusCode::kInvalidArgument);
  struct stat st;
  ASSERT_EQ(::lstat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputFile, APlantedLinkAtATemporaryNameIsNeverFollowed) {
  TempDir t;
  Put(t.path() / "victim.log", "keep\n");
  for (const char* name : {"d.json.tmp", ".d.json.tmp", ".d.json.tmp0"}) {
    fs::create_symlink(t.path() / "victim.log", t.path() / name);
  }
  ASSERT_TRUE(WriteOutputFile(t.path() / "d.json", "diagnosis\n").ok());
  EXPECT_EQ(Slurp(t.path() / "victim.log"), "keep\n");
  EXPECT_EQ(Slurp(t.path() / "d.json"), "diagnosis\n");
  EXPECT_TRUE(fs::is_symlink(t.path() / "d.json.tmp"));
}

TEST(OutputFile, NeverWritesInsideAReadOnlyTreeHoweverThePathIsSpelled) {
  TempDir t;
  const fs::path incident = t.path() / "incident";
  fs::create_directories(incident / "node-1");
  fs::create_directories(t.path() / "out");
  fs::create_directory_symlink(incident / "node-1", t.path() / "alias");
  const fs::path read_only[] = {incident};
  for (const fs::path& p : {incident / "d.json", incident / "node-1" / "d.json", t.path() / "alias" / "d.json",
                            t.path() / "out" / ".." / "incident" / "d.json"}) {
    const Status st = WriteOutputFile(p, "x", read_only);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << p;
    EXPECT_NE(st.message().find("inside the incident directory"), std::string::npos) << st.message();
  }
  EXPECT_EQ(AppendOutputFile(incident / "h.jsonl", "x", read_only).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(incident / "node-1"));
  EXPECT_EQ(Names(incident), std::vector<std::string>{"node-1"});
  EXPECT_TRUE(WriteOutputFile(t.path() / "out" / "d.json", "x", read_only).ok());
}

TEST(OutputFile, AMissingParentIsAnErrorThatNamesItAndIsNotCreated) {
  TempDir t;
  const Status st = WriteOutputFile(t.path() / "no" / "such" / "d.json", "x");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find((t.path() / "no" / "such").string() + " does not exist"), std::string::npos)
      << st.message();
  EXPECT_FALSE(fs::exists(t.path() / "no"));
  EXPECT_EQ(WriteOutputFile(t.path(), "x").code(), StatusCode::kInvalidArgument);  // a directory
}

// A write that fails part way (here the file-size limit, EFBIG; a full disk is ENOSPC) is an
// error naming the path; neither the target nor a temporary file is left.
TEST(OutputFile, AFailedWriteIsAnErrorNamingThePath) {
  TempDir t;
  const fs::path out = t.path() / "report.html";
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit low = old;
  low.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &low), 0);
  const Status st = WriteOutputFile(out, std::string(1 << 20, 'x'));
  const Status app = AppendOutputFile(t.path() / "h.jsonl", std::string(1 << 20, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find(out.string()), std::string::npos) << st.message();
  EXPECT_EQ(app.code(), StatusCode::kIoError);
  EXPECT_EQ(Names(t.path()), std::vector<std::string>{"h.jsonl"});  // the append's partial file
}

TEST(OutputFile, AFullFileSystemIsAnErrorNamingThePath) {
  TempDir t;
  const fs::path mnt = t.path() / "small";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "mounting a small tmpfs needs root";
  }
  const Status st = WriteOutputFile(mnt / "d.json", std::string(1 << 20, 'x'));
  const std::vector<std::string> left = Names(mnt);
  ::umount(mnt.c_str());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find((mnt / "d.json").string()), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("No space left"), std::string::npos) << st.message();
  EXPECT_TRUE(left.empty());
}

TEST(OutputFile, AppendsToARegularFileButNotToOneWithOtherLinks) {
  TempDir t;
  const fs::path store = t.path() / "h.jsonl";
  ASSERT_TRUE(AppendOutputFile(store, "a\n").ok());
  ASSERT_TRUE(AppendOutputFile(store, "b\n").ok());
  EXPECT_EQ(Slurp(store), "a\nb\n");
  fs::create_hard_link(store, t.path() / "other");
  EXPECT_EQ(AppendOutputFile(store, "c\n").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Slurp(t.path() / "other"), "a\nb\n");
}

TEST(OutputFile, DashIsStandardOutput) {
  EXPECT_TRUE(IsStdout("-"));
  EXPECT_FALSE(IsStdout("./-"));
  EXPECT_FALSE(IsStdout("d.json"));
}

}  // namespace
}  // namespace denpex
