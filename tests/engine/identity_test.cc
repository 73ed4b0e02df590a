// Identity from content (docs/log_formats.md §1, "What identifies a file's rank and node"):
// agent consoles under any name at the top level, agents that print the same host name, only
// the failing node's console, and a simulated incident with every file and folder renamed.
// Built from the real torch 1.13 runs of corpora/real and from real torchrun line shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
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

}  // namespace
}  // namespace denpex::engine
