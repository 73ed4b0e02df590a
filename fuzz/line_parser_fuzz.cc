// libFuzzer target for the engine's line parser: any bytes as one log file, parsed whole and
// in small chunks. It must never crash, hang or read out of bounds, and both ways must agree
// on the number of lines. Build: cmake -DDENPEX_BUILD_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/chunks.h"
#include "parse/parse_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const FileContext ctx{.file = 0, .name_rank = 3, .local_rank = 1, .kernel = size % 2 == 0,
                        .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseLog(text, ctx);
  const ParsedLog chunked = ParseChunked(text, ctx, 64);
  if (whole.lines != chunked.lines) std::abort();
  for (const Event& e : whole.events) {
    if (e.offset + e.length > size) std::abort();  // a cited line lies inside the file
  }
  return 0;
}
