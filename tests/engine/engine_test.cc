// The engine's behaviour on whole incidents written by fixture.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/facts.h"
#include "analyze/groups.h"
#include "denpex/engine/engine.h"
#include "diagnose_ok.h"
#include "fixture.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::Fault;
using testing::TempDir;
using testing::Write;

using testing::DiagnoseOk;

// The text of line `n` (1-based) of `file`.
std::string LineOf(const fs::path& file, int n) {
  const std::string text = testing::Slurp(file);
  std::size_t start = 0;
  for (int i = 1; i < n; ++i) start = text.find('\n', start) + 1;
  return text.substr(start, text.find('\n', start) - start);
}

bool Cites(const v1::Diagnosis& d, const std::string& needle, v1::EvidenceRole role) {
  return std::any_of(d.evidence().begin(), d.evidence().end(), [&](const v1::Evidence& e) {
    return e.role() == role && e.text().find(needle) != std::string::npos;
  });
}

TEST(Engine, FindsSilentRankFromLauncherExit) {
  TempDir tmp;
  testing::Incident spec;  // 4 nodes x 8, TP8 x PP2 x DP2; rank 3 SIGKILLed
  spec.initiator = 3;
  spec.skew_ms = {{0, 40}, {1, -35}, {2, 120}, {3, -80}};
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().node(), "gpu-0001");
  EXPECT_EQ(d.initiator().local_rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN);
  EXPECT_GT(d.initiator().confidence(), 0.8);
  EXPECT_EQ(d.initiator().time().substr(0, 19), "2026-03-02T09:17:03");  // the year came from the table
  ASSERT_GE(d.candidates_size(), 1);
  EXPECT_EQ(d.candidates(0).rank(), 3);
  EXPECT_EQ(d.strategy(), "engine");

  // Initiating evidence: the agent's `failed` line and the table's `rank` line, verbatim.
  EXPECT_TRUE(Cites(d, "failed (exitcode: -9) local_rank: 3", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(Cites(d, "  rank      : 3 (local_rank: 3)", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(Cites(d, "Watchdog caught collective operation timeout", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_LE(d.evidence_size(), 8);
  for (const auto& e : d.evidence()) EXPECT_EQ(e.text(), LineOf(tmp.path() / e.file(), e.line())) << e.file();

  // Cascade: 24 ranks timed out, 7 were torn down; 24 watchdog lines + 3 other agents' reports.
  EXPECT_EQ(d.cascade().secondary_ranks_size(), 31);
  EXPECT_EQ(std::count(d.cascade().secondary_ranks().begin(), d.cascade().secondary_ranks().end(), 3), 0);
  EXPECT_EQ(d.cascade().secondary_errors(), 27);
  EXPECT_EQ(d.cascade().grouped_errors(), 27);
  int grouped = 0;
  for (const auto& g : d.cascade().groups()) grouped += g.count();
  EXPECT_EQ(grouped, 27);

  ASSERT_GE(d.recovery().preconditions_size(), 1);
  EXPECT_EQ(d.recovery().preconditions(0).action(), "inspect_host_logs");
  EXPECT_EQ(d.recovery().preconditions(0).target(), "gpu-0001");
  EXPECT_EQ(d.input().world_size(), 32);
  EXPECT_EQ(d.input().ranks_seen(), 32);
  EXPECT_EQ(d.input().malformed_lines(), 0);
  EXPECT_EQ(d.input().files(), 36);
}

TEST(Engine, FirstErrorBaselineNamesAVictim) {
  TempDir tmp;
  testing::Incident spec;
  spec.skew_ms = {{2, -500}};  // node 2's clock is behind: its ranks look first
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path(), Strategy::kFirstError);
  EXPECT_EQ(d.strategy(), "first-error");
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN);
  EXPECT_EQ(d.initiator().rank(), 21);  // a victim on gpu-0003 (its earliest stamp), not rank 3
  EXPECT_EQ(d.initiator().node(), "gpu-0003");
  EXPECT_TRUE(Cites(d, "[rank21]:", v1::EVIDENCE_ROLE_INITIATING));
}

TEST(Engine, InconclusiveWhenNodeRanksIndistinguishable) {
  TempDir tmp;
  testing::Incident spec;
  spec.initiator = 3;
  testing::WriteIncident(tmp.path(), spec);
  fs::remove(tmp.path() / "gpu-0001" / "torchrun.log");  // nothing says which of 0-7 went first

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), "gpu-0001");
  EXPECT_NE(d.reason().find("gpu-0001"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("0-7"), std::string::npos) << d.reason();
  ASSERT_EQ(d.candidates_size(), 8);
  for (const auto& c : d.candidates()) {
    EXPECT_EQ(c.node(), "gpu-0001");
    EXPECT_LT(c.rank(), 8);
  }
  ASSERT_GE(d.recovery().preconditions_size(), 1);
  EXPECT_EQ(d.recovery().preconditions(0).target(), "gpu-0001");
}

TEST(Engine, NamesSilentMemberFromGroupProgress) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 2, .gpus = 8, .tp = 8, .pp = 1, .dp = 2};
  spec.fault = Fault::kHang;
  spec.initiator = 5;
  spec.agent_logs = false;
  spec.skew_ms = {{1, -900}};
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 5);
  EXPECT_EQ(d.initiator().node(), "gpu-0001");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  // It stopped when the collectives it never joined started, i.e. at the fault.
  EXPECT_EQ(d.initiator().time().substr(0, 19), "2026-03-02T09:17:03");
  EXPECT_EQ(d.cascade().secondary_ranks_size(), 15);
  EXPECT_TRUE(Cites(d, "[PG 1 (TENSOR_MODEL_PARALLEL_GROUP) Rank", v1::EVIDENCE_ROLE_CORROBORATING));
}

TEST(Engine, HungRankTornDownByItsAgentIsStillNamed) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 2, .gpus = 8, .tp = 8, .pp = 1, .dp = 2};
  spec.fault = Fault::kHang;
  spec.initiator = 5;  // its TP peers abort first; their agent then SIGTERMs it
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 5);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  // The agent names it by pid only: its 6th SIGTERM line (local ranks in order, the one in its
  // table skipped) is local rank 5's, the line that shows it was still running at the teardown.
  EXPECT_TRUE(Cites(d, "Sending process 31245 closing signal SIGTERM", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_FALSE(Cites(d, "Sending process 31244 closing signal SIGTERM", v1::EVIDENCE_ROLE_CORROBORATING));
}

TEST(Engine, VictimsKilledBeforeTheirWatchdogAreNotBlamed) {
  TempDir tmp;
  testing::Incident spec;
  spec.initiator = 3;
  spec.cut_short = {8, 9, 26, 27, 28};  // SIGTERMed by their agents before they could time out
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.cascade().secondary_ranks_size(), 31);  // they are still part of the cascade
  EXPECT_EQ(d.cascade().secondary_errors(), 24 - 5 + 3);
}

// A ZeRO job (tp 4, dp 8): rank 1 hangs, its TP peers time out in the TP all-reduce, every
// other rank in its DP group's reduce-scatter. Rank 9, in rank 1's DP group, was SIGTERMed by
// its agent before its watchdog fired: silent, torn down, and as far-reaching as rank 1 in the
// wait graph. Only rank 1 held up a collective on its own (the TP one).
TEST(Engine, SoleBlockerOfACollectiveBreaksATieWithACutShortPeer) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 4, .gpus = 8, .tp = 4, .pp = 1, .dp = 8};
  spec.fault = Fault::kHang;
  spec.initiator = 1;
  spec.zero = true;
  spec.cut_short = {9};
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_NE(d.reason().find("is the only member of one of its process groups that never joined"), std::string::npos) << d.reason();
  ASSERT_GE(d.candidates_size(), 2);
  EXPECT_EQ(d.candidates(0).score(), d.candidates(1).score());  // the scores alone tie
}

// As above with the hung rank last in its TP group (group rank 3 of 4): no reporter shows the
// group's fourth member, yet groups of one kind split the world (32 ranks) evenly, so the TP
// group has 4 members and the silent one is rank 3.
TEST(Engine, HungLastMemberOfTheOnlyTimedOutGroupIsStillItsMember) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 4, .gpus = 8, .tp = 4, .pp = 1, .dp = 8};
  spec.fault = Fault::kHang;
  spec.initiator = 3;
  spec.zero = true;
  spec.cut_short = {11};
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_NE(d.reason().find("in 2 process groups"), std::string::npos) << d.reason();
}

// Two silent ranks that each alone held up a collective of their own: nothing separates them.
TEST(Engine, TwoSoleBlockersStayInconclusive) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 4, .gpus = 8, .tp = 4, .pp = 1, .dp = 8};
  spec.fault = Fault::kHang;
  spec.initiator = 3;
  spec.cut_short = {11};  // its TP peers 8-10 time out waiting on it alone, as 0-2 on rank 3
  testing::WriteIncident(tmp.path(), spec);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
}

TEST(Engine, NamesSilentMemberWhoseWholeLogIsMissing) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 2, .gpus = 8, .tp = 8, .pp = 1, .dp = 2};
  spec.fault = Fault::kHang;
  spec.initiator = 5;
  spec.agent_logs = false;
  testing::WriteIncident(tmp.path(), spec);
  fs::remove(tmp.path() / "gpu-0001" / "rank_5.log");

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 5);
  EXPECT_EQ(d.initiator().node(), "gpu-0001");  // between ranks 4 and 6, which sit there
  EXPECT_EQ(d.input().ranks_seen(), 15);
  EXPECT_EQ(d.input().world_size(), 16);
}

TEST(Engine, RenderTextSaysVerdictInitiatorAndEvidence) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  const std::string text = RenderText(DiagnoseOk(tmp.path()));
  for (const char* s : {"DIAGNOSED", "rank 3 on gpu-0001", "local rank 3", "SIGNAL_KILL", "gpu-0001/torchrun.log:",
                        "[INITIATING]", "candidates", "cascade", "inspect_host_logs", "world size 32"}) {
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
  }
}

TEST(Engine, StrategyNamesRoundTrip) {
  for (Strategy s : {Strategy::kEngine, Strategy::kFirstError, Strategy::kLoudest, Strategy::kElasticRootCause}) {
    EXPECT_EQ(ParseStrategy(StrategyName(s)), s);
  }
  EXPECT_FALSE(ParseStrategy("random").has_value());
}

TEST(Engine, BaselinesNameTheLoudestRankAndTheFirstObservedFailure) {
  TempDir dir;
  testing::WriteIncident(dir.path(), {.initiator = 3});
  const v1::Diagnosis root = DiagnoseOk(dir.path(), Strategy::kElasticRootCause);
  EXPECT_EQ(root.strategy(), "elastic-root-cause");
  EXPECT_EQ(root.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(root.initiator().rank(), 3);  // its agent saw it exit first
  const v1::Diagnosis loud = DiagnoseOk(dir.path(), Strategy::kLoudest);
  EXPECT_EQ(loud.strategy(), "loudest");
  EXPECT_NE(loud.initiator().rank(), 3);  // the killed rank printed nothing
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

TEST(EngineEvents, OneJsonObjectPerLineWithFamilyKindAndPlace) {
  TempDir dir;
  testing::WriteIncident(dir.path(), {});
  std::ostringstream out;
  ASSERT_TRUE(WriteEvents(dir.path(), {.threads = 2}, out).ok());
  std::istringstream lines(out.str());
  std::string line;
  int n = 0, timeouts = 0;
  while (std::getline(lines, line)) {
    ++n;
    EXPECT_TRUE(line.starts_with("{\"time\":") && line.ends_with("}}")) << line;
    EXPECT_NE(line.find("\"file\":\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"line\":"), std::string::npos) << line;
    if (line.find("\"family\":\"nccl_watchdog\",\"kind\":\"watchdog_timeout\"") != std::string::npos) ++timeouts;
  }
  EXPECT_GT(n, timeouts);
  EXPECT_GT(timeouts, 0);
  std::ostringstream only;
  ASSERT_TRUE(WriteEvents(dir.path(), {.threads = 1, .family = "torchrun"}, only).ok());
  EXPECT_EQ(only.str().find("nccl_watchdog"), std::string::npos);
  EXPECT_NE(only.str().find("\"kind\":\"worker_failed\""), std::string::npos);
}

// A traceback chained to a later one (`The above exception was the direct cause of the following
// exception:`): the cause carries `chained`, the exception the process raised does not.
TEST(EngineEvents, AChainedExceptionSaysSo) {
  TempDir dir;
  testing::Write(dir.path() / "gpu-0001" / "rank_3.log",
                 "[rank3]: Traceback (most recent call last):\n"
                 "[rank3]:   File \"/workspace/train.py\", line 88, in load_batch\n"
                 "[rank3]:     return next(self.it)\n"
                 "[rank3]: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard_0042.bin'\n"
                 "[rank3]: \n"
                 "[rank3]: The above exception was the direct cause of the following exception:\n"
                 "[rank3]: \n"
                 "[rank3]: Traceback (most recent call last):\n"
                 "[rank3]:   File \"/workspace/train.py\", line 120, in <module>\n"
                 "[rank3]:     main()\n"
                 "[rank3]: RuntimeError: data loading failed at step 1200\n");
  std::ostringstream out;
  ASSERT_TRUE(WriteEvents(dir.path(), {.threads = 1, .family = "python"}, out).ok());
  std::istringstream lines(out.str());
  std::string cause, raised;
  ASSERT_TRUE(std::getline(lines, cause));
  ASSERT_TRUE(std::getline(lines, raised)) << out.str();
  EXPECT_NE(cause.find("\"type\":\"FileNotFoundError\""), std::string::npos) << cause;
  EXPECT_NE(cause.find("\"chained\":true"), std::string::npos) << cause;
  EXPECT_NE(raised.find("\"type\":\"RuntimeError\""), std::string::npos) << raised;
  EXPECT_EQ(raised.find("chained"), std::string::npos) << raised;
}

// Issue #4 names the families `denpex events` can emit; each is accepted, and anything else is
// a usage error that lists them.
TEST(EngineEvents, EveryFamilyOfTheIssueCanBeAskedFor) {
  const std::vector<std::string> issue = {
      "nccl_watchdog", "nccl",     "cuda",      "cuda_oom",   "host_oom",        "xid",
      "slurm",         "torchrun", "deepspeed", "fsdp",       "kubernetes",      "ray",
      "gloo",          "trainer",  "python",    "bare_metal", "flight_recorder", "nccl_ras",
      "other"};
  // and issue #9's bare_metal (mpirun, pdsh, ssh), issue #26's flight_recorder (dumps) and
  // nccl_ras (RAS reports)
  EXPECT_EQ(EventFamilies(), issue);
  TempDir dir;
  testing::WriteIncident(dir.path(), {});
  for (const std::string& family : issue) {
    std::ostringstream out;
    EXPECT_TRUE(WriteEvents(dir.path(), {.threads = 1, .family = family}, out).ok()) << family;
  }
  std::ostringstream out;
  const Status bad = WriteEvents(dir.path(), {.threads = 1, .family = "watchdog"}, out);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("nccl_watchdog, nccl, cuda"), std::string::npos) << bad.message();
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// A gloo victim's traceback end as Debian's torch 1.13 prints it (corpora/real/FORMATS-OBSERVED.md §5).
std::string GlooVictim(const std::string& stamp, const std::string& what) {
  return stamp + "Traceback (most recent call last):\n" + stamp + "  File \"train.py\", line 203, in main\n" + stamp +
         "RuntimeError: [./gloo/transport/tcp/" + what + "\n";
}

// `denpex run` layout (docs/log_formats.md §15): rank 3 SIGKILLed; the others lose their
// connection to it. The `[denpex-run]` exit line is rank 3's exit; errors.log copies count once;
// task.json is not read as a log.
TEST(Engine, ReadsTheRunWrapperLayout) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  const std::string s = "2026-11-29T17:05:19.093087Z ";
  for (int r = 0; r < 3; ++r) {
    const fs::path log = dir / (r < 2 ? "node-a" : "node-b") / ("rank_" + std::to_string(r) + ".log");
    const std::string text = "2026-11-29T17:05:15.410661Z [denpex-run] started pid 2818" + std::to_string(r) + ": python3 train.py\n" +
                             GlooVictim(s, "pair.cc:598] Connection closed by peer [127.0.0.1]:30378") +
                             "2026-11-29T17:05:19.814139Z [denpex-run] pid 2818" + std::to_string(r) + " exited with code 1\n";
    Write(log, text);
    Write(fs::path(log).replace_extension(".errors.log"), GlooVictim(s, "pair.cc:598] Connection closed by peer [127.0.0.1]:30378"));
    Write(fs::path(log).replace_extension(".task.json"), "{\"rank\": " + std::to_string(r) + "}\n");
  }
  Write(dir / "node-b/rank_3.log",
        "2026-11-29T17:05:15.410661Z [denpex-run] started pid 28185: python3 train.py\n"
        "2026-11-29T17:05:19.083552Z [denpex-run] pid 28185 killed by signal 9 (SIGKILL)\n");
  const v1::Diagnosis d = DiagnoseOk(dir);
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3) << d.reason();
  EXPECT_EQ(d.initiator().node(), "node-b");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_TRUE(Cites(d, "[denpex-run] pid 28185 killed by signal 9", v1::EVIDENCE_ROLE_INITIATING));
  // Events: 3 gloo errors + 3 exits of the victims + rank 3's exit; the errors.log copies add none.
  EXPECT_EQ(d.input().events(), 7) << "each victim's error counts once, not again from its errors.log";
  EXPECT_EQ(d.input().files(), 7) << "the three task.json are not logs";
}

// The command line `denpex run` quotes when it starts one is not the command's output: words
// there that read as errors (`RuntimeError: `, `CUDA error: `, `NCCL WARN`) make no event, and
// the answer is the one the command's own lines and the exits give.
TEST(Engine, TheRunWrappersQuotedCommandLineIsNoEvidence) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  const std::string command =
      ": python3 -c \"raise RuntimeError('CUDA error: an illegal memory access')\" x NCCL WARN y\n";
  for (int r = 0; r < 4; ++r) {
    std::string text = "2026-11-29T17:05:15.410661Z [denpex-run] started pid 2818";
    text.append(std::to_string(r)).append(command);
    if (r == 3) {
      text.append(
          "2026-11-29T17:05:19.083552Z [denpex-run] pid 28183 killed by signal 9 (SIGKILL)\n");
    } else {
      text.append(GlooVictim("2026-11-29T17:05:19.093087Z ",
                             "pair.cc:598] Connection closed by peer [127.0.0.1]:30378"));
      text.append("2026-11-29T17:05:19.814139Z [denpex-run] pid 2818")
          .append(std::to_string(r))
          .append(" exited with code 1\n");
    }
    Write(dir / (r < 2 ? "node-a" : "node-b") / ("rank_" + std::to_string(r) + ".log"), text);
  }
  const v1::Diagnosis d = DiagnoseOk(dir);
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 3) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  for (const v1::Evidence& e : d.evidence())
    EXPECT_EQ(e.text().find("started pid"), std::string::npos) << e.text();
  EXPECT_EQ(d.input().events(), 7) << "3 gloo errors and 4 exits; the started lines make none";
}

// A capped log (`--max-bytes`) keeps its first error only in `rank_<R>.errors.log`: that copy's
// lines are rank R's as the main log's are, so the error is rank 1's.
TEST(Engine, ACappedLogsErrorIndexIsItsRanks) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "node-a";
  const std::string s = "2026-11-29T17:05:19.093087Z ";
  Write(dir / "rank_0.log",
        "2026-11-29T17:05:15.410661Z [denpex-run] started pid 28180: python3 train.py\n" +
            GlooVictim(s, "pair.cc:598] Connection closed by peer [127.0.0.1]:30378") +
            "2026-11-29T17:05:19.814139Z [denpex-run] pid 28180 exited with code 1\n");
  Write(
      dir / "rank_1.log",
      "2026-11-29T17:05:15.410661Z [denpex-run] started pid 28181: python3 train.py\n"
      "2026-11-29T17:05:17.000000Z [denpex-run] --max-bytes 65536 reached: omitted           1204 "
      "lines "
      "(          110772 bytes) here; the earliest distinct error lines are in rank_1.errors.log\n"
      "2026-11-29T17:05:19.083552Z [denpex-run] pid 28181 exited with code 1\n");
  Write(dir / "rank_1.errors.log",
        "2026-11-29T17:05:18.500000Z Traceback (most recent call last):\n"
        "2026-11-29T17:05:18.500000Z   File \"train.py\", line 90, in main\n"
        "2026-11-29T17:05:18.500000Z RuntimeError: CUDA error: an illegal memory access was "
        "encountered\n");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_TRUE(
      Cites(d, "RuntimeError: CUDA error: an illegal memory access", v1::EVIDENCE_ROLE_INITIATING))
      << d.reason();
}

// gloo: rank 2 hangs (alive, silent) while every peer times out on it; its agent tears it down
// after rank 3's (a victim's) exit. The silent rank is named, class HANG.
TEST(Engine, NamesTheSilentGlooRankEveryPeerTimedOutOn) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  const std::string step = "2026-11-29 16:25:45.497 rank=R step=11/20 loss=5.8 data_ms=0.1 step_ms=259.3\n";
  for (int r : {0, 1, 3}) {
    Write(dir / (r < 2 ? "node-a" : "node-b") / ("rank_" + std::to_string(r) + ".log"),
          step + GlooVictim("", "unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete"));
  }
  Write(dir / "node-b/rank_2.log", "2026-11-29 16:25:42,637 INFO [rank2] train: process group ready\n");
  Write(dir / "node-b/torchrun.log",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 26009 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 26013) of binary: /w.sh\n");
  const v1::Diagnosis d = DiagnoseOk(dir);
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 2) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  // Rank 3 (local rank 1) is the `failed` one; the one SIGTERM left is rank 2's.
  EXPECT_TRUE(Cites(d, "Sending process 26009 closing signal SIGTERM", v1::EVIDENCE_ROLE_CORROBORATING)) << d.reason();
}

// The agent log is cut after its `failed` line (no ChildFailedError table) and local rank 7 had
// exited unreported, so its SIGTERM lines no longer match the node's workers one to one. Pids rise
// with the local rank (torchrun spawns its workers in order): the lines between local rank 0's pid
// (its `failed` line) and local rank 7's (its NCCL `host:pid:tid`) are local ranks 1-6, in order.
TEST(Engine, HungRanksSigtermIsFoundBetweenKnownPidsWhenTheTableIsLost) {
  TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 2, .gpus = 8, .tp = 8, .pp = 1, .dp = 2};
  spec.fault = Fault::kHang;
  spec.initiator = 5;
  testing::WriteIncident(tmp.path(), spec);
  const fs::path agent = tmp.path() / "gpu-0001/torchrun.log";
  std::string log = testing::Slurp(agent);
  ASSERT_NE(log.find("local_rank: 0 (pid: 31240)"), std::string::npos) << log;
  log = log.substr(0, log.find("Traceback (most recent call last)"));
  const std::size_t seven = log.find("Sending process 31247 closing signal SIGTERM");
  ASSERT_NE(seven, std::string::npos);
  log.erase(log.rfind('\n', seven) + 1, log.find('\n', seven) - log.rfind('\n', seven));
  Write(agent, log);
  const fs::path rank7 = tmp.path() / "gpu-0001/rank_7.log";
  Write(rank7, "gpu-0001:31247:31247 [7] NCCL INFO comm 0x55d0c8a4e0 rank 7 nranks 8 cudaDev 7 nvmlDev 7 busId 5d000 commId "
               "0x7a1b - Init COMPLETE\n" + testing::Slurp(rank7));

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 5) << d.reason();
  EXPECT_TRUE(Cites(d, "Sending process 31245 closing signal SIGTERM", v1::EVIDENCE_ROLE_CORROBORATING)) << d.reason();
}

// srun's `task 1: Killed` has no time: it must not take the time of the line before it (another
// rank's 09:00:05 warning). slurmstepd's `CANCELLED AT` right after it is when srun killed the
// step on that exit. Without that line no line carries a year: no initiator time rather than 1970.
TEST(Engine, SrunKillTimeIsTheSchedulersNotTheLineBefore) {
  TempDir tmp;
  const std::string head =
      "0: [rank0]:[W302 09:00:05.100000000 ProcessGroupNCCL.cpp:4115] [PG 0 (default_pg) Rank 0]  using GPU 0 to perform barrier\n"
      "1: [rank1]:[W302 09:00:05.200000000 ProcessGroupNCCL.cpp:4115] [PG 0 (default_pg) Rank 1]  using GPU 1 to perform barrier\n"
      "srun: error: gpu-01: task 1: Killed\n"
      "srun: launch/slurm: _step_signal: Terminating StepId=42.0\n";
  const std::string tail = "srun: error: gpu-01: task 0: Terminated\n";
  Write(tmp.path() / "a/slurm-42.out", head + "slurmstepd: error: *** STEP 42.0 ON gpu-01 CANCELLED AT 2026-03-02T09:00:22 ***\n" + tail);
  v1::Diagnosis d = DiagnoseOk(tmp.path() / "a");
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().time(), "2026-03-02T09:00:22.000000000Z") << d.reason();

  Write(tmp.path() / "b/slurm-42.out", head + tail);
  d = DiagnoseOk(tmp.path() / "b");
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().time(), "") << d.reason();
}

// A DataLoader worker's error re-raised in the main process (`Caught IndexError in DataLoader
// worker process 1.`, then the worker's `Original Traceback`): the worker's own `IndexError:` line
// is the error cited; the wrapper's line corroborates it.
TEST(Engine, CitesTheOriginalErrorOfAReraisedDataLoaderException) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  Write(dir / "node-a/rank_0.log", GlooVictim("", "pair.cc:598] Connection closed by peer [127.0.0.1]:1"));
  Write(dir / "node-a/rank_1.log",
        "Traceback (most recent call last):\n  File \"train.py\", line 203, in main\n"
        "IndexError: Caught IndexError in DataLoader worker process 1.\n"
        "Original Traceback (most recent call last):\n"
        "  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py\", line 309, in _worker_loop\n"
        "    data = fetcher.fetch(index)\n"
        "IndexError: index 48212336 is out of bounds for axis 0 with size 48212336\n");
  Write(dir / "node-a/torchrun.log",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 27430 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 27431) of binary: /w.sh\n");
  const v1::Diagnosis d = DiagnoseOk(dir);
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION) << d.reason();
  EXPECT_TRUE(Cites(d, "IndexError: index 48212336 is out of bounds", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_TRUE(Cites(d, "IndexError: Caught IndexError in DataLoader worker process 1.", v1::EVIDENCE_ROLE_CORROBORATING));
  // It exited on its own: its agent's SIGTERM line is the other worker's.
  EXPECT_FALSE(Cites(d, "Sending process 27430", v1::EVIDENCE_ROLE_CORROBORATING));
}

// The kernel OOM killer's `Killed process P` of the pid the agent names for the SIGKILLed rank,
// in that node's dmesg, makes the class HOST_OOM and the owner the host.
TEST(Engine, KernelOomKillOfTheInitiatorsPidSetsHostOom) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  Write(dir / "node-a/rank_0.log", GlooVictim("", "pair.cc:598] Connection closed by peer [127.0.0.1]:1"));
  Write(dir / "node-a/rank_1.log", "2026-11-29 16:27:40,000 INFO [rank1] train: process group ready\n");
  Write(dir / "node-a/torchrun.log",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 27430 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 27431) of binary: /w.sh\n");
  Write(dir / "node-a/dmesg.log",
        "[ 2686.172733] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,task=python3,pid=27431,uid=0\n"
        "[ 2686.172760] Memory cgroup out of memory: Killed process 27431 (python3) total-vm:2505652kB, anon-rss:1683056kB, "
        "file-rss:127164kB, shmem-rss:0kB, UID:0 pgtables:4096kB oom_score_adj:0\n");
  const v1::Diagnosis d = DiagnoseOk(dir);
  EXPECT_EQ(d.initiator().rank(), 1) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  EXPECT_TRUE(Cites(d, "Killed process 27431", v1::EVIDENCE_ROLE_INITIATING));
}

// torch <= 2.2 watchdog lines (`[Rank N]`: the rank within an unnamed process group). Each
// rank_<R>.log gets one timeout on the collective (op, numel, seq) with group rank `gr`.
struct UnnamedTimeout {
  int rank, group_rank;
  const char* op;
  std::int64_t numel, seq;
};

void WriteUnnamedIncident(const fs::path& dir, const std::vector<UnnamedTimeout>& reports, int world) {
  for (int r = 0; r < world; ++r) {
    const fs::path node = dir / (r < 8 ? "gpu-0001" : "gpu-0002");
    fs::create_directories(node);
    std::ofstream out(node / ("rank_" + std::to_string(r) + ".log"));
    out << "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500.\n";
    for (const UnnamedTimeout& t : reports) {
      if (t.rank != r) continue;
      out << "[E ProcessGroupNCCL.cpp:475] [Rank " << t.group_rank << "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
          << t.seq << ", OpType=" << t.op << ", NumelIn=" << t.numel << ", NumelOut=" << t.numel
          << ", Timeout(ms)=600000) ran for 600018 milliseconds before timing out.\n";
    }
  }
}

// torch 2.1 names no process group; the collective each rank timed out on still groups them:
// the tensor-parallel all-reduce (SeqNum 27) shows members 0-4, 6, 7 at group ranks 0-7 but 5,
// so rank 5 is the member they all wait on. The DP all-reduce's reports each show one group
// rank (1) only: no stride is seen there, and nothing is inferred from them.
TEST(Engine, UnnamedGroupsOfTorch21AreGroupedByTheirCollective) {
  TempDir tmp;
  std::vector<UnnamedTimeout> reports;
  for (int r : {0, 1, 2, 3, 4, 6, 7}) reports.push_back({r, r, "ALLREDUCE", 16777216, 27});
  for (int r = 8; r < 16; ++r) reports.push_back({r, 1, "ALLREDUCE", 40000000, 7});
  WriteUnnamedIncident(tmp.path(), reports, 16);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 5) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  EXPECT_TRUE(Cites(d, "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=27", v1::EVIDENCE_ROLE_CORROBORATING));
}

// A pipeline stage that timed out at another SeqNum (its RECV's collective splits into no group:
// every report there shows group rank 0) is no member the later stages wait on: its report
// there, at its own place in their inferred group, is its report in that group. TP 8 x PP 4
// (stride 8): stages 2-3 time out in RECV 29 (two members per group: stride 8 seen), stage 0
// in RECV 14 (one group rank: no group of its own). In the group {5, 13, 21, 29}, rank 5 (stage
// 0) reported; rank 13 (stage 1, printed nothing) is the one member RECV 29 waits on.
TEST(Engine, UnnamedGroupsTakeAMembersReportAtAnotherSeqNum) {
  TempDir tmp;
  std::vector<UnnamedTimeout> reports;
  for (int r = 0; r < 8; ++r) reports.push_back({r, 0, "RECV", 16777216, 14});
  for (int r = 16; r < 32; ++r) reports.push_back({r, r / 8, "RECV", 16777216, 29});
  WriteUnnamedIncident(tmp.path(), reports, 32);

  auto inc = LoadIncident(tmp.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const JobFacts facts = CollectFacts(*inc);
  const std::vector<ProcessGroup> groups = InferGroups(*inc, facts);
  const auto g = std::find_if(groups.begin(), groups.end(), [](const ProcessGroup& p) {
    return p.members == std::vector<std::int32_t>{5, 13, 21, 29};
  });
  ASSERT_NE(g, groups.end());
  ASSERT_NE(ReportAt(*g, 0), nullptr);
  EXPECT_EQ(ReportAt(*g, 0)->rank, 5);
  EXPECT_EQ(ReportAt(*g, 0)->seq, 14);
  EXPECT_EQ(ReportAt(*g, 1), nullptr);
  const GroupReport& waiter = *ReportAt(*g, 2);
  EXPECT_FALSE(WaitsOn(*g, waiter, 0));
  EXPECT_TRUE(WaitsOn(*g, waiter, 1));
}

// A torch 2.1 pod's lines carry only `[default<L>]:`; with no failure table in the pod, its agent's
// rendezvous result (LOGLEVEL=INFO) places them: global = the stated first rank + L, and its
// silent workers are its node's ranks too.
TEST(Engine, AgentRendezvousResultGivesAPodsLinesTheirRanks) {
  TempDir tmp;
  Write(tmp.path() / "pods/llama-worker-2.log",
        "[2026-03-02 09:00:00,522] torch.distributed.elastic.agent.server.api: [INFO] [default] Rendezvous complete for workers. Result:\n"
        "  group_rank=3\n"
        "  global_ranks=[24, 25, 26, 27, 28, 29, 30, 31]\n"
        "\n"
        "[default5]:[E ProcessGroupNCCL.cpp:475] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=27, "
        "OpType=ALLREDUCE, NumelIn=16777216, NumelOut=16777216, Timeout(ms)=600000) ran for 600018 milliseconds before timing out.\n");
  Write(tmp.path() / "describe/llama-worker-2.txt", "Node:             gpu-0004/10.128.0.5\n");
  auto inc = LoadIncident(tmp.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  bool ranked = false;
  for (const Event& e : inc->events) ranked |= std::holds_alternative<WatchdogTimeout>(e.detail) && e.rank == 29;
  EXPECT_TRUE(ranked);
  const JobFacts facts = CollectFacts(*inc);
  ASSERT_GE(facts.ranks.size(), 32u);
  EXPECT_EQ(inc->nodes[facts.ranks[31].node], "gpu-0004");  // silent, placed by the agent's word
  EXPECT_EQ(facts.ranks[31].local_rank, 7);
}

// torch <= 2.4 prints no per-rank line at start: in a pod's `kubectl logs`, a worker that waited
// quietly never names itself. A line naming both its tag and its rank gives the pod's first rank,
// and the pod's other workers up to the highest such tag logged there too.
TEST(Engine, TaggedConsoleLineGivesThePodsQuietWorkersTheirRanks) {
  TempDir tmp;
  std::string pod;
  for (int l : {0, 1, 2, 3, 4, 6, 7}) {
    pod += "[default" + std::to_string(l) + "]:[rank" + std::to_string(8 + l) +
           "]:[E302 09:10:21.381381026 ProcessGroupNCCL.cpp:607] [PG 9 (TENSOR_MODEL_PARALLEL_GROUP) Rank " +
           std::to_string(l) + "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=25, OpType=ALLREDUCE, "
           "NumelIn=16777216, NumelOut=16777216, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n";
  }
  pod += "E0302 09:10:23.551000 838007 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -6) "
         "local_rank: 0 (pid: 838046) of binary: /usr/bin/python3\n";
  Write(tmp.path() / "pods/llama-worker-0.log", pod);
  Write(tmp.path() / "describe/llama-worker-0.txt", "Node:             gpu-0002/10.128.0.5\n");
  auto inc = LoadIncident(tmp.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const JobFacts facts = CollectFacts(*inc);
  ASSERT_GE(facts.ranks.size(), 16u);
  EXPECT_TRUE(facts.ranks[13].has_log);  // local 5: printed nothing
  ASSERT_GE(facts.ranks[13].node, 0);
  EXPECT_EQ(inc->nodes[facts.ranks[13].node], "gpu-0002");
  EXPECT_FALSE(facts.ranks[7].has_log);  // another pod's
  EXPECT_EQ(facts.unranked.worker_files, 0);
}

// "Every rank with a log raised the same error" counts the workers of pods where no line names a
// rank: two pods raising while a third pod's workers logged unnamed is not a job-wide failure.
TEST(Engine, JobWideErrorCountsPodsWhoseWorkersNoLineNames) {
  auto raise = [](int local, int rank) {
    const std::string p = "[default" + std::to_string(local) + "]:[rank" + std::to_string(rank) + "]: ";
    return p + "Traceback (most recent call last):\n" + p + "  File \"/workspace/train.py\", line 10, in <module>\n" + p +
           "    main()\n" + p + "RuntimeError: the same failure\n";
  };
  for (bool third : {false, true}) {
    TempDir tmp;
    Write(tmp.path() / "pods/llama-worker-0.log", raise(1, 1));
    Write(tmp.path() / "pods/llama-worker-1.log", raise(1, 9));
    Write(tmp.path() / "describe/llama-worker-0.txt", "Node:             gpu-0001/10.128.0.4\n");
    Write(tmp.path() / "describe/llama-worker-1.txt", "Node:             gpu-0002/10.128.0.5\n");
    if (third) {
      Write(tmp.path() / "pods/llama-worker-2.log",
            "[default0]:/usr/lib/python3/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated.\n"
            "[default1]:/usr/lib/python3/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated.\n");
      Write(tmp.path() / "describe/llama-worker-2.txt", "Node:             gpu-0003/10.128.0.6\n");
    }
    const v1::Diagnosis d = DiagnoseOk(tmp.path());
    const bool job_wide = d.reason().find("ranks with a log raised the same") != std::string::npos;
    EXPECT_EQ(job_wide, !third) << d.reason();
  }
}

// When the collectives cannot be split into groups (each pipeline pair's survivor shows group
// rank 1 only), the engine does not guess: INCONCLUSIVE, saying why.
TEST(Engine, UnnamedGroupsThatShowNoStrideStayInconclusive) {
  TempDir tmp;
  std::vector<UnnamedTimeout> reports;
  for (int r = 8; r < 16; ++r) reports.push_back({r, 1, "RECV", 16777216, 14});
  WriteUnnamedIncident(tmp.path(), reports, 16);

  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_NE(d.reason().find("8 of the timeouts name no process group"), std::string::npos) << d.reason();
}

}  // namespace
}  // namespace denpex::engine
