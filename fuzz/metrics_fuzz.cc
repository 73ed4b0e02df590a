// Fuzz target for the training-metrics reader (denpex/engine/metrics.h, engine/src/metrics/): any
// bytes as one trainer log, line by line through the shape table and whole through
// ReadTrainingMetrics and the baseline. None may crash or hang; every step read cites a line of
// the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string_view>

#include "denpex/engine/metrics.h"
#include "metrics/metric_lines.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::size_t lines = 1;
  for (std::size_t at = 0; at <= bytes.size();) {
    std::size_t nl = bytes.find('\n', at);
    if (nl == std::string_view::npos) nl = bytes.size();
    metrics::MetricLine m;
    (void)metrics::RecogniseMetricLine(bytes.substr(at, nl - at), &m);
    (void)metrics::LeadingStamp(bytes.substr(at, nl - at));
    at = nl + 1;
    lines += nl < bytes.size() ? 1 : 0;
  }
  const auto path = denpex::fuzz::Scratch("metrics") / "train.log";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(size));
  auto read = ReadTrainingMetrics(path);
  if (!read.ok()) return 0;
  for (const TrainingSeries& s : read->series) {
    for (const TrainingStep& t : s.steps) {
      if (t.line == 0 || t.line > lines) std::abort();
    }
  }
  (void)SummarizeBaseline(*read, {});
  (void)SummarizeBaseline(*read, {.not_after_step = 10, .last_steps = 3});
  return 0;
}
