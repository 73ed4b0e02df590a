// scan_bench: the trigger scan (LineFilter::Next) alone, over bytes already in memory, walked
// the way the parser walks a file without open records (from each hit's line end to the next
// hit). Prints the thread CPU time of the best repeat, GB/s per core, hits and newlines.
// Usage: scan_bench FILE [OFFSET [LENGTH [REPEAT]]]
//        scan_bench --candidates FILE [OFFSET [LENGTH [TOP]]]
//        scan_bench --build [REPEAT]
//        scan_bench --placement > engine/src/parse/filter_placement.inc
// --candidates: walks the same way one byte at a time (slow: ~s per GB) and counts the
// candidates (positions some bucket's tables accept) per bucket, the false ones (Verify finds
// no literal there) and the TOP (default 25) most frequent false 3-byte windows, with the
// buckets that accept them; then each bucket's literals and fingerprints.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "parse/triggers.h"

namespace {

double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

// Candidates of the scan over `text`, walked as the parser walks it: from a line start to the
// first candidate that verifies, then on from that line's end.
void CountCandidates(const denpex::engine::LineFilter& filter, std::string_view text, std::size_t top) {
  std::int64_t per_bucket[8] = {}, false_per_bucket[8] = {}, candidates = 0, false_candidates = 0, hits = 0;
  struct FalseWindow {
    std::int64_t count = 0;
    std::uint8_t buckets = 0;
    std::size_t first = 0;  // where it was first seen
  };
  std::unordered_map<std::uint32_t, FalseWindow> false_windows;  // by its bytes, little-endian
  for (std::size_t from = 0, q = 0; q < text.size(); ++q) {
    const std::uint8_t buckets = filter.BucketsAt(text, q);
    if (buckets == 0) continue;
    ++candidates;
    for (int b = 0; b < 8; ++b) per_bucket[b] += buckets >> b & 1;
    if (filter.VerifyAt(text, q, from, text.size()) != denpex::engine::TriggerLevel::kNone) {
      ++hits;
      const std::size_t end = text.find('\n', q);
      if (end == std::string_view::npos) break;
      from = end + 1;
      q = end;
      continue;
    }
    ++false_candidates;
    for (int b = 0; b < 8; ++b) false_per_bucket[b] += buckets >> b & 1;
    std::uint32_t window = 0;
    for (std::size_t k = 0; k < 3 && q + k < text.size(); ++k) {
      window |= static_cast<std::uint32_t>(static_cast<unsigned char>(text[q + k])) << (8 * k);
    }
    auto& w = false_windows[window];
    if (w.count++ == 0) w.first = q;
    w.buckets = buckets;
  }
  std::printf("%zu bytes: %lld candidates, %lld hits, %lld false\n", text.size(), static_cast<long long>(candidates),
              static_cast<long long>(hits), static_cast<long long>(false_candidates));
  for (int b = 0; b < 8; ++b) {
    std::printf("bucket %d: %lld candidates, %lld false\n", b, static_cast<long long>(per_bucket[b]),
                static_cast<long long>(false_per_bucket[b]));
  }
  std::vector<std::pair<std::int64_t, std::uint32_t>> order;
  for (const auto& [window, w] : false_windows) order.emplace_back(w.count, window);
  std::sort(order.begin(), order.end(), std::greater<>());
  std::printf("most frequent false windows (count, buckets, the line of the first):\n");
  for (std::size_t i = 0; i < order.size() && i < top; ++i) {
    const std::uint32_t window = order[i].second;
    const char bytes[3] = {static_cast<char>(window & 0xff), static_cast<char>(window >> 8 & 0xff),
                           static_cast<char>(window >> 16 & 0xff)};
    const FalseWindow& w = false_windows[window];
    std::string buckets;
    for (int b = 0; b < 8; ++b) {
      if (w.buckets >> b & 1) buckets += std::to_string(b);
    }
    const std::size_t begin = text.rfind('\n', w.first) + 1;  // npos + 1 = 0
    const std::string_view line = text.substr(begin, std::min<std::size_t>(text.find('\n', w.first), text.size()) - begin);
    std::printf("  '%s' %lld  %s  %s\n", Printable(std::string_view(bytes, 3)).c_str(), static_cast<long long>(w.count),
                buckets.c_str(), Printable(line.substr(0, 110)).c_str());
  }
  std::printf("%s", filter.Describe().c_str());
}

}  // namespace

// The filter's construction by the cost model (LineFilter(AllTriggers()), what writing
// parse/filter_placement.inc runs): the best thread CPU time of `repeat`, and a hash of the
// placement it makes (Describe), to see that a change to the construction left the placement as
// it was; then the construction every process pays once, from the shipped placement.
int TimeBuild(int repeat) {
  const std::vector<denpex::engine::Trigger> triggers = denpex::engine::AllTriggers();
  std::string placement;
  const auto best_of = [&](auto build) {
    double best = 1e300;
    for (int r = 0; r < repeat; ++r) {
      const double t0 = ThreadSeconds();
      const denpex::engine::LineFilter filter = build();
      best = std::min(best, ThreadSeconds() - t0);
      if (placement.empty()) placement = filter.Describe();
    }
    return best;
  };
  const double model = best_of([&] { return denpex::engine::LineFilter(triggers); });
  const double shipped = best_of(
      [&] { return denpex::engine::LineFilter(triggers, denpex::engine::ShippedPlacement()); });
  std::printf(
      "LineFilter of %zu literals: best of %d builds %.2f ms CPU; placement hash %016llx; "
      "placed as shipped %.3f ms\n",
      triggers.size(), repeat, model * 1e3,
      static_cast<unsigned long long>(std::hash<std::string>{}(placement)), shipped * 1e3);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--placement") {
    // The cost model's placement, for parse/filter_placement.inc.
    const std::vector<denpex::engine::Trigger> triggers = denpex::engine::AllTriggers();
    std::printf("%s", denpex::engine::LineFilter(triggers).PlacementFile().c_str());
    return 0;
  }
  if (argc > 1 && std::string_view(argv[1]) == "--build")
    return TimeBuild(argc > 2 ? std::atoi(argv[2]) : 20);
  const bool count_candidates = argc > 1 && std::string_view(argv[1]) == "--candidates";
  if (count_candidates) ++argv, --argc;
  if (argc < 2) {
    std::fprintf(stderr, "usage: scan_bench [--candidates] FILE [OFFSET [LENGTH [REPEAT or TOP]]]\n");
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
  if (count_candidates) {
    CountCandidates(filter, text, argc > 4 ? static_cast<std::size_t>(std::atoi(argv[4])) : 25);
    return 0;
  }
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
