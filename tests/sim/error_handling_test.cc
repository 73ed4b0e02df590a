// The torch runtime knobs that decide how a timed-out rank ends (docs/scenario_format.md,
// `timeouts`): TORCH_NCCL_ASYNC_ERROR_HANDLING 0-3, TORCH_NCCL_BLOCKING_WAIT and a watchdog
// stuck in ncclCommAbort that the heartbeat monitor kills; each prints its real shapes per
// torch profile and ends the processes as torch does, and the truth does not move.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "denpex/common/time.h"
#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

// 4 nodes x 8 GPUs, TP2 x PP2 x DP8; rank 13 hangs.
constexpr const char* kHang = R"(name: "modes"
seed: 5
job { nodes: 4 tp: 2 pp: 2 }
format { torch: "2.4" }
training { warmup_steps: 3 }
faults { kind: FAULT_KIND_HANG rank: 13 }
)";

struct Counts {
  int files_with_timeout = 0, take_down = 0, some_failed = 0;
  std::map<std::string, int> text;  // occurrences of each probe
};

Counts Scan(const fs::path& out, std::vector<std::string> probes) {
  Counts c;
  for (const auto& [path, text] : ReadTree(out / "incident")) {
    if (text.find("Watchdog caught collective operation timeout") != std::string::npos) ++c.files_with_timeout;
    if (text.find("we are taking the entire process down") != std::string::npos) ++c.take_down;
    if (text.find("Some NCCL operations have failed or timed out") != std::string::npos) ++c.some_failed;
    for (const std::string& p : probes) {
      for (std::size_t at = text.find(p); at != std::string::npos; at = text.find(p, at + 1)) ++c.text[p];
    }
  }
  return c;
}

TEST(ErrorHandling, CleanUpOnlyAbortsTheCommunicatorsAndTheMainThreadRaises) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kHang, {"timeouts.async_error_handling=2"}), out);
  EXPECT_EQ(r.truth.initiator().rank(), 13);
  const Counts c = Scan(out, {"torch.distributed.DistBackendError: NCCL communicator was aborted on rank ",
                              "failed (exitcode: 1)", "failed (exitcode: -6)"});
  EXPECT_GT(c.files_with_timeout, 5);
  EXPECT_EQ(c.take_down, 0);  // mode 2 never takes the process down itself
  EXPECT_EQ(c.some_failed, c.files_with_timeout);
  EXPECT_GT(c.text.at("torch.distributed.DistBackendError: NCCL communicator was aborted on rank "), 0);
  EXPECT_GT(c.text.at("failed (exitcode: 1)"), 0);  // the agents see exit 1, not SIGABRT
  EXPECT_EQ(c.text.count("failed (exitcode: -6)"), 0u);
}

TEST(ErrorHandling, NoHandlingLogsTheTimeoutAndTheJobHangsOn) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kHang, {"timeouts.async_error_handling=0"}), out);
  EXPECT_EQ(r.truth.initiator().rank(), 13);
  const Counts c = Scan(out, {"failed (exitcode"});
  EXPECT_GT(c.files_with_timeout, 5);
  EXPECT_EQ(c.take_down, 0);
  EXPECT_EQ(c.some_failed, c.files_with_timeout);
  EXPECT_EQ(c.text.count("failed (exitcode"), 0u);  // nobody exits: the logs are collected while it hangs
  EXPECT_GT(ParseRfc3339(r.truth.job().end_time()).value(), ParseRfc3339(r.truth.job().fault_time()).value());
}

TEST(ErrorHandling, BlockingWaitRaisesTheTimeoutInThePythonThreadPerTorchVersion) {
  const std::pair<const char*, const char*> versions[] = {
      {"1.13", "timed out in blocking wait (NCCL_BLOCKING_WAIT=1)."},
      {"2.4", "timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1)."},
      {"2.6", "timed out in blocking wait.\n"}};
  for (const auto& [torch, shape] : versions) {
    SCOPED_TRACE(torch);
    const fs::path out = FreshDir(std::string("_") + torch);
    const SimulateResult r =
        MustSimulate(MustParse(kHang, {std::string("format.torch=") + torch, "timeouts.blocking_wait=true"}), out);
    EXPECT_EQ(r.truth.initiator().rank(), 13);
    const std::string raised = std::string(torch) == "2.4" || std::string(torch) == "2.6"
                                   ? "torch.distributed.DistBackendError: [PG "
                                   : "RuntimeError: [Rank ";
    const Counts c = Scan(out, {shape, raised, "    work.wait()"});
    EXPECT_GT(c.text.count(shape) ? c.text.at(shape) : 0, 5);
    EXPECT_GT(c.text.count(raised) ? c.text.at(raised) : 0, 5);
    EXPECT_GT(c.take_down, 5);
  }
}

TEST(ErrorHandling, StuckCommAbortIsKilledByTheHeartbeatMonitorAfterItsTimeout) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kHang, {"timeouts.async_error_handling=1", "timeouts.watchdog_stuck_fraction=1",
                        "timeouts.heartbeat_timeout_ms=300000"}),
      out);
  EXPECT_EQ(r.truth.initiator().rank(), 13);
  const Counts c = Scan(out, {"Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
                              "workMetaList_.size()=",
                              "ProcessGroupNCCL's watchdog got stuck for 300 seconds", "failed (exitcode: -6)"});
  EXPECT_GT(c.text.at("ProcessGroupNCCL's watchdog got stuck for 300 seconds"), 0);
  EXPECT_EQ(c.text.at("ProcessGroupNCCL's watchdog got stuck for 300 seconds"),
            c.text.at("Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
                      "workMetaList_.size()="));
  EXPECT_GT(c.text.at("failed (exitcode: -6)"), 0);
  EXPECT_EQ(c.take_down, 0);  // the watchdog never got as far as handleException
  // The fatal line repeats the group prefix, as torch's LOG(FATAL) << logPrefix() << msg does.
  static const std::regex kFatal(R"(\[F\d+ [\d:.]+ ProcessGroupNCCL\.cpp:\d+\] (\[PG [^\]]+\]) \1 ProcessGroupNCCL's watchdog got stuck)");
  bool fatal = false;
  for (const auto& [path, text] : ReadTree(out / "incident")) fatal |= std::regex_search(text, kFatal);
  EXPECT_TRUE(fatal);
}

TEST(ErrorHandling, KnobsTheProfileCannotHaveAreRejectedWithPositionAndHint) {
  struct Bad {
    const char* text;
    const char* where;
    const char* what;
  };
  const Bad cases[] = {
      {"format { torch: \"1.13\" }\ntimeouts { async_error_handling: 3 }\n", "bad.textproto:3:",
       "(SkipCleanUp) does not exist in torch 1.13"},
      {"timeouts { async_error_handling: 7 }\n", "bad.textproto:2:", "must be 0, 1, 2 or 3"},
      {"format { torch: \"2.1\" }\ntimeouts { async_error_handling: 1 watchdog_stuck_fraction: 0.5 }\n",
       "bad.textproto:3:", "which torch 2.1 does not have"},
      {"timeouts { async_error_handling: 3 watchdog_stuck_fraction: 0.5 }\n", "bad.textproto:2:",
       "can get stuck in ncclCommAbort"},
      {"realism { interleaved_line_rate: 0.01 }\n", "bad.textproto:2:", "needs the combined srun output"},
      {"launcher: LAUNCHER_SRUN\nrealism { interleaved_line_rate: 0.5 }\n", "bad.textproto:3:",
       "must be in [0, 0.05]"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.text);
    auto s = ParseScenario(std::string("name: \"x\"\n") + b.text +
                               "job { nodes: 4 tp: 2 pp: 2 }\nfaults { kind: FAULT_KIND_HANG }\n",
                           "bad.textproto");
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.status().message(), HasSubstr(b.where));
    EXPECT_THAT(s.status().message(), HasSubstr(b.what));
    EXPECT_THAT(s.status().message(), HasSubstr("hint: "));
  }
}

}  // namespace
}  // namespace denpex::sim
