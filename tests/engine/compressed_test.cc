// Compressed logs read back whole whatever their gzip trailer says: the inflate's buffer is
// first made the size the trailer gives (ISIZE, the last member's), then grown as the stream
// needs (engine/src/ingest/compressed.cc).
#include <gtest/gtest.h>

#include <string>

#include "denpex/engine/compressed.h"
#include "support/gzip.h"

namespace denpex::engine {
namespace {

using denpex::testing::Gzip;

// Lines of an NCCL log, `bytes` of them (whole lines).
std::string Log(std::size_t bytes, int seed) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) {
    text += "gpu-" + std::to_string(seed) + ":4000:" + std::to_string(4100 + i % 97) +
            " [0] NCCL INFO Channel " + std::to_string(i % 32) +
            "/0 : 0[0] -> 1[1] via P2P/IPC/read " + std::to_string(i) + "\n";
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
  // A trailer that lies (a size 100 times the text's): the whole text, and zlib's length check
  // says the stream is corrupt.
  std::string lying = Gzip(large);
  const std::uint32_t size = static_cast<std::uint32_t>(large.size()) * 100;
  for (int i = 0; i < 4; ++i)
    lying[lying.size() - 4 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  const DecompressedLog lied = DecompressLog(lying, kCap);
  EXPECT_EQ(lied.text, large);
  EXPECT_NE(lied.error.find("corrupt"), std::string::npos) << lied.error;
}

}  // namespace
}  // namespace denpex::engine
