#include "preflight/tool_outputs.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "denpex/common/json_reader.h"

namespace denpex::engine::preflight {
namespace {

// ---- Text helpers shared by the line-based parsers ----

// Calls `f(line, number)` for each line of `text`, without its newline or a trailing '\r';
// numbers are 1-based so a finding can cite them.
template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  std::size_t at = 0;
  for (std::int32_t n = 1; at < text.size(); ++n) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, n);
    at = end + 1;
  }
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The words of `s` split on spaces and tabs (empty cells vanish: the tools pad with either).
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// The value after `key` when the trimmed line starts with it ("State:" -> "Active").
std::optional<std::string_view> After(std::string_view line, std::string_view key) {
  if (!line.starts_with(key)) return std::nullopt;
  return Trim(line.substr(key.size()));
}

template <typename T>
std::optional<T> Number(std::string_view s) {
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// nvidia-smi underlines its header with ANSI escapes when it writes to a terminal, and a
// captured session keeps them; CSI sequences (ESC '[' ... final byte) are dropped.
std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !(s[i] >= '@' && s[i] <= '~')) ++i;
    }
  }
  return out;
}

// ---- ibstat ----

// `CA 'mlx5_0'` -> mlx5_0.
std::optional<std::string_view> CaName(std::string_view t) {
  if (!t.starts_with("CA '") || t.size() < 5 || t.back() != '\'') return std::nullopt;
  return t.substr(4, t.size() - 5);
}

// `Port 1:` -> 1.
std::optional<std::int32_t> PortNumber(std::string_view t) {
  if (!t.starts_with("Port ") || !t.ends_with(':')) return std::nullopt;
  return Number<std::int32_t>(t.substr(5, t.size() - 6));
}

// One line inside a `Port N:` block; the block's other fields (lids, GUIDs) are not judged.
void ReadPortField(std::string_view t, std::int32_t n, IbPort* p) {
  if (auto v = After(t, "State:")) {
    p->state = std::string(*v);
    p->line = n;
  } else if (auto ps = After(t, "Physical state:")) {
    p->physical_state = std::string(*ps);
  } else if (auto r = After(t, "Rate:")) {
    // `Rate: 400`; some builds print a unit after the number.
    const std::vector<std::string_view> w = Words(*r);
    if (!w.empty()) p->rate_gbps = Number<double>(w[0]).value_or(0);
    p->rate_line = n;
  } else if (auto l = After(t, "Link layer:")) {
    p->link_layer = std::string(*l);
  }
}

// ---- ibv_devinfo ----

// rdma-core's words for a port (`PORT_ACTIVE (4)`, `LINK_UP (5)`) as ibstat's (`Active`,
// `LinkUp`), so that the two tools' ports are judged alike.
std::string IbstatWord(std::string_view v) {
  v = v.substr(0, v.find(' '));
  static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
      {"PORT_ACTIVE", "Active"},
      {"PORT_DOWN", "Down"},
      {"PORT_INIT", "Initializing"},
      {"PORT_ARMED", "Armed"},
      {"LINK_UP", "LinkUp"},
      {"POLLING", "Polling"},
      {"DISABLED", "Disabled"},
      {"SLEEP", "Sleep"},
      {"LINK_ERROR_RECOVERY", "LinkErrorRecovery"}};
  for (const auto& [from, to] : kWords) {
    if (v == from) return std::string(to);
  }
  return std::string(v);
}

// ---- nvidia-smi topo -m ----

// Header words that are not devices; "CPU Affinity" and the others span several words.
enum class Extra { kNone, kCpuAffinity, kNumaAffinity, kGpuNumaId };

struct HeaderWord {
  std::string_view text;
  Extra extra = Extra::kNone;
};

// The header's words with its multi-word column names joined (`CPU Affinity` is two words
// when the header is padded with spaces, one cell when it is tab-separated).
std::vector<HeaderWord> HeaderWords(const std::vector<std::string_view>& w) {
  static constexpr std::array<std::pair<std::array<std::string_view, 3>, Extra>, 3> kNames = {{
      {{"CPU", "Affinity", ""}, Extra::kCpuAffinity},
      {{"NUMA", "Affinity", ""}, Extra::kNumaAffinity},
      {{"GPU", "NUMA", "ID"}, Extra::kGpuNumaId},
  }};
  std::vector<HeaderWord> out;
  for (std::size_t i = 0; i < w.size();) {
    bool joined = false;
    for (const auto& [parts, extra] : kNames) {
      const std::size_t len = parts[2].empty() ? 2 : 3;
      if (i + len > w.size()) continue;
      bool match = true;
      for (std::size_t k = 0; k < len && match; ++k) match = w[i + k] == parts[k];
      if (!match) continue;
      out.push_back({w[i], extra});
      i += len;
      joined = true;
      break;
    }
    if (!joined) out.push_back({w[i++], Extra::kNone});
  }
  return out;
}

// A device name as the header prints it: GPU0, NIC3, mlx5_0, mlx5_bond_0.
bool IsDeviceName(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return IsDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

// The matrix header: its first word is GPU0, then device names, then the affinity columns.
bool ReadTopoHeader(std::string_view line, TopoMatrix* m, std::vector<Extra>* extras) {
  const std::vector<HeaderWord> words = HeaderWords(Words(line));
  if (words.empty() || words[0].text != "GPU0") return false;
  std::vector<std::string> columns;
  std::vector<Extra> tail;
  for (const HeaderWord& w : words) {
    if (w.extra != Extra::kNone) {
      tail.push_back(w.extra);
    } else if (tail.empty() && IsDeviceName(w.text)) {
      columns.emplace_back(w.text);
    } else {
      return false;  // a device after the affinity columns, or not a device name
    }
  }
  m->columns = std::move(columns);
  *extras = std::move(tail);
  return true;
}

bool IsColumn(const TopoMatrix& m, std::string_view name) {
  return std::find(m.columns.begin(), m.columns.end(), name) != m.columns.end();
}

// A matrix row: the device, one cell per column, then the affinity cells the header named (NIC
// rows print none). A row cut short is dropped: its cells could not be told apart.
std::optional<TopoMatrix::Row> ReadTopoRow(std::string_view line, std::int32_t n,
                                           const TopoMatrix& m, const std::vector<Extra>& extras) {
  const std::vector<std::string_view> w = Words(line);
  if (w.empty() || !IsColumn(m, w[0]) || w.size() < 1 + m.columns.size()) return std::nullopt;
  TopoMatrix::Row row;
  row.device = std::string(w[0]);
  row.line = n;
  for (std::size_t i = 0; i < m.columns.size(); ++i) row.cells.emplace_back(w[1 + i]);
  for (std::size_t i = 0; i < extras.size() && 1 + m.columns.size() + i < w.size(); ++i) {
    const std::string_view v = w[1 + m.columns.size() + i];
    if (extras[i] == Extra::kCpuAffinity) row.cpu_affinity = std::string(v);
    if (extras[i] == Extra::kNumaAffinity) row.numa_affinity = std::string(v);
  }
  return row;
}

// `  NIC0: mlx5_0` in the NIC legend.
std::optional<std::pair<std::string, std::string>> ReadNicLegend(std::string_view t) {
  const std::size_t colon = t.find(':');
  if (!t.starts_with("NIC") || colon == std::string_view::npos) return std::nullopt;
  const std::string_view nic = t.substr(0, colon);
  const std::string_view name = Trim(t.substr(colon + 1));
  if (!IsDeviceName(nic) || name.empty()) return std::nullopt;
  return std::pair{std::string(nic), std::string(name)};
}

// ---- dcgmi diag -j ----

// DCGM writes `Pass`, but its own comments promise `PASS|FAIL|WARN|SKIPPED`; callers compare
// against one spelling.
std::string NormalStatus(std::string_view s) {
  std::string lower;
  for (char c : s) lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  if (lower == "pass") return "Pass";
  if (lower == "fail") return "Fail";
  if (lower == "warn" || lower == "warning") return "Warn";
  if (lower == "skip" || lower == "skipped") return "Skip";
  return std::string(s);
}

// `gpu_ids`/`gpu_id`: a number, a string holding one id, or (deployment tests, DCGM 3.x) a CSV
// string of every GPU, which is a test of the whole node.
std::int32_t ReadGpuIds(JsonReader& r) {
  if (r.Peek() == '"') {
    const std::optional<std::string> s = r.String();
    if (!s) return -1;
    return Number<std::int32_t>(Trim(*s)).value_or(-1);
  }
  const std::optional<std::string_view> t = r.Token();
  return t ? Number<std::int32_t>(*t).value_or(-1) : -1;
}

void Append(std::string* out, std::string_view words) {
  if (words.empty()) return;
  if (!out->empty()) *out += " | ";
  *out += words;
}

// `warnings`: strings (DCGM 2.x) or `{"warning": ..., "error_id": N}` (3.x, 4.x). The error id
// is DCGM's DCGM_FR_* number, kept so a finding can name the failure class.
void ReadWarnings(JsonReader& r, std::string* out) {
  if (!r.BeginArray()) return;
  while (r.NextElement()) {
    if (r.Peek() == '"') {
      if (auto s = r.String()) Append(out, *s);
      continue;
    }
    if (r.Peek() != '{' || !r.BeginObject()) {
      r.Skip();
      continue;
    }
    std::string text;
    std::string id;
    while (auto key = r.NextKey()) {
      if (*key == "warning" && r.Peek() == '"') {
        text = r.String().value_or("");
      } else if (*key == "error_id" && r.Peek() != '"') {
        id = std::string(r.Token().value_or(""));
      } else {
        r.Skip();
      }
    }
    if (!id.empty()) text.append(" (DCGM_FR ").append(id).append(")");
    Append(out, text);
  }
}

// `info`: one string (DCGM 2.x) or an array of them.
void ReadInfo(JsonReader& r, std::string* out) {
  if (r.Peek() == '"') {
    if (auto s = r.String()) Append(out, *s);
    return;
  }
  if (!r.BeginArray()) return;
  while (r.NextElement()) {
    if (r.Peek() != '"') {
      r.Skip();
    } else if (auto s = r.String()) {
      Append(out, *s);
    }
  }
}

// One entry of a test's `results`: 3.x names the GPU by `gpu_ids`, 4.x by `entity_group` and
// `entity_id`. Warnings are the failure's words; info is kept only where there is no warning.
void ReadResult(JsonReader& r, const std::string& test, DcgmDiag* out) {
  DcgmTest t;
  t.name = test;
  std::string warnings;
  std::string info;
  bool gpu_entity = true;
  if (!r.BeginObject()) return;
  while (auto key = r.NextKey()) {
    if (*key == "gpu_ids" || *key == "gpu_id") {
      t.gpu = ReadGpuIds(r);
    } else if (*key == "entity_id" && r.Peek() != '"') {
      t.gpu = Number<std::int32_t>(r.Token().value_or("")).value_or(-1);
    } else if (*key == "entity_group" && r.Peek() == '"') {
      gpu_entity = r.String().value_or("") == "GPU";
    } else if (*key == "status" && r.Peek() == '"') {
      t.result = NormalStatus(r.String().value_or(""));
    } else if (*key == "warnings" && r.Peek() == '[') {
      ReadWarnings(r, &warnings);
    } else if (*key == "info") {
      ReadInfo(r, &info);
    } else {
      r.Skip();
    }
  }
  if (!gpu_entity) t.gpu = -1;  // a CPU or switch entity: not one of the node's GPUs
  t.info = warnings.empty() ? std::move(info) : std::move(warnings);
  if (!t.result.empty()) out->tests.push_back(std::move(t));
}

void ReadTest(JsonReader& r, DcgmDiag* out) {
  if (!r.BeginObject()) return;
  const std::size_t first = out->tests.size();
  std::string name;
  while (auto key = r.NextKey()) {
    if (*key == "name" && r.Peek() == '"') {
      name = r.String().value_or("");
    } else if (*key == "results" && r.Peek() == '[') {
      r.BeginArray();
      while (r.NextElement()) ReadResult(r, name, out);
    } else {
      r.Skip();
    }
  }
  // jsoncpp sorts keys, so `name` comes first in DCGM's output; another writer's order is
  // mended here.
  for (std::size_t i = first; i < out->tests.size(); ++i) {
    if (out->tests[i].name.empty()) out->tests[i].name = name;
  }
}

void ReadCategory(JsonReader& r, DcgmDiag* out) {
  if (!r.BeginObject()) return;
  while (auto key = r.NextKey()) {
    if (*key == "tests" && r.Peek() == '[') {
      r.BeginArray();
      while (r.NextElement()) ReadTest(r, out);
    } else {
      r.Skip();
    }
  }
}

// `DCGM GPU Diagnostic` (2.x, 3.x) or `DCGM Diagnostic` (4.x).
void ReadDiagnostic(JsonReader& r, DcgmDiag* out) {
  if (!r.BeginObject()) return;
  while (auto key = r.NextKey()) {
    if (*key == "test_categories" && r.Peek() == '[') {
      r.BeginArray();
      while (r.NextElement()) ReadCategory(r, out);
    } else if (*key == "Driver Version Detected" && r.Peek() == '"') {
      out->driver_version = r.String().value_or("");
    } else if (*key == "version" && r.Peek() == '"') {
      out->dcgm_version = r.String().value_or("");
    } else if (*key == "runtime_error" && r.Peek() == '"') {
      out->runtime_error = r.String().value_or("");
    } else {
      r.Skip();
    }
  }
}

// 4.x moved the driver and DCGM versions to `metadata`.
void ReadMetadata(JsonReader& r, DcgmDiag* out) {
  if (!r.BeginObject()) return;
  while (auto key = r.NextKey()) {
    if (*key == "Driver Version Detected" && r.Peek() == '"') {
      out->driver_version = r.String().value_or("");
    } else if (*key == "version" && r.Peek() == '"') {
      out->dcgm_version = r.String().value_or("");
    } else {
      r.Skip();
    }
  }
}

// ---- nccl-tests ----

// A launcher's per-line label: `0: ` (srun --label, right-aligned) or `[1,0]<stdout>:`
// (mpirun --tag-output). Data rows start with digits too, so only a colon right after them
// makes a label.
std::string_view PeelLabel(std::string_view line) {
  if (line.starts_with('[')) {
    const std::size_t tag = line.find(">:");
    if (tag != std::string_view::npos && line.substr(0, tag).find("]<") != std::string_view::npos) {
      return line.substr(tag + 2);
    }
    return line;
  }
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < line.size() && IsDigit(line[i])) ++i;
  if (i == digits || i >= line.size() || line[i] != ':') return line;
  if (i + 1 < line.size() && line[i + 1] != ' ') return line;
  return line.substr(std::min(line.size(), i + 2));
}

// Where each table column's value goes; the header names them, and versions differ (`#wrong`
// or `error`, with or without `redop` and `root`).
enum class Col { kOther, kSize, kCount, kType, kTime, kAlgbw, kBusbw, kWrong };

Col ColumnOf(std::string_view name) {
  if (name == "size") return Col::kSize;
  if (name == "count") return Col::kCount;
  if (name == "type") return Col::kType;
  if (name == "time") return Col::kTime;
  if (name == "algbw") return Col::kAlgbw;
  if (name == "busbw") return Col::kBusbw;
  if (name == "#wrong" || name == "error") return Col::kWrong;
  return Col::kOther;  // `redop`, `root`
}

// The table header: `#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ...`.
std::optional<std::vector<Col>> ReadColumns(std::string_view body) {
  std::vector<Col> cols;
  for (std::string_view w : Words(body)) cols.push_back(ColumnOf(w));
  const auto has = [&](Col c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
  if (!has(Col::kSize) || !has(Col::kCount) || !has(Col::kBusbw)) return std::nullopt;
  return cols;
}

// `#wrong` is a count or `N/A`; -1 stands for N/A.
std::int64_t WrongValue(std::string_view s) { return Number<std::int64_t>(s).value_or(-1); }

// A data row under the header; the first of each repeated column is out-of-place, the second
// in-place. Rows of another shape (NCCL's log lines, a cut row) are not the table's.
std::optional<NcclTestsRow> ReadRow(std::string_view line, std::int32_t n,
                                    const std::vector<Col>& cols) {
  const std::vector<std::string_view> w = Words(line);
  if (w.size() != cols.size() || w.empty() || !IsDigit(w[0].front())) return std::nullopt;
  NcclTestsRow row;
  row.line = n;
  int times = 0, algbws = 0, busbws = 0, wrongs = 0;
  std::int64_t wrong_oop = -1, wrong_ip = -1;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double v = Number<double>(w[i]).value_or(0);  // `N/A` reads 0, as nccl-tests means it
    switch (cols[i]) {
      case Col::kSize: {
        const auto b = Number<std::uint64_t>(w[i]);
        if (!b) return std::nullopt;
        row.bytes = *b;
        break;
      }
      case Col::kCount:
        row.count = Number<std::uint64_t>(w[i]).value_or(0);
        break;
      case Col::kType:
        row.type = std::string(w[i]);
        break;
      case Col::kTime:
        (times++ == 0 ? row.oop_time_us : row.ip_time_us) = v;
        break;
      case Col::kAlgbw:
        (algbws++ == 0 ? row.oop_algbw : row.ip_algbw) = v;
        break;
      case Col::kBusbw:
        (busbws++ == 0 ? row.oop_busbw : row.ip_busbw) = v;
        break;
      case Col::kWrong:
        (wrongs++ == 0 ? wrong_oop : wrong_ip) = WrongValue(w[i]);
        break;
      case Col::kOther:
        break;
    }
  }
  row.wrong = std::max(wrong_oop, wrong_ip);
  return row;
}

// `#  Rank  0 Group  0 Pid  12345 on   host-01 device  0 [0x1b] ...` (older: no `Group`).
void ReadRankLine(const std::vector<std::string_view>& w, NcclTestsRun* run) {
  if (w.size() < 2 || w[0] != "Rank") return;
  const std::optional<std::size_t> rank = Number<std::size_t>(w[1]);
  const auto on = std::find(w.begin(), w.end(), "on");
  if (!rank || on == w.end() || on + 1 == w.end() || *rank > 1u << 20) return;
  if (run->hosts.size() <= *rank) run->hosts.resize(*rank + 1);
  run->hosts[*rank] = std::string(*(on + 1));
}

// `all_reduce_perf`, `all_gather_perf_mpi` -> the collective's name, for the tests nccl-tests
// ships; other words ending in `_perf` are not taken for one.
std::optional<std::string_view> TestOfBinary(std::string_view word) {
  static constexpr std::array<std::string_view, 10> kTests = {
      "all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce",
      "alltoall",   "scatter",    "gather",    "sendrecv",       "hypercube"};
  const std::size_t slash = word.rfind('/');
  if (slash != std::string_view::npos) word.remove_prefix(slash + 1);
  if (word.ends_with("_mpi")) word.remove_suffix(4);
  if (!word.ends_with("_perf")) return std::nullopt;
  word.remove_suffix(5);
  for (std::string_view t : kTests) {
    if (word == t) return t;
  }
  return std::nullopt;
}

// Reads the lines of one text in order; a run starts at its `# nThread` line, its `# Collective
// test starting:` line or (cut captures) its table header.
class NcclTestsReader {
 public:
  void Line(std::string_view raw, std::int32_t n) {
    const std::string_view t = Trim(PeelLabel(raw));
    if (t.starts_with('#')) {
      Comment(Trim(t.substr(1)), n);
      return;
    }
    if (!cur_.columns.empty()) {
      if (auto row = ReadRow(t, n, cur_.columns)) {
        cur_.run.rows.push_back(std::move(*row));
        return;
      }
    }
    NoteBinary(t);  // the command line, echoed by a script or pasted with the output
  }

  std::vector<NcclTestsRun> Finish() {
    Close();
    return std::move(runs_);
  }

 private:
  struct State {
    NcclTestsRun run;
    std::vector<Col> columns;  // empty until the table's header is read
    bool started = false;      // `# nThread`, `# Collective test starting` or a header seen
    bool saw_nthread = false;
    bool named = false;  // by `# Collective test starting:`, which the binary itself prints
  };

  bool HasTable() const { return !cur_.columns.empty() || !cur_.run.rows.empty(); }

  void Comment(std::string_view body, std::int32_t n) {
    if (auto name = After(body, "Collective test starting:")) {
      if (HasTable()) Close();
      cur_.started = true;
      cur_.named = true;
      cur_.run.test = std::string(TestOfBinary(*name).value_or(*name));
    } else if (body.starts_with("nThread")) {
      if (HasTable() || cur_.saw_nthread) Close();
      cur_.started = true;
      cur_.saw_nthread = true;
    } else if (auto avg = After(body, "Avg bus bandwidth")) {
      if (!avg->starts_with(':')) return;
      cur_.run.avg_busbw = Number<double>(Trim(avg->substr(1))).value_or(-1);
      cur_.run.avg_line = n;
    } else if (auto oob = After(body, "Out of bounds values")) {
      const std::vector<std::string_view> w = Words(*oob);  // `: 0 OK` or `: 3 FAILED`
      cur_.run.out_of_bounds = std::find(w.begin(), w.end(), "FAILED") != w.end() ||
                               (w.size() > 1 && Number<std::int64_t>(w[1]).value_or(0) > 0);
    } else if (auto cols = ReadColumns(body)) {
      if (!cur_.run.rows.empty()) Close();  // a second table without its own `# nThread`
      cur_.columns = std::move(*cols);
      cur_.started = true;
    } else {
      ReadRankLine(Words(body), &cur_.run);
    }
  }

  // `.../all_reduce_perf -b 8 ...` names the run it precedes: this one when its table has not
  // begun (and the binary did not name it), else the next.
  void NoteBinary(std::string_view line) {
    for (std::string_view w : Words(line)) {
      const std::optional<std::string_view> test = TestOfBinary(w);
      if (!test) continue;
      if (HasTable() || cur_.saw_nthread || cur_.named) {
        next_test_ = std::string(*test);
      } else {
        cur_.run.test = std::string(*test);
      }
    }
  }

  // A run counts once it started; rank lines or a command line alone do not make a text
  // nccl-tests output.
  void Close() {
    if (cur_.started) runs_.push_back(std::move(cur_.run));
    cur_ = State{};
    cur_.run.test = std::exchange(next_test_, std::string());
  }

  State cur_;
  std::string next_test_;
  std::vector<NcclTestsRun> runs_;
};

}  // namespace

std::vector<IbPort> ParseIbstat(std::string_view text) {
  std::vector<IbPort> ports;
  std::string ca;
  bool in_port = false;
  ForEachLine(text, [&](std::string_view line, std::int32_t n) {
    const std::string_view t = Trim(line);
    if (auto name = CaName(t)) {
      ca = std::string(*name);
      in_port = false;
    } else if (auto port = PortNumber(t); port && !ca.empty()) {
      ports.push_back(IbPort{.ca = ca, .port = *port});
      in_port = true;
    } else if (in_port) {
      ReadPortField(t, n, &ports.back());
    }
  });
  return ports;
}

std::vector<IbPort> ParseIbvDevinfo(std::string_view text) {
  std::vector<IbPort> ports;
  std::string ca;
  double width = 0;  // -v's active_width (`4X (2)`), read before active_speed
  ForEachLine(text, [&](std::string_view line, std::int32_t n) {
    const std::string_view t = Trim(line);
    if (auto id = After(t, "hca_id:")) {
      ca = std::string(Trim(*id));
    } else if (auto port = After(t, "port:"); port && !ca.empty()) {
      if (auto number = Number<std::int32_t>(Trim(*port)))
        ports.push_back(IbPort{.ca = ca, .port = *number});
      width = 0;
    } else if (ports.empty() || ports.back().ca != ca) {
      return;
    } else if (auto state = After(t, "state:")) {
      ports.back().state = IbstatWord(Trim(*state));
      ports.back().line = n;
    } else if (auto phys = After(t, "phys_state:")) {
      ports.back().physical_state = IbstatWord(Trim(*phys));
    } else if (auto w = After(t, "active_width:")) {
      const std::string_view x = Trim(*w);
      width = Number<double>(x.substr(0, x.find('X'))).value_or(0);
    } else if (auto speed = After(t, "active_speed:")) {  // `100.0 Gbps (128)`: a lane's
      const std::vector<std::string_view> words = Words(*speed);
      if (!words.empty() && width > 0)
        ports.back().rate_gbps = width * Number<double>(words[0]).value_or(0);
      ports.back().rate_line = n;
    } else if (auto layer = After(t, "link_layer:")) {
      ports.back().link_layer = std::string(Trim(*layer));
    }
  });
  return ports;
}

std::int32_t NvLinkCount(std::string_view cell) {
  // A bonded set is a handful of links (NV18 on H100 and B200); a number past 255 or a sign
  // (`NV-1`) is not a count.
  if (!cell.starts_with("NV")) return 0;
  return Number<std::uint8_t>(cell.substr(2)).value_or(0);
}

std::int32_t TopoMatrix::NvLinks(const Row& gpu) const {
  std::int64_t links = 0;  // far from overflow: each cell is at most 255
  for (std::size_t i = 0; i < gpu.cells.size() && i < columns.size(); ++i) {
    if (columns[i].starts_with("GPU")) links += NvLinkCount(gpu.cells[i]);
  }
  return static_cast<std::int32_t>(std::min<std::int64_t>(links, INT32_MAX));
}

std::optional<TopoMatrix> ParseTopoMatrix(std::string_view text) {
  TopoMatrix m;
  std::vector<Extra> extras;
  enum class Part { kBefore, kMatrix, kLegend, kNicLegend } part = Part::kBefore;
  ForEachLine(text, [&](std::string_view raw, std::int32_t n) {
    const std::string clean =
        raw.find('\x1b') == std::string_view::npos ? std::string(raw) : StripAnsi(raw);
    const std::string_view t = Trim(clean);
    if (part == Part::kBefore) {
      if (ReadTopoHeader(t, &m, &extras)) part = Part::kMatrix;
    } else if (t == "Legend:") {
      part = Part::kLegend;
    } else if (t == "NIC Legend:") {
      part = Part::kNicLegend;
    } else if (part == Part::kMatrix) {
      if (auto row = ReadTopoRow(t, n, m, extras)) m.rows.push_back(std::move(*row));
    } else if (part == Part::kNicLegend) {
      if (auto nic = ReadNicLegend(t)) m.nic_names.push_back(std::move(*nic));
    }
  });
  if (m.rows.empty()) return std::nullopt;
  return m;
}

std::optional<DcgmDiag> ParseDcgmDiagJson(std::string_view text) {
  // dcgmi and the scripts around it may print a line before the document ("Successfully ran
  // diagnostic for group."); DCGM's own tests cut the text to its outer braces the same way.
  const std::size_t open = text.find('{');
  if (open == std::string_view::npos) return std::nullopt;
  JsonReader r(text.substr(open));
  if (!r.BeginObject()) return std::nullopt;
  DcgmDiag diag;
  bool found = false;
  while (auto key = r.NextKey()) {
    if (*key == "DCGM GPU Diagnostic" || *key == "DCGM Diagnostic") {
      found = true;
      ReadDiagnostic(r, &diag);
    } else if (*key == "metadata") {
      ReadMetadata(r, &diag);
    } else {
      r.Skip();
    }
  }
  // A cut document keeps what was read before the cut.
  if (!found) return std::nullopt;
  return diag;
}

std::vector<NcclTestsRun> ParseNcclTests(std::string_view text) {
  NcclTestsReader reader;
  ForEachLine(text, [&](std::string_view line, std::int32_t n) { reader.Line(line, n); });
  return reader.Finish();
}

}  // namespace denpex::engine::preflight
