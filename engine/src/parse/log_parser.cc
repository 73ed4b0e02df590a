#include "parse/log_parser.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "parse/families.h"
#include "parse/headers.h"
#include "parse/lines.h"
#include "parse/records.h"
#include "parse/scan.h"

namespace denpex::engine {

ParsedLog ParseLog(std::string_view text, const FileContext& ctx, std::uint32_t first_line,
                   std::uint64_t base_offset) {
  LogParser parser(ctx);
  std::uint64_t offset = 0;
  std::uint32_t number = first_line - 1;
  while (offset < text.size()) {
    const char* start = text.data() + offset;
    const void* nl = std::memchr(start, '\n', text.size() - offset);
    const std::size_t len = nl ? static_cast<const char*>(nl) - start : text.size() - offset;
    std::string_view line(start, len);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    parser.Line({line, base_offset + offset, ++number});
    offset += len + 1;
  }
  return parser.Finish();
}

}  // namespace denpex::engine
