// Docker's json-file records, as the Docker daemon writes a container's output (moby's jsonlog):
// one JSON object a line. Written here apart from the engine's decoder and the eval shape's
// writer, so each is tested against the format, not against the other.
#pragma once

#include <string>
#include <string_view>

namespace denpex::testing {

// A JSON string's content as moby escapes a log: `\n`, `\r`, `\"`, `\\`; `<`, `>`, `&` and the
// other control bytes (a colour code's ESC, a tab) as `\u00XX`.
inline std::string DockerEscaped(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '\n' || b == '\r') {
      out += b == '\n' ? "\\n" : "\\r";
    } else if (b == '"' || b == '\\') {
      out += '\\';
      out += c;
    } else if (b < 0x20 || b == '<' || b == '>' || b == '&') {
      out += "\\u00";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    } else {
      out += c;
    }
  }
  return out;
}

// One record: `text` (with its newline when `ends_line`; Docker leaves it off the records of a
// line it split), the stream, `attrs` (a JSON object, or empty: none) and the time, in Docker's
// order, and the record's own newline.
inline std::string DockerRecord(std::string_view text, bool ends_line, std::string_view stream,
                                std::string_view time, std::string_view attrs = {}) {
  std::string r = "{\"log\":\"";
  r += DockerEscaped(text);
  if (ends_line) r += "\\n";
  r += "\",\"stream\":\"";
  r += stream;
  r += '"';
  if (!attrs.empty()) {
    r += ",\"attrs\":";
    r += attrs;
  }
  r += ",\"time\":\"";
  r += time;
  r += "\"}\n";
  return r;
}

}  // namespace denpex::testing
