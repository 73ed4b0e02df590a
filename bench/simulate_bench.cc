// Times `Simulate` on one scenario (run one scenario per process, so peak RSS is its own):
//   simulate_bench SCENARIO OUT_DIR [--set field=value]... [--min-lines N] [--writer-threads N]
// Before reporting it checks the answer: the truth names an initiator and cites evidence, each
// cited line is at its line number in its file, and at least N lines were written. It reports
// wall time, events/s, lines/s, bytes/s, peak RSS (getrusage) and the most file descriptors
// the process held open at once (sampled from /proc/self/fd every millisecond).
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "denpex/sim/simulator.h"

namespace fs = std::filesystem;
using denpex::sim::SimulateResult;

namespace {

int OpenFds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;  // the iterator's own descriptor
}

// Samples the open descriptors until stopped; keeps the maximum.
class FdSampler {
 public:
  FdSampler() : thread_([this] { Loop(); }) {}
  ~FdSampler() { Stop(); }
  int Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return max_;
  }

 private:
  void Loop() {
    while (!stop_) {
      max_ = std::max(max_.load(), OpenFds());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<int> max_{0};
  std::thread thread_;
};

// The cited line, read back from the file.
bool EvidenceHolds(const fs::path& incident, const denpex::v1::Evidence& e) {
  std::ifstream in(incident / e.file());
  std::string line;
  for (int i = 0; i < e.line(); ++i) {
    if (!std::getline(in, line)) return false;
  }
  return line == e.text();
}

int Fail(const std::string& what) {
  std::cerr << "simulate_bench: CHECK FAILED: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: simulate_bench SCENARIO OUT_DIR [--set f=v]... [--min-lines N] [--writer-threads N]\n";
    return 2;
  }
  std::vector<std::string> overrides;
  std::uint64_t min_lines = 0;
  int writer_threads = denpex::sim::SimulateOptions{}.writer_threads;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--set") overrides.emplace_back(argv[i + 1]);
    if (flag == "--min-lines") min_lines = std::stoull(argv[i + 1]);
    if (flag == "--writer-threads") writer_threads = std::stoi(argv[i + 1]);
  }
  auto scenario = denpex::sim::LoadScenario(argv[1], overrides);
  if (!scenario.ok()) return Fail(scenario.status().message());
  const fs::path out = argv[2];
  fs::remove_all(out / "incident");

  FdSampler fds;
  const int fds_before = OpenFds();
  const auto t0 = std::chrono::steady_clock::now();
  auto result = denpex::sim::Simulate(*scenario, {.out_dir = out, .writer_threads = writer_threads});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int max_fds = fds.Stop();
  if (!result.ok()) return Fail(result.status().message());

  const SimulateResult& r = *result;
  if (r.truth.initiator().failure_class() == 0) return Fail("truth has no failure class");
  if (r.truth.evidence_size() == 0) return Fail("truth cites no evidence");
  for (const auto& e : r.truth.evidence()) {
    if (!EvidenceHolds(out / "incident", e))
      return Fail("evidence " + e.file() + ":" + std::to_string(e.line()));
  }
  if (r.stats.lines < min_lines) return Fail("only " + std::to_string(r.stats.lines) + " lines");

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  rusage main_thread{};
  getrusage(RUSAGE_THREAD, &main_thread);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  const double cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  const double main_cpu = seconds(main_thread.ru_utime) + seconds(main_thread.ru_stime);
  const auto& s = r.stats;
  std::printf(
      "%s ranks=%d wall_s=%.3f cpu_s=%.3f main_thread_cpu_s=%.3f events=%llu lines=%llu bytes=%llu files=%llu "
      "events_per_s=%.3g lines_per_s=%.3g bytes_per_s=%.3g peak_rss_mb=%.1f "
      "max_open_fds=%d (baseline %d) writer_threads=%d secondary_ranks=%d\n",
      scenario->name().c_str(), r.truth.job().world_size(), wall, cpu, main_cpu,
      static_cast<unsigned long long>(s.events), static_cast<unsigned long long>(s.lines),
      static_cast<unsigned long long>(s.bytes), static_cast<unsigned long long>(s.files),
      static_cast<double>(s.events) / wall, static_cast<double>(s.lines) / wall,
      static_cast<double>(s.bytes) / wall, static_cast<double>(usage.ru_maxrss) / 1024.0, max_fds,
      fds_before, writer_threads, r.truth.cascade().secondary_ranks_size());
  return 0;
}
