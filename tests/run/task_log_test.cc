// The size cap of a task's log (head, marker, tail) and the error lines it must never lose.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "denpex/common/time.h"
#include "run/task_log.h"
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
  // Without context, to see the error lines alone (the context: ErrorIndex tests below).
  auto log = TaskLog::Open(dir.path() / "rank_2.log", dir.path() / "rank_2.errors.log", 64 * 1024,
                           {.before = 0, .after = 0});
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
  EXPECT_EQ(Payload(dir.path() / "rank_0.errors.log"),
            (std::vector<std::string>{"attempt 0", "RuntimeError: attempt 0", "attempt 1",
                                      "RuntimeError: attempt 1"}))
      << "each attempt's error with the line before it";
}

TEST(ErrorIndex, StopsAtItsLimitsAndCountsTheRest) {
  TempDir dir;
  auto index = ErrorIndex::Open(dir.path() / "e.log",
                                {.max_distinct = 3, .max_bytes = 1 << 20, .before = 0, .after = 0});
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

// The index as a TaskLog feeds it: every line, formatted as `<stamp> <line>`.
void Feed(ErrorIndex* index, const std::vector<std::string>& lines) {
  for (const std::string& l : lines) index->Consider(l, "2026-03-02T09:00:00.000000Z " + l + "\n");
  index->Flush();
}

TEST(ErrorIndex, KeepsTheLinesBeforeAndAfterEachFirstDistinctErrorOnce) {
  TempDir dir;
  auto index = ErrorIndex::Open(dir.path() / "e.log", {.before = 3, .after = 2});
  ASSERT_TRUE(index.ok());
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) lines.push_back("line " + std::to_string(i));
  lines[10] = "RuntimeError: shard 7 is corrupt";
  lines[12] = "RuntimeError: shard 9 is corrupt";  // the same signature, inside the window after
  lines[14] = "ValueError: bad batch";             // a new one whose window meets the last
  lines[30] = "RuntimeError: shard 3 is corrupt";  // seen before: no window
  Feed(&*index, lines);
  EXPECT_EQ(
      Payload(dir.path() / "e.log", /*notes=*/true),
      (std::vector<std::string>{"line 7", "line 8", "line 9", "RuntimeError: shard 7 is corrupt",
                                "line 11", "RuntimeError: shard 9 is corrupt", "line 13",
                                "ValueError: bad batch", "line 15", "line 16"}));
  EXPECT_EQ(index->counts().kept, 2u);
  EXPECT_EQ(index->counts().matched, 4u);
  EXPECT_EQ(index->counts().context_lines, 8u);
}

TEST(ErrorIndex, SaysHowManyLinesItSkippedBetweenWindows) {
  TempDir dir;
  auto index = ErrorIndex::Open(dir.path() / "e.log", {.before = 2, .after = 1});
  ASSERT_TRUE(index.ok());
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) lines.push_back("line " + std::to_string(i));
  lines[1] = "Traceback (most recent call last):";  // fewer lines before it than asked
  lines[20] = "NCCL WARN Net : Connection closed by remote peer";
  Feed(&*index, lines);
  EXPECT_EQ(Payload(dir.path() / "e.log", /*notes=*/true),
            (std::vector<std::string>{"line 0", "Traceback (most recent call last):", "line 2",
                                      "[denpex-run] --- 15 lines not copied here ---", "line 18",
                                      "line 19", "NCCL WARN Net : Connection closed by remote peer",
                                      "line 21"}));
}

TEST(ErrorIndex, PastItsContextBudgetKeepsTheErrorLinesAlone) {
  TempDir dir;
  auto index =
      ErrorIndex::Open(dir.path() / "e.log", {.before = 50, .after = 0, .max_context_bytes = 1000});
  ASSERT_TRUE(index.ok());
  std::vector<std::string> lines;
  for (int i = 0; i < 200; ++i) lines.push_back(Numbered(i));
  lines[60] = "AError";
  lines[190] = "BError";
  Feed(&*index, lines);
  const std::vector<std::string> kept = Payload(dir.path() / "e.log");
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.back(), "BError") << "the error line itself is never context";
  EXPECT_NE(std::find(kept.begin(), kept.end(), "AError"), kept.end());
  EXPECT_GT(index->counts().context_dropped, 0u);
  EXPECT_LE(index->counts().context_lines, 1000u / 70);
}

// Issue #31: a 100 MB log under a 1 MB cap. The first distinct error is deep in the middle the
// cap drops, and the index still holds the 50 lines before it (the step, the shard, the batch)
// and the 20 after.
TEST(CappedLog, A100MBLogUnderA1MBCapKeepsThe50LinesBeforeItsFirstDistinctError) {
  TempDir dir;
  constexpr std::uint64_t kCap = 1 << 20;
  auto log = TaskLog::Open(dir.path() / "rank_5.log", dir.path() / "rank_5.errors.log", kCap);
  ASSERT_TRUE(log.ok());
  const auto line = [](int i) {
    return "step " + std::to_string(i) + " loading shard " + std::to_string(i % 97) + " batch " +
           std::to_string(i * 3) + " " + std::string(60, '.');
  };
  constexpr int kLines = 1'100'000;  // ~100 bytes each with the stamp: ~110 MB
  constexpr int kError = 700'000;
  const std::string error = "RuntimeError: CUDA error: an illegal memory access was encountered";
  for (int i = 0; i < kLines; ++i) {
    log->AddLine(i == kError || i == kError + 500 ? error : line(i), kT0 + i);
    if (i % 64 == 63) log->Flush();
  }
  log->Flush();
  EXPECT_GE(log->log().counts().bytes, 100'000'000u);
  EXPECT_TRUE(log->log().counts().capped);
  const std::string main_log = ReadFile(dir.path() / "rank_5.log");
  EXPECT_LE(main_log.size(), kCap + 1024);
  EXPECT_EQ(main_log.find(error), std::string::npos) << "the cap dropped it from the log";
  EXPECT_EQ(main_log.find(" " + line(kError - 1) + "\n"), std::string::npos);

  const std::vector<std::string> kept = Payload(dir.path() / "rank_5.errors.log");
  std::vector<std::string> want;
  for (int i = kError - 50; i < kError; ++i) want.push_back(line(i));
  want.push_back(error);
  for (int i = kError + 1; i <= kError + 20; ++i) want.push_back(line(i));
  EXPECT_EQ(kept, want) << "one window; the repeat 500 lines later opens none";
  EXPECT_EQ(log->errors().counts().context_lines, 70u);
}

}  // namespace
}  // namespace denpex::cli::run
