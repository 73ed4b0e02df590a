// Fuzz target for `denpex run`'s line splitter (cli/src/run/line_splitter.h): any bytes as a
// wrapped command's output, fed in reads of the sizes the input's first bytes choose, with a
// line limit of 1 to 256 bytes. No line it hands out holds a '\n' or passes the limit, and no
// byte is lost: the lines, with the '\n' (and a dropped '\r' before it) put back, are the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "run/line_splitter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max_line = 1 + data[0];
  const std::size_t read_size = 1 + data[1] % 64;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  denpex::cli::run::LineSplitter splitter(max_line);
  std::size_t bytes_out = 0;
  const auto emit = [&](std::string_view line, denpex::TimeNs) {
    if (line.size() > max_line || line.find('\n') != std::string_view::npos) std::abort();
    bytes_out += line.size();
  };
  for (std::size_t at = 0; at < input.size(); at += read_size) {
    splitter.Feed(input.substr(at, read_size), static_cast<denpex::TimeNs>(at), emit);
  }
  splitter.Finish(emit);
  if (splitter.has_partial()) std::abort();

  // Every byte but the line ends ('\n', and a '\r' right before one) came out.
  std::size_t ends = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i] != '\n') continue;
    ++ends;
    if (i > 0 && input[i - 1] == '\r') ++ends;
  }
  if (bytes_out + ends != input.size()) std::abort();
  return 0;
}
