// Recognisers, one line shape at a time (docs/log_formats.md §2–§6), and the per-file parser
// on multi-line records.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fixture.h"
#include "parse/headers.h"
#include "parse/lines.h"
#include "parse/parse_log.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

TimeNs At(const char* rfc3339) { return *ParseRfc3339(rfc3339); }
// Placeholder-year times, as the recognisers return them for yearless stamps.
TimeNs Yearless(const char* rest) { return At((std::string("2000-") + rest).c_str()); }

TEST(Lines, RankPrefixIsStrippedAndMalformedOnesAreFlagged) {
  std::string_view line = "[rank1091]:[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:607] x";
  std::int32_t rank = -1;
  ASSERT_EQ(StripRankPrefix(&line, &rank), Match::kYes);
  EXPECT_EQ(rank, 1091);
  EXPECT_TRUE(line.starts_with("[E302"));
  std::string_view bad = "[rankX]: hello";
  EXPECT_EQ(StripRankPrefix(&bad, &rank), Match::kMalformed);
  std::string_view other = "[default0]:[rank0]: hi";
  EXPECT_EQ(StripRankPrefix(&other, &rank), Match::kNo);
}

TEST(Lines, C10HeaderHasUnpaddedMonthAndNanoseconds) {
  C10Header h;
  ASSERT_EQ(ParseC10Header("[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:607] msg", &h), Match::kYes);
  EXPECT_EQ(h.severity, 'E');
  EXPECT_EQ(h.time, Yearless("03-02T09:27:14.123456789Z"));
  EXPECT_EQ(h.source, "ProcessGroupNCCL.cpp");
  EXPECT_EQ(h.source_line, 607);
  EXPECT_EQ(h.message, "msg");
  ASSERT_EQ(ParseC10Header("[W1016 23:59:59.000000001 socket.cpp:1] m", &h), Match::kYes);
  EXPECT_EQ(h.time, Yearless("10-16T23:59:59.000000001Z"));
  EXPECT_EQ(ParseC10Header("[E ProcessGroupNCCL.cpp:737] old shape", &h), Match::kNo);
  EXPECT_EQ(ParseC10Header("[E1302 09:27:14.1 x.cpp:1] month 13", &h), Match::kMalformed);
  EXPECT_EQ(ParseC10Header("[E302 9:27:14.1 x.cpp:1] bad hour", &h), Match::kMalformed);
}

// A key=value trainer step line as the real corpus's train.py prints it (corpora/real).
TEST(Lines, StepMetricsKeyValueLine) {
  StepMetricsFields f;
  ASSERT_EQ(ParseStepMetrics("rank=2 step=8/20 loss=10.10004 data_ms=1502.4 step_ms=1760.0", &f), Match::kYes);
  EXPECT_EQ(f.step, 8);
  EXPECT_EQ(f.total, 20);
  EXPECT_EQ(f.data_us, 1502400);
  EXPECT_EQ(f.step_us, 1760000);
  EXPECT_EQ(ParseStepMetrics("rank=2 step=8/20 loss=10.1", &f), Match::kNo);  // no durations: not this shape
  EXPECT_EQ(ParseStepMetrics("step=x data_ms=1 step_ms=2", &f), Match::kMalformed);
}

// Two processes printing to one descriptor, each line in two writes (python -u: the text, then
// its newline), glue one's line to the other's. The second record starts with the first one's
// date right after a word; a date a message quotes (after a space, `=`, `/`, a quote) is no glue.
TEST(Lines, GluedRecordStartsAtTheSecondWritersStamp) {
  const std::string_view glued =
      "2026-12-05 12:56:27.826 rank=0 step=2/40 loss=13.62115 data_ms=0.1 "
      "step_ms=110.62026-12-05 12:56:27.826 rank=1 step=2/40 loss=10.38081 data_ms=0.2 "
      "step_ms=110.3";
  EXPECT_EQ(GluedRecord(glued), glued.find("2026-12-05", 1));
  EXPECT_EQ(glued.substr(GluedRecord(glued), 30), "2026-12-05 12:56:27.826 rank=1");
  const std::string_view tagged = "[default0]:2026-12-05T12:56:27 a b)2026-12-05T12:56:28 c";
  EXPECT_EQ(GluedRecord(tagged), tagged.find(")2026") + 1);
  for (std::string_view whole : {
           "2026-12-05 12:56:27.826 rank=0 step=2/40 loss=13.62 data_ms=0.1 step_ms=110.6",
           "2026-12-05 12:56:27 saved at 2026-12-05 12:56:27 to /ck",
           "2026-12-05 12:56:27 run=2026-12-05T12:56:27 path=/ck/2026-12-05 12:56:27",
           "2026-12-05 12:56:27 stamp '2026-12-05 12:56:27' (2026-12-05 12:56:27)",
           "2026-12-05 12:56:27 next day a2026-12-06 00:00:01",  // another date: not the line's
           "2026-12-05 12:56:27 a2026-12-05 12:5",               // no whole stamp after it
           "no stamp a2026-12-05 12:56:27",                      // the first stamp is the only one
           "",
       }) {
    EXPECT_EQ(GluedRecord(whole), std::string_view::npos) << whole;
  }
}

// A step line glued to another rank's (GluedRecord) is both ranks' steps: each rank's last step
// is its own, the second cited at the same line.
TEST(LogParser, AStepLineGluedToAnotherRanksIsBothSteps) {
  const std::string text =
      "2026-12-05 12:56:27.716 rank=0 step=1/40 loss=12.47824 data_ms=2.2 step_ms=110.2\n"
      "2026-12-05 12:56:27.716 rank=1 step=1/40 loss=12.1 data_ms=2.2 step_ms=110.2\n"
      "2026-12-05 12:56:27.826 rank=0 step=2/40 loss=13.62115 data_ms=0.1 step_ms=110.62026-12-05 "
      "12:56:27.826 rank=1 step=2/40 loss=10.38081 data_ms=0.2 step_ms=110.3\n"
      "\n";
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = SniffPrefixes(text)});
  EXPECT_EQ(log.malformed, 0);
  ASSERT_EQ(log.events.size(), 2u);
  for (const Event& e : log.events) {
    EXPECT_EQ(e.kind, Kind::kIteration);
    EXPECT_EQ(std::get<Iteration>(e.detail).iteration, 2) << e.rank;
    EXPECT_EQ(e.line, 3u);
  }
  EXPECT_EQ(log.events[0].rank + log.events[1].rank, 1);
  const Event& second = log.events[0].rank == 1 ? log.events[0] : log.events[1];
  EXPECT_EQ(second.offset, text.find("2026-12-05 12:56:27.826 rank=1"));
  EXPECT_EQ(std::get<Iteration>(second.detail).step_us, 110300);
}

TEST(Lines, PgPrefixVariants) {
  struct Case {
    const char* text;
    const char* uid;
    const char* desc;
    int group_rank;
  };
  for (const Case& c : {Case{"[PG 3 (TENSOR_MODEL_PARALLEL_GROUP) Rank 1] rest", "3", "TENSOR_MODEL_PARALLEL_GROUP", 1},
                        Case{"[PG 3 Rank 1] rest", "3", "", 1}, Case{"[Rank 1] rest", "", "", 1},
                        Case{"[PG ID 0 PG GUID 0(default_pg) Rank 1] rest", "0", "default_pg", 1},
                        Case{"[PG ID 11 PG GUID 119 Rank 7] rest", "119", "", 7},
                        Case{"[PG  Rank 1] rest", "", "", 1}}) {
    std::string_view text = c.text;
    PgPrefix pg;
    ASSERT_EQ(ParsePgPrefix(&text, &pg), Match::kYes) << c.text;
    EXPECT_EQ(pg.uid, c.uid) << c.text;
    EXPECT_EQ(pg.desc, c.desc) << c.text;
    EXPECT_EQ(pg.group_rank, c.group_rank) << c.text;
    EXPECT_EQ(text, "rest") << c.text;
  }
  std::string_view bad = "[PG 3 (x) Rank ?] rest";
  PgPrefix pg;
  EXPECT_EQ(ParsePgPrefix(&bad, &pg), Match::kMalformed);
}

TEST(Lines, WatchdogTimeoutAndStatusFields) {
  WatchdogTimeoutFields f;
  ASSERT_EQ(ParseWatchdogTimeout("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=86, OpType=ALLREDUCE, "
                                 "NumelIn=4194304, NumelOut=4194304, Timeout(ms)=600000) ran for 600104 milliseconds "
                                 "before timing out.",
                                 &f),
            Match::kYes);
  EXPECT_EQ(f.seq, 86);
  EXPECT_EQ(f.op, "ALLREDUCE");
  EXPECT_EQ(f.timeout_ms, 600000);
  EXPECT_EQ(f.ran_for_ms, 600104);
  WatchdogStatus st;
  ASSERT_EQ(ParseWatchdogStatus("Exception (either an error or timeout) detected by watchdog at work: 86, last "
                                "enqueued NCCL work: 87, last completed NCCL work: 85.",
                                &st),
            Match::kYes);
  EXPECT_EQ(st.last_enqueued, 87);
  EXPECT_EQ(st.last_completed, 85);
  ASSERT_EQ(ParseWatchdogStatus(" failure detected by watchdog at work sequence id: 5 PG status: last enqueued "
                                "work: 5, last completed work: 4",
                                &st),
            Match::kYes);
  EXPECT_EQ(st.last_enqueued, 5);
  EXPECT_EQ(ParseWatchdogStatus("Some NCCL operations have failed or timed out.", &st), Match::kNo);
}

// A line cut short (a truncated file's last line, a killed process's last write) may end inside
// a field: `NumelOut=40000` of 40000000. A field the cut reached is not read; those before it are.
TEST(Lines, AWatchdogTimeoutCutShortKeepsNoFieldTheCutReached) {
  const std::string whole =
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
      "NumelIn=40000000, "
      "NumelOut=40000000, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.";
  // The fields are views into the line: each cut line lives as long as they are read.
  const std::string_view line = whole;
  WatchdogTimeoutFields f;
  ASSERT_EQ(ParseWatchdogTimeout(line.substr(0, line.find("NumelOut=") + 14), &f), Match::kYes);
  EXPECT_EQ(f.seq, 9);
  EXPECT_EQ(f.op, "ALLREDUCE");
  EXPECT_EQ(f.numel_in, 40000000);
  EXPECT_EQ(f.numel_out, -1);
  WatchdogTimeoutFields g;
  ASSERT_EQ(ParseWatchdogTimeout(line.substr(0, line.find("ran for ") + 12), &g), Match::kYes);
  EXPECT_EQ(g.numel_out, 40000000);
  EXPECT_EQ(g.timeout_ms, 600000);
  EXPECT_EQ(g.ran_for_ms, -1);
  WatchdogTimeoutFields h;
  ASSERT_EQ(ParseWatchdogTimeout(line.substr(0, line.find("OpType=") + 11), &h), Match::kYes);
  EXPECT_EQ(h.seq, 9);
  EXPECT_TRUE(h.op.empty());
  WatchdogTimeoutFields w;
  ASSERT_EQ(ParseWatchdogTimeout(whole, &w), Match::kYes);
  EXPECT_EQ(w.numel_out, 40000000);
  EXPECT_EQ(w.ran_for_ms, 600012);
}

TEST(Lines, GlogPythonHeaderAndAgentMessages) {
  GlogHeader h;
  ASSERT_EQ(ParseGlogHeader("E0302 09:17:03.512000 139872 torch/distributed/elastic/multiprocessing/api.py:833] "
                            "failed (exitcode: -9) local_rank: 3 (pid: 31243) of binary: /usr/bin/python3",
                            &h),
            Match::kYes);
  EXPECT_EQ(h.severity, 'E');
  EXPECT_EQ(h.time, Yearless("03-02T09:17:03.512Z"));
  EXPECT_EQ(h.pid, 139872);
  WorkerFailedFields f;
  ASSERT_EQ(ParseWorkerFailed(h.message, &f), Match::kYes);
  EXPECT_EQ(f.exit_code, -9);
  EXPECT_EQ(f.local_rank, 3);
  EXPECT_EQ(f.pid, 31243);
  std::int64_t pid;
  std::string_view signal;
  ASSERT_EQ(ParseWorkerSignalled("Sending process 31240 closing signal SIGTERM", &pid, &signal), Match::kYes);
  EXPECT_EQ(pid, 31240);
  EXPECT_EQ(signal, "SIGTERM");
  ASSERT_EQ(ParseGlogHeader("W0302 09:00:00.512000 139872 torch/distributed/run.py:779] ", &h), Match::kYes);
  EXPECT_EQ(h.message, "");
  EXPECT_EQ(ParseWorkerFailed("failed (exitcode: x) local_rank: 3", &f), Match::kMalformed);
}

// glog >= 0.6 (c10d's C++ lines under Debian's torch 1.13) prints the year: read with the rest.
TEST(Lines, GlogHeaderWithItsYear) {
  GlogHeader h;
  ASSERT_EQ(ParseGlogHeader("W20261202 10:24:08.113222 30545 socket.cpp:426] [c10d] The server socket has failed to bind to "
                            "[::]:40123 (errno: 98 - Address already in use).",
                            &h),
            Match::kYes);
  EXPECT_TRUE(h.has_year);
  EXPECT_EQ(h.time, At("2026-12-02T10:24:08.113222Z"));
  EXPECT_EQ(h.pid, 30545);
  EXPECT_EQ(h.source, "socket.cpp");
  EXPECT_TRUE(h.message.starts_with("[c10d] The server socket has failed to bind"));
  ASSERT_EQ(ParseGlogHeader("E0302 09:17:03.512000 139872 api.py:833] x", &h), Match::kYes);
  EXPECT_FALSE(h.has_year);
  EXPECT_EQ(ParseGlogHeader("W20261302 10:24:08.113222 30545 socket.cpp:426] x", &h), Match::kMalformed);  // month 13
  EXPECT_EQ(ParseGlogHeader("W38661202 10:24:08.113222 30545 socket.cpp:426] x", &h),
            Match::kMalformed);  // past 2262
  EXPECT_EQ(ParseGlogHeader("E12345678 is no stamp", &h), Match::kNo);
}

TEST(Lines, ChildFailedErrorTableFields) {
  TableField f;
  ASSERT_TRUE(SplitTableField("  rank      : 1091 (local_rank: 3)", &f));
  EXPECT_EQ(f.name, "rank");
  std::int32_t rank, local;
  ASSERT_TRUE(ParseRankField(f.value, &rank, &local));
  EXPECT_EQ(rank, 1091);
  EXPECT_EQ(local, 3);
  ASSERT_TRUE(SplitTableField("  exitcode  : -9 (pid: 31247)", &f));
  std::int32_t code;
  std::int64_t pid;
  ASSERT_TRUE(ParseExitcodeField(f.value, &code, &pid));
  EXPECT_EQ(code, -9);
  EXPECT_EQ(pid, 31247);
  ASSERT_TRUE(SplitTableField("  error_file: <N/A>", &f));
  EXPECT_EQ(f.name, "error_file");
  EXPECT_EQ(f.value, "<N/A>");
  TimeNs t;
  ASSERT_TRUE(ParseTableTime("2026-03-02_09:17:03", &t));
  EXPECT_EQ(t, At("2026-03-02T09:17:03Z"));
  EXPECT_FALSE(ParseTableTime("2026-03-02 09:17:03", &t));
  EXPECT_TRUE(IsTableEntryStart("[0]:"));
  EXPECT_FALSE(IsTableEntryStart("[0]: x"));
}

TEST(Lines, TrainerCommInitPythonErrorAndMasking) {
  TimeNs t;
  std::int64_t it, total;
  ASSERT_EQ(ParseIteration(" [2026-03-02 09:00:31] iteration       10/    1000 | consumed samples: 10240 |", &t, &it, &total),
            Match::kYes);
  EXPECT_EQ(t, At("2026-03-02T09:00:31Z"));
  EXPECT_EQ(it, 10);
  EXPECT_EQ(total, 1000);
  // Megatron-LM's training_log with microseconds (`%Y-%m-%d %H:%M:%S.%f`, since January 2026).
  ASSERT_EQ(ParseIteration(
                " [2026-03-02 09:00:31.250000] iteration       11/    1000 | consumed samples: "
                "11264 |",
                &t, &it, &total),
            Match::kYes);
  EXPECT_EQ(t, At("2026-03-02T09:00:31.25Z"));
  EXPECT_EQ(it, 11);
  CommInitFields c;
  ASSERT_EQ(ParseCommInit("gpu-0001:31240:31240 [3] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId "
                          "4e000 commId 0x9f2c - Init COMPLETE",
                          &c),
            Match::kYes);
  EXPECT_EQ(c.comm_rank, 3);
  EXPECT_EQ(c.nranks, 8);
  EXPECT_EQ(c.comm_id, "0x9f2c");
  std::string_view type;
  EXPECT_TRUE(ParsePythonErrorLine("torch.OutOfMemoryError: CUDA out of memory.", &type));
  EXPECT_EQ(type, "torch.OutOfMemoryError");
  EXPECT_FALSE(ParsePythonErrorLine("frame #0: c10::Error", &type));
  EXPECT_EQ(MaskSignature("[PG 3 Rank 1] SeqNum=86, ptr 0x7f2a ran for 600104 ms"),
            "[PG <n> Rank <n>] SeqNum=<n>, ptr <hex> ran for <n> ms");
}

// A byte-at-a-time masking, the reference for MaskSignature (which finds its runs of plain text
// 16 bytes at a time): both must give the same signature for any text.
std::string MaskSignatureByBytes(std::string_view message) {
  const auto hex = [](char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  std::string out;
  for (std::size_t i = 0; i < message.size() && out.size() < kMaxSignature;) {
    if (message[i] == '0' && i + 1 < message.size() && (message[i + 1] == 'x' || message[i + 1] == 'X')) {
      for (i += 2; i < message.size() && hex(message[i]); ++i) {
      }
      out += "<hex>";
    } else if (IsDigit(message[i])) {
      while (i < message.size() && IsDigit(message[i])) ++i;
      out += "<n>";
    } else {
      do {
        out += message[i++];
      } while (i < message.size() && out.size() < kMaxSignature && !IsDigit(message[i]));
    }
  }
  return out;
}

// NCCL's `Init COMPLETE` line in its fields' order is read field after field; in another order,
// or with a bus id before `comm` (a prefix), by a search for each field: the same fields either
// way.
TEST(Lines, CommInitFieldsInAnyOrder) {
  struct Case {
    std::string_view line;
    Match match;
    std::int32_t rank, nranks, dev;
    std::string_view bus, id;
  };
  const Case cases[] = {
      {"g:1:1 [3] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 4e000 commId "
       "0x9f2c - Init COMPLETE",
       Match::kYes, 3, 8, 3, "4e000", "0x9f2c"},
      {"g:1:1 [3] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 busId 4e000 commId 0x9f2c - Init "
       "COMPLETE",  // no nvmlDev
       Match::kYes, 3, 8, 3, "4e000", "0x9f2c"},
      {"g:1:1 [3] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 4e000 commId "
       "0x9f2c localRank 3 "
       "localRanks 8 localRanks 8 - Init COMPLETE",
       Match::kYes, 3, 8, 3, "4e000", "0x9f2c"},
      {"g:1:1 [3] NCCL INFO comm 0x5581 commId 0x9f2c rank 3 nranks 8 cudaDev 3 busId 4e000 - Init "
       "COMPLETE",  // reordered
       Match::kYes, 3, 8, 3, "4e000", "0x9f2c"},
      {" busId 1 NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 busId 4e000 commId 0x9f2c - Init "
       "COMPLETE",
       Match::kYes, 3, 8, 3, "1",
       "0x9f2c"},  // the first ` busId ` is the head's, as the search finds it
      {"g:1:1 [3] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 busId 4e000 commId  - Init "
       "COMPLETE",
       Match::kMalformed, 0, 0, 0, "", ""},
      {"g:1:1 [3] NCCL INFO comm 0x5581 rank x nranks 8 cudaDev 3 busId 4e000 commId 0x9f2c - Init "
       "COMPLETE",
       Match::kMalformed, 0, 0, 0, "", ""},
      {"g:1:1 [3] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 3 busId 4e000 commId 0x9f2c - Init "
       "START",
       Match::kNo, 0, 0, 0, "", ""},
      // NCCL 2.21 and later name the call first; a split communicator's line holds its parent,
      // colour and key, and from 2.23 on no commId.
      {"g:1:1 [3] NCCL INFO ncclCommInitRank comm 0x5581 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId "
       "4e000 commId 0x9f2c - Init COMPLETE",
       Match::kYes, 3, 8, 3, "4e000", "0x9f2c"},
      {"g:1:1 [3] NCCL INFO ncclCommInitRankConfig comm 0x5581 rank 3 nranks 8 cudaDev 3 nvmlDev 3 "
       "busId 4e000 commId 0x9f2c - Init COMPLETE",
       Match::kYes, 3, 8, 3, "4e000", "0x9f2c"},
      {"g:1:1 [3] NCCL INFO ncclCommSplit comm 0x5590 rank 1 nranks 4 cudaDev 3 nvmlDev 3 busId "
       "4e000 parent 0x5581 color 7 key 3 commId 0x7a1e - Init COMPLETE",
       Match::kYes, 1, 4, 3, "4e000", "0x7a1e"},
      {"g:1:1 [3] NCCL INFO ncclCommSplit comm 0x5590 rank 1 nranks 4 cudaDev 3 nvmlDev 3 busId "
       "4e000 parent 0x5581 splitCount 1 color 7 key 3 - Init COMPLETE",
       Match::kMalformed, 0, 0, 0, "", ""},
      {"g:1:1 [3] NCCL INFO ncclCommInitRank: comm 0x5581 rank 3 nranks 8 cudaDev 3 busId 4e000 "
       "commId 0x9f2c - Init COMPLETE",  // not NCCL's shape: a colon after the call
       Match::kNo, 0, 0, 0, "", ""},
  };
  for (const Case& c : cases) {
    CommInitFields f;
    const Match m = ParseCommInit(c.line, &f);
    ASSERT_EQ(m, c.match) << c.line;
    if (m != Match::kYes) continue;
    EXPECT_EQ(f.comm_rank, c.rank) << c.line;
    EXPECT_EQ(f.nranks, c.nranks) << c.line;
    EXPECT_EQ(f.cuda_dev, c.dev) << c.line;
    EXPECT_EQ(f.bus_id, c.bus) << c.line;
    EXPECT_EQ(f.comm_id, c.id) << c.line;
  }
}

TEST(Lines, MaskSignatureAgreesWithTheByteLoop) {
  std::uint64_t state = 42;
  const auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull, state >> 33; };
  const std::string alphabet = "abcxXfF /:=()[]0123456789\xff\x80\t";
  for (int k = 0; k < 3000; ++k) {
    std::string text(next() % 600, ' ');
    // Long plain runs, and runs dense with digits and hex ids, across the 240-byte cap.
    const std::size_t spread = 1 + next() % alphabet.size();
    for (char& c : text) c = next() % 4 == 0 ? alphabet[next() % spread] : static_cast<char>('a' + next() % 26);
    if (k % 7 == 0 && text.size() > 2) text.replace(next() % (text.size() - 1), 2, "0x");
    SCOPED_TRACE(text);
    EXPECT_EQ(MaskSignature(text), MaskSignatureByBytes(text));
    SignatureBuffer buffer;
    EXPECT_EQ(MaskSignature(std::string_view(text), &buffer), MaskSignatureByBytes(text));
  }
  EXPECT_EQ(MaskSignature(std::string(300, 'a') + "123"), std::string(kMaxSignature, 'a'));
  EXPECT_EQ(MaskSignature(std::string(239, 'a') + "0x1f tail"), std::string(239, 'a') + "<hex>");
}

// Find skips a key's leading spaces in its search; where it finds a key is where find does.
TEST(Lines, FindAgreesWithStringViewFind) {
  const std::string_view texts[] = {
      "",
      " ",
      "  rank 3 nranks 8",
      "a rank  rank 9 ",
      "rank",
      " rank",
      "x  rank",
      "   ",
      "gpu-1:2:3 [0] NCCL INFO comm 0x1 rank 4 nranks 8 cudaDev 0 commId 0x2"};
  const std::string_view keys[] = {" rank ", " rank",    "  rank",   "rank", " ",
                                   "  ",     " nranks ", " commId ", "x"};
  for (std::string_view text : texts) {
    for (std::string_view key : keys) {
      for (std::size_t from = 0; from <= text.size() + 1; ++from) {
        EXPECT_EQ(Find(text, key, from), text.find(key, from))
            << '"' << text << "\" \"" << key << "\" " << from;
      }
    }
  }
}

// The same on random texts dense in spaces, every start, keys of up to 6 bytes.
TEST(Lines, FindAgreesWithStringViewFindOnRandomTexts) {
  std::mt19937 rng(29);
  const std::string_view alphabet = "  ab";  // spaces common, as between a line's words
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int round = 0; round < 400; ++round) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 70)(rng), ' ');
    for (char& c : text) c = alphabet[pick(rng)];
    std::string key(std::uniform_int_distribution<std::size_t>(0, 6)(rng), ' ');
    for (char& c : key) c = alphabet[pick(rng)];
    for (std::size_t from = 0; from <= text.size() + 1; ++from) {
      ASSERT_EQ(Find(text, key, from), std::string_view(text).find(key, from))
          << '"' << text << "\" \"" << key << "\" " << from;
    }
  }
}

// Scanner::Token reads 16 bytes a step while 16 are left: it stops where a byte-by-byte reading
// stops, for one stop or several, from every start of random texts longer and shorter than a step.
TEST(Lines, TokenStopsWhereAByteLoopStops) {
  std::mt19937 rng(29);
  const std::string_view alphabet = "abcdefgh: []/()";
  const std::string_view stop_sets[] = {" ", ":", ": []()", "/ []", " :[]()", "0123456789]", "xyz"};
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int round = 0; round < 300; ++round) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 90)(rng), ' ');
    for (char& c : text) c = alphabet[pick(rng)];
    for (std::string_view stops : stop_sets) {
      for (std::size_t from = 0; from <= text.size(); ++from) {
        std::size_t end = from;
        while (end < text.size() && stops.find(text[end]) == std::string_view::npos) ++end;
        Scanner s(text);
        s.Skip(from);
        ASSERT_EQ(s.Token(stops), std::string_view(text).substr(from, end - from))
            << '"' << text << "\" \"" << stops << "\" " << from;
        ASSERT_EQ(s.pos(), end);
      }
    }
  }
}

// ScanTimeOfDay reads `hh:mm:ss` as one word where 8 bytes are left, and 8 fraction digits as
// another: what a reading field by field gives (the answer, the time, where the scanner ends),
// on random texts dense in digits, colons and fraction marks, from every start.
TEST(Lines, TimeOfDayReadsWhatAFieldByFieldReadingReads) {
  const auto by_fields = [](Scanner* s, TimeNs* out) {
    Scanner t = *s;
    std::int64_t h, m, sec, frac = 0;
    if (!t.Digits(2, 2, &h) || !t.Char(':') || !t.Digits(2, 2, &m) || !t.Char(':') ||
        !t.Digits(2, 2, &sec) || h > 23 || m > 59 || sec > 60) {
      return false;
    }
    if ((t.Peek() == '.' || t.Peek() == ',') && IsDigit(t.Peek(1))) {
      t.Skip(1);
      int n = 0;
      for (; n < 9 && IsDigit(t.Peek()); ++n) frac = frac * 10 + (t.Peek() - '0'), t.Skip(1);
      while (IsDigit(t.Peek())) t.Skip(1);
      for (; n < 9; ++n) frac *= 10;
    }
    *out = ((h * 60 + m) * 60 + sec) * kNsPerSec + frac;
    *s = t;
    return true;
  };
  std::mt19937 rng(7);
  const std::string_view alphabet = "0123456789012345:::.,a ";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  int read = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 24)(rng), ' ');
    for (char& c : text) c = alphabet[pick(rng)];
    if (round % 3 != 0 && text.size() >= 8) {  // a clock at a random place, to be read often
      const std::size_t at = rng() % (text.size() - 7);
      char clock[9];
      std::snprintf(clock, sizeof clock, "%02u:%02u:%02u", static_cast<unsigned>(rng() % 26),
                    static_cast<unsigned>(rng() % 62), static_cast<unsigned>(rng() % 62));
      text.replace(at, 8, clock);
      if (round % 2 == 0) {  // a fraction of 0-12 digits, a letter among them now and then
        std::string fraction(1, rng() % 4 == 0 ? ',' : '.');
        for (std::size_t k = rng() % 13; k > 0; --k)
          fraction += rng() % 15 == 0 ? 'a' : static_cast<char>('0' + rng() % 10);
        text.insert(at + 8, fraction);
      }
    }
    for (std::size_t from = 0; from <= text.size(); ++from) {
      Scanner a(text), b(text);
      a.Skip(from), b.Skip(from);
      TimeNs ta = -1, tb = -1;
      const bool ra = ScanTimeOfDay(&a, &ta), rb = by_fields(&b, &tb);
      ASSERT_EQ(ra, rb) << '"' << text << "\" " << from;
      ASSERT_EQ(a.pos(), b.pos()) << '"' << text << "\" " << from;
      if (ra) {
        ASSERT_EQ(ta, tb) << '"' << text << "\" " << from;
      }
      read += ra ? 1 : 0;
    }
  }
  EXPECT_GT(read, 500);
}

TEST(Lines, StringTableInternsEveryLengthApart) {
  StringTable table;
  std::vector<std::string> texts;
  for (std::size_t n = 0; n <= 40; ++n) {
    texts.push_back(std::string(n, 'q'));
    if (n > 0) texts.push_back(std::string(n - 1, 'q') + 'r');
    if (n > 1) texts.push_back('r' + std::string(n - 1, 'q'));
  }
  std::vector<StrId> ids;
  for (const std::string& t : texts) ids.push_back(table.Intern(t));
  EXPECT_EQ(table.size(), texts.size());  // "" is id 0 and is texts[0]
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(table.Intern(texts[i]), ids[i]);
    EXPECT_EQ(table.Get(ids[i]), texts[i]);
  }
  EXPECT_EQ(ids[0], kNoStr);
}

TEST(Lines, StringTableAbsorbsAnotherAsInterningEachWould) {
  StringTable into, expected;
  for (const char* t : {"ALLREDUCE", "gpu-0001", "a fairly long masked signature <n> that goes past one word"}) {
    into.Intern(t), expected.Intern(t);
  }
  std::vector<StrId> remap;
  {
    StringTable from;
    for (const char* t : {"gpu-0002", "ALLREDUCE", "", "another long text, unique to this chunk: [PG <n> Rank <n>]"}) {
      from.Intern(t);
    }
    std::vector<StrId> want(from.size());
    for (StrId id = 0; id < from.size(); ++id) want[id] = expected.Intern(from.Get(id));
    remap = into.Absorb(std::move(from));
    EXPECT_EQ(remap, want);
  }  // `from` is gone: the absorbed text lives on in `into`
  ASSERT_EQ(into.size(), expected.size());
  for (StrId id = 0; id < into.size(); ++id) EXPECT_EQ(into.Get(id), expected.Get(id));
  EXPECT_EQ(into.Intern("gpu-0002"), remap[1]);
  StringTable moved = std::move(into);
  ASSERT_EQ(remap.size(), 4u);  // "" was id 0 already
  EXPECT_EQ(moved.Get(remap[3]), "another long text, unique to this chunk: [PG <n> Rank <n>]");
}

// Absorbing a larger table keeps that table's storage and renumbers it (StringTable::Adopt): the
// ids are still those of interning each string in turn, whichever table is larger, whatever the
// overlap, and across the slot table's growth.
TEST(Lines, StringTableAbsorbsALargerTableWithTheSameIds) {
  const auto text = [](int k) {
    return "string " + std::to_string(k) + (k % 7 == 0 ? " with a longer tail" : "");
  };
  for (const auto& [into_size, from_size, overlap] : {std::tuple{3, 10, 1},
                                                      {20, 21, 20},
                                                      {100, 5000, 50},
                                                      {1000, 1500, 0},
                                                      {31, 5000, 31},
                                                      {2, 100000, 1}}) {
    StringTable into, expected, from;
    for (int k = 0; k < into_size; ++k) into.Intern(text(k)), expected.Intern(text(k));
    // from's strings: the last `overlap` of into's, interleaved with new ones, and the empty one
    std::vector<std::string> from_texts;
    for (int k = 0; k < from_size; ++k) {
      from_texts.push_back(k < overlap ? text(into_size - 1 - k) : text(1'000'000 + k));
    }
    std::swap(from_texts[0], from_texts[from_texts.size() / 2]);
    from.Intern("x"), from.Intern("");
    for (const std::string& t : from_texts) from.Intern(t);
    std::vector<StrId> want(from.size());
    for (StrId id = 0; id < from.size(); ++id) want[id] = expected.Intern(from.Get(id));
    const std::vector<StrId> remap = into.Absorb(std::move(from));
    ASSERT_EQ(remap, want) << into_size << " into, " << from_size << " from";
    ASSERT_EQ(into.size(), expected.size());
    for (StrId id = 0; id < into.size(); ++id) ASSERT_EQ(into.Get(id), expected.Get(id));
    for (StrId id = 0; id < into.size(); ++id)
      ASSERT_EQ(into.Intern(expected.Get(id)), id);  // every one found
    EXPECT_EQ(into.Intern("one more"), expected.Intern("one more"));
    EXPECT_EQ(into.size(), expected.size());
  }
}

// The `[rank<G>]:` ranks a file holds come out sorted and once each (a bit per rank, across the
// 64-bit words), and a rank's last watchdog timeout stays open to its status line while other
// ranks' blocks interleave with it.
TEST(LogParser, PrefixRanksAreSortedOnceEachAndInterleavedWatchdogsFindTheirStatus) {
  std::string text;
  for (int rank : {130, 5, 64, 63, 0, 5, 4194303, 64, 130}) {
    text += "[rank" + std::to_string(rank) + "]:frame #1: c10d::ProcessGroupNCCL::watchdogHandler()\n";
  }
  for (int rank : {70, 3}) {
    text += "[rank" + std::to_string(rank) + "]:[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:607] [PG 5 (DATA_PARALLEL_GROUP) "
            "Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(rank) +
            ", OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
  }
  for (int rank : {3, 70}) {
    text += "[rank" + std::to_string(rank) + "]:[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:1664] [PG 5 (DATA_PARALLEL_GROUP) "
            "Rank 1] Exception (either an error or timeout) detected by watchdog at work: " + std::to_string(rank) +
            ", last enqueued NCCL work: " + std::to_string(rank) + ", last completed NCCL work: " + std::to_string(rank - 1) + ".\n";
  }
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = SniffPrefixes(text)});
  EXPECT_EQ(log.prefix_ranks, (std::vector<std::int32_t>{0, 3, 5, 63, 64, 70, 130, 4194303}));
  ASSERT_EQ(log.events.size(), 2u);
  for (const Event& e : log.events) {
    const auto& w = std::get<WatchdogTimeout>(e.detail);
    EXPECT_EQ(w.seq, e.rank);
    EXPECT_EQ(w.last_enqueued, e.rank);
    EXPECT_EQ(w.last_completed, e.rank - 1);
  }
  EXPECT_EQ(log.open_watchdogs, (std::vector<std::pair<std::int32_t, std::size_t>>{{3, 1}, {70, 0}}));
}

TEST(LogParser, WatchdogBlockIsOneEventWithItsStatus) {
  const std::string text =
      "[rank9]:[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:607] [PG 5 (DATA_PARALLEL_GROUP) Rank 1] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
      "ran for 600100 milliseconds before timing out.\n"
      "[rank9]:[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:1664] [PG 5 (DATA_PARALLEL_GROUP) Rank 1] Exception (either "
      "an error or timeout) detected by watchdog at work: 21, last enqueued NCCL work: 21, last completed NCCL work: 20.\n"
      "[rank9]:[E302 09:27:14.123456789 ProcessGroupNCCL.cpp:1515] [PG 5 (DATA_PARALLEL_GROUP) Rank 1] Process group "
      "watchdog thread terminated with exception: [PG 5 (DATA_PARALLEL_GROUP) Rank 1] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
      "600100 milliseconds before timing out.\n"
      "  what():  [PG 5 (DATA_PARALLEL_GROUP) Rank 1] Process group watchdog thread terminated with exception: x\n"
      "[rank9]:[E302 garbage\n";
  const ParsedLog log = ParseLog(text, 0, 9);
  // The timeout (with its status line), then the watchdog's termination and the abort's what().
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[1].kind, Kind::kWatchdogTerminated);
  EXPECT_EQ(log.events[2].kind, Kind::kWatchdogTerminated);
  const Event& e = log.events[0];
  EXPECT_EQ(e.family, Family::kNcclWatchdog);
  EXPECT_EQ(e.kind, Kind::kWatchdogTimeout);
  EXPECT_EQ(e.rank, 9);
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.offset, 0u);
  const auto& w = std::get<WatchdogTimeout>(e.detail);
  EXPECT_EQ(log.strings.Get(w.pg), "5");
  EXPECT_EQ(log.strings.Get(w.pg_desc), "DATA_PARALLEL_GROUP");
  EXPECT_EQ(w.group_rank, 1);
  EXPECT_EQ(w.seq, 21);
  EXPECT_EQ(w.last_enqueued, 21);
  EXPECT_EQ(w.last_completed, 20);
  EXPECT_EQ(log.lines, 5);
  EXPECT_EQ(log.malformed, 1);
  EXPECT_EQ(log.prefix_ranks, std::vector<std::int32_t>{9});
}

// libstdc++'s abort line and c10's backtrace are read past; the same shapes with a message after
// them (a paste that collapsed the lines) are read, and the message behind them is found.
TEST(LogParser, AnAbortsBacktraceIsReadPastUnlessAMessageFollowsIt) {
  const std::string abort =
      "[rank9]:terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "[rank9]:  what():  [PG 5 (DATA_PARALLEL_GROUP) Rank 1] Process group watchdog thread "
      "terminated with exception: x\n"
      "[rank9]:Exception raised from checkTimeout at "
      "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most "
      "recent call first):\n"
      "[rank9]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 "
      "(0x7f1b02a47897 in "
      "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n"
      "[rank9]:frame #12: <unknown function> + 0x94ac3 (0x7fc19d74aac3 in "
      "/lib/x86_64-linux-gnu/libc.so.6)\n";
  const ParsedLog log = ParseLog(abort, FileContext{.prefixes = SniffPrefixes(abort)});
  ASSERT_EQ(log.events.size(), 1u);  // the what() line's
  EXPECT_EQ(log.events[0].kind, Kind::kWatchdogTerminated);
  EXPECT_EQ(log.events[0].line, 2u);
  EXPECT_EQ(log.prefix_ranks, std::vector<std::int32_t>{9});
  EXPECT_EQ(log.trigger_lines, 4);  // the last frame holds no record trigger
  EXPECT_EQ(log.idle_trigger_lines, 3);
  for (const std::string collapsed :
       {"frame #3: <unknown function> + 0x94ac3 (0x7fc19d74aac3 in /lib/libc.so.6) RuntimeError: "
        "CUDA error: an "
        "illegal memory access was encountered (code 700)\n",
        "terminate called after throwing an instance of 'c10::Error'  what():  CUDA error: an "
        "illegal memory access "
        "was encountered\n",
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 "
        "(most recent call "
        "first): RuntimeError: CUDA error: an illegal memory access was encountered\n"}) {
    const ParsedLog read = ParseLog(collapsed, FileContext{.prefixes = SniffPrefixes(collapsed)});
    ASSERT_EQ(read.events.size(), 1u) << collapsed;
    EXPECT_EQ(read.events[0].kind, Kind::kCudaError) << collapsed;
  }
}

TEST(LogParser, ChildFailedErrorTableEntriesCiteTheirRankLine) {
  const std::string text =
      "E0302 09:17:03.512000 139872 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -9) "
      "local_rank: 3 (pid: 31243) of binary: /usr/bin/python3\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "============================================================\n"
      "train.py FAILED\n"
      "------------------------------------------------------------\n"
      "Failures:\n"
      "[1]:\n"
      "  time      : 2026-03-02_09:17:03\n"
      "  host      : gpu-0137\n"
      "  rank      : 1090 (local_rank: 2)\n"
      "  exitcode  : -15 (pid: 31242)\n"
      "------------------------------------------------------------\n"
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "  time      : 2026-03-02_09:17:03\n"
      "  host      : gpu-0137\n"
      "  rank      : 1091 (local_rank: 3)\n"
      "  exitcode  : -9 (pid: 31243)\n"
      "  error_file: <N/A>\n"
      "  traceback : Signal 9 (SIGKILL) received by PID 31243\n"
      "============================================================\n";
  const ParsedLog log = ParseLog(text, 0, -1);
  EXPECT_TRUE(log.agent);
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(std::get<WorkerFailed>(log.events[0].detail).local_rank, 3);
  const auto& other = std::get<FailureEntry>(log.events[1].detail);
  EXPECT_FALSE(other.root_cause);
  EXPECT_EQ(log.events[1].rank, 1090);
  EXPECT_EQ(other.exit_code, -15);
  const auto& root = std::get<FailureEntry>(log.events[2].detail);
  EXPECT_TRUE(root.root_cause);
  EXPECT_EQ(log.events[2].rank, 1091);
  EXPECT_EQ(log.events[2].line, 17u);
  EXPECT_EQ(root.exit_code, -9);
  EXPECT_EQ(root.pid, 31243);
  EXPECT_EQ(log.strings.Get(root.host), "gpu-0137");
  EXPECT_EQ(log.events[2].time, At("2026-03-02T09:17:03Z"));
  EXPECT_EQ(log.malformed, 0);
}

// A collector that trims its lines (Loki's `logcli query`) leaves the entries' fields unindented:
// they are read as the table's fields (torchrun's names only, and only inside an entry).
TEST(LogParser, ChildFailedErrorTableWithItsLinesTrimmedIsReadTheSame) {
  const std::string text =
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
      "============================================================\n"
      "train.py FAILED\n"
      "------------------------------------------------------------\n"
      "Failures:\n"
      "<NO_OTHER_FAILURES>\n"
      "------------------------------------------------------------\n"
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "time      : 2026-03-02_09:17:03\n"
      "host      : gpu-0137\n"
      "rank      : 1091 (local_rank: 3)\n"
      "exitcode  : -9 (pid: 31243)\n"
      "error_file: <N/A>\n"
      "traceback : Signal 9 (SIGKILL) received by PID 31243\n"
      "============================================================\n"
      "rank      : 7 (local_rank: 7)\n";  // after the table: no field of it
  const ParsedLog log = ParseLog(text, 0, -1);
  ASSERT_EQ(log.events.size(), 1u);
  const auto& root = std::get<FailureEntry>(log.events[0].detail);
  EXPECT_TRUE(root.root_cause);
  EXPECT_EQ(log.events[0].rank, 1091);
  EXPECT_EQ(root.local_rank, 3);
  EXPECT_EQ(root.exit_code, -9);
  EXPECT_EQ(log.strings.Get(root.host), "gpu-0137");
  EXPECT_EQ(log.events[0].time, At("2026-03-02T09:17:03Z"));
  EXPECT_EQ(log.malformed, 0);
}

TEST(LogParser, FixtureStampsMatchTheContract) {
  const TimeNs t = At("2026-10-16T09:27:14.123456789Z");
  EXPECT_EQ(testing::C10Stamp('E', t), "E1016 09:27:14.123456789");
  EXPECT_EQ(testing::C10Stamp('E', At("2026-03-02T09:27:14.1Z")), "E302 09:27:14.100000000");
  EXPECT_EQ(testing::GlogStamp('W', At("2026-03-02T09:17:03.412Z")), "W0302 09:17:03.412000");
  EXPECT_EQ(testing::TableStamp(t), "2026-10-16_09:27:14");
}

// A log cut right after a four-byte last line ("done", no newline), read from a buffer that
// ends with it: the header parser reads no byte past the line. Only the sanitizer run of the
// unit tests (docs/testing.md) sees a read past the end; here it must also stay a plain line.
TEST(Lines, AFourByteLastLineIsReadWithinItsBytes) {
  for (const std::string_view last : {"done", "Marc", "gpu-"}) {
    const std::vector<char> bytes(last.begin(), last.end());  // exactly the line, nothing after
    const std::string_view line(bytes.data(), bytes.size());
    Header h;
    EXPECT_EQ(ParseHeader(line, &h), Match::kNo) << last;
    EXPECT_EQ(h.message, line);
  }
  const std::string text = "[rank0]: step 7 done\ndone";
  const std::vector<char> file(text.begin(), text.end());
  const ParsedLog log = ParseLog(std::string_view(file.data(), file.size()), FileContext{});
  EXPECT_EQ(log.lines, 2u);
}

}  // namespace
}  // namespace denpex::engine
