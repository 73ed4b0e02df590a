// Fuzz target for the readers of an incident's files outside the line parser, through the whole
// diagnosis: `kubectl describe` blocks and events (ingest/resolve, analyze/platform), a pod's
// current and `--previous` logs (ingest/attempts), IB port counter files (analyze/ib_ports), a
// node's kernel log and the scheduler's log beside a rank's log. The input is split at "\n--\n"
// into those files, in the order below, written into a scratch incident and diagnosed on one
// thread. It may be INCONCLUSIVE or refused; it may never crash, hang or read out of bounds.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "denpex/engine/engine.h"
#include "scratch_dir.h"

namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 9> kFiles = {
    "gpu-0001/rank_0.log", "gpu-0001/ib_counters.log", "describe/llama-worker-1.txt",
    "events.txt",          "pods/llama-worker-1.log",  "pods/llama-worker-1.previous.log",
    "gpu-0002/kern.log",   "gpu-0002/ib_counters.log", "slurmctld.log",
};

const fs::path& Scratch() { return denpex::fuzz::Scratch("incident"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const fs::path root = Scratch() / "incident";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root, ec);
  for (std::size_t k = 0; k < kFiles.size() && !rest.empty(); ++k) {
    const std::size_t cut = rest.find("\n--\n");
    const std::string_view piece = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 4);
    const fs::path p = root / std::string(kFiles[k]);
    fs::create_directories(p.parent_path(), ec);
    std::ofstream(p, std::ios::binary)
        .write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  (void)denpex::engine::Diagnose(root, {.threads = 1});
  return 0;
}
