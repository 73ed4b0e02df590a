// A plain mutation driver for the fuzz targets, so that they run in every build and in CI
// without clang: it links a target's LLVMFuzzerTestOneInput, runs every seed once, then feeds
// it mutated seeds (bit flips, random bytes, inserted and deleted runs, duplicated runs,
// splices of two seeds, truncations, boundary bytes) until the time is up. It has no coverage
// feedback: libFuzzer (-DDENPEX_BUILD_FUZZ=ON with clang) searches deeper; this one makes sure
// every push still survives the seeds and their neighbourhood.
//
//   fuzz_smoke_TARGET [--seconds S] [--seed N] [--max-len BYTES] SEED_DIR...
//
// Fails (exit 1) when one input takes longer than --max-input-seconds (default 1 s) or the
// process's peak memory passes --max-rss-mib (default 512). A crash kills it with the signal;
// before that, the input that crashed is written to ./fuzz-crash-input (async-signal-safe),
// so `fuzz_smoke_TARGET fuzz-crash-input` or libFuzzer reproduces it.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The input being run, for the crash handler.
const std::string* g_current = nullptr;

void OnCrash(int sig) {
  if (g_current != nullptr) {
    const int fd = ::open("fuzz-crash-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      const char* p = g_current->data();
      std::size_t left = g_current->size();
      while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<std::size_t>(n);
      }
      ::close(fd);
    }
    static constexpr char kMsg[] = "fuzz smoke: crashed; the input is in ./fuzz-crash-input\n";
    (void)!::write(2, kMsg, sizeof kMsg - 1);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

struct Options {
  double seconds = 10;
  std::uint64_t seed = 1;
  std::size_t max_len = 1 << 16;
  double max_input_seconds = 1.0;
  long max_rss_mib = 512;
  std::vector<fs::path> inputs;
};

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    const bool has_value = k + 1 < argc;
    if (a == "--seconds" && has_value) {
      o.seconds = std::atof(argv[++k]);
    } else if (a == "--seed" && has_value) {
      o.seed = std::strtoull(argv[++k], nullptr, 10);
    } else if (a == "--max-len" && has_value) {
      o.max_len = std::strtoull(argv[++k], nullptr, 10);
    } else if (a == "--max-input-seconds" && has_value) {
      o.max_input_seconds = std::atof(argv[++k]);
    } else if (a == "--max-rss-mib" && has_value) {
      o.max_rss_mib = std::atol(argv[++k]);
    } else if (a.starts_with("--")) {
      std::fprintf(stderr, "fuzz smoke: unknown option %s\n", a.c_str());
      return false;
    } else {
      o.inputs.emplace_back(a);
    }
  }
  if (o.inputs.empty()) {
    std::fprintf(stderr,
                 "usage: %s [--seconds S] [--seed N] [--max-len BYTES] [--max-input-seconds S] "
                 "[--max-rss-mib M] SEED_DIR_OR_FILE...\n",
                 argv[0]);
    return false;
  }
  return true;
}

std::vector<std::string> ReadSeeds(const std::vector<fs::path>& inputs) {
  std::vector<fs::path> files;
  for (const fs::path& p : inputs) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());  // the same run for the same seed, on any machine
  std::vector<std::string> seeds;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (seeds.empty()) seeds.emplace_back();
  return seeds;
}

// One random edit of `s`; `other` is another seed for splices.
void Mutate(std::string& s, const std::string& other, std::mt19937_64& rng, std::size_t max_len) {
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  static constexpr char kBoundary[] = {'\0', '\n', '\r', '\x7f', '\xff', '\x80', '{', '[', ']',
                                       '"', '(', '.', ':', ' ', '\x1b', 'K', 'q', '}'};
  switch (rng() % 8) {
    case 0:  // flip a bit
      if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
      break;
    case 1:  // a random byte
      if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
      break;
    case 2:  // a boundary byte
      if (!s.empty()) s[pick(s.size())] = kBoundary[pick(sizeof kBoundary)];
      break;
    case 3: {  // insert a few random bytes
      std::string ins(1 + pick(8), '\0');
      for (char& c : ins) c = static_cast<char>(rng());
      s.insert(pick(s.size() + 1), ins);
      break;
    }
    case 4:  // delete a run
      if (!s.empty()) {
        const std::size_t at = pick(s.size());
        s.erase(at, 1 + pick(std::min<std::size_t>(64, s.size() - at)));
      }
      break;
    case 5:  // duplicate a run
      if (!s.empty()) {
        const std::size_t at = pick(s.size());
        const std::size_t n = 1 + pick(std::min<std::size_t>(256, s.size() - at));
        s.insert(pick(s.size() + 1), s.substr(at, n));
      }
      break;
    case 6:  // splice: a head of this one and a tail of another
      s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size() + 1));
      break;
    default:  // truncate
      s.resize(pick(s.size() + 1));
      break;
  }
  if (s.size() > max_len) s.resize(max_len);
}

long PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, o)) return 2;
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnCrash);

  const std::vector<std::string> seeds = ReadSeeds(o.inputs);
  std::mt19937_64 rng(o.seed);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.seconds);
  std::uint64_t runs = 0;
  double slowest = 0;
  std::string input;
  auto run_one = [&]() -> bool {
    g_current = &input;
    const auto t0 = Clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    g_current = nullptr;
    ++runs;
    slowest = std::max(slowest, secs);
    if (secs > o.max_input_seconds) {
      std::ofstream("fuzz-slow-input", std::ios::binary) << input;
      std::fprintf(stderr, "fuzz smoke: an input of %zu bytes took %.2f s (limit %.2f s); "
                   "it is in ./fuzz-slow-input\n", input.size(), secs, o.max_input_seconds);
      return false;
    }
    return true;
  };

  for (const std::string& s : seeds) {
    input = s;
    if (!run_one()) return 1;
  }
  while (Clock::now() < deadline) {
    input = seeds[rng() % seeds.size()];
    const std::string& other = seeds[rng() % seeds.size()];
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
      Mutate(input, other, rng, o.max_len);
    }
    if (!run_one()) return 1;
  }
  const long rss = PeakRssMib();
  std::printf("fuzz smoke: %llu inputs from %zu seeds in %.0f s, slowest %.3f s, peak %ld MiB\n",
              static_cast<unsigned long long>(runs), seeds.size(), o.seconds, slowest, rss);
  if (rss > o.max_rss_mib) {
    std::fprintf(stderr, "fuzz smoke: peak memory %ld MiB passed the limit of %ld MiB\n", rss,
                 o.max_rss_mib);
    return 1;
  }
  return 0;
}
