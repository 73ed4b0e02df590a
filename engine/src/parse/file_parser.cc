#include "parse/file_parser.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <functional>

#include "parse/lines.h"
#include "parse/recognisers.h"
#include "parse/scan.h"
#include "parse/triggers.h"

namespace denpex::engine {
namespace {

constexpr std::string_view kChildFailed = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError";
constexpr int kMaxJoins = 3;                 // physical lines one wrapped watchdog line may span
constexpr std::uint32_t kNoticeSpan = 4;     // lines a multi-line NVRM notice may span

// The banner torchrun prints at start (torch/distributed/run.py), with no logging prefix, even
// in an agent log that says nothing else (its node was lost before any worker failed).
constexpr std::string_view kTorchrunBanner = "Setting OMP_NUM_THREADS environment variable for each process";

// A logger or source file of torch.distributed's launchers (torchrun's run.py, elastic's agent,
// launcher and multiprocessing): the file is a launcher's. Not the process-group library every
// worker logs through (distributed_c10d's store-based barrier, FSDP): a worker's own file.
bool IsAgentSource(std::string_view source) {
  if (Has(source, "distributed_c10d") || Has(source, "fsdp")) return false;
  return Has(source, "torch/distributed") || Has(source, "torch.distributed") || source == "run";
}

// Kernel messages that open with their own words (and so need no kernel-log context).
// A prefix's stamp wins over the time the line's own header states unless it is coarser (no
// fraction of a second: a journal's short-iso stamp against a c10 header's nanoseconds).
bool PrefixTimeWins(const LineOrigin& o, const Header& h) { return o.timed && !(o.coarse && h.clock != Clock::kNone); }

// The lines of a C++ abort that say nothing its `what():` line does not: libstdc++'s `terminate
// called after throwing an instance of '<type>'`, and c10's backtrace of the error (`Exception
// raised from <function> at <file>:<line> (most recent call first):`, `frame #<n>: <symbol> +
// 0x<offset> (0x<address> in <library>)`). Each holds a literal of the exception recogniser
// (`Error`, `Exception`), and a watchdog abort prints them on every rank: in a 16k-rank abort they
// are 5 of the 6 lines per rank read whole to no effect, ~30 % of the srun log's parse. They are
// read past rather than offered to the recognisers and searched for a message behind a prefix.
// Only the whole shape is passed over: a line that goes on after it (a collapsed paste) is read.
bool AbortDetail(std::string_view msg) {
  using namespace std::string_view_literals;
  constexpr std::string_view kTerminate = "terminate called after throwing an instance of '"sv;
  constexpr std::string_view kRaised = "Exception raised from "sv,
                             kFirst = " (most recent call first):"sv;
  constexpr std::string_view kFrame = "frame #"sv;
  if (msg.starts_with(kTerminate)) return msg.find('\'', kTerminate.size()) == msg.size() - 1;
  if (msg.starts_with(kRaised)) return msg.find(kFirst) == msg.size() - kFirst.size();
  if (!msg.starts_with(kFrame)) return false;
  std::size_t i = kFrame.size();
  while (i < msg.size() && IsDigit(msg[i])) ++i;
  if (i == kFrame.size() || !msg.substr(i).starts_with(": "sv) ||
      msg.find(kFrame, i) != std::string_view::npos) {
    return false;
  }
  // ... and it ends with the frame's place: ` (0x<address> in <library>)`.
  std::size_t at = msg.rfind(" (0x"sv);
  if (at == std::string_view::npos || !msg.ends_with(')')) return false;
  for (at += 4; at < msg.size() && IsHexDigit(msg[at]);) ++at;
  return msg.substr(at).starts_with(" in "sv) && msg.find(')', at) == msg.size() - 1;
}

bool LooksKernel(std::string_view msg) {
  using namespace std::string_view_literals;  // lengths known when compiled: no strlen per line
  return msg.starts_with("NVRM: "sv) || msg.starts_with("Out of memory: "sv) || msg.starts_with("Killed process "sv) ||
         msg.starts_with("oom-kill:"sv) || msg.starts_with("Memory cgroup out of memory: "sv);
}

}  // namespace

// A large text's events get room at the start for as many as a large job's abort holds (one per
// ~560 bytes at the end of the 131k-rank srun log), so that a chunk's vector is not copied at
// each doubling (half of the time of Emit, ~4 % of the parse). It is address space: the pages past
// the events written are never touched. A small file grows as it needs.
constexpr std::size_t kBytesPerEventAtMost = 512;
constexpr std::size_t kReservedFrom = std::size_t{1} << 20;  // bytes

LogParser::LogParser(const FileContext& ctx, std::string_view text, std::uint64_t base)
    : ctx_(ctx), text_(text), base_(base) {
  out_.strings.KeepShown(ctx.texts == Texts::kAll);
  if (text.size() >= kReservedFrom) {
    out_.events.reserve(text.size() / kBytesPerEventAtMost);
    out_.strings.Reserve(text.size() / kBytesPerEventAtMost);  // about as many new strings
  }
}

void LogParser::Line(const LineRef& raw, TriggerLevel level, bool opening) {
  level_ = level;
  opening_ = opening;
  ++out_.lines;
  out_.trigger_lines += level == TriggerLevel::kRecord ? 1 : 0;
  if (raw.text.size() > kMaxLineBytes) {
    ++out_.malformed;
    FlushWrapped();
    return;
  }
  const auto cite = static_cast<std::uint32_t>(raw.text.size());
  if (ctx_.prefixes.wrap_width > 0 && JoinHardWrapped(raw, cite)) return;
  if ((open_partials_ > 0 || ctx_.prefixes.cri) && JoinPartial(raw, cite)) return;
  if (has_fragment_ && JoinFragment(raw)) return;
  if (has_wrapped_ && JoinWrapped(raw)) return;
  level_ = level;  // FlushWrapped read the cut line as its own
  if (raw.text.empty()) return;
  out_.last_line = {raw.number, raw.offset, cite};
  const bool progress = level == TriggerLevel::kRecord && !ctx_.every_line && !NeedsEveryLine();
  bool shaped = progress;  // whether ProgressLine may take the line
  if (progress) {
    const Fast fast = FastProgress(raw);
    if (fast == Fast::kNoted) return;
    shaped = fast != Fast::kNoShape;
  }
  // Colour codes a terminal copy kept are read past (a progress line's fast path above needs none).
  LineRef line = raw;
  if (raw.text.find('\x1b') != std::string_view::npos) {
    line.text = WithoutEscapes(raw.text, &clean_[clean_turn_ ^= 1]);
    line.no_label_colon_from = LineRef{}.no_label_colon_from;  // the scan's places were raw's
    shaped = progress;  // another text than the one FastProgress read
  }
  if (level != TriggerLevel::kRecord) {
    if (!SplitInterleaved(line)) Process(line, cite, 0);
    return;
  }
  // A line the pre-filter passed that changes nothing is one it passed in vain (idle_trigger_lines).
  const Footprint before = Now();
  const std::int64_t updates = updates_;
  const std::uint32_t touched = traceback_touched_;
  if (!SplitInterleaved(line) && !(shaped && ProgressLine(line))) Process(line, cite, 0);
  out_.idle_trigger_lines += Now() == before && updates_ == updates && traceback_touched_ == touched ? 1 : 0;
}

// ---- Lines split by the collection --------------------------------------------------------

// A CRI log's `P` line: the runtime cut the program's line (containerd at 16 KiB); its stream's
// next lines continue it up to an `F` one. The joined line is read as one, cited at its head.
bool LogParser::JoinPartial(const LineRef& line, std::uint32_t cite) {
  constexpr int kMaxPieces = 64;
  char stream;
  bool partial;
  std::size_t content;
  if (!CriLine(line.text, &stream, &partial, &content)) return false;
  Partial& open = partials_[stream == 'e' ? 1 : 0];
  if (!open.open) {
    if (!partial) return false;  // a whole line
    open = {.text = std::string(line.text), .head = line, .cite = cite, .pieces = 1, .open = true};
    ++open_partials_;
    return true;
  }
  open.text.append(line.text.substr(content));
  ++open.pieces;
  ++out_.joined;
  if (partial && open.pieces < kMaxPieces && open.text.size() < kMaxLineBytes) return true;
  FlushPartial(&open);
  return true;
}

void LogParser::FlushPartial(Partial* open) {
  if (!open->open) return;
  open->open = false;
  --open_partials_;
  level_ = TriggerLevel::kRecord;
  std::string_view text = open->text;
  if (text.find('\x1b') != std::string_view::npos) text = WithoutEscapes(text, &clean_[clean_turn_ ^= 1]);
  Process({text, open->head.offset, open->head.number}, open->cite, 0);
}

// A terminal wraps a line at column 0: a piece indented as its head line is indented was
// indented by the paste (every physical line), not by the program. Srun's right-aligned task
// labels (`     502: `, `    2315: `) hide such an indent from the quote sniff; the spaces both
// the head and the piece start with are peeled from the piece.
namespace {
void PeelSharedIndent(std::string_view head, std::string_view* piece) {
  std::size_t n = 0;
  while (n < head.size() && n < piece->size() && (head[n] == ' ' || head[n] == '\t') && (*piece)[n] == head[n]) ++n;
  piece->remove_prefix(n);
}
}  // namespace

// A terminal copy hard-wrapped at ctx_.prefixes.wrap_width bytes: a line of exactly that length
// is continued by the next line when that one starts no line of its own (its quoting peeled).
bool LogParser::JoinHardWrapped(const LineRef& raw, std::uint32_t cite) {
  constexpr int kMaxPieces = 64;
  const std::uint32_t width = ctx_.prefixes.wrap_width;
  LineRef line = raw;
  if (raw.text.find('\x1b') != std::string_view::npos) line.text = WithoutEscapes(raw.text, &clean_[clean_turn_ ^= 1]);
  if (wrap_.open) {
    if (!line.text.empty() &&
        !StartsOwnLine(line.text, ctx_.prefixes, std::string_view(wrap_.text).substr(wrap_.last))) {
      std::string_view tail = line.text;
      PeelPaste(&tail, ctx_.prefixes);
      if (ctx_.prefixes.Quote().empty()) PeelSharedIndent(wrap_.text, &tail);
      wrap_.last = wrap_.text.size();
      wrap_.text.append(tail);
      ++wrap_.pieces;
      ++out_.joined;
      if (line.text.size() == width && wrap_.pieces < kMaxPieces && wrap_.text.size() < kMaxLineBytes) return true;
      FlushHardWrapped();
      return true;
    }
    FlushHardWrapped();
  }
  if (line.text.size() != width) return false;
  wrap_ = {.text = std::string(line.text), .head = line, .cite = cite, .pieces = 1, .open = true};
  return true;
}

void LogParser::FlushHardWrapped() {
  if (!wrap_.open) return;
  wrap_.open = false;
  const TriggerLevel level = level_;
  level_ = TriggerLevel::kRecord;
  out_.last_line = {wrap_.head.number, wrap_.head.offset, wrap_.cite};
  Process({wrap_.text, wrap_.head.offset, wrap_.head.number}, wrap_.cite, 0);
  level_ = level;
}

void LogParser::Process(const LineRef& line, std::uint32_t cite_length, int joins) {
  Parsed p{.ref = line, .cite_length = cite_length};
  std::string_view body = line.text;
  StripPrefixes(&body, ctx_.prefixes, &p.origin);
  if (p.origin.malformed) {
    ++out_.malformed;
    return;
  }
  if (!anchor_shape_.empty()) PeelAnchoredPrefix(&body);
  Read(p, body, joins, false);
}

void LogParser::Read(Parsed& p, std::string_view body, int joins, bool anchored) {
  if (body.starts_with("{\"message\": ") && ErrorFile(p, body)) return;
  p.rank = p.origin.rank >= 0 ? p.origin.rank : ctx_.name_rank;
  if (p.origin.rank >= 0) NoteRank(p.origin.rank);
  out_.task_labels |= p.origin.task >= 0 && level_ != TriggerLevel::kNone;
  out_.local_tags |= p.origin.local_rank >= 0;
  out_.top_local_tag = std::max(out_.top_local_tag, p.origin.local_rank);
  if (ParseHeader(body, &p.header) == Match::kMalformed && level_ == TriggerLevel::kRecord && !anchored) ++out_.malformed;
  NoteTime(p);
  NoteKernel(p.header, opening_);
  // Only a line with a record trigger and no header that names its message may hide one.
  const HeaderKind k = p.header.kind;
  // `denpex run`'s own lines hide none: the command line one quotes is not the command's output.
  const bool may_hide =
      !anchored && joins == 0 && level_ == TriggerLevel::kRecord &&
      (k == HeaderKind::kNone || k == HeaderKind::kBracketTime || k == HeaderKind::kPython) &&
      !p.header.message.starts_with(kWrapperTag);
  Footprint before{};
  if (may_hide) before = Now();
  if (may_hide && k == HeaderKind::kNone && !NeedsEveryLine() && AbortDetail(p.header.message))
    return;
  if (p.header.kind == HeaderKind::kC10 && p.header.source.starts_with("ProcessGroupNCCL")) {
    Watchdog(p, joins);
  } else {
    Dispatch(p);
  }
  if (may_hide && !(Has(body, " store") && BarrierRank(body)) && Now() == before) Anchor(p, body);
}

// torch's `_store_based_barrier` (torch <= 2.0 at every init_process_group, later releases with
// TORCH_DIST_INIT_BARRIER=1) logs at INFO, under whatever logging format the script set:
//   `Added key: store_based_barrier_key:1 to store for rank: 3`
//   `Rank 3: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes.`
// Each names the rank of the process that prints it. Not an event: a statement of whose lines
// these are.
bool LogParser::BarrierRank(std::string_view body) {
  constexpr std::string_view kAdded = " to store for rank: ",
                             kCompleted = ": Completed store-based barrier for key:";
  std::int32_t rank = -1;
  if (const std::size_t at = body.find(kAdded);
      at != std::string_view::npos && Has(body.substr(0, at), "Added key: ")) {
    const std::string_view digits = body.substr(at + kAdded.size());
    std::int32_t r = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), r);
    if (ec == std::errc() && end != digits.data()) rank = r;
  } else if (const std::size_t done = body.find(kCompleted); done != std::string_view::npos) {
    std::size_t begin = done;
    while (begin > 0 && IsDigit(body[begin - 1])) --begin;
    std::int32_t r = 0;
    if (begin < done && begin >= 5 && body.substr(begin - 5, 5) == "Rank " &&
        std::from_chars(body.data() + begin, body.data() + done, r).ec == std::errc()) {
      rank = r;
    }
  }
  if (rank < 0 || rank > kMaxRank) return false;
  if (std::find(out_.barrier_ranks.begin(), out_.barrier_ranks.end(), rank) ==
      out_.barrier_ranks.end()) {
    out_.barrier_ranks.insert(
        std::upper_bound(out_.barrier_ranks.begin(), out_.barrier_ranks.end(), rank), rank);
  }
  return true;
}

// torchrun's error file: the worker's exception (its first line, `Type: text`) is read as the
// line it would have been, stamped with the file's timestamp (whole seconds: a finer time a
// line states wins). The file names no rank: the event's rank is what the message says, or the
// file's hint.
bool LogParser::ErrorFile(Parsed& p, std::string_view body) {
  ErrorRecord record;
  if (!ReadErrorFile(body, &record) || record.message.empty()) return false;
  error_file_ = std::move(record.message);
  std::string_view first = error_file_;
  first = first.substr(0, first.find('\n'));
  if (record.timestamp > 0 && !p.origin.timed) {
    p.origin.time = record.timestamp * kNsPerSec;
    p.origin.timed = true;
    p.origin.coarse = true;
  }
  Read(p, first, 0, true);
  return true;
}

// ---- Messages behind a prefix the parser does not know ---------------------------------------

namespace {

// Where a high-value message starts when it is not at the start of its line: its literal, and
// how far before it the message begins.
enum class Back : std::uint8_t {
  kNone,   // at the literal
  kToken,  // at the start of the word that holds it (`torch.OutOfMemoryError: `)
  kNccl,   // at the `host:pid:tid [dev] ` before it
  kBlank,  // at the spaces before it (`  what():  `)
  kStamp,  // at the `[` of the bracketed stamp right before it (`[2023-04-14 13:11:27,879] [INFO] [`)
};
struct AnchorRow {
  std::string_view literal;
  Back back;
};
constexpr AnchorRow kAnchors[] = {
    {"[rank", Back::kNone},  // torch's rank prefix, and the c10 header after it
    {"[E", Back::kNone}, {"[F", Back::kNone}, {"[W", Back::kNone},  // c10 headers
    {"Traceback (most recent call last):", Back::kNone},
    {"torch.distributed.elastic.multiprocessing.errors.ChildFailedError", Back::kNone},
    {"failed (exitcode: ", Back::kNone}, {"Sending process ", Back::kNone},  // torchrun's agent
    {" NCCL WARN ", Back::kNccl},
    {"NVRM: Xid", Back::kNone},
    {"Out of memory: ", Back::kNone}, {"Memory cgroup out of memory: ", Back::kNone},
    {"oom-kill:", Back::kNone}, {"Killed process ", Back::kNone},
    {"srun: ", Back::kNone}, {"salloc: ", Back::kNone}, {"slurmstepd: ", Back::kNone},
    {"what():", Back::kBlank},
    {"Error:", Back::kToken}, {"Exception:", Back::kToken},  // a Python exception's closing line
    {"CUDA error: ", Back::kNone}, {"CUDA out of memory. ", Back::kNone},  // torch's messages, typeless
    {"expected to be in states [<", Back::kNone}, {"NCCL error in: ", Back::kNone},  // FSDP's, torch's NCCL
    {"got mixed torch.Tensor and DTensor", Back::kNone},  // DTensor's (FSDP2, TP)
    {"gloo/transport/", Back::kNone},  // gloo's enforce message cut of its head
    {"] [INFO] [", Back::kStamp}, {"] [WARNING] [", Back::kStamp}, {"] [ERROR] [", Back::kStamp},  // DeepSpeed's header
    {"Assertion `", Back::kNone},  // a device assert (its path and kernel before it are read past)
    {"Warning ", Back::kNone},  // a Kubernetes event row (`kubectl get events`, describe's table)
    {"back-off ", Back::kNone},  // the kubelet's CrashLoopBackOff message quoted by a tool
    {"The node was low on resource: ", Back::kNone},  // the kubelet's eviction message quoted alone
    {"(raylet) ", Back::kNone}, {"A worker died or was killed", Back::kNone},  // Ray's word on a dead worker
};

std::size_t BackUp(std::string_view body, std::size_t at, Back back) {
  switch (back) {
    case Back::kNone:
      return at;
    case Back::kToken: {  // the exception type's dotted name (`torch.OutOfMemoryError: `)
      while (at > 0 && (IsAlpha(body[at - 1]) || IsDigit(body[at - 1]) || body[at - 1] == '_' || body[at - 1] == '.')) --at;
      return at > 0 && body[at - 1] == ':' ? std::string_view::npos : at;  // `c10::Error::Error(`: C++ names
    }
    case Back::kNccl: {  // `host:pid:tid [dev] ` (or `host [dev] `): the host name's first byte
      const std::size_t dev = at == 0 ? std::string_view::npos : body.rfind(" [", at - 1);
      if (dev == std::string_view::npos || dev == 0) return std::string_view::npos;
      std::size_t start = dev;
      while (start > 0 && (IsDigit(body[start - 1]) || body[start - 1] == ':')) --start;  // `:pid:tid`
      while (start > 0 && (IsAlpha(body[start - 1]) || IsDigit(body[start - 1]) || body[start - 1] == '-' ||
                           body[start - 1] == '.' || body[start - 1] == '_')) {
        --start;
      }
      return start == dev ? std::string_view::npos : start;
    }
    case Back::kBlank:
      while (at > 0 && body[at - 1] == ' ') --at;
      return at;
    case Back::kStamp: {
      const std::size_t open = body.rfind('[', at);
      return open == std::string_view::npos ? std::string_view::npos : open;
    }
  }
  return at;
}

// An opaque prefix ends where a message can begin: after a separator and a space (`- `, `| `,
// `] `, `: `, `> `, `+ ` of a diff), a tab, a colon, a quote, backtick or square bracket that opens
// the quoted message, a colour code whose ESC byte a paste lost (`[0m `), a number (`[80746] `, `80746:`), or a logging level (`2024-06-01 09:00:21,123 ERROR `);
// a bracketed header (`next` is `[`) may follow a bracket with no space (a progress bar's
// `...1.37it/s][E ProcessGroupNCCL.cpp:458]`). A word of a sentence (`failed with ValueError: `)
// is no prefix.
bool EndsPrefix(std::string_view prefix, char next) {
  if (prefix.empty()) return false;
  const char last = prefix.back();
  if (last == ']' && next == '[') return true;  // however long the bar before it
  if (prefix.size() > 160) return false;
  if (last == '\t' || last == ':' || last == '`' || last == '"' || last == '\'' || last == '*' || last == '_' || last == '[') {
    return true;  // `*`, `_`: Markdown emphasis; `[`: a message in square brackets (`[ValueError: ...]`)
  }
  if (prefix.ends_with("\xe2\x80\x9c")) return true;  // a typographic opening quote `“`
  if (prefix.ends_with("...")) return true;  // what the quoter elided
  if (prefix.ends_with("\xef\xbc\x9a")) return true;  // a full-width colon `：` (CJK prose before a quoted error)
  if (last != ' ') return false;
  std::string_view head = prefix.substr(0, prefix.size() - 1);
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (head.empty()) return true;  // indentation (a Markdown code block, a log viewer's column)
  const char c = head.back();
  if (c == '-' || c == '|' || c == ']' || c == ':' || c == '>' || c == ')' || c == '+' || IsDigit(c)) return true;
  if (c == 'm') {  // a colour code whose ESC byte the paste lost (`[33m(raylet)[0m A worker died ...`)
    std::size_t i = head.size() - 1;
    while (i > 0 && (IsDigit(head[i - 1]) || head[i - 1] == ';')) --i;
    if (i > 0 && i < head.size() - 1 && head[i - 1] == '[') return true;
  }
  // A quote or parenthesis opened with a space before the message (`" CUDA out of ...`, `( RuntimeError: `),
  // and prose in another script (`PLE运行 RuntimeError: `): no word of an English sentence.
  if (c == '"' || c == '(' || static_cast<unsigned char>(c) >= 0x80) return true;
  const std::size_t sp = head.find_last_of(" \t[");
  const std::string_view word = sp == std::string_view::npos ? head : head.substr(sp + 1);
  return word == "ERROR" || word == "CRITICAL" || word == "FATAL" || word == "WARNING" || word == "INFO" ||
         word == "DEBUG" || word == "E" || word == "W" || word == "F";
}

// Where the message of a row's literal found at `at` begins, when what stands before it can end an
// opaque prefix (npos: it cannot).
std::size_t MessageStart(std::string_view body, std::size_t at, const AnchorRow& row) {
  if (row.literal.size() == 2 && at + 2 < body.size() && !IsDigit(body[at + 2]) && body[at + 2] != ' ') {
    return std::string_view::npos;  // `[E` of a word, not a c10 header
  }
  const std::size_t start = BackUp(body, at, row.back);
  if (start == std::string_view::npos || start == 0 || !EndsPrefix(body.substr(0, start), body[start])) {
    return std::string_view::npos;
  }
  return start;
}

// Which rows' literals open with a pair of bytes: Anchor compares literals only where the pair
// opens one, in one pass over the line (a search per row was ~5 % of the benchmark's parse: the
// lines with a trigger that nothing read are a watchdog abort's dozens of lines per rank).
class AnchorOpeners {
 public:
  static_assert(std::size(kAnchors) <= 64, "a row is a bit of a mask");
  AnchorOpeners() {
    for (std::size_t r = 0; r < std::size(kAnchors); ++r) {
      first_[static_cast<unsigned char>(kAnchors[r].literal[0])] |= std::uint64_t{1} << r;
      second_[static_cast<unsigned char>(kAnchors[r].literal[1])] |= std::uint64_t{1} << r;
    }
  }
  // Bit r: row r's literal opens with `a` then `b`.
  std::uint64_t Rows(char a, char b) const {
    return first_[static_cast<unsigned char>(a)] & second_[static_cast<unsigned char>(b)];
  }

 private:
  std::array<std::uint64_t, 256> first_{};   // by a literal's first byte
  std::array<std::uint64_t, 256> second_{};  // by its second
};

// A prefix's shape: its digits all one digit, so that line numbers and stamps of the same
// prefix compare equal.
std::string Shape(std::string_view prefix) {
  std::string shape(prefix);
  for (char& c : shape) c = IsDigit(c) ? '0' : c;
  return shape;
}

}  // namespace

LogParser::Footprint LogParser::Now() const {
  return {out_.events.size(), tracebacks_.size(), unraisable_.size(), table_.open, has_wrapped_, has_pending_gpu_,
          out_.agent};
}

// A line with a record trigger that nothing read: the message may sit behind a prefix the parser
// does not know (a logging format, a line number, a collector's column). The earliest place where
// a high-value message begins after what can end such a prefix is read as the line's message,
// with what the known prefixes said; a record it opens (a traceback, the torchrun table) peels a
// prefix of the same shape from the record's next lines.
void LogParser::Anchor(Parsed& p, std::string_view body) {
  constexpr std::size_t kMaxCandidates = 8;
  constexpr std::size_t kRows = std::size(kAnchors);
  // Per row, where the message of its first literal (after the line's first byte) that can end a
  // prefix begins; npos: none.
  std::array<std::size_t, kRows> first;
  first.fill(std::string_view::npos);
  static const AnchorOpeners openers;
  const std::uint64_t all = kRows == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << kRows) - 1;
  std::uint64_t found = 0;  // rows whose place is known
  for (std::size_t at = 1; at + 1 < body.size() && found != all; ++at) {
    for (std::uint64_t rows = openers.Rows(body[at], body[at + 1]) & ~found; rows != 0; rows &= rows - 1) {
      const auto r = static_cast<std::size_t>(std::countr_zero(rows));
      if (!body.substr(at).starts_with(kAnchors[r].literal)) continue;
      first[r] = MessageStart(body, at, kAnchors[r]);
      found |= first[r] != std::string_view::npos ? std::uint64_t{1} << r : 0;
    }
  }
  std::size_t starts[kMaxCandidates];
  std::size_t n = 0;
  for (const std::size_t start : first) {  // in the rows' order
    if (start == std::string_view::npos) continue;
    if (n < kMaxCandidates && std::find(starts, starts + n, start) == starts + n) {  // kept in order
      std::size_t k = n++;
      for (; k > 0 && starts[k - 1] > start; --k) starts[k] = starts[k - 1];
      starts[k] = start;
    }
  }
  const Parsed line = p;
  for (std::size_t i = 0; i < n; ++i) {
    p = line;
    std::string_view message = body.substr(starts[i]);
    LineOrigin more = p.origin;  // the known prefixes after the opaque one (`[rank3]:`)
    StripPrefixes(&message, PrefixPolicy{.mpi_tag_space = ctx_.prefixes.mpi_tag_space}, &more);
    if (more.malformed || message.empty()) continue;
    p.origin = more;
    const Footprint before = Now();
    if (message.starts_with("failed (exitcode: ") || message.starts_with("Sending process ")) {
      Recognised r;
      p.header = Header{.message = message};
      p.rank = p.origin.rank >= 0 ? p.origin.rank : ctx_.name_rank;
      if (Recognise(kAgentQuote, message, &out_.strings, &r)) {
        out_.agent = true;
        Emit(p, std::move(r));
      }
    } else {
      Read(p, message, 0, true);
    }
    if (Now() == before) continue;
    if (table_.open || !tracebacks_.empty()) anchor_shape_ = Shape(body.substr(0, starts[i]));
    return;
  }
}

// While a record opened behind an opaque prefix is open, its lines lose a prefix of that shape.
void LogParser::PeelAnchoredPrefix(std::string_view* body) {
  if (!table_.open && tracebacks_.empty()) {
    anchor_shape_.clear();
    return;
  }
  const std::size_t n = anchor_shape_.size();
  if (body->size() < n) return;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = (*body)[i];
    if ((IsDigit(c) ? '0' : c) != anchor_shape_[i]) return;
  }
  body->remove_prefix(n);
}

void LogParser::NoteRank(std::int32_t rank) {
  if (rank == last_rank_) return;
  last_rank_ = rank;
  const auto word = static_cast<std::size_t>(rank) / 64;
  if (word >= prefix_rank_bits_.size()) prefix_rank_bits_.resize(word + 1);
  prefix_rank_bits_[word] |= std::uint64_t{1} << (rank % 64);
}

void LogParser::NoteTime(const Parsed& p) {
  const bool dating = out_.first_dated == 0 && (level_ == TriggerLevel::kRecord || opening_);
  if (p.origin.timed && dating) out_.first_dated = p.origin.time;
  if (PrefixTimeWins(p.origin, p.header)) {
    last_time_ = p.origin.time;
    last_clock_ = Clock::kFull;
    ClearGaps();
  } else if (p.header.clock != Clock::kNone) {
    if (p.header.clock == Clock::kFull && dating) out_.first_dated = p.header.time;
    last_time_ = p.header.time;
    last_clock_ = p.header.clock;
    ClearGaps();
  } else if (p.origin.yearless) {
    last_time_ = p.origin.yearless_time;
    last_clock_ = Clock::kNoYear;
    ClearGaps();
  }
}

void LogParser::PrefixLine(const LineRef& line) {
  ++out_.lines;
  if (line.text.size() > kMaxLineBytes) {
    ++out_.malformed;
    return;
  }
  std::string_view body = line.text;
  LineOrigin o;
  StripPrefixes(&body, ctx_.prefixes, &o);
  if (o.malformed) {
    ++out_.malformed;
    return;
  }
  if (o.rank >= 0) NoteRank(o.rank);
  out_.task_labels |= o.task >= 0;
  out_.local_tags |= o.local_rank >= 0;
  out_.top_local_tag = std::max(out_.top_local_tag, o.local_rank);
}

namespace {

bool DigitsAround(std::string_view s, std::size_t at, char sep, int groups) {
  // `dd<sep>dd` (groups 2) or `dd<sep>dd<sep>dd` (groups 3) with `s[at]` the first separator.
  if (at < 2 || !IsDigit(s[at - 1]) || !IsDigit(s[at - 2])) return false;
  for (int g = 1; g < groups; ++g, at += 3) {
    if (at + 2 >= s.size() || !IsDigit(s[at + 1]) || !IsDigit(s[at + 2])) return false;
    if (g + 1 < groups && (at + 3 >= s.size() || s[at + 3] != sep)) return false;
  }
  return true;
}

// Every stamp the prefixes and headers read holds a time of day `hh:mm:ss` or a date
// `YYYY-MM-DD` (a collector's minute-resolution stamp): a line with neither has none.
bool MayHoldStamp(std::string_view line) {
  for (const char sep : {':', '-'}) {
    for (std::size_t at = line.find(sep); at != std::string_view::npos; at = line.find(sep, at + 1)) {
      if (DigitsAround(line, at, sep, sep == ':' ? 3 : 2)) return true;
    }
  }
  return false;
}

// The stamp NoteTime would take from a line, if any.
bool LineStamp(std::string_view line, const PrefixPolicy& policy, TimeNs* time, Clock* clock) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line.size() > kMaxLineBytes || !MayHoldStamp(line)) return false;
  LineOrigin o;
  StripPrefixes(&line, policy, &o);
  if (o.malformed) return false;
  Header h;
  ParseHeader(line, &h);
  if (PrefixTimeWins(o, h)) {
    *time = o.time;
    *clock = Clock::kFull;
    return true;
  }
  if (h.clock == Clock::kNone && o.yearless) {
    *time = o.yearless_time;
    *clock = Clock::kNoYear;
    return true;
  }
  *time = h.time;
  *clock = h.clock;
  return h.clock != Clock::kNone;
}

}  // namespace

void LogParser::DateLine(const LineRef& line) {
  if (out_.first_dated != 0 || line.text.empty() || line.text.size() > kMaxLineBytes) return;
  std::string_view body = line.text;
  LineOrigin o;
  StripPrefixes(&body, ctx_.prefixes, &o);
  if (o.malformed) return;
  Header h;
  ParseHeader(body, &h);
  NoteKernel(h, true);
  if (o.timed) {  // a collector's stamp (journal ISO, kubectl --timestamps) carries the year too
    out_.first_dated = o.time;
  } else if (h.clock == Clock::kFull) {
    out_.first_dated = h.time;
  }
}

// Only the kernel's lines: a journal's other units (`host python3[812]: `) may be relayed from
// other machines (a login node's journal of srun's tasks), the kernel's never are.
void LogParser::NoteKernel(const Header& h, bool opening) {
  const bool kernel =
      h.kind == HeaderKind::kKernel || (h.kind == HeaderKind::kSyslog && h.source == "kernel");
  if (opening) {
    ++opening_read_;
    opening_kernel_ += kernel ? 1 : 0;
  }
  if (!kernel || h.host.empty()) return;
  if (out_.kernel_host.empty()) {
    out_.kernel_host.assign(h.host);
  } else if (out_.kernel_host != h.host) {
    out_.kernel_hosts_differ = true;
  }
}

void LogParser::Gap(std::string_view lines) {
  if (lines.empty()) return;
  if (gaps_begin_ == nullptr) gaps_begin_ = lines.data();
  gaps_end_ = lines.data() + lines.size();
}

void LogParser::Skip(std::int64_t lines, std::int64_t long_lines) {
  out_.lines += lines;
  out_.malformed += long_lines;
}

bool LastStampIn(std::string_view lines, const PrefixPolicy& prefixes, TimeNs* time, Clock* clock) {
  // The last line that may hold a stamp, then the one before it, until one does.
  for (std::size_t end = lines.size(); end > 0;) {
    const std::size_t at = LastStampPattern(lines, end);
    if (at == std::string_view::npos) return false;
    const std::size_t nl = lines.rfind('\n', at);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    const std::size_t stop = lines.find('\n', at);
    if (LineStamp(lines.substr(begin, (stop == std::string_view::npos ? lines.size() : stop) - begin), prefixes, time, clock)) {
      return true;
    }
    end = begin;
  }
  return false;
}

void LogParser::ResolveGaps() {
  if (gaps_begin_ == nullptr) return;
  const std::string_view gap(gaps_begin_, static_cast<std::size_t>(gaps_end_ - gaps_begin_));
  ClearGaps();
  TimeNs t;
  Clock c;
  if (LastStampIn(gap, ctx_.prefixes, &t, &c)) {
    last_time_ = t;
    last_clock_ = c;
  }
}

Event LogParser::NewEvent(const Parsed& p, EventDetail detail) {
  Event e;
  PlaceEvent(p, &e);
  e.detail = std::move(detail);
  return e;
}

void LogParser::PlaceEvent(const Parsed& p, Event* e) {
  e->time_borrowed = false;
  e->time_collected = false;
  if (PrefixTimeWins(p.origin, p.header)) {
    e->time = p.origin.time;
    e->clock = Clock::kFull;
    e->time_collected = p.header.clock == Clock::kNone && p.origin.collected;
  } else if (p.header.clock != Clock::kNone) {
    e->time = p.header.time;
    e->clock = p.header.clock;
  } else if (p.origin.yearless) {
    e->time = p.origin.yearless_time;
    e->clock = Clock::kNoYear;
    e->time_collected = p.origin.collected;
  } else {
    ResolveGaps();  // the lines skipped since the last stamp may hold a later one
    e->time = 0;
    e->clock = Clock::kNone;
    if (last_clock_ != Clock::kNone) {
      e->time = last_time_;
      e->clock = last_clock_;
      e->time_borrowed = true;
    }
  }
  e->rank = p.rank;
  e->local_rank = p.origin.local_rank >= 0 ? p.origin.local_rank : ctx_.local_rank;
  e->task = p.origin.task;
  const std::string_view host = p.origin.host.empty() ? p.header.host : p.origin.host;
  e->host = host.empty() ? kNoStr : out_.strings.Intern(host);
  e->file = ctx_.file;
  e->line = p.ref.number;
  e->offset = p.ref.offset;
  e->length = p.cite_length;
}

void LogParser::Emit(const Parsed& p, Recognised&& r) {
  Event e = NewEvent(p, std::move(r.detail));
  if (r.timed && (e.clock == Clock::kNone || e.time_borrowed || e.time_collected)) {  // the time the line states
    e.time = r.time;
    e.clock = Clock::kFull;
    e.time_borrowed = false;
    e.time_collected = false;
  }
  e.family = r.family;
  e.kind = r.kind;
  if (e.rank < 0 && r.rank >= 0) e.rank = r.rank;
  if (!r.host.empty() && e.host == kNoStr) e.host = out_.strings.Intern(r.host);
  if (r.error) {
    SignatureBuffer buffer;
    e.signature = out_.strings.Intern(MaskSignature(p.header.message.substr(0, kMaxKeptText), &buffer));
  }
  out_.untimed += e.clock == Clock::kNone || e.time_borrowed ? 1 : 0;
  // An abort that quotes its timeout, on a line that names no rank (libstdc++'s `what():`, a paste):
  // the timeout as its own event. A rank's own stream printed the timeout before the abort; a
  // rank-named quote is left as it is, so that a file read in chunks (ingest/chunks.cc) gives the
  // same events as read whole.
  const bool quotes_timeout = e.kind == Kind::kWatchdogTerminated && e.rank < 0 && e.task < 0 && e.local_rank < 0;
  out_.events.push_back(std::move(e));
  if (quotes_timeout) EmbeddedTimeout(p, p.header.message);
}

namespace {

// Where a message after a logging header stands (recognisers.h).
Places HeadedPlaces(const Header& h) {
  const bool error = h.severity == 'E' || h.severity == 'F';
  Places where = 0;
  switch (h.kind) {
    case HeaderKind::kC10:
      where = kC10;
      if (error) where |= kC10Error;
      break;
    case HeaderKind::kGlog:
    case HeaderKind::kPython:
      if (h.kind == HeaderKind::kGlog && h.message.starts_with("[c10d] ")) {
        where = kC10;  // c10d's own lines, read as under the c10 header (`[W socket.cpp:426]`)
        break;
      }
      where = kLog;
      if (IsAgentSource(h.source)) {
        where |= kAgentLog;
      } else if (h.source.ends_with(".go")) {
        where |= kGoLog;
      } else if (error) {
        where |= kErrorLog;
      }
      break;
    case HeaderKind::kDeepSpeed:
      where = kDeepSpeedLog;
      break;
    case HeaderKind::kRay:
      where = kRayLog;
      if (h.severity == 'E') where |= kRayError;
      break;
    case HeaderKind::kKernel:
    case HeaderKind::kSyslog:
      where = kKernelLog;
      break;
    case HeaderKind::kBracketTime:
    case HeaderKind::kNone:
      break;
  }
  return where;
}

// Where a message with no logging header (or only a bracketed time) stands, by its first byte;
// `msg` is not empty.
Places UnheadedPlaces(std::string_view msg, const Header& h, bool kernel_log) {
  const char c = msg[0];
  if (c == ' ' || c == '\t') return kIndented;
  if (c == '-') return kDash;
  if (IsAlpha(c) || IsDigit(c)) {
    Places where = kText;
    if (kernel_log || LooksKernel(msg)) where |= kKernelText;
    if (h.kind == HeaderKind::kBracketTime) where |= kStampedText;
    return where;
  }
  if (c == '[') return kSquare;
  if (c == '*' || c == '_') return kEmphasis;
  if (c == '/' || c == '.') return kPath;
  if (c == '|') return kPipe;
  return kOtherStart;
}

}  // namespace

void LogParser::Dispatch(const Parsed& p) {
  const Header& h = p.header;
  const std::string_view msg = h.message;
  if (has_pending_gpu_ && ConfirmFallenOff(p)) return;
  if (h.kind == HeaderKind::kNone || h.kind == HeaderKind::kBracketTime) {
    Unheaded(p);
    return;
  }
  if (table_.open) {
    FlushEntry();
    table_.open = false;
  }
  const Places where = HeadedPlaces(h);
  // c10d's server socket failing to bind and listen, a warning, is torchrun's c10d rendezvous
  // trying to host the store and falling back to a client: the file is its agent's console.
  const bool c10d_bind = h.kind == HeaderKind::kGlog && msg.starts_with("[c10d] The server socket has failed to");
  if ((where & kAgentLog) != 0 || c10d_bind) out_.agent = true;
  Recognised r;
  if (!Recognise(where, msg, &out_.strings, &r)) return;
  if (r.kind == Kind::kFallenOffBus && !Has(msg, "fallen off the bus")) {  // wait for the notice's last line
    HoldPendingGpu(p, std::move(r));
    return;
  }
  Emit(p, std::move(r));
}

// Megatron's iteration line: a rank's latest replaces its earlier one (progress noise would
// otherwise be millions of events; the latest is what shows where a rank stopped). The record
// becomes the event PlaceEvent and Emit would make of the line (PlaceProgress).
void LogParser::IterationLine(const Parsed& p) {
  TimeNs t;
  std::int64_t iteration, total;
  const Match m = ParseIteration(p.header.message, &t, &iteration, &total, &iteration_stamps_);
  out_.malformed += m == Match::kMalformed ? 1 : 0;
  if (m != Match::kYes) return;
  ++updates_;
  if (out_.first_dated == 0) out_.first_dated = t;
  iterations_.Update({.time = p.origin.timed && !p.origin.coarse ? p.origin.time : t,  // as PlaceEvent
                      .iteration = iteration,
                      .total = total,
                      .offset = p.ref.offset,
                      .line = p.ref.number,
                      .length = p.cite_length,
                      .rank = p.rank,
                      .local_rank = p.origin.local_rank >= 0 ? p.origin.local_rank : ctx_.local_rank,
                      .task = p.origin.task,
                      .host = p.origin.host.empty() ? kNoStr : out_.strings.Intern(p.origin.host),
                      .at = static_cast<std::uint32_t>(out_.events.size())});
}

namespace {

// A Megatron iteration line's common shape: an srun label `  13: ` (or nothing) before
// ` [<digit>`; `message` is where the ` [` starts, `width` the label's (0: none).
struct ProgressShape {
  std::int32_t task = -1;
  std::size_t width = 0;
  std::size_t message = 0;
};

// An srun label ending at `width` (spaces, then 1 to 7 digits, then `:  [`), read in `width`
// steps whatever the task: srun pads every label to the widest task id, so a file's labels end
// at one place, and the general read's loop exits (where the digits begin and end, which varies
// with the task) were mispredicted on most lines (≈ 6 ns a progress line).
bool LabelOfWidth(std::string_view text, std::size_t width, std::int32_t* task) {
  constexpr std::size_t kWidest = 16;  // more is read the general way (and no sum overflows)
  if (width == 0 || width > kWidest || width + 4 > text.size() || text.substr(width, 4) != ":  [") return false;
  std::int64_t v = 0;
  std::size_t digits = 0;
  bool ok = true;
  for (std::size_t k = 0; k < width; ++k) {
    const char c = text[k];
    const bool digit = IsDigit(c);
    ok &= digit || (c == ' ' && digits == 0);
    digits += digit ? 1 : 0;
    v = digit ? v * 10 + (c - '0') : v;
  }
  if (!ok || digits == 0 || digits > 7) return false;
  *task = static_cast<std::int32_t>(v);
  return true;
}

// `width`: where the last line's label ended (0: none), tried first.
bool ReadProgressShape(std::string_view text, std::size_t width, ProgressShape* s) {
  std::size_t i = 0;
  if (LabelOfWidth(text, width, &s->task)) {
    s->width = i = width;
    i += 2;
  } else if (text.size() > 2 && text[0] == ' ' && text[1] == '[') {
    // no label: the message starts the line
  } else {
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t digits = i;
    std::int32_t v = 0;
    while (i < text.size() && i - digits < 8 && IsDigit(text[i])) v = v * 10 + (text[i++] - '0');
    if (i == digits || i - digits > 7 || text.substr(i, 4) != ":  [") return false;
    s->task = v;
    s->width = i;
    i += 2;
  }
  if (i + 2 >= text.size() || !IsDigit(text[i + 2])) return false;
  s->message = i;
  return true;
}

}  // namespace

bool LogParser::ProgressLine(const LineRef& line) {
  // StripPrefixes takes an srun label `  13: ` here and stops at the ` [` after it (no stamp,
  // host or tag starts that way); ParseHeader reads no header in ` [`; Unheaded sends the
  // message to IterationLine while no table or traceback is open (NeedsEveryLine is false).
  ProgressShape s;
  if (!ReadProgressShape(line.text, 0, &s)) return false;
  Parsed p{.ref = line, .cite_length = static_cast<std::uint32_t>(line.text.size())};
  p.origin.task = s.task;
  p.rank = ctx_.name_rank;
  p.header.message = line.text.substr(s.message);
  out_.task_labels |= s.task >= 0;
  IterationLine(p);
  return true;
}

// What SplitInterleaved and ProgressLine would do with a progress line whose iteration fields
// parse (and fit a ProgressTable::Noted) and that holds no other task's label; any other line
// goes their way. Its fields are noted, and become a record only if no later line of its key
// replaces it (a 16k-task log replaces most).
LogParser::Fast LogParser::FastProgress(const LineRef& line) {
  const std::uint64_t offset = line.offset - base_;
  ProgressShape s;
  TimeNs t;
  std::int64_t iteration, total;
  if (offset > ProgressTable::kMaxOffset) return Fast::kOther;
  if (!ReadProgressShape(line.text, label_width_, &s)) return Fast::kNoShape;
  label_width_ = s.width;
  const std::int32_t key = ProgressKey(ctx_.name_rank, s.task);
  iterations_.Prefetch(key);  // its slot arrives while the line is read
  const std::string_view message = line.text.substr(s.message);
  if ((!IterationFast(message, iteration_stamps_, &t, &iteration, &total) &&
       ParseIteration(message, &t, &iteration, &total, &iteration_stamps_) != Match::kYes) ||
      iteration > ProgressTable::kMaxValue || total > ProgressTable::kMaxValue) {
    return Fast::kOther;
  }
  // SplitInterleaved reads the same label (LeadingLabelWidth) and splits at another one, whose
  // colon (a digit, `:`, a space) is past ` [<date> <hh:mm:ss>] iteration `: ParseIteration read
  // that, and it holds no such colon. Where the trigger scan found none from before there to the
  // line's end (nearly always), the line is not searched again.
  constexpr std::size_t kFixed = std::string_view(" [2026-03-02 08:52:02] iteration ").size();
  const std::size_t from = s.message + kFixed;
  if (ctx_.prefixes.srun_labels && s.task >= 0 && line.no_label_colon_from > from &&
      HasEmbeddedLabel(line.text, s.width, s.task, from)) {
    return Fast::kOther;
  }
  out_.task_labels |= s.task >= 0;
  if (out_.first_dated == 0) out_.first_dated = t;
  iterations_.Note(key,
                   {.line = line.number,
                    .offset = static_cast<std::uint32_t>(offset),
                    .length = static_cast<std::uint32_t>(line.text.size()),
                    .task = s.task,
                    .iteration = static_cast<std::uint32_t>(iteration),
                    .total = static_cast<std::uint32_t>(total),
                    .time = t},
                   static_cast<std::uint32_t>(out_.events.size()));
  return Fast::kNoted;
}

// Lines with no logging header (or only a bracketed time): tracebacks, the torchrun table, NCCL
// debug lines, Slurm, kernel lines in a plain dump, the trainer's iteration line.
void LogParser::Unheaded(const Parsed& p) {
  const std::string_view msg = p.header.message;
  if (msg.empty()) return;
  if (msg[0] == '[' && msg.starts_with(kWrapperTag)) {
    // `denpex run`'s own lines are read by its recogniser alone: the command line it quotes
    // (`started pid <pid>: <command>`) is not the command's output, whatever words it holds.
    Recognised r;
    if (RecogniseWrapper(msg, &out_.strings, &r)) Emit(p, std::move(r));
    return;
  }
  if (ctx_.ties_unordered ? LoneRankField(p) : TableLine(p) || Traceback(p)) return;
  if (msg.starts_with(" [")) {
    IterationLine(p);
    return;
  }
  if (msg[0] == 'S' && msg.starts_with(kTorchrunBanner)) {  // torchrun's start banner: an agent log
    out_.agent = true;
    return;
  }
  if (msg[0] == 'W' && msg.starts_with("Watchdog caught collective operation timeout: ")) {
    EmbeddedTimeout(p, msg);  // the message without its c10 header (a title, a quote)
    return;
  }
  const char c = msg[0];
  if ((c == 'r' || c == 's') && (p.origin.timed || p.origin.yearless || p.header.clock != Clock::kNone) && StepLine(p)) return;
  Recognised r;
  const bool found = Recognise(UnheadedPlaces(msg, p.header, ctx_.kernel), msg, &out_.strings, &r);
  if (found && closed_in_pin_ && r.kind == Kind::kCudaError) r.kind = Kind::kPinMemory;  // a direct pin failed
  if (found && r.kind == Kind::kFallenOffBus && !Has(msg, "fallen off the bus")) {  // a notice's first line
    HoldPendingGpu(p, std::move(r));
  } else if (found) {
    // A requeued job's next run starts (`SLURM_RESTART_COUNT=<n>`): its iteration lines are new
    // events, so the failed run's last iteration stays where that run stopped.
    if (r.kind == Kind::kRequeue) CloseProgress();
    Emit(p, std::move(r));
  }
}

// The notice's first line waits for its last; its views are moved into pending_gpu_text_ when
// they point into a line the parser rebuilt (joined, or without its colour codes), which the
// next line reuses.
void LogParser::HoldPendingGpu(const Parsed& p, Recognised&& r) {
  has_pending_gpu_ = true;
  pending_gpu_ = p;
  pending_gpu_record_ = std::move(r);
  const std::string_view line = p.ref.text;
  if (line.data() >= text_.data() && line.data() + line.size() <= text_.data() + text_.size()) return;
  pending_gpu_text_.assign(line);
  const auto rebase = [&](std::string_view* v) {
    if (v->data() >= line.data() && v->data() + v->size() <= line.data() + line.size()) {
      *v = std::string_view(pending_gpu_text_).substr(static_cast<std::size_t>(v->data() - line.data()), v->size());
    }
  };
  pending_gpu_.ref.text = pending_gpu_text_;
  rebase(&pending_gpu_.origin.host);
  rebase(&pending_gpu_.header.source);
  rebase(&pending_gpu_.header.message);
  rebase(&pending_gpu_record_.host);
}

bool LogParser::ConfirmFallenOff(const Parsed& p) {
  if (p.ref.number > pending_gpu_.ref.number + kNoticeSpan) {
    has_pending_gpu_ = false;
    return false;
  }
  if (!Has(p.header.message, "fallen off the bus")) return false;
  has_pending_gpu_ = false;
  Emit(pending_gpu_, std::move(pending_gpu_record_));
  return true;
}

// ---- Python tracebacks ----------------------------------------------------------------

std::int64_t LogParser::StreamOf(const Parsed& p) const {
  const std::size_t host = p.origin.host.empty() ? 0 : std::hash<std::string_view>{}(p.origin.host);
  return static_cast<std::int64_t>(host ^ (static_cast<std::size_t>(p.rank + 1) << 1) ^
                                   (static_cast<std::size_t>(p.origin.task + 1) << 24) ^
                                   (static_cast<std::size_t>(p.origin.local_rank + 1) << 44) ^
                                   (static_cast<std::size_t>(p.origin.pid) * 0x9e3779b97f4a7c15ull));
}

// A traceback is one record: its frames are skipped, and the `Type: message` line that ends
// it becomes the event (RecogniseException), with the rank of the stream it was printed on.
// Frames reach the parser only when they hold a trigger (`pin_memory`); the innermost one is the
// pin call when the closing line follows it within this many lines (its code line, a caret
// line, a few lines of other tasks interleaved by srun).
constexpr std::uint32_t kPinFrameSpan = 8;

bool LogParser::Traceback(const Parsed& p) {
  const std::string_view msg = p.header.message;
  closed_in_pin_ = false;
  if ((msg[0] == 'E' || msg[0] == 'T' || msg[0] == 'D') && ChainLine(p)) return true;
  if (tracebacks_.empty() && msg[0] != 'T') return false;
  const std::int64_t stream = StreamOf(p);
  auto open = std::find_if(tracebacks_.begin(), tracebacks_.end(), [&](const auto& t) { return t.stream == stream; });
  if (msg.starts_with("Traceback (most recent call last):")) {
    if (open == tracebacks_.end()) {
      const auto u = std::find(unraisable_.begin(), unraisable_.end(), stream);
      tracebacks_.push_back({stream, p.ref.number, 0, u != unraisable_.end()});
      if (u != unraisable_.end()) unraisable_.erase(u);
    }
    traceback_touched_ = p.ref.number;
    return true;
  }
  if (open == tracebacks_.end()) return false;
  if (msg[0] == ' ' || msg[0] == '\t' || msg[0] == '^' || msg[0] == '~') {  // frames, carets
    if (Has(msg, "pin_memory")) open->pin_line = p.ref.number;
    traceback_touched_ = p.ref.number;
    return true;
  }
  closed_in_pin_ = open->pin_line > 0 && p.ref.number - open->pin_line <= kPinFrameSpan;
  const bool unraisable = open->unraisable;
  tracebacks_.erase(open);
  return unraisable;  // the closing line: recognised by the caller like any exception line, unless unraisable
}

// The lines that link tracebacks (docs/log_formats.md §7): `Exception ignored in: ...` makes the
// stream's next traceback an unraisable report (a __del__ at teardown, never the rank's error);
// `The above exception was the direct cause of the following exception:` and `During handling of
// the above exception, another exception occurred:` make the stream's last exception the cause of
// the next one (PythonError::chained).
bool LogParser::ChainLine(const Parsed& p) {
  const std::string_view msg = p.header.message;
  if (msg.starts_with("Exception ignored in: ")) {
    unraisable_.push_back(StreamOf(p));
    return true;
  }
  if (!msg.starts_with("The above exception was the direct cause") && !msg.starts_with("During handling of the above exception")) {
    return false;
  }
  constexpr std::size_t kLookBack = 16;  // events of other streams between the two (srun's interleaving)
  for (std::size_t i = out_.events.size(), seen = 0; i > 0 && seen < kLookBack; --i, ++seen) {
    Event& e = out_.events[i - 1];
    auto* error = std::get_if<PythonError>(&e.detail);
    if (error != nullptr && e.rank == p.rank) {
      error->chained = true;
      ++updates_;
      break;
    }
  }
  return true;
}

// ---- ChildFailedError table ------------------------------------------------------------

namespace {

// An entry's field with its indentation gone (`rank      : 3 (local_rank: 1)`: a collector that
// trims its lines, Loki's `logcli query`): one of the fields torchrun prints, padded to a colon.
bool UnindentedTableField(std::string_view text) {
  TableField f;
  if (!SplitTableField(text, &f)) return false;
  for (const std::string_view name :
       {"time", "host", "rank", "exitcode", "error_file", "traceback"}) {
    if (f.name == name) return true;
  }
  return false;
}

}  // namespace

bool LogParser::TableLine(const Parsed& p) {
  const std::string_view text = p.header.message;
  // The table's opener: the exception line (a rich console prints its type bare,
  // `ChildFailedError:`), or a pasted table's `Root Cause` heading alone.
  if (text.starts_with(kChildFailed) || text == "ChildFailedError:" ||
      (!table_.open && text.starts_with("Root Cause (first observed failure):"))) {
    FlushEntry();
    table_ = Table{.open = true, .root_cause = text[0] == 'R'};
    out_.agent = true;
    tracebacks_.clear();
    return true;
  }
  if (!table_.open) return false;
  if (text.starts_with("Root Cause") || text.starts_with("Failures:")) {
    FlushEntry();
    table_.root_cause = text[0] == 'R';
  } else if (IsTableEntryStart(text)) {
    FlushEntry();
    table_.in_entry = true;
    table_.entry = NewEvent(p, FailureEntry{.root_cause = table_.root_cause});
    table_.entry.family = Family::kTorchrun;
    table_.entry.kind = Kind::kFailureEntry;
    table_.entry.rank = -1;
  } else if (text[0] == '=' || text[0] == '-') {
    FlushEntry();
  } else if (table_.in_entry && (text[0] == ' ' || UnindentedTableField(text))) {
    ReadTableField(p);
  } else if (text[0] != ' ' && !text.ends_with(" FAILED")) {
    FlushEntry();
    table_.open = false;
    return false;
  }
  return true;
}

bool LogParser::LoneRankField(const Parsed& p) {
  TableField f;
  if (!SplitTableField(p.header.message, &f) || f.name != "rank") return false;
  Event e = NewEvent(p, FailureEntry{});
  e.family = Family::kTorchrun;
  e.kind = Kind::kFailureEntry;
  e.rank = -1;
  auto& entry = std::get<FailureEntry>(e.detail);
  // no table's field (`rank: 3` printed by something else): read as any other line
  if (!ParseRankField(f.value, &e.rank, &entry.local_rank)) return false;
  ++updates_;
  out_.agent = true;
  out_.untimed += e.clock == Clock::kNone || e.time_borrowed ? 1 : 0;
  out_.events.push_back(std::move(e));
  return true;
}

void LogParser::ReadTableField(const Parsed& p) {
  TableField f;
  if (!SplitTableField(p.header.message, &f)) return;  // e.g. `  <NO_OTHER_FAILURES>`
  ++updates_;
  Event& e = table_.entry;
  auto& entry = std::get<FailureEntry>(e.detail);
  bool ok = true;
  if (f.name == "time") {
    ok = ParseTableTime(f.value, &e.time);
    if (ok) {
      e.clock = Clock::kFull;
      e.time_borrowed = false;
    }
  } else if (f.name == "host") {
    if (!IsLoopbackName(f.value)) entry.host = out_.strings.Intern(f.value);  // localhost: which machine is not said
  } else if (f.name == "rank") {
    ok = ParseRankField(f.value, &e.rank, &entry.local_rank);
    e.line = p.ref.number;  // the line a diagnosis cites
    e.offset = p.ref.offset;
    e.length = p.cite_length;
  } else if (f.name == "exitcode") {
    ok = ParseExitcodeField(f.value, &entry.exit_code, &entry.pid);
  }
  if (!ok) ++out_.malformed;
}

void LogParser::FlushEntry() {
  if (!table_.in_entry) return;
  table_.in_entry = false;
  if (table_.entry.rank < 0) {
    ++out_.malformed;  // an entry without a readable `rank` field
    return;
  }
  if (std::get<FailureEntry>(table_.entry.detail).root_cause) {
    table_.entry.signature = out_.strings.Intern("ChildFailedError: Root Cause (first observed failure)");
  }
  out_.untimed += table_.entry.clock == Clock::kNone || table_.entry.time_borrowed ? 1 : 0;
  out_.events.push_back(std::move(table_.entry));
}

// ---- ProcessGroupNCCL ------------------------------------------------------------------

void LogParser::Watchdog(const Parsed& p, int joins) {
  std::string_view text = p.header.message;
  PgPrefix pg;
  const Match mp = ParsePgPrefix(&text, &pg);
  if (mp == Match::kMalformed) {
    out_.malformed += level_ == TriggerLevel::kRecord ? 1 : 0;
    return;
  }
  if (text.starts_with("Watchdog caught collective operation timeout") && !Has(text, "before timing out") &&
      joins < kMaxJoins) {
    if (p.ref.text.data() != wrapped_.data()) wrapped_.assign(p.ref.text);  // the rest is on the next line
    wrapped_line_ = p.ref;
    wrapped_cite_ = p.cite_length;
    wrapped_joins_ = joins;
    has_wrapped_ = true;
    return;
  }
  WatchdogTimeoutFields f;
  const Match mt = ParseWatchdogTimeout(text, &f);
  if (mt == Match::kMalformed) ++out_.malformed;
  if (mt == Match::kYes) {
    Recognised r{.family = Family::kNcclWatchdog,
                 .kind = f.blocking ? Kind::kBlockingWaitTimeout : Kind::kWatchdogTimeout,
                 .detail = TimeoutOf(pg, f)};
    NoteTimeout(std::get<WatchdogTimeout>(r.detail));
    if (open_watchdogs_.Find(p.rank) == kNoIndex) watchdog_ranks_.push_back(p.rank);
    open_watchdogs_.Set(p.rank, out_.events.size());
    Emit(p, std::move(r));
    return;
  }
  if (mt == Match::kMalformed) return;
  WatchdogMessage(p, pg, text);
}

WatchdogTimeout LogParser::TimeoutOf(const PgPrefix& pg, const WatchdogTimeoutFields& f) {
  return {.pg = out_.strings.Intern(pg.uid),
          .pg_desc = out_.strings.Intern(pg.desc),
          .op = out_.strings.Intern(f.op),
          .group_rank = pg.group_rank,
          .seq = f.seq,
          .numel_in = f.numel_in,
          .numel_out = f.numel_out,
          .timeout_ms = f.timeout_ms,
          .ran_for_ms = f.ran_for_ms};
}

bool LogParser::NoteTimeout(const WatchdogTimeout& w) {
  const auto mix = [](std::uint64_t h, std::int64_t v) { return (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL; };
  const std::uint64_t key = mix(mix(mix(0xcbf29ce484222325ULL, w.group_rank), w.seq), w.ran_for_ms);
  return timeouts_seen_.insert(key).second;
}

void LogParser::EmbeddedTimeout(const Parsed& p, std::string_view text) {
  static constexpr std::string_view kLead = "Watchdog caught collective operation timeout: WorkNCCL(";
  const std::size_t at = text.find(kLead);
  if (at == std::string_view::npos) return;
  // Its process-group prefix, `[Rank 7] ` or `[PG ... Rank 7] `, right before it.
  std::string_view message = text.substr(at);
  PgPrefix pg;
  const std::size_t open = at < 2 ? std::string_view::npos : text.rfind('[', at - 2);
  if (open != std::string_view::npos && text[at - 1] == ' ' && text[at - 2] == ']') {
    std::string_view bracket = text.substr(open);
    if (ParsePgPrefix(&bracket, &pg) == Match::kYes && bracket.data() == message.data()) message = text.substr(open);
  }
  std::string_view rest = message;
  PgPrefix parsed;
  if (ParsePgPrefix(&rest, &parsed) != Match::kYes) rest = message;
  WatchdogTimeoutFields f;
  if (ParseWatchdogTimeout(rest, &f) != Match::kYes) return;
  WatchdogTimeout w = TimeoutOf(pg, f);
  if (!NoteTimeout(w)) return;  // the file printed it already (the c10 line before the abort)
  Parsed inner = p;
  inner.header.message = message;
  Emit(inner, Recognised{.family = Family::kNcclWatchdog,
                         .kind = f.blocking ? Kind::kBlockingWaitTimeout : Kind::kWatchdogTimeout,
                         .detail = w});
}

void LogParser::WatchdogMessage(const Parsed& p, const PgPrefix& pg, std::string_view text) {
  WatchdogStatus st;
  const Match ms = ParseWatchdogStatus(text, &st);
  if (ms == Match::kMalformed) ++out_.malformed;
  if (ms == Match::kYes) {
    ++updates_;
    // The status line belongs to the rank's open watchdog block on the same process group. torch
    // 2.2-2.9 print the timeout itself with `[Rank r]` only (WorkNCCL's own prefix) and the status
    // with the group's `[PG ...  Rank r]`: a timeout without a group takes the status of its rank.
    if (const std::size_t open = open_watchdogs_.Find(p.rank); open != kNoIndex) {
      auto& w = std::get<WatchdogTimeout>(out_.events[open].detail);
      const bool same_pg = w.pg == kNoStr || out_.strings.Get(w.pg) == pg.uid;
      if (same_pg && w.group_rank == pg.group_rank && w.last_enqueued < 0) {
        w.last_enqueued = st.last_enqueued;
        w.last_completed = st.last_completed;
      }
    } else {  // its timeout may be in the chunk before (the merge applies it)
      out_.orphan_statuses.push_back({.rank = p.rank, .pg = out_.strings.Intern(pg.uid), .group_rank = pg.group_rank,
                                      .last_enqueued = st.last_enqueued, .last_completed = st.last_completed});
    }
    return;
  }
  Recognised r;
  if (!RecogniseWatchdogNote(text, &out_.strings, &r)) return;
  if (auto* n = std::get_if<WatchdogNote>(&r.detail)) {
    n->pg = out_.strings.Intern(pg.uid);
    n->group_rank = pg.group_rank;
  }
  Emit(p, std::move(r));
}

bool LogParser::JoinWrapped(const LineRef& line) {
  // A continuation has no prefix and no header of its own: it is the cut line's tail.
  std::string_view body = line.text;
  LineOrigin o;
  Header h;
  const bool continues = !body.empty() && StripPrefixes(&body, ctx_.prefixes, &o) == 0 &&
                         ParseHeader(body, &h) == Match::kNo && body[0] != '[';
  if (!continues) {
    FlushWrapped();
    return false;
  }
  has_wrapped_ = false;
  wrapped_.append(line.text);
  ++out_.joined;
  level_ = TriggerLevel::kRecord;  // the cut line's
  Process({wrapped_, wrapped_line_.offset, wrapped_line_.number}, wrapped_cite_, wrapped_joins_ + 1);
  return true;
}

// A step line with another process's line glued to its end (GluedRecord), its last value run
// into the other's stamp (`step_ms=110.62026-12-05 12:56:27.826 rank=1 ...`): the step up to the
// glue, then the rest read as a line of its own, cited at its byte.
bool LogParser::GluedStepLine(const Parsed& line) {
  const std::string_view text = line.ref.text, msg = line.header.message;
  const std::size_t glued = GluedRecord(text);
  if (glued == std::string_view::npos) return false;
  const char* cut = text.data() + glued;
  if (cut <= msg.data() || cut > msg.data() + msg.size()) return false;  // not in this message
  Parsed first = line;
  first.header.message = msg.substr(0, static_cast<std::size_t>(cut - msg.data()));
  StepMetricsFields f;
  if (ParseStepMetrics(first.header.message, &f) != Match::kYes) return false;
  Step(first, f);
  if (glued < line.cite_length) {  // a line as the file holds it, not a joined copy's tail
    Process({text.substr(glued), line.ref.offset + glued, line.ref.number},
            static_cast<std::uint32_t>(line.cite_length - glued), 0);
  }
  return true;
}

// A key=value step line (`rank=2 step=8/20 ... data_ms=1502.4 step_ms=1760.0`): one event per
// rank, its last step line, tracking since when the rank's own part has been most of each step.
bool LogParser::StepLine(const Parsed& line) {
  StepMetricsFields f;
  if (!Has(line.header.message, "data_ms=")) return false;
  const Match read = ParseStepMetrics(line.header.message, &f);
  if (read == Match::kMalformed) return GluedStepLine(line);
  if (read != Match::kYes) return false;
  Step(line, f);
  return true;
}

void LogParser::Step(const Parsed& line, const StepMetricsFields& f) {
  // The line's `rank=<R>` says whose step it is where no prefix or file name does (a node's
  // files merged into one).
  Parsed ranked;
  const bool own_word = line.rank < 0 && f.rank >= 0 && f.rank <= kMaxRank;
  if (own_word) {  // a copy only then: most step lines' rank is their prefix's or file's
    ranked = line;
    ranked.rank = static_cast<std::int32_t>(f.rank);
  }
  const Parsed& p = own_word ? ranked : line;
  Iteration it{.iteration = f.step, .total = f.total, .data_us = f.data_us, .step_us = f.step_us};
  const bool slow = f.step_us > 0 && 2 * f.data_us >= f.step_us;
  const std::int32_t key = ProgressKey(p.rank, p.origin.task);
  const std::size_t at = last_step_.Find(key);
  if (at != kNoIndex) {
    const auto& before = std::get<Iteration>(out_.events[at].detail);
    if (slow && before.slow_since >= 0) {
      it.slow_since = before.slow_since;
      it.slow_at = before.slow_at;
    }
  }
  it.slow_from_start = slow && (at == kNoIndex || std::get<Iteration>(out_.events[at].detail).slow_from_start);
  if (slow && it.slow_since < 0) {
    it.slow_since = f.step;
    it.slow_at = (PrefixTimeWins(p.origin, p.header) ? p.origin.time
                  : p.header.clock != Clock::kNone       ? p.header.time
                                                         : p.origin.yearless_time) -
                 f.step_us * 1000;
  }
  if (at != kNoIndex) {
    ++updates_;
    Event& e = out_.events[at];
    e = NewEvent(p, it);
    e.family = Family::kTrainer;
    e.kind = Kind::kIteration;
    return;
  }
  last_step_.Set(key, out_.events.size());
  Emit(p, Recognised{.family = Family::kTrainer, .kind = Kind::kIteration, .detail = it, .error = false});
}

// The cut line had no continuation: read what it holds, and count it.
void LogParser::FlushWrapped() {
  if (!has_wrapped_) return;
  has_wrapped_ = false;
  ++out_.broken;
  level_ = TriggerLevel::kRecord;
  Process({wrapped_, wrapped_line_.offset, wrapped_line_.number}, wrapped_cite_, kMaxJoins);
}

ParsedLog LogParser::Finish(bool place) {
  out_.kernel_text = opening_kernel_ * 2 > opening_read_;
  // A record still going on at the end (not a traceback left open long ago by a killed rank):
  // a chunked parse reads this chunk again joined with the next (ingest/chunks.cc).
  constexpr std::int64_t kRecentLines = 256;
  out_.open_at_end = has_wrapped_ || has_fragment_ || has_pending_gpu_ || table_.open || open_partials_ > 0 || wrap_.open ||
                     (!tracebacks_.empty() && out_.lines - traceback_touched_ <= kRecentLines);
  FlushHardWrapped();
  if (has_fragment_) ++out_.malformed;  // a split line's head whose tail is past the end
  for (Partial& open : partials_) {
    out_.broken += open.open ? 1 : 0;  // a CRI line's head whose `F` is past the end
    FlushPartial(&open);
  }
  FlushWrapped();
  FlushEntry();
  // A chunk's skipped lines since its last stamp are searched only if a later chunk needs it
  // (ParseChunked); a whole file's last stamp is borrowed by nothing.
  if (!place && gaps_begin_ != nullptr) out_.stamp_gap = {gaps_begin_, static_cast<std::size_t>(gaps_end_ - gaps_begin_)};
  ClearGaps();
  out_.last_stamp = last_time_;
  out_.last_stamp_clock = last_clock_;
  std::sort(watchdog_ranks_.begin(), watchdog_ranks_.end());
  out_.open_watchdogs.reserve(watchdog_ranks_.size());
  for (const std::int32_t rank : watchdog_ranks_) out_.open_watchdogs.emplace_back(rank, open_watchdogs_.Find(rank));
  for (std::size_t word = 0; word < prefix_rank_bits_.size(); ++word) {
    for (std::uint64_t bits = prefix_rank_bits_[word]; bits != 0; bits &= bits - 1) {
      out_.prefix_ranks.push_back(static_cast<std::int32_t>(64 * word + static_cast<std::size_t>(std::countr_zero(bits))));
    }
  }
  out_.progress = iterations_.Take(base_, ctx_.name_rank, ctx_.local_rank);
  if (place) PlaceProgress(&out_, ctx_.file);
  return std::move(out_);
}

Event ProgressEvent(const ProgressRecord& r, std::uint32_t file) {
  Event e;
  e.time = r.time;
  e.clock = Clock::kFull;
  e.family = Family::kTrainer;
  e.kind = Kind::kIteration;
  e.rank = r.rank;
  e.local_rank = r.local_rank;
  e.task = r.task;
  e.host = r.host;
  e.file = file;
  e.line = r.line;
  e.offset = r.offset;
  e.length = r.length;
  e.detail = Iteration{.iteration = r.iteration, .total = r.total};
  return e;
}

// In place, from the back: each record goes before `events[at]`, after every event before it.
void PlaceProgress(ParsedLog* log, std::uint32_t file) {
  auto& events = log->events;
  const auto& records = log->progress;
  if (records.empty()) return;
  std::size_t i = events.size(), k = records.size();
  events.resize(events.size() + records.size());
  for (std::size_t w = events.size(); k > 0;) {
    if (i > 0 && records[k - 1].at < i) {
      events[--w] = std::move(events[--i]);
    } else {
      events[--w] = ProgressEvent(records[--k], file);
    }
  }
  // Indices into the events move past the records placed before them.
  for (auto& [rank, index] : log->open_watchdogs) {
    index += static_cast<std::size_t>(std::upper_bound(records.begin(), records.end(), index,
                                                       [](std::size_t at, const ProgressRecord& r) { return at < r.at; }) -
                                      records.begin());
  }
  log->progress.clear();
  log->progress.shrink_to_fit();
}

// What LogParser itself reads beyond the family recognisers (triggers.h): c10 error lines
// (kept as notes), multi-line records, trainer progress, and the sources that mark a file as a
// launcher's.
namespace {
constexpr Trigger kRecordTriggers[] = {
    {"[E"},
    {"[F"},  // c10 `[E0302 ...` / `[E File.cpp:..]`: E and F lines are notes
    {"Traceback (most recent call last):"},  // opens a traceback
    {"Exception ignored in: "},              // opens an unraisable report (ChainLine)
    {"The above exception was the direct cause"},
    {"During handling of the above exception"},  // chains
    {"pin_memory"},        // a frame pinning host memory (a direct pin's failure)
    {"ChildFailedError"},  // opens the torchrun failure table
    {"Root Cause (first observed failure)"},  // ... or its heading, when a paste starts there
    {"\"py_callstack\""},                     // torchrun's error file (error.json, ErrorFile)
    {"] iteration "},                         // Megatron progress (a rank's last step)
    {"data_ms="},                             // key=value step lines (StepLine)
    {"Setting OMP_NUM_THREADS environment variable for each process"},  // torchrun's banner: an
                                                                        // agent log
    {"torch/distributed"},
    {"torch.distributed"},
    {"run:"},  // agent sources: the file is a launcher's
    {"to store for rank: "},
    {"Completed store-based barrier"},  // whose lines these are (BarrierRank)
    {"\x1b["},                          // ANSI colour: a trigger may sit between its codes
    {" stdout P "},
    {" stderr P "},  // a CRI line's head, continued by the next (JoinPartial)
};
}  // namespace
std::span<const Trigger> RecordTriggers() { return kRecordTriggers; }

}  // namespace denpex::engine
