// Shapes that change where lines sit: merged, interleaved, kubectl-prefix, flat, renamed, nested,
// rotated.
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "shapes_internal.h"

namespace denpex::cli::shapes {
namespace fs = std::filesystem;

namespace {

// Appends `text` to `out` so that it ends with a newline (a truncated file's last line does
// not run into the next file's first).
void AppendWhole(std::string* out, std::string_view text) {
  out->append(text);
  if (!text.empty() && text.back() != '\n') out->push_back('\n');
}

// A unique opaque name for `what` (a path), among `used`.
std::string UniqueOpaque(const Source& src, const std::string& what, std::string_view ext,
                         std::set<std::string>* used) {
  std::string name;
  for (int i = 0;; ++i) {
    std::string key = what;
    if (i > 0) (key += '#') += std::to_string(i);
    name = Opaque(src, key);
    name += ext;
    if (used->insert(name).second) return name;
  }
}

void Alias(Relaid* r, const std::string& new_name, const std::string& node) {
  auto& v = r->node_aliases[new_name];
  if (std::find(v.begin(), v.end(), node) == v.end()) v.push_back(node);
}

}  // namespace

Status RelayMerged(const Source& src, const fs::path& out, Relaid*) {
  std::string all;
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    AppendWhole(&all, *text);
  }
  DENPEX_RETURN_IF_ERROR(WriteText(out / "incident.log", all));
  return CopyKept(src, out);
}

namespace {

// A line of one of several texts, at the time it arrived.
struct Arrival {
  TimeNs t;
  std::uint32_t file, line;
  bool operator>(const Arrival& o) const {
    return std::tie(t, file, line) > std::tie(o.t, o.file, o.line);
  }
};

// The lines of `lines` (each text's) in arrival order: every line at its own time, an untimed line
// right after the line before it in its text (same time, later in the text); ties in text then
// line order.
std::vector<Arrival> ArrivalOrder(const std::vector<std::vector<std::string_view>>& lines,
                                  const Source& src) {
  std::vector<std::vector<TimeNs>> times;
  for (const auto& l : lines) {
    times.push_back(ArrivalTimes(l, src));
    // A file's own later stamps may run backwards (block-buffered bursts): within a file the
    // order stays the file's, so an untimed line never leaves the line before it.
    for (size_t i = 1; i < times.back().size(); ++i) {
      times.back()[i] = std::max(times.back()[i], times.back()[i - 1]);
    }
  }
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> heap;
  for (std::uint32_t f = 0; f < lines.size(); ++f) {
    if (!lines[f].empty()) heap.push({times[f][0], f, 0});
  }
  std::vector<Arrival> order;
  while (!heap.empty()) {
    const Arrival a = heap.top();
    heap.pop();
    order.push_back(a);
    if (a.line + 1 < lines[a.file].size())
      heap.push({times[a.file][a.line + 1], a.file, a.line + 1});
  }
  return order;
}

std::vector<std::vector<std::string_view>> LinesOf(const std::vector<std::string>& texts) {
  std::vector<std::vector<std::string_view>> lines;
  for (const auto& t : texts) lines.push_back(Lines(t));
  return lines;
}

// `texts` as one stream in arrival order (ArrivalOrder), each line after its text's `prefixes`
// entry (none when `prefixes` is empty).
std::string Interleave(const std::vector<std::string>& texts, const Source& src,
                       const std::vector<std::string>& prefixes = {}) {
  const auto lines = LinesOf(texts);
  std::string all;
  for (const Arrival& a : ArrivalOrder(lines, src)) {
    if (!prefixes.empty()) all.append(prefixes[a.file]);
    all.append(lines[a.file][a.line]);
    all.push_back('\n');
  }
  return all;
}

// The current pod logs (`pods/<pod>.log`, not `--previous`' logs) with their pods' names; none,
// and the shape not applicable, where fewer than two (a relayed file needs two pods).
Status CurrentPodLogs(const Source& src, std::vector<std::string>* texts,
                      std::vector<std::string>* pods, Relaid* r) {
  for (const auto& f : src.files) {
    const std::string pod = PodOf(f.rel);
    if (!f.log || !f.rel.starts_with("pods/") || pod.empty() || f.rel.ends_with(".previous.log"))
      continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    texts->push_back(std::move(*text));
    pods->push_back(pod);
  }
  if (texts->size() < 2) texts->clear(), r->applies = false;
  return Status::Ok();
}

// Every log but the current pod logs, as it is.
Status CopyOtherLogs(const Source& src, const fs::path& out) {
  for (const auto& f : src.files) {
    if (!f.log ||
        (f.rel.starts_with("pods/") && !PodOf(f.rel).empty() && !f.rel.ends_with(".previous.log")))
      continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    DENPEX_RETURN_IF_ERROR(WriteText(out / f.rel, *text));
  }
  return CopyKept(src, out);
}

}  // namespace

Status RelayInterleaved(const Source& src, const fs::path& out, Relaid*) {
  std::vector<std::string> texts;
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    texts.push_back(std::move(*text));
  }
  DENPEX_RETURN_IF_ERROR(WriteText(out / "aggregated.log", Interleave(texts, src)));
  return CopyKept(src, out);
}

// `kubectl logs -l <the job's selector> --prefix`: the current pod logs (`pods/<pod>.log`) in
// one stream in arrival order, each line behind `[pod/<pod>/pytorch] `, as `pods.log`; every
// other file (`--previous` logs, describes, events, kernel logs) as it is. Not applicable to an
// incident with fewer than two pod logs.
Status RelayKubectlPrefix(const Source& src, const fs::path& out, Relaid* r) {
  std::vector<std::string> texts, pods;
  DENPEX_RETURN_IF_ERROR(CurrentPodLogs(src, &texts, &pods, r));
  if (texts.empty()) return Status::Ok();
  for (std::string& pod : pods) pod = "[pod/" + pod + "/pytorch] ";
  DENPEX_RETURN_IF_ERROR(WriteText(out / "pods.log", Interleave(texts, src, pods)));
  return CopyOtherLogs(src, out);
}

// `t` as Fluent Bit's `date` double prints it: seconds since the epoch, 6 digits of fraction.
void AppendEpochMicros(TimeNs t, std::string* out) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof digits, t / 1'000'000'000).ptr;
  out->append(digits, end).push_back('.');
  end = std::to_chars(digits, digits + sizeof digits, t % 1'000'000'000 / 1000 + 1'000'000).ptr;
  out->append(digits + 1, end);  // `1dddddd` less its 1: the fraction with its leading zeros
}

namespace {

// What Fluent Bit's `kubernetes` filter adds to a record of `pod`'s container `pytorch`:
// `"kubernetes":{"pod_name":"<pod>","namespace_name":"default","pod_id":"<uuid>","host":"<node>",
// "container_name":"pytorch","docker_id":"<64 hex>","container_image":"<image>"}` (`host` the node
// the pod's describe names, left out where none does).
std::string KubernetesMetadata(const Source& src, const std::string& pod,
                               const std::map<std::string, std::string>& nodes) {
  const std::string id = Opaque(src, "pod-id/" + pod, 32);
  std::string m = "\"kubernetes\":{\"pod_name\":\"" + pod +
                  "\",\"namespace_name\":\"default\",\"pod_id\":\"" + id.substr(0, 8) + "-" +
                  id.substr(8, 4) + "-" + id.substr(12, 4) + "-" + id.substr(16, 4) + "-" +
                  id.substr(20, 12) + "\"";
  if (const auto it = nodes.find(pod); it != nodes.end()) m += ",\"host\":\"" + it->second + "\"";
  m += ",\"container_name\":\"pytorch\",\"docker_id\":\"" + Opaque(src, "docker-id/" + pod, 64) +
       "\",\"container_image\":\"nvcr.io/nvidia/pytorch:24.05-py3\"}";
  return m;
}

}  // namespace

// Fluent Bit's DaemonSet (`tail` of /var/log/containers with the CRI parser, the `kubernetes`
// filter) shipping the current pod logs, its records kept as its `stdout` output's `json_lines`
// print them, one a line in arrival order, as `pods.json`:
// `{"date":1717232421.972589,"stream":"stdout","_p":"F","log":"<line>","kubernetes":{"pod_name":
// "<pod>","namespace_name":"default","pod_id":"<uuid>","host":"<node>","container_name":
// "pytorch","docker_id":"<id>","container_image":"<image>"}}` (`host` the node its describe names,
// left out where none does); every other file as it is. Not applicable with fewer than two pod
// logs.
Status RelayFluentBit(const Source& src, const fs::path& out, Relaid* r) {
  std::vector<std::string> texts, pods;
  DENPEX_RETURN_IF_ERROR(CurrentPodLogs(src, &texts, &pods, r));
  if (texts.empty()) return Status::Ok();
  const auto nodes = PodNodes(src);
  std::vector<std::string> metadata;  // `"kubernetes":{...}}` of each pod's records
  for (const std::string& pod : pods)
    metadata.push_back(KubernetesMetadata(src, pod, nodes) + "}\n");
  const auto lines = LinesOf(texts);
  std::string all;
  for (const Arrival& a : ArrivalOrder(lines, src)) {
    all += "{\"date\":";
    AppendEpochMicros(a.t, &all);
    all += ",\"stream\":\"stdout\",\"_p\":\"F\",\"log\":\"";
    AppendJsonEscaped(lines[a.file][a.line], &all);
    all += "\",";
    all += metadata[a.file];
  }
  DENPEX_RETURN_IF_ERROR(WriteText(out / "pods.json", all));
  return CopyOtherLogs(src, out);
}

// The current pod logs of a GKE cluster as `gcloud logging read 'resource.type="k8s_container"'
// --format=json` prints them (the Logs Explorer's download has the same shape): one JSON array,
// pretty-printed with its keys sorted, the newest entry first, as `downloaded-logs.json`; each
// entry a line's `textPayload`, its `timestamp`, its pod under `resource.labels` and its node (the
// one its describe names, left out where none does) in the `compute.googleapis.com/resource_name`
// label. Every other file as it is. Not applicable with fewer than two pod logs.
Status RelayCloudLogging(const Source& src, const fs::path& out, Relaid* r) {
  std::vector<std::string> texts, pods;
  DENPEX_RETURN_IF_ERROR(CurrentPodLogs(src, &texts, &pods, r));
  if (texts.empty()) return Status::Ok();
  const auto nodes = PodNodes(src);
  std::vector<std::string> labels, resources;  // each pod's entries' `labels` and `resource`
  for (const std::string& pod : pods) {
    const auto node = nodes.find(pod);
    labels.push_back("    \"labels\": {\n" +
                     (node == nodes.end() ? std::string()
                                          : "      \"compute.googleapis.com/resource_name\": \"" +
                                                node->second + "\",\n") +
                     "      \"k8s-pod/app\": \"trainer\"\n    },\n"
                     "    \"logName\": \"projects/denpex-sim/logs/stdout\",\n");
    resources.push_back(
        "    \"resource\": {\n      \"labels\": {\n        \"cluster_name\": \"train\",\n"
        "        \"container_name\": \"pytorch\",\n        \"location\": \"us-central1\",\n"
        "        \"namespace_name\": \"default\",\n        \"pod_name\": \"" +
        pod +
        "\",\n        \"project_id\": \"denpex-sim\"\n      },\n"
        "      \"type\": \"k8s_container\"\n    },\n    \"severity\": \"INFO\",\n");
  }
  const auto lines = LinesOf(texts);
  std::vector<Arrival> order = ArrivalOrder(lines, src);
  std::reverse(order.begin(), order.end());  // newest first
  // an entry's insertId: the incident's opaque prefix and the entry's number, in hex (no string
  // built per line)
  const std::string insert = Opaque(src, "insert", 6);
  char number[16];
  std::string all = "[\n";
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Arrival& a = order[k];
    if (all.size() > 2) all += ",\n";
    (all += "  {\n    \"insertId\": \"") += insert;
    all.append(number, std::to_chars(number, number + sizeof number, k + 0x10000000, 16).ptr);
    all += "\",\n";
    all += labels[a.file];
    all += "    \"receiveTimestamp\": \"";
    all += FormatRfc3339(a.t + 1'250'000);  // the entry reached Cloud Logging a little later
    all += "\",\n";
    all += resources[a.file];
    all += "    \"textPayload\": \"";
    AppendJsonEscaped(lines[a.file][a.line], &all);
    all += "\",\n    \"timestamp\": \"";
    all += FormatRfc3339(a.t);
    all += "\"\n  }";
  }
  all += "\n]\n";
  DENPEX_RETURN_IF_ERROR(WriteText(out / "downloaded-logs.json", all));
  return CopyOtherLogs(src, out);
}

namespace {

// The current pod logs of an EKS cluster with Container Insights (Fluent Bit's DaemonSet: `tail`
// with the CRI parser, the `kubernetes` filter, the `cloudwatch_logs` output to the log group
// `/aws/containerinsights/<cluster>/application`) as CloudWatch Logs' events, in time order (to
// the millisecond; a stream's events of one millisecond in their order), each handed to
// `event(stream, ms, record)`: its pod's log stream, `<node>-application.var.log.containers.<pod>_
// default_pytorch-<64 hex>.log`, and Fluent Bit's record `{"time":"<RFC 3339, 9 digits>Z",
// "stream":"stdout","_p":"F","log":"<line>","kubernetes":{"pod_name":"<pod>","namespace_name":
// "default","pod_id":"<uuid>","host":"<node>","container_name":"pytorch","docker_id":"<id>",
// "container_image":"<image>"}}` (`host` the node the pod's describe names; left out, and the
// stream's `<node>-` with it, where none does). `*events` false where there are fewer than two pod
// logs (the shape is not applicable).
template <typename Event>
Status ContainerInsightsEvents(const Source& src, Relaid* r, bool* events, Event event) {
  std::vector<std::string> texts, pods;
  DENPEX_RETURN_IF_ERROR(CurrentPodLogs(src, &texts, &pods, r));
  *events = !texts.empty();
  if (texts.empty()) return Status::Ok();
  const auto nodes = PodNodes(src);
  std::vector<std::string> streams, metadata;  // each pod's log stream, its records' `kubernetes`
  for (const std::string& pod : pods) {
    const auto node = nodes.find(pod);
    streams.push_back((node == nodes.end() ? std::string() : node->second + "-") +
                      "application.var.log.containers." + pod + "_default_pytorch-" +
                      Opaque(src, "docker-id/" + pod, 64) + ".log");
    metadata.push_back(KubernetesMetadata(src, pod, nodes) + "}");
  }
  const auto lines = LinesOf(texts);
  std::string record;  // one buffer for every record
  for (const Arrival& a : ArrivalOrder(lines, src)) {
    record.assign("{\"time\":\"").append(FormatRfc3339(a.t));
    record += "\",\"stream\":\"stdout\",\"_p\":\"F\",\"log\":\"";
    AppendJsonEscaped(lines[a.file][a.line], &record);
    (record += "\",") += metadata[a.file];
    event(streams[a.file], a.t / 1'000'000, record);
  }
  return Status::Ok();
}

}  // namespace

// Container Insights' events (ContainerInsightsEvents) as `aws logs filter-log-events
// --log-group-name … --output json` prints them: one file `events.json`, one JSON object
// pretty-printed four spaces a level, its `events` each `{"logStreamName": "<stream>",
// "timestamp": <ms>, "message": "<the record, JSON-escaped>", "ingestionTime": <ms>, "eventId":
// "<56 digits>"}`. Every other file as it is.
Status RelayCloudWatch(const Source& src, const fs::path& out, Relaid* r) {
  std::string all = "{\n    \"events\": [\n";
  char digits[24];
  const auto number = [&](std::int64_t n) {
    all.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
  };
  std::int64_t k = 0;
  bool events = false;
  DENPEX_RETURN_IF_ERROR(ContainerInsightsEvents(
      src, r, &events, [&](const std::string& stream, std::int64_t ms, const std::string& record) {
        if (k > 0) all += ",\n";
        all += "        {\n            \"logStreamName\": \"";
        (all += stream) += "\",\n            \"timestamp\": ";
        number(ms);
        all += ",\n            \"message\": \"";
        AppendJsonEscaped(record, &all);
        all += "\",\n            \"ingestionTime\": ";
        number(ms + 1'250);  // the event reached CloudWatch Logs a little later
        all += ",\n            \"eventId\": \"";
        const std::string n = std::to_string(k++);  // 56 digits, unique: the event's number
        all.append(56 - n.size(), '0').append(n);
        all += "\"\n        }";
      }));
  if (!events) return Status::Ok();
  all += "\n    ],\n    \"searchedLogStreams\": []\n}\n";
  DENPEX_RETURN_IF_ERROR(WriteText(out / "events.json", all));
  return CopyOtherLogs(src, out);
}

// Container Insights' events (ContainerInsightsEvents) as `aws logs tail
// /aws/containerinsights/<cluster>/application --since 2h` prints them to a file, `tail.log`: a
// line an event, `<time> <stream> <record>`, its time as Python's `isoformat(timespec=
// 'microseconds')` writes it in UTC (`2024-06-01T09:00:21.972000+00:00`). Every other file as it
// is.
Status RelayCloudWatchTail(const Source& src, const fs::path& out, Relaid* r) {
  std::string all;
  bool events = false;
  DENPEX_RETURN_IF_ERROR(ContainerInsightsEvents(
      src, r, &events, [&](const std::string& stream, std::int64_t ms, const std::string& record) {
        // `2024-06-01T09:00:21.972000000Z` to the microsecond, the zone as Python writes UTC's
        all.append(FormatRfc3339(ms * 1'000'000), 0, 26) += "+00:00 ";
        ((all += stream) += ' ') += record;
        all += '\n';
      }));
  if (!events) return Status::Ok();
  DENPEX_RETURN_IF_ERROR(WriteText(out / "tail.log", all));
  return CopyOtherLogs(src, out);
}

namespace {

// `t` as Filebeat's `@timestamp`: RFC 3339 in UTC to the millisecond.
std::string EcsTime(TimeNs t) {
  const std::string s = FormatRfc3339(t);  // `2024-06-01T09:00:21.972589808Z`
  return s.substr(0, s.find('.') + 4) + "Z";
}

}  // namespace

// Filebeat on every machine (`filestream` inputs over the job's log files, Kubernetes' pod logs
// with its `kubernetes` metadata), its documents exported from Elasticsearch as one NDJSON file
// `filebeat.ndjson` in arrival order: `{"@timestamp":"<ms>Z","message":"<line>","log":{"file":
// {"path":"/var/log/collected/<path>"}},"host":{"name":"<host>"},...}`, the host where
// the file was written (a node folder's node, else `login-01`, the host that collected the
// top-level files: srun's, mpirun's, the controller's); a current pod log's documents with
// `kubernetes.pod.name`, `kubernetes.node.name` (its describe's node, left out where none names
// one) and the container's log path. What kubectl printed (describes, events, `--previous` logs,
// a Kubernetes job's top-level files) stays as it is.
Status RelayFilebeat(const Source& src, const fs::path& out, Relaid*) {
  const auto nodes = PodNodes(src);
  bool kubernetes = false;
  for (const auto& f : src.files) kubernetes |= f.log && f.rel.starts_with("pods/");
  std::vector<std::string> texts, heads;  // each shipped file's text, its documents' fields
  std::vector<const SourceFile*> kept;
  for (const auto& f : src.files) {
    if (!f.log) continue;
    const std::string pod = PodOf(f.rel);
    const bool current_pod = f.rel.starts_with("pods/") && !f.rel.ends_with(".previous.log");
    if ((!pod.empty() && !current_pod) || (kubernetes && NodeOf(f.rel).empty() && !current_pod)) {
      kept.push_back(&f);
      continue;
    }
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    texts.push_back(std::move(*text));
    std::string head;
    if (current_pod) {
      const auto node = nodes.find(pod);
      head = R"("stream":"stdout","kubernetes":{"pod":{"name":")" + pod +
             R"("},"namespace":"default",)" +
             (node == nodes.end() ? "" : R"("node":{"name":")" + node->second + R"("},)") +
             R"("container":{"name":"pytorch"}},"log":{"file":{"path":"/var/log/containers/)" +
             pod + "_default_pytorch-" + Opaque(src, "docker-id/" + pod, 64) + R"(.log"}},)" +
             (node == nodes.end() ? "" : R"("host":{"name":")" + node->second + R"("},)");
    } else {
      const std::string node = NodeOf(f.rel);
      head = R"("log":{"file":{"path":"/var/log/collected/)";
      AppendJsonEscaped(f.rel, &head);  // a frozen incident's names are anyone's
      head += R"("}},"host":{"name":")";
      AppendJsonEscaped(node.empty() ? std::string("login-01") : node, &head);
      head += R"("},)";
    }
    heads.push_back(head + R"("input":{"type":"filestream"},"agent":{"type":"filebeat"},)" +
                    R"("ecs":{"version":"8.0.0"}})" + "\n");
  }
  if (texts.empty()) return CopyKept(src, out);
  const auto lines = LinesOf(texts);
  std::string all;
  for (const Arrival& a : ArrivalOrder(lines, src)) {
    (all += R"({"@timestamp":")") += EcsTime(a.t);
    all += R"(","message":")";
    AppendJsonEscaped(lines[a.file][a.line], &all);
    all += "\",";
    all += heads[a.file];
  }
  DENPEX_RETURN_IF_ERROR(WriteText(out / "filebeat.ndjson", all));
  for (const SourceFile* f : kept) {
    auto text = ReadText(src.dir / f->rel);
    if (!text.ok()) return text.status();
    DENPEX_RETURN_IF_ERROR(WriteText(out / f->rel, *text));
  }
  return CopyKept(src, out);
}

// One file per node folder (its files one after another), every other log its own file; all
// at the top level under opaque names.
Status RelayFlat(const Source& src, const fs::path& out, Relaid* r) {
  std::map<std::string, std::string> units;  // unit key -> its text, in path order
  for (const auto& f : src.files) {
    if (!f.log) continue;
    const std::string node = NodeOf(f.rel);
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    AppendWhole(&units[node.empty() ? f.rel : node + "/"], *text);
  }
  std::set<std::string> used;
  for (const auto& [key, text] : units) {
    const std::string name = UniqueOpaque(src, key, ".log", &used);
    if (key.ends_with('/')) {
      const std::string node = key.substr(0, key.size() - 1);
      Alias(r, name, node);
      Alias(r, name.substr(0, name.size() - 4), node);
    }
    DENPEX_RETURN_IF_ERROR(WriteText(out / name, text));
  }
  return CopyKept(src, out);
}

// The same folders and files, every name opaque (files end in .log).
Status RelayRenamed(const Source& src, const fs::path& out, Relaid* r) {
  std::map<std::string, std::string> renamed;  // old folder path -> new folder path
  std::set<std::string> used;
  for (const auto& f : src.files) {
    if (!f.log) continue;
    const fs::path rel(f.rel);
    std::string old_dir, new_dir;
    for (auto it = rel.begin(); it != rel.end(); ++it) {
      if (std::next(it) == rel.end()) break;
      old_dir += it->string() + "/";
      auto [pos, fresh] = renamed.try_emplace(old_dir);
      if (fresh) ((pos->second = new_dir) += UniqueOpaque(src, old_dir, "", &used)) += '/';
      new_dir = pos->second;
    }
    const std::string name = new_dir + UniqueOpaque(src, f.rel, ".log", &used);
    if (const std::string node = NodeOf(f.rel); !node.empty()) {
      const std::string& folder = renamed[node + "/"];
      Alias(r, folder.substr(0, folder.size() - 1), node);
    }
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    DENPEX_RETURN_IF_ERROR(WriteText(out / name, *text));
  }
  return CopyKept(src, out);
}

// The whole collection one folder deeper, under one opaque folder, names kept: a tarball's top
// folder, or the collection copied into a ticket's folder, diagnosed from above it (its top-level
// files, the launcher's and the scheduler's, now sit in a folder whose name is no node's; its
// checkpoint tree in that folder too).
Status RelayNested(const Source& src, const fs::path& out, Relaid*) {
  const fs::path folder = out / Opaque(src, "nested");
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    DENPEX_RETURN_IF_ERROR(WriteText(folder / f.rel, *text));
  }
  return CopyKept(src, folder);
}

namespace {
Result<std::string> Gzip(std::string_view data) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("zlib: deflate failed");
  return out;  // gzip header: mtime 0, so the same bytes every time
}
}  // namespace

// logrotate's view: the oldest third X.2.gz (gzip), the next X.1, the newest X (cut at lines).
Status RelayRotated(const Source& src, const fs::path& out, Relaid*) {
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    const std::string_view t = *text;
    auto cut = [&t](size_t at) {
      if (at >= t.size()) return t.size();
      const size_t nl = t.find('\n', at);
      return nl == std::string_view::npos ? t.size() : nl + 1;
    };
    const size_t a = cut(t.size() / 3), b = std::max(a, cut(2 * t.size() / 3));
    if (a > 0) {
      auto gz = Gzip(t.substr(0, a));
      if (!gz.ok()) return gz.status();
      DENPEX_RETURN_IF_ERROR(WriteText(out / (f.rel + ".2.gz"), *gz));
    }
    if (b > a) DENPEX_RETURN_IF_ERROR(WriteText(out / (f.rel + ".1"), t.substr(a, b - a)));
    DENPEX_RETURN_IF_ERROR(WriteText(out / f.rel, t.substr(b)));
  }
  return CopyKept(src, out);
}

}  // namespace denpex::cli::shapes
