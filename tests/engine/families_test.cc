// The family recognisers on the real line shapes of each version in
// docs/log_formats.md, through the per-file parser (so prefixes, headers
// and multi-line joins are exercised as in a real log).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/chunks.h"
#include "parse/families.h"
#include "parse/parse_log.h"
#include "parse/recognisers.h"

namespace denpex::engine {
namespace {

ParsedLog Parse(const std::string& text, bool kernel = false) {
  return ParseLog(text, FileContext{.kernel = kernel, .prefixes = SniffPrefixes(text)});
}

struct Case {
  const char* line;
  Family family;
  Kind kind;
};

void ExpectEach(const std::vector<Case>& cases, bool kernel = false) {
  for (const Case& c : cases) {
    const ParsedLog log = Parse(std::string(c.line) + "\n", kernel);
    ASSERT_EQ(log.events.size(), 1u) << c.line;
    EXPECT_EQ(FamilyName(log.events[0].family), FamilyName(c.family)) << c.line;
    EXPECT_EQ(KindName(log.events[0].kind), KindName(c.kind)) << c.line;
  }
}

template <typename T>
const T& Only(const ParsedLog& log) {
  EXPECT_EQ(log.events.size(), 1u);
  return std::get<T>(log.events.at(0).detail);
}

TEST(Families, WatchdogTimeoutOfEachTorchVersion) {
  constexpr const char* kLines[] = {
      // 2.4 with a description, 2.3 without, 2.5+ GUID, sub-group without description, empty name
      "[rank7]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [PG 0 (default_pg) Rank 7] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=86, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) "
      "ran for 600104 milliseconds before timing out.",
      "[rank4]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [PG 5 Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=86, OpType=_ALLGATHER_BASE, NumelIn=4, NumelOut=32, Timeout(ms)=600000) ran for 600104 "
      "milliseconds before timing out.",
      "[rank1]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=86, OpType=BROADCAST, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran "
      "for 600104 milliseconds before timing out.",
      "[rank13]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:616] [PG ID 11 PG GUID 119 Rank 1] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=86, OpType=RECV, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for "
      "600104 milliseconds before timing out.",
      "[rank1]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:616] [PG  Rank 1] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=86, OpType=ALLTOALL_BASE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600104 "
      "milliseconds before timing out.",
      // torch 1.13: no time, no rank prefix, no Numel fields; older still: no SeqNum
      "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=86, "
      "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800163 milliseconds before timing out.",
      "[E ProcessGroupNCCL.cpp:587] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
      "Timeout(ms)=1800000) ran for 1800163 milliseconds before timing out.",
  };
  for (const char* line : kLines) {
    const ParsedLog log = Parse(std::string(line) + "\n");
    const auto& w = Only<WatchdogTimeout>(log);
    EXPECT_EQ(log.events[0].kind, Kind::kWatchdogTimeout) << line;
    EXPECT_GE(w.group_rank, 0) << line;
    EXPECT_FALSE(log.strings.Get(w.op).empty()) << line;
    EXPECT_GT(w.timeout_ms, 0) << line;
  }
  const ParsedLog log = Parse(std::string(kLines[3]) + "\n");
  const auto& w = Only<WatchdogTimeout>(log);
  EXPECT_EQ(log.events[0].rank, 13);  // global rank from [rank13]
  EXPECT_EQ(w.group_rank, 1);         // process-group rank from [... Rank 1]
  EXPECT_EQ(log.strings.Get(w.pg), "119");
  EXPECT_EQ(w.numel_in, 4);
}

TEST(Families, WatchdogStatusLineOfEachVersionJoinsTheTimeout) {
  const std::string timeout =
      "[rank1]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=86, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, "
      "Timeout(ms)=600000) ran for 600104 milliseconds before timing out.\n";
  for (const char* status :
       {"[rank1]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an "
        "error or timeout) detected by watchdog at work: 86, last enqueued NCCL work: 86, last completed NCCL work: 85.",
        "[rank1]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by "
        "watchdog at work sequence id: 86 PG status: last enqueued work: 86, last completed work: 85",
        "[rank1]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL "
        "work: 86, last enqueued NCCL work: 86, last completed NCCL work: 85."}) {
    const ParsedLog log = Parse(timeout + status + "\n");
    const auto& w = Only<WatchdogTimeout>(log);
    EXPECT_EQ(w.last_enqueued, 86) << status;
    EXPECT_EQ(w.last_completed, 85) << status;
  }
}

TEST(Families, OtherWatchdogMessages) {
  ExpectEach({
      {"[rank0]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [Rank 0] Work WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
       "Timeout(ms)=60000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).",
       Family::kNcclWatchdog, Kind::kBlockingWaitTimeout},
      {"[rank0]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [PG 0 Rank 0] Heartbeat monitor timed out! Process will be "
       "terminated after dumping debug info. workMetaList_.size()=2",
       Family::kNcclWatchdog, Kind::kHeartbeatTimeout},
      {"[rank1]:[F1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [PG 0 Rank 1] [PG 0 Rank 1] ProcessGroupNCCL's watchdog got "
       "stuck for 480 seconds without making progress in monitoring enqueued collectives.",
       Family::kNcclWatchdog, Kind::kWatchdogStuck},
      {"[rank5]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [PG 0 Rank 5] Received a dump signal due to a collective "
       "timeout from  rank 34 and we will try our best to dump the debug info.",
       Family::kNcclWatchdog, Kind::kDumpSignal},
      {"[rank5]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [PG 0 Rank 5] Process group watchdog thread terminated with "
       "exception: CUDA error: unspecified launch failure",
       Family::kCuda, Kind::kCudaError},
      {"[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
       "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we "
       "are taking the entire process down.",
       Family::kNcclWatchdog, Kind::kTakingDown},
  });
  const ParsedLog log = Parse(
      "[rank5]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [PG 0 Rank 5] Received a dump signal due to a collective "
      "timeout from  rank 34 and we will try our best to dump the debug info.\n");
  EXPECT_EQ(Only<WatchdogNote>(log).from_rank, 34);
}

// A diagnosis's parse (Texts::kAnalysed) leaves out the texts only `denpex events` shows, unique
// per rank in a job's abort: a watchdog note's message and a watchdog error's `what():`. Every
// other field of their events, and every other error's message, is as in a parse of every text.
TEST(Families, AnAnalysedParseLeavesOutOnlyTheTextsThatAreShown) {
  const std::string timeout =
      "[PG 0 Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
      "OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600057 milliseconds "
      "before timing out.";
  std::string text;
  for (const std::string& line : {
           "[rank3]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:1] [PG 0 Rank 3] Process group watchdog "
           "thread terminated with exception: " +
               timeout,
           std::string("terminate called after throwing an instance of 'c10::DistBackendError'"),
           "  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception: " +
               timeout,
           std::string("terminate called after throwing an instance of 'c10::Error'"),
           std::string("  what():  CUDA error: an illegal memory access was encountered"),
       }) {
    text += line + "\n";
  }
  const ParsedLog all = ParseLog(text, FileContext{.prefixes = SniffPrefixes(text)});
  const ParsedLog analysed =
      ParseLog(text, FileContext{.prefixes = SniffPrefixes(text), .texts = Texts::kAnalysed});
  ASSERT_EQ(all.events.size(), 4u);  // the `what():` quotes a timeout: an event of its own too
  ASSERT_EQ(analysed.events.size(), all.events.size());
  const auto message = [](const ParsedLog& log, std::size_t i) {
    return std::get<PythonError>(log.events[i].detail).message;
  };

  EXPECT_EQ(KindName(all.events[0].kind), "watchdog_terminated");
  EXPECT_TRUE(all.strings.Get(std::get<WatchdogNote>(all.events[0].detail).text)
                  .starts_with("Process group watchdog"));
  EXPECT_EQ(std::get<WatchdogNote>(analysed.events[0].detail).text, kNoStr);
  EXPECT_EQ(FamilyName(all.events[1].family), "nccl_watchdog");
  EXPECT_TRUE(all.strings.Get(message(all, 1)).starts_with("[PG 0 Rank 3] Process group watchdog"));
  EXPECT_EQ(message(analysed, 1), kNoStr);
  EXPECT_EQ(KindName(all.events[2].kind), "watchdog_timeout");
  EXPECT_EQ(FamilyName(analysed.events[3].family), "cuda");
  EXPECT_EQ(analysed.strings.Get(message(analysed, 3)),
            "CUDA error: an illegal memory access was encountered");
  for (std::size_t i = 0; i < all.events.size(); ++i) {
    const Event &a = all.events[i], &b = analysed.events[i];
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.line, b.line) << i;
    EXPECT_EQ(a.time, b.time) << i;
    EXPECT_EQ(a.rank, b.rank) << i;
    EXPECT_EQ(all.strings.Get(a.signature), analysed.strings.Get(b.signature)) << i;
  }
  EXPECT_EQ(analysed.strings.size() + 2, all.strings.size());
}

// The async-error-handling, blocking-wait and heartbeat-monitor shapes of each torch profile
// (docs/log_formats.md §3), as the simulator prints them and as users pasted them.
TEST(Families, AsyncErrorHandlingBlockingWaitAndHeartbeatShapes) {
  ExpectEach({
      // torch 2.6: no suffix after "blocking wait".
      {"[rank0]:[E302 09:10:22.441917925 ProcessGroupNCCL.cpp:712] [PG ID 81 PG GUID 81(DATA_PARALLEL_GROUP) Rank 0] "
       "Work WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=40000000, NumelOut=40000000, Timeout(ms)=600000) timed out "
       "in blocking wait.",
       Family::kNcclWatchdog, Kind::kBlockingWaitTimeout},
      // torch 1.13 / 2.1: `[Rank r]` and the old variable name.
      {"[E ProcessGroupNCCL.cpp:460] [Rank 3] Work WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) timed out "
       "in blocking wait (NCCL_BLOCKING_WAIT=1).",
       Family::kNcclWatchdog, Kind::kBlockingWaitTimeout},
      {"[rank0]:[E302 09:25:45.051337557 ProcessGroupNCCL.cpp:1417] [PG 81 (DATA_PARALLEL_GROUP) Rank 0] First PG on "
       "this rank that detected no heartbeat of its watchdog.",
       Family::kNcclWatchdog, Kind::kHeartbeatTimeout},
      {"[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated "
       "after dumping debug info. workMetaList_.size()=2",
       Family::kNcclWatchdog, Kind::kHeartbeatTimeout},
      {"[rank0]:[F302 09:25:45.071507557 ProcessGroupNCCL.cpp:1347] [PG ID 81 PG GUID 81(DATA_PARALLEL_GROUP) Rank 0] "
       "[PG ID 81 PG GUID 81(DATA_PARALLEL_GROUP) Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds "
       "without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API "
       "(e.g., CudaEventDestroy) hang blocking the watchdog. workMetaList_.size() = 1",
       Family::kNcclWatchdog, Kind::kWatchdogStuck},
      {"[rank1]:[E703 21:51:54.112297123 ProcessGroupNCCL.cpp:1922] [PG ID 0 PG GUID 0(default_pg) Rank 1] Observed "
       "flight recorder dump signal from another rank via TCPStore.",
       Family::kNcclWatchdog, Kind::kDumpSignal},
      // Mode 2: the main thread's next NCCL call on the aborted communicator.
      {"[rank0]: torch.distributed.DistBackendError: NCCL communicator was aborted on rank 0.  Original reason for "
       "failure was: [PG 81 (DATA_PARALLEL_GROUP) Rank 0] Watchdog caught collective operation timeout: "
       "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=40000000, NumelOut=40000000, Timeout(ms)=600000) ran for "
       "600093 milliseconds before timing out.",
       Family::kNcclWatchdog, Kind::kWatchdogTerminated},
      {"RuntimeError: NCCL communicator was aborted on rank 2.",
       Family::kNccl, Kind::kNcclError},
  });
  // The first detector named by a dump signal is kept as a field, and the line is no error.
  const ParsedLog log = Parse(
      "[rank6]:[E703 21:51:54.112142364 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 6] Received a "
      "dump signal due to a collective timeout from  rank 7 and we will try our best to dump the debug info. Last "
      "enqueued NCCL work: 56116, last completed NCCL work: 56116.This is most likely caused by incorrect usages of "
      "collectives, e.g., wrong sizes used across ranks.\n");
  EXPECT_EQ(Only<WatchdogNote>(log).from_rank, 7);
  EXPECT_EQ(log.events[0].signature, kNoStr);
}

// srun relays output in pieces: task 100's whole line lands inside task 423's, whose tail
// comes next with its own label (docs/log_formats.md §1c). Task 423's head, task 100's line
// after its label, task 423's tail.
constexpr std::string_view kCutHead =
    " 423: [rank423]:[E302 09:10:22.380742497 ProcessGroupNCCL.cpp:607] "
    "[PG 12 (TENSOR_MODEL_PARALLEL_GROUP) Rank 1] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpT";
constexpr std::string_view kWholeLine =
    "[rank100]:[E302 09:10:22.381004211 ProcessGroupNCCL.cpp:607] "
    "[PG 5 (TENSOR_MODEL_PARALLEL_GROUP) Rank 0] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
    "NumelIn=5, NumelOut=5, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.\n";
constexpr std::string_view kCutTail =
    " 423: ype=ALLREDUCE, NumelIn=5, NumelOut=5, Timeout(ms)=600000) "
    "ran for 600046 milliseconds before timing out.\n";

// Each line goes to its own rank.
TEST(Families, SrunInterleavedLineIsSplitByItsLabelAndRejoined) {
  ParsedLog log =
      Parse(std::string(kCutHead) + " 100: " + std::string(kWholeLine) + std::string(kCutTail));
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].rank, 100);
  EXPECT_EQ(std::get<WatchdogTimeout>(log.events[0].detail).ran_for_ms, 600045);
  EXPECT_EQ(log.events[1].rank, 423);
  EXPECT_EQ(std::get<WatchdogTimeout>(log.events[1].detail).ran_for_ms, 600046);
  EXPECT_EQ(log.events[1].line, 1u);  // cited where its head is
  EXPECT_EQ(log.interleaved, 1);
  EXPECT_EQ(log.malformed, 0);

  // The tail never comes (the next line is another task's): the head is counted, never read
  // as task 423's or task 100's.
  log =
      Parse(std::string(kCutHead) + " 100: " + std::string(kWholeLine) + " 512: [rank512]: done\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].rank, 100);
  EXPECT_EQ(log.malformed, 1);
  EXPECT_EQ(log.interleaved, 0);
}

// A terminal copy's colour codes: the label colon of the second task's line (`100<ESC>[0m: `)
// is one only once they are read past, so what the trigger scan saw of the raw line does not
// spare the search for it (past the file's opening lines, each read on its own, where the scan
// runs).
TEST(Families, SrunInterleavedLabelBehindAColourCodeIsFound) {
  std::string opening;
  for (std::uint32_t i = 0; i <= kOpeningLines; ++i)
    opening += " 423: step " + std::to_string(i) + "\n";
  const ParsedLog log = Parse(opening + std::string(kCutHead) +
                              " 100\x1b[0m: " + std::string(kWholeLine) + std::string(kCutTail));
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].rank, 100);
  EXPECT_EQ(log.events[1].rank, 423);
  EXPECT_EQ(log.interleaved, 1);
  EXPECT_EQ(log.malformed, 0);
}

// srun's combined output: progress lines carry a task label and no rank yet. Each task keeps its
// own latest progress event (two tasks' lines never collapse into one, the last task's).
TEST(Families, SrunLabelledProgressLinesStayOneEventPerTask) {
  std::string text;
  for (int step = 1; step <= 3; ++step) {
    for (int task = 0; task < 3; ++task) {
      text += std::to_string(task) + ": 2026-11-29 16:25:4" + std::to_string(step) + ".497 rank=" + std::to_string(task) +
              " step=" + std::to_string(step) + "/20 loss=5.8 data_ms=" + (task == 1 ? "200.0" : "0.1") + " step_ms=259.3\n";
    }
    for (int task : {3, 1}) {
      text += std::to_string(task) + ":  [2026-11-29 16:25:4" + std::to_string(step) + "] iteration        " + std::to_string(step) +
              "/      20 | consumed samples: 100 | elapsed time per iteration (ms): 1000.0 |\n";
    }
  }
  const ParsedLog log = Parse(text);
  std::vector<std::pair<std::int32_t, std::int64_t>> seen;  // (task, iteration) of every progress event
  for (const Event& e : log.events) {
    if (e.kind == Kind::kIteration) seen.emplace_back(e.task, std::get<Iteration>(e.detail).iteration);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 3}, {1, 3}, {1, 3}, {2, 3}, {3, 3}}));
  for (const Event& e : log.events) {
    if (e.task == 1 && std::get<Iteration>(e.detail).data_us > 0) {
      EXPECT_EQ(std::get<Iteration>(e.detail).slow_since, 1);
    }
  }
}

// The embedded label is found wherever the cut falls (the search tests 16 bytes at a time), and
// `key: value` pairs of the head (no digit before the colon) are not labels.
TEST(Families, SrunInterleavedLabelIsFoundAtEveryOffset) {
  const std::string other =
      " 100: [rank100]:[E302 09:10:22.381004211 ProcessGroupNCCL.cpp:607] [PG 5 (TENSOR_MODEL_PARALLEL_GROUP) Rank 0] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=5, NumelOut=5, "
      "Timeout(ms)=600000) ran for 600045 milliseconds before timing out.\n";
  const std::string filler = "consumed samples: 1024 | lm loss: 2.0E+00 | grad norm: 0.02 | x";
  for (std::size_t n = 1; n <= filler.size(); ++n) {
    if (filler[n - 1] == ':') continue;  // `...: 100: ` reads as a source line number (AfterColonAndDigits)
    const std::string head = " 423:  [2026-03-02 08:52:02] " + filler.substr(0, n);
    const ParsedLog log = Parse(head + other + " 423: the rest of it\n");
    ASSERT_EQ(log.events.size(), 1u) << n;
    EXPECT_EQ(log.events[0].rank, 100) << n;
    EXPECT_EQ(log.interleaved, 1) << n;
    EXPECT_EQ(log.malformed, 0) << n;
  }
  // Short lines too (the search takes 32, 16 or 1 byte at a time by length); one-digit labels
  // need a bracket after them.
  for (std::size_t n = 1; n <= 40; ++n) {
    const std::string head = " 7: " + std::string(n, 'x');
    const ParsedLog log = Parse(head + " 3: [x] *** hi\n 7: rest\n");  // `*** `: a record trigger
    EXPECT_EQ(log.interleaved, 1) << n;
    EXPECT_EQ(log.malformed, 0) << n;
  }
}

TEST(Families, HardWrappedWatchdogLineIsJoinedAndABrokenOneCounted) {
  ParsedLog log = Parse(
      "[rank3]:[E302 09:27:14.1 ProcessGroupNCCL.cpp:607] [PG 1 Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=5, NumelOut=5\n"
      "164000, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n");
  const auto& w = Only<WatchdogTimeout>(log);
  EXPECT_EQ(w.numel_out, 5164000);
  EXPECT_EQ(w.ran_for_ms, 600100);
  EXPECT_EQ(log.joined, 1);
  EXPECT_EQ(log.events[0].line, 1u);
  log = Parse(
      "[rank3]:[E302 09:27:14.1 ProcessGroupNCCL.cpp:607] [PG 1 Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=5\n"
      "[rank3]:[E302 09:27:14.1 ProcessGroupNCCL.cpp:621] [PG 1 Rank 3] Some NCCL operations have failed or timed out.\n");
  EXPECT_EQ(log.broken, 1);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(std::get<WatchdogTimeout>(log.events[0].detail).seq, 21);
}

TEST(Families, NcclDebugLinesOf218And221) {
  ExpectEach({
      {"gpu-01:3309:3309 [3] NCCL INFO comm 0x55d0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId "
       "4b000 commId 0x1c2f - Init COMPLETE",
       Family::kNccl, Kind::kCommInit},
      {"gpu-01:3309:3380 [3] NCCL INFO ncclCommInitRank comm 0x55d0 rank 3 nranks 16 cudaDev 3 "
       "nvmlDev 3 busId 4b000 commId 0x1c2f - Init COMPLETE",
       Family::kNccl, Kind::kCommInit},
      {"gpu-01:3309:3381 [3] NCCL INFO ncclCommSplit comm 0x55e0 rank 1 nranks 4 cudaDev 3 nvmlDev "
       "3 busId 4b000 parent 0x55d0 color 2 key 3 commId 0x2d3e - Init COMPLETE",
       Family::kNccl, Kind::kCommInit},
      {"gpu-01:3309:3412 [3] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion with error "
       "12, opcode 0, len 0, vendor err 129",
       Family::kNccl, Kind::kIbCompletionError},
      {"gpu-01:3309:3412 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
       "10.0.0.2<34567> with error 12, opcode 0, len 0, vendor err 129",
       Family::kNccl, Kind::kIbCompletionError},
      {"gpu-01:3309:3412 [3] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer "
       "10.0.0.2<34567> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::1 "
       "remoteGidsfe80::2",
       Family::kNccl, Kind::kIbCompletionError},
      {"gpu-01:3309:3412 [3] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by "
       "remote peer gpu-02<45678>",
       Family::kNccl, Kind::kSocketError},
      {"gpu-01:3309:3309 [1] init.cc:1 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both "
       "on CUDA device 1000",
       Family::kNccl, Kind::kDuplicateGpu},
      {"678c7278cb2d:3309:3309 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
       Family::kCudaOom, Kind::kCudaOom},
      {"[2025-05-12 17:31:38] gpu-01:3309:3309 [0] enqueue.cc:1 NCCL WARN Cuda failure 700 'an "
       "illegal memory access was encountered'",
       Family::kCuda, Kind::kCudaError},
  });
  ParsedLog log = Parse(
      "gpu-01:3309:3412 [3] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<34567> with "
      "status=5 opcode=0 len=0 vendor err 249 (Send) localGid fe80::1 remoteGidsfe80::2\n");
  const auto& w = Only<NcclWarn>(log);
  EXPECT_EQ(w.status, 5);
  EXPECT_EQ(log.strings.Get(w.peer), "10.0.0.2<34567>");
  EXPECT_EQ(log.strings.Get(log.events[0].host), "gpu-01");
  log = Parse("gpu-01:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n");
  EXPECT_TRUE(log.events.empty());  // INFO noise is not an event
}

// NET/Socket WARNs (NCCL_IB_DISABLE=1) in each NCCL wording (docs/log_formats.md §4b), with the
// peer they name: the reporter's own socket reset (an address: 2.18-2.21 `socketProgressOpt:`,
// 2.14-2.17 `Net :`), the far end closing (a host name where it resolves, else an address; the
// real 2.18.x line of nccl-tests#166 with its FQDN), the transport's own WARN (no peer), the
// size mismatch the transport reports as `message truncated` (a peer, but not a reset), and the
// bootstrap's connects that gave up.
TEST(Families, NcclSocketWarnsNameTheirPeer) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpu-0032:1357286:1357294 [1] misc/socket.cc:30 NCCL WARN socketProgressOpt: Call to recv from 10.64.0.1<45440> "
       "failed : Connection reset by peer",
       "10.64.0.1<45440>"},
      {"9306dc444753:248281:248334 [2] misc/socket.cc:518 NCCL WARN Net : Call to recv from 172.17.0.2<40537> failed : "
       "Connection reset by peer",
       "172.17.0.2<40537>"},
      {"gpu-0001:1014139:1014147 [1] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer "
       "gpu-0032<56560>",
       "gpu-0032<56560>"},
      {"gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
       "gpu004.ds-a4-r02.abc.com<55693>",
       "gpu004.ds-a4-r02.abc.com<55693>"},
      {"host:22337:22400 [6] misc/socket.cc:521 NCCL WARN Net : Connection closed by remote peer 10.104.148.191<37877>",
       "10.104.148.191<37877>"},
      {"gpu-0001:1014139:1014147 [1] transport/net_socket.cc:549 NCCL WARN NET/Socket : peer 10.64.0.2<40537> message "
       "truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is in healthy state, "
       "there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
       ""},
      {"gpu-0001:1014139:1014147 [1] transport/net_socket.cc:217 NCCL WARN NET/Socket : socket progress error", ""},
      {"gpu-0467:571680:571680 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.64.0.1<29551> failed : "
       "Connection timed out",
       "10.64.0.1<29551>"},
      {"gpu-0111:2229101:2229101 [0] misc/socket.cc:544 NCCL WARN socketPollConnect: connect returned Connection timed "
       "out, exceeded error retry count (35)",
       ""},
  };
  for (const auto& [line, peer] : cases) {
    ParsedLog log = Parse(std::string(line) + "\n");
    ASSERT_EQ(log.events.size(), 1u) << line;
    EXPECT_EQ(KindName(log.events[0].kind), "socket_error") << line;
    EXPECT_EQ(log.strings.Get(std::get<NcclWarn>(log.events[0].detail).peer), peer) << line;
  }
}

// The socket transport's interface line (NCCL_DEBUG=INFO) is an event, not an error: the whole
// line, whose host and addresses place the addresses the socket WARNs name.
TEST(Families, NcclSocketInterfaceLineIsKept) {
  ParsedLog log = Parse("gpu-0026:2642650:2642650 [7] NCCL INFO NET/Socket : Using [0]ib0:10.64.0.26<0> [1]eth0:192.168.3.26<0>\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(KindName(log.events[0].kind), "socket_interface");
  EXPECT_EQ(FamilyName(log.events[0].family), "nccl");
  EXPECT_EQ(log.strings.Get(std::get<Note>(log.events[0].detail).text),
            "gpu-0026:2642650:2642650 [7] NCCL INFO NET/Socket : Using [0]ib0:10.64.0.26<0> [1]eth0:192.168.3.26<0>");
  log = Parse("gpu-0026:2642650:2642650 [7] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.64.0.26<0>\n");
  EXPECT_TRUE(log.events.empty());
}

TEST(Families, ExceptionsClassifiedByTheirText) {
  ExpectEach({
      {"RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:514, unhandled system error, NCCL "
       "version 2.4.8",
       Family::kNccl, Kind::kNcclError},
      {"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
       "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5",
       Family::kNccl, Kind::kNcclError},
      {"RuntimeError: CUDA error: an illegal memory access was encountered", Family::kCuda, Kind::kCudaError},
      {"  what():  CUDA error: unspecified launch failure", Family::kCuda, Kind::kCudaError},
      {"/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [109,0,0], thread: [124,0,0] "
       "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.",
       Family::kCuda, Kind::kDeviceAssert},
      {"RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.", Family::kHostOom,
       Kind::kDataLoaderKilled},
      {"RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you "
       "tried to allocate 1000 bytes.",
       Family::kHostOom, Kind::kCpuAllocFailed},
      {"ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32", Family::kFsdp,
       Kind::kFsdpError},
      {"ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.float32", Family::kFsdp,
       Kind::kFsdpError},
      {"ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.", Family::kRay,
       Kind::kActorDied},
      {"ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", Family::kRay,
       Kind::kRayOom},
      {"ZeroDivisionError: division by zero", Family::kPython, Kind::kException},
  });
}

TEST(Families, CudaOomOfEachEra) {
  struct Oom {
    const char* line;
    int gpu;
  };
  for (const Oom& c : {
           Oom{"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.2 "
               "GiB already allocated; 3.1 MiB free; 14.4 GiB cached)",
               0},
           Oom{"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total "
               "capacity; 70 GiB already allocated; 1 GiB free; 75 GiB reserved in total by PyTorch) If reserved memory "
               "is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for "
               "Memory Management and PYTORCH_CUDA_ALLOC_CONF",
               3},
           Oom{"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty "
               "of 79.15 GiB of which 1.2 GiB is free.",
               0},
           Oom{"[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 5 has a total "
               "capacity of 79.15 GiB of which 10.00 MiB is free.",
               5},
       }) {
    const ParsedLog log = Parse(std::string(c.line) + "\n");
    const auto& e = Only<PythonError>(log);
    EXPECT_EQ(log.events[0].family, Family::kCudaOom) << c.line;
    EXPECT_EQ(e.gpu, c.gpu) << c.line;
  }
}

TEST(Families, HostOomKillerWordingsOfOldAndNewKernels) {
  ExpectEach(
      {
          {"Out of memory: Kill process 4242 (python3) score 900 or sacrifice child", Family::kHostOom, Kind::kOomKill},
          {"Killed process 4242 (python3) total-vm:100kB, anon-rss:90kB, file-rss:0kB, shmem-rss:0kB", Family::kHostOom,
           Kind::kOomKill},
          {"Memory cgroup out of memory: Kill process 4242 (python3) score 1 or sacrifice child", Family::kHostOom,
           Kind::kOomKill},
          {"Out of memory: Killed process 4242 (GC Thread#9) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, "
           "UID:0 pgtables:1kB oom_score_adj:0",
           Family::kHostOom, Kind::kOomKill},
          {"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x,mems_allowed=0-1,oom_memcg=/k,task_memcg=/k/"
           "crio-1.scope,task=python3,pid=4242,uid=0",
           Family::kHostOom, Kind::kOomInvoked},
          {"python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
           Family::kHostOom, Kind::kOomInvoked},
      },
      /*kernel=*/true);
  const ParsedLog log = Parse("Out of memory: Killed process 4242 (GC Thread#9) total-vm:1kB\n");
  const auto& k = Only<OomKill>(log);
  EXPECT_EQ(k.pid, 4242);
  EXPECT_EQ(log.strings.Get(k.comm), "GC Thread#9");
}

TEST(Families, XidOfEachDriverEraWithItsPciIdNormalised) {
  struct X {
    const char* line;
    int code;
    const char* pci;
    std::int64_t pid;
    const char* name;
  };
  for (const X& c : {
           X{"[  518.05] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", 79, "0000:3b:00", -1, ""},
           X{"[  518.05] NVRM: Xid (PCI:0000:01:00): 31, pid=2560, Ch 0000003a, intr 10000000. MMU Fault: ENGINE "
             "GRAPHICS GPC6 GPCCLIENT_T1_13 faulted @ 0x6f6f_320c2000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
             31, "0000:01:00", 2560, ""},
           X{"[  518.05] NVRM: Xid (PCI:0009:52:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) "
             "has been detected on GPU in the framebuffer at [physAddr 0x1] partition 1, subpartition 0.",
             48, "0009:52:00", 1234, "python3"},
           X{"[  518.05] NVRM: Xid (PCI:0000:B3:00): 45, pid='<unknown>', name=<unknown>, Ch 00000001 caused by previous "
             "Xid 149",
             45, "0000:b3:00", -1, ""},
       }) {
    const ParsedLog log = Parse(std::string(c.line) + "\n", true);
    const auto& x = Only<Xid>(log);
    EXPECT_EQ(x.code, c.code) << c.line;
    EXPECT_EQ(log.strings.Get(x.pci), c.pci) << c.line;
    EXPECT_EQ(x.pid, c.pid) << c.line;
    EXPECT_EQ(log.strings.Get(x.process), c.name) << c.line;
  }
  char buf[16];
  EXPECT_EQ(NormalisePci("0000:41:00.0", buf), "0000:41:00");
  EXPECT_EQ(NormalisePci("00000000:52:00.0", buf), "0000:52:00");
  EXPECT_EQ(NormalisePci("GPU0000:A1:00.0", buf), "0000:a1:00");
  EXPECT_EQ(NormalisePci("busId 4b000", buf), "");
}

TEST(Families, MultiLineFallenOffTheBusNoticeIsOneEvent) {
  const ParsedLog log = Parse(
      "[  600.1] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
      "[  600.1] NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
      "[  600.1] NVRM: fallen off the bus and is not responding to commands.\n",
      true);
  const auto& x = Only<Xid>(log);
  EXPECT_EQ(log.events[0].kind, Kind::kFallenOffBus);
  EXPECT_EQ(log.strings.Get(x.pci), "0000:b3:00");
  EXPECT_EQ(log.events[0].line, 1u);
  ExpectEach({{"NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x40:2404)", Family::kXid, Kind::kRmInitFailed}},
             true);
}

TEST(Families, SlurmWordingsOfStepdSrunSlurmdAndSlurmctld) {
  ExpectEach({
      {"slurmstepd: error: *** JOB 123 ON gpu-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***",
       Family::kSlurm, Kind::kCancelled},
      {"slurmstepd: error: *** STEP 123.0 ON gpu-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO PREEMPTION ***",
       Family::kSlurm, Kind::kCancelled},
      {"slurmstepd: error: *** JOB 123 ON gpu-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO NODE FAILURE, SEE SLURMCTLD "
       "LOG FOR DETAILS ***",
       Family::kSlurm, Kind::kCancelled},
      {"slurmstepd: *** JOB 830329 CANCELLED AT 2019-01-01T00:00:00 DUE TO TIME LIMIT on n447 ***", Family::kSlurm,
       Kind::kCancelled},
      {"srun: *** STEP 12.0 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***", Family::kSlurm, Kind::kCancelled},
      {"slurmstepd: error: *** STEP 12.0 ON gpu-07 CANCELLED AT 2024-01-01T00:00:00 ***", Family::kSlurm,
       Kind::kCancelled},
      {"srun: error: gpu-07: task 5: Exited with exit code 1", Family::kSlurm, Kind::kTaskExit},
      {"srun: error: gpu-07: tasks 2,4-5,7: Terminated", Family::kSlurm, Kind::kTaskExit},
      {"srun: error: gpu-07: task 0: Out Of Memory", Family::kSlurm, Kind::kSlurmOom},
      {"srun: error: gpu-07: task 289: Bus error", Family::kSlurm, Kind::kTaskExit},
      {"srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", Family::kSlurm, Kind::kStepAborted},
      {"srun: Terminating StepId=440575.0", Family::kSlurm, Kind::kStepAborted},
      {"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your processes may have "
       "been killed by the cgroup out-of-memory handler.",
       Family::kSlurm, Kind::kSlurmOom},
      {"slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
       Family::kSlurm, Kind::kSlurmOom},
      {"[2020-12-14T09:43:55.500] [63532.0] error: *** STEP 63532.0 STEPD TERMINATED ON cn106 AT "
       "2020-12-14T09:43:55 DUE TO JOB NOT ENDING WITH SIGNALS ***",
       Family::kSlurm, Kind::kStepTerminated},
      {"[2024-01-01T00:00:00.000] _job_complete: JobId=127441 WTERMSIG 9", Family::kSlurm, Kind::kJobComplete},
      {"[2024-01-01T00:00:00.000] sched: Allocate JobId=127441 NodeList=gpu-[0001-0128] #CPUs=14336 Partition=gpu", Family::kSlurm,
       Kind::kJobAllocated},
  });
  ParsedLog log = Parse("slurmstepd: error: *** JOB 123 ON gpu-07 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\n");
  auto n = Only<SlurmNote>(log);
  EXPECT_EQ(log.strings.Get(n.reason), "TIME LIMIT");
  EXPECT_EQ(log.strings.Get(n.node), "gpu-07");
  log = Parse("srun: error: gpu-07: tasks 2,4-5,7: Exited with exit code 1\n");
  n = Only<SlurmNote>(log);
  EXPECT_EQ(log.strings.Get(n.tasks), "2,4-5,7");
  EXPECT_EQ(n.exit_code, 1);
}

TEST(Families, TorchrunAgentDeepSpeedLauncher) {
  ExpectEach({
      {"E0302 09:17:03.552000 139872 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -9) "
       "local_rank: 3 (pid: 31243) of binary: /usr/bin/python3",
       Family::kTorchrun, Kind::kWorkerFailed},
      {"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 3309) of binary: "
       "/usr/bin/python3",
       Family::kTorchrun, Kind::kWorkerFailed},
      {"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3310 closing signal SIGTERM",
       Family::kTorchrun, Kind::kWorkerSignalled},
      {"W0302 09:17:33.1 1 torch/distributed/elastic/multiprocessing/api.py:1] Unable to shutdown process 3310 via 15, "
       "forcefully exitting via 9",
       Family::kTorchrun, Kind::kWorkerSignalled},
      {"[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to (GPU03, 29500).",
       Family::kTorchrun, Kind::kRendezvousError},
      // The c10d store's connections reset (its host gone): TCPStore's warning in each wording,
      // and the heartbeat monitor's.
      {"[rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=135, "
       "addr=[gpu-0002]:48750, remote=[gpu-0001]:29500): Connection reset by peer",
       Family::kTorchrun, Kind::kStoreError},
      {"[W514 18:33:36.536327028 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=3, "
       "addr=[localhost]:34658, remote=[localhost]:1234): Failed to recv, got 0 bytes. Connection was likely closed. Did the "
       "remote server shutdown or crash?",
       Family::kTorchrun, Kind::kStoreError},
      {"[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "
       "\"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer",
       Family::kTorchrun, Kind::kStoreError},
      {"[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py'] exits "
       "with return code = -9",
       Family::kDeepSpeed, Kind::kLauncherExit},
      {"[2023-04-14 13:11:27,885] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 4242", Family::kDeepSpeed,
       Kind::kKillingSubprocess},
  });
  const ParsedLog log = Parse("[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['p'] exits with return code = -9\n");
  EXPECT_EQ(Only<WorkerFailed>(log).exit_code, -9);
}

TEST(Families, KubernetesAndRay) {
  ExpectEach({
      {"  Warning  Evicted  12m (x2 over 13m)  kubelet, node-1  The node was low on resource: memory. Container x was "
       "using 9402820Ki, which exceeds its request of 7G.",
       Family::kKubernetes, Kind::kEvicted},
      {"      Reason:       OOMKilled", Family::kKubernetes, Kind::kOomKilled},
      {"      Reason:       CrashLoopBackOff", Family::kKubernetes, Kind::kCrashLoop},
      {"command terminated with exit code 137", Family::kKubernetes, Kind::kContainerExit},
      {"I0528 16:05:50.514706 2269385 eviction_manager.go:405] \"Eviction manager: pods ranked for eviction\" pods=[a]",
       Family::kKubernetes, Kind::kEvicted},
      {"(raylet) [2024-01-01 00:00:00,000 E 1 2] node_manager.cc:3084: 4 Workers (tasks / actors) killed due to memory "
       "pressure (OOM), 0 Workers crashed due to other reasons",
       Family::kRay, Kind::kRayletOomKills},
  });
}

TEST(Families, GlooErrorsOfEachBuild) {
  ExpectEach({
      {"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.1]:4242",
       Family::kGloo, Kind::kGlooConnectionClosed},
      {"RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
       "[10.0.0.1]:4242",
       Family::kGloo, Kind::kGlooConnectionClosed},
      {"RuntimeError: [/var/lib/jenkins/workspace/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error "
       "[10.0.0.1]:4242: Connection reset by peer",
       Family::kGloo, Kind::kGlooReadError},
      {"RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for "
       "recv operation to complete",
       Family::kGloo, Kind::kGlooTimeout},
      {"RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
       Family::kGloo, Kind::kGlooConnectFailed},
  });
}

TEST(Families, TracebackIsOneEventAtItsLastLineOnItsOwnRank) {
  const ParsedLog log = Parse(
      "[rank2]:Traceback (most recent call last):\n"
      "[rank5]:Traceback (most recent call last):\n"
      "[rank2]:  File \"/app/train.py\", line 10, in <module>\n"
      "[rank2]:    main()\n"
      "[rank5]:  File \"/app/train.py\", line 12, in <module>\n"
      "[rank2]:ValueError: bad batch\n"
      "[rank5]:RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
      "[10.0.0.1]:4242\n");
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].rank, 2);
  EXPECT_EQ(log.events[0].family, Family::kPython);
  EXPECT_EQ(log.events[0].line, 6u);
  EXPECT_EQ(log.strings.Get(std::get<PythonError>(log.events[0].detail).message), "bad batch");
  EXPECT_EQ(log.events[1].rank, 5);
  EXPECT_EQ(log.events[1].family, Family::kGloo);
}

TEST(Families, SrunLabelledTracebacksInterleaveWithoutMixing) {
  const ParsedLog log = Parse(
      "3: Traceback (most recent call last):\n"
      "1: Traceback (most recent call last):\n"
      "3:   File \"train.py\", line 1, in <module>\n"
      "1:   File \"train.py\", line 1, in <module>\n"
      "1: KeyError: 'x'\n"
      "3: ZeroDivisionError: division by zero\n");
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].task, 1);
  EXPECT_EQ(log.events[1].task, 3);
  EXPECT_TRUE(log.task_labels);
}


// kubectl's words on pods and nodes (docs/log_formats.md §16): `kubectl get events` rows (the
// age first), the Events table of `kubectl describe` (type first), describe's status fields, and
// torchrun's own word that it was SIGTERMed.
TEST(Families, KubernetesEventsDescribeAndTorchrunSignal) {
  ExpectEach({
      {"3m12s       Warning   Evicted               pod/llama-worker-3          The node was low on resource: memory. "
       "Threshold quantity: 100Mi, available: 87204Ki. Container pytorch was using 1523410944Ki, request is 1Ti, has "
       "larger consumption of memory.",
       Family::kKubernetes, Kind::kEvicted},
      {"  Warning  Evicted  12m (x2 over 13m)  kubelet, gpu-0004  The node was low on resource: memory. Container "
       "pytorch was using 9402820Ki, which exceeds its request of 7G.",
       Family::kKubernetes, Kind::kEvicted},
      {"96s         Warning   OOMKilling            node/gpu-0084               Memory cgroup out of memory: Killed "
       "process 2000535 (python3) total-vm:187563412kB, anon-rss:161204880kB, file-rss:1263344kB, shmem-rss:0kB, "
       "UID:0 pgtables:318816kB oom_score_adj:-997",
       Family::kKubernetes, Kind::kOomKilled},
      {"6m40s       Normal    NodeNotReady          node/gpu-0004               Node gpu-0004 status is now: NodeNotReady",
       Family::kKubernetes, Kind::kNodeNotReady},
      {"2m          Normal    Killing               pod/llama-worker-5          Stopping container pytorch",
       Family::kKubernetes, Kind::kPodKilling},
      {"96s         Warning   PyTorchJobFailed      pytorchjob/llama            PyTorchJob llama is failed because 1 "
       "Worker replica(s) failed.",
       Family::kKubernetes, Kind::kJobFailed},
      {"      Reason:       OOMKilled", Family::kKubernetes, Kind::kOomKilled},
      {"Reason:           Evicted", Family::kKubernetes, Kind::kEvicted},
      {"Node:             gpu-0004/10.128.0.5", Family::kKubernetes, Kind::kPodNode},
      {"W0302 09:31:02.112000 2000467 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM "
       "death signal, shutting down workers",
       Family::kTorchrun, Kind::kAgentSignalled},
  });
  const ParsedLog node = Parse("Node:             gpu-0004/10.128.0.5\n");
  ASSERT_EQ(node.events.size(), 1u);
  EXPECT_EQ(node.strings.Get(node.events[0].host), "gpu-0004");
  const ParsedLog row = Parse("3m12s   Warning   Evicted   pod/llama-worker-3   The node was low on resource: memory.\n");
  ASSERT_EQ(row.events.size(), 1u);
  EXPECT_EQ(row.strings.Get(row.events[0].host), "llama-worker-3");
  // Other rows and fields are not the platform's word on the failure.
  for (const char* other : {"2m38s       Normal    Pulled                pod/llama-worker-3          Container image "
                            "\"nvcr.io/nvidia/pytorch:24.05-py3\" already present on machine",
                            "      Reason:       Error", "LAST SEEN   TYPE      REASON    OBJECT    MESSAGE"}) {
    EXPECT_TRUE(Parse(std::string(other) + "\n").events.empty()) << other;
  }
}


// torchrun's rendezvous result (LOGLEVEL=INFO, §6): the `global_ranks=[...]` line states its node's
// first rank when the ranks are contiguous; the block's other lines are nothing; a list with a
// gap is not read.
TEST(Families, AgentRendezvousResultStatesTheNodesRanks) {
  const ParsedLog log = Parse(
      "[2026-03-02 09:00:00,522] torch.distributed.elastic.agent.server.api: [INFO] [default] Rendezvous complete for workers. Result:\n"
      "  restart_count=0\n"
      "  group_rank=3\n"
      "  local_ranks=[0, 1, 2, 3, 4, 5, 6, 7]\n"
      "  global_ranks=[24, 25, 26, 27, 28, 29, 30, 31]\n"
      "  role_world_sizes=[128, 128, 128, 128, 128, 128, 128, 128]\n"
      "\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kAgentRanks);
  const auto& nl = std::get<NodeLayout>(log.events[0].detail);
  EXPECT_EQ(nl.First(), 24);
  EXPECT_EQ(nl.local_procs, 8);
  EXPECT_TRUE(Parse("  global_ranks=[24, 25, 27]\n").events.empty());
  // torch >= 2.2: every line of the message carries the glog-style header (a real 2.5 log).
  const ParsedLog headed = Parse(
      "I1210 18:28:01.790000 1 site-packages/torch/distributed/elastic/agent/server/api.py:525] [default] Rendezvous complete for workers. Result:\n"
      "I1210 18:28:01.790000 1 site-packages/torch/distributed/elastic/agent/server/api.py:525]   group_rank=3\n"
      "I1210 18:28:01.790000 1 site-packages/torch/distributed/elastic/agent/server/api.py:525]   global_ranks=[24, 25, 26, 27, 28, 29, 30, 31]\n"
      "I1210 18:28:01.790000 1 site-packages/torch/distributed/elastic/agent/server/api.py:525] \n");
  ASSERT_EQ(headed.events.size(), 1u);
  EXPECT_EQ(headed.events[0].kind, Kind::kAgentRanks);
  EXPECT_EQ(std::get<NodeLayout>(headed.events[0].detail).First(), 24);
}

// Restarts (docs/log_formats.md §24, "Restarts"): the scheduler placing a pod (its node: the only
// word on a pod that is gone), a replacement it cannot place, JobSet's restart and its budget
// running out, the job controller's and the training-operator's backoff limit, the kubelet's
// back-off. None is an error of the job's own.
TEST(Families, KubernetesRestartRows) {
  ExpectEach({
      {"17m         Normal    Scheduled              pod/llama-workers-0-3-x7k2p     Successfully assigned "
       "training/llama-workers-0-3-x7k2p to gpu-0004",
       Family::kKubernetes, Kind::kPodNode},
      {"3m9s        Warning   FailedScheduling       pod/llama-workers-0-5-qww6k   0/512 nodes are available: 1 node(s) had "
       "untolerated taint {node.kubernetes.io/unreachable: }, 511 Insufficient nvidia.com/gpu. preemption: 0/512 nodes are "
       "available: 1 Preemption is not helpful for scheduling, 511 No preemption victims found for incoming pod.",
       Family::kKubernetes, Kind::kFailedScheduling},
      {"  Warning  FailedScheduling  16m   default-scheduler  0/512 nodes are available: 512 Insufficient nvidia.com/gpu.",
       Family::kKubernetes, Kind::kFailedScheduling},
      {"17m         Warning   Restarting             jobset/llama                    restarting jobset, attempt 1",
       Family::kKubernetes, Kind::kJobRestarting},
      {"94s         Warning   ReachedMaxRestarts     jobset/llama                    jobset failed due to reaching max number of "
       "restarts (first failed job: llama-workers-0)",
       Family::kKubernetes, Kind::kJobFailed},
      {"95s         Warning   BackoffLimitExceeded   job/llama-workers-0             Job has reached the specified backoff limit",
       Family::kKubernetes, Kind::kJobFailed},
      {"11m         Warning   PyTorchJobFailed   pytorchjob/llama   PyTorchJob llama has failed because it has reached the "
       "specified backoff limit",
       Family::kKubernetes, Kind::kJobFailed},
      {"96s         Warning   BackOff            pod/llama-worker-3   Back-off restarting failed container pytorch in pod "
       "llama-worker-3_training(681d0337-535c-4106-a2ad-eac8c3caf9da)",
       Family::kKubernetes, Kind::kCrashLoop},
      {"    Restart Count:  2", Family::kKubernetes, Kind::kRestartCount},
  });
  const ParsedLog placed = Parse("17m   Normal   Scheduled   pod/llama-workers-0-3-x7k2p   Successfully assigned training/llama-workers-0-3-x7k2p to gpu-0004\n");
  ASSERT_EQ(placed.events.size(), 1u);
  EXPECT_EQ(placed.strings.Get(placed.events[0].host), "gpu-0004");
  EXPECT_EQ(placed.events[0].signature, kNoStr);  // not an error
  // A Pending pod runs on no node: the row names none, and is no error of the job's.
  const ParsedLog pending = Parse("3m9s   Warning   FailedScheduling   pod/llama-workers-0-5-qww6k   0/512 nodes are available: 512 Insufficient nvidia.com/gpu.\n");
  ASSERT_EQ(pending.events.size(), 1u);
  EXPECT_EQ(pending.events[0].host, kNoStr);
  EXPECT_EQ(pending.events[0].signature, kNoStr);
}

// Ray's words (docs/log_formats.md §21): the trainer's worker table, the fields and cause of the
// driver's ActorDiedError, the GCS's verdict on a silent node, the raylet's memory monitor.
TEST(Families, RayWorkerTableActorDeathGcsAndRaylet) {
  ExpectEach({
      {"(TorchTrainer pid=2113462) - (node_id=1aa5e1ee84784dc358529a248d03723f8ede42ba1f04755223d41e61, ip=10.64.0.2, "
       "pid=2113554) world_rank=0, local_rank=0, node_rank=0",
       Family::kRay, Kind::kRayWorker},
      {"ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.", Family::kRay, Kind::kActorDied},
      {"\tpid: 2883959", Family::kRay, Kind::kActorField},
      {"\tip: 10.64.0.48", Family::kRay, Kind::kActorField},
      {"The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
       "unexpectedly exits with a connection error code 2. End of file.",
       Family::kRay, Kind::kActorCause},
      {"The actor died because its node has died. Node Id: 1aa5e1ee84784dc358529a248d03723f8ede42ba1f04755223d41e61",
       Family::kRay, Kind::kActorCause},
      {"[2026-03-02 09:00:52,123 W 2113422 2113422] gcs_node_manager.cc:144: The node with node id: "
       "1aa5e1ee84784dc358529a248d03723f8ede42ba1f04755223d41e61 and address: 10.64.0.7 and node name: 10.64.0.7 has been "
       "marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) raylet "
       "crashes unexpectedly (OOM, etc.) ",
       Family::kRay, Kind::kRayNodeDead},
      {"(raylet) [2026-03-02 09:00:20,976 E 2883851 2883851] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) "
       "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 1b3b, IP: 10.64.0.48) "
       "over the last time period.",
       Family::kRay, Kind::kRayletOomKills},
  });
  // A worker's line carries its node's address in Ray's prefix.
  const ParsedLog worker = Parse("(RayTrainWorker pid=2883959, ip=10.64.0.48) Fatal Python error: Segmentation fault\n");
  ASSERT_EQ(worker.events.size(), 1u);
  EXPECT_EQ(worker.strings.Get(worker.events[0].host), "10.64.0.48");
  const ParsedLog table = Parse("(TorchTrainer pid=21) - (node_id=1a, ip=10.64.0.9, pid=77) world_rank=70, local_rank=6, node_rank=8\n");
  ASSERT_EQ(table.events.size(), 1u);
  EXPECT_EQ(table.events[0].rank, 70);
  EXPECT_EQ(table.strings.Get(table.events[0].host), "10.64.0.9");
}

// Ray's core worker on an actor's death (docs/log_formats.md §25, actor_manager.cc): an actor's
// death where the line names a failure as its cause (Ray 1.x's creation-task exception, Ray 2.x's
// creation-task and memory-monitor contexts); a DEAD actor with another cause or none (`ray.kill`,
// an actor out of scope) and the other states are no event.
TEST(Families, RayCoreWorkerOnAnActorThatDiedOfAFailure) {
  ExpectEach({
      {"[2021-09-14 10:11:20,566 I 2122527 2122927] actor_manager.cc:139: received notification on actor, state: "
       "DEAD, actor_id: b725bbfcae78f2913c44e16a01000000, ip address: 10.64.0.48, port: 35795, worker_id: "
       "a8a07365f26842f7dc017a6b553b6174e6e34be772b0b761d1817e50, raylet_id: "
       "dc116a1d4db5c2bac28356d28ec4c6342fbf9d6bf293cead7b6678a2, num_restarts: 0, has creation_task_exception=1",
       Family::kRay, Kind::kActorDied},
      {"[2024-05-02 10:11:20,566 I 2122527 2122927] actor_manager.cc:236: received notification on actor, state: "
       "DEAD, actor_id: 5d69013cc7da00c57be9d6ff1ce83a28, ip address: 10.64.0.36, port: 10026, worker_id: "
       "a8a07365f26842f7dc017a6b553b6174e6e34be772b0b761d1817e50, raylet_id: "
       "dc116a1d4db5c2bac28356d28ec4c6342fbf9d6bf293cead7b6678a2, num_restarts: 0, death context type=OOMContext",
       Family::kRay, Kind::kActorDied},
      {"[2024-05-02 10:11:20,566 I 2122527 2122927] actor_manager.cc:236: received notification on actor, state: "
       "DEAD, actor_id: 5d69013cc7da00c57be9d6ff1ce83a28, ip address: 10.64.0.36, port: 10026, worker_id: "
       "a8a07365f26842f7dc017a6b553b6174e6e34be772b0b761d1817e50, raylet_id: "
       "dc116a1d4db5c2bac28356d28ec4c6342fbf9d6bf293cead7b6678a2, num_restarts: 0, death context "
       "type=CreationTaskFailureContext",
       Family::kRay, Kind::kActorDied},
  });
  const ParsedLog died = Parse(
      "[2021-09-14 10:11:20,566 I 2122527 2122927] actor_manager.cc:139: received notification on actor, state: DEAD, "
      "actor_id: b725bbfcae78f2913c44e16a01000000, ip address: 10.64.0.48, port: 35795, worker_id: a8a0, raylet_id: "
      "dc11, num_restarts: 0, has creation_task_exception=1\n");
  ASSERT_EQ(died.events.size(), 1u);
  EXPECT_EQ(died.strings.Get(died.events[0].host), "10.64.0.48");
  for (const char* line : {
           "[2021-09-14 10:11:20,566 I 2122527 2122927] actor_manager.cc:139: received notification on actor, state: "
           "DEAD, actor_id: b725, ip address: 10.64.0.48, port: 35795, worker_id: a8a0, raylet_id: dc11, num_restarts: "
           "0, has creation_task_exception=0",
           "[2024-05-02 10:11:20,566 I 2122527 2122927] actor_manager.cc:236: received notification on actor, state: "
           "DEAD, actor_id: 5d69, ip address: 10.64.0.36, port: 10026, worker_id: a8a0, raylet_id: dc11, "
           "num_restarts: 0, death context type=ActorDiedErrorContext",
           "[2026-04-21 16:36:26,682 I 2122527 2122927] actor_manager.cc:236: received notification on actor, state: "
           "ALIVE, ip address: 10.48.75.241, port: 10026, num_restarts: 3, death context type=CONTEXT_NOT_SET "
           "actor_id=c3dcc40c9dbe960eb8e3a42e17000000",
       }) {
    EXPECT_TRUE(Parse(std::string(line) + "\n").events.empty()) << line;
  }
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

TEST(Families, SlurmctldAndSrunNodeLossAndSchedulerWords) {
  ExpectEach({
      {"[2026-03-02T09:05:21.549] error: Nodes gpu-0001 not responding, setting DOWN", Family::kSlurm,
       Kind::kNodeFailure},
      {"[2026-03-02T09:05:21.549] Killing JobId=4242001 on failed node gpu-0001", Family::kSlurm, Kind::kNodeFailure},
      {"[2026-03-02T09:05:21.549] Time limit exhausted for JobId=4242001", Family::kSlurm, Kind::kCancelled},
      {"[2026-03-02T09:05:21.549] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=4242001 uid 1000", Family::kSlurm,
       Kind::kCancelled},
      {"[2026-03-02T09:05:21.549] preempted JobId=4242001 has been killed to reclaim resources for JobId=9",
       Family::kSlurm, Kind::kCancelled},
      {"srun: error: Node failure on gpu-0001", Family::kSlurm, Kind::kNodeFailure},
      {"srun: launch/slurm: _step_signal: Terminating StepId=4242001.0", Family::kSlurm, Kind::kStepAborted},
      {"srun: error: gpu-0001: task 5: Segmentation fault", Family::kSlurm, Kind::kTaskExit},
  });
}

// A requeued job and a node whose slurmd came back: slurmctld's requeue names the node (a node
// failure), `Requeuing`, slurmstepd's JOB REQUEUE banner, a later run's SLURM_RESTART_COUNT echo
// (the first run's 0 is not a requeue) and `now responding`.
TEST(Families, SlurmRequeueAndNodeReturnWords) {
  ExpectEach({
      {"[2026-03-02T09:05:59.224] requeue JobId=4242001 due to failure of node gpu-0012", Family::kSlurm,
       Kind::kNodeFailure},
      {"[2026-03-02T09:05:59.224] Requeuing JobId=4242001", Family::kSlurm, Kind::kRequeue},
      {"[2026-03-02T09:09:39.834] Node gpu-0012 now responding", Family::kSlurm, Kind::kNodeResponding},
      {"slurmstepd: error: *** JOB 31182239 ON sh-06-34 CANCELLED AT 2018-11-05T10:35:06 DUE TO JOB REQUEUE ***",
       Family::kSlurm, Kind::kCancelled},
      {"SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=1 SLURM_JOB_NODELIST=gpu-[0001-0011,0013-0017]", Family::kSlurm,
       Kind::kRequeue},
  });
  const ParsedLog requeue = Parse("[2026-03-02T09:05:59.224] requeue JobId=4242001 due to failure of node gpu-0012\n");
  const auto& n = Only<SlurmNote>(requeue);
  EXPECT_EQ(requeue.strings.Get(n.node), "gpu-0012");
  EXPECT_EQ(requeue.strings.Get(n.reason), "REQUEUED");
  const ParsedLog restart = Parse("SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=2 SLURM_JOB_NODELIST=gpu-[0001-0016]\n");
  EXPECT_EQ(Only<SlurmNote>(restart).exit_code, 2);  // the restart count
  EXPECT_EQ(n.job, 4242001);
  // The first run's 0 is no requeue: the echo only names the job (analyze/scope.h).
  const ParsedLog first = Parse("SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=0 SLURM_JOB_NODELIST=gpu-[0001-0016]\n");
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].kind, Kind::kJobId);
  EXPECT_EQ(Only<SlurmNote>(first).job, 4242001);
}

// Every Slurm line that names a job carries its id (SlurmNote::job), in the shapes of Slurm
// 22.05's slurmctld.log, slurmd.log and slurm-<id>.out (corpora/real/sl_*): scope keeps only
// this job's lines of the daemon logs.
TEST(Families, SlurmLinesNameTheirJob) {
  const std::pair<std::string, std::int64_t> kLines[] = {
      {"[2026-11-29T16:42:41.996] Time limit exhausted for JobId=4250", 4250},
      {"[2026-11-29T16:41:14.831] sched: Allocate JobId=4250 NodeList=sn01 #CPUs=4 Partition=batch", 4250},
      {"[2026-11-29T16:39:38.921] _job_complete: JobId=4200 WEXITSTATUS 137", 4200},
      {"[2026-11-29T16:40:45.666] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=4230 uid 0", 4230},
      {"[2026-11-29T16:41:05.289] preempted JobId=4240 has been killed to reclaim resources for JobId=4241", 4240},
      {"[2026-11-29T16:42:42.003] [4250.batch] error: *** JOB 4250 ON sn01 CANCELLED AT 2026-11-29T16:42:42 DUE TO TIME LIMIT ***", 4250},
      {"slurmstepd: error: *** STEP 4250.0 ON sn01 CANCELLED AT 2026-11-29T16:42:42 DUE TO TIME LIMIT ***", 4250},
      {"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4220.0. Some of your processes may have been killed by "
       "the cgroup out-of-memory handler.",
       4220},
      {"srun: Force Terminated StepId=4200.0", 4200},
      {"[2026-11-29T16:42:41.996] Time limit exhausted for JobId=4250_7(4257)", 4257},
      {"SLURM_JOBID=4250", 4250},
      {"srun: error: sn01: task 1: Killed", -1},
  };
  for (const auto& [line, job] : kLines) {
    const ParsedLog log = Parse(line + "\n");
    ASSERT_EQ(log.events.size(), 1u) << line;
    EXPECT_EQ(Only<SlurmNote>(log).job, job) << line;
  }
}

// Bare metal: Open MPI 4 (mpirun), PRRTE (prterun, wrapped before `signal`), mpiexec; the
// first failed process of the exit-code block, the lost orted; pdsh's ssh exit 255 and ssh's
// connect failure name a node.
TEST(Families, BareMetalLauncherWords) {
  ExpectEach({
      {"mpirun noticed that process rank 3 with PID 12345 on node gpu-0001 exited on signal 9 (Killed).",
       Family::kBareMetal, Kind::kTaskExit},
      {"prterun noticed that process rank 2 with PID 1617008 on node cpu155 exited on", Family::kBareMetal,
       Kind::kTaskExit},
      {"mpiexec noticed that process rank 0 with PID 0 on node fv-az99-305 exited on signal 6 (Aborted).",
       Family::kBareMetal, Kind::kTaskExit},
      {"  Process name: [[25106,1],17]", Family::kBareMetal, Kind::kTaskExit},
      {"  Remote daemon: [[17757,0],13] on node node1001", Family::kBareMetal, Kind::kNodeFailure},
      {"pdsh@gpu-0001: gpu-0007: ssh exited with exit code 255", Family::kBareMetal, Kind::kNodeFailure},
      {"ssh: connect to host gpu-0007 port 22: Connection timed out", Family::kBareMetal, Kind::kNodeFailure},
      {"Connection to gpu-0007 closed by remote host.", Family::kBareMetal, Kind::kNodeFailure},
      {"Timeout, server gpu-0007 not responding.", Family::kBareMetal, Kind::kNodeFailure},
  });
  const ParsedLog noticed =
      Parse("mpirun noticed that process rank 3 with PID 12345 on node gpu-0001 exited on signal 11 (Segmentation fault).\n");
  const auto& n = Only<SlurmNote>(noticed);
  EXPECT_EQ(noticed.strings.Get(n.tasks), "3");
  EXPECT_EQ(noticed.strings.Get(n.node), "gpu-0001");
  EXPECT_EQ(noticed.strings.Get(n.reason), "Segmentation fault");
  EXPECT_EQ(n.exit_code, -11);
  const ParsedLog first = Parse("  Process name: [[25106,1],17]\n");
  EXPECT_EQ(first.strings.Get(Only<SlurmNote>(first).tasks), "17");
  const ParsedLog pdsh = Parse("pdsh@gpu-0001: gpu-0007: ssh exited with exit code 255\n");
  EXPECT_EQ(pdsh.strings.Get(Only<SlurmNote>(pdsh).node), "gpu-0007");
  // pdsh prefixes ssh's own stderr with the host too.
  const ParsedLog closed = Parse("gpu-0007: Connection to gpu-0007 closed by remote host.\n"
                                 "gpu-0007: Connection to gpu-0007 closed by remote host.\n"
                                 "gpu-0007: Connection to gpu-0007 closed by remote host.\n");
  ASSERT_FALSE(closed.events.empty());
  EXPECT_EQ(closed.strings.Get(std::get<SlurmNote>(closed.events[0].detail).node), "gpu-0007");
  EXPECT_EQ(closed.strings.Get(std::get<SlurmNote>(closed.events[0].detail).reason), "SSH CLOSED");
  // A remote command's own non-zero exit is not a lost node; other tools' "noticed" are not mpirun's.
  EXPECT_TRUE(Parse("pdsh@gpu-0001: gpu-0007: ssh exited with exit code 1\n").events.empty());
  EXPECT_TRUE(Parse("monitor noticed that process rank 3 with PID 1 on node x exited on signal 9 (Killed).\n").events.empty());
}

// Open MPI 5 (PRRTE) names processes and daemons by nspace (`prterun-<host>-<pid>@<job>`), and
// --report-bindings ties a rank to its host in both versions (the tags never do).
TEST(Families, BareMetalOpenMpi5NamesAndBindings) {
  const ParsedLog first = Parse("   Process name: [prterun-gpu013-1009179@1,820]\n");
  EXPECT_EQ(first.strings.Get(Only<SlurmNote>(first).tasks), "820");
  const ParsedLog lost = Parse("  Remote daemon: [prterun-login-01-54321@0,278] on node gpu-0278\n");
  EXPECT_EQ(lost.events[0].kind, Kind::kNodeFailure);
  EXPECT_EQ(lost.strings.Get(Only<SlurmNote>(lost).node), "gpu-0278");
  const std::pair<std::string, std::string_view> bindings[] = {
      {"[gpu-0103:07633] Rank 820 bound to package[0][core:48-59]\n", "gpu-0103"},
      {"[gpu-0103:99902] MCW rank 820 is not bound (or bound to all available processors)\n", "gpu-0103"},
      {"[linpc1:23107] MCW rank 820 bound to socket 0[core 0[hwt 0]], socket 0[core 1[hwt 0]]: [B/B][./.]\n", "linpc1"}};
  for (const auto& [line, host] : bindings) {
    const ParsedLog bound = Parse(line);
    ASSERT_EQ(bound.events.size(), 1u) << line;
    EXPECT_EQ(bound.events[0].kind, Kind::kRankBinding) << line;
    EXPECT_EQ(bound.events[0].rank, 820) << line;
    EXPECT_EQ(bound.strings.Get(bound.events[0].host), host) << line;
  }
  EXPECT_TRUE(Parse("[gpu-0103:07633] Rank 820 says hello\n").events.empty());
}

TEST(Families, FaulthandlerDumpIsAFatalSignal) {
  const ParsedLog log = ParseLog("Fatal Python error: Segmentation fault\n\nThread 0x00007f3c6e4c1480 (most recent call first):\n",
                                 FileContext{.name_rank = 7});
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kFatalSignal);
  EXPECT_EQ(log.events[0].rank, 7);
}

}  // namespace
}  // namespace denpex::engine


namespace denpex::engine {
namespace {

// Per-rank step timers as DeepSpeed's log_dist prints them (short names of >= 0.10.1, the older
// names with `rank=R`, the microstep line without a rank): compute and wait by timer name.
// torchrun's error file as ErrorHandler.record_exception writes it (json.dump: one line, `, `
// and `: ` separators): the exception is read as its line would be, at the file's timestamp;
// the file names no rank. The agent's copy (`"errorCode"` added) reads the same; a line that
// is not one (a cut file, another JSON) is no event.
TEST(Families, TorchrunErrorFileIsTheWorkersExceptionAtItsTimestamp) {
  const std::string file =
      R"({"message": {"message": "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors )"
      R"(might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor )"
      R"(debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n", "extraInfo": {"py_callstack": "Traceback (most recent )"
      R"(call last):\n  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/errors/)"
      R"(__init__.py\", line 355, in wrapper\n    return f(*args, **kwargs)\n  File \"/workspace/train.py\", line 88, in )"
      R"(main\n    loss.backward()\nRuntimeError: CUDA error: an illegal memory access was encountered\n", "timestamp": )"
      R"("1764667216"}}})";
  ParsedLog log = Parse(file);  // json.dump writes no final newline
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kCudaError);
  EXPECT_EQ(log.events[0].time, 1764667216 * kNsPerSec);
  EXPECT_FALSE(log.events[0].time_borrowed);
  EXPECT_EQ(log.events[0].rank, -1);
  EXPECT_EQ(log.events[0].line, 1u);

  log = Parse(R"({"message": {"message": "ValueError: bad \"shard\" caf\u00e9", "extraInfo": {"py_callstack": )"
              R"("Traceback (most recent call last):\nValueError: bad\n", "timestamp": "1764667300"}, "errorCode": 1}})"
              "\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kException);
  const auto& e = std::get<PythonError>(log.events[0].detail);
  EXPECT_EQ(log.strings.Get(e.type), "ValueError");
  EXPECT_EQ(log.strings.Get(e.message), "bad \"shard\" caf\xc3\xa9");
  EXPECT_EQ(log.events[0].time, 1764667300 * kNsPerSec);

  ErrorRecord record;
  EXPECT_FALSE(ReadErrorFile(R"({"message": {"message": "RuntimeError: cut here)", &record));
  EXPECT_FALSE(ReadErrorFile(R"({"message": 3})", &record));
  // A cut file is no error file: its exception may still be found behind the opaque prefix, untimed.
  const ParsedLog cut = Parse(R"({"message": {"message": "RuntimeError: cut here)" "\n");
  for (const Event& event : cut.events) EXPECT_EQ(event.clock, Clock::kNone);
  std::string deep = R"({"message": )";
  for (int k = 0; k < 100000; ++k) deep += R"({"message": )";
  EXPECT_FALSE(ReadErrorFile(deep, &record));  // nested past the format: skipped, never recursed
}

TEST(Families, StepTimersOfEachDeepSpeedShape) {
  struct TimerCase {
    const char* line;
    std::int32_t rank;
    float compute, wait;
  };
  const TimerCase cases[] = {
      {"[2023-07-19 14:09:21,612] [INFO] [logging.py:96:log_dist] [Rank 17] time (ms) | fwd: 316.00 | bwd: 747.31 | "
       "bwd_inner: 514.96 | bwd_allreduce: 232.28 | step: 663.59",
       17, 316.00f + 514.96f, 232.28f},
      {"[2021-10-08 20:18:46,393] [INFO] [logging.py:68:log_dist] [Rank 0] rank=0 time (ms) | forward: 316.00 | "
       "backward: 747.31 | backward_inner: 514.96 | backward_allreduce: 232.28 | step: 663.59",
       0, 316.00f + 514.96f, 232.28f},
      {"time (ms) | forward_microstep: 193.65 | backward_microstep: 329.25 | backward_inner_microstep: 329.14 | "
       "backward_allreduce_microstep: 0.05 | step_microstep: 0.92",
       -1, 193.65f + 329.14f, 0.05f},
      // No *_inner split: the whole backward is compute.
      {"[2024-01-02 03:04:05,678] [INFO] [logging.py:96:log_dist] [Rank 3] time (ms) | fwd: 100.00 | bwd: 200.00 | "
       "step: 5.00",
       3, 300.0f, 0.0f},
  };
  for (const TimerCase& c : cases) {
    const ParsedLog log = Parse(std::string(c.line) + "\n");
    ASSERT_EQ(log.events.size(), 1u) << c.line;
    const Event& e = log.events[0];
    EXPECT_EQ(KindName(e.kind), "step_timers") << c.line;
    EXPECT_EQ(e.rank, c.rank) << c.line;
    const auto& t = std::get<StepTimers>(e.detail);
    EXPECT_NEAR(t.compute_ms, c.compute, 0.01) << c.line;
    EXPECT_NEAR(t.wait_ms, c.wait, 0.01) << c.line;
  }
  // Not timers: a value that is not a number, an optimizer-only breakdown with a bad field.
  EXPECT_TRUE(Parse("[2023-07-19 14:09:21,612] [INFO] [logging.py:96:log_dist] [Rank 1] time (ms) | fwd: n/a\n").events.empty());
  EXPECT_TRUE(Parse("time (ms) | fwd 12.0\n").events.empty());
  // A line a terminal's hard wrap cut after a field (its bwd_inner/bwd_allreduce tail on the next
  // line): its whole backward would read as compute and no wait. It stays the rank's step, of a
  // shape no whole line has (cut after a bar: 0; cut before one: not the whole line's shape).
  const char* whole = "[2026-03-02 09:00:13,098] [INFO] [logging.py:96:log_dist] [Rank 9] time (ms) | fwd: 411.84 | "
                      "bwd: 909.24 | bwd_inner: 808.53 | bwd_allreduce: 100.71 | step: 11.86\n";
  const char* after_bar = "[2026-03-02 09:00:13,098] [INFO] [logging.py:96:log_dist] [Rank 9] time (ms) | fwd: 411.84 | "
                          "bwd: 909.24 |\n";
  const char* before_bar = "[2026-03-02 09:00:13,098] [INFO] [logging.py:96:log_dist] [Rank 9] time (ms) | fwd: 411.84 | "
                           "bwd: 1871.72 \n";
  const auto shape = [&](const char* line) {
    const ParsedLog log = Parse(line);
    return log.events.size() == 1 ? std::get<StepTimers>(log.events[0].detail).shape : 7u;
  };
  EXPECT_NE(shape(whole), 0u);
  EXPECT_EQ(shape(after_bar), 0u);
  EXPECT_NE(shape(before_bar), shape(whole));
  EXPECT_NE(shape(before_bar), 0u);
}

// NCCL set-up WARNs as NCCL prints them (the bootstrap finding no interface, the duplicate GPU
// check), and the traceback's last line they end in.
TEST(Families, NcclSetupWarnsAndTheirTorchError) {
  ParsedLog log = Parse("gpu-0041:1592838:1592838 [2] bootstrap.cc:108 NCCL WARN Bootstrap : no socket interface found\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(FamilyName(log.events[0].family), "nccl");
  EXPECT_EQ(log.strings.Get(std::get<NcclWarn>(log.events[0].detail).text), "Bootstrap : no socket interface found");
  log = Parse("gpu-0220:4242:4242 [1] init.cc:872 NCCL WARN Duplicate GPU detected : rank 1753 and rank 1752 both on CUDA device 2a000\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(KindName(log.events[0].kind), "duplicate_gpu");
  log = Parse(
      "Traceback (most recent call last):\n"
      "  File \"/workspace/x.py\", line 1, in <module>\n"
      "    torch.distributed.barrier()\n"
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal "
      "error - please report this issue to the NCCL developers, NCCL version 2.21.5\n"
      "ncclInternalError: Internal check failed.\n"
      "Last error:\n"
      "Bootstrap : no socket interface found\n");
  ASSERT_GE(log.events.size(), 1u);
  EXPECT_EQ(log.strings.Get(std::get<PythonError>(log.events[0].detail).type), "torch.distributed.DistBackendError");
}

// The second line of a DistBackendError's message names NCCL's result (`ncclRemoteError: A call
// failed ...`): NCCL's word on the failed call, not an exception the application raised.
TEST(Families, NcclResultLineUnderDistBackendErrorIsNcclsWord) {
  const ParsedLog log = Parse(
      "[rank880]: Traceback (most recent call last):\n"
      "[rank880]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 4159, in "
      "barrier\n"
      "[rank880]:     work = group.barrier(opts=opts)\n"
      "[rank880]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
      "remote process exited or there was a network error, NCCL version 2.21.5\n"
      "[rank880]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
      "[rank880]: Last error:\n"
      "[rank880]: socketPollConnect: connect returned Connection timed out, exceeded error retry count (35)\n");
  for (const Event& e : log.events) {
    if (!std::holds_alternative<PythonError>(e.detail)) continue;
    EXPECT_EQ(FamilyName(e.family), FamilyName(Family::kNccl)) << log.strings.Get(std::get<PythonError>(e.detail).type);
  }
  EXPECT_TRUE(std::any_of(log.events.begin(), log.events.end(), [&](const Event& e) {
    const auto* pe = std::get_if<PythonError>(&e.detail);
    return pe != nullptr && log.strings.Get(pe->type) == "ncclRemoteError";
  }));
}

TEST(Chunks, ChunkedParseEqualsWholeFileParse) {
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += std::to_string(i % 16) + ": [rank" + std::to_string(i % 16) +
            "]:[E302 09:27:14.1 ProcessGroupNCCL.cpp:607] [PG 1 Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=5, NumelOut=5, Timeout(ms)=600000) ran for 600100 "
            "milliseconds before timing out.\n";
    text += "gpu-01:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n";
    if (i % 50 == 0) text += "srun: error: gpu-0" + std::to_string(i) + ": task 3: Killed\n";
  }
  const FileContext ctx{.file = 2, .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseLog(text, ctx);
  const ParsedLog chunked = ParseChunked(text, ctx, 4096);
  ASSERT_EQ(chunked.events.size(), whole.events.size());
  EXPECT_EQ(chunked.lines, whole.lines);
  EXPECT_EQ(chunked.last_line.line, whole.last_line.line);
  for (std::size_t i = 0; i < whole.events.size(); ++i) {
    EXPECT_EQ(chunked.events[i].line, whole.events[i].line) << i;
    EXPECT_EQ(chunked.events[i].offset, whole.events[i].offset) << i;
    EXPECT_EQ(chunked.strings.Get(chunked.events[i].signature), whole.strings.Get(whole.events[i].signature)) << i;
  }
}

// Progress lines of srun tasks (rank not known yet) spread over many chunks: the merge keeps
// one event per task and kind, as a single pass does, with the latest step and a slow run that
// crosses a chunk boundary starting where it really started.
TEST(Chunks, ChunkedProgressEqualsWholeFileParse) {
  std::string text;
  for (int step = 1; step <= 60; ++step) {
    for (int task = 0; task < 8; ++task) {
      const bool slow = task == 5 && step >= 17;
      text += std::to_string(task) + ": 2026-11-29 16:25:41.497 rank=" + std::to_string(task) + " step=" + std::to_string(step) +
              "/60 loss=5.8 data_ms=" + (slow ? "900.0" : "0.1") + " step_ms=1000.0\n";
      if (task % 3 == 0) {
        text += std::to_string(task) + ":  [2026-11-29 16:25:41] iteration        " + std::to_string(step) +
                "/      60 | consumed samples: 100 | elapsed time per iteration (ms): 1000.0 |\n";
      }
    }
  }
  const FileContext ctx{.file = 2, .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseLog(text, ctx);
  const ParsedLog chunked = ParseChunked(text, ctx, 2048);
  ASSERT_EQ(chunked.events.size(), whole.events.size());
  for (std::size_t i = 0; i < whole.events.size(); ++i) {
    ASSERT_EQ(chunked.events[i].kind, Kind::kIteration) << i;
    const auto& c = std::get<Iteration>(chunked.events[i].detail);
    const auto& w = std::get<Iteration>(whole.events[i].detail);
    EXPECT_EQ(chunked.events[i].task, whole.events[i].task) << i;
    EXPECT_EQ(chunked.events[i].line, whole.events[i].line) << i;
    EXPECT_EQ(c.iteration, w.iteration) << i;
    EXPECT_EQ(c.slow_since, w.slow_since) << i;
    EXPECT_EQ(c.slow_at, w.slow_at) << i;
  }
  std::int64_t slow_since = -1;
  for (const Event& e : whole.events) {
    if (e.task == 5 && std::get<Iteration>(e.detail).data_us > 0) slow_since = std::get<Iteration>(e.detail).slow_since;
  }
  EXPECT_EQ(slow_since, 17);
}

// Iteration lines are kept as compact records while the chunks are parsed and placed among the
// other events only after the merge: every event, iteration or not, stays where and what one
// pass over the file makes it, whatever the chunk size, across a requeue (its run's iteration
// lines are new events) and with tasks that first print in a later chunk.
TEST(Chunks, ChunkedIterationRecordsPlaceAsWholeFileParse) {
  std::string text;
  for (int run = 0; run < 2; ++run) {
    if (run == 1) text += "SLURM_JOB_ID=4242001 SLURM_RESTART_COUNT=1 SLURM_JOB_NODELIST=gpu-[0001-0016]\n";
    for (int step = 1; step <= 40; ++step) {
      for (int task = 0; task < 12; ++task) {
        if (task >= 6 + step / 8) continue;  // later tasks join later, so some first print in later chunks
        text += std::string(task < 10 ? " " : "") + std::to_string(task) + ":  [2026-11-29 16:" + std::to_string(10 + step) +
                ":0" + std::to_string(task % 10) + "] iteration " + std::to_string(step + 100 * run) +
                "/ 100000 | consumed samples: 100 | elapsed time per iteration (ms): 1000.0 |\n";
        if ((step * 12 + task) % 37 == 0) text += "srun: error: gpu-00" + std::to_string(10 + task) + ": task " + std::to_string(task) + ": Killed\n";
      }
    }
  }
  const FileContext ctx{.file = 2, .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseLog(text, ctx);
  ASSERT_GT(whole.events.size(), 30u);
  for (const std::size_t chunk : {std::size_t{1000}, std::size_t{2500}, std::size_t{7000}}) {
    const ParsedLog chunked = ParseChunked(text, ctx, chunk);
    EXPECT_TRUE(chunked.progress.empty());
    ASSERT_EQ(chunked.events.size(), whole.events.size()) << chunk;
    for (std::size_t i = 0; i < whole.events.size(); ++i) {
      const Event &c = chunked.events[i], &w = whole.events[i];
      EXPECT_EQ(c.kind, w.kind) << chunk << " " << i;
      EXPECT_EQ(c.line, w.line) << chunk << " " << i;
      EXPECT_EQ(c.offset, w.offset) << chunk << " " << i;
      EXPECT_EQ(c.time, w.time) << chunk << " " << i;
      EXPECT_EQ(c.task, w.task) << chunk << " " << i;
      EXPECT_EQ(c.file, w.file) << chunk << " " << i;
      if (w.kind == Kind::kIteration) {
        EXPECT_EQ(std::get<Iteration>(c.detail).iteration, std::get<Iteration>(w.detail).iteration) << chunk << " " << i;
      }
    }
  }
  // One pass's order: an iteration event sits where its task's first line of the run is, the
  // other events at their own lines.
  std::map<std::pair<int, std::int32_t>, std::uint32_t> first_line;  // (run, task) -> line
  int run = 0;
  std::uint32_t number = 0;
  for (std::size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) {
    const std::string_view line(text.data() + at, text.find('\n', at) - at);
    ++number;
    if (line.find("SLURM_RESTART_COUNT") != std::string_view::npos) ++run;
    if (line.find("] iteration ") != std::string_view::npos) first_line.try_emplace({run, std::stoi(std::string(line))}, number);
  }
  std::size_t iterations = 0;
  std::uint32_t last_place = 0;
  int event_run = 0;
  for (const Event& e : whole.events) {
    event_run += e.kind == Kind::kRequeue ? 1 : 0;
    const std::uint32_t place = e.kind == Kind::kIteration ? first_line.at({event_run, e.task}) : e.line;
    EXPECT_GT(place, last_place) << e.line;
    last_place = place;
    iterations += e.kind == Kind::kIteration ? 1 : 0;
  }
  EXPECT_EQ(iterations, 2u * 11u);  // 11 tasks in each run
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

TEST(Families, XidBodiesOfTheGpuCascadesInSyslogShape) {
  struct X {
    const char* line;
    int code;
    std::int64_t pid;
  };
  const std::string p = "Mar  2 09:00:21 gpu-0084 kernel: [2726584.934322] ";
  for (const X& c : {
           X{"NVRM: Xid (PCI:0000:ab:00): 94, pid=2000550, name=python3, Contained: SM (0x1). RST: No, D-RST: No", 94, 2000550},
           X{"NVRM: Xid (PCI:0000:ab:00): 95, pid='<unknown>', Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", 95, -1},
           X{"NVRM: Xid (PCI:0000:ab:00): 154, pid='<unknown>', name=<unknown>, GPU recovery action changed from 0x0 (None) "
             "to 0x1 (GPU Reset Required)",
             154, -1},
           X{"NVRM: Xid (PCI:0000:ab:00): 119, pid=805, name=nv_queue, Timeout after 6s of waiting for RPC response from GPU5 "
             "GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).",
             119, 805},
           X{"NVRM: Xid (PCI:0000:ab:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 7", 74, -1},
       }) {
    const ParsedLog log = Parse(p + c.line + "\n", true);
    const auto& x = Only<Xid>(log);
    EXPECT_EQ(x.code, c.code) << c.line;
    EXPECT_EQ(x.pid, c.pid) << c.line;
    EXPECT_EQ(log.strings.Get(x.pci), "0000:ab:00");
  }
}

TEST(Families, NvidiaSmiRowsGiveEachIndexItsBusId) {
  const ParsedLog log = Parse(
      "Unable to determine the device handle for GPU0000:AB:00.0: Unknown Error\n"
      "Mon Mar  2 09:10:23 2026       \n"
      "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
      "|=========================================+======================+======================|\n"
      "|   3  NVIDIA H100 80GB HBM3          On  | 00000000:5D:00.0 Off |                    0 |\n"
      "| N/A   33C    P0             113W / 700W |      4MiB / 81559MiB |      0%      Default |\n"
      "|  12  NVIDIA A100-SXM4-80GB          On  | 00000009:0A:00.0 Off |                    0 |\n");
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0].kind, Kind::kGpuUnreachable);
  EXPECT_EQ(log.strings.Get(std::get<GpuSlot>(log.events[0].detail).pci), "0000:ab:00");
  EXPECT_EQ(log.events[1].kind, Kind::kGpuSlot);
  EXPECT_EQ(std::get<GpuSlot>(log.events[1].detail).index, 3);
  EXPECT_EQ(log.strings.Get(std::get<GpuSlot>(log.events[1].detail).pci), "0000:5d:00");
  EXPECT_EQ(std::get<GpuSlot>(log.events[2].detail).index, 12);
  EXPECT_EQ(log.strings.Get(std::get<GpuSlot>(log.events[2].detail).pci), "0009:0a:00");
}

TEST(Families, NcclBusIdOfEverySpellingIsNormalised) {
  const ParsedLog log = Parse(
      "gpu-0001:31243:31243 [3] NCCL INFO comm 0x55d0c8a4e0 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 5d000 commId "
      "0x7a1b - Init COMPLETE\n");
  EXPECT_EQ(log.strings.Get(Only<CommInit>(log).pci), "0000:5d:00");
  char buf[16];
  EXPECT_EQ(NcclBusIdToPci("9b000", buf), "0000:9b:00");
  EXPECT_EQ(NcclBusIdToPci("1801000", buf), "0018:01:00");
  EXPECT_EQ(NcclBusIdToPci("12", buf), "");
  EXPECT_EQ(NormalisePci("PCI:0000:18:00", buf), "0000:18:00");
  EXPECT_EQ(NormalisePci("0000:18:00.0", buf), "0000:18:00");
  EXPECT_EQ(NormalisePci("00000000:18:00.0", buf), "0000:18:00");
}

TEST(Families, CudaErrorWithTheHintLinesOfEachEraIsOneEvent) {
  for (const char* text : {
           "Traceback (most recent call last):\n"
           "  File \"/workspace/megatron-lm/pretrain_gpt.py\", line 166, in loss_func\n"
           "    num_tokens = loss_mask.sum().clone().detach().to(torch.int)\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n"
           "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be "
           "incorrect.\n"
           "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n",
           "[rank5]: Traceback (most recent call last):\n"
           "[rank5]:   File \"/workspace/megatron-lm/pretrain_gpt.py\", line 166, in loss_func\n"
           "[rank5]:     num_tokens = loss_mask.sum().clone().detach().to(torch.int)\n"
           "[rank5]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
           "[rank5]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
           "might be incorrect.\n"
           "[rank5]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
           "[rank5]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
           "[rank5]: \n",
       }) {
    const ParsedLog log = Parse(text);
    ASSERT_EQ(log.events.size(), 1u) << text;
    EXPECT_EQ(log.events[0].family, Family::kCuda);
    EXPECT_EQ(log.events[0].line, 4u);
  }
}

TEST(Families, TorchOomOf21And24AsTheSimulatorWritesThem) {
  ExpectEach({
      {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacty of 79.15 GiB "
       "of which 464.00 MiB is free. Including non-PyTorch memory, this process has 78.69 GiB memory in use. Of the "
       "allocated memory 75.47 GiB is allocated by PyTorch, and 2.63 GiB is reserved by PyTorch but unallocated. If "
       "reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation "
       "for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
       Family::kCudaOom, Kind::kCudaOom},
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of 79.15 GiB of "
       "which 464.00 MiB is free. Including non-PyTorch memory, this process has 78.69 GiB memory in use. Of the allocated "
       "memory 75.47 GiB is allocated by PyTorch, and 2.63 GiB is reserved by PyTorch but unallocated. If reserved but "
       "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
       "See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
       Family::kCudaOom, Kind::kCudaOom},
  });
}

// The recogniser table (recognisers.h): a row applies only where it says, and a message with no
// header only on the first bytes its row admits.
TEST(RecogniserTable, EveryRowSaysWhereItAppliesAndHasAFunction) {
  ASSERT_FALSE(RecogniserTable().empty());
  for (const RecogniserRow& row : RecogniserTable()) {
    EXPECT_FALSE(row.name.empty());
    EXPECT_NE(row.where, 0u) << row.name;
    EXPECT_EQ(row.where & ~(kAnywhere | kAgentQuote), 0u) << row.name;
    EXPECT_NE(row.recognise, nullptr) << row.name;
  }
}

// Each recogniser's trigger literals are in its first row (the pre-filter passes the lines it can
// read); the c10 note's lines are found by the parser's own `[E`, `[F` (file_parser.cc).
TEST(RecogniserTable, EveryRecogniserHasItsTriggerLiteralsInItsFirstRow) {
  std::vector<Recogniser> seen;
  for (const RecogniserRow& row : RecogniserTable()) {
    const bool first = std::find(seen.begin(), seen.end(), row.recognise) == seen.end();
    seen.push_back(row.recognise);
    if (row.name == "c10 error note") continue;
    EXPECT_EQ(row.triggers.empty(), !first) << row.name;
  }
}

TEST(RecogniserTable, AMessageIsReadOnlyWhereItsRowApplies) {
  constexpr std::string_view kSrun = "srun: error: node-3: task 5: Exited with exit code 1";
  StringTable strings;
  Recognised r;
  ASSERT_TRUE(Recognise(kText, kSrun, &strings, &r));
  EXPECT_EQ(KindName(r.kind), KindName(Kind::kTaskExit));
  r = {};
  EXPECT_FALSE(Recognise(kIndented, kSrun, &strings, &r));  // Slurm's rows are for text, `[`, `*`, `_`
  r = {};
  EXPECT_FALSE(Recognise(kDeepSpeedLog, kSrun, &strings, &r));  // ... and no header's
}

TEST(RecogniserTable, AC10ErrorLineNoFamilyTakesIsKeptAsANote) {
  constexpr std::string_view kMsg = "Rank 3 exited while the collective was still in flight";
  StringTable strings;
  Recognised r;
  ASSERT_TRUE(Recognise(kC10 | kC10Error, kMsg, &strings, &r));
  EXPECT_EQ(FamilyName(r.family), FamilyName(Family::kOther));
  ASSERT_TRUE(std::holds_alternative<Note>(r.detail));
  EXPECT_EQ(strings.Get(std::get<Note>(r.detail).text), kMsg);
  r = {};
  EXPECT_FALSE(Recognise(kC10, kMsg, &strings, &r));  // a warning's text is not kept
}

}  // namespace
}  // namespace denpex::engine
