// The step schedule and trainer knobs of `training` (docs/scenario_format.md): 1F1B pipeline
// microbatches, DDP vs ZeRO/FSDP data parallelism, Megatron vs DeepSpeed step lines; what the
// watchdogs name under each, the flight-recorder lines of timeouts.dump_on_timeout, and that
// bad values are rejected with a position and a hint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_util;

// 8 nodes x 8 GPUs: TP2 x PP2 x DP16; rank 13 (node 1, stage 0) hangs mid-step. Its TP and
// PP peers (nodes 1 and 5) time out first; its DP peers on nodes 0, 2 and 3 finished their
// own replicas' passes and wait in the DP sync until their own watchdogs fire.
constexpr const char* kPipeline = R"(name: "pipeline"
seed: 4
job { nodes: 8 tp: 2 pp: 2 }
training { warmup_steps: 3 microbatches: 6 }
faults { kind: FAULT_KIND_HANG rank: 13 }
)";

// Every watchdog's "OpType=..., NumelIn=..., NumelOut=..." in the incident.
std::multiset<std::string> WatchdogOps(const fs::path& out) {
  static const std::regex kWork(R"(Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=\d+, (OpType=\w+, NumelIn=\d+, NumelOut=\d+))");
  std::multiset<std::string> ops;
  for (const auto& [path, text] : ReadTree(out / "incident")) {
    for (std::sregex_iterator it(text.begin(), text.end(), kWork), end; it != end; ++it) {
      ops.insert((*it)[1]);
    }
  }
  return ops;
}

TEST(JobModel, OneFOneBWithZeroNamesPipelineTensorAndShardedDataParallelOps) {
  const fs::path out = FreshDir();
  const SimulateResult r =
      MustSimulate(MustParse(kPipeline, {"training.data_parallel=DATA_PARALLEL_ZERO"}), out);
  EXPECT_EQ(r.truth.initiator().rank(), 13);
  const auto ops = WatchdogOps(out);
  ASSERT_FALSE(ops.empty());
  // The hung rank's DP peers wait to reduce-scatter the gradient bucket (40 M elements) into
  // 1/dp shards.
  EXPECT_GT(ops.count("OpType=_REDUCE_SCATTER_BASE, NumelIn=40000000, NumelOut=2500000"), 0u);
  for (const std::string& op : ops) {
    EXPECT_TRUE(op.starts_with("OpType=_REDUCE_SCATTER_BASE") || op.starts_with("OpType=RECV") ||
                op.starts_with("OpType=SEND") || op.starts_with("OpType=ALLREDUCE, NumelIn=16777216"))
        << op;  // no DDP all-reduce of the 40 M bucket under ZeRO
  }
}

TEST(JobModel, DdpAllReducesTheBucketAndMicrobatchesAdvanceThePipelineSeqNum) {
  const fs::path one = FreshDir("_1"), six = FreshDir("_6");
  MustSimulate(MustParse(kPipeline, {"training.microbatches=1"}), one);
  MustSimulate(MustParse(kPipeline), six);
  EXPECT_GT(WatchdogOps(six).count("OpType=ALLREDUCE, NumelIn=40000000, NumelOut=40000000"), 0u);
  // The highest SeqNum a PIPELINE group's watchdog reports: with 6 microbatches stage 0 issues
  // 7 p2p operations a step (1 warm-up send, 5 batched send+recv, 1 cool-down recv), not 2.
  const auto max_pp_seq = [](const fs::path& out) {
    static const std::regex kPp(R"(PIPELINE_MODEL_PARALLEL_GROUP\) Rank \d\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+))");
    int best = 0;
    for (const auto& [path, text] : ReadTree(out / "incident")) {
      for (std::sregex_iterator it(text.begin(), text.end(), kPp), end; it != end; ++it) {
        best = std::max(best, std::stoi((*it)[1]));
      }
    }
    return best;
  };
  // Three healthy steps before the hang: 3 x 2 (+ the hung step's) against 3 x 7 (+ ...).
  EXPECT_GT(max_pp_seq(one), 0);
  EXPECT_LE(max_pp_seq(one), 3 * 2 + 2);
  EXPECT_GE(max_pp_seq(six), 3 * 7);
}

TEST(JobModel, DeepSpeedTrainerLinesComeFromRankZero) {
  const fs::path out = FreshDir();
  // An exception exits normally (code 1): rank 0 is SIGTERMed, so give it enough steps for
  // its 4 KiB stdout buffer to have been written out several times.
  MustSimulate(MustParse(kPipeline, {"training.trainer_log=TRAINER_LOG_DEEPSPEED",
                                     "training.warmup_steps=40", "faults[0].kind=FAULT_KIND_EXCEPTION"}),
               out);
  const std::string rank0 = ReadAll(out / "incident" / "gpu-0001" / "rank_0.log");
  EXPECT_TRUE(std::regex_search(rank0, std::regex(R"((^|\n)\[2026-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[INFO\] \[logging\.py:96:log_dist\] \[Rank 0\] step=1, skipped=0, lr=\[7\.5e-08\], mom=\[\[0\.9, 0\.95\]\]\n)")))
      << rank0.substr(0, 2000);
  EXPECT_TRUE(std::regex_search(rank0, std::regex(R"(\] \[INFO\] \[timer\.py:215:stop\] epoch=0/micro_step=12/global_step=2, RunningAvgSamplesPerSec=[0-9.]+, CurrSamplesPerSec=[0-9.]+, MemAllocated=[0-9.]+GB, MaxMemAllocated=[0-9.]+GB\n)")));
  EXPECT_THAT(ReadAll(out / "incident" / "gpu-0008" / "rank_63.log"), Not(HasSubstr("iteration")));
}

// TORCH_NCCL_DUMP_ON_TIMEOUT: each timed-out rank prints the flight-recorder lines between
// its timeout report and "Some NCCL operations ...", the monitor's for default_pg.
// A timed-out rank either signals the dump itself ("from this local rank", then the abort) or
// its heartbeat monitor found the first detector's signal in the TCPStore earlier ("from  rank
// N", N the same for everyone), and its watchdog then aborts without dumping again.
TEST(FlightRecorder, EveryTimedOutRankSignalsTheDumpBeforeItIsTakenDown) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kPipeline, {"format.torch=2.6", "timeouts.dump_on_timeout=true"}), out);
  int blocks = 0, local = 0, remote = 0;
  std::set<std::string> detectors;
  static const std::regex kFrom(R"(Received a dump signal due to a collective timeout from  rank (\d+) and)");
  for (const auto& [path, text] : ReadTree(out / "incident")) {
    const std::size_t caught = text.find("Watchdog caught collective operation timeout");
    if (caught == std::string::npos || path.find("rank_") == std::string::npos) continue;
    ++blocks;
    const std::size_t not_found = text.find("] Stack trace of the failed collective not found", caught);
    const std::size_t some_failed = text.find("Some NCCL operations have failed", caught);
    ASSERT_NE(some_failed, std::string::npos) << path;
    EXPECT_LT(not_found, some_failed) << path;
    std::smatch m;
    const std::size_t observed = text.find("Observed flight recorder dump signal from another rank via TCPStore.");
    if (observed != std::string::npos) {
      ++remote;
      EXPECT_LT(observed, caught) << path;
      ASSERT_TRUE(std::regex_search(text, m, kFrom)) << path;
      detectors.insert(m[1]);
      EXPECT_EQ(text.find("First PG on this rank to signal dumping.", caught), std::string::npos) << path;
      continue;
    }
    ++local;
    const std::size_t first = text.find("] First PG on this rank to signal dumping.\n", caught);
    const std::size_t signal = text.find("(default_pg) Rank ", first);
    const std::size_t received = text.find(
        "Received a dump signal due to a collective timeout from this local rank and we will try "
        "our best to dump the debug info. Last enqueued NCCL work: ", caught);
    const std::size_t preparing =
        text.find("ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1\n", caught);
    EXPECT_LT(not_found, first) << path;
    EXPECT_LT(first, signal) << path;
    EXPECT_LT(signal, received) << path;
    EXPECT_LT(received, preparing) << path;
    EXPECT_LT(preparing, some_failed) << path;
  }
  EXPECT_GT(blocks, 10);
  EXPECT_GT(local, 0);
  EXPECT_LE(detectors.size(), 1u);  // one first detector, named by everyone who saw its signal
}

TEST(FlightRecorder, NeedsATorchWithAFlightRecorder) {
  auto s = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
format { torch: "2.1" }
timeouts { dump_on_timeout: true }
faults { kind: FAULT_KIND_HANG }
)", "fr.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("fr.textproto:4:"));
  EXPECT_THAT(s.status().message(),
              HasSubstr("timeouts.dump_on_timeout needs the flight recorder, which torch 2.1"));
  EXPECT_THAT(s.status().message(), HasSubstr("set format.torch to 2.4 or later"));
}

TEST(JobModel, BadMicrobatchesAreRejectedWithPositionAndHint) {
  auto s = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
training { microbatches: 65 }
faults { kind: FAULT_KIND_HANG }
)", "bad.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("bad.textproto:3:"));
  EXPECT_THAT(s.status().message(), HasSubstr("training.microbatches is at most 64"));
  s = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
training { microbatches: 64 tp_collectives_per_step: 300 }
faults { kind: FAULT_KIND_HANG }
)", "big.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("big.textproto:3:"));
  s = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
training { data_parallel: DATA_PARALLEL_ZERO3 }
faults { kind: FAULT_KIND_HANG }
)", "enum.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("enum.textproto:3:"));
  EXPECT_THAT(s.status().message(), HasSubstr("DATA_PARALLEL_ZERO"));
}

}  // namespace
}  // namespace denpex::sim
