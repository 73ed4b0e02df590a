// Docker's json-file logs: the Docker daemon's default log driver, and a container's log under
// Kubernetes with dockershim (`/var/log/containers/*.log` before 1.24), one JSON object a line,
//   {"log":"[rank3]:[E1206 ...]
//   ...\n","stream":"stderr","attrs":{...},"time":"2024-06-01T09:00:21.972589808Z"}
// (`log`, `stream` and `attrs` left out when empty; `time` RFC 3339 with up to nine fraction
// digits, trailing zeros dropped, UTC). Known by their first lines, never by their names, and
// read as the lines they stand for in the shape a container runtime writes the same lines (CRI:
// `<time> <stream> <F|P> <text>`), whose prefix the parser peels (docs/log_formats.md §1h): a
// record whose text does not end in a newline is the head of a line Docker split (at 16 KiB),
// tagged `P` and joined with the records after it. Lines and offsets cited in such a file are
// the decoded text's; its line numbers are the file's (one record a line) unless a record's text
// holds newlines (not Docker's own, which writes one line a record: a collector's merged record).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

// True when `head` (a file's first bytes) opens with Docker records: its first line whole, and
// each of its first four whole lines a record of Docker's keys alone with a `time`.
bool LooksDockerJson(std::string_view head);

struct DockerJsonText {
  std::vector<char> text;   // the decoded lines, each ending in a newline
  std::size_t records = 0;  // lines read as records
  std::size_t other_lines =
      0;  // lines that are no record (a line cut by a crash): kept as they are
  std::size_t extra_lines = 0;  // lines added by newlines inside a record's text
};

// The records of `bytes` (whole lines, or a file's last bytes) decoded and appended to `into`, in
// order, up to the line that takes its text to `limit` bytes. A file read in pieces is decoded
// piece by piece.
void DecodeDockerJson(std::string_view bytes, std::size_t limit, DockerJsonText* into);
DockerJsonText DecodeDockerJson(std::string_view bytes, std::size_t limit = std::string::npos);

// What a file's reader says of its decoded text when something in it is not one record a line
// (`other_lines`, `extra_lines`); empty when the file was Docker's records alone.
std::string DockerJsonProblem(const DockerJsonText& decoded);

}  // namespace denpex::engine
