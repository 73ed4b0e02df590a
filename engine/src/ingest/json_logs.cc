#include "ingest/json_logs.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "denpex/common/text.h"
#include "denpex/common/time.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

// Past JSON's whitespace (a line's; a pretty-printed array's newlines too).
void SkipSpaces(std::string_view s, std::size_t* i) {
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r' || s[*i] == '\n')) ++*i;
}

// The JSON string at s[*i] (its opening quote), its escapes left in; *i then past its closing
// quote. False when it is no string or does not close on this line. A log line's text holds
// few escapes: the search goes from quote to quote (memchr), looking back for a backslash.
bool RawString(std::string_view s, std::size_t* i, std::string_view* raw) {
  if (*i >= s.size() || s[*i] != '"') return false;
  const std::size_t begin = *i + 1;
  std::size_t quote = 0;
  for (std::size_t at = begin;;) {
    if (quote < at) quote = s.find('"', at);  // else the quote found before is still ahead
    if (quote == std::string_view::npos) return false;
    const std::size_t slash = s.substr(0, quote).find('\\', at);
    if (slash == std::string_view::npos) {
      *raw = s.substr(begin, quote - begin);
      *i = quote + 1;
      return true;
    }
    at = slash + 2;  // past the escaped character (`\"` among them)
  }
}

// Past the JSON value at s[*i] (an object, array, string, number or literal).
bool SkipValue(std::string_view s, std::size_t* i) {
  if (*i >= s.size()) return false;
  std::string_view raw;
  if (s[*i] == '"') return RawString(s, i, &raw);
  if (s[*i] != '{' && s[*i] != '[') {
    const std::size_t begin = *i;
    while (*i < s.size() && s[*i] != ',' && s[*i] != '}' && s[*i] != ']' && s[*i] != ' ' &&
           s[*i] != '\n' && s[*i] != '\r' && s[*i] != '\t')
      ++*i;
    return *i > begin;
  }
  int depth = 0;
  while (*i < s.size()) {
    const char c = s[*i];
    if (c == '"') {
      if (!RawString(s, i, &raw)) return false;
      continue;
    }
    ++*i;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return true;
  }
  return false;
}

// RFC 3339 as Go's RFC3339Nano writes it: `2024-06-01T09:00:21.972589808Z`, the fraction's
// trailing zeros dropped (none at all on a whole second), `Z` or an offset.
constexpr std::string_view kSecondShape = "dddd-dd-ddTdd:dd:dd";

// Whether `t` opens with a date and a time to the second, `2024-06-01T09:00:21`.
bool SecondLike(std::string_view t) {
  if (t.size() < kSecondShape.size()) return false;
  for (std::size_t k = 0; k < kSecondShape.size(); ++k) {
    if (kSecondShape[k] == 'd' ? !IsDigit(t[k]) : t[k] != kSecondShape[k]) return false;
  }
  return true;
}

bool TimeLike(std::string_view t) {
  if (t.size() < kSecondShape.size() + 1 || !SecondLike(t)) return false;
  std::size_t k = kSecondShape.size();
  if (t[k] == '.') {
    const std::size_t digits = ++k;
    while (k < t.size() && IsDigit(t[k])) ++k;
    if (k == digits || k - digits > 9) return false;
  }
  const std::string_view zone = t.substr(k);
  return zone == "Z" ||
         (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && IsDigit(zone[1]) &&
          IsDigit(zone[2]) && zone[3] == ':' && IsDigit(zone[4]) && IsDigit(zone[5]));
}

// `1717232421.972589`: seconds since the epoch with a fraction (Fluent Bit's `date` as a
// double), or a whole number of milli-, micro- or nanoseconds (13, 16 or 19 digits), as
// nanoseconds; nullopt when it is no such number, or one of its full width past 2255 (9 × 10^9
// seconds: TimeNs holds up to 2262).
std::optional<TimeNs> EpochSeconds(std::string_view v) {
  if ((v.size() == 13 || v.size() == 16 || v.size() == 19) &&
      std::all_of(v.begin(), v.end(), IsDigit)) {  // not `1772442617.00832`: seconds, 16 bytes
    if (v[0] == '9') return std::nullopt;
    TimeNs n = 0;
    for (const char c : v) n = n * 10 + (c - '0');
    return v.size() == 13 ? n * 1'000'000 : v.size() == 16 ? n * 1'000 : n;
  }
  TimeNs seconds = 0, fraction = 0;
  std::size_t k = 0, digits = 0;
  for (; k < v.size() && IsDigit(v[k]) && k < 10; ++k) seconds = seconds * 10 + (v[k] - '0');
  if (k == 0 || (k == 10 && v[0] == '9')) return std::nullopt;
  if (k < v.size() && v[k] == '.') {
    for (++k; k < v.size() && IsDigit(v[k]); ++k, ++digits)
      if (digits < 9) fraction = fraction * 10 + (v[k] - '0');
  }
  if (k != v.size()) return std::nullopt;
  for (; digits < 9; ++digits) fraction *= 10;
  return seconds * 1'000'000'000 + fraction;
}

// The JSON object at s[*i] (its `{`): each of its keys handed to `field(key, &i)`, which reads the
// value at s[i] (and moves i past it) or returns false; *i then past its `}`. False when it is
// no object.
template <typename Field>
bool ObjectFields(std::string_view s, std::size_t* i, Field field) {
  SkipSpaces(s, i);
  if (*i >= s.size() || s[*i] != '{') return false;
  ++*i;
  SkipSpaces(s, i);
  if (*i < s.size() && s[*i] == '}') {
    ++*i;
    return true;
  }
  for (;;) {
    SkipSpaces(s, i);
    std::string_view key;
    if (!RawString(s, i, &key)) return false;
    SkipSpaces(s, i);
    if (*i >= s.size() || s[*i] != ':') return false;
    ++*i;
    SkipSpaces(s, i);
    if (!field(key, i)) return false;
    SkipSpaces(s, i);
    if (*i < s.size() && s[*i] == ',') {
      ++*i;
      continue;
    }
    if (*i < s.size() && s[*i] == '}') break;
    return false;
  }
  ++*i;
  return true;
}

// A line read as one JSON object (ObjectFields), nothing after it; false when it is none.
template <typename Field>
bool ForEachField(std::string_view line, Field field) {
  std::size_t i = 0;
  if (!ObjectFields(line, &i, field)) return false;
  SkipSpaces(line, &i);
  return i == line.size();
}

struct Record {
  std::string_view log, stream, time;
  bool has_log = false, has_time = false;
  bool docker_keys = true;  // no key but log, stream, attrs and time
};

// One line read as a JSON object of string values where Docker writes them.
bool ParseRecord(std::string_view line, Record* r) {
  const bool object = ForEachField(line, [&](std::string_view key, std::size_t* i) {
    if (key == "log") return r->has_log = RawString(line, i, &r->log);
    if (key == "stream") return RawString(line, i, &r->stream);
    if (key == "time") return r->has_time = RawString(line, i, &r->time);
    r->docker_keys &= key == "attrs";
    return SkipValue(line, i);
  });
  return object && r->has_time && TimeLike(r->time);
}

int HexDigit(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The four hex digits at raw[k] (after `\u`), or -1.
std::int32_t Hex4(std::string_view raw, std::size_t k) {
  if (k + 4 > raw.size()) return -1;
  std::int32_t v = 0;
  for (std::size_t j = k; j < k + 4; ++j) {
    const int d = HexDigit(raw[j]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// A JSON string's content with its escapes read (`\u001b` is the ESC of a colour code, `\u003c`
// Docker's `<`); a lone surrogate or a broken escape is U+FFFD.
void Unescape(std::string_view raw, std::string* out) {
  constexpr std::uint32_t kReplacement = 0xFFFD;
  std::size_t k = 0;
  while (k < raw.size()) {
    const std::size_t slash = raw.find('\\', k);
    out->append(
        raw.substr(k, slash == std::string_view::npos ? std::string_view::npos : slash - k));
    if (slash == std::string_view::npos) return;
    k = slash + 1;
    if (k >= raw.size()) return;
    const char e = raw[k++];
    if (e != 'u') {  // `\n`, `\t`, `\r`, `\b`, `\f`; `\"`, `\\` and `\/` stand for themselves
      constexpr std::string_view kNamed = "ntrbf", kBytes = "\n\t\r\b\f";
      const std::size_t named = kNamed.find(e);
      out->push_back(named == std::string_view::npos ? e : kBytes[named]);
      continue;
    }
    std::int32_t cp = Hex4(raw, k);
    if (cp < 0) {
      AppendUtf8(kReplacement, out);
      continue;
    }
    k += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF && k + 6 <= raw.size() && raw[k] == '\\' &&
        raw[k + 1] == 'u') {
      const std::int32_t low = Hex4(raw, k + 2);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        k += 6;
      }
    }
    AppendUtf8(cp >= 0xD800 && cp <= 0xDFFF ? kReplacement : static_cast<std::uint32_t>(cp), out);
  }
}

void Append(std::vector<char>* text, std::string_view s) {
  text->insert(text->end(), s.begin(), s.end());
}

// `raw` (a JSON string's content) with its escapes read: itself when it holds none, else `*buffer`.
std::string_view Unescaped(std::string_view raw, std::string* buffer) {
  if (raw.find('\\') == std::string_view::npos) return raw;
  buffer->clear();
  Unescape(raw, buffer);
  return *buffer;
}

// ---- journalctl -o json -------------------------------------------------------------------

// The fields of a journal entry a line shows (`journalctl -o short-iso-precise`'s).
struct JournalRecord {
  std::string_view realtime, host, identifier, comm, pid, transport, message;
  std::string_view shipper_host;  // Vector's `host` (its journald source's _HOSTNAME)
  std::string_view date;          // a shipper's time, where its entry has no __REALTIME_TIMESTAMP
  TimeNs time = 0;                // the entry's, from either
  bool has_realtime = false, has_message = false;
  bool message_bytes = false;  // MESSAGE as an array of bytes (not valid UTF-8)
  bool message_null = false;   // MESSAGE left out as too large (`null`)
};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// Whether `key` is the journal field `name` (upper case) in either case: Fluent Bit's `systemd`
// input lowers every key with `Lowercase On`, Vector's journald source its `message`.
bool JournalKey(std::string_view key, std::string_view name) {
  if (key.size() != name.size()) return false;
  for (std::size_t k = 0; k < key.size(); ++k) {
    if (key[k] != name[k] && key[k] != name[k] - 'A' + 'a') return false;
  }
  return true;
}

// One line read as a journal entry: an object whose values are strings (a few are arrays of
// bytes, or null), `__REALTIME_TIMESTAMP` and `MESSAGE` among its keys (Vector's journald source
// writes `message` and, for `_HOSTNAME`, `host`). Or an entry as Fluent Bit's `systemd` input
// ships it: the journal's fields but its address fields (`__CURSOR`, `__REALTIME_TIMESTAMP`), the
// entry's time in the output's `date` (seconds since the epoch, or ISO 8601), one of `_HOSTNAME`,
// `_TRANSPORT` and `SYSLOG_IDENTIFIER` beside `MESSAGE` (each key in upper or lower case).
bool ParseJournalRecord(std::string_view line, JournalRecord* r) {
  const bool object = ForEachField(line, [&](std::string_view key, std::size_t* i) {
    std::string_view* field = JournalKey(key, "__REALTIME_TIMESTAMP") ? &r->realtime
                              : key == "date"                         ? &r->date
                              : JournalKey(key, "_HOSTNAME")          ? &r->host
                              : key == "host"                         ? &r->shipper_host
                              : JournalKey(key, "SYSLOG_IDENTIFIER")  ? &r->identifier
                              : JournalKey(key, "_COMM")              ? &r->comm
                              : JournalKey(key, "_PID")               ? &r->pid
                              : JournalKey(key, "_TRANSPORT")         ? &r->transport
                              : JournalKey(key, "MESSAGE")            ? &r->message
                                                                      : nullptr;
    if (field != nullptr && *i < line.size() && line[*i] == '"') {
      if (!RawString(line, i, field)) return false;
      r->has_realtime |= field == &r->realtime;
      r->has_message |= field == &r->message;
      return true;
    }
    const std::size_t begin = *i;
    if (!SkipValue(line, i)) return false;
    if (field == &r->message) {  // an array of bytes, or null
      r->has_message = true;
      r->message = line.substr(begin, *i - begin);
      r->message_bytes = r->message.starts_with('[');
      r->message_null = r->message == "null";
    }
    if (field == &r->date) r->date = line.substr(begin, *i - begin);  // a number
    return true;
  });
  if (!object || !r->has_message) return false;
  if (r->has_realtime) {
    if (!AllDigits(r->realtime) || r->realtime.size() > 19) return false;
    std::uint64_t us = 0;  // wraps past the year 2262, as TimeNs would (no such entry is real)
    for (const char c : r->realtime) us = us * 10 + static_cast<std::uint64_t>(c - '0');
    r->time = static_cast<TimeNs>(us * 1000);
    if (r->host.empty()) r->host = r->shipper_host;  // Vector's journald source
    return true;
  }
  if (r->host.empty() && r->transport.empty() && r->identifier.empty()) return false;
  const std::optional<TimeNs> t = TimeLike(r->date) ? ParseRfc3339(r->date) : EpochSeconds(r->date);
  r->time = t.value_or(0);
  return t.has_value();
}

// MESSAGE's text: a string's escapes read, an array's bytes (`[78,86,82,77,...]`) as they are.
void JournalMessage(const JournalRecord& r, std::string* out) {
  if (r.message_null) return;
  if (!r.message_bytes) {
    Unescape(r.message, out);
    return;
  }
  std::int64_t byte = -1;
  for (const char c : r.message) {
    if (IsDigit(c)) {
      byte = (byte < 0 ? 0 : byte * 10) + (c - '0');
    } else if (byte >= 0) {
      out->push_back(static_cast<char>(byte & 0xFF));
      byte = -1;
    }
  }
}

// `2026-11-29T16:25:31.123456+00:00 gpu-0001 kernel: ` or `... gpu-0001 python3[4242]: `, the
// entry's line as `journalctl -o short-iso-precise` prints it (UTC): the journal's time, host and
// process, which the parser peels as it peels any journal's.
void AppendJournalPrefix(const JournalRecord& r, std::vector<char>* text) {
  const std::string stamp = FormatRfc3339(r.time);  // `2026-11-29T16:25:31.123456000Z`
  Append(text, std::string_view(stamp).substr(0, 26));
  Append(text, "+00:00 ");
  Append(text, r.host.empty() ? std::string_view("localhost") : r.host);
  text->push_back(' ');
  if (r.transport == "kernel") {
    Append(text, "kernel: ");
    return;
  }
  Append(text, !r.identifier.empty() ? r.identifier
               : !r.comm.empty()     ? r.comm
                                     : std::string_view("unknown"));
  if (AllDigits(r.pid)) {
    text->push_back('[');
    Append(text, r.pid);
    text->push_back(']');
  }
  Append(text, ": ");
}

// ---- a log shipper's records -------------------------------------------------------------

// What a shipper's record says of its line, each the value of one of the keys below.
enum class Role : std::uint8_t {
  kText,
  kTime,
  kPod,
  kContainer,
  kNamespace,
  kNode,
  kOffset,
  kStream,  // a log stream's name (CloudWatch Logs): a stream of its own, no pod or node
};

struct ShipperKey {
  std::string_view path;  // the key's path through nested objects, `.`-joined
  Role role;
};

// The keys the shippers of Kubernetes clusters and of machines write (a record that names one role
// under two rows' keys takes the earlier row's). Fluent Bit's and Fluentd's `kubernetes` filter
// puts the
// pod's node in `kubernetes.host`, Vector's `kubernetes_logs` source in
// `kubernetes.pod_node_name`, Elastic's ECS (Filebeat, Elastic Agent) in `kubernetes.node.name`
// (and the machine in `host.name`), Google Cloud Logging in the `compute.googleapis.com/
// resource_name` label; Loki's `logcli query --output=jsonl` holds the stream's labels.
constexpr ShipperKey kShipperKeys[] = {
    {"log", Role::kText},                  // Fluent Bit, Fluentd (the container runtime's field)
    {"message", Role::kText},              // Vector, ECS
    {"textPayload", Role::kText},          // Google Cloud Logging
    {"jsonPayload.message", Role::kText},  // Cloud Logging's entry of a program's JSON line
    {"line", Role::kText},                 // logcli
    {"time", Role::kTime},
    {"@timestamp", Role::kTime},
    {"timestamp", Role::kTime},
    {"date", Role::kTime},  // Fluent Bit's `json_date_key`: seconds since the epoch, or ISO 8601
    {"kubernetes.pod_name", Role::kPod},
    {"kubernetes.pod.name", Role::kPod},
    {"resource.labels.pod_name", Role::kPod},
    {"labels.pod", Role::kPod},
    {"labels.pod_name", Role::kPod},
    {"kubernetes.container_name", Role::kContainer},
    {"kubernetes.container.name", Role::kContainer},
    {"resource.labels.container_name", Role::kContainer},
    {"labels.container", Role::kContainer},
    {"kubernetes.namespace_name", Role::kNamespace},
    {"kubernetes.pod_namespace", Role::kNamespace},
    {"kubernetes.namespace", Role::kNamespace},
    {"resource.labels.namespace_name", Role::kNamespace},
    {"labels.namespace", Role::kNamespace},
    {"kubernetes.host", Role::kNode},
    {"kubernetes.pod_node_name", Role::kNode},
    {"kubernetes.node.name", Role::kNode},
    {"labels.compute.googleapis.com/resource_name", Role::kNode},
    {"labels.node_name", Role::kNode},
    {"labels.node", Role::kNode},
    {"host.name", Role::kNode},
    {"host.hostname", Role::kNode},
    {"host", Role::kNode},  // Vector's `file` and `journald` sources
    {"hostname", Role::kNode},
    {"log.offset", Role::kOffset},     // ECS: where the line starts in the file it was read from
    {"logStreamName", Role::kStream},  // CloudWatch Logs (`aws logs filter-log-events`)
};
constexpr std::size_t kRoles = 8;

struct ShipperRecord {
  std::string_view field[kRoles];  // raw (escaped) values
  std::uint8_t rank[kRoles] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};  // their rows
  std::string_view Get(Role r) const { return field[static_cast<std::size_t>(r)]; }
  bool Has(Role r) const { return rank[static_cast<std::size_t>(r)] != 0xFF; }
  // A value the record's surroundings give (the event's time, a log stream's name): below every
  // key's row, so that the record's own keys win.
  void SetBelowKeys(Role r, std::string_view value);
};

void ShipperRecord::SetBelowKeys(Role r, std::string_view value) {
  const auto k = static_cast<std::size_t>(r);
  field[k] = value;
  rank[k] = std::size(kShipperKeys);
}

// The row of kShipperKeys whose path is `prefix` + `key`, or -1. An Elasticsearch hit's record
// sits under `_source` (a search's export).
int ShipperRow(std::string_view prefix, std::string_view key) {
  if (prefix.starts_with("_source.")) prefix.remove_prefix(8);
  if (key.empty()) return -1;
  for (std::size_t k = 0; k < std::size(kShipperKeys); ++k) {
    const std::string_view path = kShipperKeys[k].path;
    // the sizes and the key's first byte first: most keys of a record are no row's
    if (path.size() != prefix.size() + key.size() || path[prefix.size()] != key[0]) continue;
    if (path.starts_with(prefix) && path.ends_with(key)) return static_cast<int>(k);
  }
  return -1;
}

// Whether some row's path goes on below `prefix` (an object worth walking into).
bool ShipperParent(std::string_view prefix) {
  if (prefix.starts_with("_source.")) prefix.remove_prefix(8);
  if (prefix.empty()) return true;
  for (const ShipperKey& k : kShipperKeys)
    if (k.path.size() > prefix.size() && k.path[0] == prefix[0] && k.path.starts_with(prefix))
      return true;
  return false;
}

// The object at s[*i], its keys' paths below `prefix` (`kubernetes.`): the fields of the rows it
// holds (strings; `date` a number too), its other values skipped.
bool ShipperFields(std::string_view s, std::size_t* i, std::string* prefix, ShipperRecord* r) {
  return ObjectFields(s, i, [&](std::string_view key, std::size_t* at) {
    if (*at < s.size() && s[*at] == '{') {
      const std::size_t size = prefix->size();
      prefix->append(key).push_back('.');
      const bool ok = ShipperParent(*prefix) ? ShipperFields(s, at, prefix, r) : SkipValue(s, at);
      prefix->resize(size);
      return ok;
    }
    const int row = key.find('\\') == std::string_view::npos ? ShipperRow(*prefix, key) : -1;
    if (row < 0) return SkipValue(s, at);
    const Role role = kShipperKeys[row].role;
    const auto k = static_cast<std::size_t>(role);
    std::string_view value;
    if (s[*at] == '"') {
      if (!RawString(s, at, &value)) return false;
    } else {
      const std::size_t begin = *at;
      if (!SkipValue(s, at)) return false;
      if (role != Role::kTime && role != Role::kOffset) return true;  // a number, not a name
      value = s.substr(begin, *at - begin);
    }
    if (static_cast<std::uint8_t>(row) < r->rank[k]) {
      r->rank[k] = static_cast<std::uint8_t>(row);
      r->field[k] = value;
    }
    return true;
  });
}

// The object at s[*i] read as a shipper's record (*i then past it): a line's text, its time
// (RFC 3339, or seconds since the epoch; `event_time`, the time beside the record, where it has
// none), and the pod, the node or the log stream it came from (unless `anonymous`: the events of a
// CloudWatch response, which `aws logs get-log-events` gives of one stream without its name).
// False when it is no object, or an object without them (*i then past it where it is an object).
bool ShipperObject(std::string_view s, std::size_t* i, ShipperRecord* r,
                   std::string_view event_time = {}, bool anonymous = false) {
  thread_local std::string prefix;
  prefix.clear();
  if (!ShipperFields(s, i, &prefix, r)) return false;
  if (!r->Has(Role::kTime) && !event_time.empty()) r->SetBelowKeys(Role::kTime, event_time);
  if (!r->Has(Role::kText) || !r->Has(Role::kTime)) return false;
  if (!anonymous && !r->Has(Role::kPod) && !r->Has(Role::kNode) && !r->Has(Role::kStream))
    return false;
  const std::string_view t = r->Get(Role::kTime);
  return TimeLike(t) || EpochSeconds(t).has_value();
}

// The pod, namespace and container a kubelet's log file name gives
// (`/var/log/containers/<pod>_<namespace>_<container>-<64 hex digits>.log`), as Fluent Bit's tail
// input tags a record with it (`kube.var.log.containers.<that name>`), set in `r` below every key's
// row; false where `tag` ends in no such name.
bool ContainerLogName(std::string_view tag, ShipperRecord* r) {
  constexpr std::string_view kLog = ".log";
  constexpr std::size_t kId = 64;
  if (!tag.ends_with(kLog) || tag.size() < kLog.size() + kId + 1) return false;
  const std::string_view name = tag.substr(0, tag.size() - kLog.size());
  const std::string_view id = name.substr(name.size() - kId);
  if (name[name.size() - kId - 1] != '-' || !std::all_of(id.begin(), id.end(), [](char c) {
        return IsDigit(c) || (c >= 'a' && c <= 'f');
      }))
    return false;
  // past the tag's prefix: the tail input's path, its `/`s made `.`s (`kube.var.log.containers.`),
  // else the prefix's last `.` (a pod name may hold dots)
  const std::size_t underscore = name.find('_');
  std::size_t from = name.rfind("containers.", underscore);
  from = from != std::string_view::npos ? from + 11 : name.rfind('.', underscore) + 1;
  const std::string_view file = name.substr(from, name.size() - kId - 1 - from);
  const std::size_t pod_end = file.find('_'), namespace_end = file.find('_', pod_end + 1);
  if (pod_end == 0 || pod_end == std::string_view::npos ||
      namespace_end == std::string_view::npos || namespace_end == pod_end + 1 ||
      namespace_end + 1 == file.size())
    return false;
  r->SetBelowKeys(Role::kPod, file.substr(0, pod_end));
  r->SetBelowKeys(Role::kNamespace, file.substr(pod_end + 1, namespace_end - pod_end - 1));
  r->SetBelowKeys(Role::kContainer, file.substr(namespace_end + 1));
  return true;
}

// One line read as a shipper's record, nothing after it: a JSON object, or a line of Fluent Bit's
// `file` output in its default format (`<tag>: [<seconds>.<fraction>, <record>]`: the event's
// time, which a record without a time of its own takes, and a tag that names the container log
// file a record without the kubernetes filter's metadata came from).
bool ParseShipperRecord(std::string_view line, ShipperRecord* r) {
  std::size_t i = 0;
  if (line.empty() || line[0] == '{') {
    if (!ShipperObject(line, &i, r)) return false;
  } else {
    const std::size_t open = line.find(": [");
    if (open == std::string_view::npos || open == 0 ||
        line.substr(0, open).find_first_of(" \t\"{") != std::string_view::npos)
      return false;
    i = open + 3;
    const std::size_t comma = line.find(',', i);
    if (comma == std::string_view::npos) return false;
    const std::string_view event_time = line.substr(i, comma - i);
    if (!EpochSeconds(event_time)) return false;
    i = comma + 1;
    SkipSpaces(line, &i);
    ContainerLogName(line.substr(0, open), r);  // where the kubernetes filter's metadata is not
    if (!ShipperObject(line, &i, r, event_time)) return false;
    SkipSpaces(line, &i);
    if (i >= line.size() || line[i] != ']') return false;
    ++i;
  }
  SkipSpaces(line, &i);
  return i == line.size();
}

// Whether `message` (a CloudWatch event's, unescaped) is one whole shipper's record, as Fluent
// Bit's and Fluentd's `cloudwatch_logs` outputs send one: read into `record`, its own time, else
// `time`; without the kubernetes filter's metadata, of the pod and container its log stream's name
// gives, where it names a container log file (ContainerLogName).
bool WholeRecord(std::string_view message, std::string_view stream, std::string_view time,
                 ShipperRecord* record) {
  if (!message.starts_with('{')) return false;
  std::size_t i = 0;
  ContainerLogName(stream, record);
  if (!ShipperObject(message, &i, record, time)) return false;
  SkipSpaces(message, &i);
  return i == message.size();
}

// ---- `aws logs tail` ----------------------------------------------------------------------

// A line of CloudWatch Logs events printed as text: `aws logs tail <group>`'s default (`--format
// detailed`), `<time> <log stream> <message>`, the time as Python's
// `isoformat(timespec='microseconds')` writes it (`2024-06-01T09:00:21.972000+00:00`, UTC), the
// message's trailing blanks stripped (a message of several lines goes on over the lines after it,
// which open with no stamp of their own); or, with no stream, a time and a message that is a
// shipper's record (Container Insights' Fluent Bit records): `aws logs tail --format short`'s
// `2024-06-01T09:00:21 {…}` (UTC, to the second) and an export to S3's `2024-06-01T09:00:21.972Z
// {…}` (each stream's objects under a folder of its name).
struct TailLine {
  std::string_view time, stream, message;
  ShipperRecord record;  // the message read as a shipper's record, where it is one whole
  bool shipped = false;
};

// Whether `token` can be a CloudWatch log stream's name printed after such a stamp rather than a
// message's first word: a SageMaker job's `<job>/algo-2-<epoch>`, an instance id, a host name,
// Container Insights' `<host>-application.var.log.containers.<file>` hold a digit or one of
// `-/._`; a logging level (`INFO`), a bracketed tag (`[default3]:`, `[rank3]:`), a quoted or
// braced value, or a word ending in `:` do not pass.
bool StreamNameLike(std::string_view token) {
  if (token.empty() || std::string_view("[{(<\"'").find(token.front()) != std::string_view::npos ||
      std::string_view(":],)").find(token.back()) != std::string_view::npos)
    return false;
  bool alnum = false, mark = false;
  for (const char c : token) {
    alnum |= IsDigit(c) || IsAlpha(c);
    mark |= IsDigit(c) || c == '-' || c == '/' || c == '.' || c == '_';
  }
  return alnum && mark;
}

// `line` read as such a line: a stamp of six fraction digits and an offset, a space, a stream's
// name (StreamNameLike), then the message after one space (none on a line that ends with the
// name); or an RFC 3339 stamp (or one to the second with no zone), a space and a shipper's record.
bool ParseTailLine(std::string_view line, TailLine* t) {
  constexpr std::size_t kStamp = 32;  // 2024-06-01T09:00:21.972000+00:00
  if (line.size() >= kStamp + 2 && line[kStamp] == ' ' && line[19] == '.' &&
      (line[26] == '+' || line[26] == '-') && TimeLike(line.substr(0, kStamp))) {
    const std::size_t end = line.find(' ', kStamp + 1);
    t->time = line.substr(0, kStamp);
    t->stream = line.substr(kStamp + 1, end == std::string_view::npos ? end : end - kStamp - 1);
    t->message = end == std::string_view::npos ? std::string_view() : line.substr(end + 1);
    if (!StreamNameLike(t->stream)) return false;
    t->shipped = WholeRecord(t->message, t->stream, t->time, &t->record);
    return true;
  }
  const std::size_t space = line.find(" {");
  if (space == std::string_view::npos || space > kStamp + 3) return false;
  t->time = line.substr(0, space);  // `--format short`'s `2024-06-01T09:00:21` or RFC 3339
  if (!TimeLike(t->time) && !(space == kSecondShape.size() && SecondLike(t->time))) return false;
  t->stream = {};
  t->message =
      line.substr(space + 1);  // a record with a time of its own: the short stamp has no zone
  return t->shipped = WholeRecord(t->message, {}, TimeLike(t->time) ? t->time : "", &t->record);
}

// Whether `head` opens with `aws logs tail`'s lines: its first whole line one, and at least half
// of its first 16 (four at least, where it holds 16): a message of several lines puts lines of no
// stamp between them.
bool SniffTail(std::string_view head) {
  constexpr int kLines = 16, kAtLeast = 4;
  int lines = 0, tail = 0;
  for (std::size_t pos = 0; lines < kLines; ++lines) {
    const std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) break;
    TailLine t;
    if (ParseTailLine(head.substr(pos, nl - pos), &t)) {
      ++tail;
    } else if (lines == 0) {
      return false;
    }
    pos = nl + 1;
  }
  return tail > 0 && 2 * tail >= lines && (tail >= kAtLeast || lines < kLines);
}

// The unescaped messages of an array's CloudWatch events that hold a record, kept while the
// records that view them are: appended to blocks reserved ahead, one allocation per 4 MiB of
// messages rather than one per event. A message never moves once written: unescaping writes at
// most 3 bytes for 2 (a broken `\u` made U+FFFD), and a block holds that much room for it.
class MessageStore {
 public:
  // `raw` unescaped into the store.
  std::string_view Add(std::string_view raw) {
    const std::size_t room = raw.size() + raw.size() / 2 + 1;
    if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < room)
      blocks_.emplace_back().reserve(std::max(kBlock, room));
    std::string& block = blocks_.back();
    last_ = block.size();
    Unescape(raw, &block);
    return std::string_view(block).substr(last_);
  }
  void DropLast() { blocks_.back().resize(last_); }  // the message Add wrote last

 private:
  static constexpr std::size_t kBlock = std::size_t{4} << 20;
  std::deque<std::string> blocks_;
  std::size_t last_ = 0;
};

// A CloudWatch Logs event whose message is a shipper's record (EKS Container Insights:
// `{"log":"…","stream":"stderr","kubernetes":{"pod_name":…,"host":…,…}}` under the log stream
// `<host>-application.var.log.containers.<pod>_<namespace>_<container>-<id>.log`): that record
// (WholeRecord), its fields viewing the message unescaped in `*messages`. False, the store as it
// was, where the message is no whole record (a program's own JSON line, a line of text).
bool ShippedRecord(const ShipperRecord& event, MessageStore* messages, ShipperRecord* record) {
  const std::string_view raw = event.Get(Role::kText);
  if (!raw.starts_with('{') || event.Has(Role::kPod) || event.Has(Role::kNode)) return false;
  if (WholeRecord(messages->Add(raw), event.Get(Role::kStream), event.Get(Role::kTime), record))
    return true;
  messages->DropLast();
  return false;
}

// A CloudWatch Logs event made the record it stands for: the shipper's record its message holds,
// else the line of text it is, of the pod its stream's container log name gives where it names one
// (Fluent Bit's `log_key log`).
void ReadCloudWatchEvent(ShipperRecord* event, MessageStore* messages) {
  ShipperRecord record;
  if (ShippedRecord(*event, messages, &record)) {
    *event = record;
    return;
  }
  ContainerLogName(event->Get(Role::kStream), event);
}

// A record's time in nanoseconds since the epoch (ShipperObject took it for one).
TimeNs ShipperTime(const ShipperRecord& r) {
  const std::string_view t = r.Get(Role::kTime);
  return TimeLike(t) ? ParseRfc3339(t).value_or(0) : EpochSeconds(t).value_or(0);
}

void AppendLabel(std::string_view name, std::string_view raw, std::string* out) {
  if (raw.empty()) return;
  if (out->back() != '{') out->append(", ");
  out->append(name).append("=\"");
  thread_local std::string value;
  for (const char c :
       Unescaped(raw, &value)) {  // Go's quoting of a label's value, as logcli prints it
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c == '\n' ? ' ' : c);
  }
  out->push_back('"');
}

// `2024-06-01T09:00:21.972589808Z {container="pytorch", namespace="default", node_name="gpu-7",
// pod="llama-worker-3"} `: what a record's lines open with, as Loki's `logcli query` prints a
// stream's line (its labels sorted, as Loki keeps them), whose label set the parser peels and the
// relayed-file split reads. Built once a record (a record of several lines opens each with it).
void ShipperPrefix(const ShipperRecord& r, std::string* out) {
  const std::string_view t = r.Get(Role::kTime);
  if (TimeLike(t)) {
    out->assign(t);
  } else {  // seconds since the epoch, as consecutive records often share (Fluent Bit's `date`)
    thread_local std::string last_epoch, last_stamp;
    if (t != last_epoch) last_epoch.assign(t), last_stamp = FormatRfc3339(*EpochSeconds(t));
    out->assign(last_stamp);
  }
  out->append(" {");
  AppendLabel("container", r.Get(Role::kContainer), out);
  if (!r.Has(Role::kPod) && !r.Has(Role::kNode))  // a stream known by its name alone
    AppendLabel("log_stream", r.Get(Role::kStream), out);
  AppendLabel("namespace", r.Get(Role::kNamespace), out);
  AppendLabel("node_name", r.Get(Role::kNode), out);
  AppendLabel("pod", r.Get(Role::kPod), out);
  out->append("} ");
}

// A record's `text` (its text unescaped) appended to `d` as its lines (a text of several lines is
// several), each opening with the record's prefix (ShipperPrefix).
void AppendShipperLines(const ShipperRecord& r, std::string_view text, JsonLogText* d) {
  thread_local std::string prefix;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  ShipperPrefix(r, &prefix);
  ++d->records;
  for (std::size_t from = 0;;) {
    const std::size_t cut = text.find('\n', from);
    Append(&d->text, prefix);
    Append(&d->text, text.substr(from, cut == std::string_view::npos ? cut : cut - from));
    d->text.push_back('\n');
    if (cut == std::string_view::npos) return;
    ++d->extra_lines;
    from = cut + 1;
  }
}

// A shipper's record appended to `d` as its lines (AppendShipperLines).
void AppendShipperRecord(const ShipperRecord& r, JsonLogText* d) {
  thread_local std::string msg;
  AppendShipperLines(r, Unescaped(r.Get(Role::kText), &msg), d);
}

// A line of `aws logs tail` appended to `d` as its event's record: the shipper's record its
// message holds (Container Insights: a record without the kubernetes filter's metadata of the pod
// its stream's container log name gives), else its message as a line of its log stream's (of the
// pod that name gives, where it names one). A line that is none (a message's further line) is
// kept as it stands.
void AppendTailLine(std::string_view line, JsonLogText* d) {
  TailLine t;
  if (!ParseTailLine(line, &t)) {
    Append(&d->text, line);
    d->text.push_back('\n');
    return;
  }
  if (t.shipped) return AppendShipperRecord(t.record, d);
  ShipperRecord r;
  r.SetBelowKeys(Role::kTime, t.time);
  r.SetBelowKeys(Role::kStream, t.stream);
  ContainerLogName(t.stream, &r);
  AppendShipperLines(r, t.message, d);
}

// `bytes`' lines appended to `d` as they are, each counted as no record's.
void AppendOtherLines(std::string_view bytes, JsonLogText* d) {
  for (std::size_t pos = 0; pos < bytes.size();) {
    const std::size_t nl = bytes.find('\n', pos);
    Append(&d->text, bytes.substr(pos, nl == std::string_view::npos ? nl : nl - pos));
    d->text.push_back('\n');
    ++d->other_lines;
    pos = nl == std::string_view::npos ? bytes.size() : nl + 1;
  }
}

// Past the `:` of the first of `names` that the object whose `{` is at s[*i] holds (ObjectFields'
// walk, the keys before it skipped): that name; empty, *i unmoved, when the object holds none of
// them (or is cut before one).
std::string_view FindKey(std::string_view s, std::size_t* i,
                         std::initializer_list<std::string_view> names) {
  std::string_view found;
  std::size_t value = 0, at = *i;
  ObjectFields(s, &at, [&](std::string_view key, std::size_t* v) {
    const auto name = std::find(names.begin(), names.end(), key);
    if (name == names.end()) return SkipValue(s, v);
    found = *name;
    value = *v;
    return false;  // found: the walk stops here
  });
  if (!found.empty()) *i = value;
  return found;
}
bool FindKey(std::string_view s, std::size_t* i, std::string_view name) {
  return !FindKey(s, i, {name}).empty();
}

// Past `, "key": value` at s[*i] (spaces before each part), the next member of an object; false,
// *i unmoved, where none is there whole.
bool NextMember(std::string_view s, std::size_t* i) {
  std::size_t at = *i;
  std::string_view key;
  SkipSpaces(s, &at);
  if (at >= s.size() || s[at] != ',') return false;
  SkipSpaces(s, &++at);
  if (!RawString(s, &at, &key)) return false;
  SkipSpaces(s, &at);
  if (at >= s.size() || s[at] != ':') return false;
  SkipSpaces(s, &++at);
  if (!SkipValue(s, &at)) return false;
  *i = at;
  return true;
}

// Past an object's closing `}` at s[*i] (spaces before it); false, *i unmoved, where none is.
bool CloseObject(std::string_view s, std::size_t* i) {
  std::size_t at = *i;
  SkipSpaces(s, &at);
  if (at >= s.size() || s[at] != '}') return false;
  *i = at + 1;
  return true;
}

// Where a document's JSON value starts: past a byte order mark (as a download may carry) and
// spaces.
std::size_t ValueStart(std::string_view bytes) {
  std::size_t i = bytes.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  SkipSpaces(bytes, &i);
  return i;
}

// How many shards a search response's hits were gathered from (`"_shards":{"total":N,…}`); 0
// where `bytes` are no response or do not say. A search sorted by time orders one shard's hits
// of one time as they were indexed, and several shards' by shard: a stream's lines of one
// millisecond may come from any of them.
std::int64_t SearchShards(std::string_view bytes) {
  std::size_t i = ValueStart(bytes);
  std::int64_t total = 0;
  if (i < bytes.size() && bytes[i] == '{' && FindKey(bytes, &i, "_shards") &&
      FindKey(bytes, &i, "total"))
    std::from_chars(bytes.data() + i, bytes.data() + bytes.size(), total);
  return total;
}

// The document a JSON array of a shipper's records stands in.
enum class ArrayIn : std::uint8_t {
  kItself,          // the document is the array
  kSearchResponse,  // an Elasticsearch search response's `hits.hits`
  kCloudWatch,      // a CloudWatch Logs response's `events`
};

// Where a JSON array of a shipper's records opens in `bytes` (at its first element's `{`), or
// npos: the document's own array, an Elasticsearch search response's hits
// (`{"took":…,"hits":{"total":…,"hits":[{"_index":…,"_source":{…}},…]}}`, `curl …/_search`), or
// a CloudWatch Logs response's events (`aws logs filter-log-events` or `get-log-events`:
// `{"events":[{"logStreamName":…,"timestamp":<ms>,"message":…,…},…],…}`); `*in` says which.
std::size_t ArrayOpens(std::string_view bytes, ArrayIn* in = nullptr) {
  std::size_t i = ValueStart(bytes);
  ArrayIn found = ArrayIn::kItself;
  if (i < bytes.size() && bytes[i] == '{') {
    // one walk to the first of the two (the other may follow a whole file's array)
    const std::string_view key = FindKey(bytes, &i, {"hits", "events"});
    if (key == "events") {
      found = ArrayIn::kCloudWatch;
    } else if (key == "hits" && FindKey(bytes, &i, "hits")) {
      found = ArrayIn::kSearchResponse;
    } else {
      return std::string_view::npos;
    }
  }
  if (in != nullptr) *in = found;
  if (i >= bytes.size() || bytes[i] != '[') return std::string_view::npos;
  ++i;
  SkipSpaces(bytes, &i);
  return i < bytes.size() && bytes[i] == '{' ? i : std::string_view::npos;
}

// Whether `head` opens a JSON array of a shipper's records: each object of its first four (one
// at least) that `head` holds whole a record.
bool SniffShipperArray(std::string_view head) {
  ArrayIn in = ArrayIn::kItself;
  std::size_t i = ArrayOpens(head, &in);
  if (i == std::string_view::npos) return false;
  for (int objects = 0; objects < 4; ++objects) {
    ShipperRecord r;
    const std::size_t begin = i;
    if (!ShipperObject(head, &i, &r, {}, in == ArrayIn::kCloudWatch)) {
      // an object cut by the head's end says nothing; a whole one that is no record does
      i = begin;
      return objects > 0 && !SkipValue(head, &i);
    }
    SkipSpaces(head, &i);
    if (i >= head.size() || head[i] != ',') return true;  // the array's end, or the head's
    ++i;
    SkipSpaces(head, &i);
  }
  return true;
}

// Whether two records of `elements` (in time order) share a time and a stream (the label set a
// decoded line carries: pod, container, namespace, node, log stream) with no place in their file
// to order them: the array's order of such lines is the only one there is.
template <typename Elements, typename IsRecord>
bool TiesInAStream(const Elements& elements, IsRecord record) {
  constexpr Role kLabels[] = {Role::kPod, Role::kContainer, Role::kNamespace, Role::kNode,
                              Role::kStream};
  using Labels = std::array<std::string_view, std::size(kLabels)>;
  std::vector<Labels> streams;  // of one time, reused from one time to the next
  for (std::size_t a = 0, b; a < elements.size(); a = b) {
    for (b = a + 1; b < elements.size() && elements[b].t == elements[a].t;) ++b;
    if (b - a < 2) continue;
    streams.clear();
    for (std::size_t k = a; k < b; ++k) {
      if (!record(elements[k]) || elements[k].offset != 0) continue;
      Labels& l = streams.emplace_back();
      for (std::size_t n = 0; n < l.size(); ++n) l[n] = elements[k].r.Get(kLabels[n]);
    }
    std::sort(streams.begin(), streams.end());
    if (std::adjacent_find(streams.begin(), streams.end()) != streams.end()) return true;
  }
  return false;
}

// A JSON array of a shipper's records (`gcloud logging read --format=json`, a Logs Explorer
// download: one pretty-printed array, newest first unless asked otherwise), its records appended
// to `d` in time order: an array whose first record is later than its last is read from its end,
// then every record put in order of its time (ties as the array holds them). An element that is
// no record is kept as one line where it stands; bytes after the array's end (a download cut
// short) as their lines.
void DecodeShipperArray(std::string_view bytes, std::size_t limit, JsonLogText* d) {
  struct Element {
    TimeNs t = 0;
    std::uint64_t offset = 0;  // its line's place in its file (ECS `log.offset`), where given
    ShipperRecord r;
    std::string_view other;  // the element's bytes where it is no record
  };
  std::vector<Element> elements;
  // an element is 200 bytes of JSON or more: room for all of them, untouched until written (no
  // copy of the elements at each doubling)
  elements.reserve(bytes.size() / 200 + 1);
  MessageStore shipped;  // CloudWatch messages that hold a record, unescaped
  ArrayIn in = ArrayIn::kItself;
  std::size_t i = ArrayOpens(bytes, &in);
  while (i < bytes.size()) {
    const std::size_t begin = i;
    Element e;
    if (ShipperObject(bytes, &i, &e.r, {}, in == ArrayIn::kCloudWatch)) {
      if (in == ArrayIn::kCloudWatch) ReadCloudWatchEvent(&e.r, &shipped);
      e.t = ShipperTime(e.r);
      const std::string_view offset = e.r.Get(Role::kOffset);
      std::from_chars(offset.data(), offset.data() + offset.size(), e.offset);
    } else {
      i = begin;
      if (!SkipValue(bytes, &i)) {
        i = begin;
        break;
      }
      e.other = bytes.substr(begin, i - begin);
    }
    elements.push_back(e);
    SkipSpaces(bytes, &i);
    if (i < bytes.size() && bytes[i] == ',') {
      ++i;
      SkipSpaces(bytes, &i);
      continue;
    }
    if (i < bytes.size() && bytes[i] == ']') ++i;
    break;
  }
  const auto record = [](const Element& e) { return e.other.empty(); };
  const auto first = std::find_if(elements.begin(), elements.end(), record);
  const auto last = std::find_if(elements.rbegin(), elements.rend(), record);
  if (first != elements.end() && first->t > last->t) std::reverse(elements.begin(), elements.end());
  for (std::size_t k = 1; k < elements.size(); ++k) {
    if (record(elements[k]) && elements[k].t < elements[k - 1].t && elements[k].offset == 0)
      ++d->unordered;  // a search's hits by score: lines of one time in an order it does not say
    if (!record(elements[k])) {  // stays after the one before it
      elements[k].t = elements[k - 1].t;
      elements[k].offset = elements[k - 1].offset;
    }
  }
  // Lines of one time in the order they stand in their file where the records say (a search's
  // hits of one millisecond come in any order); a stream's order is all that matters, and a
  // stream's lines are one file's.
  std::stable_sort(elements.begin(), elements.end(), [](const Element& a, const Element& b) {
    return a.t != b.t ? a.t < b.t : a.offset < b.offset;
  });
  if (d->unordered > 0 || (in == ArrayIn::kSearchResponse && SearchShards(bytes) > 1))
    d->ties_unordered = TiesInAStream(elements, record);
  for (const Element& e : elements) {
    if (d->text.size() >= limit) return;
    if (record(e)) {
      AppendShipperRecord(e.r, d);
      continue;
    }
    thread_local std::string line;  // the element on one line
    line.assign(e.other);
    std::replace_if(
        line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    AppendOtherLines(line, d);
  }
  // what follows the array but the rest of a response (its other members, its closing `}`s)
  for (std::size_t at = i;
       in != ArrayIn::kItself && (NextMember(bytes, &at) || CloseObject(bytes, &at));)
    i = at;
  const std::string_view rest = i == std::string_view::npos ? bytes : bytes.substr(i);
  if (const std::size_t at = rest.find_first_not_of(" \t\r\n"); at != std::string_view::npos)
    AppendOtherLines(rest.substr(at), d);
}

}  // namespace

JsonLog SniffJsonLog(std::string_view head) {
  if (SniffShipperArray(head)) return JsonLog::kShipperArray;
  constexpr int kLines = 4;
  int docker = 0, journal = 0, shipper = 0, whole = 0;
  for (std::size_t pos = 0; whole < kLines; ++whole) {
    const std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) break;
    const std::string_view line = head.substr(pos, nl - pos);
    Record r;
    JournalRecord j;
    ShipperRecord k;
    docker += ParseRecord(line, &r) && r.docker_keys ? 1 : 0;
    journal += ParseJournalRecord(line, &j) ? 1 : 0;
    shipper += ParseShipperRecord(line, &k) ? 1 : 0;
    pos = nl + 1;
  }
  if (whole == 0) return JsonLog::kNone;
  if (SniffTail(head)) return JsonLog::kCloudWatchTail;
  return docker == whole    ? JsonLog::kDocker
         : journal == whole ? JsonLog::kJournal
         : shipper == whole ? JsonLog::kShipper
                            : JsonLog::kNone;
}

std::string_view JsonLogName(JsonLog kind) {
  switch (kind) {
    case JsonLog::kDocker:
      return "Docker JSON";
    case JsonLog::kJournal:
      return "journal JSON";
    case JsonLog::kShipper:
      return "log shipper JSON";
    case JsonLog::kShipperArray:
      return "log shipper JSON array";
    case JsonLog::kCloudWatchTail:
      return "CloudWatch Logs tail";
    case JsonLog::kNone:
      break;
  }
  return "";
}

JsonLogText DecodeJsonLog(std::string_view bytes, JsonLog kind, std::size_t limit) {
  JsonLogText d;
  d.text.reserve(std::min(bytes.size(), limit) + 64);
  DecodeJsonLog(bytes, kind, limit, &d);
  return d;
}

void DecodeJsonLog(std::string_view bytes, JsonLog kind, std::size_t limit, JsonLogText* into) {
  if (kind == JsonLog::kShipperArray) return DecodeShipperArray(bytes, limit, into);
  JsonLogText& d = *into;
  thread_local std::string msg;  // a record's text unescaped
  for (std::size_t pos = 0; pos < bytes.size() && d.text.size() < limit;) {
    const std::size_t nl = bytes.find('\n', pos);
    const std::string_view line =
        bytes.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? bytes.size() : nl + 1;
    if (kind == JsonLog::kCloudWatchTail) {
      AppendTailLine(line, &d);
      continue;
    }
    Record r;
    JournalRecord j;
    ShipperRecord k;
    const bool record = kind == JsonLog::kDocker    ? ParseRecord(line, &r)
                        : kind == JsonLog::kJournal ? ParseJournalRecord(line, &j)
                                                    : ParseShipperRecord(line, &k);
    if (!record) {
      Append(&d.text, line);
      d.text.push_back('\n');
      ++d.other_lines;
      continue;
    }
    if (kind == JsonLog::kShipper) {
      AppendShipperRecord(k, &d);
      continue;
    }
    ++d.records;
    std::string_view text;
    bool whole = true;  // the record ends its line (a Docker record without `\n` does not)
    if (kind == JsonLog::kJournal) {
      msg.clear();
      JournalMessage(j, &msg);
      text = msg;
      while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    } else {
      text = r.log;
      whole = !r.has_log;
      // Docker ends a line's record with its newline; a record without one is the head of a line
      // it split (16 KiB at a time), continued by the next. An escaped backslash before the `n`
      // (`\\n`) is a text that ends in `\n`.
      if (text.ends_with("\\n")) {
        std::size_t slashes = 1;
        while (slashes < text.size() - 1 && text[text.size() - 2 - slashes] == '\\') ++slashes;
        if (slashes % 2 == 1) {
          whole = true;
          text.remove_suffix(2);
        }
      }
      text = Unescaped(text, &msg);  // escapes to read, perhaps newlines inside
    }
    const bool tagged = r.stream == "stdout" || r.stream == "stderr";
    for (std::size_t from = 0;;) {
      const std::size_t cut = text.find('\n', from);
      const bool last = cut == std::string_view::npos;
      if (kind == JsonLog::kJournal) {
        AppendJournalPrefix(j, &d.text);
      } else {
        Append(&d.text, r.time);
        d.text.push_back(' ');
        if (tagged) {  // CRI's `<stream> <tag> `; no stream: `kubectl logs --timestamps`' shape
          Append(&d.text, r.stream);
          d.text.push_back(' ');
          d.text.push_back(last && !whole ? 'P' : 'F');
          d.text.push_back(' ');
        }
      }
      Append(&d.text, text.substr(from, last ? std::string_view::npos : cut - from));
      d.text.push_back('\n');
      if (last) break;
      ++d.extra_lines;
      from = cut + 1;
    }
  }
}

bool WholeJsonValue(std::string_view bytes) {
  std::size_t i = ValueStart(bytes);
  if (!SkipValue(bytes, &i)) return false;
  SkipSpaces(bytes, &i);
  return i == bytes.size();
}

std::string JsonLogProblem(const JsonLogText& d, JsonLog kind) {
  const auto count = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + (n == 1 ? one : many);
  };
  if (kind == JsonLog::kShipperArray) {
    std::string out = "a JSON array of " + count(d.records, " log record", " log records") +
                      " (an export such as `gcloud logging read --format=json`'s), read in the "
                      "order of their times, a line for each line of a record: its lines are "
                      "numbered in the decoded text";
    if (d.unordered > 0) {
      out += "; " + count(d.unordered, " record", " records") +
             " out of time order and with no place in their file (ECS's `log.offset`): records of "
             "one time keep the array's order, which may not be their lines' (sort the export by "
             "time, or keep `log.offset`)";
    }
    if (d.ties_unordered) {
      out += std::string(d.unordered > 0 ? ""
                                         : "; records of one time gathered from several "
                                           "shards of a search, with no place in their file") +
             ": a stream's lines of one time are read each alone (no traceback or torchrun "
             "failure table read across them, a failed worker's exit code not tied to its rank)";
    }
    if (d.other_lines > 0) {
      out += "; " + count(d.other_lines, " line", " lines") +
             " of it no record (an element without a line, a time and a pod or node, or an "
             "array cut short) read as " +
             (d.other_lines == 1 ? "it stands" : "they stand");
    }
    return out;
  }
  const std::string what = kind == JsonLog::kDocker    ? "a Docker json-file log"
                           : kind == JsonLog::kJournal ? "a journal's JSON export"
                           : kind == JsonLog::kShipper ? "a log shipper's JSON records"
                                                       : "`aws logs tail`'s CloudWatch events";
  std::string out;
  if (d.other_lines > 0) {
    out = what + " of " + count(d.records, " record", " records") + " and " +
          count(d.other_lines, " line that is no record", " lines that are no record") +
          " (cut by a crash, or written by something else), read as " +
          (d.other_lines == 1 ? "it stands" : "they stand");
  }
  if (d.extra_lines > 0) {
    out += (out.empty() ? what + " whose" : "; its") + std::string(" records hold ") +
           count(d.extra_lines, " more line", " more lines") +
           " than records (a message of several lines): its lines are numbered in the decoded "
           "text, one a line of a record";
  }
  return out;
}

}  // namespace denpex::engine
