// deep_bench: `checkpoint verify --deep` throughput on one core. Writes DIR/step_1/model.pt, a
// torch.save zip (CRC-32 recorded, "FB"-aligned, ZIP64) of STORAGES float32 storages of MIB
// MiB each holding finite values, under the model.layers.K.weight names a state dict has.
// Before timing it checks the answers: the file verifies VALID with every byte scanned, and
// the same archive with one NaN planted is CORRUPT naming the tensor. Then it verifies DIR
// REPEAT times (the file in the page cache) and prints the best wall and thread CPU time and
// GB/s. Peak memory of the verification alone: /usr/bin/time -v denpex checkpoint verify
// --deep DIR (docs/benchmarks.md).
// Usage: deep_bench DIR [MIB [STORAGES [REPEAT]]]   (defaults 256, 4, 3)
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/byte_file.h"
#include "checkpoint/torch_file.h"
#include "denpex/engine/checkpoint.h"
#include "model/ckpt_bytes.h"

namespace {

namespace fs = std::filesystem;
using namespace denpex::sim::ckpt;  // NOLINT: Py, Dict, Tensor, TorchZip

double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// `bytes` of float32 values in (-1, 1), from a fixed xorshift stream.
std::string FiniteFloats(std::uint64_t bytes, std::uint64_t seed) {
  std::string out(bytes, '\0');
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (std::uint64_t k = 0; k + 4 <= bytes; k += 4) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const float v = static_cast<float>(static_cast<std::int64_t>(x >> 11) % 2000001 - 1000000) * 1e-6f;
    std::memcpy(out.data() + k, &v, 4);
  }
  return out;
}

std::string Archive(const std::vector<std::string>& storages) {
  std::vector<std::pair<Py, Py>> state;
  for (std::size_t k = 0; k < storages.size(); ++k) {
    state.push_back({Str("model.layers." + std::to_string(k) + ".weight"),
                     Tensor(std::to_string(k), static_cast<std::int64_t>(storages[k].size() / 4))});
  }
  return TorchZip("model", Dict(std::move(state)), storages);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: deep_bench DIR [MIB [STORAGES [REPEAT]]]\n");
    return 2;
  }
  const fs::path dir = argv[1];
  const std::uint64_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  const int storages = argc > 3 ? std::atoi(argv[3]) : 4;
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 3;
  namespace engine = denpex::engine;

  // The answer with a NaN planted, on a small archive in memory.
  {
    std::vector<std::string> small = {FiniteFloats(1 << 20, 1), FiniteFloats(1 << 20, 2)};
    const float nan = std::nanf("");
    std::memcpy(small[1].data() + 4 * 1000, &nan, 4);
    engine::ckpt::DeepReader deep;
    const auto f = engine::ckpt::CheckTorchFile(
        engine::ckpt::ByteFile::FromBytes(Archive(small)), &deep);
    if (f.verdict != engine::CheckpointVerdict::kCorrupt ||
        f.detail.find("tensor 'model.layers.1.weight' holds NaN at element 1,000") ==
            std::string::npos) {
      std::fprintf(stderr, "wrong answer on the planted NaN: %s\n", f.detail.c_str());
      return 1;
    }
  }
  {
    std::vector<std::string> data;
    for (int k = 0; k < storages; ++k) data.push_back(FiniteFloats(mib << 20, 10 + k));
    fs::create_directories(dir / "step_1");
    std::ofstream(dir / "step_1" / "model.pt", std::ios::binary) << Archive(data);
  }
  const std::uint64_t file_bytes = fs::file_size(dir / "step_1" / "model.pt");
  const std::uint64_t float_bytes = (mib << 20) * static_cast<std::uint64_t>(storages);
  double best_wall = 1e9, best_cpu = 1e9;
  for (int r = 0; r < repeat + 1; ++r) {  // the first run warms the page cache
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = ThreadSeconds();
    auto report = engine::VerifyCheckpointDir(dir, {.deep = true});
    const double cpu = ThreadSeconds() - c0;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!report.ok() || report->outcome.decision() != denpex::v1::CHECKPOINT_DECISION_RESUME ||
        report->outcome.path() != "step_1") {
      std::fprintf(stderr, "wrong answer on the clean file:\n%s\n",
                   report.ok() ? engine::RenderCheckpointText(*report).c_str() : "unreadable");
      return 1;
    }
    const std::string expect = denpex::engine::ckpt::Thousands(float_bytes) +
                               " bytes of floating-point tensors hold no NaN/Inf";
    if (engine::RenderCheckpointText(*report).find(expect) == std::string::npos) {
      std::fprintf(stderr, "not every byte scanned:\n%s\n",
                   engine::RenderCheckpointText(*report).c_str());
      return 1;
    }
    if (r > 0 && wall < best_wall) best_wall = wall, best_cpu = cpu;
  }
  std::printf("file %.3f GB (%d float32 storages of %llu MiB); answers checked\n", file_bytes / 1e9,
              storages, static_cast<unsigned long long>(mib));
  std::printf("best of %d: %.3f s wall, %.3f s thread CPU: %.2f GB/s wall, %.2f GB/s per core\n",
              repeat, best_wall, best_cpu, file_bytes / 1e9 / best_wall, file_bytes / 1e9 / best_cpu);
  return 0;
}
