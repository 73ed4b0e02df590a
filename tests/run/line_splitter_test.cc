// Line splitting and line formatting of `denpex run`: partial last lines, CRLF, a 10 MB line,
// NUL bytes, the per-line stamp, and the error signatures.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "denpex/common/time.h"
#include "run/line_splitter.h"
#include "run/posix_io.h"
#include "run/task_log.h"
#include "run_test_util.h"

namespace denpex::cli::run {
namespace {

using run_test::Payload;
using run_test::ReadFile;
using run_test::TempDir;

struct Collected {
  std::vector<std::pair<std::string, TimeNs>> lines;
  auto Sink() {
    return [this](std::string_view l, TimeNs t) { lines.emplace_back(std::string(l), t); };
  }
};

TEST(LineSplitter, HoldsAPartialLineUntilItsNewlineOrFinish) {
  LineSplitter s;
  Collected c;
  s.Feed("one\ntw", 1, c.Sink());
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_TRUE(s.has_partial());
  s.Feed("o\nthree", 2, c.Sink());
  s.Finish(c.Sink());
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[1].first, "two");
  EXPECT_EQ(c.lines[1].second, 1) << "a line carries the time its first byte was read";
  EXPECT_EQ(c.lines[2].first, "three");
  EXPECT_FALSE(s.has_partial());
}

TEST(LineSplitter, DropsTheCrOfCrlfButKeepsOtherCarriageReturns) {
  LineSplitter s;
  Collected c;
  s.Feed("dos\r\nbar 10%\rbar 20%\r\nsplit\r", 1, c.Sink());
  s.Feed("\nend\r", 2, c.Sink());
  s.Finish(c.Sink());
  ASSERT_EQ(c.lines.size(), 4u);
  EXPECT_EQ(c.lines[0].first, "dos");
  EXPECT_EQ(c.lines[1].first, "bar 10%\rbar 20%");
  EXPECT_EQ(c.lines[2].first, "split") << "a CRLF split across two reads";
  EXPECT_EQ(c.lines[3].first, "end\r") << "a last line without newline is kept as it is";
}

TEST(LineSplitter, CutsATenMegabyteLineIntoPiecesAndLosesNoByte) {
  LineSplitter s;
  Collected c;
  const std::size_t total = 10u << 20;
  std::string chunk(65536 + 17, 'x');
  std::size_t fed = 0;
  while (fed < total) {
    const std::size_t n = std::min(chunk.size(), total - fed);
    s.Feed(std::string_view(chunk).substr(0, n), 1, c.Sink());
    fed += n;
  }
  s.Feed("\nnext\n", 2, c.Sink());
  std::size_t bytes = 0;
  for (std::size_t i = 0; i + 1 < c.lines.size(); ++i) {
    EXPECT_LE(c.lines[i].first.size(), kMaxLineBytes);
    bytes += c.lines[i].first.size();
  }
  EXPECT_EQ(bytes, total);
  EXPECT_EQ(c.lines.size(), total / kMaxLineBytes + 1) << "pieces of 64 KiB, then the next line";
  EXPECT_EQ(c.lines.back().first, "next");
}

TEST(LineSplitter, ALineOfExactlyTheLimitIsOneLine) {
  LineSplitter s(8);
  Collected c;
  s.Feed("12345678", 1, c.Sink());
  s.Feed("\nab\n", 2, c.Sink());
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].first, "12345678");
  EXPECT_EQ(c.lines[1].first, "ab");
}

TEST(LineSplitter, PassesNulAndNonUtf8BytesThrough) {
  LineSplitter s;
  Collected c;
  const std::string bytes("a\0b\xff\xfe\n", 6);
  s.Feed(bytes, 1, c.Sink());
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0].first, std::string("a\0b\xff\xfe", 5));
}

TEST(Stamp, IsRfc3339UtcWithMicroseconds) {
  const TimeNs t = *ParseRfc3339("2026-03-02T09:00:41.123456789Z");
  EXPECT_EQ(FormatStamp(t), "2026-03-02T09:00:41.123456Z");
  EXPECT_EQ(FormatStamp(*ParseRfc3339("2026-12-31T23:59:59Z")), "2026-12-31T23:59:59.000000Z");
}

TEST(TaskLog, WritesEachLineWithItsStampAndEscapesNul) {
  TempDir dir;
  auto log = TaskLog::Open(dir.path() / "rank_0.log", dir.path() / "rank_0.errors.log", 0);
  ASSERT_TRUE(log.ok()) << log.status().message();
  const TimeNs t = *ParseRfc3339("2026-03-02T09:00:41.000001Z");
  log->AddLine("first", t);
  log->AddLine(std::string_view("nul\0here", 8), t + 999'999'000);  // same second
  log->AddLine("", t + kNsPerSec);                                  // next second, empty line
  log->AddNote("pid 7 exited with code 0", t + 2 * kNsPerSec);
  log->Flush();
  EXPECT_EQ(ReadFile(dir.path() / "rank_0.log"),
            "2026-03-02T09:00:41.000001Z first\n"
            "2026-03-02T09:00:42.000000Z nul\\x00here\n"
            "2026-03-02T09:00:42.000001Z \n"
            "2026-03-02T09:00:43.000001Z [denpex-run] pid 7 exited with code 0\n");
  EXPECT_EQ(log->log().counts().lines, 4u);
}

TEST(ErrorSignature, MasksNumbersAndHexSoRepeatsShareOne) {
  EXPECT_EQ(
      MaskedSignature(
          "[rank12]: RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
          "[127.0.0.1]:45775"),
      "[rank#]: RuntimeError: [./gloo/transport/tcp/pair.cc:#] Connection closed by peer "
      "[#.#.#.#]:#");
  EXPECT_EQ(MaskedSignature("frame #3: 0x7f3c6e4c1480 in libc"), "frame ##: 0x# in libc");
  EXPECT_EQ(MaskedSignature(std::string(1000, 'a')).size(), 256u);
}

TEST(ErrorSignature, RecognisesTheErrorLookingLines) {
  for (const char* l :
       {"RuntimeError: x", "srun: error: sn01: task 1: Killed",
        "Traceback (most recent call last):", "train.py FAILED",
        "NCCL WARN Net : Connection closed", "[E ProcessGroupNCCL.cpp:607] Watchdog caught",
        "CUDA error: an illegal memory access", "torch.cuda.OutOfMemoryError: CUDA out of memory",
        "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."}) {
    EXPECT_TRUE(LooksLikeError(l)) << l;
  }
  for (const char* l :
       {"rank=3 step=4/20 loss=0.1", "saved checkpoint", "errors=0", "no failure"}) {
    EXPECT_FALSE(LooksLikeError(l)) << l;
  }
}

}  // namespace
}  // namespace denpex::cli::run
