// PyTorch Flight Recorder dumps (ingest/flight_recorder.h, docs/log_formats.md §28): recognised by
// their bytes, read into kFrDump / kFrGroup / kFrCollective events for each format version and the
// JSON form, their rank from the file name, cited from their fields; a truncated or rankless dump
// is a problem that names it, never a crash. The dumps are tests/data/flight_recorder/'s, made by
// its make_dumps.py (protocol 2 pickles, as torch's C++ pickler writes them, and the JSON form).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/pickle.h"
#include "denpex/engine/engine.h"
#include "fixture.h"
#include "ingest/flight_recorder.h"
#include "ingest/flight_recorder_tail.h"
#include "ingest/live.h"
#include "ingest/load.h"
#include "report/events_json.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;
using testing::Slurp;
using testing::TempDir;

const fs::path kData = fs::path(DENPEX_SOURCE_DIR) / "tests/data/flight_recorder";

std::vector<Event> OfKind(const std::vector<Event>& events, Kind k) {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.kind == k) out.push_back(e);
  }
  return out;
}

FrRead Read(const std::string& name, std::uint32_t file = 0) {
  const std::string bytes = Slurp(kData / name);
  return ReadFlightRecorder(bytes, SniffFlightRecorder(bytes), file, FlightRecorderRank(name));
}

TEST(FlightRecorder, RankIsTheNamesTrailingNumberAfterAnyExtension) {
  EXPECT_EQ(FlightRecorderRank("nccl_trace_rank_3"), 3);
  EXPECT_EQ(FlightRecorderRank("rank_12"), 12);
  EXPECT_EQ(FlightRecorderRank("torchcomm_fr_trace_7"), 7);
  EXPECT_EQ(FlightRecorderRank("nccl_trace_rank_3.json"), 3);
  EXPECT_EQ(FlightRecorderRank("my-prefix-42.pkl"), 42);
  EXPECT_EQ(FlightRecorderRank("dump.pkl.json"), -1);
  EXPECT_EQ(FlightRecorderRank("flight_recorder"), -1);
  EXPECT_EQ(FlightRecorderRank("nccl_trace_rank_99999999"), -1);  // past any rank
}

TEST(FlightRecorder, SniffsTheDumpsByContentOnly) {
  EXPECT_EQ(SniffFlightRecorder(Slurp(kData / "v2.2_nccl_trace_rank_0")), FrForm::kPickle);
  EXPECT_EQ(SniffFlightRecorder(Slurp(kData / "v2.7_nccl_trace_rank_5.json")), FrForm::kJson);
  EXPECT_EQ(SniffFlightRecorder("[I 2026-03-02 09:17:03] rank 0 ready\n"), FrForm::kNone);
  // A JSON-lines log whose first key is a dump's is no dump.
  EXPECT_EQ(SniffFlightRecorder("{\"version\": 1, \"msg\": \"hi\"}\n{\"version\": 1}\n"),
            FrForm::kNone);
  // Another pickle (a dict of other keys) is no dump.
  constexpr char kOtherPickle[] = "\x80\x02}q\x00X\x05\x00\x00\x00modelq\x01";
  EXPECT_EQ(SniffFlightRecorder(std::string(kOtherPickle, sizeof kOtherPickle - 1)), FrForm::kNone);
}

// Version 2.2 and 2.3: no pg_status, no is_p2p; the groups' last collectives come from the
// entries, a send is told by its profiling name.
TEST(FlightRecorder, OldVersionsWithoutPgStatusComputeTheGroupsFromTheEntries) {
  for (const char* name : {"v2.2_nccl_trace_rank_0", "v2.3_nccl_trace_rank_1"}) {
    const FrRead r = Read(name, 4);
    ASSERT_TRUE(r.problem.empty()) << name << ": " << r.problem;
    const auto dumps = OfKind(r.log.events, Kind::kFrDump);
    ASSERT_EQ(dumps.size(), 1u);
    const auto& d = std::get<FrDump>(dumps[0].detail);
    EXPECT_EQ(d.entries, 7);
    EXPECT_EQ(d.groups, 2);
    EXPECT_EQ(d.nccl_version, kNoStr);
    EXPECT_FALSE(d.json);
    EXPECT_EQ(dumps[0].line, 1u);
    EXPECT_EQ(dumps[0].file, 4u);
    EXPECT_EQ(dumps[0].clock, Clock::kFull);
    EXPECT_EQ(dumps[0].time, 1754000000'000'000'000 + 6 * 1'000'000);  // the newest entry
    const auto groups = OfKind(r.log.events, Kind::kFrGroup);
    ASSERT_EQ(groups.size(), 2u);
    const auto& g0 = std::get<FrGroup>(groups[0].detail);
    EXPECT_EQ(r.log.strings.Get(g0.pg), "0");
    EXPECT_EQ(r.log.strings.Get(g0.pg_desc), "default_pg");
    EXPECT_EQ(r.log.strings.Get(g0.ranks), "[0, 1, 2, 3]");
    EXPECT_EQ(g0.size, 4);
    EXPECT_EQ(g0.last_enqueued, 6);
    EXPECT_EQ(g0.last_started, 5);
    EXPECT_EQ(g0.last_completed, 4);
    EXPECT_EQ(groups[1].line, 2u);
    EXPECT_EQ(std::get<FrGroup>(groups[1].detail).size, 2);
  }
}

// Every entry not completed and each group's last completed one: entries 4 (completed, seq 4),
// 5 (started), 6 (scheduled) and the send in group 1; not the three completed before.
TEST(FlightRecorder, CollectivesAreTheEntriesNotCompletedAndEachGroupsLastCompleted) {
  const FrRead r = Read("v2.4_nccl_trace_rank_2");
  ASSERT_TRUE(r.problem.empty()) << r.problem;
  const auto c = OfKind(r.log.events, Kind::kFrCollective);
  ASSERT_EQ(c.size(), 4u);
  std::vector<std::uint32_t> lines;
  for (const Event& e : c) lines.push_back(e.line);
  EXPECT_EQ(lines, (std::vector<std::uint32_t>{4, 5, 6, 7}));
  const auto& done = std::get<FrCollective>(c[0].detail);
  EXPECT_EQ(done.state, FrCollective::State::kCompleted);
  EXPECT_EQ(done.seq, 4);
  EXPECT_GT(done.completed, 0);
  const auto& stuck = std::get<FrCollective>(c[1].detail);
  EXPECT_EQ(stuck.state, FrCollective::State::kStarted);
  EXPECT_EQ(stuck.seq, 5);
  EXPECT_EQ(stuck.record_id, 4);
  EXPECT_EQ(stuck.timeout_ms, 600000);
  EXPECT_EQ(stuck.completed, 0);
  EXPECT_GT(stuck.started, 0);
  EXPECT_EQ(r.log.strings.Get(stuck.op), "nccl:all_reduce");
  EXPECT_EQ(r.log.strings.Get(stuck.sizes), "[[1024]]");  // through torch's build_intlist
  EXPECT_EQ(r.log.strings.Get(stuck.dtypes), "[Float]");
  EXPECT_EQ(c[1].time, 1754000000'000'000'000 + 4 * 1'000'000);
  EXPECT_EQ(c[1].rank, 2);
  EXPECT_EQ(c[1].offset, 0u);
  EXPECT_EQ(c[1].length, 0u);
  EXPECT_EQ(std::get<FrCollective>(c[2].detail).state, FrCollective::State::kScheduled);
  const auto& send = std::get<FrCollective>(c[3].detail);
  EXPECT_TRUE(send.p2p);
  EXPECT_EQ(send.p2p_seq, 3);
  EXPECT_EQ(r.log.strings.Get(send.pg_desc), "pp");
  // pg_status (2.4 on) gives the groups' numbers.
  const auto groups = OfKind(r.log.events, Kind::kFrGroup);
  const auto& g0 = std::get<FrGroup>(groups[0].detail);
  EXPECT_EQ(g0.last_enqueued, 6);
  EXPECT_EQ(g0.last_started, 5);
  EXPECT_EQ(g0.last_completed, 4);
}

TEST(FlightRecorder, Version27PickleAndJsonGiveTheSameEvents) {
  const FrRead pk = Read("v2.7_torchcomm_fr_trace_4.pkl");
  const FrRead js = Read("v2.7_nccl_trace_rank_5.json");
  ASSERT_TRUE(pk.problem.empty()) << pk.problem;
  ASSERT_TRUE(js.problem.empty()) << js.problem;
  ASSERT_EQ(pk.log.events.size(), js.log.events.size());
  EXPECT_EQ(pk.log.events[0].rank, 4);
  EXPECT_EQ(js.log.events[0].rank, 5);
  const auto& dp = std::get<FrDump>(pk.log.events[0].detail);
  const auto& dj = std::get<FrDump>(js.log.events[0].detail);
  EXPECT_EQ(pk.log.strings.Get(dp.nccl_version), "2.21.5");
  EXPECT_EQ(js.log.strings.Get(dj.nccl_version), "2.21.5");
  EXPECT_EQ(js.log.strings.Get(dj.version), "2.7");
  EXPECT_TRUE(dj.json);
  for (std::size_t i = 1; i < pk.log.events.size(); ++i) {  // after the dump's own (its form)
    const Event& a = pk.log.events[i];
    const Event& b = js.log.events[i];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.line, b.line);
    EXPECT_EQ(a.time, b.time);
    EXPECT_EQ(FrEventText(a, "d", pk.log.strings), FrEventText(b, "d", js.log.strings)) << i;
  }
}

// A ring is read from the entry the reader needs on (ingest/flight_recorder_tail.h): the first
// not completed, or the oldest of the groups' last completed entries. The events are those of the
// whole ring's reading, entry places and counts included; a shape the walk does not know
// (protocol 4's STACK_GLOBAL memoized, a version without pg_status) is read whole.
TEST(FlightRecorder, ARingIsReadFromTheEntryTheReaderNeedsWithTheWholeRingsEvents) {
  struct Case {
    const char* file;
    std::optional<std::size_t> first;  // nullopt: read whole
  };
  const Case cases[] = {
      {"ring_tail_nccl_trace_rank_7", 59},         // group 0 stuck at 60; its last completed: 59
      {"ring_early_group_nccl_trace_rank_8", 5},   // group 1's only entry, completed, is the 6th
      {"ring_early_stuck_nccl_trace_rank_9", 10},  // a send started at 10 and never completed
      {"ring_tail_protocol4_rank_10", std::nullopt},
      {"v2.2_nccl_trace_rank_0",
       std::nullopt},  // no pg_status: the groups' counts need every entry
      {"v2.4_nccl_trace_rank_2", 3},
      {"v2.7_torchcomm_fr_trace_4.pkl", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string bytes = Slurp(kData / c.file);
    const auto tail = FrPickleTail(bytes);
    ASSERT_EQ(tail.has_value(), c.first.has_value());
    if (tail) {
      EXPECT_EQ(tail->first, *c.first);
      EXPECT_LT(tail->pickle.size(), bytes.size());
    }
    const std::int32_t rank = FlightRecorderRank(c.file);
    const FrRead part = ReadFlightRecorder(bytes, FrForm::kPickle, 2, rank, FrRing::kTail);
    const FrRead whole = ReadFlightRecorder(bytes, FrForm::kPickle, 2, rank, FrRing::kWhole);
    ASSERT_TRUE(whole.problem.empty()) << whole.problem;
    ASSERT_TRUE(part.problem.empty()) << part.problem;
    ASSERT_EQ(part.log.events.size(), whole.log.events.size());
    EXPECT_GE(OfKind(whole.log.events, Kind::kFrCollective).size(), 2u);
    for (std::size_t i = 0; i < whole.log.events.size(); ++i) {
      const Event& a = part.log.events[i];
      const Event& b = whole.log.events[i];
      EXPECT_EQ(a.kind, b.kind) << i;
      EXPECT_EQ(a.line, b.line) << i;
      EXPECT_EQ(a.time, b.time) << i;
      EXPECT_EQ(a.rank, b.rank) << i;
      EXPECT_EQ(FrEventText(a, "d", part.log.strings), FrEventText(b, "d", whole.log.strings)) << i;
    }
  }
}

// A protocol 2 dump written by hand: an empty `pg_status`, then `entries` holding `items` (each
// a pickled value) in one APPENDS batch.
std::string HandDump(const std::vector<std::string>& items) {
  const auto str = [](std::string_view v) {  // SHORT_BINUNICODE
    return std::string("\x8c") + static_cast<char>(v.size()) + std::string(v);
  };
  std::string out = "\x80\x02}(" + str("pg_status") + "}" + str("entries") + "](";
  for (const std::string& item : items) out += item;
  return out + "eu.";
}
std::string HandEntry(std::string_view state) {
  return "}(\x8c\x05state\x8c" + std::string(1, static_cast<char>(state.size())) +
         std::string(state) + "u";
}

// The walk gives up on what it cannot vouch for, and the reader then reads the whole ring (and
// says what is wrong with it): a dump cut inside its entries, an entry that is not a dict, a ring
// of one entry. A dump cut after its entries walks, but its tail does not run, and the whole
// ring's problem is told.
TEST(FlightRecorder, TheTailWalkGivesUpOnShapesItDoesNotKnow) {
  const std::string bytes = Slurp(kData / "ring_tail_nccl_trace_rank_7");
  ASSERT_TRUE(FrPickleTail(bytes).has_value());
  EXPECT_FALSE(FrPickleTail(bytes.substr(0, bytes.size() / 2)).has_value());
  EXPECT_FALSE(FrPickleTail("").has_value());
  // Three entries with no group (the reader's group ""), the last started: from the second on.
  const std::string hand =
      HandDump({HandEntry("completed"), HandEntry("completed"), HandEntry("started")});
  ASSERT_TRUE(ckpt::RunPickle(hand).ok()) << ckpt::RunPickle(hand).error_detail;
  const auto tail = FrPickleTail(hand);
  ASSERT_TRUE(tail.has_value());
  EXPECT_EQ(tail->first, 1u);
  EXPECT_FALSE(FrPickleTail(HandDump({"K\x01", "K\x02"})).has_value());      // not dicts
  EXPECT_FALSE(FrPickleTail(HandDump({HandEntry("started")})).has_value());  // one entry
  for (const std::size_t cut : {bytes.size() / 2, bytes.size() - 1}) {
    const FrRead r = ReadFlightRecorder(bytes.substr(0, cut), FrForm::kPickle, 0, 7);
    EXPECT_NE(r.problem.find("truncated"), std::string::npos) << cut << ": " << r.problem;
    EXPECT_TRUE(r.log.events.empty());
  }
}

TEST(FlightRecorder, TruncatedOrForeignBytesAreAProblemNeverACrash) {
  const FrRead cut = Read("truncated_nccl_trace_rank_6");
  EXPECT_NE(cut.problem.find("truncated"), std::string::npos) << cut.problem;
  EXPECT_TRUE(cut.log.events.empty());
  const std::string whole = Slurp(kData / "v2.7_nccl_trace_rank_5.json");
  const FrRead half = ReadFlightRecorder(whole.substr(0, whole.size() / 2), FrForm::kJson, 0, 5);
  EXPECT_NE(half.problem.find("truncated"), std::string::npos) << half.problem;
  const FrRead other = ReadFlightRecorder("{\"version\": \"2.4\"}", FrForm::kJson, 0, 5);
  EXPECT_NE(other.problem.find("not a Flight Recorder dump"), std::string::npos) << other.problem;
  // Every prefix of a pickle: a problem or events, never a crash.
  const std::string pk = Slurp(kData / "v2.5_rank_3");
  for (std::size_t n = 0; n < pk.size(); n += 7)
    (void)ReadFlightRecorder(pk.substr(0, n), FrForm::kPickle, 0, 3);
}

TEST(FlightRecorder, EventTextQuotesTheEntryFromItsFields) {
  const FrRead r = Read("v2.4_nccl_trace_rank_2");
  const auto c = OfKind(r.log.events, Kind::kFrCollective);
  EXPECT_EQ(FrEventText(c[1], "nccl_trace_rank_2", r.log.strings),
            "nccl_trace_rank_2 entry 5: nccl:all_reduce pg 0 (default_pg) seq 5 started, sizes "
            "[[1024]] [Float]");
  EXPECT_EQ(FrEventText(r.log.events[0], "nccl_trace_rank_2", r.log.strings),
            "nccl_trace_rank_2: Flight Recorder dump version 2.4 (pickle), 7 entries, 2 groups");
}

// An incident of logs with dumps in its node folders: the dumps' events merge in file order,
// no dump is a text log or a node, a truncated one and a rankless one are named problems, and
// `denpex events` prints their fields.
TEST(FlightRecorder, DumpsInAnIncidentWithLogsAreReadAsEvidence) {
  TempDir tmp;
  testing::Incident spec;
  spec.job.nodes = 2;
  spec.job.tp = 8;
  spec.job.pp = 1;
  spec.job.dp = 2;
  testing::WriteIncident(tmp.path(), spec);
  const std::string host = spec.job.Host(0);
  fs::copy_file(kData / "v2.4_nccl_trace_rank_2", tmp.path() / host / "nccl_trace_rank_2");
  fs::copy_file(kData / "v2.7_nccl_trace_rank_5.json",
                tmp.path() / host / "nccl_trace_rank_5.json");
  fs::create_directories(tmp.path() / "fr");
  fs::copy_file(kData / "truncated_nccl_trace_rank_6", tmp.path() / "fr" / "nccl_trace_rank_6");
  fs::copy_file(kData / "v2.2_nccl_trace_rank_0", tmp.path() / "fr" / "flight_recorder_dump");

  auto inc = LoadIncident(tmp.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  int dumps = 0;
  for (const LogFile& f : inc->files) {
    if (!f.flight_recorder) continue;
    ++dumps;
    EXPECT_FALSE(f.readable) << f.path;
    EXPECT_EQ(f.node, -1) << f.path;
    EXPECT_EQ(f.own_rank, -1) << f.path;
  }
  EXPECT_EQ(dumps, 4);
  EXPECT_EQ(std::count(inc->nodes.begin(), inc->nodes.end(), "fr"), 0);
  std::vector<std::int32_t> dump_ranks;
  for (const Event& e : inc->events) {
    if (e.kind == Kind::kFrDump) dump_ranks.push_back(e.rank);
    if (e.family == Family::kFlightRecorder) {
      EXPECT_TRUE(inc->files[e.file].flight_recorder);
    }
  }
  EXPECT_EQ(dump_ranks, (std::vector<std::int32_t>{-1, 2, 5}));  // file order: fr/, then the host's
  const auto has = [&](std::string_view what) {
    return std::any_of(inc->input.problems.begin(), inc->input.problems.end(),
                       [&](const std::string& p) { return p.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(has("fr/nccl_trace_rank_6: Flight Recorder dump cut short (truncated)"));
  EXPECT_TRUE(
      has("fr/flight_recorder_dump: a Flight Recorder dump whose name ends in no rank number"));
  EXPECT_GE(inc->input.unreadable_files, 1);

  std::string json;
  for (const Event& e : inc->events) {
    if (e.kind == Kind::kFrCollective && e.rank == 2 && e.line == 5)
      AppendEventJson(*inc, e, &json);
  }
  EXPECT_NE(json.find("\"kind\":\"fr_collective\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"state\":\"started\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"sizes\":\"[[1024]]\""), std::string::npos) << json;

  // The diagnosis still reads (and never quotes a dump's bytes).
  auto d = Diagnose(tmp.path(), DiagnoseOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  for (const auto& ev : d->evidence()) {
    if (ev.file().find("nccl_trace_rank_") != std::string::npos) {
      EXPECT_NE(ev.text().find("nccl_trace_rank_"), std::string::npos) << ev.text();
    }
  }
}

// A dump over kMaxFlightRecorderBytes is refused by its size, unread (a sparse file here).
TEST(FlightRecorder, ADumpOverTheCapIsAProblemNamingIt) {
  TempDir tmp;
  testing::Write(tmp.path() / "node0" / "rank_0.log", "[rank0]: starting\n");
  const fs::path big = tmp.path() / "node0" / "nccl_trace_rank_0";
  testing::Write(big, std::string("\x80\x02}(X\x07\x00\x00\x00version", 16));
  fs::resize_file(big, kMaxFlightRecorderBytes + 1);
  auto inc = LoadIncident(tmp.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const std::string want =
      "node0/nccl_trace_rank_0: a Flight Recorder dump of 256 MiB, over the 256 MiB";
  EXPECT_TRUE(std::any_of(inc->input.problems.begin(), inc->input.problems.end(),
                          [&](const std::string& p) { return p.find(want) != std::string::npos; }));
  EXPECT_EQ(inc->input.unreadable_files, 1);
}

// A dump that appears in a followed directory is read whole, as LoadIncident reads it.
TEST(FlightRecorder, GrowingDirectoryReadsADumpWhenItAppears) {
  TempDir tmp;
  testing::Write(tmp.path() / "node0" / "rank_0.log", "[rank0]: starting\n");
  auto live = LiveIncident::Open(tmp.path());
  ASSERT_TRUE(live.ok());
  ASSERT_TRUE(live->Refresh().ok());
  fs::copy_file(kData / "v2.5_rank_3", tmp.path() / "node0" / "nccl_trace_rank_3");
  ASSERT_TRUE(live->Refresh().ok());
  auto grown = live->Assemble(1);
  auto once = LoadIncident(tmp.path(), 1);
  ASSERT_TRUE(grown.ok() && once.ok());
  ASSERT_EQ(grown->events.size(), once->events.size());
  std::size_t fr = 0;
  for (std::size_t i = 0; i < grown->events.size(); ++i) {
    EXPECT_EQ(grown->events[i].kind, once->events[i].kind);
    EXPECT_EQ(grown->events[i].line, once->events[i].line);
    fr += grown->events[i].family == Family::kFlightRecorder;
  }
  EXPECT_EQ(fr, 1u + 2u + 5u);  // the dump, 2 groups, entries 5-8 and the send
}

// torch's pickler emits BINFLOAT (duration_ms) and LONG1 (times): the machine runs them.
TEST(FlightRecorder, PickleMachineRunsTorchsOpcodes) {
  const ckpt::Pickle p = ckpt::RunPickle(Slurp(kData / "v2.5_rank_3"));
  ASSERT_TRUE(p.ok()) << p.error_detail;
  const ckpt::PyValue* entries = p.Get(p.root, "entries");
  ASSERT_NE(entries, nullptr);
  const auto items = p.Items(*entries);
  ASSERT_EQ(items.size(), 9u);
  EXPECT_EQ(p.GetInt(items[0], "time_created_ns").value_or(0), 1754000000'000'000'000);
  ASSERT_NE(p.Get(items[0], "duration_ms"), nullptr);
  EXPECT_EQ(p.Get(items[0], "duration_ms")->kind, ckpt::PyValue::Kind::kOther);  // a float
}

}  // namespace
}  // namespace denpex::engine
