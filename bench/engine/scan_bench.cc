// scan_bench: the trigger scan (LineFilter::Next) alone, over bytes already in memory, walked
// the way the parser walks a file without open records (from each hit's line end to the next
// hit). Prints the thread CPU time of the best repeat, GB/s per core, hits and newlines.
// Usage: scan_bench FILE [OFFSET [LENGTH [REPEAT]]]
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "parse/triggers.h"

namespace {

double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: scan_bench FILE [OFFSET [LENGTH [REPEAT]]]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "scan_bench: cannot open %s\n", argv[1]);
    return 1;
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  const std::uint64_t offset = argc > 2 ? std::min<std::uint64_t>(std::strtoull(argv[2], nullptr, 10), size) : 0;
  const std::uint64_t length = argc > 3 ? std::min<std::uint64_t>(std::strtoull(argv[3], nullptr, 10), size - offset) : size - offset;
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 5;
  std::string text(length, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(text.data(), static_cast<std::streamsize>(length));

  const auto& filter = denpex::engine::LineFilter::Default();
  double best = 1e300;
  std::int64_t hits = 0, newlines = 0, long_lines = 0, prefix = 0;
  for (int r = 0; r < repeat; ++r) {
    hits = newlines = long_lines = prefix = 0;
    const double t0 = ThreadSeconds();
    for (std::size_t pos = 0; pos < text.size();) {
      const auto f = filter.Next(text, pos, 65536, true);  // as for an srun-labelled log
      newlines += f.newlines;
      long_lines += f.long_lines;
      if (!f.found) break;
      ++hits;
      prefix += f.level == denpex::engine::TriggerLevel::kPrefix ? 1 : 0;
      pos = f.end + 1;
    }
    best = std::min(best, ThreadSeconds() - t0);
  }
  std::printf("%llu bytes: %.4f CPU-s, %.2f GB/s; %lld hits (%lld prefix), %lld newlines skipped, %lld long\n",
              static_cast<unsigned long long>(length), best, static_cast<double>(length) / best / 1e9,
              static_cast<long long>(hits), static_cast<long long>(prefix), static_cast<long long>(newlines),
              static_cast<long long>(long_lines));
  return 0;
}
