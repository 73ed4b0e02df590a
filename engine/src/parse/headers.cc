#include "parse/headers.h"

#include "parse/lines.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

char SeverityOfLevel(std::string_view level) {
  if (level == "ERROR" || level == "CRITICAL" || level == "FATAL") return 'E';
  if (level == "WARNING" || level == "WARN") return 'W';
  if (level == "INFO" || level == "DEBUG") return 'I';
  return 0;
}

void Timed(Header* out, HeaderKind kind, TimeNs time, Clock clock) {
  out->kind = kind;
  out->time = time;
  out->clock = clock;
}

// `[E0302 09:27:14.123456789 File.cpp:607] ` and `[E File.cpp:737] `.
Match C10(std::string_view line, Header* out) {
  if (line.size() > 3 && line[2] == ' ') {  // torch ≤ 2.3: no time
    Scanner s(line.substr(3));
    std::int64_t source_line;
    const std::string_view source = s.Token(":] ");
    if (source.empty() || !s.Char(':') || !s.Digits(1, 7, &source_line) || !s.Char(']')) return Match::kNo;
    s.Char(' ');
    out->kind = HeaderKind::kC10;
    out->severity = line[1];
    out->source = source;
    out->message = s.Rest();
    return Match::kYes;
  }
  C10Header h;
  const Match m = ParseC10Header(line, &h);
  if (m != Match::kYes) return m;
  Timed(out, HeaderKind::kC10, h.time, Clock::kNoYear);
  out->severity = h.severity;
  out->source = h.source;
  out->message = h.message;
  return Match::kYes;
}

// `WARNING:torch.distributed.elastic.multiprocessing.api:msg` (torch 1.10–2.0).
bool LevelLogger(std::string_view line, Header* out) {
  Scanner s(line);
  const std::string_view level = s.Token(":");
  if (!SeverityOfLevel(level) || !s.Char(':')) return false;
  const std::string_view logger = s.Token(": ");
  if (logger.empty() || !s.Char(':')) return false;
  out->kind = HeaderKind::kPython;
  out->severity = SeverityOfLevel(level);
  out->source = logger;
  out->message = s.Rest();
  return true;
}

// `[INFO] 2021-09-13 22:17:26,651 run: msg` (torch 1.9 with LOGLEVEL).
bool LevelFirst(Scanner s, Header* out) {
  const std::string_view level = s.Token("]");
  TimeNs t;
  if (!SeverityOfLevel(level) || !s.Lit("] ") || !ScanDateTime(&s, &t) || !s.Char(' ')) return false;
  const std::string_view logger = s.Token(":");
  if (!s.Lit(": ")) return false;
  Timed(out, HeaderKind::kPython, t, Clock::kFull);
  out->severity = SeverityOfLevel(level);
  out->source = logger;
  out->message = s.Rest();
  return true;
}

// After `[<date time>] `: DeepSpeed `[ERROR] [launch.py:434:sigkill_handler] `, Python logging
// `logger: [ERROR] `, or nothing more (NCCL WARN, slurmd `[63532.0] error: `).
void AfterBracketTime(Scanner s, TimeNs t, Header* out) {
  Timed(out, HeaderKind::kBracketTime, t, Clock::kFull);
  out->message = s.Rest();
  Scanner level = s;
  if (level.Char('[')) {
    const std::string_view lv = level.Token("]");
    if (SeverityOfLevel(lv) && level.Lit("] [")) {
      out->kind = HeaderKind::kDeepSpeed;
      out->severity = SeverityOfLevel(lv);
      out->source = level.Token(":]");
      level.Token("]");
      level.Lit("] ");
      out->message = level.Rest();
    }
    return;
  }
  const std::string_view name = level.Token(": [");
  if (name.empty() || !level.Lit(": [")) return;
  const std::string_view lv = level.Token("]");
  if (SeverityOfLevel(lv) && level.Lit("] ")) {
    out->kind = HeaderKind::kPython;
    out->severity = SeverityOfLevel(lv);
    out->source = name;
    out->message = level.Rest();
  }
}

// `[2021-09-14 10:11:21,947 I 2122527 2122927] actor_manager.cc:153: msg` (Ray core).
bool RayCore(Scanner s, TimeNs t, Header* out) {
  std::int64_t pid, tid;
  const char sev = s.Peek(1);
  if (!s.Char(' ') || !IsSeverity(sev)) return false;
  s.Skip(1);
  if (!s.Char(' ') || !s.Digits(1, 12, &pid) || !s.Char(' ') || !s.Digits(1, 20, &tid) || !s.Lit("] ")) return false;
  Timed(out, HeaderKind::kRay, t, Clock::kFull);
  out->severity = sev;
  out->source = s.Token(":");
  s.SkipPast(": ");
  out->message = s.Rest();
  return true;
}

// `[  518.050606] ` (uptime), `[  +0.000316] ` (relative), `[Wed Sep 29 07:12:20 2021] ` (-T),
// each possibly followed by a `[ T1946] ` caller tag.
bool Kernel(std::string_view line, Header* out) {
  Scanner s(line.substr(1));
  s.SkipSpaces();
  if (IsDigit(s.Peek()) || s.Peek() == '+') {
    s.Char('+');
    std::int64_t sec, frac;
    if (!s.Digits(1, 10, &sec) || !s.Char('.') || !s.Digits(1, 9, &frac) || !s.Lit("] ")) return false;
    out->kind = HeaderKind::kKernel;
  } else {
    const std::string_view dow = s.Token(" ");
    if (dow.size() != 3 || !s.Char(' ')) return false;
    const int month = MonthOf(s.Token(" "));
    std::int64_t day, year;
    TimeNs tod;
    s.SkipSpaces();
    if (!month || !s.Digits(1, 2, &day) || !s.Char(' ') || !ScanTimeOfDay(&s, &tod) ||
        !s.Char(' ') || !s.Digits(4, 4, &year) || !s.Lit("] ") || day < 1 || day > 31 ||
        year < kMinYear || year > kMaxYear) {
      return false;
    }
    Timed(out, HeaderKind::kKernel, DaysFromCivil(static_cast<int>(year), month, static_cast<int>(day)) * 86400 * kNsPerSec + tod,
          Clock::kFull);
  }
  if (s.Lit("[ T") || s.Lit("[T")) {
    s.Token("]");
    s.Lit("] ");
  }
  out->source = "kernel";
  out->message = s.Rest();
  return true;
}

// `May 15 23:09:30 host ident[pid]: msg` (syslog; journal with an English or other month).
bool Syslog(std::string_view line, Header* out) {
  Scanner s(line);
  const std::string_view mon = s.Token(" ");
  if (mon.size() < 3 || mon.size() > 4 || !s.Char(' ')) return false;
  s.SkipSpaces();
  std::int64_t day;
  TimeNs tod;
  if (!s.Digits(1, 2, &day) || !s.Char(' ') || !ScanTimeOfDay(&s, &tod) || !s.Char(' ')) return false;
  const std::string_view host = s.Token(" ");
  const std::string_view ident = s.Token(":");
  if (host.empty() || ident.size() < 2 || !s.Lit(": ")) return false;
  const int month = MonthOf(mon);
  if (month) {
    YearlessTime(month, day, tod, &out->time);
    out->clock = Clock::kNoYear;
  }
  out->kind = HeaderKind::kSyslog;
  out->host = host;
  out->source = ident.substr(1);
  out->message = s.Rest();
  Header inner;  // `kernel: [ 518.05] msg`
  if (out->message.starts_with("[") && Kernel(out->message, &inner)) out->message = inner.message;
  return true;
}

// `host kernel: msg` (what is left of an ISO-stamped kernel line once the stamp is read).
bool HostKernel(Header* out) {
  Scanner s(out->message);
  const std::string_view host = s.Token(" :");
  if (host.empty() || !s.Lit(" kernel: ")) return false;
  if (out->kind == HeaderKind::kNone) out->kind = HeaderKind::kSyslog;
  out->host = host;
  out->source = "kernel";
  out->message = s.Rest();
  Header inner;  // `kernel: [ 518.05] msg`
  if (out->message.starts_with("[") && Kernel(out->message, &inner)) out->message = inner.message;
  return true;
}

}  // namespace

Match ParseHeader(std::string_view line, Header* out) {
  *out = Header{.message = line};
  if (line.size() < 4) return Match::kNo;
  const char c = line[0];
  if (c == '[') {
    if (IsSeverity(line[1]) && (IsDigit(line[2]) || line[2] == ' ')) {
      const Match m = C10(line, out);
      if (m != Match::kNo) return m;
    }
    Scanner s(line.substr(1));
    TimeNs t;
    if (ScanDateTime(&s, &t)) {
      if (RayCore(s, t, out)) return Match::kYes;
      if (!s.Lit("] ")) return Match::kNo;
      AfterBracketTime(s, t, out);
      return Match::kYes;
    }
    if (LevelFirst(Scanner(line.substr(1)), out) || Kernel(line, out)) return Match::kYes;
    return Match::kNo;
  }
  if (IsSeverity(c) && IsDigit(line[1])) {
    GlogHeader h;
    const Match m = ParseGlogHeader(line, &h);
    if (m != Match::kYes) return m;
    Timed(out, HeaderKind::kGlog, h.time, h.has_year ? Clock::kFull : Clock::kNoYear);
    out->severity = h.severity;
    out->source = h.source;
    out->message = h.message;
    return Match::kYes;
  }
  if (IsDigit(c)) {
    Scanner s(line);
    TimeNs t;
    if (ScanDateTime(&s, &t) && (s.Char(' ') || s.Char('\t'))) {  // Python logging; Ray's `%(asctime)s\t%(levelname)s`
      Timed(out, HeaderKind::kBracketTime, t, Clock::kFull);
      out->message = s.Rest();
      HostKernel(out);
      return Match::kYes;
    }
    return Match::kNo;
  }
  if (IsAlpha(c)) {
    if (c >= 'A' && c <= 'Z' && LevelLogger(line, out)) return Match::kYes;
    if (HostKernel(out)) return Match::kYes;
    if (line[3] == ' ' || (line.size() > 4 && line[4] == ' ')) {
      if (Syslog(line, out)) return Match::kYes;
      *out = Header{.message = line};
    }
  }
  return Match::kNo;
}

}  // namespace denpex::engine
