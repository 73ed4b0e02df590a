// The size cap of a task's log (head, marker, tail) and the error lines it must never lose.
#include "run/task_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denpex/common/time.h"
#include "run_test_util.h"

namespace denpex::cli::run {
namespace {

using run_test::Payload;
using run_test::ReadFile;
using run_test::TempDir;

constexpr TimeNs kT0 = 1'772'442'000 * kNsPerSec;

std::string Numbered(int i) {
  return "step " + std::to_string(i) + " loss=0.125 " + std::string(40, '.');
}

TEST(CappedLog, KeepsTheHeadAndTheNewestTailAndCountsWhatItDropped) {
  TempDir dir;
  constexpr std::uint64_t kCap = 64 * 1024;
  auto log = TaskLog::Open(dir.path() / "rank_1.log", dir.path() / "rank_1.errors.log", kCap);
  ASSERT_TRUE(log.ok()) << log.status().message();
  constexpr int kLines = 50'000;  // about 4.5 MB
  for (int i = 0; i < kLines; ++i) {
    log->AddLine(Numbered(i), kT0 + i);
    if (i % 100 == 99) log->Flush();
  }
  log->Flush();
  const auto& counts = log->log().counts();
  EXPECT_TRUE(counts.capped);
  const std::string text = ReadFile(dir.path() / "rank_1.log");
  EXPECT_LE(text.size(), kCap + 1024);
  const std::size_t marker_at = text.find("[denpex-run] --max-bytes");
  ASSERT_NE(marker_at, std::string::npos);
  const std::size_t marker_len =
      text.find('\n', marker_at) + 1 - (marker_at - run_test::kStampBytes);
  EXPECT_EQ(text.size(), counts.bytes + marker_len - counts.omitted_bytes)
      << "the byte counts add up";

  const std::vector<std::string> payload = Payload(dir.path() / "rank_1.log", /*notes=*/true);
  ASSERT_GT(payload.size(), 10u);
  EXPECT_EQ(payload.front(), Numbered(0)) << "the head starts with the first line";
  EXPECT_EQ(payload.back(), Numbered(kLines - 1)) << "the tail ends with the last line";
  // Exactly one marker, and every line around it in order, none cut in half.
  int markers = 0;
  int expect = 0;
  for (const std::string& l : payload) {
    if (l.rfind("[denpex-run] --max-bytes 65536 reached: omitted", 0) == 0) {
      ++markers;
      EXPECT_NE(l.find("rank_1.errors.log"), std::string::npos);
      expect = -1;
      continue;
    }
    const int n = std::stoi(l.substr(5));
    if (expect >= 0) {
      EXPECT_EQ(n, expect) << l;
    }
    EXPECT_EQ(l, Numbered(n));
    expect = n + 1;
  }
  EXPECT_EQ(markers, 1);
  EXPECT_EQ(payload.size() - 1 + counts.omitted_lines, static_cast<std::size_t>(kLines))
      << "the marker counts every dropped line";
  EXPECT_NE(
      text.find("omitted " + std::string(14 - std::to_string(counts.omitted_lines).size(), ' ') +
                std::to_string(counts.omitted_lines) + " lines"),
      std::string::npos)
      << "the marker's counts are rewritten in place";
}

TEST(CappedLog, KeepsTheEarliestDistinctErrorLinesEvenWhenTheMiddleIsDropped) {
  TempDir dir;
  auto log = TaskLog::Open(dir.path() / "rank_2.log", dir.path() / "rank_2.errors.log", 64 * 1024);
  ASSERT_TRUE(log.ok());
  for (int i = 0; i < 40'000; ++i) {
    if (i == 20'000)
      log->AddLine(
          "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
          "[127.0.0.1]:45775",
          kT0 + i);
    if (i == 20'001)
      log->AddLine(
          "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
          "[127.0.0.1]:40001",
          kT0 + i);
    if (i == 20'002) log->AddLine("NCCL WARN Cuda failure 'out of memory'", kT0 + i);
    log->AddLine(Numbered(i), kT0 + i);
    log->Flush();
  }
  const std::string main_log = ReadFile(dir.path() / "rank_2.log");
  EXPECT_EQ(main_log.find("Connection closed by peer"), std::string::npos)
      << "dropped from the middle";
  const std::vector<std::string> errors = Payload(dir.path() / "rank_2.errors.log");
  ASSERT_EQ(errors.size(), 2u) << ReadFile(dir.path() / "rank_2.errors.log");
  EXPECT_EQ(errors[0],
            "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
            "[127.0.0.1]:45775")
      << "the earliest of the two lines with one signature";
  EXPECT_EQ(errors[1], "NCCL WARN Cuda failure 'out of memory'");
  EXPECT_EQ(log->errors().counts().matched, 3u);
  EXPECT_EQ(log->errors().counts().kept, 2u);
}

TEST(CappedLog, WithoutACapKeepsEveryLine) {
  TempDir dir;
  auto log = TaskLog::Open(dir.path() / "rank_0.log", dir.path() / "rank_0.errors.log", 0);
  ASSERT_TRUE(log.ok());
  for (int i = 0; i < 20'000; ++i) log->AddLine(Numbered(i), kT0);
  log->Flush();
  EXPECT_EQ(Payload(dir.path() / "rank_0.log").size(), 20'000u);
  EXPECT_FALSE(log->log().counts().capped);
}

TEST(CappedLog, ARestartedTaskAppendsToItsLog) {
  TempDir dir;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto log =
        TaskLog::Open(dir.path() / "rank_0.log", dir.path() / "rank_0.errors.log", 64 * 1024);
    ASSERT_TRUE(log.ok());
    log->AddLine("attempt " + std::to_string(attempt), kT0);
    log->AddLine("RuntimeError: attempt " + std::to_string(attempt), kT0);
    log->Flush();
  }
  EXPECT_EQ(Payload(dir.path() / "rank_0.log"),
            (std::vector<std::string>{"attempt 0", "RuntimeError: attempt 0", "attempt 1",
                                      "RuntimeError: attempt 1"}));
  EXPECT_EQ(Payload(dir.path() / "rank_0.errors.log").size(), 2u);
}

TEST(ErrorIndex, StopsAtItsLimitsAndCountsTheRest) {
  TempDir dir;
  auto index = ErrorIndex::Open(dir.path() / "e.log", /*max_distinct=*/3, /*max_bytes=*/1 << 20);
  ASSERT_TRUE(index.ok());
  for (const char* l : {"AError", "BError", "AError", "CError", "DError"}) {
    index->Consider(l, std::string(l) + "\n");
  }
  index->Flush();
  EXPECT_EQ(ReadFile(dir.path() / "e.log"), "AError\nBError\nCError\n");
  EXPECT_EQ(index->counts().matched, 5u);
  EXPECT_EQ(index->counts().kept, 3u);
  EXPECT_EQ(index->counts().dropped, 1u);
}

}  // namespace
}  // namespace denpex::cli::run
