// NCCL RAS reports (docs/log_formats.md §29): the reader on reports in the shapes NCCL's client
// prints (text from 2.24, JSON from 2.28.7, 2.28.9's missing comma), what the engine concludes
// from them alone, and the `ras` baseline's reading of the same reports.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "ingest/live.h"
#include "ingest/load.h"
#include "ingest/nccl_ras.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {

// A 2.26 text report of a 32-rank job (4 nodes of 8): communicator 0 the world, group 1 four
// 8-rank communicators; `warnings` the Warnings section's body.
std::string TextReport(const std::string& warnings, const std::string& version = "2.26.2",
                       const std::string& errors = "",
                       const std::string& world_errors = "MISMATCH") {
  return "NCCL version " + version +
         "+cuda12.8 compiled with CUDA 12.8\n"
         "CUDA runtime version 12080, driver version 12080\n"
         "\n"
         "Job summary\n"
         "===========\n"
         "\n"
         "  Nodes  Processes         GPUs  Processes     GPUs\n"
         "(total)   per node  per process    (total)  (total)\n"
         "      4          8            1         32       32\n"
         "\n"
         "Communicators... (0.01s)\n"
         "=============\n"
         "\n"
         "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
         "    #  in group  per comm  per node  per comm  in group\n"
         "    0         1         4         8        32        32   RUNNING  " +
         world_errors +
         "\n"
         "    1         4         1         8         8        32   RUNNING  MISMATCH\n"
         "\n"
         "Errors\n"
         "======\n"
         "\n" +
         errors +
         "Warnings\n"
         "========\n"
         "\n" +
         warnings;
}

const std::string kRank17Behind =
    "#0-0 (9f2b3c4d5e6f7a81) MISMATCH\n"
    "  Communicator ranks have different AllReduce operation counts\n"
    "  31 ranks have launched up to operation 642\n"
    "  Rank 17 has launched up to operation 641 -- GPU 1 managed by process 48213 on node "
    "10.0.0.3\n"
    "\n"
    "#1-2 (00000000000000ab) MISMATCH\n"
    "  Communicator ranks have different AllGather operation counts\n"
    "  7 ranks have launched up to operation 90\n"
    "  Rank 1 has launched up to operation 89 -- GPU 1 managed by process 48213 on node 10.0.0.3\n"
    "\n";

// 30 ranks at 640 all-gathers, 2 at 641: RAS lists the 2 (the outliers), not the 30.
const std::string kTwoAheadOfThirty =
    "#0-0 (9f2b3c4d5e6f7a81) MISMATCH\n"
    "  Communicator ranks have different AllGather operation counts\n"
    "  30 ranks have launched up to operation 640\n"
    "  2 ranks have launched up to operation 641\n"
    "  Rank 3 -- GPU 3 managed by process 803 on node 10.0.0.1\n"
    "  Rank 9 -- GPU 1 managed by process 809 on node 10.0.0.2\n\n";

std::vector<const Event*> Ranks(const RasRead& r) {
  std::vector<const Event*> out;
  for (const Event& e : r.log.events) {
    if (e.kind == Kind::kRasRank) out.push_back(&e);
  }
  return out;
}

TEST(NcclRasReader, ReadsATextReportsTotalsAndTheRankBehind) {
  const std::string text = TextReport(kRank17Behind);
  ASSERT_EQ(SniffNcclRas(text), RasForm::kText);
  const RasRead r = ReadNcclRas(text, RasForm::kText, 3);
  ASSERT_TRUE(r.problem.empty()) << r.problem;
  ASSERT_FALSE(r.log.events.empty());
  const Event& head = r.log.events.front();
  ASSERT_EQ(head.kind, Kind::kRasReport);
  const auto& rep = std::get<RasReport>(head.detail);
  EXPECT_EQ(r.log.strings.Get(rep.nccl_version), "2.26.2+cuda12.8");
  EXPECT_EQ(rep.processes, 32);
  EXPECT_EQ(rep.gpus, 32);
  EXPECT_EQ(rep.comms, 5);
  EXPECT_EQ(head.line, 1u);
  EXPECT_EQ(head.file, 3u);

  const auto ranks = Ranks(r);
  ASSERT_EQ(ranks.size(), 2u);
  const auto& world = std::get<RasRank>(ranks[0]->detail);
  EXPECT_EQ(ranks[0]->rank, 17);
  EXPECT_EQ(world.why, RasRank::Why::kBehind);
  EXPECT_EQ(r.log.strings.Get(world.op), "AllReduce");
  EXPECT_EQ(world.count, 641);
  EXPECT_EQ(world.common, 642);
  EXPECT_EQ(world.comm_size, 32);
  EXPECT_EQ(world.pid, 48213);
  EXPECT_EQ(world.gpu, 1);
  EXPECT_EQ(r.log.strings.Get(world.node), "10.0.0.3");
  // The line cited is the rank's own.
  EXPECT_EQ(text.substr(ranks[0]->offset, ranks[0]->length),
            "  Rank 17 has launched up to operation 641 -- GPU 1 managed by process 48213 on node "
            "10.0.0.3");
  // Rank 1 of an 8-rank communicator is global rank 17: the same process in the world's.
  const auto& sub = std::get<RasRank>(ranks[1]->detail);
  EXPECT_EQ(sub.comm_rank, 1);
  EXPECT_EQ(sub.comm_size, 8);
  EXPECT_EQ(ranks[1]->rank, 17);
}

TEST(NcclRasReader, Reads224sOneCountForEveryType) {
  const std::string text = TextReport(
      "#0-0 (9f2b3c4d5e6f7a81) MISMATCH\n"
      "  Communicator ranks have different collective operation counts\n"
      "  31 ranks have launched up to operation 1284\n"
      "  Rank 5 has launched up to operation 1283 -- GPU 5 managed by process 700 on node "
      "10.0.0.1\n\n",
      "2.24.3");
  const RasRead r = ReadNcclRas(text, SniffNcclRas(text), 0);
  const auto ranks = Ranks(r);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0]->rank, 5);
  EXPECT_EQ(r.log.strings.Get(std::get<RasRank>(ranks[0]->detail).op), "collective");
  // Its communicators' missing ranks are numbers alone.
  const std::string missing = TextReport("", "2.24.3",
                                         "#0-0 (00000000000000ab) INCOMPLETE\n"
                                         "  Missing communicator data from 2 ranks\n"
                                         "  The missing ranks: 3,5\n\n",
                                         "INCOMPLETE");
  const RasRead read = ReadNcclRas(missing, RasForm::kText, 0);
  const auto gone = Ranks(read);  // pointers into `read`
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0]->rank, 3);
  EXPECT_EQ(gone[1]->rank, 5);
  EXPECT_EQ(std::get<RasRank>(gone[1]->detail).why, RasRank::Why::kMissing);
}

// RAS lists a set one by one only when it is an outlier: of 30 ranks behind and 2 ahead it
// names the 2 ahead. The reader marks them ahead; nothing names the 30.
TEST(NcclRasReader, TwoRanksAheadOfThirtyAreAheadNotBehind) {
  const std::string text = TextReport(kTwoAheadOfThirty);
  const RasRead r = ReadNcclRas(text, RasForm::kText, 0);
  const auto ranks = Ranks(r);
  ASSERT_EQ(ranks.size(), 2u);
  for (const Event* e : ranks) {
    const auto& rr = std::get<RasRank>(e->detail);
    EXPECT_EQ(rr.why, RasRank::Why::kAhead);
    EXPECT_EQ(rr.count, 641);
    EXPECT_EQ(rr.common, 640);
    EXPECT_EQ(rr.with, 2);
  }
  EXPECT_EQ(ranks[0]->rank, 3);
  EXPECT_EQ(ranks[1]->rank, 9);
}

TEST(NcclRasReader, ReadsDeadProcessesAndACommunicatorsMissingRanks) {
  const std::string text =
      TextReport("", "2.27.3",
                 "DEAD\n"
                 "  1 job process is considered dead (unreachable via the RAS network)\n"
                 "  Process 48213 on node 10.0.0.3 managing GPU 1\n"
                 "\n"
                 "#0-0 (9f2b3c4d5e6f7a81) INCOMPLETE\n"
                 "  Missing communicator data from 1 rank\n"
                 "  Rank 17 -- GPU 1 managed by process 48213 on node 10.0.0.3\n"
                 "\n",
                 "INCOMPLETE");
  const RasRead r = ReadNcclRas(text, RasForm::kText, 0);
  EXPECT_EQ(std::get<RasReport>(r.log.events.front().detail).dead, 1);
  const auto ranks = Ranks(r);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(std::get<RasRank>(ranks[0]->detail).why, RasRank::Why::kDead);
  EXPECT_EQ(ranks[0]->rank, 17);  // the process, tied to its rank in the world communicator
  EXPECT_EQ(std::get<RasRank>(ranks[1]->detail).why, RasRank::Why::kMissing);
  EXPECT_EQ(ranks[1]->rank, 17);
}

// Whatever a collector put before each line (a container runtime's stamp and stream), the
// report reads the same.
TEST(NcclRasReader, APrefixOnEveryLineChangesNothing) {
  const std::string plain = TextReport(kRank17Behind);
  std::string prefixed;
  std::size_t at = 0;
  while (at < plain.size()) {
    const std::size_t nl = plain.find('\n', at);
    prefixed += "2026-12-03T19:44:51.123456789Z stdout F " + plain.substr(at, nl - at) + "\n";
    at = nl + 1;
  }
  ASSERT_EQ(SniffNcclRas(prefixed), RasForm::kText);
  const RasRead a = ReadNcclRas(plain, RasForm::kText, 0);
  const RasRead b = ReadNcclRas(prefixed, RasForm::kText, 0);
  ASSERT_EQ(Ranks(a).size(), Ranks(b).size());
  for (std::size_t i = 0; i < Ranks(a).size(); ++i) {
    EXPECT_EQ(Ranks(a)[i]->rank, Ranks(b)[i]->rank);
    EXPECT_EQ(std::get<RasRank>(Ranks(a)[i]->detail).count,
              std::get<RasRank>(Ranks(b)[i]->detail).count);
  }
  EXPECT_EQ(std::get<RasReport>(b.log.events.front().detail).gpus, 32);
}

TEST(NcclRasReader, APollersStampGivesEachReportItsTimeAndOnlyTheNewestAreRead) {
  std::string text;
  for (int i = 0; i < kNcclRasReportsRead + 4; ++i) {
    text += "2026-12-03T19:" + std::to_string(10 + i) + ":00+00:00\n" + TextReport(kRank17Behind);
  }
  const RasRead r = ReadNcclRas(text, SniffNcclRas(text), 0);
  int reports = 0;
  TimeNs last = 0;
  for (const Event& e : r.log.events) {
    if (e.kind != Kind::kRasReport) continue;
    ++reports;
    EXPECT_GT(e.time, last);
    last = e.time;
  }
  EXPECT_EQ(reports, kNcclRasReportsRead);
  EXPECT_EQ(last, *ParseRfc3339("2026-12-03T19:29:00Z"));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("4 older ones not"), std::string::npos) << r.notes[0];
}

// A 16-rank JSON report (2.29 and 2.28.9): rank 6's process dead, a sub-communicator's rank tied
// to it by host and pid.
std::string JsonReport(bool missing_comma) {
  std::string ranks, sub;
  for (int r = 0; r < 16; ++r) {
    if (r == 6) continue;
    const std::string host = "10.0.0." + std::to_string(r / 4 + 1);
    ranks += std::string(ranks.empty() ? "" : ",\n") +
             "        {\n          \"rank\": " + std::to_string(r) + ",\n          \"host\": \"" +
             host + "\",\n          \"pid\": " + std::to_string(1000 + r) +
             ",\n          \"cuda_dev\": " + std::to_string(r % 4) +
             ",\n          \"nvml_dev\": " + std::to_string(r % 4) +
             ",\n          \"status\": {\n            \"init_state\": 0,\n            "
             "\"async_error\": 0,\n            \"finalize_called\": false,\n            "
             "\"destroy_flag\": false,\n            \"abort_flag\": false\n          },\n"
             "          \"collective_counts\": {\n            \"Broadcast\": 1,\n            "
             "\"Reduce\": 0,\n            \"AllGather\": 0,\n            \"ReduceScatter\": 0,\n"
             "            \"AllReduce\": 642\n          }\n        }";
  }
  const std::string missing =
      "        {\n          \"rank\": 6,\n          \"host\": \"10.0.0.2\",\n          \"pid\": "
      "1006,\n          \"cuda_dev\": 2,\n          \"nvml_dev\": 2" +
      std::string(missing_comma ? "" : ",") +
      "\n          \"status\": {\n            \"unresponsive\": true,\n            "
      "\"considered_dead\": true\n          }\n        }";
  return "{\n  \"nccl_version\": \"" + std::string(missing_comma ? "2.28.9" : "2.29.2") +
         "+cuda12.9\",\n  \"cuda_runtime_version\": 12090,\n  \"cuda_driver_version\": 12090,\n"
         "  \"timestamp\": \"2026-12-03 19:44:51\",\n  \"communicators_count\": 1,\n"
         "  \"communicators\": [\n    {\n      \"hash\": \"0x9f2b3c4d5e6f7a81\",\n"
         "      \"secondary_hash\": \"0x1:0x2\",\n      \"size\": 16,\n      \"ranks_count\": 15,\n"
         "      \"missing_ranks_count\": 1,\n      \"ranks\": [\n" +
         ranks + "\n      ],\n      \"missing_ranks\": [\n" + missing +
         "\n      ]\n    }\n  ],\n  \"ras\": {\n    \"collection_time_sec\": 0.012,\n"
         "    \"timeouts_count\": 0\n  }\n}\n";
}

TEST(NcclRasReader, ReadsJsonAndRepairs2289sMissingCommaSayingSo) {
  for (const bool broken : {false, true}) {
    const std::string text = JsonReport(broken);
    ASSERT_EQ(SniffNcclRas(text), RasForm::kJson);
    const RasRead r = ReadNcclRas(text, RasForm::kJson, 0);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    EXPECT_EQ(r.notes.size(), broken ? 1u : 0u);
    if (broken) {
      EXPECT_NE(r.notes[0].find("lacks a comma after \"nvml_dev\""), std::string::npos);
    }
    const auto& rep = std::get<RasReport>(r.log.events.front().detail);
    EXPECT_TRUE(rep.json);
    EXPECT_EQ(rep.dead, 1);
    EXPECT_EQ(r.log.events.front().time, *ParseRfc3339("2026-12-03T19:44:51Z"));
    const auto ranks = Ranks(r);
    ASSERT_EQ(ranks.size(), 1u);
    EXPECT_EQ(ranks[0]->rank, 6);
    EXPECT_EQ(std::get<RasRank>(ranks[0]->detail).why, RasRank::Why::kDead);
    EXPECT_EQ(text.substr(ranks[0]->offset, ranks[0]->length), "          \"rank\": 6,");
  }
}

TEST(NcclRasReader, MalformedOrForeignInputIsAProblemOrNotAReport) {
  EXPECT_EQ(SniffNcclRas("[0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"), RasForm::kNone);
  EXPECT_EQ(SniffNcclRas("{\"level\": \"info\", \"msg\": \"x\"}\n"), RasForm::kNone);
  std::string cut = JsonReport(false);
  cut.resize(cut.size() / 2);
  const RasRead r = ReadNcclRas(cut, RasForm::kJson, 0);
  EXPECT_FALSE(r.problem.empty());
  const std::string junk = "NCCL version x compiled with CUDA y\n#0-0 (zz) MISMATCH\nRank -1 has\n";
  EXPECT_NO_THROW(ReadNcclRas(junk, RasForm::kText, 0));
}

// ---- What the engine and the baseline answer from the reports alone ---------------------

v1::Diagnosis DiagnoseFiles(const std::vector<std::pair<std::string, std::string>>& files,
                            Strategy s = Strategy::kEngine) {
  denpex::testing::TempDir dir;
  for (const auto& [name, text] : files) std::ofstream(dir.path() / name) << text;
  auto d = Diagnose(dir.path(), {.strategy = s});
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : v1::Diagnosis{};
}

TEST(NcclRasEngine, ARankBehindAtTheSameCountInTwoReportsIsNamedAsStuck) {
  const std::string text = "2026-12-03T19:40:00+00:00\n" + TextReport(kRank17Behind) +
                           "2026-12-03T19:41:00+00:00\n" + TextReport(kRank17Behind);
  const v1::Diagnosis d = DiagnoseFiles({{"ncclras.log", text}});
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 17);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_NE(d.reason().find("has not moved since"), std::string::npos) << d.reason();
}

// One report alone cannot tell a stuck rank from a late one (a healthy job's snapshot catches a
// rank late now and then): the rank is pointed at, nothing is committed.
TEST(NcclRasEngine, OneReportOfARankBehindCommitsNothing) {
  const v1::Diagnosis d = DiagnoseFiles({{"ncclras.log", TextReport(kRank17Behind)}});
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE);
  EXPECT_NE(d.reason().find("shows rank 17 behind"), std::string::npos) << d.reason();
}

TEST(NcclRasEngine, ADeadProcessIsNamedAndTheBaselineAgrees) {
  const v1::Diagnosis d = DiagnoseFiles({{"ras.json", JsonReport(true)}});
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 6);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  const v1::Diagnosis b = DiagnoseFiles({{"ras.json", JsonReport(true)}}, Strategy::kRas);
  EXPECT_EQ(b.initiator().rank(), 6);
}

// A rank that skipped a reduce-scatter and went on to the all-gather (2.29 JSON, 4 ranks): behind
// in one type and ahead in another, a mismatch, named from the report alone.
TEST(NcclRasEngine, OddCountsInTwoTypesAreACollectiveMismatch) {
  std::string ranks;
  for (int r = 0; r < 4; ++r) {
    const bool odd = r == 3;
    ranks += std::string(r ? ",\n" : "") + "{\"rank\": " + std::to_string(r) +
             ", \"host\": \"10.0.0.1\", \"pid\": " + std::to_string(100 + r) +
             ", \"cuda_dev\": " + std::to_string(r) + ", \"nvml_dev\": " + std::to_string(r) +
             ", \"status\": {\"init_state\": 0, \"async_error\": 0, \"finalize_called\": false, "
             "\"destroy_flag\": false, \"abort_flag\": false}, \"collective_counts\": "
             "{\"Broadcast\": 1, "
             "\"Reduce\": 0, \"AllGather\": " +
             std::string(odd ? "9" : "8") + ", \"ReduceScatter\": " + std::string(odd ? "8" : "9") +
             ", \"AllReduce\": 40}}";
  }
  const std::string doc =
      "{\n\"nccl_version\": \"2.29.2\", \"timestamp\": \"2026-12-03 19:44:51\", "
      "\"communicators\": [{\"hash\": \"0xab\", \"size\": 4, \"ranks\": [\n" +
      ranks + "\n], \"missing_ranks\": []}]}\n";
  const v1::Diagnosis d = DiagnoseFiles({{"ras.json", doc}});
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_COLLECTIVE_MISMATCH);
  EXPECT_NE(d.reason().find("ahead in AllGather"), std::string::npos) << d.reason();
}

// Two ranks ahead of thirty: RAS lists the two, and the baseline names one of them; the engine
// names no one (those ahead are the ones waiting; who the thirty wait on RAS does not say).
TEST(NcclRasEngine, RanksAheadAreNoAnswerThoughTheBaselineNamesThem) {
  const std::string text = TextReport(kTwoAheadOfThirty);
  EXPECT_EQ(DiagnoseFiles({{"ras.txt", text}}).verdict(), v1::VERDICT_INCONCLUSIVE);
  const v1::Diagnosis b = DiagnoseFiles({{"ras.txt", text}}, Strategy::kRas);
  EXPECT_EQ(b.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(b.initiator().rank(), 3);
}

// A poller's file read while it grows (`denpex watch`): its first stamp line alone decides
// nothing; once reports arrive it is read whole each time, as a read of the finished file is.
TEST(NcclRasLive, APollersFileReadWhileItGrowsIsTheFileReadOnce) {
  denpex::testing::TempDir dir;
  auto live = LiveIncident::Open(dir.path());
  ASSERT_TRUE(live.ok());
  const auto append = [&](const std::string& text) {
    std::ofstream(dir.path() / "ncclras.log", std::ios::app) << text;
    ASSERT_TRUE(live->Refresh().ok());
  };
  append("2026-12-03T19:40:00+00:00\n");
  append(TextReport(kRank17Behind));
  append("2026-12-03T19:41:00+00:00\n");
  append(TextReport(kRank17Behind));
  auto grown = live->Assemble(1);
  auto once = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(grown.ok()) << grown.status().message();
  ASSERT_TRUE(once.ok());
  ASSERT_EQ(grown->events.size(), once->events.size());
  int ranks = 0;
  for (std::size_t i = 0; i < once->events.size(); ++i) {
    EXPECT_EQ(grown->events[i].kind, once->events[i].kind);
    EXPECT_EQ(grown->events[i].line, once->events[i].line);
    EXPECT_EQ(grown->events[i].rank, once->events[i].rank);
    ranks += once->events[i].kind == Kind::kRasRank ? 1 : 0;
  }
  EXPECT_EQ(ranks, 4);
  EXPECT_TRUE(grown->files.front().nccl_ras);
}

}  // namespace
}  // namespace denpex::engine
