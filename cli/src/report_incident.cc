// What the incident report's two formats share: the cited lines' context read from the
// incident directory, the timeline on aligned clocks, and the rows of each section as text.
#include "report_incident.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <system_error>

#include "denpex/common/text.h"
#include "denpex/common/time.h"
#include "eval_internal.h"

namespace denpex::cli {
namespace fs = std::filesystem;

namespace {

std::string Fixed(double v, const char* fmt) {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// RFC 3339 to the millisecond: "2026-03-02T09:17:03.123Z".
std::string Stamp(TimeNs t) {
  const std::string s = FormatRfc3339(t);
  return s.size() > 24 ? s.substr(0, 23) + "Z" : s;
}

double Seconds(TimeNs t) { return static_cast<double>(t) / kNsPerSec; }

// A line as the report holds it: no CR of a CRLF line, at most kReportMaxLineBytes bytes (cut
// on a UTF-8 boundary, the cut said). `s` may be a prefix of a line of `total` bytes.
std::string Bounded(std::string s, std::size_t total) {
  if (total == s.size() && !s.empty() && s.back() == '\r') {
    s.pop_back();
    --total;
  }
  if (total <= kReportMaxLineBytes) return s;
  std::size_t n = std::min(kReportMaxLineBytes, s.size());
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + " [... cut: " + std::to_string(total) + " bytes]";
}
std::string Bounded(std::string s) {
  const std::size_t n = s.size();
  return Bounded(std::move(s), n);
}

bool CompressedMagic(std::string_view head) {
  return head.starts_with("\x1f\x8b") ||
         head.starts_with(
             "\xfd"
             "7zXZ") ||
         head.starts_with("\x28\xb5\x2f\xfd");
}

// The file `rel` names inside `root` (links resolved, never leaving it), or why not.
std::optional<fs::path> Inside(const fs::path& root, const std::string& rel, std::string* why) {
  const fs::path p(rel);
  if (rel.empty() || p.is_absolute() || std::find(p.begin(), p.end(), fs::path("..")) != p.end()) {
    *why = "not shown: the cited path is not a file inside the incident directory";
    return std::nullopt;
  }
  std::error_code ec;
  const fs::path base = fs::canonical(root, ec);
  const fs::path file = ec ? fs::path() : fs::canonical(root / p, ec);
  if (ec) {
    *why = "not shown: the file is no longer in the incident directory (the line as cited)";
    return std::nullopt;
  }
  const auto [b, f] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (b != base.end()) {
    *why = "not shown: the file links outside the incident directory";
    return std::nullopt;
  }
  if (!fs::is_regular_file(file, ec)) {
    *why = "not shown: not a regular file";
    return std::nullopt;
  }
  return file;
}

// Reads lines 1..`last` of `file` in 64 KiB blocks, each line kept to kReportMaxLineBytes + 1
// bytes (enough to see a cut), and hands each wanted one to `keep`. Returns the lines seen (a
// file without a final newline counts its last piece), or nullopt when it cannot be opened.
template <typename Wanted, typename Keep>
std::optional<std::uint32_t> ScanLines(const fs::path& file, std::uint32_t last, Wanted wanted,
                                       Keep keep, std::string* head) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::vector<char> buf(64 * 1024);
  std::string line;
  std::size_t line_bytes = 0;
  std::uint32_t n = 1;
  bool first_block = true;
  bool want = wanted(n);
  while (n <= last) {
    const std::size_t got = std::fread(buf.data(), 1, buf.size(), f);
    if (got == 0) break;
    if (first_block) head->assign(buf.data(), std::min<std::size_t>(got, 8));
    first_block = false;
    for (std::size_t i = 0; i < got && n <= last; ++i) {
      if (buf[i] == '\n') {
        if (want) keep(n, line, line_bytes);
        line.clear();
        line_bytes = 0;
        want = wanted(++n);
        continue;
      }
      ++line_bytes;
      if (want && line.size() <= kReportMaxLineBytes) line.push_back(buf[i]);
    }
  }
  std::fclose(f);
  if (n <= last && line_bytes > 0) {  // the last line, with no newline after it
    if (want) keep(n, line, line_bytes);
    return n;
  }
  return n - 1;
}

// The context of every cited line of one file, read in one pass.
void ReadFileContexts(const fs::path& incident, std::vector<EvidenceContext*> cited) {
  std::string why;
  const auto file = Inside(incident, cited.front()->cited.file(), &why);
  if (!file) {
    for (EvidenceContext* c : cited) c->note = why;
    return;
  }
  std::uint32_t last = 0;
  for (const EvidenceContext* c : cited) {
    last = std::max(last, static_cast<std::uint32_t>(c->cited.line()) + kReportContext);
  }
  auto wanted = [&](std::uint32_t n) {
    for (const EvidenceContext* c : cited) {
      const std::uint32_t at = c->cited.line();
      if (n + kReportContext >= at && n <= at + kReportContext) return true;
    }
    return false;
  };
  std::map<std::uint32_t, std::string> lines;
  std::string head;
  const auto seen = ScanLines(
      *file, last, wanted,
      [&](std::uint32_t n, const std::string& text, std::size_t bytes) {
        lines[n] = Bounded(text, bytes);
      },
      &head);
  for (EvidenceContext* c : cited) {
    const std::uint32_t at = c->cited.line();
    if (!seen) {
      c->note = "not shown: the file cannot be opened (the line as cited)";
    } else if (CompressedMagic(head)) {
      c->note = "not shown: a compressed file (the line as cited)";
    } else if (at == 0 || at > *seen) {
      c->note = "not shown: the file has " + std::to_string(*seen) + " lines, line " +
                std::to_string(at) + " is not one of them (changed since the diagnosis?)";
    } else {
      c->first_line = at > kReportContext ? at - kReportContext : 1;
      for (std::uint32_t n = c->first_line; n <= at + kReportContext && lines.count(n); ++n) {
        c->lines.push_back(lines[n]);
      }
    }
  }
}

const engine::RankFirstError* FirstErrorOf(const IncidentReport& r, std::int32_t rank) {
  for (const auto& e : r.times.ranks) {
    if (rank >= 0 && e.rank == rank) return &e;
  }
  return nullptr;
}

// The initiator's time when it printed no error of its own (a SIGKILLed rank is silent): the
// diagnosis's estimate of when it stopped.
std::optional<TimeNs> SilentInitiatorTime(const IncidentReport& r) {
  const v1::Initiator& ini = r.diagnosis.initiator();
  if (ini.rank() < 0 || FirstErrorOf(r, ini.rank()) != nullptr) return std::nullopt;
  return ParseRfc3339(ini.time());
}

// The origin of the timeline's x axis and what it is.
std::optional<TimeNs> Origin(const IncidentReport& r, std::string* what) {
  const auto& ranks = r.times.ranks;
  const std::int32_t ini = r.diagnosis.initiator().rank();
  if (const auto* e = FirstErrorOf(r, ini)) {
    *what = "rank " + std::to_string(ini) + "'s first error (the initiator)";
    return e->aligned;
  }
  if (auto t = ParseRfc3339(r.diagnosis.initiator().time())) {
    *what = "the initiator's time";
    return t;
  }
  if (!ranks.empty()) {
    const auto it = std::min_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
      return a.aligned < b.aligned;
    });
    *what = "the earliest error (rank " + std::to_string(it->rank) + ")";
    return it->aligned;
  }
  return std::nullopt;
}

std::map<std::string, TimeNs> Offsets(const engine::CascadeTimes& t) {
  std::map<std::string, TimeNs> by_node;
  for (const auto& c : t.clocks) by_node[c.node] = c.offset;
  return by_node;
}

v1::TimelinePoint Point(const std::string& kind, int rank, double seconds, std::string label) {
  v1::TimelinePoint p;
  p.set_kind(kind);
  p.set_rank(rank);
  p.set_seconds(seconds);
  p.set_label(std::move(label));
  return p;
}

}  // namespace

std::string EnumWord(const std::string& enum_name, std::string_view prefix) {
  return enum_name.starts_with(prefix) ? enum_name.substr(prefix.size()) : enum_name;
}

std::string Shown(const std::string& raw) { return EscapeControlBytes(raw); }

IncidentReport BuildIncidentReport(const fs::path& incident, v1::Diagnosis diagnosis,
                                   engine::CascadeTimes times) {
  IncidentReport r{
      .incident = incident.string(), .diagnosis = std::move(diagnosis), .times = std::move(times)};
  const auto& cited = r.diagnosis.evidence();
  const int shown = std::min<int>(cited.size(), kReportMaxEvidence);
  r.evidence_left_out = cited.size() - shown;
  r.evidence.resize(shown);
  std::map<std::string, std::vector<EvidenceContext*>> by_file;
  for (int i = 0; i < shown; ++i) {
    r.evidence[i].cited = cited[i];
    r.evidence[i].cited.set_text(Bounded(cited[i].text()));
    by_file[cited[i].file()].push_back(&r.evidence[i]);
  }
  for (auto& [file, contexts] : by_file) ReadFileContexts(incident, contexts);
  return r;
}

std::vector<std::vector<std::string>> VerdictRows(const v1::Diagnosis& d) {
  const v1::Initiator& ini = d.initiator();
  std::vector<std::vector<std::string>> rows = {
      {"verdict", EnumWord(v1::Verdict_Name(d.verdict()), "VERDICT_")},
      {"initiator", engine::DescribeInitiator(d)},
      {"node", ini.node().empty() ? "-" : ini.node()},
      {"time", ini.time().empty() ? "-" : ini.time()},
      {"class", EnumWord(v1::FailureClass_Name(ini.failure_class()), "FAILURE_CLASS_")},
      {"owner", EnumWord(v1::Owner_Name(d.owner()), "OWNER_")},
      {"confidence", Fixed(ini.confidence(), "%.2f")},
  };
  if (!ini.gpu().empty()) rows.push_back({"GPU", ini.gpu()});
  rows.push_back({"strategy", d.strategy()});
  rows.push_back({"why", d.reason()});
  return rows;
}

std::vector<std::string> MissingLines(const v1::Diagnosis& d) {
  std::vector<std::string> out;
  if (d.verdict() == v1::VERDICT_DIAGNOSED) return out;
  out.push_back("Why no answer: " + d.reason());
  if (d.candidates_size() > 0) {
    std::string c = "Candidates, most likely first:";
    for (int i = 0; i < d.candidates_size() && i < 5; ++i) {
      const auto& k = d.candidates(i);
      c += (i ? ", rank " : " rank ") + std::to_string(k.rank()) +
           (k.node().empty() ? "" : " on " + k.node()) + " (score " + Fixed(k.score(), "%.3f") +
           ")";
    }
    out.push_back(c);
  }
  const v1::InputReport& in = d.input();
  if (in.world_size() > 0 && in.ranks_seen() < in.world_size()) {
    out.push_back("Logs of " + std::to_string(in.ranks_seen()) + " of " +
                  std::to_string(in.world_size()) + " ranks: the others' files are missing");
  }
  if (in.unreadable_files() > 0 || in.malformed_lines() > 0) {
    out.push_back(std::to_string(in.unreadable_files()) + " unreadable files, " +
                  std::to_string(in.malformed_lines()) + " malformed lines");
  }
  for (int i = 0; i < in.problems_size() && i < kReportMaxRows; ++i) {
    out.push_back("Input problem: " + in.problems(i));
  }
  return out;
}

std::string TimelineOrigin(const IncidentReport& r) {
  std::string what;
  if (!Origin(r, &what)) return "";
  return "seconds after " + what +
         (r.times.aligned ? ", on aligned clocks" : ", as printed (no clock aligned)");
}

v1::Timeline IncidentTimeline(const IncidentReport& r) {
  v1::Timeline tl;
  std::string what;
  const auto origin = Origin(r, &what);
  std::int32_t world =
      std::max(r.diagnosis.input().world_size(), r.diagnosis.initiator().rank() + 1);
  for (const auto& e : r.times.ranks) world = std::max(world, e.rank + 1);
  tl.set_world_size(world);
  tl.set_source(r.times.aligned ? "events, aligned clocks" : "events, printed clocks");
  if (!origin) return tl;
  const std::size_t stride = (r.times.ranks.size() + kMaxRankPoints - 1) / kMaxRankPoints;
  const std::int32_t ini = r.diagnosis.initiator().rank();
  for (std::size_t i = 0; i < r.times.ranks.size(); ++i) {
    const auto& e = r.times.ranks[i];
    const double s = Seconds(e.aligned - *origin);
    if (e.rank == ini && r.diagnosis.verdict() == v1::VERDICT_DIAGNOSED) {
      *tl.add_points() = Point("initiator", e.rank, s, "initiator: " + e.what);
    }
    if (i % std::max<std::size_t>(1, stride) != 0) continue;
    *tl.add_points() = Point("rank", e.rank, s,
                             "first error: " + e.what + "; printed " + Stamp(e.printed) +
                                 (e.node.empty() ? "" : " on " + e.node + "'s clock") +
                                 ", aligned " + Stamp(e.aligned));
  }
  if (const auto silent = SilentInitiatorTime(r);
      silent && r.diagnosis.verdict() == v1::VERDICT_DIAGNOSED) {
    *tl.add_points() = Point("initiator", ini, Seconds(*silent - *origin),
                             "initiator: printed no error; stopped by the diagnosis's estimate");
  }
  for (int i = 0; i < r.diagnosis.cascade().groups_size() && i < 8; ++i) {
    const auto& g = r.diagnosis.cascade().groups(i);
    const auto t = ParseRfc3339(g.first_time());
    if (!t) continue;
    auto p = Point("group", -1, Seconds(*t - *origin),
                   g.family() + ": " + std::to_string(g.count()) + " errors on " +
                       std::to_string(g.ranks()) + " ranks (first, as printed)");
    p.set_count(g.count());
    p.set_ranks(g.ranks());
    *tl.add_points() = std::move(p);
  }
  return tl;
}

std::vector<std::vector<std::string>> RankRows(const IncidentReport& r, int* left_out) {
  std::vector<const engine::RankFirstError*> order;
  for (const auto& e : r.times.ranks) order.push_back(&e);
  const std::int32_t ini = r.diagnosis.initiator().rank();
  std::stable_sort(order.begin(), order.end(), [ini](const auto* a, const auto* b) {
    if ((a->rank == ini) != (b->rank == ini)) return a->rank == ini;
    return a->aligned < b->aligned;  // ties stay in rank order
  });
  std::string what;
  const TimeNs origin = Origin(r, &what).value_or(0);
  const auto offsets = Offsets(r.times);
  std::vector<std::vector<std::string>> rows = {{"rank", "node", "s after origin", "aligned time",
                                                 "printed stamp", "clock offset", "first error",
                                                 "line"}};
  if (const auto silent = SilentInitiatorTime(r)) {
    rows.push_back({std::to_string(ini) + " (initiator)",
                    r.diagnosis.initiator().node().empty() ? "-" : r.diagnosis.initiator().node(),
                    Fixed(Seconds(*silent - origin), "%+.3f"), Stamp(*silent), "-", "-",
                    "no error line of its own: the time it stopped, as the diagnosis estimates",
                    "-"});
  }
  for (const auto* e : order) {
    if (static_cast<int>(rows.size()) > kReportMaxRankRows) break;
    const auto off = offsets.find(e->node);
    rows.push_back({std::to_string(e->rank) + (e->rank == ini ? " (initiator)" : ""),
                    e->node.empty() ? "-" : e->node, Fixed(Seconds(e->aligned - origin), "%+.3f"),
                    Stamp(e->aligned), Stamp(e->printed),
                    off == offsets.end() ? "0" : Fixed(Seconds(off->second), "%+.3f s"), e->what,
                    e->file + ":" + std::to_string(e->line)});
  }
  *left_out = static_cast<int>(order.size() + 1 + (SilentInitiatorTime(r) ? 1 : 0) - rows.size());
  return rows;
}

std::vector<std::vector<std::string>> GroupRows(const v1::Diagnosis& d) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : d.cascade().groups()) {
    if (rows.empty())
      rows.push_back({"errors", "family", "ranks", "first (as printed)", "signature"});
    if (static_cast<int>(rows.size()) > kReportMaxRows) break;
    rows.push_back({std::to_string(g.count()), g.family(), std::to_string(g.ranks()),
                    g.first_time(), Bounded(g.signature())});
  }
  return rows;
}

std::vector<std::vector<std::string>> CheckpointRows(const v1::Diagnosis& d) {
  const v1::CheckpointOutcome& c = d.checkpoint();
  const std::string decision =
      EnumWord(v1::CheckpointDecision_Name(c.decision()), "CHECKPOINT_DECISION_");
  if (c.decision() == v1::CHECKPOINT_DECISION_NOT_EVALUATED ||
      c.decision() == v1::CHECKPOINT_DECISION_UNSPECIFIED) {
    return {{"decision",
             "NOT_EVALUATED: no checkpoint directory in the incident or given with "
             "--checkpoint-dir"}};
  }
  std::vector<std::vector<std::string>> rows = {{"decision", decision}, {"directory", c.dir()}};
  if (c.decision() == v1::CHECKPOINT_DECISION_RESUME) {
    rows.push_back({"resume from", c.path() + " (step " + std::to_string(c.step()) + ")"});
    rows.push_back({"newest step on disk", std::to_string(c.last_written_step())});
    rows.push_back({"steps lost", std::to_string(c.steps_lost())});
  }
  rows.push_back({"why", c.summary()});
  return rows;
}

std::vector<std::vector<std::string>> RejectedRows(const v1::Diagnosis& d) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : d.checkpoint().rejected()) {
    if (rows.empty()) rows.push_back({"rejected checkpoint", "step", "why"});
    if (static_cast<int>(rows.size()) > kReportMaxRows) break;
    rows.push_back({r.path(), std::to_string(r.step()), r.reason()});
  }
  return rows;
}

std::vector<std::string> RecoverySteps(const v1::Diagnosis& d) {
  std::vector<std::string> steps;
  for (const auto& p : d.recovery().preconditions()) {
    steps.push_back(p.action() + (p.target().empty() ? "" : " " + p.target()) + ": " + p.text());
  }
  return steps;
}

std::string InputSummary(const v1::Diagnosis& d) {
  const v1::InputReport& in = d.input();
  return std::to_string(in.files()) + " files, " + std::to_string(in.lines()) + " lines, " +
         std::to_string(in.events()) + " events; " + std::to_string(in.unreadable_files()) +
         " unreadable files, " + std::to_string(in.malformed_lines()) + " malformed lines; " +
         std::to_string(in.ranks_seen()) + " ranks with a log, world size " +
         std::to_string(in.world_size()) + ".";
}

}  // namespace denpex::cli
