#include "analyze/gpu_health.h"

#include <algorithm>
#include <charconv>
#include <climits>

#include "ingest/file_text.h"
#include "parse/families.h"
#include "parse/parse_log.h"
#include "parse/prefix.h"
#include "parse/triggers.h"

namespace denpex::engine {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '|')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '|' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::int64_t ToInt(std::string_view s, std::int64_t fallback = 0) {
  s = Trim(s);
  std::int64_t v = fallback;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() ? v : fallback;
}

int Indent(std::string_view line) {
  int n = 0;
  while (n < static_cast<int>(line.size()) && line[n] == ' ') ++n;
  return n;
}

std::string Pci(std::string_view id) {
  char buf[16];
  return std::string(NormalisePci(Trim(id), buf));
}

// GPU k entered in (`in`) or taken out of the key sets its bus id, UUID and index put it in.
void Key(NodeGpuHealth* h, std::int32_t k, bool in) {
  const GpuHealth& g = h->gpus[static_cast<std::size_t>(k)];
  NodeGpuHealth::Keys& keys = h->keys;
  const auto put = [&](std::set<std::int32_t>& set) {
    in ? void(set.insert(k)) : void(set.erase(k));
  };
  if (!g.pci.empty()) put(keys.pci[g.pci]);
  if (!g.uuid.empty()) put(keys.uuid[g.uuid]);
  if (g.index >= 0) put(keys.index[g.index]);
  if (!g.pci.empty() && g.uuid.empty()) put(keys.pci_bare[g.pci]);
  if (g.index >= 0 && g.uuid.empty()) put(keys.index_bare[g.index]);
}

// The GPU the keys name, created when none matches; fills in the keys it lacked. The one a scan
// of `gpus` in order would stop at: the first any key names that is not another machine's (one
// with no UUID yet, or with this UUID on no other bus); any GPU a key names before it is another
// machine's (hosts under one name). Found in the key sets, not by a scan (16 k GPUs under one
// host name, a lookup per line).
GpuHealth& At(NodeGpuHealth* h, const std::string& pci, std::int32_t index, const std::string& uuid) {
  using Set = std::set<std::int32_t>;
  static const Set kNone;
  const auto named = [](const auto& map, const auto& key, bool given) -> const Set& {
    const auto it = given ? map.find(key) : map.end();
    return it == map.end() ? kNone : it->second;
  };
  const auto first = [](const Set& set) { return set.empty() ? INT32_MAX : *set.begin(); };
  NodeGpuHealth::Keys& keys = h->keys;
  const Set& by_pci = named(keys.pci, pci, !pci.empty());
  const Set& by_index = named(keys.index, index, index >= 0);
  std::int32_t chosen = INT32_MAX;
  if (uuid.empty()) {  // no UUID to tell machines apart: the first GPU a key names
    chosen = std::min(first(by_pci), first(by_index));
  } else {
    bool other_bus = false;  // this UUID met on another bus before the chosen GPU
    for (const std::int32_t k : named(keys.uuid, uuid, true)) {
      const GpuHealth& g = h->gpus[static_cast<std::size_t>(k)];
      if (!pci.empty() && !g.pci.empty() && g.pci != pci) {
        other_bus = true;
        continue;
      }
      chosen = k;
      break;
    }
    chosen = std::min({chosen, first(named(keys.pci_bare, pci, !pci.empty())),
                       first(named(keys.index_bare, index, index >= 0))});
    // A GPU a key names before the chosen one holds another UUID (every one with none or this
    // one is a candidate): another machine's.
    h->several_machines |= other_bus || first(by_pci) < chosen || first(by_index) < chosen;
  }
  if (chosen != INT32_MAX) {
    GpuHealth& g = h->gpus[static_cast<std::size_t>(chosen)];
    Key(h, chosen, false);
    if (g.pci.empty()) g.pci = pci;
    if (g.uuid.empty()) g.uuid = uuid;
    if (g.index < 0) g.index = index;
    Key(h, chosen, true);
    return g;
  }
  h->gpus.push_back(GpuHealth{.pci = pci, .uuid = uuid, .index = index});
  Key(h, static_cast<std::int32_t>(h->gpus.size() - 1), true);
  return h->gpus.back();
}

// GPU k's UUID as an `-q` block names it (over any it had), and its index where it had none, with
// its keys kept in step.
void NameUuid(NodeGpuHealth* h, std::int32_t k, std::string_view uuid) {
  Key(h, k, false);
  h->gpus[static_cast<std::size_t>(k)].uuid = std::string(uuid);
  Key(h, k, true);
}
void NameIndex(NodeGpuHealth* h, std::int32_t k, std::int32_t index) {
  if (h->gpus[static_cast<std::size_t>(k)].index >= 0) return;
  Key(h, k, false);
  h->gpus[static_cast<std::size_t>(k)].index = index;
  Key(h, k, true);
}

// State while reading one file top to bottom.
struct Reader {
  NodeGpuHealth* out;
  std::int32_t file;
  // The `nvidia-smi -q` GPU block being read, as an index into out->gpus (-1: none): a pointer
  // would dangle when a later line adds a GPU and the vector grows.
  std::int64_t query = -1;
  std::string section, scope;     // its indent-4 section (`ECC Errors`) and indent-8 scope (`Volatile`)
  std::string sub;                // and indent-12 one (`Link Width` of `GPU Link Info`)
  std::int32_t dcgm_gpu = -1;     // `| -> 3 ...` of dcgmi health; a failing GPU of dcgmi diag
  std::string diag_test;          // the dcgmi diag row being continued
  bool in_diag = false;           // past `Successfully ran diagnostic` / a `Fail - GPU:` row
  int throttle_rank = 0;          // of the cited clocks reason of the current -q GPU

  HealthLine Here(const LineSpan& span) const { return {file, span}; }

  void Query(std::string_view line, const LineSpan& span);
  void Header(std::string_view key, std::string_view value, const LineSpan& span);
  void QueryValue(std::string_view key, std::string_view value, const LineSpan& span);
  void DcgmTable(std::string_view line, const LineSpan& span);
  void Metric(std::string_view line, const LineSpan& span);
};

void Reader::Query(std::string_view line, const LineSpan& span) {
  const int indent = Indent(line);
  const std::string_view body = Trim(line);
  if (indent == 0 && body.starts_with("GPU ") && body.find(':') != std::string_view::npos && body.find(" : ") == std::string_view::npos) {
    const std::string pci = Pci(body.substr(4));
    if (!pci.empty()) {
      query = &At(out, pci, -1, "") - out->gpus.data();
      throttle_rank = 0;
      section.clear();
      scope.clear();
      sub.clear();
    }
    return;
  }
  const std::size_t colon = line.find(" : ");
  if (indent == 0 && colon != std::string_view::npos)
    return Header(Trim(line.substr(0, colon)), Trim(line.substr(colon + 3)), span);
  if (query < 0) return;
  if (colon == std::string_view::npos) {
    if (indent == 4) section = std::string(body), scope.clear(), sub.clear();
    if (indent == 8) scope = std::string(body), sub.clear();
    if (indent == 12) sub = std::string(body);
    return;
  }
  if (indent == 4 && body.starts_with("Remapped Rows")) section = "Remapped Rows (N/A)";
  QueryValue(Trim(line.substr(0, colon)), Trim(line.substr(colon + 3)), span);
}

// `nvidia-smi -q`'s lines before the first GPU's block.
void Reader::Header(std::string_view key, std::string_view value, const LineSpan& span) {
  if (key == "Driver Version") {
    out->driver = std::string(value);
    out->driver_line = Here(span);
  } else if (key == "CUDA Version") {
    out->cuda = std::string(value);
  } else if (key == "Attached GPUs") {
    out->attached = static_cast<std::int32_t>(ToInt(value, -1));
    out->attached_line = Here(span);
  }
}

void Reader::QueryValue(std::string_view key, std::string_view value, const LineSpan& span) {
  GpuHealth& g = out->gpus[static_cast<std::size_t>(query)];
  const bool active = value == "Active";
  if (key == "Product Name") {
    g.name = std::string(value);
  } else if (section == "PCI" && scope == "GPU Link Info" && sub == "Link Width" &&
             (key == "Max" || key == "Current")) {
    const auto lanes =
        static_cast<std::int32_t>(ToInt(value.substr(0, value.find('x')), -1));  // `16x`
    if (key == "Max") g.pcie_width_max = lanes;
    if (key == "Current") g.pcie_width = lanes, g.pcie_line = Here(span);
  } else if (key == "GPU UUID") {
    NameUuid(out, static_cast<std::int32_t>(query), value);
  } else if (key == "Minor Number") {
    NameIndex(out, static_cast<std::int32_t>(query), static_cast<std::int32_t>(ToInt(value, -1)));
  } else if (section == "Clocks Event Reasons" || section == "Clocks Throttle Reasons") {
    // The most specific reason is the one to cite: HW thermal or power brake, then SW thermal,
    // then the generic HW Slowdown.
    const int rank = key == "HW Thermal Slowdown" || key == "HW Power Brake Slowdown" ? 3 : key == "SW Thermal Slowdown" ? 2
                     : key == "HW Slowdown"                                           ? 1
                                                                                      : 0;
    if (rank > 0 && active) {
      (rank == 1 ? g.hw_slowdown : rank == 2 ? g.sw_thermal : key == "HW Thermal Slowdown" ? g.hw_thermal : g.hw_power_brake) = true;
      if (rank > throttle_rank) throttle_rank = rank, g.throttle_line = Here(span);
    }
  } else if (section == "ECC Errors") {
    const std::int64_t n = ToInt(value);
    if (scope == "Volatile" && key.find("Uncorrectable") != std::string_view::npos && n > 0) {
      g.volatile_uncorrectable += n;
      if (g.memory_line.file < 0) g.memory_line = Here(span);
    }
    if (scope == "Aggregate" && key.ends_with("Correctable") && key.find("Uncorrectable") == std::string_view::npos) {
      g.aggregate_correctable += n;
    }
  } else if (section == "Retired Pages") {
    if (key == "Double Bit ECC" && (g.retired_dbe = ToInt(value)) > 0) g.retired_line = Here(span);
    if (key == "Pending Page Blacklist" && value == "Yes")
      g.retire_pending = true, g.pending_line = Here(span);
  } else if (section == "Remapped Rows") {
    if (key == "Pending" && value == "Yes") g.remap_pending = true, g.pending_line = Here(span);
    if (key == "Remapping Failure Occurred" && value == "Yes") {
      if (!g.remap_failed) g.memory_line = Here(span);  // the line that decides the action
      g.remap_failed = true;
    }
  } else if (section == "Temperature" && key == "GPU Current Temp") {
    g.temperature = static_cast<std::int32_t>(ToInt(value.substr(0, value.find(' ')), -1));
  }
}

// dcgmi diag's deployment checks (level 1): software and configuration, not the GPU's hardware.
bool IsHardwareTest(std::string_view test) {
  static constexpr std::string_view kDeployment[] = {
      "Denylist", "Blacklist", "NVML Library", "CUDA Main Library", "CUDA Toolkit Libraries", "Permissions and OS Blocks",
      "Persistence Mode", "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom",
      "Fabric Manager"};
  if (test.empty()) return false;
  for (std::string_view d : kDeployment) {
    if (test == d) return false;
  }
  return true;
}

// `dcgmi health -c` and `dcgmi diag` tables: `| -> 3 | Failure |`, message rows with an empty
// left column, `| Page Retirement/Row Remap | Fail - GPU: 3 |`, `| Warning | GPU 3 ... |`.
void Reader::DcgmTable(std::string_view line, const LineSpan& span) {
  const std::size_t bar = line.find('|', 1);
  if (bar == std::string_view::npos) return;
  const std::string_view left = Trim(line.substr(1, bar - 1)), right = Trim(line.substr(bar + 1));
  if (left.starts_with("-> ") && !left.starts_with("-> Errors")) {
    const std::int64_t gpu = ToInt(left.substr(3), -1);
    if (gpu >= 0) dcgm_gpu = static_cast<std::int32_t>(gpu);
    return;
  }
  if (!left.empty() && !left.starts_with("->") && left != "Warning") diag_test = std::string(left);
  if (left == "Diagnostic") in_diag = true;
  if (right.starts_with("Fail - GPU: ")) {
    in_diag = true;
    dcgm_gpu = static_cast<std::int32_t>(ToInt(right.substr(12), -1));
    if (dcgm_gpu >= 0) {
      GpuHealth& g = At(out, "", dcgm_gpu, "");
      g.dcgm += (g.dcgm.empty() ? "" : "; ") + std::string("dcgmi diag: ") + diag_test + " failed";
      if (g.memory_line.file < 0 && diag_test.find("Row Remap") != std::string::npos) g.memory_line = Here(span);
      if (IsHardwareTest(diag_test) && g.diag_failed.empty()) {
        g.diag_failed = diag_test;
        g.diag_line = Here(span);
        g.diag_memory = diag_test == "GPU Memory" || diag_test == "Memory Bandwidth" || diag_test == "Memtest";
        if (g.diag_memory && g.memory_line.file < 0) g.memory_line = Here(span);
      }
    }
    return;
  }
  if (dcgm_gpu < 0 || right.empty() || right == "Failure" || right == "Warning" || right == "Healthy") return;
  GpuHealth& g = At(out, "", dcgm_gpu, "");
  if (in_diag && left == "Warning") {
    g.dcgm += ": " + std::string(right);
  } else if (!in_diag && left.empty()) {
    g.dcgm += (g.dcgm.empty() ? "dcgmi health: " : " ") + std::string(right);
  }
}

// `DCGM_FI_DEV_ROW_REMAP_PENDING{gpu="3",UUID="GPU-...",pci_bus_id="00000000:5D:00.0",...} 1`.
void Reader::Metric(std::string_view line, const LineSpan& span) {
  const std::size_t open = line.find('{'), close = line.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  const std::string_view name = line.substr(8, open - 8);  // after DCGM_FI_
  const std::string_view labels = line.substr(open, close - open + 1);
  std::string_view value = Trim(line.substr(close + 1));
  value = value.substr(0, value.find(' '));
  const std::int64_t v = ToInt(value.substr(0, value.find('.')));
  GpuHealth& g = At(out, Pci(LabelValue(labels, "pci_bus_id")),
                    static_cast<std::int32_t>(ToInt(LabelValue(labels, "gpu"), -1)),
                    std::string(LabelValue(labels, "UUID")));
  if (name == "DEV_XID_ERRORS" || name == "DEV_XID_ERROR") {
    g.last_xid = static_cast<std::int32_t>(v);
  } else if (name == "DEV_ECC_DBE_VOL_TOTAL" && v > g.volatile_uncorrectable) {
    g.volatile_uncorrectable = v;
    if (g.memory_line.file < 0) g.memory_line = Here(span);
  } else if (name == "DEV_ROW_REMAP_PENDING" && v > 0) {
    g.remap_pending = true;
    g.pending_line = Here(span);
  } else if (name == "DEV_ROW_REMAP_FAILURE" && v > 0) {
    if (!g.remap_failed) g.memory_line = Here(span);
    g.remap_failed = true;
  } else if (name == "DEV_CLOCKS_EVENT_REASONS" || name == "DEV_CLOCK_THROTTLE_REASONS") {
    const bool was = g.Throttled();
    g.hw_slowdown |= (v & 0x8) != 0;
    g.sw_thermal |= (v & 0x20) != 0;
    g.hw_thermal |= (v & 0x40) != 0;
    g.hw_power_brake |= (v & 0x80) != 0;
    if (!was && g.Throttled() && g.throttle_line.file < 0) g.throttle_line = Here(span);
  } else if ((name == "DEV_GPU_TEMP" || name == "DEV_GPU_TEMP_CELSIUS") && g.temperature < 0) {
    g.temperature = static_cast<std::int32_t>(v);
  }
}

// `nvidia-smi -q -x` (DTD nvsmi_device_v*.dtd): -q's facts as XML. nvidia-smi prints one element
// per line, nested with tabs or spaces, so it is read line by line as the text is, with no XML
// library and no tree: the open elements' names are kept as a path
// (`/nvidia_smi_log/gpu/ecc_errors/volatile`), and a leaf's text is taken when it closes, its
// line cited. Several tags on one line are read too. Bounded: the path is kXmlDepth elements
// deep at most (deeper ones are counted, not kept), a text kXmlText bytes; a tag that does not
// close on its line, a stray close or a truncation loses that element, never the file.
constexpr std::size_t kXmlDepth = 16, kXmlText = 256;
constexpr std::string_view kXmlRoot = "<nvidia_smi_log", kGpuPath = "/nvidia_smi_log/gpu";

// Where `line` opens an `<nvidia_smi_log>` (not another tag whose name starts so); npos: nowhere.
std::size_t FindSmiLog(std::string_view line) {
  for (std::size_t at = line.find(kXmlRoot); at != std::string_view::npos;
       at = line.find(kXmlRoot, at + 1)) {
    const std::size_t after = at + kXmlRoot.size();
    if (after < line.size() && (line[after] == '>' || line[after] == ' ' || line[after] == '\t'))
      return at;
  }
  return std::string_view::npos;
}

struct XmlReader {
  NodeGpuHealth* out;
  std::int32_t file;
  bool active = false;             // inside an <nvidia_smi_log> document
  std::string path;                // `/a/b/c`: the open elements kept
  std::vector<std::size_t> parts;  // where each kept element's `/name` starts in path
  std::size_t deeper = 0;          // open elements past kXmlDepth, not kept
  std::string text;                // the innermost element's text so far
  std::int64_t gpu = -1;  // the <gpu> being read, an index into out->gpus (as Reader's query)
  int throttle_rank = 0;  // of its cited clocks reason, as Reader's

  HealthLine Here(const LineSpan& span) const { return {file, span}; }
  std::string_view Name(std::size_t i) const {
    const std::size_t end = i + 1 < parts.size() ? parts[i + 1] : path.size();
    return std::string_view(path).substr(parts[i] + 1, end - parts[i] - 1);
  }
  bool InGpu() const {
    return path.starts_with(kGpuPath) &&
           (path.size() == kGpuPath.size() || path[kGpuPath.size()] == '/');
  }

  void Line(std::string_view line, const LineSpan& span);
  void Open(std::string_view tag);
  void Close(std::string_view name, const LineSpan& span);
  void Header(std::string_view key, std::string_view value, const LineSpan& span);
  void GpuValue(std::string_view key, std::string_view value, const LineSpan& span);
};

void XmlReader::Line(std::string_view line, const LineSpan& span) {
  if (const std::size_t root = FindSmiLog(line); root != std::string_view::npos) {
    // A new document (or the first): what an earlier, truncated one left open is dropped.
    line.remove_prefix(root);
    *this = XmlReader{.out = out, .file = file, .active = true};
  }
  if (!active) return;
  while (!line.empty()) {
    const std::size_t lt = line.find('<');
    if (text.size() < kXmlText) text.append(line.substr(0, std::min(lt, kXmlText - text.size())));
    if (lt == std::string_view::npos) return;
    const std::size_t gt = line.find('>', lt);
    if (gt == std::string_view::npos) return;  // a tag that does not close on its line: skipped
    const std::string_view tag = line.substr(lt + 1, gt - lt - 1);
    line.remove_prefix(gt + 1);
    if (tag.empty() || tag.front() == '?' || tag.front() == '!') continue;  // <?xml ?>, <!DOCTYPE>
    if (tag.front() == '/') {
      Close(Trim(tag.substr(1)), span);
      if (!active) return;           // </nvidia_smi_log>: the lines after it are text again
    } else if (tag.back() != '/') {  // an empty <element/> carries nothing read here
      Open(tag);
    }
  }
}

void XmlReader::Open(std::string_view tag) {
  const std::string_view name = tag.substr(0, tag.find_first_of(" \t/"));
  text.clear();
  if (name.empty()) return;
  if (parts.size() >= kXmlDepth) {
    ++deeper;
    return;
  }
  parts.push_back(path.size());
  path += '/';
  path += name;
  if (path != kGpuPath) return;
  // `<gpu id="00000000:18:00.0">`: the bus id names the GPU, as -q's `GPU 00000000:18:00.0`.
  const std::size_t id = tag.find("id=\"");
  const std::size_t end = id == std::string_view::npos ? id : tag.find('"', id + 4);
  const std::string pci =
      end == std::string_view::npos ? std::string() : Pci(tag.substr(id + 4, end - id - 4));
  gpu = pci.empty() ? -1 : &At(out, pci, -1, "") - out->gpus.data();
  throttle_rank = 0;
}

void XmlReader::Close(std::string_view name, const LineSpan& span) {
  if (deeper > 0) {
    --deeper;
    text.clear();
    return;
  }
  // A close that is not the innermost element's (malformed) closes up to the one it names; one
  // that names no open element is ignored.
  std::size_t at = parts.size();
  while (at > 0 && Name(at - 1) != name) --at;
  if (at == 0) return;
  if (at == parts.size()) {  // a well-formed close: the element's own text
    const std::string_view value = Trim(text);
    if (InGpu() && path.size() > kGpuPath.size()) {
      if (gpu >= 0) GpuValue(std::string_view(path).substr(kGpuPath.size() + 1), value, span);
    } else if (parts.size() == 2 && Name(0) == "nvidia_smi_log") {
      Header(name, value, span);
    }
  }
  path.resize(parts[at - 1]);
  parts.resize(at - 1);
  text.clear();
  if (!InGpu()) gpu = -1;
  if (parts.empty()) active = false;
}

// <nvidia_smi_log>'s leaves before the first <gpu>, as -q's header lines.
void XmlReader::Header(std::string_view key, std::string_view value, const LineSpan& span) {
  if (key == "driver_version") {
    out->driver = std::string(value);
    out->driver_line = Here(span);
  } else if (key == "cuda_version") {
    out->cuda = std::string(value);
  } else if (key == "attached_gpus") {
    out->attached = static_cast<std::int32_t>(ToInt(value, -1));
    out->attached_line = Here(span);
  }
}

// A leaf of a <gpu>, by its path under it; the same facts, and lines, as Reader::QueryValue.
void XmlReader::GpuValue(std::string_view key, std::string_view value, const LineSpan& span) {
  GpuHealth& g = out->gpus[static_cast<std::size_t>(gpu)];
  const auto under = [&](std::string_view prefix) {
    if (!key.starts_with(prefix)) return false;
    key.remove_prefix(prefix.size());
    return true;
  };
  if (key == "product_name") {
    g.name = std::string(value);
  } else if (key == "uuid") {
    NameUuid(out, static_cast<std::int32_t>(gpu), value);
  } else if (key == "minor_number") {
    NameIndex(out, static_cast<std::int32_t>(gpu), static_cast<std::int32_t>(ToInt(value, -1)));
  } else if (under("pci/pci_gpu_link_info/link_widths/")) {
    const auto lanes =
        static_cast<std::int32_t>(ToInt(value.substr(0, value.find('x')), -1));  // `16x`
    if (key == "max_link_width") g.pcie_width_max = lanes;
    if (key == "current_link_width") g.pcie_width = lanes, g.pcie_line = Here(span);
  } else if (under("clocks_throttle_reasons/clocks_throttle_reason_") ||
             under("clocks_event_reasons/clocks_event_reason_")) {
    // 535 renamed throttle to event; the ranks are Reader's: the most specific reason is cited.
    const int rank = key == "hw_thermal_slowdown" || key == "hw_power_brake_slowdown" ? 3
                     : key == "sw_thermal_slowdown"                                   ? 2
                     : key == "hw_slowdown"                                           ? 1
                                                                                      : 0;
    if (rank > 0 && value == "Active") {
      (rank == 1                      ? g.hw_slowdown
       : rank == 2                    ? g.sw_thermal
       : key == "hw_thermal_slowdown" ? g.hw_thermal
                                      : g.hw_power_brake) = true;
      if (rank > throttle_rank) throttle_rank = rank, g.throttle_line = Here(span);
    }
  } else if (under("ecc_errors/volatile/")) {
    // sram_uncorrectable and dram_uncorrectable (560+: SRAM as _parity and _secded), or before
    // Ampere's counters (418) <double_bit><total>. `N/A` counts 0.
    const std::int64_t n = ToInt(value);
    const bool uncorrectable = key.find('/') == std::string_view::npos
                                   ? key.find("uncorrectable") != std::string_view::npos
                                   : key == "double_bit/total";
    if (uncorrectable && n > 0) {
      g.volatile_uncorrectable += n;
      if (g.memory_line.file < 0) g.memory_line = Here(span);
    }
  } else if (under("ecc_errors/aggregate/")) {
    const bool correctable =
        key.find('/') == std::string_view::npos
            ? key.ends_with("_correctable") && key.find("uncorrectable") == std::string_view::npos
            : key == "single_bit/total";
    if (correctable) g.aggregate_correctable += ToInt(value);
  } else if (under("retired_pages/")) {
    if (key == "double_bit_retirement/retired_count" && (g.retired_dbe = ToInt(value)) > 0)
      g.retired_line = Here(span);
    // pending_blacklist is -q's `Pending Page Blacklist`; 418 prints only pending_retirement.
    if ((key == "pending_blacklist" || key == "pending_retirement") && value == "Yes")
      g.retire_pending = true, g.pending_line = Here(span);
  } else if (under("remapped_rows/")) {
    if (key == "remapped_row_pending" && value == "Yes")
      g.remap_pending = true, g.pending_line = Here(span);
    if (key == "remapped_row_failure" && value == "Yes") {
      if (!g.remap_failed) g.memory_line = Here(span);  // the line that decides the action
      g.remap_failed = true;
    }
  } else if (key == "temperature/gpu_temp") {
    g.temperature =
        static_cast<std::int32_t>(ToInt(value.substr(0, value.find(' ')), -1));  // `35 C`
  }
}

// Calls f(line, span) for every line of `text`.
template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  std::size_t at = 0;
  std::uint32_t number = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    std::string_view line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, LineSpan{number, at, static_cast<std::uint32_t>(line.size())});
    at = end + 1;
  }
}

bool IsHealthFile(std::string_view path) {
  const std::string_view name = path.substr(path.rfind('/') + 1);
  return name.find("nvidia-smi") != std::string_view::npos || name.find("nvidia_smi") != std::string_view::npos ||
         name.find("dcgm") != std::string_view::npos || name.find("gpu-health") != std::string_view::npos;
}

}  // namespace

void ParseGpuHealthText(std::string_view text, std::int32_t file, NodeGpuHealth* out) {
  Reader r{.out = out, .file = file};
  XmlReader x{.out = out, .file = file};
  ForEachLine(text, [&](std::string_view line, const LineSpan& span) {
    if (line.empty()) return;
    // `nvidia-smi -q -x`, known by its root element wherever it starts in the file (after the
    // table, say); its lines go to the XML reader until the root closes.
    if (x.active || FindSmiLog(line) != std::string_view::npos) return x.Line(line, span);
    if (line.starts_with("DCGM_FI_")) return r.Metric(line, span);
    if (line.starts_with("| ")) {
      // The nvidia-smi table's first row of a GPU: `|   3  NVIDIA H100 ...  On  | 00000000:5D:00.0 Off |`.
      const std::string_view cells = line.substr(1);
      const std::size_t bar = cells.find('|');
      const std::int64_t index = ToInt(cells.substr(0, cells.find("  ", Indent(cells))), -1);
      if (index >= 0 && bar != std::string_view::npos && Indent(cells) <= 4) {
        const std::string_view after = Trim(cells.substr(bar + 1));
        const std::string pci = Pci(after.substr(0, after.find(' ')));
        if (!pci.empty()) {
          At(out, pci, static_cast<std::int32_t>(index), "");
          return;
        }
      }
      return r.DcgmTable(line, span);
    }
    if (line.starts_with("GPU ") && line.find("(UUID: ") != std::string_view::npos) {  // nvidia-smi -L
      const std::int64_t index = ToInt(line.substr(4, line.find(':') - 4), -1);
      const std::size_t u = line.find("(UUID: ") + 7;
      At(out, "", static_cast<std::int32_t>(index), std::string(line.substr(u, line.find(')', u) - u)));
      return;
    }
    r.Query(line, span);
  });
}

namespace {

constexpr std::string_view kVisibleKey = "CUDA_VISIBLE_DEVICES=", kGpuAtKey = "NVRM: GPU at PCI:";

// One line of a launch or kernel log: CUDA_VISIBLE_DEVICES (the first one) or a driver UUID line.
void VisibleDevicesLine(std::string_view line, const LineSpan& span, std::int32_t file, NodeGpuHealth* out) {
  if (const std::size_t at = line.find(kGpuAtKey); at != std::string_view::npos) {  // the driver's UUID <-> bus id
    const std::string_view rest = line.substr(at + kGpuAtKey.size());
    const std::size_t sep = rest.find(": GPU-");
    if (sep != std::string_view::npos) At(out, Pci(rest.substr(0, sep)), -1, std::string(Trim(rest.substr(sep + 2))));
    return;
  }
  const std::size_t at = line.find(kVisibleKey);
  if (at == std::string_view::npos || (at > 0 && line[at - 1] != ' ' && line[at - 1] != '\t')) return;
  std::string_view list = line.substr(at + kVisibleKey.size());
  list = list.substr(0, list.find_first_of(" \t\"'"));
  if (list.empty()) return;
  std::vector<std::string> entries;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    entries.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  // The first list is the node's; another list of several GPUs is another machine's (a list of
  // one is a task's own GPU, as `srun --gpus-per-task` sets it).
  if (!out->visible.empty()) {
    out->several_machines |= entries.size() > 1 && out->visible.size() > 1 && entries != out->visible;
    return;
  }
  out->visible = std::move(entries);
  out->visible_line = {file, span};
}

// A node's other logs (agent consoles, a 1 GB syslog) are searched for the two keys by the
// parse's own line filter (parse/triggers.h), piece by piece; only the lines that hold one are
// looked at. Each piece, whole lines up to 1 MiB, is copied into one buffer kept from file to
// file (pread: in the cache, no page of the mapping walked, as the parse reads its chunks; a
// node's 2,048 small kernel logs, every agent under one host name, cost no fresh buffer each),
// so the file costs neither its size in memory nor a fault a page.
constexpr std::size_t kPiece = 1 << 20;
constexpr Trigger kDeviceTriggers[] = {{kVisibleKey}, {kGpuAtKey}};

void ScanDeviceLines(const FileText& text, std::int32_t file, std::vector<char>* buffer,
                     NodeGpuHealth* out) {
  static const LineFilter filter(kDeviceTriggers);
  const std::string_view all = text.view();
  const std::size_t from = text.LeadingHole();
  if (from >= all.size()) return;
  buffer->resize(std::max(buffer->size(), std::min(kPiece, all.size() - from)));
  std::uint32_t line = 1;  // the number of the line the search is at
  for (std::size_t w = from; w < all.size();) {
    // The piece, cut after its last newline (a line longer than a piece is cut where it ends);
    // a file held in memory (one that was compressed) is searched in place.
    const std::size_t length = std::min(kPiece, all.size() - w);
    std::string_view piece = text.Copy(w, length, buffer->data())
                                 ? std::string_view(buffer->data(), length)
                                 : all.substr(w, length);
    if (const std::size_t nl = piece.rfind('\n');
        w + length < all.size() && nl != std::string_view::npos) {
      piece = piece.substr(0, nl + 1);
    }
    for (std::size_t at = 0; at < piece.size();) {
      const LineFilter::Found f = filter.Next(piece, at, kMaxLineBytes);
      line += static_cast<std::uint32_t>(f.newlines);
      if (!f.found) break;
      std::string_view text_line = piece.substr(f.begin, f.end - f.begin);
      if (!text_line.empty() && text_line.back() == '\r') text_line.remove_suffix(1);
      VisibleDevicesLine(text_line,
                         LineSpan{line, w + f.begin, static_cast<std::uint32_t>(text_line.size())},
                         file, out);
      at = f.end + 1;
      line += f.end < piece.size() ? 1 : 0;
    }
    w += piece.size();
  }
}

}  // namespace

void ParseVisibleDevices(std::string_view text, std::int32_t file, NodeGpuHealth* out) {
  ForEachLine(text, [&](std::string_view line, const LineSpan& span) { VisibleDevicesLine(line, span, file, out); });
}

NodeGpuHealth ReadNodeGpuHealth(const Incident& inc, std::int32_t node) {
  NodeGpuHealth out;
  if (node < 0) return out;
  std::vector<char> buffer;  // ScanDeviceLines' pieces
  for (std::size_t i = 0; i < inc.files.size(); ++i) {
    const LogFile& f = inc.files[i];
    // A relayed file's stream (ingest/streams.h) is one pod's lines of a file of many nodes':
    // opened by its path, the file would be read whole as this node's.
    if (f.node != node || !f.readable || f.own_rank >= 0 || f.local_rank >= 0) continue;
    if (!f.tag.empty()) {
      out.streams_unread = true;
      continue;
    }
    // Through the ingest's reader: no link followed, regular files only, mapped, not copied.
    auto text = FileText::Open(inc.root / f.path);
    if (!text.ok() || text->LooksBinary()) continue;
    const auto file = static_cast<std::int32_t>(i);
    if (IsHealthFile(f.path)) {
      // A snapshot is tens of KB; a file far larger under such a name is read to the cap.
      std::string_view view = text->view().substr(text->LeadingHole());
      if (view.size() > kMaxHealthFileBytes) view = view.substr(0, view.rfind('\n', kMaxHealthFileBytes) + 1);
      ParseGpuHealthText(view, file, &out);
    } else {
      ScanDeviceLines(*text, file, &buffer, &out);
    }
  }
  return out;
}

const GpuHealth* NodeGpuHealth::ByPci(std::string_view pci) const {
  for (const GpuHealth& g : gpus) {
    if (!pci.empty() && g.pci == pci) return &g;
  }
  return nullptr;
}
const GpuHealth* NodeGpuHealth::ByIndex(std::int32_t index) const {
  for (const GpuHealth& g : gpus) {
    if (index >= 0 && g.index == index) return &g;
  }
  return nullptr;
}
const GpuHealth* NodeGpuHealth::ByUuid(std::string_view uuid) const {
  for (const GpuHealth& g : gpus) {
    if (!uuid.empty() && g.uuid == uuid) return &g;
  }
  return nullptr;
}

std::string HealthWhere(const Incident& inc, const HealthLine& l) {
  return l.file < 0 ? std::string("?") : inc.files[static_cast<std::size_t>(l.file)].path + ":" + std::to_string(l.span.line);
}

}  // namespace denpex::engine
