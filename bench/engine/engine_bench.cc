// engine_bench INCIDENT_DIR [--threads N] [--repeat K]
// Times the engine on an incident already in the page cache: ingest + parse alone (LoadIncident
// as a diagnosis parses, without the texts only shown; best of K), then the whole diagnosis
// (engine::Diagnose, best of K). Prints the answer first (the caller checks it against the truth),
// then bytes/s, lines/s, events/s, the trigger pre-filter's false candidates and idle lines, wall
// time and the process's peak RSS. A benchmark, not a test: run_engine_bench.sh drives it.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "denpex/engine/engine.h"
#include "ingest/load.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// User + system CPU seconds of the process so far (all threads).
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long PeakRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: engine_bench INCIDENT_DIR [--threads N] [--repeat K] [--parse-only]\n");
    return 2;
  }
  denpex::engine::RestartWithHugePageHeap(argv);  // as `denpex diagnose` does
  denpex::engine::KeepFreedMemory();
  const std::string dir = argv[1];
  int threads = 0, repeat = 3;
  bool parse_only = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--parse-only")) parse_only = true;
  }
  using namespace denpex::engine;
  double parse_best = 1e9, parse_cpu = 1e9;
  std::int64_t bytes = 0, lines = 0, events = 0, files = 0, false_candidates = 0, trigger_lines = 0, idle_lines = 0;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds();
    auto inc = LoadIncident(dir, threads, {}, false, 0, Texts::kAnalysed);  // as a diagnosis parses
    const double s = Seconds(t0);
    parse_cpu = std::min(parse_cpu, CpuSeconds() - c0);
    if (!inc.ok()) {
      std::fprintf(stderr, "engine_bench: %s\n", inc.status().message().c_str());
      return 3;
    }
    parse_best = std::min(parse_best, s);
    bytes = inc->input.bytes, lines = inc->input.lines, events = static_cast<std::int64_t>(inc->events.size());
    files = inc->input.files;
    false_candidates = inc->input.false_candidates;
    trigger_lines = inc->input.trigger_lines;
    idle_lines = inc->input.idle_trigger_lines;
  }
  std::printf("parse: %lld files, %lld bytes, %lld lines, %lld events in %.3f s: %.2f GB/s, %.1f M lines/s, %.2f M events/s; "
              "%.3f s CPU (user + sys, all threads)\n",
              static_cast<long long>(files), static_cast<long long>(bytes), static_cast<long long>(lines),
              static_cast<long long>(events), parse_best, bytes / parse_best / 1e9, lines / parse_best / 1e6,
              events / parse_best / 1e6, parse_cpu);
  // The trigger pre-filter (parse/triggers.h): places its SIMD tables accepted where no literal was,
  // and the lines it passed for a record trigger that no recogniser took.
  std::printf("pre-filter: %lld false candidates; %lld lines read whole for a trigger, %lld of them taken by no recogniser\n",
              static_cast<long long>(false_candidates), static_cast<long long>(trigger_lines),
              static_cast<long long>(idle_lines));
  if (parse_only) return 0;
  double diag_best = 1e9, diag_cpu = 1e9;
  denpex::v1::Diagnosis d;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds();
    auto r = Diagnose(dir, {.threads = threads});
    diag_best = std::min(diag_best, Seconds(t0));
    diag_cpu = std::min(diag_cpu, CpuSeconds() - c0);
    if (!r.ok()) return 3;
    d = *r;
  }
  std::printf("answer: verdict %s rank %d node %s\n", denpex::v1::Verdict_Name(d.verdict()).c_str(),
              d.initiator().rank(), d.initiator().node().c_str());
  std::printf("diagnose: %.3f s wall (best of %d), %.3f s CPU, peak RSS %.1f MiB\n", diag_best, repeat, diag_cpu,
              PeakRssKiB() / 1024.0);
  return 0;
}
