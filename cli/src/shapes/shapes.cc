// The table of collection shapes and what every shape's function shares: the incident's file
// list, its seed, node names, deterministic names and numbers, and each line's own time.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "shapes_internal.h"

namespace denpex::cli::shapes {
namespace fs = std::filesystem;

const std::vector<Shape>& AllShapes() {
  static const std::vector<Shape> kShapes = {
      {"merged", "file and folder boundaries: which node and rank a line came from, unless it says",
       "the same answer where the lines name their rank and host; else node-level or INCONCLUSIVE",
       RelayMerged},
      {"interleaved", "file boundaries and each stream's order: lines sorted by their own stamps",
       "the same answer where the lines name their rank and host; else node-level or INCONCLUSIVE",
       RelayInterleaved},
      {"kubectl-prefix",
       "the pod logs' boundaries: every current pod log in one stream in arrival order, each "
       "line behind `kubectl logs --prefix`'s `[pod/<pod>/<container>] `",
       "the same answer where the pod tags or the lines name the ranks and pods; else node-level "
       "or INCONCLUSIVE",
       RelayKubectlPrefix},
      {"fluent-bit",
       "the pod logs' boundaries and lines: every current pod log shipped by Fluent Bit's "
       "Kubernetes filter, one JSON record a line in arrival order (`log`, `date`, the pod and "
       "its node under `kubernetes`)",
       "the same answer where the records or the lines name the ranks and pods; else node-level "
       "or INCONCLUSIVE",
       RelayFluentBit},
      {"filebeat",
       "file and folder boundaries and every line's own shape: every log shipped by Filebeat "
       "(its host, its path, a pod's metadata) and exported as one NDJSON file in arrival order",
       "the same answer where the lines, the pods' records or the files' streams name the rank "
       "and node; else node-level or INCONCLUSIVE",
       RelayFilebeat},
      {"cloud-logging",
       "the pod logs' boundaries, lines and order: every current pod log as Google Cloud "
       "Logging's entries, one pretty-printed JSON array newest first (`gcloud logging read "
       "--format=json`: `textPayload`, `timestamp`, the pod and its node in its labels)",
       "the same answer where the entries or the lines name the ranks and pods; else node-level "
       "or INCONCLUSIVE",
       RelayCloudLogging},
      {"cloudwatch",
       "the pod logs' boundaries, lines and order: every current pod log shipped to CloudWatch "
       "Logs by EKS Container Insights' Fluent Bit and fetched with `aws logs filter-log-events "
       "--output json`: one JSON object, its `events` in time order to the millisecond, each "
       "event's `message` the Fluent Bit record (the pod and its node under `kubernetes`) "
       "JSON-escaped once more",
       "the same answer where the records or the lines name the ranks and pods; else node-level "
       "or INCONCLUSIVE",
       RelayCloudWatch},
      {"cloudwatch-tail",
       "the pod logs' boundaries and lines: every current pod log shipped to CloudWatch Logs by "
       "EKS Container Insights' Fluent Bit and printed by `aws logs tail`: one text file, a line "
       "an event in time order to the millisecond, `<time> <log stream> <Fluent Bit's record>` "
       "(the pod and its node under the record's `kubernetes`)",
       "the same answer where the records or the lines name the ranks and pods; else node-level "
       "or INCONCLUSIVE",
       RelayCloudWatchTail},
      {"flat", "folders and file names: one file per node or agent, opaque names",
       "the same answer where the lines name their rank; else node-level", RelayFlat},
      {"renamed", "every file and folder name (rank_<R>.log, <host>/, slurm-<id>.out)",
       "the same answer where the lines name their rank; else node-level", RelayRenamed},
      {"nested",
       "nothing: the whole collection one folder deeper, under one opaque folder (a tarball's, a "
       "ticket's)",
       "the same answer", RelayNested},
      {"same-host", "host names: every node and host name in lines and paths is one name",
       "the same rank; the node only as the one shared name", RelaySameHost},
      {"cri", "nothing: a containerd/CRI-O `<RFC 3339 nano> stdout F ` prefix on every line",
       "the same answer", RelayCri},
      {"journald", "nothing: a syslog `Mon DD HH:MM:SS host unit[pid]: ` prefix on every line",
       "the same answer", RelayJournald},
      {"kubectl-ts", "nothing: `kubectl logs --timestamps`' `<RFC3339Nano>Z ` prefix on every line",
       "the same answer", RelayKubectlTs},
      {"docker-json",
       "nothing: each line a Docker json-file record `{\"log\":\"<line>\\n\",\"stream\":\"stdout\","
       "\"time\":\"<RFC3339Nano>\"}`, JSON-escaped, lines over 16 KiB split",
       "the same answer", RelayDockerJson},
      {"journald-json",
       "nothing: every log read back from a journal as `journalctl -o json` exports it, one entry "
       "a line (the kernel's for a kernel log, a process's for the others)",
       "the same answer", RelayJournaldJson},
      {"paste",
       "line integrity: `> ` or indented quoting, ANSI colours, lines hard-wrapped at "
       "80-200 columns",
       "the same answer, or INCONCLUSIVE where the deciding line was cut", RelayPaste},
      {"one-node", "every other node: only the initiator's node's files",
       "the initiator's rank or node (node-level), or INCONCLUSIVE where the node's files hold "
       "no failure",
       RelayOneNode},
      {"victims-only", "the initiator's node's files",
       "INCONCLUSIVE, or a node-level answer naming the silent node", RelayVictimsOnly},
      {"shared-daemons", "nothing: daemon and kernel logs padded with other jobs' lines",
       "the same answer (other jobs' lines are out of scope)", RelaySharedDaemons},
      {"rotated", "file wholeness: each log split into X.log.2.gz (gzip), X.log.1, X.log",
       "the same answer once .gz is read; until then what the two newest parts support",
       RelayRotated},
  };
  return kShapes;
}

const Shape* FindShape(std::string_view name) {
  for (const auto& s : AllShapes()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

Result<std::vector<const Shape*>> ParseShapes(const std::vector<std::string>& names) {
  std::vector<const Shape*> out;
  auto add = [&out](const Shape* s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const auto& item : names) {
    std::stringstream ss(item);
    std::string name;
    while (std::getline(ss, name, ',')) {
      if (name.empty()) continue;
      if (name == "all") {
        for (const auto& s : AllShapes()) add(&s);
        continue;
      }
      const Shape* s = FindShape(name);
      if (s == nullptr) {
        std::string known;
        for (const auto& k : AllShapes()) known += std::string(known.empty() ? "" : ", ") + k.name;
        return Status::InvalidArgument("unknown shape '" + name + "' (known: all, " + known + ")");
      }
      add(s);
    }
  }
  return out;
}

std::uint64_t Rng::Next() {
  std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t Hash(std::string_view s, std::uint64_t seed) {
  std::uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return Rng(h).Next();
}

Result<std::string> ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::IoError(p.string() + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteText(const fs::path& p, std::string_view text) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError(p.string() + ": cannot write");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return out ? Status::Ok() : Status::IoError(p.string() + ": write failed");
}

Status CopyKept(const Source& src, const fs::path& out) {
  for (const auto& f : src.files) {
    if (f.log) continue;
    std::error_code ec;
    fs::create_directories((out / f.rel).parent_path(), ec);
    fs::copy_file(src.dir / f.rel, out / f.rel, fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::IoError((out / f.rel).string() + ": " + ec.message());
  }
  return Status::Ok();
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(pos));
      break;
    }
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

namespace {
// Folders at the top of an incident that are not one node's.
constexpr std::array<std::string_view, 3> kNotNodeFolders = {"pods", "describe", "checkpoints"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A file that is not a log: the checkpoint tree, or bytes with a NUL near the start.
bool IsLog(const fs::path& abs, std::string_view rel) {
  if (rel.starts_with("checkpoints/")) return false;
  std::ifstream in(abs, std::ios::binary);
  std::array<char, 4096> buf{};
  in.read(buf.data(), buf.size());
  return std::memchr(buf.data(), 0, static_cast<size_t>(in.gcount())) == nullptr;
}

Result<Source> ReadSource(const fs::path& incident, const v1::Truth& truth) {
  Source src{.dir = incident, .truth = &truth};
  std::error_code ec;
  if (!fs::is_directory(incident, ec)) return Status::NotFound(incident.string() + ": no incident");
  std::string key = truth.scenario() + "/" + std::to_string(truth.seed());
  for (auto it = fs::recursive_directory_iterator(incident, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const std::string rel = fs::relative(it->path(), incident, ec).generic_string();
    src.files.push_back({.rel = rel, .log = IsLog(it->path(), rel)});
  }
  if (ec) return Status::IoError(incident.string() + ": " + ec.message());
  std::sort(src.files.begin(), src.files.end(),
            [](const auto& a, const auto& b) { return a.rel < b.rel; });
  for (const auto& f : src.files) {
    key += "\n" + f.rel + " " + std::to_string(fs::file_size(incident / f.rel, ec));
  }
  src.seed = Hash(key);
  for (const std::string* t : {&truth.job().start_time(), &truth.job().fault_time(),
                               &truth.job().end_time()}) {
    if (auto ns = ParseRfc3339(*t)) {
      src.start_ns = *ns;
      src.year = ToCivil(*ns).year;
      break;
    }
  }
  return src;
}
}  // namespace

std::string NodeOf(std::string_view rel) {
  const size_t slash = rel.find('/');
  if (slash == std::string_view::npos) return "";
  const std::string_view top = rel.substr(0, slash);
  for (auto n : kNotNodeFolders) {
    if (top == n) return "";
  }
  return std::string(top);
}

std::set<std::string> NodeNames(const Source& src) {
  std::set<std::string> names;
  for (const auto& f : src.files) {
    if (auto n = NodeOf(f.rel); !n.empty() && f.log) names.insert(n);
  }
  if (!src.truth->initiator().node().empty()) names.insert(src.truth->initiator().node());
  for (const auto& e : src.truth->events()) {
    if (!e.node().empty()) names.insert(e.node());
  }
  return names;
}

std::string InitiatorNode(const Source& src) {
  if (!src.truth->initiator().node().empty()) return src.truth->initiator().node();
  for (const auto& e : src.truth->events()) {
    if (!e.node().empty()) return e.node();
  }
  return "";
}

std::map<std::string, std::string> PodNodes(const Source& src) {
  std::map<std::string, std::string> nodes;
  for (const auto& f : src.files) {
    if (!f.rel.starts_with("describe/")) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) continue;
    for (auto line : Lines(*text)) {
      const size_t p = line.find_first_not_of(' ');
      if (p == std::string_view::npos || !line.substr(p).starts_with("Node:")) continue;
      std::string_view v = line.substr(p + 5);
      v.remove_prefix(std::min(v.size(), v.find_first_not_of(' ')));
      nodes[fs::path(f.rel).stem().string()] = std::string(v.substr(0, v.find('/')));
      break;
    }
  }
  return nodes;
}

std::string PodOf(std::string_view rel) {
  if (!rel.starts_with("pods/") && !rel.starts_with("describe/")) return "";
  std::string pod = fs::path(rel).stem().string();
  if (pod.ends_with(".previous")) pod.resize(pod.size() - 9);
  return pod;
}

std::set<std::string> FilesOfNode(const Source& src, const std::string& node) {
  const std::string want = Lower(node);
  const auto pods = PodNodes(src);
  std::set<std::string> out;
  for (const auto& f : src.files) {
    const auto pod = pods.find(PodOf(f.rel));
    const bool pod_file = pod != pods.end() && Lower(pod->second) == want;
    if (Lower(NodeOf(f.rel)) == want || pod_file) out.insert(f.rel);
  }
  return out;
}

std::string Opaque(const Source& src, std::string_view what, int len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  Rng rng(Hash(what, src.seed));
  while (static_cast<int>(out.size()) < len) {
    std::uint64_t v = rng.Next();
    for (int i = 0; i < 16 && static_cast<int>(out.size()) < len; ++i, v >>= 4) {
      out += kHex[v & 15];
    }
  }
  return out;
}

Result<Relaid> Relay(const Shape& shape, const fs::path& incident, const v1::Truth& truth,
                     const fs::path& out) {
  auto src = ReadSource(incident, truth);
  if (!src.ok()) return src.status();
  std::error_code ec;
  if (fs::exists(out, ec)) return Status::InvalidArgument(out.string() + ": already exists");
  fs::create_directories(out, ec);
  if (ec) return Status::IoError(out.string() + ": cannot create: " + ec.message());
  Relaid relaid;
  DENPEX_RETURN_IF_ERROR(shape.relay(*src, out, &relaid));
  return relaid;
}

}  // namespace denpex::cli::shapes
