// Logs stored as one JSON record a line, known by their first lines (never by their names) and
// read as the text lines the records stand for, in the shape the same lines take when a tool
// prints them, whose prefixes the parser peels (docs/log_formats.md §1h):
//
// - Docker's json-file logs (the Docker daemon's default log driver; a pod's log under Kubernetes
//   with dockershim, before 1.24):
//     {"log":"[rank3]:[E1206 ...]
//     ...\n","stream":"stderr","attrs":{...},"time":"2024-06-01T09:00:21.97258980Z"}
//   (`log`, `stream` and `attrs` left out when empty; `time` Go's RFC3339Nano, UTC), read as the
//   CRI line it stands for, `<time> <stream> F|P <text>`: a record whose text does not end in a
//   newline is the head of a line Docker split (at 16 KiB), tagged `P` and joined with the records
//   after it.
// - A journal exported with `journalctl -o json`: {"__REALTIME_TIMESTAMP":"1732897531123456",
//   "_HOSTNAME":"gpu-0001","SYSLOG_IDENTIFIER":"kernel","_TRANSPORT":"kernel","MESSAGE":"NVRM:
//   Xid ...", ...} (every value a string; MESSAGE an array of bytes where it is no UTF-8), read
//   as `journalctl -o short-iso-precise` prints the entry, `<time> <host> <identifier>[<pid>]:
//   <message>` (`<host> kernel: ` for the kernel's), in UTC.
// - A log shipper's records of the cluster's containers (Fluent Bit's and Fluentd's `kubernetes`
//   filter, Vector's `kubernetes_logs`, Elastic's ECS documents, Google Cloud Logging's entries,
//   Loki's `logcli --output=jsonl`): {"log":"[rank3]:[E1206 ...] ...","kubernetes":{"pod_name":
//   "llama-worker-3","host":"gpu-node-7",...},"date":1717232421.972589}, the line's text, its time
//   and its pod or node under each shipper's keys, read as the line Loki's `logcli query` prints
//   for such a stream, `<time> {container="...", namespace="...", node_name="...", pod="..."}
//   <text>`: a file of several pods' records is then read as a stream per pod (ingest/streams.h),
//   each the node its records name.
// - The same records as one JSON array (`gcloud logging read --format=json`, the Logs Explorer's
//   download: pretty-printed, its entries newest first unless asked otherwise; an Elasticsearch
//   search response's `hits.hits`; a CloudWatch Logs response's `events`, `aws logs
//   filter-log-events`: each event's `logStreamName` a stream of its own, its `message` a line or,
//   as EKS Container Insights' Fluent Bit sends it, a shipper's record), read whole and put in the
//   order of their times (and of their lines in their file, ECS's `log.offset`) before they are
//   read as those lines. Read by `denpex watch` once whole: an export is written once.
// - CloudWatch Logs events as `aws logs tail <group>` prints them (`--format detailed`, the
//   default): `2024-06-01T09:00:21.972000+00:00 llama/algo-2-1717232400 [default3]:...`, the
//   event's time, its log stream and its message, read as a CloudWatch response's event (each
//   log stream a stream of its own; a message that is a shipper's record, as Container Insights
//   sends it, read as that record); a message's further lines, which open with no stamp, as they
//   stand. Lines of a time and a shipper's record with no stream (`--format short`'s, an export to
//   S3's `2024-06-01T09:00:21.972Z {...}`) are read as those records.
//
// Lines and offsets cited in such a file are the decoded text's; its line numbers are the file's
// (one record a line) unless a record's text holds newlines (a journal message of several lines,
// a collector's merged record) or the records are an array's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

enum class JsonLog : std::uint8_t {
  kNone,
  kDocker,
  kJournal,
  kShipper,
  kShipperArray,
  kCloudWatchTail,
};

// What `head` (a file's first bytes) holds: each of its first four whole lines (one at least) a
// Docker record of Docker's keys alone with an RFC 3339 `time`, or a journal entry with its
// `__REALTIME_TIMESTAMP` and `MESSAGE`, or a shipper's record with a line, its time and its pod or
// node; or a JSON array whose first four elements (those `head` holds whole, one at least) are
// such records; or `aws logs tail`'s lines (its first whole line one, and half of its first 16);
// else kNone (a program's own JSON lines are read as lines).
JsonLog SniffJsonLog(std::string_view head);
std::string_view JsonLogName(
    JsonLog kind);  // "Docker JSON", "journal JSON", "log shipper JSON", ...

struct JsonLogText {
  std::vector<char> text;   // the decoded lines, each ending in a newline
  std::size_t records = 0;  // lines read as records
  std::size_t other_lines =
      0;  // lines that are no record (a line cut by a crash): kept as they are
  std::size_t extra_lines = 0;  // lines added by newlines inside a record's text
  // An array's (kShipperArray) records that stood out of time order (neither oldest nor newest
  // first) and had no place in their file to keep their order within one time (`log.offset`).
  std::size_t unordered = 0;
  // Of those, two of one stream (pod, container, namespace, node) that share a time: the order of
  // a stream's lines of one time is not known (FileContext::ties_unordered).
  bool ties_unordered = false;
};

// The records of `bytes` (whole lines, or a file's last bytes) decoded and appended to `into`, in
// order, up to the line that takes its text to `limit` bytes. A file read in pieces is decoded
// piece by piece; an array (kShipperArray) only whole.
void DecodeJsonLog(std::string_view bytes, JsonLog kind, std::size_t limit, JsonLogText* into);
JsonLogText DecodeJsonLog(std::string_view bytes, JsonLog kind,
                          std::size_t limit = std::string::npos);

// Whether `bytes` hold one whole JSON value from their start (a byte order mark and spaces around
// it): an export's array (kShipperArray) written to its end.
bool WholeJsonValue(std::string_view bytes);

// What a file's reader says of its decoded text when something in it is not one record a line
// (`other_lines`, `extra_lines`); empty when the file was records alone.
std::string JsonLogProblem(const JsonLogText& decoded, JsonLog kind);

}  // namespace denpex::engine
