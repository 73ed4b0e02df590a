#include "parse/prefix.h"

#include <cstring>

#include "parse/event.h"
#include "parse/scan.h"
#include "parse/triggers.h"

namespace denpex::engine {
namespace {

bool IsHostChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_'; }

// `2025-07-03T14:20:51.565839352Z ` (container runtime), ` 2025-02-18 12:54 ` (collector, minute
// resolution), `  | 2024-11-28T07:42:11.525Z | ` (CloudWatch export).
bool Stamp(Scanner* s, LineOrigin* out) {
  Scanner t = *s;
  const bool table = t.Lit("  | ");
  if (!table) t.Char(' ');
  if (!IsDigit(t.Peek()) || t.Peek(4) != '-') return false;  // YYYY-: most digit-led prefixes are srun labels
  Scanner dt = t;
  TimeNs time;
  if (ScanDateTime(&dt, &time)) {
    t = dt;
  } else {  // minute resolution: YYYY-MM-DD hh:mm
    std::int64_t y, mo, d, h, mi;
    if (!t.Digits(4, 4, &y) || !t.Char('-') || !t.Digits(2, 2, &mo) || !t.Char('-') || !t.Digits(2, 2, &d) ||
        !t.Char(' ') || !t.Digits(2, 2, &h) || !t.Char(':') || !t.Digits(2, 2, &mi) || mo < 1 || mo > 12 ||
        d < 1 || d > 31 || h > 23 || mi > 59) {
      return false;
    }
    time = (DaysFromCivil(static_cast<int>(y), static_cast<int>(mo), static_cast<int>(d)) * 1440 + h * 60 + mi) *
           60 * kNsPerSec;
  }
  if (!(table ? t.Lit(" | ") : t.Char(' '))) return false;
  // A stamp that opens the program's own line (`2021-10-27T19:35:36 srun: ...`) is a header,
  // not a prefix; either way its time is the line's.
  out->time = time;
  out->timed = true;
  *s = t;
  return true;
}

// `13: ` / `  3: ` (srun --label pads to the widest task id).
bool SrunLabel(Scanner* s, LineOrigin* out) {
  Scanner t = *s;
  t.SkipSpaces();
  std::int64_t task;
  if (!t.Digits(1, 7, &task) || !t.Lit(": ")) return false;
  out->task = static_cast<std::int32_t>(task);
  *s = t;
  return true;
}

bool IsIpv4(std::string_view tok) {
  int dots = 0;
  for (char c : tok) {
    if (c == '.') {
      ++dots;
    } else if (!IsDigit(c)) {
      return false;
    }
  }
  return dots == 3;
}

// `gr064: `, `192.168.13.81: `: an IPv4 address always; a name only under the file's policy,
// and never a word that opens ordinary lines (`RuntimeError: `, `srun: `).
bool Host(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  Scanner t = *s;
  const std::string_view tok = t.Token(": []()");
  if (tok.empty() || tok.size() > 64 || !t.Lit(": ")) return false;
  for (char c : tok) {
    if (!IsHostChar(c)) return false;
  }
  if (!IsIpv4(tok)) {
    // A host name has a digit, a dash or a dot (`gr064`, `gpu-worker-1`); `NVRM: ` has none.
    const bool hostlike = tok.find_first_of("0123456789-.") != std::string_view::npos;
    if (!policy.hosts || !IsAlpha(tok[0]) || !hostlike) return false;
    static constexpr std::string_view kWords[] = {"srun", "slurmstepd", "slurmd", "kernel", "kern", "error", "warning",
                                                  "NCCL", "Traceback", "WARNING", "INFO", "ERROR", "DEBUG", "CRITICAL"};
    for (std::string_view w : kWords) {
      if (tok == w) return false;
    }
    if (tok.ends_with("Error") || tok.ends_with("Exception") || tok.ends_with("Warning")) return false;
  }
  out->host = tok;
  *s = t;
  return true;
}

// `[1,3]<stdout>:` / `[1,3]<stderr>:` (OpenMPI --tag-output; PRRTE adds a space).
bool MpiTag(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  Scanner t = *s;
  std::int64_t job, rank;
  if (!t.Char('[') || !t.Digits(1, 9, &job) || !t.Char(',') || !t.Digits(1, 9, &rank) || !t.Char(']') ||
      !(t.Lit("<stdout>:") || t.Lit("<stderr>:")) || rank > kMaxRank) {
    return false;
  }
  if (policy.mpi_tag_space) t.Char(' ');
  out->rank = static_cast<std::int32_t>(rank);
  *s = t;
  return true;
}

// `trainer/0 ` / `nemo.collections.llm.api.pretrain/0 ` before a `[..]:` tag (TorchX, NeMo-Run).
bool Role(Scanner* s) {
  Scanner t = *s;
  const std::string_view role = t.Token("/ []");
  std::int64_t replica;
  if (role.empty() || !IsAlpha(role[0]) || !t.Char('/') || !t.Digits(1, 6, &replica) || !t.Char(' ') ||
      t.Peek() != '[') {
    return false;
  }
  *s = t;
  return true;
}

// `[default3]:` (torchrun --tee / --log-line-prefix: role + local rank) and TorchX `[3]:`.
bool LocalTag(Scanner* s, LineOrigin* out) {
  Scanner t = *s;
  if (!t.Char('[')) return false;
  t.Token("0123456789]");
  std::int64_t local;
  if (!t.Digits(1, 5, &local) || !t.Lit("]:") || t.AtEnd()) return false;  // `[0]:` alone opens a table entry
  out->local_rank = static_cast<std::int32_t>(local);
  *s = t;
  return true;
}

// `(RayWorkerVllm pid=7046) `, `(raylet) `, and the coloured form `\x1b[36m(...)\x1b[0m `. A
// worker on another node than the driver's carries its address (`(RayTrainWorker pid=2428,
// ip=10.64.0.5) `): the line's host.
bool RayTag(Scanner* s, LineOrigin* out) {
  Scanner t = *s;
  if (t.Lit("\x1b[")) t.Token("m"), t.Char('m');
  if (!t.Char('(')) return false;
  const std::string_view inner = t.Token(")");
  if (inner.empty() || !t.Char(')') || !(inner.find("pid=") != std::string_view::npos || inner == "raylet")) {
    return false;
  }
  if (t.Lit("\x1b[")) t.Token("m"), t.Char('m');
  if (!t.Char(' ')) return false;
  if (const std::size_t ip = inner.find("ip="); ip != std::string_view::npos && out->host.empty()) {
    std::string_view addr = inner.substr(ip + 3);
    addr = addr.substr(0, addr.find_first_of(", "));
    if (IsIpv4(addr)) out->host = addr;
  }
  *s = t;
  return true;
}

}  // namespace

Match StripRankPrefix(std::string_view* line, std::int32_t* rank) {
  if (!line->starts_with("[rank")) return Match::kNo;
  Scanner s(line->substr(5));
  std::int64_t r;
  if (!s.Digits(1, 9, &r) || !s.Char(']') || !s.Char(':') || r > kMaxRank) return Match::kMalformed;
  *rank = static_cast<std::int32_t>(r);
  s.Char(' ');  // torch ≥ 2.3 prints Python lines as `[rank0]: Traceback ...`, C++ ones as `[rank0]:[E...`
  *line = s.Rest();
  return Match::kYes;
}

int StripPrefixes(std::string_view* line, const PrefixPolicy& policy, LineOrigin* out) {
  constexpr int kMaxPrefixes = 8;
  int n = 0;
  for (; n < kMaxPrefixes && !line->empty(); ++n) {
    Scanner s(*line);
    const char c = line->front();
    bool stripped = false;
    if (c == '[') {
      if (line->starts_with("[rank")) {
        const Match m = StripRankPrefix(line, &out->rank);
        out->malformed |= m == Match::kMalformed;
        if (m != Match::kYes) break;
        continue;
      }
      stripped = MpiTag(&s, policy, out) || (line->size() > 2 && !IsSeverity((*line)[1]) && LocalTag(&s, out));
    } else if (IsDigit(c) || c == ' ') {
      stripped = (!out->timed && Stamp(&s, out)) || (out->task < 0 && SrunLabel(&s, out)) ||
                 (out->host.empty() && IsDigit(c) && Host(&s, policy, out));
    } else if (c == '(' || c == '\x1b') {
      stripped = RayTag(&s, out);
    } else if (IsAlpha(c)) {
      stripped = (out->host.empty() && Host(&s, policy, out)) || Role(&s);
    }
    if (!stripped) break;
    *line = s.Rest();
  }
  return n;
}

namespace {

// Whether the file's OpenMPI tags are followed by a space (PRRTE) on most of the first tagged
// lines. The tags may start far into the file (mpirun --report-bindings prints a line per rank
// first), so the first one is looked for in the first kTagProbeBytes.
bool MpiTagsSpaced(std::string_view text) {
  constexpr std::size_t kTagProbeBytes = 32 << 20;
  constexpr int kSample = 64, kMaxLines = 4096;
  constexpr std::string_view kTag = "]<std";
  const void* hit = memmem(text.data(), std::min(text.size(), kTagProbeBytes), kTag.data(), kTag.size());
  if (hit == nullptr) return false;
  const std::size_t first = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
  const std::size_t line_start = text.rfind('\n', first);
  std::string_view rest = text.substr(line_start == std::string_view::npos ? 0 : line_start + 1);
  int tagged = 0, spaced = 0;
  for (int lines = 0; lines < kMaxLines && tagged < kSample && !rest.empty(); ++lines) {
    const std::size_t nl = rest.find('\n');
    Scanner s(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    LineOrigin o;
    if (!MpiTag(&s, PrefixPolicy{}, &o)) continue;
    ++tagged;
    spaced += s.Peek() == ' ' ? 1 : 0;
  }
  return tagged > 0 && spaced * 4 >= tagged * 3;
}

}  // namespace

PrefixPolicy SniffPrefixes(std::string_view text) {
  const bool mpi_tag_space = MpiTagsSpaced(text);
  constexpr int kSample = 64;
  int lines = 0, hosted = 0, labelled = 0;
  PrefixPolicy probe{.hosts = true};
  while (!text.empty() && lines < kSample) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    ++lines;
    LineOrigin o;
    Scanner s(line);
    labelled += SrunLabel(&s, &o) ? 1 : 0;
    o = LineOrigin{};
    StripPrefixes(&line, probe, &o);
    hosted += o.host.empty() ? 0 : 1;
  }
  return {.hosts = lines > 0 && hosted * 4 >= lines * 3,
          .srun_labels = lines > 0 && labelled * 2 >= lines,
          .mpi_tag_space = mpi_tag_space};
}

// Prefixes whose content the parser keeps for its file (triggers.h): the ranks of `[rank<G>]:`
// and OpenMPI tags, and whether torchrun's `[default<L>]:` tags are used.
namespace {
constexpr Trigger kPrefixTriggers[] = {
    {"[rank", TriggerLevel::kPrefix},       // torch `[rank<G>]:` (also a broken one: counted as malformed)
    {"]<stdout>:", TriggerLevel::kPrefix},  // OpenMPI `[<job>,<rank>]<stdout>:`
    {"]<stderr>:", TriggerLevel::kPrefix},
    {"]:", TriggerLevel::kPrefix},          // torchrun `[default<L>]:`, TorchX `[<L>]:`
};
}  // namespace
std::span<const Trigger> PrefixTriggers() { return kPrefixTriggers; }

}  // namespace denpex::engine
