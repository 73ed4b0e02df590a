// Fuzz target for the preflight tool parsers (preflight/tool_outputs.h): any bytes read as
// ibstat, ibv_devinfo, nvidia-smi topo -m, dcgmi diag -j, nccl-tests output and a `--fabric`
// probe file's first line, and split as a pdsh or dshbak
// collection of many hosts (host_split.h). None may crash, hang or read
// out of bounds; every line a fact cites exists, and a matrix row has one cell per column.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "denpex/engine/preflight.h"
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
  for (const IbPort& p : ParseIbvDevinfo(text))
    Check(p.line <= lines && p.rate_line <= lines && p.rate_gbps >= 0);
  if (const auto m = ParseTopoMatrix(text)) {
    for (const TopoMatrix::Row& r : m->rows) {
      Check(r.cells.size() == m->columns.size() && r.line >= 1 && r.line <= lines);
      Check(m->NvLinks(r) >= 0);
    }
  }
  (void)ParseDcgmDiagJson(text);
  // A `--fabric` probe file's first line: read back as it was written.
  if (const auto h = denpex::engine::ParseFabricProbeHeader(text)) {
    Check(h->line >= 1 && h->line <= 5 && !h->nodes.empty() && !h->status.empty());
    const auto again =
        denpex::engine::ParseFabricProbeHeader(denpex::engine::FormatFabricProbeHeader(*h));
    Check(again.has_value() && again->status == h->status);
  }
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
