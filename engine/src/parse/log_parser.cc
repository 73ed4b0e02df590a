#include "parse/log_parser.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "parse/lines.h"

namespace denpex::engine {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSeverity(char c) { return c == 'I' || c == 'W' || c == 'E' || c == 'F'; }

constexpr std::string_view kChildFailed =
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError";

// Where a line sits in its file.
struct LineRef {
  std::string_view text;
  std::uint64_t offset;
  std::uint32_t number;
};

// The ChildFailedError table being read: which section, and the entry in progress.
struct TableState {
  bool open = false;
  bool root_cause = false;
  bool in_entry = false;
  Event entry;  // FailureEntry detail; rank/line set by the `rank :` field
};

class LogParser {
 public:
  LogParser(std::uint32_t file, std::int32_t file_rank) : file_(file), file_rank_(file_rank) {}

  void Line(const LineRef& line);
  ParsedLog Finish();

 private:
  Event NewEvent(const LineRef& line, std::int32_t rank, TimeNs time, Clock clock,
                 EventDetail detail);
  void NoteRank(std::int32_t rank);
  void C10Line(const LineRef& line, std::string_view body, std::int32_t rank);
  void Watchdog(const LineRef& line, const C10Header& h, std::int32_t rank);
  void RankText(const LineRef& line, std::string_view body, std::int32_t rank);
  void AgentLine(const LineRef& line, const GlogHeader& h);
  bool TableLine(const LineRef& line);
  void ReadTableField(const LineRef& line);
  void FlushEntry();
  void OtherLine(const LineRef& line);
  void Count(Match m) { out_.malformed += m == Match::kMalformed ? 1 : 0; }

  std::uint32_t file_;
  std::int32_t file_rank_;
  ParsedLog out_;
  TableState table_;
  std::int32_t last_rank_ = -1;
  std::int32_t traceback_rank_ = -1;  // rank whose Python traceback is being read
  // Per rank, the last watchdog event, awaiting its `last enqueued` status line.
  std::vector<std::pair<std::int32_t, std::size_t>> open_watchdogs_;
};

Event LogParser::NewEvent(const LineRef& line, std::int32_t rank, TimeNs time, Clock clock,
                          EventDetail detail) {
  Event e;
  e.time = time;
  e.clock = clock;
  e.rank = rank;
  e.file = file_;
  e.line = line.number;
  e.offset = line.offset;
  e.length = static_cast<std::uint32_t>(line.text.size());
  e.detail = std::move(detail);
  return e;
}

void LogParser::NoteRank(std::int32_t rank) {
  if (rank == last_rank_) return;
  last_rank_ = rank;
  out_.prefix_ranks.push_back(rank);
}

void LogParser::Line(const LineRef& line) {
  ++out_.lines;
  if (line.text.size() > kMaxLineBytes) {
    ++out_.malformed;
    return;
  }
  if (line.text.empty()) return;
  std::string_view body = line.text;
  std::int32_t rank = file_rank_;
  const Match prefixed = StripRankPrefix(&body, &rank);
  if (prefixed == Match::kMalformed) {
    ++out_.malformed;
    return;
  }
  if (prefixed == Match::kYes) NoteRank(rank);
  if (body.size() > 2 && body[0] == '[' && IsSeverity(body[1]) && IsDigit(body[2])) {
    C10Line(line, body, rank);
  } else if (prefixed == Match::kYes) {
    RankText(line, body, rank);
  } else {
    OtherLine(line);
  }
}

void LogParser::C10Line(const LineRef& line, std::string_view body, std::int32_t rank) {
  C10Header h;
  const Match m = ParseC10Header(body, &h);
  Count(m);
  if (m != Match::kYes) return;
  // Only ProcessGroupNCCL's watchdog lines matter here; cheap test before any parsing.
  if (h.message.empty() || h.message[0] != '[' || h.source != "ProcessGroupNCCL.cpp") return;
  Watchdog(line, h, rank);
}

void LogParser::Watchdog(const LineRef& line, const C10Header& h, std::int32_t rank) {
  std::string_view text = h.message;
  PgPrefix pg;
  const Match mp = ParsePgPrefix(&text, &pg);
  Count(mp);
  if (mp != Match::kYes) return;
  WatchdogTimeoutFields f;
  const Match mt = ParseWatchdogTimeout(text, &f);
  Count(mt);
  if (mt == Match::kYes) {
    WatchdogTimeout w{.pg = out_.strings.Intern(pg.uid),
                      .pg_desc = out_.strings.Intern(pg.desc),
                      .group_rank = pg.group_rank,
                      .seq = f.seq,
                      .op = out_.strings.Intern(f.op),
                      .timeout_ms = f.timeout_ms,
                      .ran_for_ms = f.ran_for_ms};
    Event e = NewEvent(line, rank, h.time, Clock::kNoYear, w);
    e.signature = out_.strings.Intern(MaskSignature(h.message));
    std::erase_if(open_watchdogs_, [&](const auto& p) { return p.first == rank; });
    open_watchdogs_.emplace_back(rank, out_.events.size());
    out_.events.push_back(std::move(e));
    return;
  }
  if (mt == Match::kMalformed) return;
  WatchdogStatus st;
  const Match ms = ParseWatchdogStatus(text, &st);
  Count(ms);
  if (ms != Match::kYes) return;
  // The status line belongs to the rank's open watchdog block on the same process group.
  for (const auto& [r, index] : open_watchdogs_) {
    auto& w = std::get<WatchdogTimeout>(out_.events[index].detail);
    if (r == rank && out_.strings.Get(w.pg) == pg.uid && w.group_rank == pg.group_rank &&
        w.last_enqueued < 0) {
      w.last_enqueued = st.last_enqueued;
      w.last_completed = st.last_completed;
    }
  }
}

// Prefixed text that is not a c10 line: Python output of a rank, e.g. its traceback.
void LogParser::RankText(const LineRef& line, std::string_view body, std::int32_t rank) {
  if (body.starts_with("Traceback (most recent call last):")) {
    traceback_rank_ = rank;
    return;
  }
  if (rank != traceback_rank_ || body.empty() || body[0] == ' ') return;
  std::string_view type;
  if (ParsePythonErrorLine(body, &type)) {
    Event e = NewEvent(line, rank, 0, Clock::kNone, PythonError{out_.strings.Intern(type)});
    e.signature = out_.strings.Intern(MaskSignature(body));
    out_.events.push_back(std::move(e));
  }
  traceback_rank_ = -1;
}

void LogParser::AgentLine(const LineRef& line, const GlogHeader& h) {
  if (h.source.find("torch/distributed") != std::string_view::npos) out_.agent = true;
  WorkerFailedFields f;
  const Match mf = ParseWorkerFailed(h.message, &f);
  Count(mf);
  if (mf == Match::kYes) {
    Event e = NewEvent(line, -1, h.time, Clock::kNoYear,
                       WorkerFailed{.local_rank = f.local_rank, .exit_code = f.exit_code, .pid = f.pid});
    e.signature = out_.strings.Intern(MaskSignature(h.message));
    out_.events.push_back(std::move(e));
    return;
  }
  std::int64_t pid;
  std::string_view signal;
  const Match ms = ParseWorkerSignalled(h.message, &pid, &signal);
  Count(ms);
  if (ms == Match::kYes) {
    out_.events.push_back(NewEvent(line, -1, h.time, Clock::kNoYear,
                                   WorkerSignalled{pid, out_.strings.Intern(signal)}));
  }
}

// Lines with no rank prefix: the agent's glog lines and its ChildFailedError table, the
// trainer's iteration line, NCCL INFO lines.
void LogParser::OtherLine(const LineRef& line) {
  const std::string_view text = line.text;
  const char c = text[0];
  if (IsSeverity(c) && text.size() > 1 && IsDigit(text[1])) {
    GlogHeader h;
    const Match m = ParseGlogHeader(text, &h);
    Count(m);
    if (m != Match::kYes) return;
    FlushEntry();
    table_.open = false;
    AgentLine(line, h);
    return;
  }
  if (TableLine(line)) return;
  if (c == ' ' && text.starts_with(" [")) {
    TimeNs t;
    std::int64_t iteration, total;
    const Match m = ParseIteration(text, &t, &iteration, &total);
    Count(m);
    if (m == Match::kYes) {
      out_.events.push_back(
          NewEvent(line, file_rank_, t, Clock::kFull, Iteration{iteration, total}));
    }
    return;
  }
  if (text.find(" NCCL INFO comm 0x") != std::string_view::npos) {
    CommInitFields f;
    const Match m = ParseCommInit(text, &f);
    Count(m);
    if (m == Match::kYes) {
      out_.events.push_back(NewEvent(
          line, file_rank_, 0, Clock::kNone,
          CommInit{out_.strings.Intern(f.comm_id), f.comm_rank, f.nranks, f.cuda_dev}));
    }
  }
}

// The ChildFailedError table (§6). Returns true when the line belongs to it.
bool LogParser::TableLine(const LineRef& line) {
  const std::string_view text = line.text;
  if (text.starts_with(kChildFailed)) {
    FlushEntry();
    table_ = TableState{.open = true};
    out_.agent = true;
    return true;
  }
  if (!table_.open) return false;
  if (text.starts_with("Root Cause") || text.starts_with("Failures:")) {
    FlushEntry();
    table_.root_cause = text[0] == 'R';
  } else if (IsTableEntryStart(text)) {
    FlushEntry();
    table_.in_entry = true;
    table_.entry = NewEvent(line, -1, 0, Clock::kNone, FailureEntry{.root_cause = table_.root_cause});
  } else if (text[0] == '=' || text[0] == '-') {
    FlushEntry();
  } else if (text[0] == ' ' && table_.in_entry) {
    ReadTableField(line);
  } else if (text[0] != ' ') {
    return false;
  }
  return true;
}

void LogParser::ReadTableField(const LineRef& line) {
  TableField f;
  if (!SplitTableField(line.text, &f)) return;  // e.g. `  <NO_OTHER_FAILURES>`
  Event& e = table_.entry;
  auto& entry = std::get<FailureEntry>(e.detail);
  bool ok = true;
  if (f.name == "time") {
    ok = ParseTableTime(f.value, &e.time);
    if (ok) e.clock = Clock::kFull;
  } else if (f.name == "host") {
    entry.host = out_.strings.Intern(f.value);
  } else if (f.name == "rank") {
    ok = ParseRankField(f.value, &e.rank, &entry.local_rank);
    e.line = line.number;  // the line a diagnosis cites
    e.offset = line.offset;
    e.length = static_cast<std::uint32_t>(line.text.size());
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
  out_.events.push_back(std::move(table_.entry));
}

ParsedLog LogParser::Finish() {
  FlushEntry();
  std::sort(out_.prefix_ranks.begin(), out_.prefix_ranks.end());
  out_.prefix_ranks.erase(std::unique(out_.prefix_ranks.begin(), out_.prefix_ranks.end()),
                          out_.prefix_ranks.end());
  return std::move(out_);
}

}  // namespace

ParsedLog ParseLog(std::string_view text, std::uint32_t file, std::int32_t file_rank) {
  LogParser parser(file, file_rank);
  std::uint64_t offset = 0;
  std::uint32_t number = 0;
  while (offset < text.size()) {
    const char* start = text.data() + offset;
    const void* nl = std::memchr(start, '\n', text.size() - offset);
    const std::size_t len = nl ? static_cast<const char*>(nl) - start : text.size() - offset;
    std::string_view line(start, len);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    parser.Line({line, offset, ++number});
    offset += len + 1;
  }
  return parser.Finish();
}

}  // namespace denpex::engine
