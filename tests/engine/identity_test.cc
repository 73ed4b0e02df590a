// Identity from content (docs/log_formats.md §1, "What identifies a file's rank and node"):
// agent consoles under any name at the top level, agents that print the same host name, only
// the failing node's console, and a simulated incident with every file and folder renamed.
// Built from the real torch 1.13 runs of corpora/real and from real torchrun line shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "denpex/sim/simulator.h"
#include "diagnose_dir.h"
#include "fixture.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::Slurp;
using testing::TempDir;
using testing::Write;

const fs::path kReal = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real";

// Each line of `text` with torchrun --tee's `[default<L>]:` prefix.
std::string Tee(const std::string& text, int local_rank) {
  std::string out;
  const std::string tag = "[default" + std::to_string(local_rank) + "]:";
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    out += tag + text.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out;
}

// A real 2-node run re-laid as users collect it: one console per agent at the top level under an
// opaque name (its torchrun.log, then its workers' lines as `--tee` prefixes them), and each
// agent's `--log_dir` tree (`<run_id>_<rand>/attempt_0/<L>/{stdout,stderr}.log`) beside them.
// `edit` may change a console's text (by its node's folder name) before it is written.
void WriteConsoles(const std::string& corpus, const fs::path& out,
                   const std::function<void(const std::string&, std::string*)>& edit = {}) {
  const fs::path incident = kReal / corpus / "incident";
  const std::vector<std::pair<std::string, std::string>> agents = {{"node-a", "a.txt"}, {"node-b", "b.txt"}};
  for (const auto& [node, console] : agents) {
    std::string text = Slurp(incident / node / "torchrun.log");
    const fs::path log_dir = out / ("none_" + node.substr(5) + "x9q1") / "attempt_0";
    const int first = node == "node-a" ? 0 : 2;
    for (int local = 0; local < 2; ++local) {
      const std::string worker = Slurp(incident / node / ("rank_" + std::to_string(first + local) + ".log"));
      text += Tee(worker, local);
      Write(log_dir / std::to_string(local) / "stderr.log", worker);
      Write(log_dir / std::to_string(local) / "stdout.log", "");
    }
    if (edit) edit(node, &text);
    Write(out / console, text);
  }
}

void ExpectSameInitiator(const v1::Diagnosis& got, const v1::Diagnosis& want) {
  EXPECT_EQ(got.verdict(), want.verdict());
  EXPECT_EQ(got.initiator().rank(), want.initiator().rank());
  EXPECT_EQ(got.initiator().node(), want.initiator().node());
  EXPECT_EQ(got.initiator().local_rank(), want.initiator().local_rank());
  EXPECT_EQ(got.initiator().failure_class(), want.initiator().failure_class());
  EXPECT_EQ(got.owner(), want.owner());
}

TEST(Identity, TopLevelAgentConsolesWithOpaqueNamesGiveTheCorpusInitiator) {
  for (const std::string corpus : {"tr_sigkill_rank3", "tr_exception_rank2"}) {
    SCOPED_TRACE(corpus);
    TempDir dir;
    WriteConsoles(corpus, dir.path());
    const v1::Diagnosis canonical = testing::DiagnoseDir(kReal / corpus / "incident");
    const v1::Diagnosis d = testing::DiagnoseDir(dir.path());
    ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED);
    ExpectSameInitiator(d, canonical);
    EXPECT_EQ(d.initiator().node(), "node-b");
  }
}

TEST(Identity, ConsolesNameTheirNodeAndTheirWorkersFromTheirLines) {
  TempDir dir;
  WriteConsoles("tr_sigkill_rank3", dir.path());
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  for (const LogFile& f : inc->files) {
    if (f.path == "a.txt" || f.path == "b.txt") {
      ASSERT_GE(f.node, 0) << f.path;
      EXPECT_TRUE(f.node_from_content);
      EXPECT_EQ(inc->nodes[f.node], f.path == "a.txt" ? "node-a" : "node-b");
      EXPECT_EQ(f.top_local_tag, 1);
    }
  }
  for (const Event& e : inc->events) {  // every worker line of a console has its global rank
    const LogFile& f = inc->files[e.file];
    if (f.path == "b.txt" && e.family == Family::kGloo) {
      EXPECT_EQ(e.rank, 2);
    }
  }
}

// Two agents whose consoles print the same host name (containers without distinct host names):
// two agents, each a node of its own, told apart by the ranks their tables name.
TEST(Identity, TwoAgentsThatPrintTheSameHostNameAreKeptApart) {
  TempDir dir;
  WriteConsoles("tr_sigkill_rank3", dir.path(), [](const std::string& node, std::string* text) {
    if (node != "node-b") return;
    for (std::size_t at = text->find("host      : node-b"); at != std::string::npos; at = text->find("host      : node-b", at)) {
      text->replace(at, 18, "host      : node-a");
    }
  });
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  std::vector<std::string> consoles;
  for (const LogFile& f : inc->files) {
    if (f.agent && f.node >= 0) consoles.push_back(inc->nodes[f.node]);
  }
  EXPECT_EQ(consoles, (std::vector<std::string>{"node-a (agent with ranks 0-1)", "node-a (agent with ranks 2-3)"}));

  const v1::Diagnosis d = testing::DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().local_rank(), 1);
  EXPECT_EQ(d.initiator().node(), "node-a");  // the host; the reason says which agent
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_NE(d.reason().find("node-a (agent with ranks 2-3)"), std::string::npos) << d.reason();
}

// Every host name replaced by one (containers that all call themselves `host-0`): two agents'
// consoles side by side in one folder, each failing its local rank 0. Each agent's `failed
// (exitcode: ...) local_rank: 0` line is the rank its own table names (rank 0 SIGKILLed during
// its save, rank 2 exiting 1 after it), never the other agent's local rank 0.
TEST(Identity, AgentsUnderOneHostNameTakeTheirLocalRanksFromTheirOwnTables) {
  const fs::path incident = kReal / "tr_kill_in_save_rank0" / "incident";
  TempDir dir;
  const auto one_host = [](std::string text) {
    for (const std::string node : {"node-a", "node-b"}) {
      for (std::size_t at = text.find(node); at != std::string::npos; at = text.find(node, at)) text.replace(at, 6, "host-0");
    }
    return text;
  };
  Write(dir.path() / "host-0" / "torchrun.log", one_host(Slurp(incident / "node-a" / "torchrun.log")));
  Write(dir.path() / "host-0" / "torchrun-1.log", one_host(Slurp(incident / "node-b" / "torchrun.log")));
  for (const auto& [node, rank] : std::vector<std::pair<std::string, int>>{{"node-a", 0}, {"node-a", 1}, {"node-b", 2}, {"node-b", 3}}) {
    const std::string name = "rank_" + std::to_string(rank) + ".log";
    Write(dir.path() / "host-0" / name, one_host(Slurp(incident / node / name)));
  }
  const v1::Diagnosis d = testing::DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 0);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_NE(d.reason().find("SIGKILL"), std::string::npos) << d.reason();
}

// What users paste: the failing node's console alone, torch 2.1's agent lines, its siblings
// SIGTERMed and its own `failed` line, cut before the ChildFailedError table.
std::string FailingNodeConsole() {
  std::string text;
  const std::string head = "[2026-03-02 09:10:13,";
  const std::string logger = "] torch.distributed.elastic.multiprocessing.api: ";
  for (const char* line : {"", "*****************************************",
                           "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
                           "being overloaded, please further tune the variable for optimal performance in your application as needed. ",
                           "*****************************************"}) {
    text += "[2026-03-02 09:00:00,512] torch.distributed.run: [WARNING] " + std::string(line) + "\n";
  }
  for (int local = 0; local < 8; ++local) {
    if (local == 3) continue;
    text += head + std::to_string(100 + local) + logger + "[WARNING] Sending process " + std::to_string(1856262 + local) +
            " closing signal SIGTERM\n";
  }
  return text + head + "866" + logger + "[ERROR] failed (exitcode: -9) local_rank: 3 (pid: 1856265) of binary: /usr/bin/python3\n";
}

TEST(Identity, OnlyTheFailingNodesConsoleNamesTheLocalRankItsAgentSaw) {
  TempDir dir;
  Write(dir.path() / "job-4471.out", FailingNodeConsole());
  const v1::Diagnosis d = testing::DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), -1);  // nothing in hand gives its global rank
  EXPECT_EQ(d.initiator().local_rank(), 3);
  EXPECT_EQ(d.initiator().node(), "");  // nor its host
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  EXPECT_LT(d.initiator().confidence(), 0.85);  // the launcher's word alone
  EXPECT_NE(d.reason().find("global rank is unknown"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("SIGTERM to its 7 other workers"), std::string::npos) << d.reason();
  ASSERT_FALSE(d.recovery().preconditions().empty());
  EXPECT_EQ(d.recovery().preconditions(0).action(), "inspect_host_logs");
  EXPECT_NE(d.recovery().preconditions(0).text().find("kernel log of the node of job-4471.out"), std::string::npos);
  ASSERT_FALSE(d.evidence().empty());
  EXPECT_EQ(d.evidence(0).line(), 12);
}

// The same console with its table: the table gives the global rank and the host.
TEST(Identity, FailingNodesConsoleWithItsTableNamesTheGlobalRank) {
  TempDir dir;
  Write(dir.path() / "paste.txt",
        FailingNodeConsole() +
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            "============================================================\n"
            "train.py FAILED\n"
            "------------------------------------------------------------\n"
            "Failures:\n"
            "  <NO_OTHER_FAILURES>\n"
            "------------------------------------------------------------\n"
            "Root Cause (first observed failure):\n"
            "[0]:\n"
            "  time      : 2026-03-02_09:10:13\n"
            "  host      : gpu-0007\n"
            "  rank      : 11 (local_rank: 3)\n"
            "  exitcode  : -9 (pid: 1856265)\n"
            "  error_file: <N/A>\n"
            "  traceback : Signal 9 (SIGKILL) received by PID 1856265\n"
            "============================================================\n");
  const v1::Diagnosis d = testing::DiagnoseDir(dir.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 11);
  EXPECT_EQ(d.initiator().local_rank(), 3);
  EXPECT_EQ(d.initiator().node(), "gpu-0007");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
}

// Every file and folder of a simulated incident renamed to opaque names: where the lines carry
// the identity (torch 2.4's `[rank<G>]:` prefixes, NCCL's `host:pid:tid`), the same rank, class
// and node as the original layout.
TEST(Identity, RenamingEveryFileAndFolderKeepsTheAnswerWhenTheLinesCarryTheIdentity) {
  const fs::path scenario = fs::path(DENPEX_SOURCE_DIR) / "scenarios/families/sigkill_1024_torch21.textproto";
  const std::vector<std::string> overrides{"job.nodes=4", "format.torch=2.4"};
  auto s = sim::LoadScenario(scenario, overrides);
  ASSERT_TRUE(s.ok()) << s.status().message();
  TempDir sim_dir, renamed;
  ASSERT_TRUE(sim::Simulate(*s, {.out_dir = sim_dir.path()}).ok());
  const fs::path incident = sim_dir.path() / "incident";
  int n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(incident)) {
    if (!entry.is_regular_file()) continue;
    fs::path to = renamed.path();
    for (const auto& part : fs::relative(entry.path(), incident).parent_path()) {
      std::string name = std::to_string(std::hash<std::string>{}(part.string()) % 9973);
      to /= name.insert(0, 1, 'd');
    }
    std::string file = std::to_string(n++);
    Write(to / file.insert(0, 1, 'f').append(".txt"), Slurp(entry.path()));
  }
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  const v1::Diagnosis d = testing::DiagnoseDir(renamed.path());
  ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED);
  ExpectSameInitiator(d, canonical);
}

// A real run whose rank 3 the host's OOM killer took (corpora/real/tr_oom_rank3), every file
// merged into one, node after node: the bare dmesg (uptime brackets, no host) is then on no node,
// but its `Killed process <pid>` names rank 3's pid, which no other rank of the job has, and
// rank 3 was killed by SIGKILL: HOST_OOM, as in the original layout.
TEST(Identity, AHostlessOomKillInAMergedFileTiesToTheOneRankWithItsPid) {
  const fs::path incident = kReal / "tr_oom_rank3" / "incident";
  TempDir merged;
  std::string all;
  for (const char* file : {"node-a/rank_0.log", "node-a/rank_1.log", "node-a/torchrun.log", "node-b/dmesg.log", "node-b/rank_2.log",
                           "node-b/rank_3.log", "node-b/torchrun.log"}) {
    all += Slurp(incident / file);
    if (!all.empty() && all.back() != '\n') all += '\n';
  }
  Write(merged.path() / "incident.log", all);
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM);
  const v1::Diagnosis d = testing::DiagnoseDir(merged.path());
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM) << d.reason();
}

// A real run (corpora/real/tr_sigkill_rank3: one file per rank, `rank_<R>.log`, per node folder)
// with every file and folder renamed to opaque names. The ranks' gloo errors carry no rank; what
// says whose file each is is torch 1.13's store-based barrier line at its start (`Rank 3:
// Completed store-based barrier for key:...`): rank 3, SIGKILL, as in the original layout.
TEST(Identity, RenamedPerRankFilesAreTheRanksTorchsBarrierLinesName) {
  const fs::path incident = kReal / "tr_sigkill_rank3" / "incident";
  TempDir renamed;
  int n = 0;
  for (const char* node : {"node-a", "node-b"}) {
    for (const auto& entry : fs::directory_iterator(incident / node)) {
      std::string file = std::to_string(n++);
      Write(
          renamed.path() / (node[5] == 'a' ? "d17" : "d42") / file.insert(0, 1, 'f').append(".log"),
          Slurp(entry.path()));
    }
  }
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().rank(), 3);
  const v1::Diagnosis d = testing::DiagnoseDir(renamed.path());
  ExpectSameInitiator(d, canonical);
}

// One console shared by two workers (mp.spawn, no agent), where only rank 0 logs at INFO: its
// barrier line names rank 0, but the other worker's traceback is not rank 0's. One file naming
// one rank is no proof that the collection is one file per process: its lines keep no rank.
TEST(Identity, ASharedConsolesLoneBarrierLineNamesNoRankForTheOthersLines) {
  TempDir dir;
  Write(dir.path() / "console.log",
        "INFO:torch.distributed.distributed_c10d:Added key: store_based_barrier_key:1 to store for "
        "rank: 0\n"
        "2026-11-20 18:22:52,101 | INFO | Rank 0: Completed store-based barrier for "
        "key:store_based_barrier_key:1 with 2 nodes.\n"
        "Traceback (most recent call last):\n"
        "  File \"/work/train.py\", line 40, in <module>\n"
        "ValueError: bad batch\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_FALSE(inc->events.empty());
  for (const Event& e : inc->events) EXPECT_EQ(e.rank, -1) << KindName(e.kind);
  EXPECT_EQ(inc->files.front().own_rank, -1);
}

// The barrier lines under the logging formats scripts set (the root logger's default, Hydra's,
// a `%(asctime)s | %(levelname)s | %(message)s`, a bare message): each names its printer's rank.
TEST(Identity, TorchsBarrierLinesNameTheirRankUnderAnyLoggingFormat) {
  TempDir dir;
  Write(
      dir.path() / "a" / "x.log",
      "[2023-01-11 13:26:56,988][torch.distributed.distributed_c10d][INFO] - Rank 14: Completed "
      "store-based barrier for "
      "key:store_based_barrier_key:1 with 32 nodes.\n"
      "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nValueError: a\n");
  Write(
      dir.path() / "b" / "y.log",
      "2023-11-20,18:22:52 | INFO | Added key: store_based_barrier_key:1 to store for rank: 7\n"
      "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nValueError: b\n");
  Write(
      dir.path() / "c" / "z.log",
      "    Rank 21: Completed store-based barrier for key:store_based_barrier_key:1 with 32 "
      "nodes.\n"
      "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nValueError: c\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  std::vector<std::int32_t> ranks;
  for (const LogFile& f : inc->files) ranks.push_back(f.own_rank);
  EXPECT_EQ(ranks, (std::vector<std::int32_t>{14, 7, 21}));
  for (const Event& e : inc->events)
    EXPECT_EQ(e.rank, inc->files[e.file].own_rank) << KindName(e.kind);
}

// The (rank, NumelOut) of every watchdog timeout read from `dir`, in event order.
std::vector<std::pair<std::int32_t, std::int64_t>> Timeouts(const fs::path& dir) {
  auto inc = LoadIncident(dir, 1);
  EXPECT_TRUE(inc.ok()) << inc.status().message();
  std::vector<std::pair<std::int32_t, std::int64_t>> out;
  if (!inc.ok()) return out;
  for (const Event& e : inc->events) {
    if (const auto* w = std::get_if<WatchdogTimeout>(&e.detail))
      out.emplace_back(e.rank, w->numel_out);
  }
  return out;
}

// torch 2.6 under torchrun --log-dir, one node's files one after another (a `flat` collection):
// libstdc++'s `what():` after a watchdog abort carries no `[rank<G>]:` prefix, and a file cut
// short leaves it without the `ran for` that ties it to the timeout its rank printed above it, so
// it is read as a timeout of its own. Its process group's uid and the rank within it are the ones
// the ranked line printed: it is that rank's, and its cut fields are not read (no false
// mismatch: `NumelOut=40000` of 40000000).
TEST(Identity, AQuotedTimeoutNamesItsRankByItsProcessGroupsUidAndGroupRank) {
  TempDir dir;
  const std::string pg = "[PG ID 1281 PG GUID 1281(DATA_PARALLEL_GROUP) Rank ";
  const std::string work =
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
      "NumelIn=40000000, "
      "NumelOut=40000000, Timeout(ms)=600000) ran for 6000";
  std::string text;
  for (int r : {65, 66, 67}) {
    const std::string rank = "[rank" + std::to_string(r * 8) + "]:";
    const std::string prefix = pg + std::to_string(r) + "] ";
    text += rank + "[E302 09:10:22.433569674 ProcessGroupNCCL.cpp:616] " + prefix + work +
            std::to_string(10 + r) + " milliseconds before timing out.\n";
    text += "terminate called after throwing an instance of 'c10::DistBackendError'\n";
    text += "  what():  " + prefix +
            "Process group watchdog thread terminated with exception: " + prefix +
            work.substr(0, work.find("NumelOut=") + 14) + "\n";
  }
  Write(dir.path() / "a1b2c3.log", text);
  EXPECT_EQ(
      Timeouts(dir.path()),
      (std::vector<std::pair<std::int32_t, std::int64_t>>{
          {520, 40000000}, {520, -1}, {528, 40000000}, {528, -1}, {536, 40000000}, {536, -1}}));
}

// A process group's uid with a rank within it that two global ranks claim names neither (two
// groups printed under one uid): a quote of it keeps no rank.
TEST(Identity, AProcessGroupPlaceTwoRanksClaimNamesNoRank) {
  TempDir dir;
  const std::string prefix = "[PG ID 3 PG GUID 3(TENSOR_MODEL_PARALLEL_GROUP) Rank 1] ";
  const std::string work =
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, "
      "NumelIn=8, NumelOut=8, "
      "Timeout(ms)=600000) ran for 6000";
  std::string text;
  for (int r : {1, 9}) {
    text += "[rank" + std::to_string(r) + "]:[E302 09:10:22.433569674 ProcessGroupNCCL.cpp:616] " +
            prefix + work + std::to_string(r) + " milliseconds before timing out.\n";
  }
  text += "  what():  " + prefix +
          "Process group watchdog thread terminated with exception: " + prefix + work + "\n";
  Write(dir.path() / "f.log", text);
  std::vector<std::int32_t> ranks;
  for (const auto& [rank, numel_out] : Timeouts(dir.path())) ranks.push_back(rank);
  EXPECT_EQ(ranks, (std::vector<std::int32_t>{1, 9, -1}));
}

// `incident` laid out `flat` in `flat`, as a user who kept one file per machine does: each node
// folder's files one after another in one file under an opaque name, the other files beside it.
void LayFlat(const fs::path& incident, const fs::path& flat) {
  int n = 0;
  for (const auto& top : fs::directory_iterator(incident)) {
    if (top.path().filename() == "checkpoints") continue;
    std::vector<fs::path> files;
    if (top.is_directory()) {
      for (const auto& entry : fs::recursive_directory_iterator(top.path())) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(top.path());
    }
    std::sort(files.begin(), files.end());
    std::string text;
    for (const fs::path& f : files) text += Slurp(f);
    std::string name = std::to_string(n++);
    Write(flat / name.insert(0, 1, 'x').append(".log"), text);
  }
}

// A simulated incident laid out `flat`, as a user who kept one file per machine does: each node
// folder's files one after another in one file under an opaque name, the other files beside it
// (or as `lay` lays it out).
fs::path SimulateFlat(const std::string& scenario, const std::vector<std::string>& overrides,
                      const fs::path& sim_dir, const fs::path& flat,
                      std::optional<std::uint64_t> seed = std::nullopt,
                      void (*lay)(const fs::path&, const fs::path&) = LayFlat) {
  auto s =
      sim::LoadScenario(fs::path(DENPEX_SOURCE_DIR) / "scenarios/families" / scenario, overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(sim::Simulate(*s, {.out_dir = sim_dir, .seed = seed}).ok());
  const fs::path incident = sim_dir / "incident";
  lay(incident, flat);
  return incident;
}

// torch 2.1 under torchrun, one rank SIGKILLed, laid out flat: the ranks' watchdog lines say only
// `[Rank <group rank>]`, so without `rank_<R>.log` no timeout is tied to a rank; the wave is still
// a wave. Every other node's agent reports its workers' SIGABRT, the watchdog's teardown, not a
// failure of their own: the SIGKILLed rank its agent's table names leads, as in the canonical

// A hang whose every node's files were cut short (torch 2.6, torchrun --log-dir), laid out flat:
// the initiator printed only warnings, and its node's agent was cut before its table, so no
// `host :` names the node. Its kernel log's lines do, and its workers' `[rank<G>]:` lines in
// the same file lie in one block of the world's ranks over the agents: the canonical answer,
// node and local rank included.
TEST(Identity, AFlatNodeFileNamesItsNodeByItsKernelLinesAndItsWorkersByTheirBlock) {
  TempDir sim_dir, flat;
  const fs::path incident = SimulateFlat("hang_2048_initiator_truncated.textproto",
                                         {"job.nodes=16"}, sim_dir.path(), flat.path());
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_HANG);
  ASSERT_FALSE(canonical.initiator().node().empty());
  const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
  ExpectSameInitiator(d, canonical);
}
// layout.
TEST(Identity, AWaveOfUnrankedTimeoutsStillMakesTheWatchdogsAbortsItsOwn) {
  TempDir sim_dir, flat;
  const fs::path incident =
      SimulateFlat("sigkill_1024_torch21.textproto", {"job.nodes=4"}, sim_dir.path(), flat.path());
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
  const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
  ExpectSameInitiator(d, canonical);
}

// The same layout of a CUDA out-of-memory: the initiator's traceback sits in its node's file with
// no rank on its lines, its exit (code 1) in its agent's table. The class is the error its node's
// file holds (CUDA_OOM), not a guess from the exit code, and the reason cites it.
TEST(Identity, AnExitTakesTheClassOfTheUnrankedErrorItsNodesFileHolds) {
  TempDir sim_dir, flat;
  const fs::path incident =
      SimulateFlat("cuda_oom_1024_torch21.textproto", {"job.nodes=4"}, sim_dir.path(), flat.path());
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_OOM);
  const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
  ExpectSameInitiator(d, canonical);
  EXPECT_NE(d.reason().find("an error no line ties to a rank"), std::string::npos) << d.reason();
}

// `incident`'s logs laid out loose in `loose`: every file at the top level under an opaque name,
// its folder gone (each log a stream of its own in a shipper's export, or files pasted into a
// ticket one by one). A rank's file whose lines name neither its rank nor its host is then of no
// rank and no node.
void LayLoose(const fs::path& incident, const fs::path& loose) {
  int n = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(incident)) {
    if (entry.is_regular_file() &&
        !fs::relative(entry.path(), incident).string().starts_with("checkpoints"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::string name = std::to_string(n++);  // `x<n>.log` (LayFlat's way: no `"x" + string`,
    Write(loose / name.insert(0, 1, 'x').append(".log"), Slurp(f));  // which GCC 12 warns on)
  }
}

// The same CUDA out-of-memory laid out loose: the initiator's traceback sits in a file that names
// no rank and no node, its exit (code 1) in its agent's table, the agent's file named by its
// table's `host :`. That one error no line ties to a rank or node still gives the exit its class.
TEST(Identity, AnExitTakesTheClassOfTheOneUnrankedErrorOfALogThatNamesNoNode) {
  TempDir sim_dir, loose;
  const fs::path incident = SimulateFlat("cuda_oom_1024_torch21.textproto", {"job.nodes=4"},
                                         sim_dir.path(), loose.path(), std::nullopt, LayLoose);
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_OOM);
  const v1::Diagnosis d = testing::DiagnoseDir(loose.path());
  ExpectSameInitiator(d, canonical);
  EXPECT_NE(d.reason().find("a log that names no node"), std::string::npos) << d.reason();
}

// DeepSpeed's cpu_adam build failing on one rank, laid out loose: the failed build and its local
// peers' ImportErrors sit in files that name no rank and no node, and the agent's table names
// whichever of the node's workers it saw exit first, not necessarily the one whose build failed.
// Several errors no line ties to a rank, some perhaps the agent's node's: the answer is that node,
// not the rank its table names.
TEST(Identity, AnExitAmongUnrankedErrorsOfLogsThatNameNoNodeIsAnsweredByItsNode) {
  TempDir sim_dir, loose;
  const fs::path incident =
      SimulateFlat("deepspeed_offload_cpu_adam_1024_torch21.textproto", {"job.nodes=4"},
                   sim_dir.path(), loose.path(), std::nullopt, LayLoose);
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
  ASSERT_GE(canonical.initiator().rank(), 0);
  const v1::Diagnosis d = testing::DiagnoseDir(loose.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), canonical.initiator().node());
  EXPECT_NE(d.reason().find("logs that name no node"), std::string::npos) << d.reason();
}

// NCCL's WARN lines of a failed link (`host:pid:tid [dev] ... NCCL WARN NET/IB : Got completion
// ... status=12`) name their process, not their rank; laid out flat, no file name gives one. The
// pid does: the agent's ChildFailedError table lists it under the rank it aborted (`exitcode : -6
// (pid: P)`), and NCCL's own `comm ... rank R nranks N` init of the largest communicator says it.
// The link's ends are the canonical layout's.
TEST(Identity, NcclLinesOfAFlatLayoutTakeTheirRankFromTheirPid) {
  for (const char* scenario :
       {"link_failure_1024_torchrun.textproto", "socket_reset_1024_torchrun.textproto"}) {
    TempDir sim_dir, flat;
    const fs::path incident =
        SimulateFlat(scenario, {"job.nodes=4"}, sim_dir.path(), flat.path(), 2);
    const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
    ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << scenario;
    ExpectSameInitiator(testing::DiagnoseDir(flat.path()), canonical);
  }
}

// A node lost mid-run (torch 2.4, torchrun), laid out flat: the lost node's file holds its kernel
// log and its agent's start banner, and nothing in it names a rank (its workers' files were
// empty). Every other node holds an aligned block of 8 ranks by its lines' `[rank<G>]:` prefixes,
// and the one block no node holds is the one agent's that holds none: its node was lost, as the
// canonical layout says (the node's name is the file's: its lines name no host of their own).
TEST(Identity, TheOneBlockNoNodeHoldsIsTheOneRanklessAgents) {
  TempDir sim_dir, flat;
  const fs::path incident = SimulateFlat("node_loss_1024_torchrun.textproto", {"job.nodes=4"},
                                         sim_dir.path(), flat.path(), 1);
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS);
  const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.owner(), canonical.owner());
}

// Every rank raised the same error loading its checkpoint (torch 2.1, torchrun log dirs), laid out
// flat: the tracebacks carry no rank, each is printed twice (stderr.log and error.json), and one
// node's file names no host. Counted by where they were printed, they cover every node with
// workers, no rank reported a peer and every exit was an error code: the job, as canonical.
TEST(Identity, TheSameUnrankedErrorOnEveryNodeIsTheJobs) {
  for (const char* scenario : {"checkpoint_load_dp_world_16384_logdir_torch21.textproto",
                               "fsdp_mixed_dtype_16384_logdir_torch21.textproto"}) {
    TempDir sim_dir, flat;
    const fs::path incident =
        SimulateFlat(scenario, {"job.nodes=4"}, sim_dir.path(), flat.path(), 1);
    const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
    ASSERT_EQ(canonical.initiator().rank(), -1) << scenario;
    const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
    ExpectSameInitiator(d, canonical);
    EXPECT_NE(d.reason().find("their lines tied to no rank"), std::string::npos) << d.reason();
  }
}

// Flat layouts where the exit the agent saw first is one of several workers of its node that
// raised, their tracebacks naming no rank: a JIT build's failure and its waiters' ImportErrors
// (DeepSpeed's CPU Adam), a pinned allocation that failed. The worker that exited first need not
// be the one that failed first: the answer is never another rank or another class than the
// canonical one; where several errors stand on the node, it is the node.
TEST(Identity, AnExitAmongSeveralUnrankedErrorsOfItsNodeNamesTheNodeOrTheCanonicalRank) {
  for (const char* scenario : {"deepspeed_offload_cpu_adam_1024_torch21.textproto",
                               "pinned_oom_16384_logdir_torch21.textproto"}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      TempDir sim_dir, flat;
      const fs::path incident =
          SimulateFlat(scenario, {"job.nodes=4"}, sim_dir.path(), flat.path(), seed);
      const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
      ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED) << scenario << " seed " << seed;
      const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
      if (d.verdict() != v1::VERDICT_DIAGNOSED) continue;
      EXPECT_EQ(d.initiator().node(), canonical.initiator().node())
          << scenario << " seed " << seed << ": " << d.reason();
      if (d.initiator().rank() >= 0) {
        EXPECT_EQ(d.initiator().rank(), canonical.initiator().rank())
            << scenario << " seed " << seed << ": " << d.reason();
        EXPECT_EQ(d.initiator().failure_class(), canonical.initiator().failure_class())
            << scenario << " seed " << seed;
      } else {
        EXPECT_NE(d.reason().find("the answer is the node"), std::string::npos) << d.reason();
      }
      if (d.initiator().failure_class() != v1::FAILURE_CLASS_UNSPECIFIED) {
        EXPECT_EQ(d.initiator().failure_class(), canonical.initiator().failure_class())
            << scenario << " seed " << seed;
      }
    }
  }
}

// A node's kernel log of boot and driver lines only (`Feb 12 03:17:06 gpu-0003 kernel: [ 4.12]
// mlx5_core ...`) makes no event, yet every line names its machine. Laid out flat, with the
// node's IB port counters (`/sys/class/infiniband/mlx5_2/ports/1/counters/symbol_error:10555`,
// no host on them) in one opaquely named file, it says whose counters they are; under torchrun
// the same file holds the node's workers' lines (DeepSpeed's `[Rank 316] time (ms) | fwd: ...`,
// the agent's console naming no host), so those ranks are that node's. The slow port and its
// rank are the canonical layout's, under srun and under torchrun.
TEST(Identity, AQuietKernelLogNamesTheMachineOfTheFileItSitsIn) {
  for (const char* scenario :
       {"slow_nic_2048_srun_warn.textproto", "slow_nic_1024_torchrun.textproto"}) {
    SCOPED_TRACE(scenario);
    TempDir sim_dir, flat;
    const fs::path incident = SimulateFlat(scenario, {"job.nodes=8"}, sim_dir.path(), flat.path());
    const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
    ASSERT_EQ(canonical.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
    ASSERT_GE(canonical.initiator().rank(), 0);
    ASSERT_FALSE(canonical.initiator().node().empty());
    ExpectSameInitiator(testing::DiagnoseDir(flat.path()), canonical);
  }
}

// The same kernel logs under opaquely renamed node folders (`3f9c1e/kern.log`): each folder is
// the machine its kernel lines name. DeepSpeed's pdsh launch names every host of the job in its
// `--world_info`; the one whose ranks never joined the store is named, as in the canonical
// layout, not lost among folders no host list holds.
TEST(Identity, AnOpaqueNodeFolderIsTheMachineItsKernelLogNames) {
  TempDir sim_dir, renamed;
  const std::vector<std::string> overrides = {"job.nodes=8"};
  auto s = sim::LoadScenario(
      fs::path(DENPEX_SOURCE_DIR) / "scenarios/families/store_join_timeout_1024_pdsh.textproto",
      overrides);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(sim::Simulate(*s, {.out_dir = sim_dir.path()}).ok());
  const fs::path incident = sim_dir.path() / "incident";
  int n = 0;
  for (const auto& top : fs::directory_iterator(incident)) {
    std::string name = "f";
    name += std::to_string(n++);
    name += "q7";
    if (top.is_directory()) {
      for (const auto& entry : fs::directory_iterator(top.path())) {
        Write(renamed.path() / name / entry.path().filename(), Slurp(entry.path()));
      }
    } else {
      Write(renamed.path() / (name + ".log"), Slurp(top.path()));
    }
  }
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED);
  ASSERT_FALSE(canonical.initiator().node().empty());
  ExpectSameInitiator(testing::DiagnoseDir(renamed.path()), canonical);
}

// A real 2-node run copied into a ticket's folder (`INC-4242/node-a/`, `INC-4242/node-b/`, the
// launcher's console beside them), diagnosed from above it, with node-b's agent printing its FQDN
// in its table (`host : node-b.cluster.local`, torchrun's socket.getfqdn()) and its kernel log the
// short name: node-b's folder is one machine's, the ticket's folder none (its console names
// both nodes), and the answer the corpus's.
TEST(Identity, ACollectionInATicketsFolderKeepsItsNodeFoldersAndAnFqdnIsItsShortNamesMachine) {
  const fs::path incident = kReal / "tr_sigkill_rank3" / "incident";
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED);
  ASSERT_EQ(canonical.initiator().node(), "node-b");
  TempDir above;
  const fs::path ticket = above.path() / "INC-4242";
  std::string console;
  for (const char* node : {"node-a", "node-b"}) {
    for (const auto& entry : fs::directory_iterator(incident / node)) {
      std::string text = Slurp(entry.path());
      if (std::string(node) == "node-b" && entry.path().filename() == "torchrun.log") {
        for (std::size_t at = 0;
             (at = text.find("host      : node-b\n", at)) != std::string::npos;) {
          text.replace(at, 19, "host      : node-b.cluster.local\n");
        }
        ASSERT_NE(text.find("node-b.cluster.local"), std::string::npos);
      }
      Write(ticket / node / entry.path().filename(), text);
      if (entry.path().filename() == "torchrun.log") console += text;
    }
  }
  Write(ticket / "node-b" / "kern.log",
        "Nov 29 16:20:01 node-b kernel: [    0.000000] Linux version 5.15.0-105-generic\n");
  Write(ticket / "launcher.log", console);  // both agents' consoles, as one collector kept them
  const v1::Diagnosis got = testing::DiagnoseDir(above.path());
  ExpectSameInitiator(got, canonical);
}

// Real single-node runs, each copied whole (checkpoints too) into a ticket's folder, or two folders
// deep with the operator's notes beside (at the top, or in the ticket's folder), and diagnosed
// from above: the folder holds every log and
// no line names it, so it is no node's name. The Slurm jobs (sbatch, srun inside) are the one node
// Slurm ran them on, as at the top level; the bare torchrun run (`host : localhost`) names no node,
// as at the top level; two agents' consoles of one machine stay two agents. The checkpoint folder
// in it is the incident's.
TEST(Identity, ATicketsFolderHoldingEveryLogIsNoNodesName) {
  const fs::path real2 = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real2";
  struct Layout {
    const char* logs;         // the folder the logs are copied into
    const char* checkpoints;  // the folder the checkpoint folder is copied into
    const char* readme;       // the folder of the operator's notes (`.` the top); null: none
  };
  for (const char* run :
       {"sb_sigkill_rank1", "sl_sigkill_task1", "tr1_sigkill_rank1", "tr2_sigstop_rank0"}) {
    const fs::path incident = real2 / run / "incident";
    const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
    ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED) << run;
    ASSERT_EQ(canonical.checkpoint().dir(), "checkpoints") << run;
    for (const Layout& l : {Layout{"INC-7", "INC-7", nullptr},
                            Layout{"INC-7/logs-2026-12-02", "INC-7/logs-2026-12-02", "."},
                            Layout{"INC-7/logs-2026-12-02", "INC-7", "."},
                            Layout{"INC-7/logs-2026-12-02", "INC-7", "INC-7"}}) {
      SCOPED_TRACE(std::string(run) + ": logs in " + l.logs + ", checkpoints in " + l.checkpoints);
      TempDir above;
      for (const auto& entry : fs::recursive_directory_iterator(incident)) {
        if (!entry.is_regular_file()) continue;
        const fs::path rel = fs::relative(entry.path(), incident);
        Write(above.path() / (*rel.begin() == "checkpoints" ? l.checkpoints : l.logs) / rel,
              Slurp(entry.path()));
      }
      if (l.readme != nullptr)
        Write(above.path() / l.readme / "README.txt",
              "INC-7: the job died overnight; collected by the on-call, rank 3 suspected.\n");
      const v1::Diagnosis got = testing::DiagnoseDir(above.path());
      ExpectSameInitiator(got, canonical);
      EXPECT_EQ(got.initiator().node().find("INC-7"), std::string::npos) << got.initiator().node();
      EXPECT_EQ(got.initiator().node().find("logs-"), std::string::npos) << got.initiator().node();
      EXPECT_EQ(got.checkpoint().dir(), std::string(l.checkpoints) + "/checkpoints");
      EXPECT_EQ(got.checkpoint().decision(), canonical.checkpoint().decision());
      EXPECT_EQ(got.checkpoint().path(), canonical.checkpoint().path());
      // The checkpoint folder is not read as logs: the same files, the notes aside.
      EXPECT_EQ(got.input().files(), canonical.input().files() + (l.readme != nullptr ? 1 : 0));
      EXPECT_EQ(got.input().unreadable_files(), canonical.input().unreadable_files());
    }
  }
}

// One node's folder given alone, whose lines name no machine (a straggler's step lines): read as a
// ticket's folder, it gives no node; with `denpex run`'s identity records beside its logs
// (`<stem>.task.json`, `"host": "node-b"`: the folder's name as the machine gave it) it is that
// node, as the wrapper lays its output out.
TEST(Identity, AHostFolderGivenAloneIsItsNodeWhereItsRunRecordsNameIt) {
  const fs::path node_b = kReal / "tr_slow_rank2" / "incident" / "node-b";
  for (const bool records : {false, true}) {
    SCOPED_TRACE(records ? "with records" : "without");
    TempDir out;
    for (const auto& entry : fs::directory_iterator(node_b)) {
      Write(out.path() / "node-b" / entry.path().filename(), Slurp(entry.path()));
      const std::string stem = entry.path().stem().string();
      if (records && stem.starts_with("rank_")) {
        Write(out.path() / "node-b" / (stem + ".task.json"),
              "{\n  \"format\": \"denpex.run.task.v1\",\n  \"host\": \"node-b\",\n  "
              "\"host_source\": \"hostname\"\n}\n");
      }
    }
    const v1::Diagnosis d = testing::DiagnoseDir(out.path());
    EXPECT_EQ(d.initiator().rank(), 2) << d.reason();
    EXPECT_EQ(d.initiator().node(), records ? "node-b" : "") << d.reason();
  }
}

// Every folder and file of `from` copied to `to` under an opaque name, each its own (folders
// `d<k>`, files `f<k>.log`, k counting through the whole tree), as the `renamed` shape lays an
// incident out.
void CopyRenamed(const fs::path& from, const fs::path& to, int* k) {
  for (const auto& entry : fs::directory_iterator(from)) {
    const std::string name = std::to_string((*k)++);
    if (entry.is_directory()) {
      CopyRenamed(entry.path(), to / ("d" + name), k);
    } else {
      Write(to / ("f" + name + ".log"), Slurp(entry.path()));
    }
  }
}

// DeepSpeed's CPU Adam built by one worker of a node, under torch 1.13 with a torchrun log dir:
// the builder's `ld: final link failed` and its 7 peers' ImportErrors carry no rank, and only the
// `<L>/` folder said whose each was. Renamed, the node's agent reports two of its workers'
// exits alike (exit code 1) and the node's processes printed several errors no line ties to a
// rank: the answer is the node, not INCONCLUSIVE between the two exits and not either of them.
TEST(Identity, TiedExitsOfANodeWhoseErrorsNameNoRankGiveTheNode) {
  TempDir sim_dir, renamed;
  const std::vector<std::string> overrides = {"job.nodes=16"};
  auto s = sim::LoadScenario(
      fs::path(DENPEX_SOURCE_DIR) /
          "scenarios/families/deepspeed_offload_cpu_adam_16384_logdir_torch113.textproto",
      overrides);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(sim::Simulate(*s, {.out_dir = sim_dir.path()}).ok());
  const fs::path incident = sim_dir.path() / "incident";
  int k = 0;
  CopyRenamed(incident, renamed.path(), &k);
  const v1::Diagnosis canonical = testing::DiagnoseDir(incident);
  ASSERT_EQ(canonical.verdict(), v1::VERDICT_DIAGNOSED);
  ASSERT_GE(canonical.initiator().rank(), 0);
  const v1::Diagnosis d = testing::DiagnoseDir(renamed.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), -1);
  EXPECT_EQ(d.initiator().node(), canonical.initiator().node());
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_NE(d.reason().find("so the answer is the node"), std::string::npos) << d.reason();
}

// A real two-node torch 1.13 run (gloo, torchrun, no rank prefix) in which rank 2 raised a
// RuntimeError, laid out flat: each node's agent console and its workers' files in one file, so
// no line of a traceback says its rank, and the other workers' errors about a peer (`Connection
// closed by peer`) sit beside it. The one error of a worker's own is node-b's: the answer is
// node-b, class PYTHON_EXCEPTION. The lost node of another run leaves only victims' errors: no
// node is named for it but the lost one.
TEST(Identity, TheOneNodeThatPrintedAnErrorOfItsOwnIsTheAnswerWhenNoLineGivesARank) {
  {
    TempDir flat;
    LayFlat(kReal / "tr_exception_rank2" / "incident", flat.path());
    const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
    EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
    EXPECT_EQ(d.initiator().rank(), -1);
    EXPECT_EQ(d.initiator().node(), "node-b");
    EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
    EXPECT_NE(d.reason().find("RuntimeError"), std::string::npos) << d.reason();
  }
  {
    TempDir flat;
    LayFlat(kReal / "tr_node_loss_node_b" / "incident", flat.path());
    const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
    if (d.verdict() == v1::VERDICT_DIAGNOSED) {
      EXPECT_EQ(d.initiator().node(), "node-b") << d.reason();
    }
  }
}

// A kernel log is one by what it holds, whatever its name: syslog's `host kernel:` lines and
// dmesg's uptime stamps under opaque names are kernel logs (their stamps are the machine's, not
// the job's span), with their host; a console that quotes one kernel line is not.
TEST(Identity, AKernelLogIsOneByItsLinesUnderAnyName) {
  TempDir dir;
  Write(dir.path() / "a1.log",
        "Feb 12 03:17:06 gpu-0007 kernel: [    0.000000] Linux version 5.15.0-105-generic\n"
        "Feb 12 03:17:11 gpu-0007 kernel: [    4.125998] mlx5_core 0000:0c:00.0: firmware version: "
        "28.39.2048\n"
        "Mar  2 09:00:01 gpu-0007 kernel: [ 9531.002146] nvidia-nvswitch2: open (major=508)\n");
  Write(dir.path() / "b2.log",
        "[    0.000000] Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007)\n"
        "[    4.125998] mlx5_core 0000:0c:00.0: firmware version: 28.39.2048\n");
  Write(dir.path() / "c3.log",
        "[2026-03-02 09:00:01,000] INFO starting\n"
        "Feb 12 03:17:06 gpu-0007 kernel: [    0.000000] Linux version 5.15.0-105-generic\n"
        "[2026-03-02 09:00:02,000] INFO step 1\n"
        "[2026-03-02 09:00:03,000] INFO step 2\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_EQ(inc->files.size(), 3U);
  EXPECT_TRUE(inc->files[0].kernel);
  EXPECT_EQ(inc->str(inc->files[0].kernel_host), "gpu-0007");
  ASSERT_GE(inc->files[0].node, 0);
  EXPECT_EQ(inc->nodes[inc->files[0].node], "gpu-0007");
  EXPECT_TRUE(inc->files[1].kernel);
  EXPECT_FALSE(inc->files[2].kernel);
}

// A trainer's key=value step line says whose step it is (`rank=2 step=8/20 loss=10.1
// data_ms=1502.4 step_ms=1760.0`): laid out flat, the real run's per-rank files merged into one
// file per node, the slow rank is still named from its own lines.
TEST(Identity, AStepLinesRankKeyNamesItsRankWhenNoFileDoes) {
  TempDir flat;
  LayFlat(kReal / "tr_slow_rank2" / "incident", flat.path());
  const v1::Diagnosis d = testing::DiagnoseDir(flat.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 2);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
}

}  // namespace
}  // namespace denpex::engine
