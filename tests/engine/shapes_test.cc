// Collection shapes (issue 19): a real incident (corpora/real: torch 1.13, gloo, Slurm 22.05)
// re-laid as operators collect it gives the same events (kinds, ranks, times, cited lines in
// the files as they are) and the same diagnosis as the canonical layout: CRI and `kubectl logs
// --timestamps` stamps, `kubectl logs --prefix` pod tags, Docker's json-file records, a journal's
// JSON export, journal prefixes (short, short-iso, short-precise), a terminal copy (quoting,
// indentation, ANSI colour, hard wraps), line numbers and other opaque prefixes, compressed and
// rotated logs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "ingest/load.h"
#include "parse/headers.h"
#include "parse/prefix.h"
#include "support/gzip.h"
#include "support/json_logs.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using denpex::testing::DockerRecord;
using testing::Slurp;
using testing::TempDir;
using testing::Write;

const fs::path kReal = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real";
constexpr int kYear = 2026;  // the year corpora/real ran in

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Per re-laid file (its canonical path), the line of the re-laid file each canonical line starts
// on (a shape that splits lines adds lines).
std::map<std::string, std::vector<std::uint32_t>> g_first_line;

// Notes where the canonical line `lines.size()` starts in `out` (call before appending its pieces).
struct LineMap {
  std::vector<std::uint32_t> first;
  void Next(const std::vector<std::string>& out) { first.push_back(static_cast<std::uint32_t>(out.size() + 1)); }
};
LineMap* g_map = nullptr;

// The time a collector stamps a line with: the line's own time (its year filled in), else the
// last line's (the file's first time before it has one).
// A file with no time of its own (a torch 1.13 agent's console) is stamped with the incident's
// last time: its lines came at the job's end.
TimeNs g_incident_end = 0;

struct LineClock {
  TimeNs last = g_incident_end;
  explicit LineClock(const std::string& text) {
    for (const std::string& line : Lines(text)) {
      if (Own(line)) break;
    }
  }
  bool Own(std::string_view line) {
    LineOrigin o;
    StripPrefixes(&line, PrefixPolicy{}, &o);
    Header h;
    ParseHeader(line, &h);
    if (o.timed) {
      last = o.time;
    } else if (h.clock == Clock::kFull) {
      last = h.time;
    } else if (h.clock == Clock::kNoYear) {
      CivilTime c = ToCivil(h.time);
      c.year = kYear;
      last = FromCivil(c);
    } else {
      return false;
    }
    return true;
  }
  TimeNs Of(std::string_view line) {
    Own(line);
    return last;
  }
};
// snprintf, not `"0" + std::to_string(v)`: GCC 12 warns (-Wrestrict, a false positive) on that.
std::string TwoDigits(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d", v);
  return buf;
}

std::string Syslog(TimeNs t, bool precise) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const CivilTime c = ToCivil(t);
  std::string out = std::string(kMonths[c.month - 1]) + " " + (c.day < 10 ? " " : "") + std::to_string(c.day) + " " +
                    TwoDigits(c.hour) + ":" + TwoDigits(c.minute) + ":" + TwoDigits(c.second);
  if (precise) {
    const std::string us = std::to_string(c.nanos / 1000);
    out += "." + std::string(6 - us.size(), '0') + us;
  }
  return out;
}

std::string ShortIso(TimeNs t) {
  const CivilTime c = ToCivil(t);
  return std::to_string(c.year) + "-" + TwoDigits(c.month) + "-" + TwoDigits(c.day) + "T" + TwoDigits(c.hour) + ":" +
         TwoDigits(c.minute) + ":" + TwoDigits(c.second) + "+0000";
}

using Shape = std::function<std::string(const fs::path& rel, const std::string& text)>;

// `<RFC 3339 nano> stderr F <line>`; lines over 120 bytes cut into `P` pieces of 100.
std::string Cri(const fs::path&, const std::string& text) {
  LineClock clock(text);
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    const std::string stamp = FormatRfc3339(clock.Of(line)) + " stderr ";
    if (g_map) g_map->Next(out);
    std::size_t at = 0;
    while (line.size() - at > 120) {
      out.push_back(stamp + "P " + line.substr(at, 100));
      at += 100;
    }
    out.push_back(stamp + "F " + line.substr(at));
  }
  return Join(out);
}

std::string KubectlTimestamps(const fs::path&, const std::string& text) {
  LineClock clock(text);
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) out.push_back(FormatRfc3339(clock.Of(line)) + " " + line);
  return Join(out);
}

// Docker's json-file records (support/json_logs.h), stamped as CRI's lines are; lines over 120
// bytes split into records of 100 without their newline (Docker splits at 16 KiB: the engine
// joins a split line whatever its pieces' size), and one record in five with attributes
// (`docker run --log-opt labels=...`).
std::string DockerJson(const fs::path&, const std::string& text) {
  LineClock clock(text);
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    const std::string time = FormatRfc3339(clock.Of(line));
    const std::string_view attrs =
        out.size() % 5 == 0 ? R"({"job":"llama","n":[1,{"x":"}"}]})" : "";
    if (g_map) g_map->Next(out);
    std::size_t at = 0;
    for (; line.size() - at > 120; at += 100) {
      std::string r =
          DockerRecord(std::string_view(line).substr(at, 100), false, "stderr", time, attrs);
      r.pop_back();  // Join adds the newline
      out.push_back(std::move(r));
    }
    std::string r = DockerRecord(std::string_view(line).substr(at), true, "stderr", time, attrs);
    r.pop_back();
    out.push_back(std::move(r));
  }
  return Join(out);
}

// `kubectl logs --prefix --timestamps` of a pod named after the file's folder (TorchX runs it so).
std::string KubectlPrefixed(const fs::path& rel, const std::string& text) {
  std::string tag =
      "[pod/";  // appended piece by piece: GCC 12 warns on `"literal" + std::string` (-Wrestrict)
  tag += rel.has_parent_path() ? rel.parent_path().filename().string() : "launcher";
  tag += "-0/trainer] ";
  LineClock clock(text);
  std::vector<std::string> out;
  for (const std::string& line : Lines(text))
    out.push_back(tag + FormatRfc3339(clock.Of(line)) + " " + line);
  return Join(out);
}

std::string HostOf(const fs::path& rel);

// A journal's JSON export (support/json_logs.h): each line an entry of its file's node at its
// time, the kernel's for a kernel log (its syslog prefix left in the message, as a relay keeps it).
std::string JournalJson(const fs::path& rel, const std::string& text) {
  LineClock clock(text);
  const bool kernel = rel.filename().string().find("kern") != std::string::npos ||
                      rel.filename().string().find("dmesg") != std::string::npos;
  std::string out;
  for (const std::string& line : Lines(text)) {
    out += denpex::testing::JournalRecord(line, clock.Of(line) / 1000, HostOf(rel),
                                          kernel ? "kernel" : "python3",
                                          4100 + static_cast<int>(rel.string().size()));
  }
  return out;
}

std::string HostOf(const fs::path& rel) { return rel.has_parent_path() ? rel.parent_path().filename().string() : "sn01"; }

std::string Journal(const fs::path& rel, const std::string& text, int style) {
  LineClock clock(text);
  std::vector<std::string> out;
  const std::string unit = " python3[" + std::to_string(4100 + static_cast<int>(rel.string().size())) + "]: ";
  for (const std::string& line : Lines(text)) {
    const TimeNs t = clock.Of(line);
    const std::string stamp = style == 0 ? Syslog(t, false) : style == 1 ? ShortIso(t) : Syslog(t, true);
    out.push_back(stamp + " " + HostOf(rel) + unit + line);
  }
  return Join(out);
}

// A terminal copy: `> ` quoting or indentation, error lines in colour, hard wraps at `width`
// columns (the quoting counted, the colour codes not: they take no column).
std::string Paste(const fs::path&, const std::string& text, std::size_t width, const std::string& quote) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    if (g_map) g_map->Next(out);
    const bool error = line.find("rror") != std::string::npos || line.find("Traceback") != std::string::npos;
    const std::string colour = error ? "\x1b[1;31m" : line.find("step=") != std::string::npos ? "\x1b[2m" : "";
    const std::size_t room = width - quote.size();
    std::size_t at = 0;
    do {
      std::string piece = quote + (at == 0 ? colour : "") + line.substr(at, room);
      at += room;
      if (at >= line.size() && !colour.empty()) piece += "\x1b[0m\x1b[K";
      out.push_back(piece);
    } while (at < line.size());
  }
  return Join(out);
}

std::string Numbered(const fs::path&, const std::string& text) {
  std::vector<std::string> out;
  int n = 80746;
  for (const std::string& line : Lines(text)) {
    std::string numbered = "[";
    numbered += std::to_string(n++);
    numbered += "] ";
    numbered += line;
    out.push_back(std::move(numbered));
  }
  return Join(out);
}

using denpex::testing::Gzip;

bool IsLog(const fs::path& rel) { return rel.begin()->string() != "checkpoints"; }

// The incident `name` of corpora/real, each log re-laid by `shape`, under `dir`.
void Relay(const std::string& name, const fs::path& dir, const Shape& shape) {
  const fs::path from = kReal / name / "incident";
  g_incident_end = 0;
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file() || !IsLog(e.path().lexically_relative(from))) continue;
    LineClock clock("");
    for (const std::string& line : Lines(Slurp(e.path()))) g_incident_end = std::max(g_incident_end, clock.Of(line));
  }
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = e.path().lexically_relative(from);
    const fs::path to = dir / rel;
    if (!IsLog(rel)) {
      fs::create_directories(to.parent_path());
      fs::copy_file(e.path(), to);
      continue;
    }
    LineMap map;
    g_map = &map;
    Write(to, shape(rel, Slurp(e.path())));
    g_map = nullptr;
    if (!map.first.empty()) g_first_line[rel.generic_string()] = map.first;
  }
}

// Logs split in three by logrotate: `X.2.gz` (the oldest third), `X.1`, `X` (the newest).
void RelayRotated(const std::string& name, const fs::path& dir) {
  const fs::path from = kReal / name / "incident";
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = e.path().lexically_relative(from);
    const fs::path to = dir / rel;
    fs::create_directories(to.parent_path());
    if (!IsLog(rel)) {
      fs::copy_file(e.path(), to);
      continue;
    }
    const std::vector<std::string> lines = Lines(Slurp(e.path()));
    const std::size_t a = lines.size() / 3, b = 2 * lines.size() / 3;
    Write(fs::path(to.string() + ".2.gz"), Gzip(Join({lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(a)})));
    Write(fs::path(to.string() + ".1"), Join({lines.begin() + static_cast<std::ptrdiff_t>(a), lines.begin() + static_cast<std::ptrdiff_t>(b)}));
    Write(to, Join({lines.begin() + static_cast<std::ptrdiff_t>(b), lines.end()}));
  }
}

// What `denpex events` says of an event, its file and line as the canonical layout's: a rotated
// piece's line counted in the whole log.
struct Seen {
  std::string file;
  std::uint32_t line;
  std::string kind;
  std::int32_t rank;
  std::int32_t local_rank;
  TimeNs time;  // 0 when the canonical event's time was borrowed or none
  bool operator==(const Seen&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Seen& s) {
  return os << s.file << ":" << s.line << " " << s.kind << " rank " << s.rank << " local " << s.local_rank << " at " << s.time;
}

std::vector<Seen> Events(const fs::path& dir) {
  auto inc = LoadIncident(dir, 1);
  EXPECT_TRUE(inc.ok()) << inc.status().message();
  if (!inc.ok()) return {};
  std::vector<Seen> out;
  for (const Event& e : inc->events) {
    std::string path = inc->files[e.file].path;
    std::uint32_t line = e.line;
    for (const std::string ext : {".2.gz", ".1"}) {
      if (path.ends_with(ext)) path.resize(path.size() - ext.size());
    }
    out.push_back({path, line, std::string(KindName(e.kind)), e.rank, e.local_rank,
                   e.clock == Clock::kNone || e.time_borrowed ? 0 : e.time});
  }
  return out;
}

struct Answer {
  std::string verdict;
  std::string initiator;
  std::string time;
};

Answer Diagnosis(const fs::path& dir) {
  auto d = Diagnose(dir, {.threads = 1});
  EXPECT_TRUE(d.ok()) << d.status().message();
  if (!d.ok()) return {};
  return {v1::Verdict_Name(d->verdict()), d->initiator().ShortDebugString(), d->initiator().time()};
}

class ShapesTest : public ::testing::TestWithParam<std::string> {};

void ExpectSameAsCanonical(const std::string& name, const fs::path& dir, bool rotated = false) {
  const fs::path plain = kReal / name / "incident";
  std::vector<Seen> want = Events(plain);
  for (Seen& w : want) {  // where the re-laid file holds the canonical line
    const auto it = g_first_line.find(w.file);
    if (it != g_first_line.end() && w.line >= 1 && w.line <= it->second.size()) w.line = it->second[w.line - 1];
  }
  g_first_line.clear();
  std::vector<Seen> got = Events(dir);
  if (rotated) {  // a piece's lines counted from the whole log's start, as the canonical file's
    std::map<std::string, std::vector<std::size_t>> sizes;
    for (const auto& e : fs::recursive_directory_iterator(plain)) {
      if (!e.is_regular_file()) continue;
      const std::size_t n = Lines(Slurp(e.path())).size();
      sizes[e.path().lexically_relative(plain).generic_string()] = {n / 3, 2 * n / 3};
    }
    auto inc = LoadIncident(dir, 1);
    ASSERT_TRUE(inc.ok());
    for (std::size_t i = 0; i < got.size() && i < inc->events.size(); ++i) {
      const std::string& path = inc->files[inc->events[i].file].path;
      const auto& s = sizes[got[i].file];
      if (path.ends_with(".1")) got[i].line += static_cast<std::uint32_t>(s[0]);
      if (!path.ends_with(".1") && !path.ends_with(".gz")) got[i].line += static_cast<std::uint32_t>(s[1]);
    }
  }
  const auto order = [](const Seen& a, const Seen& b) {
    return std::tie(a.file, a.line, a.kind, a.rank) < std::tie(b.file, b.line, b.kind, b.rank);
  };
  std::sort(want.begin(), want.end(), order);
  std::sort(got.begin(), got.end(), order);
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {  // times where the canonical event has its own
    if (want[i].time == 0) got[i].time = 0;
  }
  EXPECT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) EXPECT_EQ(got[i], want[i]) << "event " << i;
  const Answer a = Diagnosis(plain), b = Diagnosis(dir);
  EXPECT_EQ(b.verdict, a.verdict);
  // A collector's stamp dates lines the canonical files leave untimed (an exception's closing
  // line borrows the stamp before it): the time may be finer, within the second the canonical
  // answer states, or stated where the canonical one has none. Everything else is the same.
  const auto without_time = [](std::string initiator, const std::string& time) {
    if (!time.empty()) initiator.erase(initiator.find(" time: "), std::string(" time: \"\"").size() + time.size());
    return initiator;
  };
  EXPECT_EQ(without_time(b.initiator, b.time), without_time(a.initiator, a.time));
  if (!a.time.empty()) {
    ASSERT_FALSE(b.time.empty());
    EXPECT_LE(std::abs(*ParseRfc3339(b.time) - *ParseRfc3339(a.time)), kNsPerSec) << b.time << " vs " << a.time;
  }
}

TEST_P(ShapesTest, CriLinesGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), Cri);
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, KubectlTimestampsGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), KubectlTimestamps);
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, KubectlPodTagsGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), KubectlPrefixed);
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, JournalJsonEntriesGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), JournalJson);
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, DockerJsonRecordsGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), DockerJson);
  ExpectSameAsCanonical(GetParam(), dir.path());
}

// Docker's `compress` option gzips its rotated files: the records inside are read the same.
TEST_P(ShapesTest, GzippedDockerJsonRecordsGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(),
        [](const fs::path& rel, const std::string& t) { return Gzip(DockerJson(rel, t)); });
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, JournalShortGivesTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), [](const fs::path& rel, const std::string& t) { return Journal(rel, t, 0); });
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, JournalShortIsoGivesTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), [](const fs::path& rel, const std::string& t) { return Journal(rel, t, 1); });
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, JournalShortPreciseGivesTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), [](const fs::path& rel, const std::string& t) { return Journal(rel, t, 2); });
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, QuotedColouredHardWrappedPasteGivesTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), [](const fs::path& rel, const std::string& t) { return Paste(rel, t, 120, "> "); });
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, IndentedPasteWrappedAtEightyGivesTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), [](const fs::path& rel, const std::string& t) { return Paste(rel, t, 80, "    "); });
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, LineNumbersGiveTheCanonicalEvents) {
  TempDir dir;
  Relay(GetParam(), dir.path(), Numbered);
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, GzipLogsGiveTheCanonicalEvents) {
  TempDir dir;
  const fs::path from = kReal / GetParam() / "incident";
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = e.path().lexically_relative(from);
    if (IsLog(rel)) {
      Write(dir.path() / rel, Gzip(Slurp(e.path())));  // compressed in place: the name says nothing
    } else {
      fs::create_directories((dir.path() / rel).parent_path());
      fs::copy_file(e.path(), dir.path() / rel);
    }
  }
  ExpectSameAsCanonical(GetParam(), dir.path());
}

TEST_P(ShapesTest, RotatedLogsAreReadAsOneStreamOldestFirst) {
  TempDir dir;
  RelayRotated(GetParam(), dir.path());
  ExpectSameAsCanonical(GetParam(), dir.path(), true);
  auto d = Diagnose(dir.path(), {.threads = 1});
  ASSERT_TRUE(d.ok());
  const auto& problems = d->input().problems();
  EXPECT_TRUE(std::any_of(problems.begin(), problems.end(), [](const std::string& p) {
    return p.find("rotated log read as one stream, oldest first: ") != std::string::npos && p.find(".2.gz, ") != std::string::npos;
  }));
}

INSTANTIATE_TEST_SUITE_P(RealIncidents, ShapesTest,
                         ::testing::Values("tr_sigkill_rank3", "sl_sigkill_task1", "tr_exception_rank2"));

}  // namespace
}  // namespace denpex::engine
