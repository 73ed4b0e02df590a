#include "parse/lines.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <optional>

#include "parse/event.h"
#include "parse/scan.h"
#include "parse/simd.h"

namespace denpex::engine {
namespace {

// `hh:mm:ss.f` with 1..9 fraction digits, as nanoseconds of the day.
bool TimeOfDay(Scanner* s, TimeNs* ns_of_day) { return ScanTimeOfDay(s, ns_of_day); }

// The number after `key` only when something follows it: a line cut short (a killed process's
// last buffered write, a truncated file) may end inside its last field (`NumelOut=40000` of
// 40000000), and a field the cut reached is not known.
void WholeIntAfter(std::string_view s, std::string_view key, std::int64_t* v) {
  Scanner sc(s);
  std::int64_t n = 0;
  if (sc.SkipPast(key) && sc.Int(&n) && !sc.AtEnd()) *v = n;
}

}  // namespace

Match ParseC10Header(std::string_view line, C10Header* out) {
  Scanner s(line);
  std::int64_t month_day, source_line;
  if (!s.Char('[') || !IsSeverity(s.Peek())) return Match::kNo;
  out->severity = line[1];
  s.Char(out->severity);
  if (!s.Digits(3, 4, &month_day)) return Match::kNo;  // E302 = March 2, E1016 = October 16
  TimeNs ns_of_day;
  if (!s.Char(' ') || !TimeOfDay(&s, &ns_of_day) || !s.Char(' ') ||
      !YearlessTime(month_day / 100, month_day % 100, ns_of_day, &out->time)) {
    return Match::kMalformed;
  }
  out->source = s.Token(":] ");
  if (!s.Char(':') || !s.Digits(1, 7, &source_line) || !s.Char(']')) return Match::kMalformed;
  out->source_line = source_line;
  s.Char(' ');
  out->message = s.Rest();
  return Match::kYes;
}

Match ParsePgPrefix(std::string_view* text, PgPrefix* out) {
  Scanner s(*text);
  if (!s.Char('[')) return Match::kNo;
  bool pg = false;
  if (s.Lit("PG ID ")) {  // torch 2.5+: [PG ID <id> PG GUID <guid>(<desc>) Rank <r>]
    pg = true;
    s.Token(" ]");
    if (!s.Lit(" PG GUID ")) return Match::kMalformed;
    out->uid = s.Token(" (]");
  } else if (s.Lit("PG ")) {  // torch 2.3/2.4: [PG <uid> (<desc>) Rank <r>], [PG  Rank <r>]
    pg = true;
    out->uid = s.Token(" (]");
  }
  if (pg) {
    s.Char(' ');
    if (s.Char('(')) {
      out->desc = s.Token(")");
      if (!s.Char(')')) return Match::kMalformed;
      s.Char(' ');
    }
  }
  std::int64_t r;
  if (!s.Lit("Rank ")) return pg ? Match::kMalformed : Match::kNo;
  if (!s.Digits(1, 9, &r) || !s.Char(']') || r > kMaxRank) return Match::kMalformed;
  out->group_rank = static_cast<std::int32_t>(r);
  s.Char(' ');
  *text = s.Rest();
  return Match::kYes;
}

Match ParseWatchdogTimeout(std::string_view message, WatchdogTimeoutFields* out) {
  static constexpr std::string_view kLead = "Watchdog caught collective operation timeout: WorkNCCL(";
  static constexpr std::string_view kBlocking = "Work WorkNCCL(";
  std::string_view work;
  if (message.starts_with(kLead)) {
    work = message.substr(kLead.size());
  } else if (message.starts_with(kBlocking) && message.find(") timed out in blocking wait") != std::string_view::npos) {
    work = message.substr(kBlocking.size());
    out->blocking = true;
  } else {
    return Match::kNo;
  }
  WholeIntAfter(work, "SeqNum=", &out->seq);  // absent in old builds
  Scanner op(work);
  if (op.SkipPast("OpType=")) {
    out->op = op.Token(",)");
    if (op.AtEnd()) out->op = {};
  }
  if (out->seq < 0 && out->op.empty()) return Match::kMalformed;
  WholeIntAfter(work, "NumelIn=", &out->numel_in);
  WholeIntAfter(work, "NumelOut=", &out->numel_out);
  WholeIntAfter(work, "Timeout(ms)=", &out->timeout_ms);
  WholeIntAfter(work, ") ran for ", &out->ran_for_ms);
  return Match::kYes;
}

Match ParseWatchdogStatus(std::string_view message, WatchdogStatus* out) {
  Scanner s(message);
  if (!s.SkipPast("last enqueued ")) return Match::kNo;
  s.Lit("NCCL ");
  if (!s.Lit("work: ") || !s.Int(&out->last_enqueued)) return Match::kMalformed;
  if (!s.SkipPast("last completed ")) return Match::kMalformed;
  s.Lit("NCCL ");
  if (!s.Lit("work: ") || !s.Int(&out->last_completed)) return Match::kMalformed;
  return Match::kYes;
}

Match ParseGlogHeader(std::string_view line, GlogHeader* out) {
  Scanner s(line);
  std::int64_t date, source_line;
  if (!IsSeverity(s.Peek())) return Match::kNo;
  out->severity = line[0];
  s.Char(out->severity);
  // W0302 = March 2; glog >= 0.6 prints the year too (W20261202 = 2 December 2026).
  const bool dated = line.size() > 9 && line[9] == ' ';
  if (!s.Digits(dated ? 8 : 4, dated ? 8 : 4, &date) || !s.Char(' ')) return Match::kNo;
  TimeNs ns_of_day;
  if (!TimeOfDay(&s, &ns_of_day) || !s.Char(' ')) return dated ? Match::kNo : Match::kMalformed;  // 8 digits alone are no glog stamp
  s.SkipSpaces();  // glog pads the thread id to five columns (`E0728 14:21:02.400169  1573 file.h:87] `)
  if (!s.Digits(1, 20, &out->pid) || !s.Char(' ')) return Match::kMalformed;
  const std::int64_t month = date / 100 % 100, day = date % 100;
  out->has_year = dated;
  if (dated) {
    // a year TimeNs holds, not one a corrupt line makes up (W99991202)
    const std::int64_t year = date / 10000;
    if (year < kMinYear || year > kMaxYear || month < 1 || month > 12 || day < 1 || day > 31)
      return Match::kMalformed;
    out->time =
        DaysFromCivil(static_cast<int>(year), static_cast<int>(month), static_cast<int>(day)) *
            86400 * kNsPerSec +
        ns_of_day;
  } else if (!YearlessTime(month, day, ns_of_day, &out->time)) {
    return Match::kMalformed;
  }
  out->source = s.Token(":] ");
  if (!s.Char(':') || !s.Digits(1, 7, &source_line) || !s.Char(']')) return Match::kMalformed;
  s.Char(' ');
  out->message = s.Rest();
  return Match::kYes;
}

Match ParseWorkerFailed(std::string_view message, WorkerFailedFields* out) {
  Scanner s(message);
  if (!s.Lit("failed (exitcode: ")) return Match::kNo;
  std::int64_t code, local_rank;
  if (!s.Int(&code) || !s.Lit(") local_rank: ") || !s.Digits(1, 9, &local_rank) ||
      !s.Lit(" (pid: ") || !s.Digits(1, 20, &out->pid) || !s.Char(')')) {
    return Match::kMalformed;
  }
  out->exit_code = static_cast<std::int32_t>(code);
  out->local_rank = static_cast<std::int32_t>(local_rank);
  return Match::kYes;
}

Match ParseWorkerSignalled(std::string_view message, std::int64_t* pid,
                           std::string_view* signal) {
  // `Sending process <pid> closing signal <SIG>`; torch 2.6+: `Closing process <pid> via signal <SIG>`.
  Scanner s(message);
  const bool closing = s.Lit("Closing process ");
  if (!closing && !s.Lit("Sending process ")) return Match::kNo;
  if (!s.Digits(1, 20, pid) || !s.Lit(closing ? " via signal " : " closing signal ")) return Match::kMalformed;
  *signal = s.Token(" ");
  return signal->empty() ? Match::kMalformed : Match::kYes;
}

bool SplitTableField(std::string_view line, TableField* out) {
  Scanner s(line);
  s.SkipSpaces();
  out->name = s.Token(" :");
  if (out->name.empty()) return false;
  for (char c : out->name) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  s.SkipSpaces();
  if (!s.Char(':')) return false;
  s.SkipSpaces();
  std::string_view value = s.Rest();
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  out->value = value;
  return true;
}

bool IsLoopbackName(std::string_view host) {
  const auto lower = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    }
    return true;
  };
  return lower(host, "localhost") || lower(host, "localhost.localdomain") || host == "127.0.0.1" || host == "::1";
}

bool ParseTableTime(std::string_view value, TimeNs* out) {
  if (value.size() != 19 || value[10] != '_') return false;
  char buf[19];
  std::memcpy(buf, value.data(), sizeof buf);
  buf[10] = 'T';
  const auto t = ParseRfc3339(std::string_view(buf, sizeof buf));
  if (!t) return false;
  *out = *t;
  return true;
}

bool ParseRankField(std::string_view value, std::int32_t* rank, std::int32_t* local_rank) {
  Scanner s(value);
  std::int64_t r, l;
  if (!s.Digits(1, 9, &r) || !s.Lit(" (local_rank: ") || !s.Digits(1, 9, &l) || !s.Char(')') ||
      r > kMaxRank) {
    return false;
  }
  *rank = static_cast<std::int32_t>(r);
  *local_rank = static_cast<std::int32_t>(l);
  return true;
}

bool ParseExitcodeField(std::string_view value, std::int32_t* exit_code, std::int64_t* pid) {
  Scanner s(value);
  std::int64_t code;
  if (!s.Int(&code) || !s.Lit(" (pid: ") || !s.Digits(1, 20, pid) || !s.Char(')')) return false;
  *exit_code = static_cast<std::int32_t>(code);
  return true;
}

bool IsTableEntryStart(std::string_view line) {
  Scanner s(line);
  std::int64_t k;
  return s.Char('[') && s.Digits(1, 6, &k) && s.Lit("]:") && s.Rest().empty();
}

namespace {

// `YYYY-MM-DD hh:mm:ss` whose date is the cache's: its time, as ParseRfc3339 gives it.
bool CachedStamp(std::string_view stamp, const IterationStampCache& cache, TimeNs* out) {
  if (!cache.valid || stamp.size() != 19 || std::memcmp(stamp.data(), cache.date, sizeof cache.date) != 0 ||
      (stamp[10] != 'T' && stamp[10] != ' ') || stamp[13] != ':' || stamp[16] != ':') {
    return false;
  }
  for (int k : {11, 12, 14, 15, 17, 18}) {
    if (!IsDigit(stamp[k])) return false;
  }
  const int h = (stamp[11] - '0') * 10 + (stamp[12] - '0'), m = (stamp[14] - '0') * 10 + (stamp[15] - '0'),
            sec = (stamp[17] - '0') * 10 + (stamp[18] - '0');
  if (h > 23 || m > 59 || sec > 60) return false;
  *out = cache.midnight + (h * 3600 + m * 60 + sec) * kNsPerSec;
  return true;
}

// `spaces digits` (1 to 12 digits, no digit after them) at line[*i], as Scanner's SkipSpaces
// and Digits(1, 12) read it.
bool SpacedNumber(std::string_view line, std::size_t* i, std::int64_t* v) {
  std::size_t at = *i;
  while (at < line.size() && line[at] == ' ') ++at;
  const std::size_t first = at;
  std::int64_t x = 0;
  for (; at < line.size() && at - first < 12 && IsDigit(line[at]); ++at) x = x * 10 + (line[at] - '0');
  if (at == first || (at < line.size() && IsDigit(line[at]))) return false;
  *i = at;
  *v = x;
  return true;
}

// ParseIteration's common case, a progress line of the cached date, in fewer steps (a 16k-task
// log has millions): ` [<date> hh:mm:ss] iteration <i>/<n>`. False: not that case (the general
// path decides).
bool QuickIteration(std::string_view line, const IterationStampCache& cache, TimeNs* time, std::int64_t* iteration,
                    std::int64_t* total) {
  constexpr std::string_view kWord = "] iteration ";
  constexpr std::size_t kStamp = 19;
  if (!cache.valid || line.size() < 2 + kStamp + kWord.size() + 3 || line[0] != ' ' || line[1] != '[' ||
      std::memcmp(line.data() + 2 + kStamp, kWord.data(), kWord.size()) != 0) {
    return false;
  }
  TimeNs t;
  std::int64_t it, n;
  std::size_t i = 2 + kStamp + kWord.size();
  if (!CachedStamp(line.substr(2, kStamp), cache, &t) || !SpacedNumber(line, &i, &it) || i >= line.size() ||
      line[i] != '/') {
    return false;
  }
  ++i;
  if (!SpacedNumber(line, &i, &n)) return false;
  *time = t;
  *iteration = it;
  *total = n;
  return true;
}

}  // namespace

Match ParseIteration(std::string_view line, TimeNs* time, std::int64_t* iteration,
                     std::int64_t* total, IterationStampCache* cache) {
  if (cache && QuickIteration(line, *cache, time, iteration, total)) return Match::kYes;
  Scanner s(line);
  if (!s.Lit(" [") || !IsDigit(s.Peek())) return Match::kNo;
  // 2026-03-02 09:00:31, or with microseconds (2026-03-02 09:00:31.123456: Megatron-LM's
  // training_log since January 2026).
  std::string_view stamp = s.Rest().substr(0, 19);
  if (s.Rest().size() > 20 && s.Rest()[19] == '.') {
    std::size_t end = 20;
    while (end < s.Rest().size() && end < 29 && IsDigit(s.Rest()[end])) ++end;
    if (end > 20) stamp = s.Rest().substr(0, end);
  }
  Scanner after(s.Rest().substr(stamp.size()));
  if (!after.Lit("] iteration ")) return Match::kNo;
  std::optional<TimeNs> t;
  TimeNs cached;
  if (cache && CachedStamp(stamp, *cache, &cached)) {
    t = cached;
  } else {
    t = ParseRfc3339(stamp);
    if (cache && t && stamp.size() == 19) {  // a plain stamp (no fraction or zone): its date for the next lines
      std::memcpy(cache->date, stamp.data(), sizeof cache->date);
      const auto two = [&](int k) { return (stamp[k] - '0') * 10 + (stamp[k + 1] - '0'); };
      cache->midnight = *t - (two(11) * 3600 + two(14) * 60 + two(17)) * kNsPerSec;
      cache->valid = true;
    }
  }
  after.SkipSpaces();
  if (!t || !after.Digits(1, 12, iteration) || !after.Char('/')) return Match::kMalformed;
  after.SkipSpaces();
  if (!after.Digits(1, 12, total)) return Match::kMalformed;
  *time = *t;
  return Match::kYes;
}

namespace {

// `1502.4` -> 1502400 (microseconds of a value in milliseconds); false when it is not a number.
bool MillisToMicros(std::string_view v, std::int64_t* us) {
  Scanner s(v);
  std::int64_t whole = 0, frac = 0;
  if (!s.Digits(1, 12, &whole)) return false;
  std::int64_t scale = 1000;
  if (s.Char('.')) {
    for (char c : s.Rest()) {
      if (!IsDigit(c)) return false;
      if (scale > 1) frac = frac * 10 + (c - '0'), scale /= 10;
    }
    frac *= scale;
  } else if (!s.Rest().empty()) {
    return false;
  }
  *us = whole * 1000 + frac;
  return true;
}

}  // namespace

Match ParseStepMetrics(std::string_view msg, StepMetricsFields* out) {
  *out = {};
  std::string_view key, value;
  while (NextKeyValue(&msg, &key, &value)) {
    if (key == "step") {
      Scanner s(value);
      if (!s.Digits(1, 12, &out->step)) return Match::kMalformed;
      if (s.Char('/') && !s.Digits(1, 12, &out->total)) return Match::kMalformed;
    } else if (key == "data_ms" && !MillisToMicros(value, &out->data_us)) {
      return Match::kMalformed;
    } else if (key == "step_ms" && !MillisToMicros(value, &out->step_us)) {
      return Match::kMalformed;
    } else if (key == "rank") {
      Scanner s(value);
      if (!s.Digits(1, 7, &out->rank) || !s.AtEnd()) out->rank = -1;  // not a rank: no word on it
    }
  }
  return out->step >= 0 && out->data_us >= 0 && out->step_us >= 0 ? Match::kYes : Match::kNo;
}

namespace {

// A date and time (ScanDateTime: `YYYY-MM-DD hh:mm:ss`, a `T` or `_` between them) at `at` of `s`.
bool IsoStampAt(std::string_view s, std::size_t at) {
  Scanner scan(s.substr(at));
  TimeNs time;
  return ScanDateTime(&scan, &time);
}

}  // namespace

std::size_t GluedRecord(std::string_view line) {
  std::size_t first = std::string_view::npos;
  for (std::size_t dash = line.find('-', 4); dash != std::string_view::npos;
       dash = line.find('-', dash + 1)) {
    if (IsoStampAt(line, dash - 4)) {
      first = dash - 4;
      break;
    }
  }
  if (first == std::string_view::npos) return first;
  constexpr std::string_view kInsideMessage = " \t\"'([{<=/-_:,";
  const std::string_view date = line.substr(first, 10);
  for (std::size_t at = line.find(date, first + 19); at != std::string_view::npos;
       at = line.find(date, at + 1)) {
    if (kInsideMessage.find(line[at - 1]) == std::string_view::npos && IsoStampAt(line, at))
      return at;
  }
  return std::string_view::npos;
}

namespace {

// The fields in NCCL's order, `<ptr> rank <r> nranks <n> cudaDev <d> [nvmlDev <m>] busId <b> commId
// <id> `, read one after another from `rest` (the line past `comm 0x`): what ParseCommInit's
// searches give on such a line (each key's first place is where the order puts it: no key occurs
// inside a number or a token before it), without the six searches. False on any other order.
bool CommInitInOrder(std::string_view rest, CommInitFields* out) {
  Scanner q(rest);
  std::int64_t rank, nranks, dev, nvml;
  std::size_t hex = 0;
  while (hex < rest.size() && IsHexDigit(rest[hex])) ++hex;
  q.Skip(hex);
  if (hex == 0 || !q.Lit(" rank ") || !q.Int(&rank) || !q.Lit(" nranks ") || !q.Int(&nranks) ||
      !q.Lit(" cudaDev ") || !q.Int(&dev)) {
    return false;
  }
  if (q.Lit(" nvmlDev ") && !q.Int(&nvml)) return false;
  if (!q.Lit(" busId ")) return false;
  const std::string_view bus = q.Token(" ");
  if (!q.Lit(" commId ")) return false;
  const std::string_view id = q.Token(" ");
  if (id.empty()) return false;
  out->comm_id = id;
  out->comm_rank = static_cast<std::int32_t>(rank);
  out->nranks = static_cast<std::int32_t>(nranks);
  out->cuda_dev = static_cast<std::int32_t>(dev);
  out->bus_id = bus;
  return true;
}

}  // namespace

std::string_view PastCommCall(std::string_view text) {
  if (!text.starts_with("ncclComm")) return text;
  std::size_t i = 8;
  while (i < text.size() && (IsAlpha(text[i]) || IsDigit(text[i]))) ++i;
  return i < text.size() && text[i] == ' ' ? text.substr(i + 1) : text;
}

Match ParseCommInit(std::string_view line, CommInitFields* out) {
  // The end first: every communicator prints an `Init START` line of the same shape (half of a
  // large job's comm lines), rejected here without a search.
  if (!line.ends_with("Init COMPLETE")) return Match::kNo;
  std::size_t info = Find(line, " NCCL INFO ", 0);
  std::string_view comm;
  for (; info != std::string_view::npos; info = Find(line, " NCCL INFO ", info + 1)) {
    comm = PastCommCall(line.substr(info + 11));
    if (comm.starts_with("comm 0x")) break;
  }
  if (info == std::string_view::npos) return Match::kNo;
  Scanner s(line.substr(line.size() - comm.size() + 7));  // past `comm 0x`
  // The bus id is searched from the line's start: in order only where the head holds none.
  const std::string_view head = line.substr(0, line.size() - s.Rest().size());
  if (!Has(head, " busId ") && CommInitInOrder(s.Rest(), out)) return Match::kYes;
  std::int64_t rank, nranks, dev;
  if (!IntAfter(s.Rest(), " rank ", &rank) || !IntAfter(s.Rest(), " nranks ", &nranks) ||
      !IntAfter(s.Rest(), " cudaDev ", &dev) || !s.SkipPast(" commId ")) {
    return Match::kMalformed;
  }
  out->comm_id = s.Token(" ");
  out->comm_rank = static_cast<std::int32_t>(rank);
  out->nranks = static_cast<std::int32_t>(nranks);
  out->cuda_dev = static_cast<std::int32_t>(dev);
  out->bus_id = TokenAfter(line, " busId ", " ");
  return out->comm_id.empty() ? Match::kMalformed : Match::kYes;
}

bool ParsePythonErrorLine(std::string_view line, std::string_view* type) {
  Scanner s(line);
  const std::string_view name = s.Token(": ");
  if (name.empty() || !(s.Peek() == ':' || s.Rest().empty())) return false;
  const char c0 = name.front();
  if (!((c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z') || c0 == '_')) return false;
  for (char c : name) {
    const bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || IsDigit(c) ||
                      c == '_' || c == '.';
    if (!word) return false;
  }
  const std::string_view last = name.substr(name.rfind('.') + 1);
  if (!(last.ends_with("Error") || last.ends_with("Exception") || last.ends_with("Interrupt") ||
        last == "SystemExit")) {
    return false;
  }
  *type = name;
  return true;
}

namespace {

// The first digit of s[from, end), or `end`. 16 bytes a step (SSE2, which every x86-64 has):
// the plain text between numbers is most of a signature, and the byte loop that copied it one
// character at a time was the largest part of masking.
std::size_t NextDigit(std::string_view s, std::size_t from, std::size_t end) {
  std::size_t i = from;
#ifdef DENPEX_X86
  const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
  for (; i + 16 <= end; i += 16) {
    const __m128i d = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i)), zero);
    const int digits = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d));  // c - '0' <= 9, unsigned
    if (digits != 0) return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(digits)));
  }
#endif
  while (i < end && !IsDigit(s[i])) ++i;
  return i;
}

}  // namespace

// Every error event of a 16k-rank job passes here (68 k on the benchmark incident), so the
// signature is built in the caller's buffer, copying runs of plain text at once.
std::string_view MaskSignature(std::string_view message, SignatureBuffer* buffer) {
  char* out = buffer->text;
  std::size_t n = 0;
  const auto put = [&](std::string_view mask) {
    std::memcpy(out + n, mask.data(), mask.size());
    n += mask.size();
  };
  for (std::size_t i = 0; i < message.size() && n < kMaxSignature;) {
    const char c = message[i];
    if (c == '0' && i + 1 < message.size() && (message[i + 1] == 'x' || message[i + 1] == 'X')) {
      i += 2;
      while (i < message.size() && IsHexDigit(message[i])) ++i;
      put("<hex>");
    } else if (IsDigit(c)) {
      while (i < message.size() && IsDigit(message[i])) ++i;
      put("<n>");
    } else {  // plain text up to the next digit or the cap
      const std::size_t end = NextDigit(message, i + 1, std::min(message.size(), i + (kMaxSignature - n)));
      std::memcpy(out + n, message.data() + i, end - i);
      n += end - i;
      i = end;
    }
  }
  return {out, n};
}

std::string MaskSignature(std::string_view message) {
  SignatureBuffer buffer;
  return std::string(MaskSignature(message, &buffer));
}

}  // namespace denpex::engine
