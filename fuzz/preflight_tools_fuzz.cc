// Fuzz target for `denpex preflight`'s readers of the tools' outputs (preflight/tool_outputs.h):
// any bytes read as `ibstat`, `nvidia-smi topo -m`, `dcgmi diag -j` and nccl-tests output. None
// may crash, hang or read out of bounds; every cited line lies inside the input's lines.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "preflight/tool_outputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine::preflight;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto lines = static_cast<std::int32_t>(std::count(text.begin(), text.end(), '\n') + 1);
  auto check = [&](std::int32_t line) {
    if (line < 0 || line > lines) std::abort();
  };
  for (const IbPort& p : ParseIbstat(text)) check(p.line), check(p.rate_line);
  if (auto topo = ParseTopoMatrix(text)) {
    for (const auto& row : topo->rows) {
      check(row.line);
      (void)topo->NvLinks(row);
    }
  }
  (void)ParseDcgmDiagJson(text);
  for (const NcclTestsRun& run : ParseNcclTests(text)) {
    check(run.avg_line);
    for (const auto& row : run.rows) check(row.line);
  }
  return 0;
}
