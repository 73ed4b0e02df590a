#include "parse/prefix.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "parse/event.h"
#include "parse/headers.h"
#include "parse/lines.h"
#include "parse/parse_log.h"
#include "parse/scan.h"
#include "parse/triggers.h"

namespace denpex::engine {
namespace {

bool IsHostChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_'; }

// `stdout F ` / `stderr P ` (CRI) after a container stamp; a bare `F` ends an empty line.
bool StreamTag(Scanner* s, LineOrigin* out) {
  Scanner t = *s;
  char stream = 0;
  if (t.Lit("stdout ")) {
    stream = 'o';
  } else if (t.Lit("stderr ")) {
    stream = 'e';
  } else {
    return false;
  }
  const char tag = t.Peek();
  if (tag != 'F' && tag != 'P') return false;
  t.Skip(1);
  if (!t.Char(' ') && !t.AtEnd()) return false;
  out->stream = stream;
  out->partial = tag == 'P';
  *s = t;
  return true;
}

// `gpu-node-1 torchrun[4127]: ` after a journal stamp: the line's host and process. A unit
// without `[pid]` (`host sshd: `) only under the file's journal policy; `host kernel: ` is left
// to the kernel header (headers.cc), which reads the kernel's own stamps after it.
bool HostUnit(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  Scanner t = *s;
  const std::string_view host = t.Token(" :[]()");
  if (host.empty() || host.size() > 64 || !t.Char(' ')) return false;
  for (char c : host) {
    if (!IsHostChar(c)) return false;
  }
  const std::string_view unit = t.Token(" :[");
  if (unit.empty() || unit.size() > 64 || !IsAlpha(unit[0]) || unit == "kernel") return false;
  for (char c : unit) {
    if (!IsHostChar(c) && c != '@' && c != '/') return false;
  }
  std::int64_t pid = 0;
  if (t.Char('[')) {
    if (!t.Digits(1, 10, &pid) || !t.Char(']')) return false;
  } else if (!policy.journal) {
    return false;
  }
  if (!t.Lit(": ") && !(t.Char(':') && t.AtEnd())) return false;
  out->journal_host = host;
  out->pid = pid;
  out->journal = true;
  *s = t;
  return true;
}

// `Nov 29 16:25:31 host unit[pid]: ` (journalctl -o short, rsyslog), `Nov 29 16:25:31.123456 `
// (-o short-precise): no year. A localised month (`kwi`) only under the journal policy, and
// then without a time.
bool SyslogStamp(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  Scanner t = *s;
  const int month = MonthOf(t.Rest().substr(0, 3));
  if (month == 0 && !policy.journal) return false;
  t.Skip(3);
  std::int64_t day;
  TimeNs tod;
  if (!t.Char(' ')) return false;
  t.Char(' ');  // `Nov  9`
  if (!t.Digits(1, 2, &day) || !t.Char(' ') || !ScanTimeOfDay(&t, &tod) || !t.Char(' ')) return false;
  LineOrigin o = *out;
  if (!HostUnit(&t, policy, &o)) return false;
  if (month != 0 && YearlessTime(month, day, tod, &o.yearless_time)) o.yearless = true;
  o.collected = true;  // the journal's, or syslog's on receipt
  *out = o;
  *s = t;
  return true;
}

// `2025-07-03T14:20:51.565839352Z ` (container runtime; CRI adds `stdout F `), ` 2025-02-18 12:54 `
// (collector, minute resolution), `  | 2024-11-28T07:42:11.525Z | ` (CloudWatch export),
// `2026-11-29T16:25:31+0000 host unit[pid]: ` (journalctl -o short-iso).
bool Stamp(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  Scanner t = *s;
  const bool table = t.Lit("  | ");
  if (!table) t.Char(' ');
  if (!IsDigit(t.Peek()) || t.Peek(4) != '-') return false;  // YYYY-: most digit-led prefixes are srun labels
  Scanner dt = t;
  TimeNs time;
  bool coarse = true;
  bool collected = table;  // a CloudWatch export's column
  if (ScanDateTime(&dt, &time)) {
    const std::string_view stamp = t.Rest().substr(0, dt.pos() - t.pos());
    coarse = !(stamp.size() > 20 && (stamp[19] == '.' || stamp[19] == ','));
    // nanoseconds in UTC (`.565839352Z`): a container runtime's or kubectl's, not a program's
    collected = collected || (stamp.size() >= 30 && stamp.back() == 'Z');
    t = dt;
  } else {  // minute resolution: YYYY-MM-DD hh:mm (a collector's)
    collected = true;
    std::int64_t y, mo, d, h, mi;
    if (!t.Digits(4, 4, &y) || !t.Char('-') || !t.Digits(2, 2, &mo) || !t.Char('-') ||
        !t.Digits(2, 2, &d) || !t.Char(' ') || !t.Digits(2, 2, &h) || !t.Char(':') ||
        !t.Digits(2, 2, &mi) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
        y < kMinYear || y > kMaxYear) {
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
  out->coarse = coarse;
  if (!table && !StreamTag(&t, out) && IsAlpha(t.Peek())) HostUnit(&t, policy, out);
  out->collected = collected || out->stream != 0 || out->journal;
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
  // Slurm 23+ tags slurmstepd's lines with its node: `slurmstepd-<node>: error: ...`.
  if (tok.starts_with("slurmstepd-") && tok.size() > 11) {
    out->host = tok.substr(11);
    *s = t;
    return true;
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

// `[1,3]<stdout>:` / `[1,3]<stderr>:` (OpenMPI --tag-output; PRRTE adds a space), also with the
// rank's host, `[1,mpirank:3,algo-1]<stdout>:` (SageMaker's mpirun: the rank and its host).
bool MpiTag(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  Scanner t = *s;
  std::int64_t job, rank;
  if (!t.Char('[') || !t.Digits(1, 9, &job) || !t.Char(',')) return false;
  std::string_view host;
  if (t.Lit("mpirank:")) {
    if (!t.Digits(1, 9, &rank) || !t.Char(',')) return false;
    host = t.Token("]");
    if (host.empty() || host.size() > 64 || !std::all_of(host.begin(), host.end(), IsHostChar))
      return false;
  } else if (!t.Digits(1, 9, &rank)) {
    return false;
  }
  if (!t.Char(']') || !(t.Lit("<stdout>:") || t.Lit("<stderr>:")) || rank > kMaxRank) return false;
  if (policy.mpi_tag_space) t.Char(' ');
  out->rank = static_cast<std::int32_t>(rank);
  if (!host.empty()) out->host = host;
  *s = t;
  return true;
}

// `kern  :warn  : ` (util-linux's `dmesg -x`, `--decode`: the record's facility and level, each
// padded to six columns), before the kernel's own stamp.
bool DmesgDecode(Scanner* s) {
  static constexpr std::string_view kFacilities[] = {
      "kern",   "user",   "mail",     "daemon", "auth",   "syslog", "lpr",    "news",
      "uucp",   "cron",   "authpriv", "ftp",    "res0",   "res1",   "res2",   "res3",
      "local0", "local1", "local2",   "local3", "local4", "local5", "local6", "local7"};
  static constexpr std::string_view kLevels[] = {"emerg", "alert",  "crit", "err",
                                                 "warn",  "notice", "info", "debug"};
  Scanner t = *s;
  const std::string_view facility = t.Token(" :");
  t.SkipSpaces();
  if (!t.Char(':')) return false;
  const std::string_view level = t.Token(" :");
  t.SkipSpaces();
  if (!t.Lit(": ") ||
      std::find(std::begin(kFacilities), std::end(kFacilities), facility) ==
          std::end(kFacilities) ||
      std::find(std::begin(kLevels), std::end(kLevels), level) == std::end(kLevels))
    return false;
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

// A Kubernetes name: lower-case letters, digits, `-` and `.` (a pod's; a container's has no `.`).
bool KubeName(std::string_view name, bool dots) {
  if (name.empty() || name.size() > 253) return false;
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || IsDigit(c) || c == '-' || (dots && c == '.'))) return false;
  }
  return true;
}

// `[pod/<pod>/<container>] ` (`kubectl logs --prefix`: every pod a selector names in one stream;
// `--timestamps` puts its stamp after it). Peeled; the pod is not taken for the line's host: the
// node a pod ran on is its describe's word, a node may hold several pods, and a JobSet's
// processes print the pod name without its suffix (taken for the host, the tag gave one wrong
// answer of 25 Kubernetes incidents in the `kubectl-prefix` shape, docs/evaluation.md).
// `*tag`, when given, is set to `<pod>/<container>`.
bool PodTag(Scanner* s, std::string_view* tag = nullptr) {
  Scanner t = *s;
  if (!t.Lit("[pod/")) return false;
  const std::string_view pod = t.Token("/ ]");
  if (pod.empty() || !t.Char('/')) return false;
  const std::string_view container = t.Token("/ ]");
  if (!KubeName(pod, true) || !KubeName(container, false) || !t.Char(']') ||
      !(t.Char(' ') || t.AtEnd()))
    return false;
  if (tag != nullptr)
    *tag = {pod.data(), static_cast<std::size_t>(container.data() + container.size() - pod.data())};
  *s = t;
  return true;
}

// `{app="trainer", pod="llama-worker-3"}   ` after Loki's `logcli query` stamp (its default output:
// the stream's labels, those every stream shares left out, `{}` when none is left, padded to the
// widest): a Prometheus label set, then spaces. Peeled; no label is taken for the line's host.
bool LabelSet(Scanner* s, std::string_view* labels = nullptr) {
  Scanner t = *s;
  const std::size_t from = t.pos();
  if (!t.Char('{')) return false;
  if (!t.Char('}')) {
    for (;;) {
      const std::string_view name = t.Token("=,{} \"");
      if (name.empty() || !IsAlpha(name[0]) || !t.Lit("=\"")) return false;
      while (!t.AtEnd() && t.Peek() != '"') t.Skip(t.Peek() == '\\' ? 2 : 1);
      if (!t.Char('"')) return false;
      if (t.Char('}')) break;
      if (!t.Lit(", ")) return false;
    }
  }
  if (labels != nullptr) *labels = s->Rest().substr(0, t.pos() - from);
  if (!t.Char(' ') && !t.AtEnd()) return false;
  t.SkipSpaces();
  *s = t;
  return true;
}

// `<pod> <container> ` at a line's start (stern's output), its container's name in `*container`:
// a pod's name holds a `-` (a controller's suffix), a container's is a name of its own.
bool PodAndContainer(Scanner* s, std::string_view* container, std::string_view* pod_out = nullptr) {
  Scanner t = *s;
  const std::string_view pod = t.Token(" ");
  if (!KubeName(pod, true) || pod.find('-') == std::string_view::npos || !t.Char(' ')) return false;
  *container = t.Token(" ");
  if (!KubeName(*container, false) || container->size() >= sizeof PrefixPolicy{}.pod_container ||
      !(t.Char(' ') || t.AtEnd()))
    return false;
  if (pod_out != nullptr) *pod_out = pod;
  *s = t;
  return true;
}

// `trainer-1  | ` at a line's start (`docker compose logs`: a container's name, padded to the
// widest, and a bar; `|` alone ends an empty line).
bool ComposeTag(Scanner* s, std::string_view* name_out = nullptr) {
  Scanner t = *s;
  const std::string_view name = t.Token(" |");
  if (name.empty() || !(IsAlpha(name[0]) || IsDigit(name[0])) || name.size() > 128) return false;
  for (const char c : name) {
    if (!IsHostChar(c)) return false;
  }
  if (!t.Char(' ')) return false;
  t.SkipSpaces();
  if (!t.Char('|') || !(t.Char(' ') || t.AtEnd())) return false;
  if (name_out != nullptr) *name_out = name;
  *s = t;
  return true;
}

// The tag a file's policy says every line opens with: `docker compose logs`' `trainer-1  | `, or
// stern's `<pod> <container> ` of the file's container. `*stream`, when given, is set to the
// container's name (compose) or the pod's (stern).
bool PeelCollectorTag(std::string_view* line, const PrefixPolicy& policy,
                      std::string_view* stream = nullptr) {
  Scanner s(*line);
  std::string_view container, name;
  if (!(policy.compose && ComposeTag(&s, &name)) &&
      !(policy.pod_container_size > 0 && PodAndContainer(&s, &container, &name) &&
        container == policy.PodContainer()))
    return false;
  if (stream != nullptr) *stream = name;
  *line = s.Rest();
  return true;
}

}  // namespace

std::string_view CollectorStream(std::string_view line, const PrefixPolicy& policy) {
  PeelPaste(&line, policy);
  std::string_view tag;
  if (line.starts_with("[pod/")) {
    Scanner s(line);
    return PodTag(&s, &tag) ? tag : std::string_view();
  }
  if (PeelCollectorTag(&line, policy, &tag)) return tag;
  // Loki's `logcli query`: `<stamp> {labels}   <line>`, the labels that tell its streams apart
  constexpr std::size_t kLongestStamp = 40;
  const std::size_t space = line.substr(0, kLongestStamp).find(' ');
  if (!line.empty() && IsDigit(line[0]) && space != std::string_view::npos &&
      space + 1 < line.size() && line[space + 1] == '{') {
    Scanner labels(line.substr(space + 1));
    if (LabelSet(&labels, &tag) && tag.size() > 2) return tag;
  }
  return {};
}

std::string_view LabelValue(std::string_view set, std::string_view name) {
  for (std::size_t at = set.find(name); at != std::string_view::npos; at = set.find(name, at + 1)) {
    const std::string_view rest = set.substr(at + name.size());
    if ((at > 0 && set[at - 1] != '{' && set[at - 1] != ',' && set[at - 1] != ' ') ||
        !rest.starts_with("=\""))
      continue;
    const std::size_t end = rest.find('"', 2);
    return end == std::string_view::npos ? std::string_view() : rest.substr(2, end - 2);
  }
  return {};
}

namespace {

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

// `Nov 29 16:25:31 `: a month's 3 letters, a day, a time (before any field is read).
bool LooksSyslog(std::string_view line) {
  return line.size() > 20 && line[3] == ' ' && line[6] == ' ' && line[9] == ':' && line[12] == ':';
}

// As much of `quote` as the line opens with (an empty quoted line is `>` alone).
void PeelQuote(std::string_view* line, std::string_view quote) {
  std::size_t k = 0;
  while (k < quote.size() && k < line->size() && (*line)[k] == quote[k]) ++k;
  line->remove_prefix(k);
}

// A line number: `[80746] ` ('['), `80746:` (':'), `  80746\t` ('\t').
bool NumberAt(std::string_view line, char kind, std::int64_t* number, std::size_t* end) {
  Scanner s(line);
  if (kind == '[' && !s.Char('[')) return false;
  if (kind == '\t') s.SkipSpaces();
  if (!s.Digits(1, 10, number)) return false;
  if (!(kind == '[' ? s.Lit("] ") : s.Char(kind == ':' ? ':' : '\t'))) return false;
  *end = s.pos();
  return true;
}

// What follows NCCL's `[<dev>] `: `NCCL ...` or `<file>.cc:<line> NCCL ...`.
bool NcclDevice(std::string_view rest) {
  const std::size_t space = rest.find(' ');
  return rest.starts_with("NCCL ") || (space != std::string_view::npos && rest.substr(space + 1).starts_with("NCCL ") &&
                                       rest.substr(0, space).find(".cc:") != std::string_view::npos);
}

void PeelNumber(std::string_view* line, char kind) {
  std::int64_t number;
  std::size_t end;
  if (NumberAt(*line, kind, &number, &end)) line->remove_prefix(end);
}

}  // namespace

bool CriLine(std::string_view line, char* stream, bool* partial, std::size_t* content) {
  constexpr std::size_t kLongestStamp = 40;  // 2024-06-01T11:00:21.972589808+02:00
  if (line.size() < 20 || !IsDigit(line[0]) || line[4] != '-') return false;
  const std::size_t sp = line.substr(0, kLongestStamp).find(' ');
  if (sp == std::string_view::npos) return false;
  Scanner s(line.substr(sp + 1));
  LineOrigin o;
  if (!StreamTag(&s, &o)) return false;
  *stream = o.stream;
  *partial = o.partial;
  *content = sp + 1 + s.pos();
  return true;
}

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

// A second stamp (kubectl's or the program's own after a container runtime's `stdout F `, the
// program's after a journal's) is peeled too. The first one's time stays the line's unless it is
// coarser (a journal's whole seconds): then the finer one is.
bool InnerStamp(Scanner* s, const PrefixPolicy& policy, LineOrigin* out) {
  LineOrigin inner;
  if (!Stamp(s, policy, &inner)) return false;
  out->collected = out->collected && inner.collected;  // the program's own stamp: the line states its time
  if (out->coarse && !inner.coarse) {
    out->time = inner.time;
    out->coarse = false;
  }
  return true;
}

int StripPrefixes(std::string_view* line, const PrefixPolicy& policy, LineOrigin* out) {
  constexpr int kMaxPrefixes = 8;
  if (policy.quote_size > 0) PeelQuote(line, policy.Quote());
  if (policy.numbered != 0) PeelNumber(line, policy.numbered);
  int n = PeelCollectorTag(line, policy) ? 1 : 0;
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
      // A bare `[80746] ` is a pid or a log viewer's line number (on a file too short to learn
      // the viewer's numbering from, see SniffNumbers): an opaque prefix, peeled. NCCL's own
      // `[<dev>] NCCL INFO` / `[<dev>] file.cc:71 NCCL WARN` (a debug file format without its
      // `host:pid:tid`) is NCCL's header, left to its recogniser.
      std::int64_t number;
      std::size_t end;
      stripped = PodTag(&s) || MpiTag(&s, policy, out) ||
                 (line->size() > 2 && !IsSeverity((*line)[1]) && LocalTag(&s, out));
      if (!stripped && NumberAt(*line, '[', &number, &end) && !NcclDevice(line->substr(end))) {
        *line = line->substr(end);
        continue;
      }
    } else if (IsDigit(c) || c == ' ') {
      // An srun label first (most digit-led prefixes; a stamp, `YYYY-`, is never one).
      stripped = (out->task < 0 && SrunLabel(&s, out)) ||
                 (out->timed ? InnerStamp(&s, policy, out) : Stamp(&s, policy, out)) ||
                 (out->host.empty() && IsDigit(c) && Host(&s, policy, out));
    } else if (c == '(' || c == '\x1b') {
      stripped = RayTag(&s, out);
    } else if (c == '{') {
      stripped = LabelSet(&s);
    } else if (IsAlpha(c)) {
      // A journal line can sit behind another collector's stamp (a node's journal shipped through
      // a container's log, or re-read by a second journal): the innermost names the machine.
      stripped = (LooksSyslog(*line) && SyslogStamp(&s, policy, out)) ||
                 (out->host.empty() && Host(&s, policy, out)) || Role(&s) || DmesgDecode(&s);
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
constexpr std::size_t kTagProbeBytes = 32 << 20;

// The first `]<std` of `probe` (npos: none), found by its `<`, which few log lines hold: glibc's
// memmem read the 2 GB benchmark's first 32 MiB at ~2 GB/s (~1.5 % of its parse), memchr reads
// at memory speed.
std::size_t FirstTag(std::string_view probe) {
  for (std::size_t at = probe.find('<', 1); at != std::string_view::npos && at + 4 <= probe.size();
       at = probe.find('<', at + 1)) {
    if (probe[at - 1] == ']' && probe.substr(at, 4) == "<std") return at - 1;
  }
  return std::string_view::npos;
}

// The same for text[0, size) of a mapped file, read through `file` a window at a time into one
// buffer the cache keeps, not through the mapping: on the 16k-rank scale incident's srun log,
// the probe's 32 MiB took 12-20 ms through 4 KiB mapped pages (a fault per 64 KiB, a page walk
// per page), ~4 ms read (docs/benchmarks.md, "The MPI-tag probe"). Each window repeats the 4
// bytes before it, so a tag across two windows is found whole. nullopt: the file could not give
// its bytes (read into memory, or shorter now): the caller probes the text.
std::optional<std::size_t> FirstTagRead(const ReadBehind& file, std::size_t size) {
  constexpr std::size_t kWindow = 256 << 10, kOverlap = 4;
  const auto buffer = std::make_unique_for_overwrite<char[]>(kWindow + kOverlap);
  for (std::size_t from = 0; from < size; from += kWindow) {
    const std::size_t begin = from < kOverlap ? 0 : from - kOverlap,
                      end = std::min(size, from + kWindow);
    if (!file.Copy(begin, end - begin, buffer.get())) return std::nullopt;
    const std::size_t at = FirstTag(std::string_view(buffer.get(), end - begin));
    if (at != std::string_view::npos) return begin + at;
  }
  return std::string_view::npos;
}

bool MpiTagsSpaced(std::string_view text, const ReadBehind* file) {
  constexpr int kSample = 64, kMaxLines = 4096;
  const std::size_t probe = std::min(text.size(), kTagProbeBytes);
  std::optional<std::size_t> read;
  if (file != nullptr) read = FirstTagRead(*file, probe);
  const std::size_t first = read ? *read : FirstTag(text.substr(0, probe));
  if (first == std::string_view::npos) return false;
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

namespace {

bool IsQuoteChar(char c) { return c == '>' || c == ' ' || c == '\t'; }

// The quoting or indentation every sampled line opens with (a line that is only part of it, an
// empty quoted line, agrees): `> ` quoting, or two columns or more of indentation (one space
// opens Megatron's progress lines, and srun pads its labels with spaces: neither is a paste's).
// Indentation needs kLeast lines to be told from a traceback's (two lines when it is four columns
// or more, deeper than a traceback's `  File` lines), or, four columns or more, every line of a
// short file (`whole_file`: a pasted title line alone); `>` opens no log line of its own, so a
// short pasted file (slurmctld's three lines of the job) is peeled too.
void SniffQuote(std::span<const std::string_view> lines, bool whole_file, bool srun_labels, PrefixPolicy* policy) {
  constexpr std::size_t kLeast = 4, kLeastDeep = 2, kDeep = 4;
  if (lines.empty()) return;
  std::string_view common = lines[0].substr(0, sizeof policy->quote);
  std::size_t k = 0;
  while (k < common.size() && IsQuoteChar(common[k])) ++k;
  common = common.substr(0, k);
  for (std::string_view line : lines.subspan(1)) {
    std::size_t m = 0;
    while (m < common.size() && m < line.size() && line[m] == common[m]) ++m;
    if (m < line.size()) common = common.substr(0, m);
  }
  const bool quoted = common.find('>') != std::string_view::npos;
  const std::size_t least = common.size() >= kDeep ? (whole_file ? 1 : kLeastDeep) : kLeast;
  if (!quoted && (lines.size() < least || srun_labels || (common.size() < 2 && common != "\t"))) return;
  std::memcpy(policy->quote, common.data(), common.size());
  policy->quote_size = static_cast<std::uint8_t>(common.size());
}

// A line number on most sampled lines, rising line by line: a log viewer's or grep -n's, not an
// srun label or a rank tag (those repeat and jump; srun's tasks can also start in order, so a
// file of srun labels has no `80746:` numbers).
void SniffNumbers(std::span<const std::string_view> lines, bool srun_labels, const PrefixPolicy& quote,
                  PrefixPolicy* policy) {
  constexpr std::size_t kLeast = 4;
  if (lines.size() < kLeast) return;
  for (const char kind : {'[', ':', '\t'}) {
    if (kind == ':' && srun_labels) continue;
    std::size_t numbered = 0, rising = 0;
    std::int64_t last = -1;
    for (std::string_view line : lines) {
      PeelQuote(&line, quote.Quote());
      std::int64_t number;
      std::size_t end;
      if (!NumberAt(line, kind, &number, &end)) continue;
      ++numbered;
      rising += last >= 0 && number > last ? 1 : 0;
      last = number;
    }
    if (numbered * 4 >= lines.size() * 3 && rising * 10 >= (numbered - 1) * 9) {
      policy->numbered = kind;
      return;
    }
  }
}

// Whether `count` of a sample of `lines` lines is most of a file's lines: three quarters of at
// least four, or every line of a short file (`whole_file`).
bool MostLines(std::size_t count, std::size_t lines, bool whole_file) {
  constexpr std::size_t kLeast = 4;
  if (lines < kLeast) return whole_file && lines > 0 && count == lines;
  return count * 4 >= lines * 3;
}

// stern's `<pod> <container> ` on most sampled lines with one container's name: that name. Step
// lines (`step 12 loss ...`) differ in their second word, and a pod's name holds a `-`.
void SniffPodContainer(std::span<const std::string_view> lines, bool whole_file,
                       const PrefixPolicy& quote, PrefixPolicy* policy) {
  std::map<std::string_view, std::size_t> containers;
  for (std::string_view line : lines) {
    PeelQuote(&line, quote.Quote());
    Scanner s(line);
    std::string_view container;
    if (PodAndContainer(&s, &container)) ++containers[container];
  }
  for (const auto& [name, count] : containers) {
    if (!MostLines(count, lines.size(), whole_file)) continue;
    std::memcpy(policy->pod_container, name.data(), name.size());
    policy->pod_container_size = static_cast<std::uint8_t>(name.size());
  }
}

// `docker compose logs`' `trainer-1  | ` on most sampled lines.
void SniffCompose(std::span<const std::string_view> lines, bool whole_file,
                  const PrefixPolicy& quote, PrefixPolicy* policy) {
  std::size_t tagged = 0;
  for (std::string_view line : lines) {
    PeelQuote(&line, quote.Quote());
    Scanner s(line);
    tagged += ComposeTag(&s) ? 1 : 0;
  }
  policy->compose = MostLines(tagged, lines.size(), whole_file);
}

// `| GPU  Name ... |`: nvidia-smi's, tabulate's and Markdown's rows end with the bar they start with.
bool TableRow(std::string_view line) {
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  return line.size() >= 2 && line.front() == '|' && line.back() == '|';
}

}  // namespace

namespace {

// torchrun's `--tee` tag at a line's start, a role and a local rank (`[default3]:`,
// `[trainer0]:`): letters then digits, which a cut leaves by chance no more than `[rank<G>]:`.
// Stricter than LocalTag, which also reads a cut `[gpu-0001]:29500` as a tag.
bool TeeTag(std::string_view line) {
  if (line.empty() || line[0] != '[') return false;
  const std::size_t close = line.find("]:");
  if (close == std::string_view::npos) return false;
  const std::string_view tag = line.substr(1, close - 1);
  const std::size_t digits = tag.find_first_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos) return false;
  return std::all_of(tag.begin(), tag.begin() + static_cast<std::ptrdiff_t>(digits), IsAlpha) &&
         tag.find_first_not_of("0123456789", digits) == std::string_view::npos;
}

// NCCL's head, `<host>:<pid>:<tid> [<dev>] NCCL ...` (or `... [<dev>] <file>.cc:<line> NCCL ...`).
bool NcclHead(std::string_view line) {
  Scanner s(line);
  std::int64_t pid = 0, tid = 0, dev = 0;
  return !s.Token(": [").empty() && s.Char(':') && s.Digits(1, 12, &pid) && s.Char(':') &&
         s.Digits(1, 12, &tid) && s.Lit(" [") && s.Digits(1, 4, &dev) && s.Lit("] ") &&
         NcclDevice(s.Rest());
}

// What opens a line, the collector's quoting and numbers peeled (StartsOwnLine). A piece of a cut
// line starts anywhere: with a space, a bracket (`[gpu-0001]:29500` reads as half a torchrun tag),
// a bar (DeepSpeed's `... | bwd: 1871.72 ` cut before `| bwd_inner: ...`), a word. What starts a
// line is what no cut makes by chance: a stamp, `[rank<G>]:`, a logging header, an srun label, an
// Open MPI tag (`[1,5]<stdout>:`), a Ray process's tag (`(RayTrainWorker pid=1346330,
// ip=10.64.0.123) `), an MPI daemon's `[<host>:<pid>] ` (each line of mpirun's
// `--report-bindings`), NCCL's `<host>:<pid>:<tid> [<dev>] NCCL `, a traceback or an exception
// line, a table's rule or its row, barred at both ends; and a host's `<host>: ` (pdsh) before
// one of those.
bool OpensLine(std::string_view line, bool after_host) {
  if (line.empty()) return true;
  const bool rule = line.size() >= 3 && std::string_view("+=*-").find(line[0]) != std::string_view::npos &&
                    (line[1] == line[0] || line[1] == '-') && line[2] == line[1];
  if (TableRow(line) || rule || line.starts_with("[rank") || line.starts_with("Traceback ")) return true;
  // The torchrun table's `[k]:` (an entry's first line): after a run of equally long `traceback :`
  // rows it is no piece of them.
  if (line.size() >= 4 && line[0] == '[' && line.ends_with("]:") &&
      line.substr(1, line.size() - 3).find_first_not_of("0123456789") == std::string_view::npos) {
    return true;
  }
  if (TeeTag(line) || NcclHead(line)) return true;
  LineOrigin o;
  Scanner s(line);
  std::string_view daemon;
  if (DaemonTag(&s, &daemon)) return true;
  if (SrunLabel(&s, &o) || Stamp(&s, PrefixPolicy{}, &o) || MpiTag(&s, PrefixPolicy{}, &o) ||
      RayTag(&s, &o))
    return true;
  if (!after_host && Host(&s, PrefixPolicy{.hosts = true}, &o)) return OpensLine(s.Rest(), true);
  Header h;
  std::string_view type;
  // A header that only looks begun (`[144, 145, ...` of a cut list reads as a malformed bracket
  // time) starts nothing: a cut makes such shapes by chance.
  return (line[0] != ' ' && ParseHeader(line, &h) == Match::kYes) || ParsePythonErrorLine(line, &type);
}

// The line as StartsOwnLine reads it: past its colour codes, the paste's quoting and a log
// viewer's numbers.
std::string_view Peeled(std::string_view line, const PrefixPolicy& policy, std::string* clean) {
  if (line.find('\x1b') != std::string_view::npos) line = WithoutEscapes(line, clean);
  PeelQuote(&line, policy.Quote());
  if (policy.numbered != 0) PeelNumber(&line, policy.numbered);
  return line;
}

// Two lines that open alike, their first 8 bytes the same but for digits (`(TorchTrainer
// pid=428948) - (node_id=`, `Rank 1234 ...` and `Rank 1240 ...`): lines one program wrote one
// after another, whatever their shape. A terminal's cut lands anywhere in its line, so its piece
// opens as its head line does only by chance. Indented lines are left to the other rules (a
// paste's indent, a table's cells).
bool OpenAlike(std::string_view a, std::string_view b) {
  constexpr std::size_t kAlike = 8;
  if (a.size() < kAlike || b.size() < kAlike || a[0] == ' ' || a[0] == '\t') return false;
  for (std::size_t k = 0; k < kAlike; ++k) {
    if (a[k] != b[k] && !(IsDigit(a[k]) && IsDigit(b[k]))) return false;
  }
  return true;
}

}  // namespace

bool StartsOwnLine(std::string_view line, const PrefixPolicy& policy, std::string_view before) {
  std::string clean, clean_before;
  line = Peeled(line, policy, &clean);
  if (!before.empty() && OpenAlike(Peeled(before, policy, &clean_before), line)) return true;
  return OpensLine(line, false);
}

bool DaemonTag(Scanner* s, std::string_view* host) {
  Scanner t = *s;
  std::int64_t pid = 0;
  if (!t.Char('[')) return false;
  *host = t.Token(":] ");
  if (host->empty() || !t.Char(':') || !t.Digits(1, 9, &pid) || !t.Lit("] ")) return false;
  *s = t;
  return true;
}

std::string_view WithoutEscapes(std::string_view line, std::string* store) {
  store->clear();
  for (std::size_t i = 0; i < line.size();) {
    const std::size_t esc = line.find('\x1b', i);
    store->append(line.substr(i, esc == std::string_view::npos ? std::string_view::npos : esc - i));
    if (esc == std::string_view::npos) break;
    i = esc + 1;
    if (i < line.size() && line[i] == '[') {  // CSI: parameters, then one final byte
      ++i;
      while (i < line.size() && (IsDigit(line[i]) || line[i] == ';' || line[i] == '?')) ++i;
      if (i < line.size()) ++i;
    }
  }
  return *store;
}

std::size_t VisibleSize(std::string_view line) {
  std::size_t n = line.size();
  for (std::size_t esc = line.find('\x1b'); esc != std::string_view::npos; esc = line.find('\x1b', esc + 1)) {
    std::size_t i = esc + 1;
    if (i < line.size() && line[i] == '[') {
      ++i;
      while (i < line.size() && (IsDigit(line[i]) || line[i] == ';' || line[i] == '?')) ++i;
      if (i < line.size()) ++i;
    }
    n -= i - esc;
    esc = i - 1;
  }
  return n;
}

void PeelPaste(std::string_view* line, const PrefixPolicy& policy) {
  PeelQuote(line, policy.Quote());
  if (policy.numbered != 0) PeelNumber(line, policy.numbered);
}

namespace {

// The last whole lines of `text`: at most `max_lines`, in at most its last `max_bytes`.
std::string_view LastLines(std::string_view text, std::size_t max_bytes, std::size_t max_lines) {
  const std::size_t floor = text.size() > max_bytes ? text.size() - max_bytes : 0;
  std::size_t start = text.size();
  for (std::size_t lines = 0; lines <= max_lines && start > floor; ++lines) {
    const std::size_t nl = text.rfind('\n', start - 1);
    if (nl == std::string_view::npos || nl < floor) break;
    start = nl;
  }
  return start < text.size() ? text.substr(start + 1) : std::string_view();
}

// A terminal copy hard-wrapped at a fixed width W: no line of the file's first lines (up to 16 k
// lines in its first MiB: mpirun's --report-bindings prints one short line per rank before the
// ranks' wrapped lines begin) is longer than W columns (80 to 200, plus its quoting), and most
// runs of lines of exactly W columns are a wrapped line's pieces: each piece after the first and the shorter tail after them start no
// line of their own. A table's rows (`| ...`, nvidia-smi), a run of equal watchdog lines and
// Megatron's fixed-width progress lines are runs of W whose lines do start their own.
constexpr std::size_t kWrapProbeBytes = 1 << 20, kWrapProbeLines = 16384;

std::uint32_t SniffWrapWidth(std::string_view text, const PrefixPolicy& policy) {
  constexpr std::size_t kProbeBytes = kWrapProbeBytes, kMaxLines = kWrapProbeLines, kLeastRuns = 2;
  constexpr std::size_t kNarrowest = 80, kWidest = 200 + sizeof policy.quote + 12;
  std::vector<std::string_view> lines;
  std::vector<std::uint16_t> width;
  std::size_t longest = 0;
  text = text.substr(0, std::min(text.size(), kProbeBytes));
  for (std::string_view rest = text; !rest.empty() && lines.size() < kMaxLines;) {
    const std::size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) break;  // the probe's last line may be cut
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t len = line.size();
    if (std::memchr(line.data(), '\x1b', len) != nullptr) len = VisibleSize(line);  // a colour code takes no column
    if (len > kWidest) return 0;
    longest = std::max(longest, len);
    lines.push_back(line);
    width.push_back(static_cast<std::uint16_t>(len));
  }
  if (longest < kNarrowest) return 0;
  // The wrap width stands out: lines a terminal cut are exactly W, while lines a little shorter
  // (not a cut line's tail) are as many as chance makes them; a table's or an event list's rows
  // bunch below their longest. A block of lines of one length below W (NCCL's 16 `Channel NN/0`
  // lines of a communicator) counts once: one length, not sixteen chances.
  constexpr std::size_t kBelow = 16, kStandsOut = 2;
  std::array<std::size_t, kBelow + 1> near{};
  for (std::size_t i = 0; i < width.size(); ++i) {
    const std::size_t w = width[i];
    const bool tail = i > 0 && width[i - 1] == longest;
    const bool same_as_before = i > 0 && width[i - 1] == w;
    if (longest - w <= kBelow && (w == longest || (!tail && !same_as_before))) ++near[longest - w];
  }
  if (near[0] < kStandsOut * *std::max_element(near.begin() + 1, near.end())) return 0;
  std::size_t runs = 0, wrapped = 0;
  for (std::size_t i = 0; i < lines.size();) {
    if (width[i] != longest) {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    bool pieces = true;
    for (; j < lines.size() && width[j] == longest; ++j)
      pieces = pieces && !StartsOwnLine(lines[j], policy, lines[j - 1]);
    ++runs;
    wrapped +=
        pieces && j < lines.size() && width[j] > 0 && !StartsOwnLine(lines[j], policy, lines[j - 1])
            ? 1
            : 0;
    i = j;
  }
  return wrapped >= kLeastRuns && wrapped * 2 > runs ? static_cast<std::uint32_t>(longest) : 0;
}

}  // namespace

namespace {

// The first non-empty lines of `text`, up to `out`'s size; with `wrap_width`, only the lines a
// terminal copy's hard wrap did not make (those after a line of that width are its pieces).
std::size_t SampleLines(std::string_view text, std::uint32_t wrap_width, std::span<std::string_view> out) {
  constexpr std::size_t kMaxScan = 1 << 20;  // bytes: a wrapped file's heads may be few
  std::size_t n = 0;
  bool piece = false;
  for (std::string_view rest = text.substr(0, wrap_width > 0 ? kMaxScan : text.size()); !rest.empty() && n < out.size();) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool after_cut = piece;
    piece = wrap_width > 0 && VisibleSize(line) == wrap_width;
    if (!line.empty() && !after_cut) out[n++] = line;
  }
  return n;
}

}  // namespace

PrefixPolicy SniffPrefixes(std::string_view text, const ReadBehind* file) {
  PrefixPolicy policy{.mpi_tag_space = MpiTagsSpaced(text, file)};
  constexpr std::size_t kSample = 64;
  std::array<std::string_view, kSample> sample;
  std::size_t n = SampleLines(text, 0, sample);
  std::size_t raw_labelled = 0;
  for (std::string_view line : std::span<const std::string_view>(sample.data(), n)) {
    LineOrigin o;
    Scanner s(line);
    raw_labelled += SrunLabel(&s, &o) ? 1 : 0;
  }
  SniffQuote({sample.data(), n}, n < kSample, raw_labelled * 2 >= n, &policy);
  SniffNumbers({sample.data(), n}, raw_labelled * 2 >= n, policy, &policy);
  SniffPodContainer({sample.data(), n}, n < kSample, policy, &policy);
  SniffCompose({sample.data(), n}, n < kSample, policy, &policy);
  // A terminal copy's wrapped pieces have no prefix of their own: the prefixes are sampled from
  // the lines that start after a line shorter than the wrap width.
  policy.wrap_width = SniffWrapWidth(text, policy);
  if (policy.wrap_width == 0 && text.size() > 2 * kWrapProbeBytes) {
    // A long paste's first MiB may hold no line long enough to wrap (Ray's worker table, srun's
    // start-up lines): its last lines, where the failure is, are probed too.
    policy.wrap_width = SniffWrapWidth(LastLines(text, kWrapProbeBytes, kWrapProbeLines), policy);
  }
  if (policy.wrap_width > 0) {
    n = SampleLines(text, policy.wrap_width, sample);
    // A log viewer numbers the lines before the terminal cuts them: its numbers are on most of
    // the lines that start, not on most lines.
    if (policy.numbered == 0) SniffNumbers({sample.data(), n}, raw_labelled * 2 >= n, policy, &policy);
    if (policy.pod_container_size == 0)
      SniffPodContainer({sample.data(), n}, n < kSample, policy, &policy);
    if (!policy.compose) SniffCompose({sample.data(), n}, n < kSample, policy, &policy);
  }
  const std::span<const std::string_view> lines(sample.data(), n);
  std::size_t counted = 0, hosted = 0, labelled = 0, journal = 0;
  PrefixPolicy probe{.hosts = true, .journal = true};
  std::string clean;
  bool split[2] = {false, false};  // a stream's last line was a CRI `P` head, continued by its next
  for (std::string_view line : lines) {
    // The lines are judged as the parser reads them: past a terminal copy's colour codes.
    if (line.find('\x1b') != std::string_view::npos) line = WithoutEscapes(line, &clean);
    PeelQuote(&line, policy.Quote());
    char stream;
    bool partial;
    std::size_t content;
    if (CriLine(line, &stream, &partial, &content)) {
      policy.cri = true;
      // The pieces after a head a runtime split (a line over 16 KiB: DeepSpeed's `--world_info`
      // at 1,024 nodes, in four) have no prefix of their own: the lines are judged at their heads.
      const bool piece = std::exchange(split[stream == 'e'], partial);
      if (piece) continue;
    }
    ++counted;
    if (policy.numbered != 0) PeelNumber(&line, policy.numbered);
    PeelCollectorTag(&line, policy);
    LineOrigin o;
    Scanner s(line);
    labelled += SrunLabel(&s, &o) ? 1 : 0;
    o = LineOrigin{};
    StripPrefixes(&line, probe, &o);
    hosted += !o.host.empty() ? 1 : 0;
    journal += o.journal ? 1 : 0;
  }
  policy.hosts = counted > 0 && hosted * 4 >= counted * 3;
  policy.srun_labels = counted > 0 && labelled * 2 >= counted;
  // A unit without `[pid]` reads like any `Word word: ` (`CUDA error: ...`): taken only when
  // several lines show it.
  constexpr std::size_t kLeastJournal = 4;
  policy.journal = counted >= kLeastJournal && journal * 4 >= counted * 3;
  return policy;
}

// Prefixes whose content the parser keeps for its file (triggers.h): the ranks of `[rank<G>]:`
// and OpenMPI tags, and whether torchrun's `[default<L>]:` tags are used.
namespace {
constexpr Trigger kPrefixTriggers[] = {
    // torch `[rank<G>]:` (also a broken one: counted as malformed)
    {"[rank", TriggerLevel::kPrefix},
    // OpenMPI `[<job>,<rank>]<stdout>:`
    {"]<stdout>:", TriggerLevel::kPrefix},
    {"]<stderr>:", TriggerLevel::kPrefix},
    // torchrun `[default<L>]:`, TorchX `[<L>]:`; not a journal's `python3[40411]:`
    {"]:", TriggerLevel::kPrefix, true},
};
}  // namespace
std::span<const Trigger> PrefixTriggers() { return kPrefixTriggers; }

}  // namespace denpex::engine
