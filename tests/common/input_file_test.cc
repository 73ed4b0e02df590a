// The one bounded reader of small input files (denpex/common/input_file.h): a regular file only,
// refused by its size before it is read, every refusal naming the path and what to do.
#include "denpex/common/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace denpex {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

TEST(InputFile, ReadsARegularFileWhole) {
  TempDir t;
  std::ofstream(t.path() / "s.textproto") << "name: \"x\"\n";
  auto text = ReadInputFile(t.path() / "s.textproto", 1024, "a scenario");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "name: \"x\"\n");
}

TEST(InputFile, MissingFileIsNotFound) {
  TempDir t;
  auto text = ReadInputFile(t.path() / "absent", 1024, "a scenario");
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
}

// /dev/zero would be read forever; a FIFO would block in open() until a writer came.
TEST(InputFile, DevicesFifosAndDirectoriesAreRefusedAtOnce) {
  TempDir t;
  ASSERT_EQ(::mkfifo((t.path() / "fifo").c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  for (const fs::path& p : {fs::path("/dev/zero"), t.path() / "fifo", t.path()}) {
    auto text = ReadInputFile(p, 1024, "a scenario");
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidInput) << p;
    EXPECT_NE(text.status().message().find(p.string()), std::string::npos);
    EXPECT_NE(text.status().message().find("a scenario is read from a regular file"),
              std::string::npos)
        << text.status().message();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

TEST(InputFile, ALargerFileIsRefusedByItsSizeUnread) {
  TempDir t;
  {
    std::ofstream f(t.path() / "huge");
    f.seekp((std::int64_t{1} << 34) - 1);  // 16 GiB, sparse
    f.put('\n');
  }
  auto text = ReadInputFile(t.path() / "huge", 1 << 20, "a scenario");
  ASSERT_EQ(text.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(text.status().message().find("17179869184 bytes, more than the 1048576"),
            std::string::npos)
      << text.status().message();
}

}  // namespace
}  // namespace denpex
