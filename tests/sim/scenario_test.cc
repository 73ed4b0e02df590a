// Scenario loading: strict parsing, located error messages with hints, --set overrides and
// documented defaults (docs/scenario_format.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denpex/sim/simulator.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kSmall = R"(name: "small"
job {
  nodes: 2
  tp: 4
  pp: 2
}
faults { kind: FAULT_KIND_SIGKILL rank: 3 }
)";

Status ParseError(std::string_view text, std::vector<std::string> overrides = {}) {
  auto r = ParseScenario(text, "s.textproto", overrides);
  EXPECT_FALSE(r.ok());
  return r.status();
}

TEST(Scenario, TypoInFieldNameNamesLineColumnAndSuggestsTheField) {
  const Status st = ParseError("name: \"x\"\njob {\n  node: 5\n}\n");
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_THAT(st.message(), StartsWith("s.textproto:3:3: unknown field 'node' in 'job'"));
  EXPECT_THAT(st.message(), HasSubstr("hint: did you mean 'nodes'?"));
}

// A non-UTF-8 string is an error at its line and column (protobuf alone would drop it with a note
// on stderr, and the truth would lose it).
TEST(Scenario, InvalidUtf8IsAnErrorAtItsLineAndColumn) {
  const Status st = ParseError("name: \"x\"\ndescription: \"caf\xe9 cr\xe8me\"\njob { nodes: 1 }\n");
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_THAT(st.message(), StartsWith("s.textproto:2:18: byte 0xe9 is not valid UTF-8"));
  EXPECT_TRUE(ParseScenario("name: \"caf\xc3\xa9\"\njob { nodes: 1 }\nfaults { kind: 1 }\n", "u").ok());
}

TEST(Scenario, UnknownTopLevelFieldListsValidFieldsWhenNothingIsClose) {
  const Status st = ParseError("job { nodes: 1 }\nzzzzzzzzzz: 1\n");
  EXPECT_THAT(st.message(), StartsWith("s.textproto:2:1: unknown field 'zzzzzzzzzz'"));
  EXPECT_THAT(st.message(), HasSubstr("hint: valid fields here are: name, description, seed"));
}

TEST(Scenario, BadEnumValueNamesItsColumnAndSuggestsTheValue) {
  const Status st = ParseError("job { nodes: 1 }\nfaults { kind: FAULT_KIND_SIGKIL }\n");
  EXPECT_THAT(st.message(), StartsWith("s.textproto:2:16: unknown value 'FAULT_KIND_SIGKIL'"));
  EXPECT_THAT(st.message(), HasSubstr("did you mean 'FAULT_KIND_SIGKILL'?"));
}

TEST(Scenario, NumericEnumOutsideTheEnumIsRejected) {
  const Status st = ParseError("job { nodes: 1 }\nfaults { kind: 77 }\n");
  EXPECT_THAT(st.message(), StartsWith("s.textproto:2:10: faults[0].kind is missing or unknown"));
}

TEST(Scenario, SyntaxErrorsCarryLocationAndHint) {
  EXPECT_THAT(ParseError("job { nodes: abc }\n").message(),
              StartsWith("s.textproto:1:14: Expected integer, got: abc; hint:"));
  EXPECT_THAT(ParseError("job { nodes: 1\n").message(),
              HasSubstr("unexpected end of the file; hint: a '{' block is probably missing"));
}

TEST(Scenario, LayoutMismatchPointsAtTheJobBlock) {
  const Status st = ParseError(
      "name: \"x\"\n\n  job { nodes: 4 tp: 8 pp: 2 dp: 4 }\n"
      "faults { kind: FAULT_KIND_SIGKILL }\n");
  EXPECT_THAT(st.message(), StartsWith("s.textproto:3:3: tp*pp*dp = 8*2*4 = 64 but the job has "
                                       "4 nodes x 8 GPUs = 32 ranks; hint: set dp: 2"));
}

TEST(Scenario, TensorParallelGroupsMustFitInANode) {
  const Status st = ParseError("job { nodes: 4 gpus_per_node: 8\n tp: 16 }\nfaults { kind: 1 }\n");
  EXPECT_THAT(st.message(),
              StartsWith("s.textproto:2:2: job.tp 16 does not divide gpus_per_node 8"));
}

TEST(Scenario, FaultRankOutOfRangeIsLocated) {
  const Status st =
      ParseError("job { nodes: 2 }\nfaults {\n  kind: FAULT_KIND_SIGKILL\n  rank: 16\n}\n");
  EXPECT_THAT(st.message(), StartsWith("s.textproto:4:3: faults[0].rank 16 is outside the job's "
                                       "ranks [0, 16)"));
}

TEST(Scenario, SemanticRulesAreEnforced) {
  EXPECT_THAT(ParseError("job { nodes: 0 }\nfaults { kind: 1 }").message(),
              HasSubstr("job.nodes must be at least 1"));
  EXPECT_THAT(ParseError("job { nodes: 1 }").message(),
              StartsWith("s.textproto:1:1: the scenario injects no fault"));
  EXPECT_THAT(ParseError("job { nodes: 1 }\nfaults { kind: 1 at_fraction: 1.0 }").message(),
              StartsWith("s.textproto:2:18: faults[0].at_fraction must be in [0, 1) (got 1)"));
  EXPECT_THAT(ParseError("job { nodes: 1 }\nfaults { kind: 1 step: -1 }").message(),
              HasSubstr("faults[0].step must not be negative"));
  EXPECT_THAT(ParseError("job { nodes: 1 }\ntimeouts { nccl_timeout_ms: -5 }\nfaults { kind: 1 }")
                  .message(),
              StartsWith("s.textproto:2:12: timeouts.nccl_timeout_ms must not be negative"));
  EXPECT_THAT(
      ParseError("job { nodes: 1 }\nformat { torch: \"2.2\" }\nfaults { kind: 1 }").message(),
      StartsWith("s.textproto:2:10: torch profile \"2.2\" is not a known release; hint: use "
                 "\"1.13\", \"2.1\", \"2.4\" or \"2.6\""));
  EXPECT_THAT(ParseError("job { nodes: 1 }\nformat { nccl: \"9\" }\nfaults { kind: 1 }").message(),
              HasSubstr("nccl profile \"9\" is not a known release"));
  EXPECT_THAT(ParseError("job { nodes: 1 }\nstart_time: \"noon\"\nfaults { kind: 1 }").message(),
              StartsWith("s.textproto:2:1: start_time \"noon\" is not RFC 3339"));
}

TEST(Scenario, DefaultsAreFilledAsDocumented) {
  auto s = ParseScenario("job { nodes: 2 }\nfaults { kind: FAULT_KIND_SIGKILL }\n", "d");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->job().gpus_per_node(), 8);
  EXPECT_EQ(s->job().tp(), 1);
  EXPECT_EQ(s->job().pp(), 1);
  EXPECT_EQ(s->job().dp(), 16);
  EXPECT_EQ(s->job().hostname_prefix(), "gpu-");
  EXPECT_EQ(s->job().job_id(), 4242001);
  EXPECT_EQ(s->timeouts().nccl_timeout_ms(), 600000);
  EXPECT_EQ(s->timeouts().monitor_interval_ms(), 100);
  EXPECT_EQ(s->timeouts().sigterm_grace_ms(), 30000);
  EXPECT_EQ(s->launcher(), v1::LAUNCHER_TORCHRUN);
  EXPECT_EQ(s->format().torch(), "2.4");
  EXPECT_EQ(s->format().nccl(), "2.21.5");
  EXPECT_EQ(s->training().warmup_steps(), 20);
  EXPECT_EQ(s->training().step_time_ms(), 1500);
  EXPECT_EQ(s->training().tp_collectives_per_step(), 4);
  EXPECT_EQ(s->training().log_interval(), 1);
  EXPECT_DOUBLE_EQ(s->training().compute_jitter(), 0.02);
  EXPECT_DOUBLE_EQ(s->clocks().skew_sigma_ms(), 50);
  EXPECT_EQ(s->start_time(), "2026-03-02T09:00:00Z");
  EXPECT_EQ(s->faults(0).step(), 20);            // defaults to warmup_steps
  EXPECT_FALSE(s->faults(0).has_rank());         // drawn at simulation time
  EXPECT_FALSE(s->faults(0).has_at_fraction());  // drawn at simulation time
}

TEST(Scenario, ZeroSkewIsKeptBecauseItIsExplicit) {
  auto s = ParseScenario("job { nodes: 1 }\nclocks { skew_sigma_ms: 0 }\nfaults { kind: 1 }", "d");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->clocks().skew_sigma_ms(), 0);
}

TEST(Scenario, SetOverridesSingularFieldsOfEveryType) {
  const std::vector<std::string> sets = {"job.nodes=4",
                                         "faults[0].rank=31",
                                         "format.nccl_debug_info=true",
                                         "name=renamed",
                                         "training.compute_jitter=0.1",
                                         "launcher=LAUNCHER_TORCHRUN",
                                         "faults[0].kind=1",
                                         "seed=99"};
  auto s = ParseScenario(kSmall, "s", sets);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->job().nodes(), 4);
  EXPECT_EQ(s->job().dp(), 4);  // derived from the overridden shape
  EXPECT_EQ(s->faults(0).rank(), 31);
  EXPECT_TRUE(s->format().nccl_debug_info());
  EXPECT_EQ(s->name(), "renamed");
  EXPECT_DOUBLE_EQ(s->training().compute_jitter(), 0.1);
  EXPECT_EQ(s->seed(), 99u);
}

TEST(Scenario, SetWithABadPathSuggestsTheField) {
  const Status st = ParseError(kSmall, {"job.node=4"});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "--set job.node=4: no field 'node' in 'job'; hint: did you mean 'nodes'?");
  EXPECT_THAT(ParseError(kSmall, {"faults.rank=1"}).message(), HasSubstr("'faults' is repeated"));
  EXPECT_THAT(ParseError(kSmall, {"faults[3].rank=1"}).message(),
              HasSubstr("'faults' has 1 entries"));
  EXPECT_THAT(ParseError(kSmall, {"job=1"}).message(), HasSubstr("'job' is a block"));
  EXPECT_THAT(ParseError(kSmall, {"job.nodes"}).message(), HasSubstr("expected field.path=value"));
  EXPECT_THAT(ParseError(kSmall, {"job.nodes=many"}).message(),
              HasSubstr("'many': expected a 32-bit integer"));
  EXPECT_THAT(ParseError(kSmall, {"launcher=LAUNCHER_SLURM"}).message(),
              HasSubstr("valid values: LAUNCHER_UNSPECIFIED, LAUNCHER_TORCHRUN"));
}

TEST(Scenario, SemanticErrorFromAnOverrideNamesTheOverride) {
  const Status st = ParseError(kSmall, {"faults[0].rank=999"});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), StartsWith("--set faults[0].rank=999: faults[0].rank 999 is outside"));
}

TEST(Scenario, EmbeddedDefaultScenarioParses) {
  auto s = ParseScenario(DefaultScenarioText(), "default");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->job().nodes() * s->job().gpus_per_node(), 4096);
}

TEST(Scenario, EveryScenarioFileInTheRepositoryLoads) {
  for (const char* name : {"sigkill_4096", "sigkill_1024_debug", "sigkill_2048_long_timeout"}) {
    auto s =
        LoadScenario(std::string(DENPEX_SOURCE_DIR) + "/scenarios/smoke/" + name + ".textproto");
    EXPECT_TRUE(s.ok()) << name << ": " << s.status().message();
  }
}

TEST(Scenario, MissingFileIsNotFound) {
  auto s = LoadScenario("/nonexistent/x.textproto");
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace denpex::sim
