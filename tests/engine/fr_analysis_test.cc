// What the Flight Recorder dumps say (analyze/flight_recorder.h) and what the engine and the
// dump baselines answer from them: incidents built from the flight_recorder family's events as
// the dump reader emits them (docs/log_formats.md §28), no log line at all.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analyze/flight_recorder.h"
#include "analyze/strategies.h"
#include "incident/incident.h"

namespace denpex::engine {
namespace {

constexpr TimeNs kT0 = 1'764'000'000'000'000'000;

// One rank's dump: a file, its kFrDump event, and its groups and entries as added.
class Dumps {
 public:
  // A dump by `rank` (its file `nccl_trace_rank_<rank>`).
  void Dump(std::int32_t rank) {
    file_[rank] = static_cast<std::uint32_t>(inc_.files.size());
    inc_.files.push_back(
        {.path = "node" + std::to_string(rank / 4) + "/nccl_trace_rank_" + std::to_string(rank),
         .readable = true});
    Add(rank, 1, Kind::kFrDump, kT0,
        FrDump{.version = inc_.strings.Intern("2.5"), .groups = 1, .entries = 10});
  }
  // Its state in group `pg` (members `ranks`): last enqueued and completed collective.
  // Its pending entry was created `at_ms` after kT0 (default: its sequence number).
  void Group(std::int32_t rank, const std::string& pg, const std::string& ranks,
             std::int64_t enqueued, std::int64_t completed, std::int64_t at_ms = -1) {
    const TimeNs at = kT0 + (at_ms < 0 ? enqueued : at_ms) * 1'000'000;
    Add(rank, 2, Kind::kFrGroup, at,
        FrGroup{.pg = inc_.strings.Intern(pg),
                .pg_desc = inc_.strings.Intern(pg == "0" ? "default_pg" : "sub"),
                .ranks = inc_.strings.Intern(ranks),
                .size = static_cast<std::int32_t>(ParseFrRanks(ranks).size()),
                .last_enqueued = enqueued,
                .last_started = enqueued,
                .last_completed = completed});
    if (enqueued > completed) Entry(rank, pg, enqueued, "nccl:all_reduce", "[[1024]]", false, at);
    if (completed >= 0)
      Entry(rank, pg, completed, "nccl:all_reduce", "[[1024]]", true, kT0 + completed * 1'000'000);
  }
  void Entry(std::int32_t rank, const std::string& pg, std::int64_t seq, const std::string& op,
             const std::string& sizes, bool completed, TimeNs created) {
    Add(rank, 3 + static_cast<std::uint32_t>(seq), Kind::kFrCollective, created,
        FrCollective{
            .pg = inc_.strings.Intern(pg),
            .pg_desc = inc_.strings.Intern(pg == "0" ? "default_pg" : "sub"),
            .op = inc_.strings.Intern(op),
            .sizes = inc_.strings.Intern(sizes),
            .dtypes = inc_.strings.Intern("[Float]"),
            .state = completed ? FrCollective::State::kCompleted : FrCollective::State::kStarted,
            .seq = seq,
            .completed = completed ? created + 1000 : 0});
  }
  // The entry at `seq` a rank enqueued, replaced (its last one: a pending entry).
  void Replace(std::int32_t rank, std::int64_t seq, const std::string& op,
               const std::string& sizes) {
    for (Event& e : inc_.events) {
      auto* c = std::get_if<FrCollective>(&e.detail);
      if (c && e.rank == rank && c->seq == seq)
        c->op = inc_.strings.Intern(op), c->sizes = inc_.strings.Intern(sizes);
    }
  }
  const Incident& incident() const { return inc_; }

 private:
  void Add(std::int32_t rank, std::uint32_t line, Kind kind, TimeNs t, EventDetail detail) {
    Event e;
    e.time = t;
    e.clock = Clock::kFull;
    e.family = Family::kFlightRecorder;
    e.kind = kind;
    e.rank = rank;
    e.file = file_.at(rank);
    e.line = line;
    e.detail = std::move(detail);
    inc_.events.push_back(e);
  }
  Incident inc_;
  std::map<std::int32_t, std::uint32_t> file_;
};

TEST(ParseFrRanks, ReadsTheRanksStringOfPgConfig) {
  EXPECT_EQ(ParseFrRanks("[0, 1, 2, 3]"), (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ParseFrRanks("[5]"), (std::vector<std::int32_t>{5}));
  EXPECT_EQ(ParseFrRanks("[3, 1]"), (std::vector<std::int32_t>{1, 3}));
  EXPECT_TRUE(ParseFrRanks("all").empty());
  EXPECT_TRUE(ParseFrRanks("[0, 1, 2").empty());  // cut (capped): membership unknown
  EXPECT_TRUE(ParseFrRanks("[0, x]").empty());
  EXPECT_TRUE(ParseFrRanks("").empty());
}

// Four ranks in one group, each waiting in collective 10 (rank 1's entry for it then replaced).
Dumps OneGroupWaiting() {
  Dumps d;
  for (std::int32_t r = 0; r < 4; ++r) {
    d.Dump(r);
    d.Group(r, "0", "[0, 1, 2, 3]", 10, 9);
  }
  return d;
}

// Four ranks in one group: three wait in collective 10, rank 2 completed 9 and enqueued nothing.
Dumps OneGroupHang() {
  Dumps d;
  for (std::int32_t r = 0; r < 4; ++r) {
    d.Dump(r);
    d.Group(r, "0", "[0, 1, 2, 3]", r == 2 ? 9 : 10, 9);
  }
  return d;
}

TEST(FlightRecorder, TheMemberThatNeverEnqueuedTheCollectiveAndWaitsInNoneIsTheRoot) {
  const Dumps d = OneGroupHang();
  const FrAnalysis fr = AnalyzeFlightRecorder(d.incident());
  EXPECT_EQ(fr.dumps, 4);
  ASSERT_EQ(fr.roots.size(), 1u);
  EXPECT_EQ(fr.roots[0].rank, 2);
  EXPECT_EQ(fr.roots[0].why, FrBlocker::Why::kNeverJoined);
  EXPECT_EQ(fr.roots[0].waiting, 3);
  EXPECT_EQ(fr.waiting, (std::vector<std::int32_t>{0, 1, 3}));
}

// Tensor parallel {0,1} {2,3}, data parallel {0,2} {1,3}. Rank 3 hangs in its own code after
// both groups' collective 4: rank 2 waits for it in TP collective 5, and, stuck there, never
// enqueues DP collective 3, which rank 0 waits in; rank 1 waits in DP collective 3 for rank 3.
Dumps ChainedGroups() {
  Dumps d;
  for (std::int32_t r = 0; r < 4; ++r) d.Dump(r);
  d.Group(0, "3", "[0, 2]", 3, 2, 150);  // DP: the first group in the dumps' order
  d.Group(0, "1", "[0, 1]", 5, 5);
  d.Group(1, "1", "[0, 1]", 5, 5);
  d.Group(1, "4", "[1, 3]", 3, 2, 150);
  d.Group(2, "2", "[2, 3]", 5, 4, 100);
  d.Group(2, "3", "[0, 2]", 2, 2);
  d.Group(3, "2", "[2, 3]", 4, 4);
  d.Group(3, "4", "[1, 3]", 2, 2);
  return d;
}

TEST(FlightRecorder, AMemberThatWaitsInAnotherGroupIsAVictimNotTheRoot) {
  const Dumps d = ChainedGroups();
  const FrAnalysis fr = AnalyzeFlightRecorder(d.incident());
  ASSERT_EQ(fr.roots.size(), 1u);
  EXPECT_EQ(fr.roots[0].rank, 3);
  EXPECT_EQ(fr.roots[0].why, FrBlocker::Why::kNeverJoined);
  // torch's analyser takes the first group with a missing rank: rank 2, a victim.
  EXPECT_EQ(FrTraceVerdict(d.incident()).ranks, (std::vector<std::int32_t>{2}));
}

TEST(FlightRecorder, AMemberWhoseCollectiveDiffersFromEveryOtherIsTheRoot) {
  Dumps d = OneGroupWaiting();
  d.Replace(1, 10, "nccl:all_gather", "[[4096]]");
  const FrAnalysis fr = AnalyzeFlightRecorder(d.incident());
  ASSERT_EQ(fr.roots.size(), 1u);
  EXPECT_EQ(fr.roots[0].rank, 1);
  EXPECT_EQ(fr.roots[0].why, FrBlocker::Why::kOddCollective);
  EXPECT_EQ(FrTraceVerdict(d.incident()).ranks, (std::vector<std::int32_t>{1}));
  EXPECT_TRUE(FrWavefrontVerdict(d.incident()).ranks.empty());  // every member enqueued it
}

TEST(FlightRecorder, TheOnlyMemberWithoutADumpIsTheRootOnlyWhenItIsAlone) {
  Dumps d;
  for (std::int32_t r = 0; r < 3; ++r) {
    d.Dump(r);
    d.Group(r, "0", "[0, 1, 2, 3]", 10, 9);
  }
  FrAnalysis fr = AnalyzeFlightRecorder(d.incident());
  ASSERT_EQ(fr.roots.size(), 1u);
  EXPECT_EQ(fr.roots[0].rank, 3);
  EXPECT_EQ(fr.roots[0].why, FrBlocker::Why::kNoDump);
  EXPECT_TRUE(FrTraceVerdict(d.incident()).ranks.empty());  // it expects only the dumped ranks

  Dumps half;
  for (std::int32_t r = 0; r < 2; ++r) {
    half.Dump(r);
    half.Group(r, "0", "[0, 1, 2, 3]", 10, 9);
  }
  EXPECT_TRUE(AnalyzeFlightRecorder(half.incident()).roots.empty()) << "two ranks without a dump";
}

TEST(FlightRecorder, GroupsThatCompletedEverythingSayNothing) {
  Dumps d;
  for (std::int32_t r = 0; r < 4; ++r) {
    d.Dump(r);
    d.Group(r, "0", "[0, 1, 2, 3]", r == 2 ? 9 : 10, r == 2 ? 9 : 10);
  }
  EXPECT_TRUE(AnalyzeFlightRecorder(d.incident()).roots.empty());
}

TEST(FlightRecorderEngine, DumpsWithoutAnyLogLineStillNameTheHungRank) {
  const Dumps d = ChainedGroups();
  const Finding f = AnalyzeParticipation(d.incident());
  EXPECT_EQ(f.verdict, v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.failure_class, v1::FAILURE_CLASS_HANG);
  ASSERT_FALSE(f.evidence.empty());
  const Event& cited = d.incident().events[f.evidence.front().event];
  EXPECT_EQ(cited.rank, 3);
  EXPECT_EQ(cited.kind, Kind::kFrGroup);
}

TEST(FlightRecorderEngine, AnOddCollectiveIsACollectiveMismatch) {
  Dumps d = OneGroupWaiting();
  d.Replace(1, 10, "nccl:all_reduce", "[[512]]");
  const Finding f = AnalyzeParticipation(d.incident());
  EXPECT_EQ(f.verdict, v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(f.rank, 1);
  EXPECT_EQ(f.failure_class, v1::FAILURE_CLASS_COLLECTIVE_MISMATCH);
}

TEST(FlightRecorderBaselines, TheWavefrontTakesTheGroupWhoseStuckCollectiveCameFirst) {
  const Dumps d = ChainedGroups();
  // TP {2,3}'s collective 5 was created first; the DP groups' collective 3 after it.
  const FrVerdict v = FrWavefrontVerdict(d.incident());
  EXPECT_EQ(v.ranks, (std::vector<std::int32_t>{3}));
  const Finding trace = AnalyzeFrTrace(d.incident());
  EXPECT_EQ(trace.strategy, "fr-trace");
  EXPECT_EQ(trace.rank, 2);
  const Finding none = AnalyzeFrWavefront(Incident{});
  EXPECT_EQ(none.verdict, v1::VERDICT_INCONCLUSIVE);
}

}  // namespace
}  // namespace denpex::engine
