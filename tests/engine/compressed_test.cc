// Compressed logs read back whole whatever their gzip trailer says: the inflate's buffer is
// first made the size the trailer gives (ISIZE, the last member's), then grown as the stream
// needs (engine/src/ingest/compressed.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "denpex/engine/compressed.h"
#include "ingest/compressed.h"
#include "ingest/file_text.h"
#include "ingest/load.h"
#include "support/gzip.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {

using denpex::testing::Gzip;

// Lines of NCCL chatter on host gpu-<seed>, `bytes` of them (whole lines): as repetitive as a
// real console's, so it compresses past 16:1.
std::string Log(std::size_t bytes, int seed) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) {
    text += "gpu-" + std::to_string(seed) + ":4000:" + std::to_string(4100 + i % 7) +
            " [0] NCCL INFO Channel " + std::to_string(i % 32) +
            "/0 : 0[0] -> 1[1] via P2P/IPC/read\n";
  }
  return text;
}

TEST(Compressed, AGzipLogComesBackWholeWhateverItsTrailerSays) {
  constexpr std::size_t kCap = std::size_t{1} << 30;
  for (const std::size_t bytes : {std::size_t{100}, std::size_t{3} << 20, std::size_t{9} << 20}) {
    const std::string text = Log(bytes, 1);
    const DecompressedLog one = DecompressLog(Gzip(text), kCap);
    EXPECT_EQ(one.codec, "gzip");
    EXPECT_EQ(one.error, "");
    EXPECT_EQ(one.text, text) << bytes;
  }
  // `cat a.gz b.gz`: the trailer at the end is b's, smaller or larger than the whole text.
  const std::string small = Log(std::size_t{2} << 20, 2), large = Log(std::size_t{5} << 20, 3);
  for (const auto& [a, b] : {std::pair{large, small}, std::pair{small, large}}) {
    const DecompressedLog two = DecompressLog(Gzip(a) + Gzip(b), kCap);
    EXPECT_EQ(two.error, "");
    EXPECT_EQ(two.text, a + b);
  }
  // A cap below the trailer's size: the text up to the cap, and the error says so.
  const DecompressedLog capped = DecompressLog(Gzip(large), std::size_t{3} << 20);
  EXPECT_EQ(capped.text, large.substr(0, std::size_t{3} << 20));
  EXPECT_NE(capped.error.find("more than 3145728 bytes"), std::string::npos) << capped.error;
  // A trailer that lies (twice the text's size): the whole text, and zlib's length check
  // says the stream is corrupt.
  std::string lying = Gzip(large);
  const std::uint32_t size = static_cast<std::uint32_t>(large.size()) * 2;
  for (int i = 0; i < 4; ++i)
    lying[lying.size() - 4 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  const DecompressedLog lied = DecompressLog(lying, kCap);
  EXPECT_EQ(lied.text, large);
  EXPECT_NE(lied.error.find("corrupt"), std::string::npos) << lied.error;
}

// A console of NCCL chatter compresses past 16:1 (logrotate's `.2.gz` of a large job's console:
// the 16k-rank scale incident's srun log 22:1): it is read whole, up to the size its gzip
// trailer gives, not cut at 16 times the file (64 MiB at least). A copy cut short (its last four
// bytes no trailer: they say any size) is read up to its break, and says so.
TEST(Compressed, AConsoleThatCompressesPastSixteenToOneIsReadWholeByItsTrailer) {
  const std::string text = Log(std::size_t{72} << 20, 1);
  const std::string gz = Gzip(text);
  ASSERT_GT(text.size(), gz.size() * 16);
  EXPECT_GE(InflateCap(gz), text.size());
  const denpex::testing::TempDir dir;
  std::ofstream(dir.path() / "console.log.2.gz", std::ios::binary) << gz;
  auto whole = FileText::Open(dir.path() / "console.log.2.gz");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(whole->compression(), "gzip");
  EXPECT_EQ(whole->problem(), "");
  EXPECT_TRUE(whole->view() == text);
  std::ofstream(dir.path() / "cut.log.gz", std::ios::binary) << gz.substr(0, gz.size() / 2);
  auto cut = FileText::Open(dir.path() / "cut.log.gz");
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  EXPECT_NE(cut->problem().find("before the break"), std::string::npos) << cut->problem();
  EXPECT_GT(cut->view().size(), 0u);
  EXPECT_TRUE(text.starts_with(cut->view()));
}

// A gzip log cut short loses text, and its problem is listed whatever else the incident holds:
// 48 nodes' rotated kernel logs (each stream a note that loses nothing) come after it, not
// before, in the list the report cuts at 40.
TEST(Compressed, AnIncompleteGzipLogIsListedBeforeTheNotesOfRotatedLogs) {
  const denpex::testing::TempDir dir;
  for (int n = 1; n <= 48; ++n) {
    char node[16];
    std::snprintf(node, sizeof node, "gpu-%04d", n);
    std::filesystem::create_directories(dir.path() / node);
    const std::string line =
        std::string("Mar  2 09:00:01 ") + node +
        " kernel: [   12.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n";
    std::ofstream(dir.path() / node / "kern.log.1") << line;
    std::ofstream(dir.path() / node / "kern.log") << line;
  }
  std::filesystem::create_directories(dir.path() / "zz-console");
  const std::string gz = Gzip(Log(std::size_t{4} << 20, 5));
  std::ofstream(dir.path() / "zz-console" / "train.log.gz", std::ios::binary)
      << gz.substr(0, gz.size() / 2);
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const std::vector<std::string>& problems = inc->input.problems;
  EXPECT_EQ(problems.size(), 40u);
  const auto cut = std::find_if(problems.begin(), problems.end(), [](const std::string& p) {
    return p.find("train.log.gz") != std::string::npos &&
           p.find("before the break") != std::string::npos;
  });
  EXPECT_NE(cut, problems.end());
  const auto note = [](const std::string& p) {
    return p.starts_with("rotated log read as one stream");
  };
  EXPECT_TRUE(std::is_partitioned(problems.begin(), problems.end(),
                                  [&](const std::string& p) { return !note(p); }));
  EXPECT_EQ(std::count_if(problems.begin(), problems.end(), note) + inc->input.problems_omitted,
            48);
}

// A log in UTF-16 with its byte order mark (Windows PowerShell 5.1's `kubectl logs … > pod.log`):
// read as its text in UTF-8, never skipped as a binary file for its NUL bytes; a pair of surrogates
// is one character, a lone one or a last odd byte U+FFFD; UTF-32's mark is no UTF-16's.
TEST(Compressed, AUtf16LogIsReadAsItsTextInUtf8) {
  const auto utf16 = [](std::u16string_view text, bool big_endian) {
    std::string out = big_endian ? "\xfe\xff" : "\xff\xfe";
    for (const char16_t u : text) {
      const char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
      out.push_back(big_endian ? hi : lo);
      out.push_back(big_endian ? lo : hi);
    }
    return out;
  };
  const std::u16string text = u"[rank3]:RuntimeError: CUDA error \u2014 \U0001F525\r\nnext\r\n";
  const std::string want = "[rank3]:RuntimeError: CUDA error \u2014 \U0001F525\r\nnext\r\n";
  for (const bool big_endian : {false, true}) {
    const DecompressedLog d = DecompressLog(utf16(text, big_endian), std::size_t{1} << 20);
    EXPECT_EQ(d.codec, big_endian ? "UTF-16BE" : "UTF-16LE");
    EXPECT_EQ(d.error, "");
    EXPECT_EQ(d.text, want);
  }
  EXPECT_EQ(DecompressLog(utf16(u"a\xD800"
                                u"b",
                                false) +
                              "c",
                          1 << 20)
                .text,
            "a\uFFFDb\uFFFD");
  EXPECT_EQ(CompressionOf(std::string("\xff\xfe\0\0[\0\0\0", 8)), Compression::kNone);

  const denpex::testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "gpu-0001");
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 2 has a total "
      "capacity of 79.15 GiB of which 581.00 MiB is free.";
  std::u16string log = u"[rank2]:Traceback (most recent call last):\r\n[rank2]:";
  for (const char c : oom) log.push_back(static_cast<char16_t>(c));
  log += u"\r\n";
  std::ofstream(dir.path() / "gpu-0001" / "rank_2.log", std::ios::binary) << utf16(log, false);
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  for (const std::string& p : inc->input.problems)
    EXPECT_EQ(p.find("binary"), std::string::npos) << p;
  const auto at = std::find_if(inc->events.begin(), inc->events.end(),
                               [](const Event& e) { return e.line == 2; });
  ASSERT_NE(at, inc->events.end());
  EXPECT_EQ(at->rank, 2);
  auto quoted = ReadSpan(dir.path() / "gpu-0001" / "rank_2.log", at->offset,
                         static_cast<std::uint32_t>(oom.size() + 8));
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(*quoted, "[rank2]:" + oom);
}

}  // namespace
}  // namespace denpex::engine
