// libFuzzer target for the engine's line parser: any bytes as one log file, parsed whole and
// in small chunks, and split into the streams of its collector tags. It must never crash, hang
// or read out of bounds, both ways must agree on the number of lines, and the streams must hold
// every line once, where the file has it. Build: cmake -DDENPEX_BUILD_FUZZ=ON
// -DCMAKE_CXX_COMPILER=clang++.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/chunks.h"
#include "ingest/streams.h"
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
  // Read as a file relaying several containers' tagged lines (ingest/streams.h): every line in
  // one stream, in the file's order within it, each the file's bytes at its offset; a stream's
  // events cited at the file's lines.
  std::size_t dealt = 0;
  for (const TaggedStream& stream : SplitTaggedStreams(text, ctx.prefixes)) {
    std::uint32_t last = 0;
    for (const TaggedStream::Line& l : stream.lines) {
      if (l.number <= last || l.file_offset >= size || l.text_offset >= stream.text.size())
        std::abort();
      last = l.number;
      const std::string_view in_stream = std::string_view(stream.text).substr(l.text_offset);
      const std::size_t end = in_stream.find('\n');
      if (text.substr(l.file_offset).substr(0, end) != in_stream.substr(0, end)) std::abort();
    }
    dealt += stream.lines.size();
    ParsedLog log = ParseLog(stream.text, FileContext{.prefixes = SniffPrefixes(stream.text)});
    CiteAtFile(stream, &log);
    for (const Event& e : log.events) {
      if (e.offset >= size || e.line < 1 || e.line > static_cast<std::uint32_t>(whole.lines))
        std::abort();
    }
  }
  if (dealt != 0 && static_cast<std::int64_t>(dealt) != whole.lines) std::abort();
  return 0;
}
