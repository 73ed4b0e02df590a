// Fuzz target for the node files the engine reads outside the line parser: a node's nvidia-smi
// and DCGM snapshots, CUDA_VISIBLE_DEVICES and the driver's UUID lines
// (engine/src/analyze/gpu_health.h), and DeepSpeed's `--world_info` value on a runner's line
// (engine/src/parse/world_info.h). Any bytes; none may crash, hang or read out of bounds, and
// the hosts the world info decodes hold consecutive ranks from 0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analyze/gpu_health.h"
#include "parse/world_info.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  NodeGpuHealth health;
  ParseGpuHealthText(text, 0, &health);
  ParseVisibleDevices(text, 1, &health);
  for (std::string_view value : {WorldInfoArgument(text), text}) {
    std::int32_t next = 0;
    for (const WorldHost& h : DecodeWorldInfo(value)) {
      if (h.procs < 0 || h.first_rank != next) std::abort();
      next += h.procs;
    }
  }
  return 0;
}
