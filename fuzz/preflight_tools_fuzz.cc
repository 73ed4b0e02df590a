// Fuzz target for the preflight tool parsers (preflight/tool_outputs.h): any bytes read as
// ibstat, nvidia-smi topo -m, dcgmi diag -j and nccl-tests output, and split as a pdsh or dshbak
// collection of many hosts (host_split.h). None may crash, hang or read
// out of bounds; every line a fact cites exists, and a matrix row has one cell per column.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "preflight/host_split.h"
#include "preflight/tool_outputs.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine::preflight;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto lines = static_cast<std::int32_t>(std::count(text.begin(), text.end(), '\n') + 1);
  for (const IbPort& p : ParseIbstat(text)) Check(p.line <= lines && p.rate_line <= lines);
  if (const auto m = ParseTopoMatrix(text)) {
    for (const TopoMatrix::Row& r : m->rows) {
      Check(r.cells.size() == m->columns.size() && r.line >= 1 && r.line <= lines);
      Check(m->NvLinks(r) >= 0);
    }
  }
  (void)ParseDcgmDiagJson(text);
  for (const NcclTestsRun& run : ParseNcclTests(text)) {
    Check(run.avg_line <= lines);
    for (const NcclTestsRow& row : run.rows) Check(row.line >= 1 && row.line <= lines);
  }
  // A fan-out tool's file: every part's lines are lines of the input, in order.
  for (const HostText& part : SplitByHost(text)) {
    Check(!part.host.empty());
    for (std::size_t i = 0; i < part.lines.size(); ++i) {
      Check(part.lines[i] >= 1 && part.lines[i] <= lines &&
            (i == 0 || part.lines[i] > part.lines[i - 1]));
    }
  }
  Check(ExpandHostList(text.substr(0, 256)).size() <= 65536);
  return 0;
}
