#include "ingest/nccl_ras.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <utility>

#include "checkpoint/pickle.h"
#include "denpex/common/time.h"
#include "ingest/json_pickle.h"
#include "parse/headers.h"

namespace denpex::engine {
namespace {

using ckpt::PyValue;
using VKind = PyValue::Kind;
using Why = RasRank::Why;

struct Line {
  std::string_view text;  // without its newline and a trailing '\r'
  std::uint64_t offset = 0;
  std::uint32_t number = 0;
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> out;
  std::uint64_t at = 0;
  for (std::uint32_t n = 1; at < text.size(); ++n) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(at, end - at);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back({l, at, n});
    at = end + 1;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A decimal number at the start of `*s`, consumed; nullopt (nothing consumed) when none.
std::optional<std::int64_t> TakeInt(std::string_view* s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc()) return std::nullopt;
  s->remove_prefix(static_cast<std::size_t>(end - s->data()));
  return v;
}

bool Eat(std::string_view* s, std::string_view word) {
  if (!s->starts_with(word)) return false;
  s->remove_prefix(word.size());
  return true;
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < s.size();) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

// The time of a line that is only a stamp (a poller's `date -Is`, `[2026-12-03 19:44:51]`, a
// c10 or glog header with nothing after it); 0 for any other line.
TimeNs StampLine(std::string_view line) {
  const std::string_view t = Trim(line);
  if (t.empty() || t.size() > 64) return 0;
  if (auto r = ParseRfc3339(t)) return *r;
  Header h;
  if (ParseHeader(t, &h) == Match::kYes && h.clock == Clock::kFull && Trim(h.message).empty())
    return h.time;
  return 0;
}

bool ReportStart(std::string_view line) {
  const std::size_t v = line.find("NCCL version ");
  return v != std::string_view::npos &&
         line.find(" compiled with CUDA ", v) != std::string_view::npos;
}

Event NewEvent(Kind kind, std::uint32_t file, const Line& l, TimeNs time, EventDetail detail) {
  Event e;
  e.family = Family::kNcclRas;
  e.kind = kind;
  e.file = file;
  e.line = l.number;
  e.offset = l.offset;
  e.length = static_cast<std::uint32_t>(l.text.size());
  e.time = time;
  e.clock = time > 0 ? Clock::kFull : Clock::kNone;
  e.detail = std::move(detail);
  return e;
}

// The job's global ranks of one report's events: a rank of a communicator of `world` ranks is
// its global rank; a rank of another, or a process the report names without a rank, takes the
// global rank of the same process (node address and pid) in that communicator.
// `known`: processes the caller already tied to a global rank (the JSON's every member of the
// world communicator).
using ProcessRanks = std::map<std::pair<StrId, std::int32_t>, std::int32_t>;
void GlobalRanks(std::int32_t world, std::vector<Event>* events, std::size_t first,
                 ProcessRanks known = {}) {
  if (world <= 0) return;
  ProcessRanks of_process = std::move(known);
  for (std::size_t i = first; i < events->size(); ++i) {
    Event& e = (*events)[i];
    auto* r = std::get_if<RasRank>(&e.detail);
    if (r == nullptr || r->comm_size != world || r->comm_rank < 0 || r->comm_rank > kMaxRank)
      continue;
    e.rank = r->comm_rank;
    if (r->node != kNoStr && r->pid >= 0) of_process[{r->node, r->pid}] = r->comm_rank;
  }
  for (std::size_t i = first; i < events->size(); ++i) {
    Event& e = (*events)[i];
    auto* r = std::get_if<RasRank>(&e.detail);
    if (r == nullptr || e.rank >= 0 || r->node == kNoStr || r->pid < 0) continue;
    if (auto it = of_process.find({r->node, r->pid}); it != of_process.end()) e.rank = it->second;
  }
}

// ---- Text -------------------------------------------------------------------------------

// One file's text reports, line by line (docs/log_formats.md §29). Every line is looked at
// from where its RAS words start, so a prefix before them (a collector's stamp) changes
// nothing; the communicators table's rows are read from their end.
class TextReader {
 public:
  TextReader(std::uint32_t file, RasRead* out) : file_(file), out_(out) {}

  void Read(const std::vector<Line>& lines) {
    int total = 0;
    for (const Line& l : lines) total += ReportStart(l.text) ? 1 : 0;
    const int skip = std::max(0, total - kNcclRasReportsRead);
    if (skip > 0) {
      out_->notes.push_back(std::to_string(total) + " NCCL RAS reports: the newest " +
                            std::to_string(kNcclRasReportsRead) + " read, " + std::to_string(skip) +
                            " older ones not");
    }
    TimeNs stamp = 0;
    int seen = 0;
    for (const Line& l : lines) {
      if (ReportStart(l.text)) {
        Close();
        if (seen++ >= skip) Open(l, stamp);
        stamp = 0;
        continue;
      }
      if (const TimeNs t = StampLine(l.text); t > 0) {
        stamp = t;
        continue;
      }
      if (open_) Body(l);
    }
    Close();
  }

 private:
  struct Group {
    std::int32_t comms = 0, nodes = -1, size = -1;
    StrId status = kNoStr, errors = kNoStr;
  };
  enum class Section : std::uint8_t { kHead, kSummary, kTable, kErrors, kWarnings };
  enum class Sub : std::uint8_t {
    kNone,
    kJobIncomplete,
    kJobDead,
    kCommIncomplete,
    kCommError,
    kStatus,
    kCounts
  };

  StrId Intern(std::string_view v) { return v.empty() ? kNoStr : out_->log.strings.Intern(v); }

  void Open(const Line& l, TimeNs stamp) {
    open_ = true;
    time_ = stamp;
    section_ = Section::kHead;
    sub_ = Sub::kNone;
    groups_.clear();
    comms_seen_.clear();
    first_event_ = out_->log.events.size();
    std::string_view v = l.text.substr(l.text.find("NCCL version ") + 13);
    v = v.substr(0, v.find(' '));
    out_->log.events.push_back(NewEvent(Kind::kRasReport, file_, l, time_,
                                        RasReport{.nccl_version = Intern(v), .report = reports_}));
  }

  void Close() {
    if (!open_) return;
    open_ = false;
    auto& rep = std::get<RasReport>(out_->log.events[first_event_].detail);
    std::int32_t largest = -1;
    for (const auto& [g, grp] : groups_) {
      rep.comms += grp.comms;
      largest = std::max(largest, grp.size);
    }
    // The world communicator: as large as the job (its GPUs, when the summary says), or the
    // largest when the summary's shape table left the total unsaid.
    const std::int32_t world = rep.gpus > 0 ? (largest == rep.gpus ? largest : -1) : largest;
    GlobalRanks(world, &out_->log.events, first_event_);
    ++reports_;
  }

  void Body(const Line& l) {
    const std::string_view t = Trim(l.text);
    if (t.empty()) {
      if (section_ == Section::kTable) section_ = Section::kHead;
      return;
    }
    if (t.find("per node  per process") != std::string_view::npos) {
      section_ = Section::kSummary;
      return;
    }
    if (t.find("Group     Comms     Nodes") != std::string_view::npos) {
      section_ = Section::kTable;
      return;
    }
    if (section_ == Section::kSummary && Summary(t)) return;
    if (section_ == Section::kTable && TableRow(t)) return;
    if (section_ == Section::kSummary || section_ == Section::kTable) section_ = Section::kHead;
    if (const std::size_t h = t.find('#');
        h != std::string_view::npos && CommHeader(l, t.substr(h)))
      return;
    // A section's or a job-level error's title alone on its line (after any prefix).
    const std::string_view last =
        t.substr(t.rfind(' ') == std::string_view::npos ? 0 : t.rfind(' ') + 1);
    if (last == "Errors" || last == "Warnings") {
      section_ = last == "Errors" ? Section::kErrors : Section::kWarnings;
      sub_ = Sub::kNone;
      return;
    }
    if (last == "INCOMPLETE" || last == "DEAD") {
      sub_ = last == "DEAD" ? Sub::kJobDead : Sub::kJobIncomplete;
      return;
    }
    auto& rep = std::get<RasReport>(out_->log.events[first_event_].detail);
    if (std::size_t at = t.find("Missing communicator data from "); at != std::string_view::npos) {
      std::string_view s = t.substr(at + 31);
      const auto n = TakeInt(&s);
      if (n && s.starts_with(" job process") && sub_ == Sub::kJobIncomplete)
        rep.incomplete = static_cast<std::int32_t>(*n);
      return;
    }
    if (std::size_t at = t.find(" job process");
        at != std::string_view::npos && t.find("considered dead") != std::string_view::npos) {
      std::string_view s = Trim(t.substr(0, at));
      s = s.substr(s.rfind(' ') == std::string_view::npos ? 0 : s.rfind(' ') + 1);
      if (const auto n = TakeInt(&s)) rep.dead = static_cast<std::int32_t>(*n);
      return;
    }
    if (std::size_t at = t.find("Process ");
        at != std::string_view::npos && (sub_ == Sub::kJobDead || sub_ == Sub::kJobIncomplete)) {
      return ProcessLine(l, t.substr(at + 8));
    }
    if (std::size_t at = t.find("Communicator ranks have different ");
        at != std::string_view::npos) {
      std::string_view s = t.substr(at + 34);
      counts_.clear();
      if (s.starts_with("status")) {
        sub_ = Sub::kStatus;
        op_ = kNoStr;
      } else if (const std::size_t end = s.find(" operation counts");
                 end != std::string_view::npos) {
        sub_ = Sub::kCounts;
        op_ = Intern(s.substr(0, end));
      }
      return;
    }
    // 2.24 and 2.25 list a communicator's missing or unknown ranks by number alone.
    for (const std::string_view list :
         {"The missing rank: ", "The missing ranks: ", "The unknown ranks: "}) {
      if (std::size_t at = t.find(list); at != std::string_view::npos)
        return RankList(l, t.substr(at + list.size()));
    }
    if (std::size_t at = t.find(" ranks have "); at != std::string_view::npos)
      return GroupLine(t, at);
    if (std::size_t at = t.find(" ranks reported "); at != std::string_view::npos)
      return GroupLine(t, at);
    if (std::size_t at = t.find("Rank "); at != std::string_view::npos)
      return RankLine(l, t.substr(at + 5));
  }

  // `      4          8            1         32       32`: the totals. False for another line.
  bool Summary(std::string_view t) {
    const auto tok = Tokens(t);
    if (tok.size() < 5) return false;
    std::vector<std::int64_t> n;
    for (std::size_t i = tok.size() - 5; i < tok.size(); ++i) {
      std::string_view s = tok[i];
      const auto v = TakeInt(&s);
      if (!v || !s.empty()) return false;
      n.push_back(*v);
    }
    auto& rep = std::get<RasReport>(out_->log.events[first_event_].detail);
    rep.processes = static_cast<std::int32_t>(std::clamp<std::int64_t>(n[3], 0, kMaxRank));
    rep.gpus = static_cast<std::int32_t>(std::clamp<std::int64_t>(n[4], 0, kMaxRank));
    section_ = Section::kHead;
    return true;
  }

  // `    0         1         4         8        32        32   RUNNING  MISMATCH`, read from
  // its end (a prefix before it adds tokens at the front). False for another line.
  bool TableRow(std::string_view t) {
    if (t.find("#  in group") != std::string_view::npos) return true;  // the header's 2nd line
    const auto tok = Tokens(t);
    if (tok.size() < 8) return false;
    const auto* f = &tok[tok.size() - 8];
    std::int64_t v[6] = {};
    for (int i = 0; i < 6; ++i) {
      std::string_view s = f[i];
      const auto n = TakeInt(&s);
      if (!n) return false;
      if (i != 3 && !s.empty()) return false;  // `Ranks per node` may be a range: `4-8`
      v[i] = *n;
    }
    groups_[static_cast<std::int32_t>(v[0])] =
        Group{.comms = static_cast<std::int32_t>(std::clamp<std::int64_t>(v[1], 0, kMaxRank)),
              .nodes = static_cast<std::int32_t>(std::clamp<std::int64_t>(v[2], 0, kMaxRank)),
              .size = static_cast<std::int32_t>(std::clamp<std::int64_t>(v[4], 0, kMaxRank)),
              .status = Intern(f[6]),
              .errors = Intern(f[7])};
    return true;
  }

  // `#0-0 (9f2b3c4d5e6f7a81) MISMATCH`: a communicator's section.
  bool CommHeader(const Line& l, std::string_view s) {
    s.remove_prefix(1);
    const auto g = TakeInt(&s);
    if (!g || !Eat(&s, "-") || !TakeInt(&s) || !Eat(&s, " (")) return false;
    const std::size_t close = s.find(')');
    if (close == std::string_view::npos || close == 0) return false;
    const std::string_view hash = s.substr(0, close);
    if (!std::all_of(hash.begin(), hash.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      return false;
    const std::string_view kind = Trim(s.substr(close + 1));
    if (kind == "INCOMPLETE") {
      sub_ = Sub::kCommIncomplete;
    } else if (kind == "ERROR") {
      sub_ = Sub::kCommError;
    } else if (kind == "MISMATCH") {
      sub_ = Sub::kNone;  // its status or counts line says which
    } else {
      return false;
    }
    hash_ = Intern(hash);
    const auto it = groups_.find(static_cast<std::int32_t>(*g));
    group_ = it == groups_.end() ? Group{} : it->second;
    counts_.clear();
    if (std::find(comms_seen_.begin(), comms_seen_.end(), hash_) == comms_seen_.end()) {
      comms_seen_.push_back(hash_);
      out_->log.events.push_back(NewEvent(Kind::kRasComm, file_, l, time_,
                                          RasComm{.hash = hash_,
                                                  .status = group_.status,
                                                  .errors = group_.errors,
                                                  .report = reports_,
                                                  .size = group_.size,
                                                  .nodes = group_.nodes}));
    }
    return true;
  }

  // `31 ranks have launched up to operation 642`, `2 ranks have not launched any operations`,
  // `3 ranks have status ABORT`, `4 ranks reported Remote process error`: a set of ranks of one
  // value, the most frequent first; its ranks follow when RAS lists them.
  void GroupLine(std::string_view t, std::size_t at) {
    std::string_view n_text = Trim(t.substr(0, at));
    n_text = n_text.substr(n_text.rfind(' ') == std::string_view::npos ? 0 : n_text.rfind(' ') + 1);
    const auto n = TakeInt(&n_text);
    if (!n) return;
    std::string_view rest = t.substr(at + 7);  // past " ranks "
    ValueSet set{.with = static_cast<std::int32_t>(std::clamp<std::int64_t>(*n, 0, kMaxRank))};
    if (!Value(&rest, &set)) return;
    counts_.push_back(set);
  }

  struct ValueSet {
    std::int64_t count = -1;  // kCounts: operations launched
    StrId word = kNoStr;      // kStatus / kCommError: the status or error
    std::int32_t with = 1;
  };

  // What follows a rank or a set of ranks: `have launched up to operation 642`, `has status
  // ABORT`, `reported Remote process error` (up to ` -- ` when a rank's place follows).
  bool Value(std::string_view* s, ValueSet* v) {
    std::string_view r = *s;
    if (Eat(&r, "have ") || Eat(&r, "has ")) {
      if (Eat(&r, "launched up to operation ")) {
        const auto k = TakeInt(&r);
        if (!k) return false;
        v->count = *k;
      } else if (Eat(&r, "not launched any operations")) {
        v->count = 0;
      } else if (Eat(&r, "status ")) {
        v->word = Intern(r.substr(0, r.find(' ')));
      } else {
        return false;
      }
    } else if (Eat(&r, "reported ")) {
      v->word = Intern(r.substr(0, r.find(" -- ")));
    } else {
      return false;
    }
    *s = r;
    return true;
  }

  // `3,5`: ranks of the communicator it has no data from (2.24, 2.25: numbers only).
  void RankList(const Line& l, std::string_view s) {
    while (!s.empty()) {
      Eat(&s, ",");
      const auto r = TakeInt(&s);
      if (!r) return;
      if (*r < 0 || *r > kMaxRank) continue;
      RasRank rank{.why = sub_ == Sub::kCommIncomplete ? Why::kMissing : Why::kStatus,
                   .hash = hash_,
                   .report = reports_,
                   .comm_size = group_.size,
                   .comm_rank = static_cast<std::int32_t>(*r)};
      if (rank.why == Why::kStatus) rank.op = Intern("UNKNOWN");
      out_->log.events.push_back(NewEvent(Kind::kRasRank, file_, l, time_, rank));
    }
  }

  // `<pid> on node <ip> managing GPU 3` (a job process without a rank: dead or silent).
  void ProcessLine(const Line& l, std::string_view s) {
    RasRank r{.why = sub_ == Sub::kJobDead ? Why::kDead : Why::kMissing, .report = reports_};
    const auto pid = TakeInt(&s);
    if (!pid || !Eat(&s, " on node ")) return;
    r.pid = static_cast<std::int32_t>(*pid);
    r.node = Intern(s.substr(0, s.find(' ')));
    if (const std::size_t g = s.find(" GPU"); g != std::string_view::npos) {
      std::string_view gs = s.substr(g + 4);
      Eat(&gs, "s");
      Eat(&gs, " ");
      if (const auto gpu = TakeInt(&gs)) r.gpu = static_cast<std::int32_t>(*gpu);
    }
    out_->log.events.push_back(NewEvent(Kind::kRasRank, file_, l, time_, r));
  }

  // `Rank 17 has launched up to operation 641 -- GPU 1 managed by process 48213 on node
  // 10.0.0.3`, `Rank 5 -- GPU 3 ...` (one of the set above), `Rank 2 -- [process information
  // not found]`.
  void RankLine(const Line& l, std::string_view s) {
    const auto rank = TakeInt(&s);
    if (!rank || *rank < 0) return;
    RasRank r{.hash = hash_,
              .report = reports_,
              .comm_size = group_.size,
              .comm_rank = static_cast<std::int32_t>(std::min<std::int64_t>(*rank, kMaxRank))};
    ValueSet own;
    if (Eat(&s, " ") && Value(&s, &own)) {
      counts_.push_back(own);  // a set of one
    } else if (!s.starts_with(" -- ") && !s.starts_with("-- ")) {
      return;
    }
    if (const std::size_t w = s.find("-- "); w != std::string_view::npos)
      Place(s.substr(w + 3), &r);
    switch (sub_) {
      case Sub::kCommIncomplete:
        r.why = Why::kMissing;
        break;
      case Sub::kCommError:
        r.why = Why::kError;
        if (!counts_.empty()) r.op = counts_.back().word;
        break;
      case Sub::kStatus:
      case Sub::kCounts: {
        // The first set is the most frequent: its members are the communicator's norm.
        if (counts_.size() < 2) return;
        const ValueSet& norm = counts_.front();
        const ValueSet& mine = counts_.back();
        r.with = mine.with;
        if (sub_ == Sub::kStatus) {
          r.why = Why::kStatus;
          r.op = mine.word;
        } else {
          r.why = mine.count < norm.count ? Why::kBehind : Why::kAhead;
          r.op = op_;
          r.count = mine.count;
          r.common = norm.count;
        }
        break;
      }
      default:
        return;
    }
    out_->log.events.push_back(NewEvent(Kind::kRasRank, file_, l, time_, r));
  }

  // `GPU 1 managed by process 48213 on node 10.0.0.3`, `GPU 1 (NVML 3) managed by ...`.
  static void PlaceInto(std::string_view s, RasRank* r, StringTable* strings) {
    if (Eat(&s, "GPU ")) {
      if (const auto g = TakeInt(&s)) r->gpu = static_cast<std::int32_t>(*g);
    }
    if (const std::size_t p = s.find("managed by process "); p != std::string_view::npos) {
      std::string_view ps = s.substr(p + 19);
      if (const auto pid = TakeInt(&ps)) r->pid = static_cast<std::int32_t>(*pid);
      if (Eat(&ps, " on node ")) {
        const std::string_view node = ps.substr(0, ps.find(' '));
        if (!node.empty()) r->node = strings->Intern(node);
      }
    }
  }
  void Place(std::string_view s, RasRank* r) { PlaceInto(s, r, &out_->log.strings); }

  std::uint32_t file_;
  RasRead* out_;
  bool open_ = false;
  std::int32_t reports_ = 0;
  TimeNs time_ = 0;
  std::size_t first_event_ = 0;
  Section section_ = Section::kHead;
  Sub sub_ = Sub::kNone;
  std::map<std::int32_t, Group> groups_;
  std::vector<StrId> comms_seen_;
  StrId hash_ = kNoStr, op_ = kNoStr;
  Group group_;
  std::vector<ValueSet> counts_;
};

// ---- JSON -------------------------------------------------------------------------------

// 2.28.7 and 2.28.9 write a missing rank's `"nvml_dev": <n>` without the comma before its
// `"status"`: put it back. The number of commas added.
int RepairMissingComma(std::string* doc) {
  int added = 0;
  constexpr std::string_view kKey = "\"nvml_dev\":";
  for (std::size_t at = doc->find(kKey); at != std::string::npos; at = doc->find(kKey, at + 1)) {
    std::size_t i = at + kKey.size();
    while (i < doc->size() && (*doc)[i] == ' ') ++i;
    if (i < doc->size() && (*doc)[i] == '-') ++i;
    const std::size_t digits = i;
    while (i < doc->size() && std::isdigit(static_cast<unsigned char>((*doc)[i]))) ++i;
    if (i == digits) continue;
    std::size_t j = i;
    while (j < doc->size() && std::isspace(static_cast<unsigned char>((*doc)[j]))) ++j;
    if (j < doc->size() && (*doc)[j] == '"') {
      doc->insert(i, 1, ',');
      ++added;
    }
  }
  return added;
}

// "Remote process error", ...: an ncclResult_t as RAS's text words it.
std::string_view NcclResultName(std::int64_t v) {
  switch (v) {
    case 1:
      return "Unhandled CUDA error";
    case 2:
      return "System error";
    case 3:
      return "Internal error";
    case 4:
      return "Invalid argument";
    case 5:
      return "Invalid usage";
    case 6:
      return "Remote process error";
    default:
      return "Unexpected error";
  }
}

constexpr std::string_view kOps[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                     "AllReduce"};

// One JSON report: its document's lines (`lines[first, end)`), read into events.
class JsonReport {
 public:
  JsonReport(std::uint32_t file, std::int32_t report, TimeNs stamp, RasRead* out)
      : file_(file), report_(report), stamp_(stamp), out_(out) {}

  // False (and a note) when the document does not read.
  bool Read(const std::vector<Line>& lines, std::size_t first, std::size_t end,
            std::string_view text) {
    const std::uint64_t from = lines[first].offset;
    const std::uint64_t to = end < lines.size() ? lines[end].offset : text.size();
    std::string doc(text.substr(from, to - from));
    if (const int fixed = RepairMissingComma(&doc); fixed > 0) {
      out_->notes.push_back(
          "NCCL RAS JSON from 2.28.7/2.28.9 lacks a comma after \"nvml_dev\" (fixed in 2.29): " +
          std::to_string(fixed) + " repaired (line " + std::to_string(lines[first].number) + ")");
    }
    // A rank object is ~300 bytes of short keys and numbers: ~40 values, each an arena slot.
    d_ = JsonAsPickle(doc, 8);
    if (!d_.ok()) {
      out_->notes.push_back("NCCL RAS JSON report at line " + std::to_string(lines[first].number) +
                            " does not read: " + d_.error_detail + "; skipped");
      return false;
    }
    if (d_.root.kind != VKind::kDict || d_.Get(d_.root, "communicators") == nullptr) {
      out_->notes.push_back("NCCL RAS JSON report at line " + std::to_string(lines[first].number) +
                            " has no \"communicators\"; skipped");
      return false;
    }
    doc_line_ = &lines[first];
    // The lines of each rank object's `"rank":` key and each communicator's `"hash":`, in
    // document order: the values are walked in the same order.
    for (std::size_t i = first; i < end; ++i) {
      for (std::size_t at = lines[i].text.find("\"rank\":"); at != std::string_view::npos;
           at = lines[i].text.find("\"rank\":", at + 1))
        rank_lines_.push_back(&lines[i]);
      for (std::size_t at = lines[i].text.find("\"hash\":"); at != std::string_view::npos;
           at = lines[i].text.find("\"hash\":", at + 1))
        hash_lines_.push_back(&lines[i]);
    }
    TimeNs time = stamp_;
    if (time == 0) {
      std::string ts(d_.Str(*Or(d_.Get(d_.root, "timestamp"))));
      if (ts.size() == 19 && ts[10] == ' ') {
        ts[10] = 'T';
        time = ParseRfc3339(ts + "Z").value_or(0);
      }
    }
    time_ = time;
    const std::size_t report_at = out_->log.events.size();
    out_->log.events.push_back(
        NewEvent(Kind::kRasReport, file_, lines[first], time_,
                 RasReport{.nccl_version = Intern(d_.Str(*Or(d_.Get(d_.root, "nccl_version")))),
                           .report = report_,
                           .json = true}));
    std::int32_t world = -1;
    const auto comms = d_.Items(*d_.Get(d_.root, "communicators"));
    for (const PyValue& c : comms) {
      if (const auto size = d_.GetInt(c, "size"))
        world = std::max<std::int32_t>(world, static_cast<std::int32_t>(*size));
    }
    std::map<std::pair<std::string, std::int64_t>, bool> dead, silent;
    world_ = world;
    for (const PyValue& c : comms) Communicator(c, &dead, &silent);
    auto& rep = std::get<RasReport>(out_->log.events[report_at].detail);
    rep.comms = static_cast<std::int32_t>(comms.size());
    rep.dead = static_cast<std::int32_t>(dead.size());
    rep.incomplete = static_cast<std::int32_t>(silent.size());
    GlobalRanks(world, &out_->log.events, report_at, std::move(world_members_));
    return true;
  }

 private:
  static const PyValue* Or(const PyValue* v) {
    static const PyValue none;
    return v != nullptr ? v : &none;
  }
  StrId Intern(std::string_view v) { return v.empty() ? kNoStr : out_->log.strings.Intern(v); }
  // The line of the next rank object's `"rank":` key; the document's first line when the keys
  // and the values disagree (a document whose keys are not what RAS writes).
  const Line& NextRankLine() {
    return rank_seen_ < rank_lines_.size() ? *rank_lines_[rank_seen_++] : *doc_line_;
  }
  std::int64_t Int(const PyValue& d, std::string_view key, std::int64_t dflt = -1) const {
    return d_.GetInt(d, key).value_or(dflt);
  }
  bool Bool(const PyValue& d, std::string_view key) const {
    const PyValue* v = d_.Get(d, key);
    return v != nullptr && v->kind == VKind::kBool && v->i != 0;
  }

  struct Member {
    const Line* line = nullptr;
    std::int32_t rank = -1, pid = -1, gpu = -1;
    StrId node = kNoStr;
    std::string host;
    std::int64_t counts[5] = {-1, -1, -1, -1, -1};
    std::string_view status;  // RUNNING, INIT, FINALIZE, ABORT
    std::int64_t error = 0;
  };

  Member ReadMember(const PyValue& r) {
    Member m;
    m.line = &NextRankLine();
    m.rank = static_cast<std::int32_t>(std::clamp<std::int64_t>(Int(r, "rank"), -1, kMaxRank));
    m.pid = static_cast<std::int32_t>(std::clamp<std::int64_t>(Int(r, "pid"), -1, INT32_MAX));
    m.gpu = static_cast<std::int32_t>(std::clamp<std::int64_t>(Int(r, "cuda_dev"), -1, 1 << 16));
    m.host = std::string(d_.Str(*Or(d_.Get(r, "host"))));
    if (!m.host.empty() && m.host != "unknown") m.node = Intern(m.host);
    if (const PyValue* c = d_.Get(r, "collective_counts")) {
      for (int op = 0; op < 5; ++op) m.counts[op] = Int(*c, kOps[op]);
    }
    if (const PyValue* st = d_.Get(r, "status")) {
      m.status = Bool(*st, "abort_flag")                                     ? "ABORT"
                 : Bool(*st, "finalize_called") || Bool(*st, "destroy_flag") ? "FINALIZE"
                 : Int(*st, "init_state", 0) != 0                            ? "INIT"
                                                                             : "RUNNING";
      m.error = Int(*st, "async_error", 0);
    }
    return m;
  }

  void Emit(const Member& m, const RasRank& base) {
    RasRank r = base;
    r.comm_rank = m.rank;
    r.pid = m.pid;
    r.gpu = m.gpu;
    r.node = m.node;
    out_->log.events.push_back(NewEvent(Kind::kRasRank, file_, *m.line, time_, r));
  }

  void Communicator(const PyValue& c, std::map<std::pair<std::string, std::int64_t>, bool>* dead,
                    std::map<std::pair<std::string, std::int64_t>, bool>* silent) {
    const Line& at = comm_seen_ < hash_lines_.size() ? *hash_lines_[comm_seen_] : *doc_line_;
    ++comm_seen_;
    if (c.kind != VKind::kDict) return;
    std::string_view hash = d_.Str(*Or(d_.Get(c, "hash")));
    if (hash.starts_with("0x")) hash.remove_prefix(2);
    const StrId hash_id = Intern(hash);
    const auto size =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(Int(c, "size"), -1, kMaxRank));
    std::vector<Member> ranks, missing;
    std::vector<bool> missing_dead, missing_silent;
    for (std::size_t i = 0; i + 1 < d_.containers[c.ref].items.size(); i += 2) {
      const std::string_view key = d_.Str(d_.containers[c.ref].items[i]);
      const PyValue& v = d_.containers[c.ref].items[i + 1];
      if (key != "ranks" && key != "missing_ranks") continue;
      for (const PyValue& r : d_.Items(v)) {
        if (r.kind != VKind::kDict) continue;
        Member m = ReadMember(r);
        if (key == "ranks") {
          ranks.push_back(std::move(m));
        } else {
          const PyValue* st = d_.Get(r, "status");
          missing_dead.push_back(st != nullptr && Bool(*st, "considered_dead"));
          missing_silent.push_back(st != nullptr && Bool(*st, "unresponsive"));
          missing.push_back(std::move(m));
        }
      }
    }
    // Every member of the world communicator ties its process to its global rank.
    if (size == world_ && size > 0) {
      for (const std::vector<Member>* members : {&ranks, &missing}) {
        for (const Member& m : *members) {
          if (m.node != kNoStr && m.pid >= 0 && m.rank >= 0)
            world_members_[{m.node, m.pid}] = m.rank;
        }
      }
    }
    const std::size_t before = out_->log.events.size();
    const RasRank base{.hash = hash_id, .report = report_, .comm_size = size};
    bool mismatch = false;
    // Per operation type: the count most ranks have; the ranks with another.
    for (int op = 0; op < 5; ++op) {
      std::map<std::int64_t, std::int32_t> freq;
      for (const Member& m : ranks) {
        if (m.counts[op] >= 0) ++freq[m.counts[op]];
      }
      if (freq.size() < 2) continue;
      mismatch = true;
      const auto norm =
          std::max_element(freq.begin(), freq.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      const bool tie = std::count_if(freq.begin(), freq.end(),
                                     [&](const auto& f) { return f.second == norm->second; }) > 1;
      if (tie) continue;  // no norm: which side is odd the counts do not say
      for (const Member& m : ranks) {
        if (m.counts[op] < 0 || m.counts[op] == norm->first) continue;
        RasRank r = base;
        r.why = m.counts[op] < norm->first ? Why::kBehind : Why::kAhead;
        r.op = Intern(kOps[op]);
        r.count = m.counts[op];
        r.common = norm->first;
        r.with = freq[m.counts[op]];
        Emit(m, r);
      }
    }
    std::map<std::string_view, std::int32_t> statuses;
    for (const Member& m : ranks) ++statuses[m.status];
    if (statuses.size() > 1) {
      mismatch = true;
      const auto norm =
          std::max_element(statuses.begin(), statuses.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      for (const Member& m : ranks) {
        if (m.status == norm->first) continue;
        RasRank r = base;
        r.why = Why::kStatus;
        r.op = Intern(m.status);
        r.with = statuses[m.status];
        Emit(m, r);
      }
    }
    bool error = false;
    for (const Member& m : ranks) {
      if (m.error == 0 || m.error == 7) continue;  // success, in progress
      error = true;
      RasRank r = base;
      r.why = Why::kError;
      r.op = Intern(NcclResultName(m.error));
      Emit(m, r);
    }
    for (std::size_t i = 0; i < missing.size(); ++i) {
      RasRank r = base;
      r.why = missing_dead[i] ? Why::kDead : missing_silent[i] ? Why::kMissing : Why::kStatus;
      if (r.why == Why::kStatus) r.op = Intern("NOCOMM");
      const auto key = std::make_pair(missing[i].host, static_cast<std::int64_t>(missing[i].pid));
      if (missing_dead[i])
        (*dead)[key] = true;
      else if (missing_silent[i])
        (*silent)[key] = true;
      Emit(missing[i], r);
    }
    if (out_->log.events.size() == before) return;
    std::string errors;
    const auto add = [&](std::string_view w) {
      if (!errors.empty()) errors += ',';
      errors.append(w);
    };
    if (!missing.empty()) add("INCOMPLETE");
    if (error) add("ERROR");
    if (mismatch) add("MISMATCH");
    out_->log.events.insert(
        out_->log.events.begin() + static_cast<std::ptrdiff_t>(before),
        NewEvent(
            Kind::kRasComm, file_, at, time_,
            RasComm{.hash = hash_id, .errors = Intern(errors), .report = report_, .size = size}));
  }

  std::uint32_t file_;
  std::int32_t report_;
  TimeNs stamp_, time_ = 0;
  RasRead* out_;
  ckpt::Pickle d_;
  std::vector<const Line*> rank_lines_, hash_lines_;
  const Line* doc_line_ = nullptr;
  std::int32_t world_ = -1;
  ProcessRanks world_members_;
  std::size_t rank_seen_ = 0, comm_seen_ = 0;
};

bool JsonStart(std::string_view line) {
  return line.starts_with("{") &&
         (line.size() == 1 || line.find("\"nccl_version\"") != std::string_view::npos ||
          Trim(line) == "{");
}

void ReadJson(std::string_view text, const std::vector<Line>& lines, std::uint32_t file,
              RasRead* out) {
  // Documents start at a line that opens an object at its first column; a stamp line before one
  // is its time.
  struct Doc {
    std::size_t first, end;
    TimeNs stamp;
  };
  std::vector<Doc> docs;
  TimeNs stamp = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (JsonStart(lines[i].text)) {
      if (!docs.empty() && docs.back().end == lines.size()) docs.back().end = i;
      docs.push_back({i, lines.size(), stamp});
      stamp = 0;
    } else if (const TimeNs t = StampLine(lines[i].text); t > 0) {
      if (!docs.empty() && docs.back().end == lines.size()) docs.back().end = i;
      stamp = t;
    }
  }
  const std::size_t skip =
      docs.size() > kNcclRasReportsRead ? docs.size() - kNcclRasReportsRead : 0;
  if (skip > 0) {
    out->notes.push_back(std::to_string(docs.size()) + " NCCL RAS reports: the newest " +
                         std::to_string(kNcclRasReportsRead) + " read, " + std::to_string(skip) +
                         " older ones not");
  }
  std::int32_t read = 0;
  for (std::size_t d = skip; d < docs.size(); ++d) {
    JsonReport report(file, read, docs[d].stamp, out);
    if (report.Read(lines, docs[d].first, docs[d].end, text)) ++read;
  }
  if (read == 0 && out->problem.empty()) out->problem = "no NCCL RAS JSON report reads";
}

}  // namespace

RasForm SniffNcclRas(std::string_view head, bool* undecided) {
  if (undecided != nullptr) *undecided = false;
  int seen = 0;
  for (std::size_t at = 0; at < head.size() && seen < 8;) {
    const std::size_t begin = at;
    std::size_t end = head.find('\n', at);
    if (end == std::string_view::npos) {
      if (undecided != nullptr && seen == 0) *undecided = true;  // the first line is not whole
      end = head.size();
    }
    const std::string_view l = head.substr(begin, end - begin);
    at = end + 1;
    if (Trim(l).empty() || (l.size() < 80 && StampLine(l) > 0)) continue;
    ++seen;
    if (ReportStart(l)) return RasForm::kText;
    if (!l.starts_with("{")) return RasForm::kNone;
    // The JSON form: an object whose first key is `"nccl_version"` (pretty-printed or not).
    const std::string_view rest = Trim(head.substr(begin + 1, 256));
    const std::size_t k = rest.find_first_not_of(" \t\r\n");
    return k != std::string_view::npos && rest.substr(k).starts_with("\"nccl_version\"")
               ? RasForm::kJson
               : RasForm::kNone;
  }
  if (undecided != nullptr && seen == 0) *undecided = true;
  return RasForm::kNone;
}

RasRead ReadNcclRas(std::string_view text, RasForm form, std::uint32_t file) {
  RasRead out;
  const std::vector<Line> lines = SplitLines(text);
  out.log.lines = static_cast<std::int64_t>(lines.size());
  if (form == RasForm::kText) {
    TextReader(file, &out).Read(lines);
  } else if (form == RasForm::kJson) {
    ReadJson(text, lines, file, &out);
  }
  if (out.problem.empty() && out.log.events.empty()) out.problem = "no NCCL RAS report reads";
  for (const Event& e : out.log.events) out.log.untimed += e.clock == Clock::kNone ? 1 : 0;
  return out;
}

std::string_view RasWhyName(RasRank::Why why) {
  switch (why) {
    case Why::kBehind:
      return "behind";
    case Why::kAhead:
      return "ahead";
    case Why::kMissing:
      return "missing";
    case Why::kDead:
      return "dead";
    case Why::kStatus:
      return "status";
    case Why::kError:
      return "error";
  }
  return "behind";
}

}  // namespace denpex::engine
