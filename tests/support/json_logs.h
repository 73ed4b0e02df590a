// Logs stored as JSON records, one a line, written as the software that stores them writes them:
// Docker's json-file records (moby's jsonlog) and a journal's `journalctl -o json` export. Written
// here apart from the engine's decoder and the eval shape's writer, so each is tested against the
// format, not against the other.
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

// One journal entry as `journalctl -o json` prints it (every value a string, the fields in the
// journal's order, more fields than the engine reads): `message` at `realtime_us` (microseconds
// since the epoch) from `identifier[pid]` on `host`, or the kernel's when `identifier` is
// "kernel"; the entry's own newline.
inline std::string JournalRecord(std::string_view message, long long realtime_us,
                                 std::string_view host, std::string_view identifier, int pid) {
  const bool kernel = identifier == "kernel";
  std::string r =
      "{\"__CURSOR\":\"s=6d0b;i=3f1;b=9c4e;m=1a2b;t=5f0c;x=77aa\",\"__REALTIME_TIMESTAMP\":\"";
  r += std::to_string(realtime_us);
  r += "\",\"__MONOTONIC_TIMESTAMP\":\"2686172764\",\"_BOOT_ID\":"
       "\"9c4e0a1b2c3d4e5f60718293a4b5c6d7\",";
  r += "\"PRIORITY\":\"";
  r += kernel ? "3" : "6";
  r += "\",\"_TRANSPORT\":\"";
  r += kernel ? "kernel" : "stdout";
  r += "\",\"SYSLOG_IDENTIFIER\":\"";
  r += identifier;
  r += "\",";
  if (!kernel) {
    r += "\"_PID\":\"";
    r += std::to_string(pid);
    r += "\",\"_COMM\":\"";
    r += identifier;
    r += "\",";
  }
  r += "\"_HOSTNAME\":\"";
  r += host;
  r += "\",\"MESSAGE\":\"";
  r += DockerEscaped(message);
  r += "\"}\n";
  return r;
}

}  // namespace denpex::testing
