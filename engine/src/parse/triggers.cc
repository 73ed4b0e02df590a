#include "parse/triggers.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#include "parse/recognisers.h"
#include "parse/scan.h"
#include "parse/simd.h"

namespace denpex::engine {
namespace {

// Lines of the kinds that make up most of a large incident: the fingerprints are placed on bytes
// that are rare in them (a bucket accepts the cross product of its literals' nibbles, so it also
// matters which literals share one). Each kind weighs 1 in all, shared by its variants: NCCL's
// channel lines (P2P and NET transports), its proxy lines and its transport line come in several
// copies with other numbers, hex and words, so that a bucket is not fitted to one copy's digits
// (the benchmark's padding writes `P2P/IPC`, `[RO]` and other hex than the first copies; a
// window the model never saw can land in any bucket). The kinds NCCL prints per channel and peer
// are kept out (`kept_out`): no bucket may accept their windows where another choice exists; a
// larger weight instead traded other logs' false candidates for theirs. The other kinds are what
// every rank prints once or a few times: NCCL's init lines, c10's backtrace frames, torch's
// warnings, rules and nvidia-smi's table. The init lines NCCL prints once per communicator weigh
// 2: a training job's rank holds several communicators (its world, tensor-, pipeline- and data-
// parallel groups), and each prints them (docs/benchmarks.md, "The pre-filter's sample").
struct SampleLine {
  double weight;
  std::string_view text;  // one line, without its newline
  bool kept_out = false;  // a kind printed per channel or peer: see kKeptOutWeight
};
constexpr SampleLine kChatter[] = {
    {1.0 / 4,
     "12493: gpu-1562:2752775:2752775 [5] NCCL INFO Channel 01/0 : 12493[5] -> 12494[6] via "
     "P2P/CUMEM/read",
     true},
    {1.0 / 4,
     "gpu-0347:1372903:1373011 [2] NCCL INFO Channel 17/0 : 2770[2] -> 2771[3] via P2P/IPC/read",
     true},
    {1.0 / 4,
     " 3491: gpu-0437:993821:993821 [3] NCCL INFO Channel 09/0 : 52[3] -> 53[3] [send] via "
     "NET/IB/3/GDRDMA",
     true},
    {1.0 / 4,
     "gpu-1093:60212:60390 [0] NCCL INFO Channel 26/1 : 8736[0] -> 8744[0] [receive] via "
     "NET/IB/0/GDRDMA",
     true},
    {1.0 / 3,
     "gpu-0860:4007:4104 [7] NCCL INFO [Proxy Service 3] Connected to proxy localRank 7 -> "
     "connection 0x7f00012345",
     true},
    {1.0 / 3,
     "gpu-1091:4007:4208 [4] NCCL INFO [Proxy Service 12] Connected to proxy localRank 4 -> "
     "connection 0x7f3c9a0bd8e0",
     true},
    {1.0 / 3,
     "gpu-0214:4003:4224 [3] NCCL INFO [Proxy Service UDS] Connected to proxy localRank 3 -> "
     "connection 0x7fa4c2d1b650",
     true},
    {2, "gpu-0218:635442:635442 [6] NCCL INFO Trees [0] 90/-1/-1->89->88"},
    {2, "gpu-0221:2777299:2777299 [3] NCCL INFO Connected all rings"},
    {2, "gpu-0816:2105886:2105886 [7] NCCL INFO Setting affinity for GPU 7 to 00000000,ffffffff"},
    {2, "gpu-0231:692725:692725 [7] NCCL INFO threadThresholds 8/8/64 | 128/8/64 | 512 | 512"},
    {2,
     "gpu-0231:692725:692725 [7] NCCL INFO 32 coll channels, 32 collnet channels, 0 nvls channels, "
     "32 p2p channels, 32 p2p channels per peer"},
    {2, "gpu-0231:692725:692725 [7] NCCL INFO P2P Chunksize set to 524288"},
    {1,
     "gpu-0231:692725:692725 [7] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using "
     "internal network plugin."},
    {1, "gpu-0231:692725:692725 [7] NCCL INFO cudaDriverVersion 12020"},
    {1, "gpu-0231:692725:692725 [7] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>"},
    {1.0 / 2,
     "gpu-1462:70476:70476 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB "
     "ib0:10.64.5.155<0>",
     true},
    {1.0 / 2,
     "gpu-0419:4005:4005 [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
     "[RO]; OOB ib0:10.8.3.1<0>",
     true},
    {2,
     "gpu-1558:2726437:2726437 [6] NCCL INFO comm 0x550f824207d0 rank 12462 nranks 16384 cudaDev 6 "
     "nvmlDev 6 busId ba000 commId 0x74766af07776959e - Init START"},
    {1,
     " [2026-03-02 08:52:02] iteration 2/ 100000 | consumed samples: 1024 | elapsed time per "
     "iteration (ms): 1500.2 | learning rate: 3.0E-04 | lm loss: 2.002E+00 | loss scale: 1.0 | "
     "grad norm: 0.02 |"},
    {1,
     "[I302 09:00:02.353504107 ProcessGroupNCCL.cpp:912] [PG 0 (default_pg) Rank 3] "
     "ProcessGroupNCCL initialization options: size: 16384, global rank: 3, TIMEOUT(ms): 600000, "
     "USE_HIGH_PRIORITY_STREAM: 0"},
    {1,
     "/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is "
     "deprecated. It will be removed in the future and UntypedStorage will be the only storage "
     "class."},
    {1, "  return self.fget.__get__(instance, owner)()"},
    {1, "frame #6: clone + 0x44 (0x7f042bd90850 in /lib/x86_64-linux-gnu/libc.so.6)"},
    {1,
     "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f21b2536873 in "
     "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)"},
    {1,
     "frame #4: <unknown function> + 0xdc253 (0x7f36ac3e4253 in "
     "/lib/x86_64-linux-gnu/libstdc++.so.6)"},
    {1,
     "frame #1: "
     "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
     "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f21b252fa92 in "
     "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)"},
    {1,
     "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f21b2537b1c in "
     "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)"},
    {1,
     "[W socket.cpp:697] [c10d] The client socket cannot be initialized to connect to "
     "[localhost]:29500 (errno: 97 - Address family not supported by protocol)."},
    {1,
     "I0302 09:00:01.123000 12345 torch/distributed/run.py:792] Starting elastic_operator with "
     "launch configs:"},
    {1, "------------------------------------------------------------"},
    {1.0 / 4,
     "+---------------------------------------------------------------------------------------+"},
    {1.0 / 4,
     "| NVIDIA-SMI 535.161.08             Driver Version: 535.161.08   CUDA Version: 12.2     |"},
    {1.0 / 4,
     "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |"},
    {1.0 / 4,
     "| N/A   31C    P0             110W / 700W |      4MiB / 81559MiB |      0%      Default |"},
    {1,
     "Jan 22 12:35:09 gpu-0001 kernel: [    4.509753] mlx5_core 0000:0c:00.0: firmware version: "
     "28.39.2048"},
};

constexpr std::size_t SampleBytes() {
  std::size_t n = 0;
  for (const SampleLine& l : kChatter) n += l.text.size() + 1;
  return n;
}

// How much more a match in kChatter counts than the chance estimate from byte frequencies.
// Each sample line stands for a kind of line that a large job prints millions of times, so a
// fingerprint that matches one of them fires on every such line, while the estimate is only a
// guess. Counted once, the sample would let fingerprints of its frequent words (`Pro` of
// "[Proxy Service", `han` of "Channel", half of NCCL INFO output) into crowded buckets; counted
// twice, it keeps them out without fitting the buckets to its exact digits (the weights measured:
// docs/benchmarks.md, "The pre-filter's sample").
constexpr double kSampleMatchWeight = 2;

// What a window of a kept-out kind weighs more than its line: these kinds are a large log's
// commonest lines (NCCL prints them per channel and per peer, dozens per communicator and rank), so
// a bucket that accepts one of their windows is worse than nearly any other choice.
constexpr double kKeptOutWeight = 1000;

constexpr std::uint16_t kAllNibbles = 0xffff;

// Nibble sets of one bucket, per fingerprint byte.
struct NibbleSets {
  std::uint16_t lo[3] = {0, 0, 0};
  std::uint16_t hi[3] = {0, 0, 0};
};

NibbleSets With(NibbleSets s, std::string_view lit, std::size_t offset) {
  for (int k = 0; k < 3; ++k) {
    if (offset + k < lit.size()) {
      const auto c = static_cast<unsigned char>(lit[offset + k]);
      s.lo[k] |= static_cast<std::uint16_t>(1u << (c & 15));
      s.hi[k] |= static_cast<std::uint16_t>(1u << (c >> 4));
    } else {  // a 2-byte literal: any third byte
      s.lo[k] = s.hi[k] = kAllNibbles;
    }
  }
  return s;
}

// How often a bucket's fingerprint would fire on chatter: its matches in kChatter (weighted by
// the lines' weights and kSampleMatchWeight), plus the chance under independent byte frequencies
// (for patterns the sample happens not to hold).
class CostModel {
 public:
  explicit CostModel(std::span<const Trigger> triggers) {
    for (double& f : freq_) f = 0.05;
    for (const SampleLine& line : kChatter) {
      for (char c : line.text) freq_[static_cast<unsigned char>(c)] += line.weight;
      sample_ += line.text;
      sample_ += '\n';
      weight_.resize(sample_.size(), 0);
      const std::size_t scanned = ScannedWindows(line.text, triggers);
      const double weight = line.kept_out ? line.weight * kKeptOutWeight : line.weight;
      for (std::size_t i = 0; i < scanned; ++i)
        weight_[sample_.size() - line.text.size() - 1 + i] = weight;
      total_ += line.weight * static_cast<double>(line.text.size() + 1);
    }
    double total = 0;
    for (double f : freq_) total += f;
    for (double& f : freq_) f /= total;
    for (unsigned h = 0; h < 16; ++h) {
      for (unsigned g = 0; g < 4; ++g) {
        for (unsigned m = 0; m < 16; ++m) {
          for (unsigned j = 0; j < 4; ++j) row_[h][g][m] += (m >> j & 1) != 0 ? freq_[h << 4 | (4 * g + j)] : 0;
        }
      }
    }
    // The sample's 3-byte windows that the scan reaches: sorted (for Exact), and numbered, as bit
    // sets per byte k and nibble set: by_lo_[k][g][m], bit n: window n's byte k has a low nibble
    // 4g + j for a bit j of m (four nibbles at a time, so that a bucket's set is 4 unions, not 16).
    std::vector<std::uint32_t> numbered;
    for (std::size_t i = 0; i + 2 < sample_.size(); ++i) {
      if (weight_[i] == 0) continue;
      windows_.push_back({Window(i), weight_[i]});
      numbered.push_back(Window(i));
      window_weight_.push_back(weight_[i]);
    }
    words_ = (numbered.size() + 63) / 64;
    by_lo_.assign(3 * 4 * 16, Bits{});
    by_hi_.assign(3 * 4 * 16, Bits{});
    for (std::size_t n = 0; n < numbered.size(); ++n) {
      for (int k = 0; k < 3; ++k) {
        const unsigned c = numbered[n] >> (8 * k) & 0xff;
        for (unsigned m = 0; m < 16; ++m) {
          if (m >> ((c & 15) % 4) & 1) by_lo_[Group(k, static_cast<int>((c & 15) / 4), m)][n / 64] |= std::uint64_t{1} << (n % 64);
          if (m >> ((c >> 4) % 4) & 1) by_hi_[Group(k, static_cast<int>((c >> 4) / 4), m)][n / 64] |= std::uint64_t{1} << (n % 64);
        }
      }
    }
    std::sort(windows_.begin(), windows_.end(), [](const Counted& a, const Counted& b) { return a.bytes < b.bytes; });
  }
  double operator()(const NibbleSets& s) const { return WithChance(s, Chance(s)); }
  // The chance part alone: a bucket's cost is never below it (its sample hits only add), so a
  // choice whose chance already costs more than the best so far is passed without the hits.
  double Chance(const NibbleSets& s) const {
    double p = 1;
    for (int k = 0; k < 3; ++k) {
      double q = 0;
      for (unsigned hi = s.hi[k]; hi != 0; hi &= hi - 1) {
        for (unsigned g = 0; g < 4; ++g) q += row_[std::countr_zero(hi)][g][s.lo[k] >> (4 * g) & 15];
      }
      p *= q;
    }
    return p;
  }
  // The cost of `s`, whose Chance is `p`.
  double WithChance(const NibbleSets& s, double p) const {
    if (p == 0) return 0;
    Bits accepted;
    accepted.fill(~std::uint64_t{0});
    for (int k = 0; k < 3; ++k) {
      Bits lo{}, hi{};
      for (int g = 0; g < 4; ++g) {
        if (const unsigned m = s.lo[k] >> (4 * g) & 15; m != 0) Or(by_lo_[Group(k, g, m)], &lo);
        if (const unsigned m = s.hi[k] >> (4 * g) & 15; m != 0) Or(by_hi_[Group(k, g, m)], &hi);
      }
      for (std::size_t w = 0; w < words_; ++w) accepted[w] &= lo[w] & hi[w];
    }
    double hits = 0;  // few: a bucket that accepts many sample windows is never chosen
    for (std::size_t w = 0; w < words_; ++w) {
      for (std::uint64_t bits = accepted[w]; bits != 0; bits &= bits - 1) hits += window_weight_[w * 64 + std::countr_zero(bits)];
    }
    return p + kSampleMatchWeight * hits / total_;
  }
  // How often one exact fingerprint fires: its matches in kChatter (weighted), plus its chance
  // under independent bytes.
  double Exact(std::string_view lit, std::size_t offset) const {
    double p = 1;
    for (std::size_t k = offset; k < offset + 3 && k < lit.size(); ++k) p *= freq_[static_cast<unsigned char>(lit[k])];
    return p + Matches(lit, offset);
  }
  // Its matches in kChatter alone (weighted): each one costs a verification (a string compare)
  // on every line of that kind, even where the bucket would fire anyway.
  double Matches(std::string_view lit, std::size_t offset) const {
    double hits = 0;
    if (offset + 3 <= lit.size()) {
      const std::uint32_t bytes = static_cast<unsigned char>(lit[offset]) | static_cast<unsigned char>(lit[offset + 1]) << 8 |
                                  static_cast<std::uint32_t>(static_cast<unsigned char>(lit[offset + 2])) << 16;
      auto it = std::lower_bound(windows_.begin(), windows_.end(), bytes,
                                 [](const Counted& w, std::uint32_t b) { return w.bytes < b; });
      for (; it != windows_.end() && it->bytes == bytes; ++it) hits += it->weight;
    }
    return kSampleMatchWeight * hits / total_;
  }

 private:
  static constexpr std::size_t kWords = (SampleBytes() + 63) / 64;
  using Bits = std::array<std::uint64_t, kWords>;  // bit n: window n (of those the scan looks at)
  struct Counted {
    std::uint32_t bytes;  // little-endian
    double weight;
  };
  // How many of the line's windows the scan may look at. It stops at a line's first trigger
  // (ParseLog reads that line and goes on from its end), so what follows the first trigger of a
  // sample line is never a candidate. Counted, the progress line's `samples` and `elapsed`
  // after its `] iteration ` weighed as much as NCCL's `[Proxy Service N]`, whose every window
  // the scan reads. Where the literal's fingerprint will sit is not known here: every window up
  // to the last place it may sit counts.
  static std::size_t ScannedWindows(std::string_view line, std::span<const Trigger> triggers) {
    std::size_t scanned = line.size();
    for (const Trigger& t : triggers) {
      if (t.literal.size() < 2) continue;
      const std::size_t at = line.find(t.literal);
      if (at != std::string_view::npos) scanned = std::min(scanned, at + t.literal.size() - std::min<std::size_t>(t.literal.size(), 3) + 1);
    }
    return scanned;
  }
  void Or(const Bits& from, Bits* into) const {
    for (std::size_t w = 0; w < words_; ++w) (*into)[w] |= from[w];
  }
  // Where the union of nibble group g's nibbles m (bit j: nibble 4g + j) of byte k is kept.
  static std::size_t Group(int k, int g, unsigned m) { return static_cast<std::size_t>((k * 4 + g) * 16) + m; }
  unsigned char At(std::size_t i) const { return i < sample_.size() ? static_cast<unsigned char>(sample_[i]) : 0; }
  std::uint32_t Window(std::size_t i) const {
    return static_cast<std::uint32_t>(At(i)) | static_cast<std::uint32_t>(At(i + 1)) << 8 | static_cast<std::uint32_t>(At(i + 2)) << 16;
  }
  std::string sample_;           // the lines of kChatter, each with its newline
  std::vector<double> weight_;   // per window of sample_: its line's weight, 0 where the scan never looks
  double total_ = 0;             // weighted bytes of the sample
  double freq_[256];
  double row_[16][4][16] = {};  // [high nibble h][group g][m]: the frequencies of bytes h:4g+j, j in m
  std::vector<Counted> windows_;  // the windows the scan looks at
  std::vector<double> window_weight_;  // ... by number
  std::size_t words_ = 0;              // of a Bits that number them
  std::vector<Bits> by_lo_, by_hi_;    // see the constructor
};

bool IsRecord(TriggerLevel l) { return l == TriggerLevel::kRecord; }

#ifdef DENPEX_X86
// The 32 positions at p: bit j of the result is set when a fingerprint may start at p + j;
// bit j of *newlines when p[j] is '\n'. Reads p[0..34).
struct Avx2Block {
  __m256i lo[3], hi[3];

  DENPEX_AVX2 explicit Avx2Block(const std::array<std::array<unsigned char, 16>, 3>& l,
                                 const std::array<std::array<unsigned char, 16>, 3>& h) {
    for (int k = 0; k < 3; ++k) {
      lo[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l[k].data())));
      hi[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h[k].data())));
    }
  }
  // The bucket bits of the 32 positions at p (a byte is nonzero where a fingerprint may start).
  DENPEX_AVX2 __m256i Buckets(const unsigned char* p) const {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256i acc = _mm256_set1_epi8(-1);
    for (int k = 0; k < 3; ++k) {
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k));
      // A byte over 0x7f looks up 0 (no bucket): right for the first two fingerprint bytes,
      // which are ASCII (the constructor checks), not for the third, which a 2-byte literal
      // lets be anything; leaving out the mask saves 2 of the 46 vector operations per 32 bytes.
      const __m256i l = _mm256_shuffle_epi8(lo[k], k < 2 ? c : _mm256_and_si256(c, low4));
      const __m256i h = _mm256_shuffle_epi8(hi[k], _mm256_and_si256(_mm256_srli_epi16(c, 4), low4));
      acc = _mm256_and_si256(acc, _mm256_and_si256(l, h));
    }
    return acc;
  }
  static DENPEX_AVX2 std::uint32_t NonZero(__m256i v) {
    return ~static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256())));
  }
  // 64 positions at p: whether any may start a fingerprint (one test for both halves: the masks
  // of the candidates are made only when there is one, 6 fewer operations per 64 bytes), the
  // candidates themselves, and the newlines. Reads p[0..66).
  struct Step {
    __m256i lo, hi;
    std::uint64_t newlines;
  };
  DENPEX_AVX2 Step Step64(const unsigned char* p) const {
    const __m256i a = Buckets(p), b = Buckets(p + 32);
    return {a, b, Newlines64(p)};
  }
  static DENPEX_AVX2 bool Any(const Step& s) {
    const __m256i either = _mm256_or_si256(s.lo, s.hi);
    return !_mm256_testz_si256(either, either);
  }
  static DENPEX_AVX2 std::uint64_t Candidates(const Step& s) {
    return NonZero(s.lo) | static_cast<std::uint64_t>(NonZero(s.hi)) << 32;
  }
  DENPEX_AVX2 std::uint64_t Newlines64(const unsigned char* p) const {
    return Newlines(p) | static_cast<std::uint64_t>(Newlines(p + 32)) << 32;
  }
  DENPEX_AVX2 std::uint32_t operator()(const unsigned char* p, std::uint32_t* newlines) const {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    __m256i acc = _mm256_set1_epi8(-1);
    for (int k = 0; k < 3; ++k) {
      const __m256i c = k == 0 ? c0 : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k));
      // A byte over 0x7f looks up 0 (no bucket): right for the first two fingerprint bytes,
      // which are ASCII (the constructor checks), not for the third, which a 2-byte literal
      // lets be anything; leaving out the mask saves 2 of the 46 vector operations per 32 bytes.
      const __m256i l = _mm256_shuffle_epi8(lo[k], k < 2 ? c : _mm256_and_si256(c, low4));
      const __m256i h = _mm256_shuffle_epi8(hi[k], _mm256_and_si256(_mm256_srli_epi16(c, 4), low4));
      acc = _mm256_and_si256(acc, _mm256_and_si256(l, h));
    }
    *newlines = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c0, _mm256_set1_epi8('\n'))));
    const auto none = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(acc, _mm256_setzero_si256())));
    return ~none;
  }
  // Bit j: p[j] is '\n' (reads p[0..32)).
  DENPEX_AVX2 std::uint32_t Newlines(const unsigned char* p) const {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('\n'))));
  }
  // Bit j: p[j] is a label colon (reads p[-1..33)).
  static DENPEX_AVX2 std::uint32_t LabelColons(const unsigned char* p) { return LabelColonMask32(p); }
};
#endif

// The same, one byte at a time (CPUs without AVX2).
struct ScalarBlock {
  const std::array<std::array<unsigned char, 16>, 3>& lo;
  const std::array<std::array<unsigned char, 16>, 3>& hi;

  struct Step {
    std::uint64_t candidates, newlines;
  };
  Step Step64(const unsigned char* p) const {
    std::uint32_t nl_lo, nl_hi;
    const std::uint32_t lo_cand = (*this)(p, &nl_lo), hi_cand = (*this)(p + 32, &nl_hi);
    return {lo_cand | static_cast<std::uint64_t>(hi_cand) << 32, nl_lo | static_cast<std::uint64_t>(nl_hi) << 32};
  }
  static bool Any(const Step& s) { return s.candidates != 0; }
  static std::uint64_t Candidates(const Step& s) { return s.candidates; }
  std::uint32_t operator()(const unsigned char* p, std::uint32_t* newlines) const {
    std::uint32_t cand = 0, nl = 0;
    for (int j = 0; j < 32; ++j) {
      unsigned char m = 0xff;
      for (int k = 0; k < 3; ++k) m &= lo[k][p[j + k] & 15] & hi[k][p[j + k] >> 4];
      cand |= (m != 0 ? 1u : 0u) << j;
      nl |= (p[j] == '\n' ? 1u : 0u) << j;
    }
    *newlines = nl;
    return cand;
  }
  std::uint32_t Newlines(const unsigned char* p) const {
    std::uint32_t nl = 0;
    for (int j = 0; j < 32; ++j) nl |= (p[j] == '\n' ? 1u : 0u) << j;
    return nl;
  }
  static std::uint32_t LabelColons(const unsigned char* p) {
    std::uint32_t m = 0;
    for (int j = 0; j < 32; ++j) m |= (IsLabelColonAt(p + j) ? 1u : 0u) << j;
    return m;
  }
};

// How many places a literal's fingerprint may start at: each 3-byte window, or the one 2-byte
// literal's.
std::size_t FingerprintOffsets(std::string_view literal) {
  return literal.size() >= 3 ? literal.size() - 2 : 1;
}

// Where a literal's fingerprint starts and the bucket that holds it.
struct Placement {
  Trigger trigger;
  std::size_t offset = 0;
  std::size_t bucket = 0;
};

// The greedy choice places each literal knowing only those before it. A pass moves each literal
// in turn to the fingerprint and bucket where the model's total cost is least (its bucket's
// nibble sets rebuilt without it); passes run until nothing moves (kMaxPasses bounds them). Each
// pass lowers the model's cost, and the logs' false candidates with it on nearly every log
// measured (docs/benchmarks.md, cand8 and "The pre-filter's sample").
constexpr int kMaxPasses = 20;

// `costs[b]` is cost_of((*sets)[b]), kept up to date as literals move: for each literal only the
// bucket it would leave is evaluated again, not all eight (the same placement; the model's build
// 39.8 → 32.2 M instructions).
bool ImproveOnce(const CostModel& cost_of, std::vector<Placement>* placed,
                 std::array<NibbleSets, 8>* sets, std::array<double, 8>* costs) {
  bool moved = false;
  for (std::size_t i = 0; i < placed->size(); ++i) {
    Placement& p = (*placed)[i];
    const std::string_view lit = p.trigger.literal;
    NibbleSets without{};
    for (std::size_t j = 0; j < placed->size(); ++j) {
      if (j != i && (*placed)[j].bucket == p.bucket) without = With(without, (*placed)[j].trigger.literal, (*placed)[j].offset);
    }
    std::array<NibbleSets, 8> others = *sets;
    others[p.bucket] = without;
    std::array<double, 8> base = *costs;
    base[p.bucket] = cost_of(without);
    const double now = cost_of(With(without, lit, p.offset)) - base[p.bucket] + cost_of.Matches(lit, p.offset);
    std::size_t best_offset = p.offset, best_bucket = p.bucket;
    double best = now;
    const std::size_t offsets = FingerprintOffsets(lit);
    for (std::size_t off = 0; off < offsets; ++off) {
      // A bucket only adds to the compares of the fingerprint itself (the cost grows with the
      // nibble sets), so an offset whose compares alone cost more is no better anywhere.
      const double matches = cost_of.Matches(lit, off);
      if (matches >= best) continue;
      for (std::size_t b = 0; b < 8; ++b) {
        const NibbleSets with = With(others[b], lit, off);
        const double chance = cost_of.Chance(with), bar = best - 1e-12 * (1 + now);
        if (chance - base[b] + matches >= bar) continue;  // no better, whatever its hits
        const double d = cost_of.WithChance(with, chance) - base[b] + matches;
        if (d < bar) best = d, best_offset = off, best_bucket = b;
      }
    }
    if (best_offset == p.offset && best_bucket == p.bucket) continue;
    (*sets)[p.bucket] = without;
    (*costs)[p.bucket] = base[p.bucket];
    p.offset = best_offset, p.bucket = best_bucket;
    (*sets)[p.bucket] = With((*sets)[p.bucket], lit, p.offset);
    (*costs)[p.bucket] = cost_of((*sets)[p.bucket]);
    moved = true;
  }
  return moved;
}

// The cost model's placement of `order` (AllTriggers' literals in the order the filter holds
// them).
std::vector<Placement> PlaceByCostModel(std::span<const Trigger> triggers,
                                        const std::vector<Trigger>& order) {
  const CostModel cost_of(triggers);
  std::array<NibbleSets, 8> sets{};
  std::array<double, 8> cost{};  // cost_of(sets[b])
  std::vector<Placement> placed;
  for (const Trigger& t : order) {
    // Every fingerprint of the literal, rarest first (in the sample, then by byte frequency: the
    // order breaks ties), in the bucket where it adds least. The sample's bit sets make one
    // evaluation cheap enough to try them all (`scan_bench --build`, docs/benchmarks.md).
    std::vector<std::size_t> offsets(FingerprintOffsets(t.literal));
    std::vector<double> exact(offsets.size());
    for (std::size_t i = 0; i < offsets.size(); ++i)
      offsets[i] = i, exact[i] = cost_of.Exact(t.literal, i);
    std::stable_sort(offsets.begin(), offsets.end(),
                     [&](std::size_t a, std::size_t b) { return exact[a] < exact[b]; });
    std::size_t best_offset = 0, best_bucket = 0;
    double best = 1e300;
    for (std::size_t off : offsets) {
      const double matches = cost_of.Matches(t.literal, off);
      for (std::size_t b = 0; b < 8; ++b) {
        // What the bucket's fingerprints add, plus the compares of this exact fingerprint:
        // a bucket that already fires on `Service` would otherwise take `vic` for free.
        const NibbleSets with = With(sets[b], t.literal, off);
        const double chance = cost_of.Chance(with);
        if (chance - cost[b] + matches >= best) continue;  // no better, whatever its hits
        const double delta = cost_of.WithChance(with, chance) - cost[b] + matches;
        if (delta < best) best = delta, best_offset = off, best_bucket = b;
      }
    }
    sets[best_bucket] = With(sets[best_bucket], t.literal, best_offset);
    // The bucket's own cost, not the sum of the deltas chosen: those hold each fingerprint's exact
    // matches too, and a bucket whose sum ran ahead of its cost looked cheaper to the next literal
    // by that much, and the literals whose fingerprints the sample holds would draw others after
    // them.
    cost[best_bucket] = cost_of(sets[best_bucket]);
    placed.push_back({t, best_offset, best_bucket});
  }
  int passes = 1;
  while (passes < kMaxPasses && ImproveOnce(cost_of, &placed, &sets, &cost)) ++passes;
  return placed;
}

// `order` placed as `shipped` says, when it lists exactly those literals in that order (empty
// otherwise).
std::vector<Placement> PlaceAsShipped(const std::vector<Trigger>& order,
                                      std::span<const PlacedLiteral> shipped) {
  if (shipped.size() != order.size()) return {};
  std::vector<Placement> placed;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PlacedLiteral& p = shipped[i];
    if (p.literal != order[i].literal || p.offset >= FingerprintOffsets(p.literal) || p.bucket >= 8)
      return {};
    placed.push_back({order[i], p.offset, p.bucket});
  }
  return placed;
}

constexpr PlacedLiteral kShippedPlacement[] = {
#include "parse/filter_placement.inc"
};

}  // namespace

std::span<const PlacedLiteral> ShippedPlacement() { return kShippedPlacement; }

LineFilter::LineFilter(std::span<const Trigger> triggers, Search search)
    : LineFilter(triggers, {}, search) {}

LineFilter::LineFilter(std::span<const Trigger> triggers, std::span<const PlacedLiteral> placement,
                       Search search) {
  // Shortest first: they have the fewest fingerprints to choose from (a 2-byte literal accepts
  // any third byte, so it must not share a bucket with much else); then by their text, so the
  // placement does not depend on the order the recogniser table lists them in.
  std::vector<Trigger> order;
  for (const Trigger& t : triggers) {
    // A shorter one is not selective; no table holds one.
    if (t.literal.size() >= 2) order.push_back(t);
  }
  std::stable_sort(order.begin(), order.end(), [](const Trigger& a, const Trigger& b) {
    return a.literal.size() != b.literal.size() ? a.literal.size() < b.literal.size()
                                                : a.literal < b.literal;
  });
  std::vector<Placement> placed = PlaceAsShipped(order, placement);
  if (placed.empty()) placed = PlaceByCostModel(triggers, order);
  std::array<NibbleSets, 8> sets{};
  for (const Placement& p : placed)
    sets[p.bucket] = With(sets[p.bucket], p.trigger.literal, p.offset);
  for (const Placement& p : placed) {
    buckets_[p.bucket].push_back(static_cast<std::uint16_t>(literals_.size()));
    Literal l{std::string(p.trigger.literal), static_cast<std::uint8_t>(p.offset), p.trigger.level};
    l.closes_tag = p.trigger.closes_tag;
    for (std::size_t k = 0; k < 3 && p.offset + k < p.trigger.literal.size(); ++k) {
      l.fingerprint |= static_cast<std::uint32_t>(static_cast<unsigned char>(p.trigger.literal[p.offset + k])) << (8 * k);
      l.mask |= 0xffu << (8 * k);
    }
    literals_.push_back(std::move(l));
  }
  for (int k = 0; k < 3; ++k) {
    for (int n = 0; n < 16; ++n) {
      for (int b = 0; b < 8; ++b) {
        lo_[k][n] |= static_cast<unsigned char>((sets[b].lo[k] >> n & 1) << b);
        hi_[k][n] |= static_cast<unsigned char>((sets[b].hi[k] >> n & 1) << b);
      }
    }
  }
  IndexFingerprints();
#ifdef DENPEX_X86
  // The AVX2 search reads the first two fingerprint bytes as ASCII (Avx2Block); a literal
  // whose fingerprint is not (none is today) gets the byte-at-a-time search.
  const bool ascii = std::all_of(literals_.begin(), literals_.end(), [](const Literal& l) {
    return (l.fingerprint & 0x8080u) == 0;
  });
  avx2_ = search == Search::kFastest && ascii && HasAvx2();
#else
  (void)search;
#endif
}

std::string LineFilter::Describe() const {
  std::string out;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    for (std::uint16_t i : buckets_[b]) {
      const Literal& l = literals_[i];
      out += "bucket " + std::to_string(b) + " fingerprint '" + l.text.substr(l.offset, 3) + "' of '" + l.text + "'\n";
    }
  }
  return out;
}

std::string LineFilter::PlacementFile() const {
  std::vector<std::uint8_t> bucket_of(literals_.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    for (std::uint16_t i : buckets_[b]) bucket_of[i] = static_cast<std::uint8_t>(b);
  }
  std::string out =
      "// Written by `scan_bench --placement`; do not edit.\n"
      "// The cost model's placement of the trigger literals (parse/triggers.h):\n"
      "// {literal, fingerprint offset, bucket}.\n";
  for (std::size_t i = 0; i < literals_.size(); ++i) {
    out += "{\"";
    for (const char c : literals_[i].text) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20 || u > 0x7e) {  // octal: at most three digits, unlike \x
        out += {'\\', static_cast<char>('0' + (u >> 6)), static_cast<char>('0' + (u >> 3 & 7)),
                static_cast<char>('0' + (u & 7))};
      } else {
        out += c;
      }
    }
    out +=
        "\", " + std::to_string(literals_[i].offset) + ", " + std::to_string(bucket_of[i]) + "},\n";
  }
  return out;
}

std::vector<std::string_view> LineFilter::Fingerprints() const {
  std::vector<std::string_view> out;
  for (const Literal& l : literals_) out.push_back(std::string_view(l.text).substr(l.offset, kWidth));
  return out;
}

std::uint8_t LineFilter::BucketsAt(std::string_view text, std::size_t q) const {
  unsigned m = 0xff;
  for (std::size_t k = 0; k < kWidth; ++k) {
    const auto c = q + k < text.size() ? static_cast<unsigned char>(text[q + k]) : 0;
    // As the AVX2 search: a first or second byte over 0x7f is in no bucket.
    const unsigned lo = k < 2 && c > 0x7f ? 0 : lo_[k][c & 15];
    m &= lo & hi_[k][c >> 4];
  }
  return static_cast<std::uint8_t>(m);
}

const LineFilter& LineFilter::Default() {
  static const LineFilter filter(AllTriggers(), ShippedPlacement());
  return filter;
}

namespace {

std::size_t FingerprintHash(std::uint32_t fingerprint, std::size_t slots) {
  return LineFilter::FingerprintHash16(fingerprint) & (slots - 1);
}

}  // namespace

void LineFilter::IndexFingerprints() {
  std::vector<std::uint16_t> order;  // 3-byte fingerprints, grouped
  for (std::uint16_t i = 0; i < literals_.size(); ++i) {
    (literals_[i].mask == 0xffffffu ? order : short_literals_).push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint16_t a, std::uint16_t b) { return literals_[a].fingerprint < literals_[b].fingerprint; });
  std::size_t slots = 16;
  while (slots < 4 * order.size()) slots *= 2;
  by_fingerprint_.assign(slots, FingerprintSlot{});
  by_fingerprint_literals_ = order;
  for (std::size_t g = 0; g < order.size();) {
    const std::uint32_t fp = literals_[order[g]].fingerprint;
    std::size_t end = g;
    while (end < order.size() && literals_[order[end]].fingerprint == fp) ++end;
    std::size_t h = FingerprintHash(fp, slots);
    while (by_fingerprint_[h].fingerprint != ~std::uint32_t{0}) h = (h + 1) & (slots - 1);
    by_fingerprint_[h] = {fp, static_cast<std::uint16_t>(g), static_cast<std::uint16_t>(end - g)};
    g = end;
  }
  const auto may_start = [&](std::uint32_t bytes) {
    const std::size_t h = FingerprintHash(bytes, std::size_t{1} << 16);
    may_start_[h >> 6] |= std::uint64_t{1} << (h & 63);
  };
  for (const std::uint16_t i : order) may_start(literals_[i].fingerprint);
  const auto first_byte = [&](std::uint16_t i) { return literals_[i].fingerprint & 0xffu; };
  std::stable_sort(short_literals_.begin(), short_literals_.end(),
                   [&](std::uint16_t a, std::uint16_t b) { return first_byte(a) < first_byte(b); });
  for (const std::uint16_t i : short_literals_) {
    for (std::uint32_t third = 0; third < 256; ++third)
      may_start(literals_[i].fingerprint | third << 16);
    ++short_from_[first_byte(i) + 1];
  }
  for (std::size_t b = 1; b < short_from_.size(); ++b) short_from_[b] += short_from_[b - 1];
}

namespace {

// n bytes equal, without a library call: every candidate pays this (each of a 16k-task job's
// millions of progress lines once). 4..16 bytes compare as two overlapping words, a longer literal
// word by word with its last word overlapping, a 2- or 3-byte one byte by byte. Through memcmp,
// the 131k-rank scale incident's candidates made ~5 M calls for literals of 2 bytes and over 16.
__attribute__((always_inline)) inline bool SameBytes(const char* a, const char* b, std::size_t n) {
  const auto word = [](const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  if (n >= 8) {
    std::uint64_t diff = word(a + n - 8) ^ word(b + n - 8);
    for (std::size_t i = 0; i + 8 < n && diff == 0; i += 8) diff = word(a + i) ^ word(b + i);
    return diff == 0;
  }
  if (n >= 4) {
    std::uint32_t a0, b0, a1, b1;
    std::memcpy(&a0, a, 4), std::memcpy(&b0, b, 4), std::memcpy(&a1, a + n - 4, 4), std::memcpy(&b1, b + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Whether the bracket closed at `close` (a `]`) was opened by a `[` glued to a letter or a digit
// (`python3[40411]`), looking back no further than `lo`, the line's start or the search's. A tag
// the parse reads (LocalTag, prefix.cc) opens at a line's start or after a prefix, which ends in a
// space or a colon; a bracket not closed within kMaxTagBytes is taken for a tag.
bool GluedBracket(std::string_view text, std::size_t close, std::size_t lo) {
  constexpr std::size_t kMaxTagBytes = 32;
  const std::size_t stop = close > lo + kMaxTagBytes ? close - kMaxTagBytes : lo;
  for (std::size_t i = close; i > stop;) {
    const char c = text[--i];
    if (c == '[') return i > lo && (IsAlpha(text[i - 1]) || IsDigit(text[i - 1]));
    if (c == ']' || c == '\n') return false;
  }
  return false;
}

}  // namespace

// Not inlined into the scan loops (their `flatten` would): see ScanFrom.
__attribute__((noinline)) TriggerLevel LineFilter::Verify(std::string_view text, std::size_t q,
                                                          std::size_t lo, std::size_t hi,
                                                          TriggerLevel above) const {
  std::uint32_t word = 0;  // the 3 bytes at q (0 past the text)
  if (std::endian::native == std::endian::little && q + 4 <= text.size()) {
    std::memcpy(&word, text.data() + q, 4);
    word &= 0xffffffu;
  } else {
    for (std::size_t k = 0; k < 3 && q + k < text.size(); ++k) {
      word |= static_cast<std::uint32_t>(static_cast<unsigned char>(text[q + k])) << (8 * k);
    }
  }
  // Record beats prefix, so the order the literals are tried in does not matter: the 3-byte
  // fingerprints first, as nearly every candidate that verifies is one of theirs (a progress
  // line's `] iteration `) and a record trigger there ends the search.
  TriggerLevel level = TriggerLevel::kNone;
  const auto matches = [&](const Literal& l) {
    return l.level > above && q >= lo + l.offset && q - l.offset + l.text.size() <= hi &&
           SameBytes(text.data() + q - l.offset, l.text.data(), l.text.size()) &&
           !(l.closes_tag && GluedBracket(text, q - l.offset, lo));
  };
  const std::size_t slots = by_fingerprint_.size();
  for (std::size_t h = FingerprintHash(word, slots);; h = (h + 1) & (slots - 1)) {
    const FingerprintSlot& slot = by_fingerprint_[h];
    if (slot.fingerprint == ~std::uint32_t{0}) break;
    if (slot.fingerprint != word) continue;
    for (std::uint16_t k = slot.first; k < slot.first + slot.count; ++k) {
      const Literal& l = literals_[by_fingerprint_literals_[k]];
      if (!matches(l)) continue;
      if (IsRecord(l.level)) return l.level;
      level = l.level;
    }
    break;
  }
  // The 2-byte literals that start with the candidate's first byte (none for most candidates).
  const std::uint32_t first = word & 0xffu;
  for (std::size_t k = short_from_[first]; k < short_from_[first + 1]; ++k) {
    const Literal& l = literals_[short_literals_[k]];
    if ((word & l.mask) != l.fingerprint || !matches(l)) continue;
    if (IsRecord(l.level)) return l.level;
    level = l.level;
  }
  return level;
}

namespace {

// Counts newlines of a 32-byte block into the scan state, and lines longer than `limit`.
struct LineCount {
  std::int64_t newlines = 0;
  std::int64_t long_lines = 0;
  std::size_t line_start = 0;  // start of the line the scan is in

  // `nl`: the newlines of the block at `base` (bit j: base + j).
  //
  // Without a jump on whether the block holds a newline: 40-60 % of a log's 64-byte blocks do,
  // at random, so such a branch is mispredicted every other step, and each miss throws away the
  // loads the CPU started ahead.
  // The one branch left is taken only where the line the scan is in has grown past `limit`
  // bytes by the block's end (never for `limit` >= 64 and lines that are not long), and the
  // lines of the block are measured only then. (std::countl_zero(0) is a branch of its own:
  // hence the `| 1`, whose wrong answer for no newline is not used.)
  template <typename Mask>
  void Add(std::string_view text, std::size_t base, Mask nl, std::size_t limit) {
    constexpr unsigned kBits = sizeof(Mask) * 8;
    if (base + kBits - line_start > limit) [[unlikely]] LongLines(text, base, nl, limit);
    newlines += std::popcount(nl);
    const std::size_t last_end = base + kBits - static_cast<std::size_t>(std::countl_zero(nl | Mask{1}));
    const std::size_t none = std::size_t{0} - static_cast<std::size_t>(nl == 0);  // all ones: no newline
    line_start = (line_start & none) | (last_end & ~none);
  }
  // The lines that end in the block at `base` and are longer than `limit`.
  template <typename Mask>
  void LongLines(std::string_view text, std::size_t base, Mask nl, std::size_t limit) {
    std::size_t begin = line_start;
    for (; nl != 0; nl &= nl - 1) {
      const std::size_t end = base + static_cast<std::size_t>(std::countr_zero(nl));
      if (end - begin > limit) long_lines += LongLine(text, begin, end, limit);
      begin = end + 1;
    }
  }
  static int LongLine(std::string_view text, std::size_t begin, std::size_t end, std::size_t limit) {
    std::size_t n = end - begin;
    if (n > 0 && text[end - 1] == '\r') --n;
    return n > limit ? 1 : 0;
  }
};

// The end of the line that holds `base + j` (its '\n', or the end of the text), where `nl` are
// the newlines of the block at `base`. Found here, from the masks the scan has made, instead of
// by a memchr call after the scan returns: ~45 fewer instructions per line found.
// With `colon_free` (the 64-byte loop only: the byte before `base` and 2 after the block are
// readable), the same blocks are searched for label colons at or after `base + j`; when there is
// none before the line's end, *colon_free = base + j: a 16k-task srun log's progress lines need
// no second search for one (HasEmbeddedLabel; docs/benchmarks.md, progress8).
template <typename Block, typename Mask>
std::size_t LineEnd(const Block& block, std::string_view text, std::size_t base, Mask nl, unsigned j,
                    std::size_t* colon_free = nullptr) {
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  const bool colons = colon_free != nullptr && base >= 1;
  std::uint64_t seen = 0;  // label colons at or after base + j, up to the block being read
  if (colons) {
    static_assert(sizeof(Mask) <= 8);
    seen = (Block::LabelColons(data + base) | static_cast<std::uint64_t>(Block::LabelColons(data + base + 32)) << 32) &
           (~std::uint64_t{0} << j);
  }
  const Mask after = nl & static_cast<Mask>(~Mask{0} << j);
  if (after != 0) {
    const auto end = static_cast<unsigned>(std::countr_zero(after));
    if (colons && (seen & ((std::uint64_t{1} << end) - 1)) == 0) *colon_free = base + j;
    return base + end;
  }
  std::size_t k = base + sizeof(Mask) * 8;
  bool known = colons;  // every block so far searched for label colons
  for (; k + 32 <= text.size(); k += 32) {
    const std::uint32_t m = block.Newlines(data + k);
    known = known && k + 33 <= text.size();
    const std::uint32_t c = known ? Block::LabelColons(data + k) : 0;
    if (m != 0) {
      const auto end = static_cast<unsigned>(std::countr_zero(m));
      if (known && seen == 0 && (c & ((std::uint32_t{1} << end) - 1)) == 0) *colon_free = base + j;
      return k + end;
    }
    seen |= c;
  }
  for (; k < text.size(); ++k) {
    if (text[k] == '\n') return k;
  }
  return text.size();
}

// The scan asks for the bytes this far ahead of the block it reads. A large log is read from the
// page cache through a mapping of 4 KiB pages, and the CPU's own prefetcher stops at each page's
// end and after each hit (where the scan returns to the parser), so every page began with a wait
// for memory: the loads of the scan's 64-byte step were half of its time. Asked for 1 KiB ahead,
// the parse of the 2 GB benchmark took 20-30 % less CPU (1.5, 2 and 4 KiB: the same; 512 B: less
// gain; docs/benchmarks.md, "The scan's prefetch"). A prefetch never faults: past the text, or on
// a page not yet mapped, it does nothing.
constexpr std::size_t kPrefetchAhead = 1024;

// The scan loop, over any block evaluator. Stops at the first position whose fingerprint
// verifies; `on_hit` says what to return there, `line_end` (when not null) gets the end of the
// line found. The line count lives in a local copy (stored back on return) so that it stays in
// registers, and Verify is a call, not inlined: inlined into the loop, the verification's code
// made GCC spill the loop's vectors and counters to the stack.
template <typename Block, typename OnHit>
inline bool ScanFrom(const LineFilter& filter, const Block& block, std::string_view text, std::size_t from,
                     std::size_t limit, LineCount* count_out, const OnHit& on_hit, std::size_t* line_end = nullptr,
                     std::size_t* colon_free = nullptr) {
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  LineCount count = *count_out;
  std::size_t i = from;
  // 64 bytes a step while two whole blocks (and the 2 bytes after them) are readable: one
  // branch for both blocks' candidates, one line count for their newlines.
  for (; i + 66 <= n; i += 64) {
    __builtin_prefetch(data + i + kPrefetchAhead);
    const auto step = block.Step64(data + i);
    const std::uint64_t nl = step.newlines;
    if (Block::Any(step)) [[unlikely]] {
      for (std::uint64_t cand = Block::Candidates(step); cand != 0; cand &= cand - 1) {
        const unsigned j = static_cast<unsigned>(std::countr_zero(cand));
        if (on_hit.Try(filter, text, i + j)) {
          count.Add(text, i, nl & ((std::uint64_t{1} << j) - 1), limit);
          *count_out = count;
          if (line_end != nullptr) *line_end = LineEnd(block, text, i, nl, j, colon_free);
          return true;
        }
      }
    }
    count.Add(text, i, nl, limit);
  }
  alignas(32) unsigned char tail[64];
  for (; i < n; i += 32) {
    const unsigned char* p = data + i;
    std::uint32_t valid = 0xffffffffu;
    if (n - i < 34) {  // the last bytes: a zero-padded copy, so no load reads past the text
      std::memset(tail, 0, sizeof tail);
      std::memcpy(tail, p, n - i);
      p = tail;
      if (n - i < 32) valid = (1u << (n - i)) - 1;
    }
    std::uint32_t nl;
    std::uint32_t cand = block(p, &nl) & valid;
    nl &= valid;
    for (; cand != 0; cand &= cand - 1) {
      const unsigned j = static_cast<unsigned>(std::countr_zero(cand));
      if (on_hit.Try(filter, text, i + j)) {
        count.Add(text, i, nl & ((1u << j) - 1), limit);
        *count_out = count;
        if (line_end != nullptr) *line_end = LineEnd(block, text, i, nl, j);
        return true;
      }
    }
    count.Add(text, i, nl, limit);
  }
  *count_out = count;
  return false;
}

}  // namespace

// Declared here so the AVX2 and scalar instantiations share one body.
struct LineFilterScan {
  struct FirstHit {
    std::size_t from;
    TriggerLevel* level;
    std::int64_t* misses;  // candidates that did not verify
    std::size_t* at;       // where the hit's fingerprint starts
    bool Try(const LineFilter& f, std::string_view text, std::size_t q) const;
  };
  struct AnyHit {
    TriggerLevel* level;
    bool Try(const LineFilter& f, std::string_view text, std::size_t q) const;
  };
};

bool LineFilterScan::FirstHit::Try(const LineFilter& f, std::string_view text, std::size_t q) const {
  *level = f.MayStart(text, q) ? f.Verify(text, q, from, text.size()) : TriggerLevel::kNone;
  if (*level == TriggerLevel::kNone) {
    ++*misses;
    return false;
  }
  *at = q;
  return true;
}

bool LineFilterScan::AnyHit::Try(const LineFilter& f, std::string_view text, std::size_t q) const {
  if (!f.MayStart(text, q)) return false;
  // A literal no higher than the line's level so far changes nothing (a `[rank<G>]:` line's `]:`).
  const TriggerLevel l = f.Verify(text, q, 0, text.size(), *level);
  if (static_cast<int>(l) > static_cast<int>(*level)) *level = l;
  return IsRecord(*level);  // stop at the first record trigger
}

namespace {

using Tables = std::array<std::array<unsigned char, 16>, 3>;

#ifdef DENPEX_X86
DENPEX_AVX2 __attribute__((flatten)) bool ScanAvx2(const LineFilter& f, const Tables& lo, const Tables& hi,
                                                   std::string_view text, std::size_t from, std::size_t limit,
                                                   LineCount* count, const LineFilterScan::FirstHit& hit,
                                                   std::size_t* line_end, std::size_t* colon_free) {
  return ScanFrom(f, Avx2Block(lo, hi), text, from, limit, count, hit, line_end, colon_free);
}
DENPEX_AVX2 __attribute__((flatten)) void ClassifyAvx2(const LineFilter& f, const Tables& lo,
                                                       const Tables& hi, std::string_view line,
                                                       std::size_t from,
                                                       const LineFilterScan::AnyHit& hit) {
  LineCount count;
  ScanFrom(f, Avx2Block(lo, hi), line, from, ~std::size_t{0}, &count, hit);
}
#endif
// The byte-at-a-time twins, out of line so that Next and Classify stay small.
__attribute__((noinline)) bool ScanScalar(const LineFilter& f, const Tables& lo, const Tables& hi, std::string_view text,
                                          std::size_t from, std::size_t limit, LineCount* count,
                                          const LineFilterScan::FirstHit& hit, std::size_t* line_end,
                                          std::size_t* colon_free) {
  return ScanFrom(f, ScalarBlock{lo, hi}, text, from, limit, count, hit, line_end, colon_free);
}
__attribute__((noinline)) void ClassifyScalar(const LineFilter& f, const Tables& lo,
                                              const Tables& hi, std::string_view line,
                                              std::size_t from, const LineFilterScan::AnyHit& hit) {
  LineCount count;
  ScanFrom(f, ScalarBlock{lo, hi}, line, from, ~std::size_t{0}, &count, hit);
}

}  // namespace

LineFilter::Found LineFilter::Next(std::string_view text, std::size_t from, std::size_t long_line, bool label_colons) const {
  LineCount count{.line_start = from};
  TriggerLevel first = TriggerLevel::kNone;
  std::int64_t misses = 0;
  std::size_t at = 0;
  const LineFilterScan::FirstHit hit{from, &first, &misses, &at};
  bool found;
  std::size_t end = text.size(), colon_free = std::string_view::npos;
  std::size_t* colons = label_colons ? &colon_free : nullptr;
#ifdef DENPEX_X86
  if (avx2_) {
    found = ScanAvx2(*this, lo_, hi_, text, from, long_line, &count, hit, &end, colons);
  } else
#endif
  {
    found = ScanScalar(*this, lo_, hi_, text, from, long_line, &count, hit, &end, colons);
  }
  Found r{.found = found, .begin = count.line_start, .newlines = count.newlines, .long_lines = count.long_lines,
          .no_label_colon_from = colon_free, .false_candidates = misses};
  if (!found) {
    r.end = text.size();
    if (r.begin < text.size()) r.long_lines += LineCount::LongLine(text, r.begin, text.size(), long_line);
    return r;
  }
  r.end = end;
  // A record trigger is the highest level; a prefix trigger may share its line with one, after
  // it: before it the scan found none (a literal found within the line is found within the text:
  // none holds a newline).
  r.level = IsRecord(first)
                ? first
                : Classify(text.substr(r.begin, r.end - r.begin), at + 1 - r.begin, first);
  return r;
}

TriggerLevel LineFilter::Classify(std::string_view line, std::size_t from,
                                  TriggerLevel level) const {
  const LineFilterScan::AnyHit hit{&level};
#ifdef DENPEX_X86
  if (avx2_) {
    ClassifyAvx2(*this, lo_, hi_, line, from, hit);
    return level;
  }
#endif
  ClassifyScalar(*this, lo_, hi_, line, from, hit);
  return level;
}

namespace {

bool IsDigitByte(unsigned char c) { return c >= '0' && c <= '9'; }

// How far past a block's start StampCandidatesAvx2 reads: the 32 bytes five past its second half.
constexpr std::size_t kStampInnerReach = 32 + 5 + 32;

// Colons and hyphens among 64 bytes: bit j for p[j].
struct StampMarks {
  std::uint64_t colon = 0, hyphen = 0;
};

// Bit j: a pattern may start at j of the block `cur`, whose next 64 bytes are `next` (a pattern
// is 8 bytes long, so it may run into them): a time of day has its colons at j + 2 and j + 5, a
// date (`YY-MM-DD` of `YYYY-MM-DD`) its hyphens there. Few places of a log have two colons or two
// hyphens three bytes apart, so the digits are read only at these. (A lone hyphen is a few a
// line, `gpu-0042`, `->`: taking each as a candidate cost the 16k srun log's parse 2.5 % more
// instructions.)
std::uint64_t StampCandidates(const StampMarks& cur, const StampMarks& next) {
  const auto shifted = [](std::uint64_t lo, std::uint64_t hi, int k) { return lo >> k | hi << (64 - k); };  // 1 <= k <= 7
  return (shifted(cur.colon, next.colon, 2) & shifted(cur.colon, next.colon, 5)) |
         (shifted(cur.hyphen, next.hyphen, 2) & shifted(cur.hyphen, next.hyphen, 5));
}

// A time of day `dd:dd:dd` or a date `dd-dd-dd` starts at p[0], all of it before `avail` bytes end.
bool StampAt(const unsigned char* p, std::size_t avail) {
  const auto digits = [&](std::size_t k) { return IsDigitByte(p[k]) && IsDigitByte(p[k + 1]); };
  if (avail < 8 || !digits(0) || !digits(3) || !digits(6)) return false;
  return (p[2] == ':' && p[5] == ':') || (p[2] == '-' && p[5] == '-');
}

StampMarks StampMarksScalar(const unsigned char* p) {
  StampMarks m;
  for (int j = 0; j < 64; ++j) {
    m.colon |= static_cast<std::uint64_t>(p[j] == ':') << j;
    m.hyphen |= static_cast<std::uint64_t>(p[j] == '-') << j;
  }
  return m;
}

#ifdef DENPEX_X86
// StampCandidates of the block at p read straight from the bytes: the bytes two and five past
// each start compared with each other and with ':' and '-' (the same candidates, in about half
// the vector operations of the marks and their shifts). Reads p[2, kStampInnerReach).
DENPEX_AVX2 inline __m256i StampCandidatesAvx2Half(const unsigned char* p) {
  const __m256i at2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
  const __m256i at5 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 5));
  const __m256i separator = _mm256_or_si256(_mm256_cmpeq_epi8(at2, _mm256_set1_epi8(':')),
                                            _mm256_cmpeq_epi8(at2, _mm256_set1_epi8('-')));
  return _mm256_and_si256(separator, _mm256_cmpeq_epi8(at2, at5));
}
DENPEX_AVX2 inline std::uint64_t StampCandidatesAvx2(const unsigned char* p) {
  const __m256i lo = StampCandidatesAvx2Half(p), hi = StampCandidatesAvx2Half(p + 32);
  const __m256i either = _mm256_or_si256(lo, hi);
  if (_mm256_testz_si256(either, either)) return 0;  // most blocks of a log
  return static_cast<std::uint32_t>(_mm256_movemask_epi8(lo)) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(hi))) << 32;
}

DENPEX_AVX2 inline StampMarks StampMarksAvx2(const unsigned char* p) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  const auto mask = [](__m256i c, char x) DENPEX_AVX2 {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8(x)))));
  };
  return {.colon = mask(lo, ':') | mask(hi, ':') << 32,
          .hyphen = mask(lo, '-') | mask(hi, '-') << 32};
}
#endif

}  // namespace

namespace {

// Blocks of 64 starts, from the end: each block's marks are computed once and serve as the
// look-ahead of the block below it (bytes past `end` count as none), and each candidate, highest
// first, is read until one is a stamp. The stamp search runs back over every line skipped since
// the last stamp whenever an event has none of its own (NCCL INFO lines carry none), so it reads
// most of a dense log once: marks of two bytes and digits read at candidates only take half the
// instructions of digit masks for every byte (the 16k srun log's parse: ~11 % of its
// instructions were this search). `inner` (when not null) gives a block's candidates at once
// where all the bytes it reads, kStampInnerReach past the block's start, lie before `end`: every
// whole block but the first one searched, the one that ends at `end`.
template <typename Marks, typename Inner>
inline std::size_t LastStampPatternWith(std::string_view text, std::size_t end, Marks&& marks_at,
                                        Inner&& inner) {
  constexpr bool kInner = !std::is_same_v<std::decay_t<Inner>, std::nullptr_t>;
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  StampMarks next;  // of the block above the current one (none above the first)
  for (std::size_t top = end; top > 0;) {
    std::size_t i;
    std::uint64_t candidates = 0;
    if (kInner && top >= 64 && top - 64 + kStampInnerReach <= end) {
      i = top - 64;  // `next` is not kept: only the first block searched reads it
      if constexpr (kInner) candidates = inner(data + i);
    } else if (top >= 64) {
      i = top - 64;
      const StampMarks cur = marks_at(data + i);
      candidates = StampCandidates(cur, next);
      next = cur;
    } else {  // the text's first bytes: [0, top) and what follows them up to `end`, zero-padded
      alignas(32) unsigned char window[128] = {};
      std::memcpy(window, data, std::min<std::size_t>(end, sizeof window));
      i = 0;
      candidates = StampCandidates(marks_at(window), marks_at(window + 64)) &
                   ((std::uint64_t{1} << top) - 1);
    }
    while (candidates != 0) {
      const std::size_t j = 63 - static_cast<std::size_t>(std::countl_zero(candidates));
      if (StampAt(data + i + j, end - (i + j))) return i + j;
      candidates &= ~(std::uint64_t{1} << j);
    }
    top = i;
  }
  return std::string_view::npos;
}

#ifdef DENPEX_X86
DENPEX_AVX2 __attribute__((flatten)) std::size_t LastStampPatternAvx2(std::string_view text, std::size_t end) {
  return LastStampPatternWith(
      text, end, [](const unsigned char* p) DENPEX_AVX2 { return StampMarksAvx2(p); },
      [](const unsigned char* p) DENPEX_AVX2 { return StampCandidatesAvx2(p); });
}
#endif

}  // namespace

std::size_t LastStampPattern(std::string_view text, std::size_t end) {
#ifdef DENPEX_X86
  if (HasAvx2()) return LastStampPatternAvx2(text, end);
#endif
  return LastStampPatternWith(
      text, end, [](const unsigned char* p) { return StampMarksScalar(p); }, nullptr);
}

std::vector<Trigger> AllTriggers() {
  std::vector<Trigger> all;
  for (auto table : {PrefixTriggers(), RecordTriggers(), WatchdogTriggers()}) {
    all.insert(all.end(), table.begin(), table.end());
  }
  for (const RecogniserRow& row : RecogniserTable()) all.insert(all.end(), row.triggers.begin(), row.triggers.end());
  return all;
}

}  // namespace denpex::engine
