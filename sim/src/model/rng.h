// Seeded random streams. Every draw in the simulator comes from an Rng built from
// (seed, stream id, index): the same scenario and seed give the same draws whatever order
// the streams are used in, on any platform. No <random> distributions (their output differs
// between standard libraries): uniform and normal variates are computed here.
#pragma once

#include <cmath>
#include <cstdint>

namespace denpex::sim {

// What a stream is for; the numbers are part of the output's identity (changing one changes
// every incident), so append, never renumber.
enum class StreamId : std::uint64_t {
  kFaultPlan = 1,        // index: fault * 2 (rank), fault * 2 + 1 (at_fraction)
  kNodeSkew = 2,         // index: node
  kNodeProcesses = 3,    // index: node (agent start, pids)
  kAgent = 4,            // index: node (teardown delays)
  kRankCompute = 5,      // index: rank (compute jitter)
  kRankWatchdog = 6,     // index: rank (watchdog poll delay)
  kRankStart = 7,        // index: rank (process start)
  kTrainer = 8,          // index: iteration (loss, grad norm)
  kRankAddresses = 9,    // index: rank (library load addresses, communicator pointers)
  kCommId = 10,          // index: process-group uid
  kLineTiming = 11,      // index: rank (microsecond spacing of multi-line blocks)
  kNcclInit = 12,        // index: rank (when each communicator finished initialising)
  kFaultBehaviour = 13,  // index: rank (delays of the fault's own behaviour)
  kSlurm = 14,           // index: 0 (srun and Slurm daemons' delays)
  kNoise = 15,           // index: 0 (loud rank, ECC node), 1 + node (damage), see noise.cc
  kKernel = 16,          // index: node (boot time, kernel message timing)
  kMpirun = 35,          // index: 0 (mpirun's detection and teardown delays)
  kPdsh = 150,           // index: node (launch.py's poll and teardown, ssh's exit)
  kFlightRecorder = 47,  // index: rank (its watchdog's poll phase, its dump's collection)
  kNcclRas = 48,         // index: the poll's second (the RAS collection's duration)
  kNcclTimings = 49,     // index: rank * 4 + group (NCCL's `Init timings` line)
  // preflight/ (a cluster's health tools' outputs, not a job):
  kPreflightPlace = 160,  // index: fault (the node a fault without one lands on)
  kPreflightNode = 161,   // index: node (serials, GUIDs, idle PCIe generations, ECC, temperatures)
  kPreflightRun = 162,    // index: nccl-tests run (bus bandwidth jitter, per-size noise)
  kPreflightNoise = 163,  // index: 0 (which nodes log an application's Xid)
};

// splitmix64's output function: a strong 64-bit mixer.
constexpr std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** seeded through splitmix64 from (seed, stream, index).
class Rng {
 public:
  Rng(std::uint64_t seed, StreamId stream, std::uint64_t index) {
    std::uint64_t sm = Mix64(seed ^ 0x6a09e667f3bcc909ULL) ^
                       Mix64((static_cast<std::uint64_t>(stream) << 40) ^ index);
    for (std::uint64_t& w : s_) {
      sm += 0x9e3779b97f4a7c15ULL;
      w = Mix64(sm);
    }
  }

  std::uint64_t Next() {
    const std::uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // [lo, hi); lo when the range is empty.
  std::int64_t UniformInt(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const auto span = static_cast<double>(hi - lo);
    auto v = lo + static_cast<std::int64_t>(Uniform() * span);
    return v < hi ? v : hi - 1;
  }

  // Standard normal by Box-Muller (one of the pair; the other is discarded so every draw
  // consumes exactly two uniforms).
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]: log is finite
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static constexpr std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace denpex::sim
