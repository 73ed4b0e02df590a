// The collection shapes of `denpex eval --shapes` (cli/src/shapes/) on a small hand-made
// incident in real line shapes (torch 1.13 / gloo under torchrun, Slurm 22.05, a syslog
// kern.log): what each shape keeps, what it changes, and that it is deterministic.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "shapes/shapes.h"
#include "shapes/shapes_internal.h"

namespace {
namespace fs = std::filesystem;
using denpex::cli::shapes::AllShapes;
using denpex::cli::shapes::FindShape;
using denpex::cli::shapes::ParseShapes;
using denpex::cli::shapes::Relay;
using denpex::cli::shapes::Relaid;

const std::map<std::string, std::string> kIncident = {
    {"slurmctld.log",
     "[2026-11-29T16:25:20.794] slurmctld version 22.05.8 started on cluster denpex\n"
     "[2026-11-29T16:25:22.831] sched: Allocate JobId=4250 NodeList=node-[a-b] #CPUs=4 Partition=batch\n"
     "[2026-11-29T16:25:30.100] error: Nodes node-c not responding\n"
     "[2026-11-29T16:25:37.996] _job_complete: JobId=4250 WEXITSTATUS 1\n"
     "[2026-11-29T16:25:37.997] _job_complete: JobId=4250 done\n"},
    {"node-a/rank_0.log",
     "WARNING: Logging before InitGoogleLogging() is written to STDERR\n"
     "W20261129 16:25:31.562139 25756 ProcessGroupGloo.cpp:694] Warning: Unable to resolve hostname to a (local) address.\n"
     "2026-11-29 16:25:31,685 INFO [rank0] train: process group ready: backend=gloo rank=0 local_rank=0 world_size=4 host=node-a pid=25756 torch=1.13.0a0\n"
     "Traceback (most recent call last):\n"
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:30378\n"},
    {"node-a/rank_1.log",
     "2026-11-29 16:25:31,690 INFO [rank1] train: process group ready: backend=gloo rank=1 local_rank=1 world_size=4 host=node-a pid=25757 torch=1.13.0a0\n"},
    {"node-a/torchrun.log",
     "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 25757 closing signal SIGTERM\n"},
    {"node-b/rank_2.log",
     "2026-11-29 16:25:31,667 INFO [rank2] train: process group ready: backend=gloo rank=2 local_rank=0 world_size=4 host=node-b pid=25760 torch=1.13.0a0\n"},
    {"node-b/rank_3.log",
     "2026-11-29 16:25:31,683 INFO [rank3] train: process group ready: backend=gloo rank=3 local_rank=1 world_size=4 host=node-b pid=25758 torch=1.13.0a0\n"
     "2026-11-29 16:25:33,001 INFO [rank3] train: step 11 loss 2.3021 " + std::string(420, 'x') + "\n"},
    {"node-b/torchrun.log",
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 25758) of binary: /tmp/bin/wrapper.sh\n"
     "  time      : 2026-11-29_16:25:36\n"
     "  host      : node-b\n"
     "  rank      : 3 (local_rank: 1)\n"
     "  exitcode  : -9 (pid: 25758)\n"},
    {"node-b/kern.log",
     "Nov 29 16:20:01 node-b kernel: [    0.000000] Linux version 5.15.0-105-generic\n"
     "Nov 29 16:25:34 node-b kernel: [ 2686.172074] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
     "Nov 29 16:25:34 node-b kernel: [ 2686.172090] NVRM: Xid (PCI:0000:5d:00): 13, pid=25758, name=python3, Graphics Exception\n"},
    {"events.txt",
     "LAST SEEN   TYPE      REASON                OBJECT                      MESSAGE\n"
     "2m38s       Normal    Scheduled             pod/llama3-70b-worker-0     Successfully assigned training/llama3-70b-worker-0 to node-a\n"
     "2m38s       Normal    Scheduled             pod/llama3-70b-worker-1     Successfully assigned training/llama3-70b-worker-1 to node-b\n"
     "96s         Warning   PyTorchJobFailed      pytorchjob/llama3-70b       PyTorchJob llama3-70b is failed because 1 Worker replica(s) failed.\n"},
    {"checkpoints/latest", "step_10.pt\n"},
};

denpex::v1::Truth MakeTruth(bool with_node = true) {
  denpex::v1::Truth t;
  t.set_scenario("hand_made");
  t.set_verdict(denpex::v1::VERDICT_DIAGNOSED);
  t.mutable_initiator()->set_rank(with_node ? 3 : -1);
  if (with_node) t.mutable_initiator()->set_node("node-b");
  t.mutable_job()->set_start_time("2026-11-29T16:25:24.497534Z");
  return t;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file under `dir`: relative path -> bytes.
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).generic_string()] = Read(e.path());
  }
  return out;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

class ShapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("denpex-shapes-" + std::to_string(rd()));
    for (const auto& [rel, text] : kIncident) Put(rel, text);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `text` to the incident's file `rel`.
  void Put(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / "incident" / rel).parent_path());
    std::ofstream(root_ / "incident" / rel, std::ios::binary) << text;
  }

  // Two pods' current logs (the second's describe placing it on node-b, a log of its restart
  // beside), as a shipper relays them: a quoted word, an untimed line, stamps a quarter second
  // apart.
  void PutTwoPods() {
    Put("pods/llama-worker-0.log", "2026-11-29T16:25:31.000000000Z a \"first\"\nuntimed after a\n");
    Put("pods/llama-worker-1.log", "2026-11-29T16:25:32.250000000Z b only\n");
    Put("pods/llama-worker-1.previous.log",
        "2026-11-29T16:20:00.000000000Z b before its restart\n");
    Put("describe/llama-worker-1.txt",
        "Name:         llama-worker-1\nNode:         node-b/10.0.0.2\n");
  }

  // PutTwoPods laid out in `shape`, which applies only once there are pod logs: the same copy
  // twice.
  std::map<std::string, std::string> LayTwoPods(const char* shape) {
    EXPECT_FALSE(Applies(shape));  // no pod logs yet
    PutTwoPods();
    auto [tree, relaid] = Lay(shape);
    EXPECT_TRUE(relaid.applies);
    EXPECT_EQ(Lay(shape, "again").first, tree);
    return tree;
  }

  // Whether `shape` applies to the incident as it stands.
  bool Applies(const char* shape) {
    auto r = Relay(*FindShape(shape), root_ / "incident", MakeTruth(), root_ / "none");
    EXPECT_TRUE(r.ok()) << shape;
    return r.ok() && r->applies;
  }

  // Lays the incident out in `shape` into root/<out>.
  std::pair<std::map<std::string, std::string>, Relaid> Lay(
      const std::string& shape, const std::string& out = "",
      const denpex::v1::Truth& truth = MakeTruth()) {
    const fs::path dir = root_ / (out.empty() ? shape : out);
    auto r = Relay(*FindShape(shape), root_ / "incident", truth, dir);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return {r.ok() && r->applies ? Tree(dir) : std::map<std::string, std::string>{},
            r.ok() ? *r : Relaid{}};
  }

  std::map<std::string, std::string> Logs() const {
    auto m = kIncident;
    m.erase("checkpoints/latest");
    return m;
  }

  fs::path root_;
};

TEST(Shapes, AllExpandsToEveryShapeAndUnknownNamesAreListed) {
  auto all = ParseShapes({"all"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), AllShapes().size());
  EXPECT_EQ(AllShapes().size(), 22u);
  auto two = ParseShapes({"renamed,cri", "renamed"});
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_STREQ((*two)[1]->name, "cri");
  auto bad = ParseShapes({"renamed,no-such"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("known: all, merged"), std::string::npos);
  for (const auto& s : AllShapes()) {
    EXPECT_NE(std::string(s.destroys), "") << s.name;
    EXPECT_NE(std::string(s.right), "") << s.name;
  }
}

TEST(Shapes, LineTimeReadsEveryStampShapeAndNotUptime) {
  using denpex::cli::shapes::LineTime;
  const auto at = [](const char* rfc) { return *denpex::ParseRfc3339(rfc); };
  EXPECT_EQ(LineTime("[2026-11-29T16:41:14.831] sched: Allocate", 2026), at("2026-11-29T16:41:14.831Z"));
  EXPECT_EQ(LineTime("2026-11-29 16:25:31,685 INFO [rank0] train", 1970), at("2026-11-29T16:25:31.685Z"));
  EXPECT_EQ(LineTime("  5: [E1129 16:25:31.715298746 ProcessGroupNCCL.cpp:607] x", 2026),
            at("2026-11-29T16:25:31.715298746Z"));
  EXPECT_EQ(LineTime("[rank3]:[E626 09:00:01.5 ProcessGroupNCCL.cpp:607]", 2026), at("2026-06-26T09:00:01.5Z"));
  EXPECT_EQ(LineTime("W20261129 16:25:31.487046 25758 ProcessGroupGloo.cpp:694]", 1970),
            at("2026-11-29T16:25:31.487046Z"));
  EXPECT_EQ(LineTime("Mar  2 09:00:03 gpu-0110 kernel: [3030380.291268] nfs", 2026), at("2026-03-02T09:00:03Z"));
  EXPECT_EQ(LineTime("[Wed Sep 29 07:12:20 2021] NVRM: Xid", 2026), at("2021-09-29T07:12:20Z"));
  EXPECT_EQ(LineTime("2026-03-02T09:00:21.972589808Z [default0]:x", 1970), at("2026-03-02T09:00:21.972589808Z"));
  EXPECT_EQ(LineTime("  time      : 2026-11-29_16:25:36", 1970), at("2026-11-29T16:25:36Z"));
  EXPECT_EQ(LineTime("2024-04-29T14:55:41,678628+02:00 kernel", 1970), at("2024-04-29T12:55:41.678628Z"));
  EXPECT_FALSE(LineTime("[ 3449.244785] python3 invoked oom-killer", 2026));
  EXPECT_FALSE(LineTime("Traceback (most recent call last):", 2026));
}

TEST_F(ShapesTest, EveryShapeIsDeterministic) {
  for (const auto& s : AllShapes()) {
    const auto [a, ra] = Lay(s.name, std::string(s.name) + "-1");
    const auto [b, rb] = Lay(s.name, std::string(s.name) + "-2");
    EXPECT_EQ(ra.applies, rb.applies) << s.name;
    if (!ra.applies) continue;  // kubectl-prefix: no pod logs here (its own test lays it twice)
    EXPECT_FALSE(a.empty()) << s.name;
    EXPECT_EQ(a, b) << s.name;
  }
}

TEST_F(ShapesTest, MergedHoldsEveryLineNodeAfterNodeInOneFileAndKeepsCheckpoints) {
  const auto [tree, relaid] = Lay("merged");
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree.at("checkpoints/latest"), "step_10.pt\n");
  std::string all;
  for (const auto& [rel, text] : Logs()) all += text;  // sorted paths: node after node
  EXPECT_EQ(tree.at("incident.log"), all);
}

TEST_F(ShapesTest, InterleavedOrdersLinesByTheirOwnStampsAndKeepsUntimedLinesInPlace) {
  const auto [tree, relaid] = Lay("interleaved");
  ASSERT_TRUE(tree.contains("aggregated.log"));
  const auto lines = SplitLines(tree.at("aggregated.log"));
  size_t total = 0;
  for (const auto& [rel, text] : Logs()) total += SplitLines(text).size();
  EXPECT_EQ(lines.size(), total);
  auto index = [&lines](const std::string& needle) {
    return std::find_if(lines.begin(), lines.end(),
                        [&](const auto& l) { return l.find(needle) != std::string::npos; }) -
           lines.begin();
  };
  EXPECT_LT(index("sched: Allocate"), index("[rank2] train"));
  EXPECT_LT(index("[rank2] train"), index("[rank3] train: process group"));
  EXPECT_LT(index("[rank3] train: process group"), index("[rank0] train"));
  // The untimed traceback follows rank 0's timed line at once... before its RuntimeError.
  EXPECT_LT(index("[rank0] train"), index("Traceback"));
  EXPECT_EQ(index("Traceback") + 1, index("RuntimeError"));
  EXPECT_LT(index("oom-killer"), index("_job_complete: JobId=4250 WEXITSTATUS"));
}

TEST_F(ShapesTest, FlatWritesOneOpaqueFilePerNodeAtTheTop) {
  const auto [tree, relaid] = Lay("flat");
  int logs = 0;
  for (const auto& [rel, text] : tree) {
    if (rel.starts_with("checkpoints/")) continue;
    ++logs;
    EXPECT_EQ(rel.find('/'), std::string::npos) << rel;
    EXPECT_TRUE(std::regex_match(rel, std::regex("[0-9a-f]{12}\\.log"))) << rel;
  }
  EXPECT_EQ(logs, 4);  // node-a, node-b, events.txt, slurmctld.log
  int aliased = 0;
  for (const auto& [name, nodes] : relaid.node_aliases) {
    aliased += nodes == std::vector<std::string>{"node-b"};
    if (nodes == std::vector<std::string>{"node-b"} && tree.contains(name)) {
      EXPECT_NE(tree.at(name).find("exitcode  : -9"), std::string::npos);
      EXPECT_NE(tree.at(name).find("[rank3] train"), std::string::npos);
    }
  }
  EXPECT_EQ(aliased, 2);  // with and without .log
}

TEST_F(ShapesTest, RenamedKeepsFoldersAndContentButNoName) {
  const auto [tree, relaid] = Lay("renamed");
  std::multiset<std::string> before, after;
  for (const auto& [rel, text] : Logs()) before.insert(text);
  for (const auto& [rel, text] : tree) {
    if (rel.starts_with("checkpoints/")) continue;
    after.insert(text);
    for (const char* old : {"node-", "rank_", "torchrun", "kern", "slurm"}) {
      EXPECT_EQ(rel.find(old), std::string::npos) << rel;
    }
  }
  EXPECT_EQ(before, after);
  EXPECT_EQ(relaid.node_aliases.size(), 2u);
}

TEST_F(ShapesTest, NestedPutsTheWholeCollectionUnderOneOpaqueFolderWithItsNames) {
  const auto [tree, relaid] = Lay("nested");
  std::string folder;
  for (const auto& [rel, text] : kIncident) {
    const auto it = std::find_if(tree.begin(), tree.end(),
                                 [&](const auto& kv) { return kv.first.ends_with("/" + rel); });
    ASSERT_NE(it, tree.end()) << rel;
    EXPECT_EQ(it->second, text) << rel;
    const std::string top = it->first.substr(0, it->first.size() - rel.size() - 1);
    EXPECT_EQ(top.find('/'), std::string::npos) << it->first;
    EXPECT_EQ(top.size(), 12u) << it->first;
    if (folder.empty()) folder = top;
    EXPECT_EQ(top, folder);  // one folder for all
  }
  EXPECT_EQ(tree.size(), kIncident.size());
  EXPECT_EQ(tree.at(folder + "/checkpoints/latest"), "step_10.pt\n");  // not a log, copied as it is
  EXPECT_TRUE(relaid.node_aliases.empty());
}

TEST_F(ShapesTest, SameHostLeavesOneHostNameInLinesAndPaths) {
  const auto [tree, relaid] = Lay("same-host");
  size_t logs = 0;
  for (const auto& [rel, text] : tree) {
    if (rel.starts_with("checkpoints/")) continue;
    ++logs;
    EXPECT_EQ(rel.find("node-"), std::string::npos) << rel;
    EXPECT_EQ(text.find("node-a"), std::string::npos) << rel;
    EXPECT_EQ(text.find("node-b"), std::string::npos) << rel;
  }
  EXPECT_EQ(logs, Logs().size());  // the two torchrun.log do not collide
  EXPECT_TRUE(tree.contains("host-0/torchrun.log"));
  EXPECT_TRUE(tree.contains("host-0/torchrun-1.log"));
  EXPECT_NE(tree.at("host-0/rank_3.log").find("host=host-0 pid=25758"), std::string::npos);
  EXPECT_NE(tree.at("slurmctld.log").find("node-c not responding"), std::string::npos);  // not ours
  ASSERT_TRUE(relaid.node_aliases.contains("host-0"));
  EXPECT_EQ(relaid.node_aliases.at("host-0"), (std::vector<std::string>{"node-a", "node-b"}));
}

TEST_F(ShapesTest, TimestampPrefixesTakeEachLinesOwnTimeElseThePreviousLines) {
  const auto cri = Lay("cri").first;
  const auto kts = Lay("kubectl-ts").first;
  const auto jd = Lay("journald").first;
  const std::regex kCri(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F .*)");
  for (const auto& [rel, text] : cri) {
    if (rel.starts_with("checkpoints/")) continue;
    for (const auto& l : SplitLines(text)) EXPECT_TRUE(std::regex_match(l, kCri)) << l;
  }
  const auto r0 = SplitLines(cri.at("node-a/rank_0.log"));
  ASSERT_EQ(r0.size(), 5u);
  EXPECT_TRUE(r0[0].starts_with("2026-11-29T16:25:31.562139000Z stdout F WARNING"));  // before any
  EXPECT_TRUE(r0[2].starts_with("2026-11-29T16:25:31.685000000Z stdout F 2026-11-29 16:25:31,685"));
  EXPECT_TRUE(r0[3].starts_with("2026-11-29T16:25:31.685000000Z stdout F Traceback"));  // carried
  const auto k0 = SplitLines(kts.at("node-a/rank_0.log"));
  EXPECT_TRUE(k0[4].starts_with("2026-11-29T16:25:31.685000000Z RuntimeError"));
  // The agent's line carries no stamp: the job's start.
  EXPECT_TRUE(kts.at("node-a/torchrun.log").starts_with("2026-11-29T16:25:24.497534000Z WARNING"));
  const auto j3 = SplitLines(jd.at("node-b/rank_3.log"));
  EXPECT_TRUE(std::regex_match(j3[1], std::regex(R"(Nov 29 16:25:33 node-b python3\[\d+\]: 2026-11-29 16:25:33,001 .*)")))
      << j3[1];
  EXPECT_TRUE(jd.at("slurmctld.log").starts_with("Nov 29 16:25:20 login-01 slurmctld["));
  EXPECT_EQ(jd.at("node-b/kern.log"), kIncident.at("node-b/kern.log"));  // already syslog
}

// Docker's json-file driver: one record a line, its time Go's RFC3339Nano (trailing zeros
// dropped), the line JSON-escaped as moby escapes it.
TEST_F(ShapesTest, DockerJsonWritesOneRecordALineAsTheJsonFileDriverDoes) {
  // A line over 16 KiB is split into records of 16 KiB, the ones before its last without a newline.
  const std::string long_line = "[rank3]: " + std::string(40000, 'y') + "\"<&>\"";
  std::ofstream(root_ / "incident" / "node-b" / "long.log", std::ios::binary) << long_line << "\n";
  auto tree = Lay("docker-json").first;
  const auto long_records = SplitLines(tree.at("node-b/long.log"));
  ASSERT_EQ(long_records.size(), 3u);
  std::string joined;
  for (const auto& r : long_records) {
    const std::size_t end = r.find("\",\"stream\"");
    EXPECT_LE(end - 8, 16384u + 5 * 6);  // 16 KiB of the line, escapes aside
    joined += r.substr(8, end - 8);
  }
  EXPECT_FALSE(long_records[0].find("\\n\",") != std::string::npos);
  EXPECT_EQ(joined, "[rank3]: " + std::string(40000, 'y') + R"(\"\u003c\u0026\u003e\"\n)");
  tree.erase("node-b/long.log");
  const std::regex kRecord(
      R"(\{"log":"([^"\\]|\\.)*\\n","stream":"stdout","time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z"\})");
  for (const auto& [rel, text] : tree) {
    if (rel.starts_with("checkpoints/")) continue;
    EXPECT_EQ(SplitLines(text).size(), SplitLines(kIncident.at(rel)).size()) << rel;
    for (const auto& l : SplitLines(text)) EXPECT_TRUE(std::regex_match(l, kRecord)) << l;
  }
  const auto r0 = SplitLines(tree.at("node-a/rank_0.log"));
  EXPECT_EQ(
      r0[0],
      R"({"log":"WARNING: Logging before InitGoogleLogging() is written to STDERR\n","stream":"stdout","time":"2026-11-29T16:25:31.562139Z"})");
  EXPECT_TRUE(
      r0[2].ends_with(R"(torch=1.13.0a0\n","stream":"stdout","time":"2026-11-29T16:25:31.685Z"})"))
      << r0[2];
  EXPECT_TRUE(SplitLines(tree.at("node-b/rank_3.log"))[1].find(std::string(420, 'x') + "\\n") !=
              std::string::npos);
}

// `journalctl -o json`: one entry a line, a kernel log's the kernel's (its message after
// `kernel: `, at its own stamp), the others' a process's named after the file, on the writer's
// host.
TEST_F(ShapesTest, JournaldJsonWritesOneEntryALineAsJournalctlDoes) {
  const auto tree = Lay("journald-json").first;
  for (const auto& [rel, text] : tree) {
    if (rel.starts_with("checkpoints/")) continue;
    EXPECT_EQ(SplitLines(text).size(), SplitLines(kIncident.at(rel)).size()) << rel;
    for (const auto& l : SplitLines(text)) {
      EXPECT_TRUE(l.starts_with("{\"__CURSOR\":\"s=") && l.ends_with("\"}")) << l;
      EXPECT_NE(l.find("\"__REALTIME_TIMESTAMP\":\"17"), std::string::npos) << l;
    }
  }
  const auto k = SplitLines(tree.at("node-b/kern.log"));
  EXPECT_NE(
      k[2].find(
          R"("__REALTIME_TIMESTAMP":"1795969534000000","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","_HOSTNAME":"node-b","MESSAGE":"[ 2686.172090] NVRM: Xid (PCI:0000:5d:00): 13, pid=25758, name=python3, Graphics Exception"})"),
      std::string::npos)
      << k[2];
  const auto r0 = SplitLines(tree.at("node-a/rank_0.log"));
  EXPECT_NE(r0[3].find(R"("_TRANSPORT":"stdout","SYSLOG_IDENTIFIER":"python3","_PID":")"),
            std::string::npos)
      << r0[3];
  EXPECT_TRUE(
      r0[3].ends_with(R"("_HOSTNAME":"node-a","MESSAGE":"Traceback (most recent call last):"})"))
      << r0[3];
  EXPECT_NE(tree.at("slurmctld.log").find(R"("SYSLOG_IDENTIFIER":"slurmctld","_PID":")"),
            std::string::npos);
  EXPECT_NE(tree.at("slurmctld.log").find(R"("_HOSTNAME":"login-01")"), std::string::npos);
}

TEST_F(ShapesTest, PasteQuotesColoursAndWrapsAt80To200Columns) {
  const auto [tree, relaid] = Lay("paste");
  const std::regex kAnsi("\x1b\\[[0-9;]*m");
  bool coloured = false;
  for (const auto& [rel, text] : tree) {
    if (rel.starts_with("checkpoints/")) continue;
    coloured |= text.find("\x1b[") != std::string::npos;
    size_t widest = 0;
    for (const auto& l : SplitLines(text)) {
      EXPECT_TRUE(l.starts_with("> ") || l.starts_with("    ")) << l;
      widest = std::max(widest, std::regex_replace(l, kAnsi, "").size());
    }
    EXPECT_LE(widest, 200u) << rel;
  }
  EXPECT_TRUE(coloured);
  // rank 3's 480-column line is cut into pieces of the file's width (80-200), twice at least.
  std::vector<size_t> widths;
  for (const auto& l : SplitLines(tree.at("node-b/rank_3.log"))) {
    widths.push_back(std::regex_replace(l, kAnsi, "").size());
  }
  const size_t width = *std::max_element(widths.begin(), widths.end());
  EXPECT_GE(width, 80u);
  EXPECT_LE(width, 200u);
  EXPECT_GE(std::count(widths.begin(), widths.end(), width), 2);
  std::string joined;
  for (const auto& l : SplitLines(tree.at("node-b/rank_3.log"))) {
    std::string plain = std::regex_replace(l, kAnsi, "");
    joined += plain.substr(plain.starts_with("> ") ? 2 : 4);
  }
  EXPECT_NE(joined.find("loss 2.3021 " + std::string(420, 'x')), std::string::npos);
}

TEST_F(ShapesTest, OneNodeKeepsOnlyTheInitiatorsNodeAndVictimsOnlyEverythingElse) {
  const auto one = Lay("one-node").first;
  EXPECT_EQ(one.size(), 4u);
  for (const auto& [rel, text] : one) EXPECT_TRUE(rel.starts_with("node-b/")) << rel;
  const auto victims = Lay("victims-only").first;
  EXPECT_EQ(victims.size(), kIncident.size() - 4);
  for (const auto& [rel, text] : victims) EXPECT_FALSE(rel.starts_with("node-b/")) << rel;
  EXPECT_TRUE(victims.contains("slurmctld.log"));
  // A job-level truth names no node: the shape does not apply.
  auto r = Relay(*FindShape("one-node"), root_ / "incident", MakeTruth(false), root_ / "jl");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->applies);
}

TEST_F(ShapesTest, SharedDaemonsAddsOtherJobsLinesAndLeavesTheJobsOwnIntact) {
  const auto [tree, relaid] = Lay("shared-daemons");
  // Every line of the original file, in order, is still there.
  auto subsequence = [](const std::string& small, const std::string& big) {
    const auto s = SplitLines(small), b = SplitLines(big);
    size_t i = 0;
    for (const auto& l : b) i += i < s.size() && l == s[i];
    return i == s.size();
  };
  for (const auto& [rel, text] : Logs()) {
    EXPECT_TRUE(subsequence(text, tree.at(rel))) << rel;
    if (rel.find("rank_") != std::string::npos || rel.find("torchrun") != std::string::npos) {
      EXPECT_EQ(tree.at(rel), text) << rel;
    }
  }
  const std::string& ctld = tree.at("slurmctld.log");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ctld, m, std::regex(R"(\] Time limit exhausted for JobId=(\d+))")));
  EXPECT_NE(m[1], "4250");
  EXPECT_NE(ctld.find("_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId="), std::string::npos);
  EXPECT_NE(ctld.find("preempted JobId="), std::string::npos);
  // Inside this job's span: after its allocation, before its end.
  EXPECT_LT(ctld.find("JobId=4250 NodeList"), ctld.find("Time limit exhausted"));
  EXPECT_GT(ctld.find("JobId=4250 WEXITSTATUS"), ctld.find("Time limit exhausted"));
  const std::string& kern = tree.at("node-b/kern.log");
  EXPECT_NE(kern.find("Memory cgroup out of memory: Killed process 39"), std::string::npos);
  EXPECT_NE(kern.find("GPU has fallen off the bus"), std::string::npos);
  EXPECT_EQ(kern.find("NVRM: Xid (PCI:0000:5d:00): 79"), std::string::npos);  // a GPU the job uses
  const std::string& events = tree.at("events.txt");
  EXPECT_NE(events.find("\n2m38s       Warning   Evicted               pod/bert-ft-worker-"),
            std::string::npos) << events;
  EXPECT_NE(events.find("Warning   OOMKilling            node/node-a"), std::string::npos);
  EXPECT_TRUE(std::regex_search(kern, std::regex(R"(\nNov 29 16:2\d:\d\d node-b kernel: \[ ?\d+\.\d+\] NVRM: Xid \(PCI:0000:0f:00\): 31, pid=39)")));
}

TEST_F(ShapesTest, SharedDaemonsDoesNotApplyWithoutADaemonOrKernelLog) {
  fs::remove(root_ / "incident/slurmctld.log");
  fs::remove(root_ / "incident/node-b/kern.log");
  fs::remove(root_ / "incident/events.txt");
  auto r = Relay(*FindShape("shared-daemons"), root_ / "incident", MakeTruth(), root_ / "sd");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->applies);
}

// `kubectl logs --prefix`: the current pod logs in one stream in arrival order, each line behind
// its pod's tag; `--previous` logs, describes and everything else as they are; not applicable
// without two pod logs.
TEST_F(ShapesTest, KubectlPrefixMergesTheCurrentPodLogsBehindTheirTags) {
  EXPECT_FALSE(Applies("kubectl-prefix"));  // no pod logs yet
  Put("pods/llama-worker-0.log",
      "2026-11-29T16:25:31.000000000Z a first\nuntimed after a\n2026-11-29T16:25:33.000000000Z a "
      "last\n");
  Put("pods/llama-worker-1.log", "2026-11-29T16:25:32.000000000Z b only\n");
  Put("pods/llama-worker-1.previous.log", "2026-11-29T16:20:00.000000000Z b before its restart\n");
  Put("describe/llama-worker-1.txt",
      "Name:         llama-worker-1\nNode:         node-b/10.0.0.2\n");
  const auto [tree, relaid] = Lay("kubectl-prefix");
  ASSERT_TRUE(relaid.applies);
  EXPECT_EQ(Lay("kubectl-prefix", "again").first, tree);
  EXPECT_EQ(tree.at("pods.log"),
            "[pod/llama-worker-0/pytorch] 2026-11-29T16:25:31.000000000Z a first\n"
            "[pod/llama-worker-0/pytorch] untimed after a\n"
            "[pod/llama-worker-1/pytorch] 2026-11-29T16:25:32.000000000Z b only\n"
            "[pod/llama-worker-0/pytorch] 2026-11-29T16:25:33.000000000Z a last\n");
  EXPECT_FALSE(tree.contains("pods/llama-worker-0.log"));
  EXPECT_EQ(tree.at("pods/llama-worker-1.previous.log"),
            "2026-11-29T16:20:00.000000000Z b before its restart\n");
  EXPECT_EQ(tree.at("describe/llama-worker-1.txt"),
            "Name:         llama-worker-1\nNode:         node-b/10.0.0.2\n");
  EXPECT_EQ(tree.at("node-b/rank_3.log"), kIncident.at("node-b/rank_3.log"));
}

// Fluent Bit's Kubernetes filter: the current pod logs' lines as its records, one a line in
// arrival order, the pod (and its node, where its describe names one) under `kubernetes`.
TEST_F(ShapesTest, FluentBitShipsTheCurrentPodLogsAsKubernetesRecords) {
  const auto tree = LayTwoPods("fluent-bit");
  const std::vector<std::string> records = [&] {
    std::vector<std::string> v;
    std::istringstream in(tree.at("pods.json"));
    for (std::string line; std::getline(in, line);) v.push_back(line);
    return v;
  }();
  ASSERT_EQ(records.size(), 3u);
  const std::regex record(
      R"re(\{"date":(\d+\.\d{6}),"stream":"stdout","_p":"F","log":"(.*)","kubernetes":\{"pod_name":"([a-z0-9-]+)","namespace_name":"default","pod_id":"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"(,"host":"[a-z-]+")?,"container_name":"pytorch","docker_id":"[0-9a-f]{64}","container_image":"[^"]+"\}\})re");
  const std::vector<std::array<std::string, 4>> want = {
      {"1795969531.000000", R"(2026-11-29T16:25:31.000000000Z a \"first\")", "llama-worker-0", ""},
      {"1795969531.000000", "untimed after a", "llama-worker-0", ""},
      {"1795969532.250000", "2026-11-29T16:25:32.250000000Z b only", "llama-worker-1",
       R"(,"host":"node-b")"}};
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(records[i], m, record)) << records[i];
    EXPECT_EQ(m[1], want[i][0]);
    EXPECT_EQ(m[2], want[i][1]);
    EXPECT_EQ(m[3], want[i][2]);
    EXPECT_EQ(m[4], want[i][3]);
  }
  EXPECT_FALSE(tree.contains("pods/llama-worker-0.log"));
  EXPECT_EQ(tree.at("pods/llama-worker-1.previous.log"),
            "2026-11-29T16:20:00.000000000Z b before its restart\n");
  EXPECT_EQ(tree.at("node-b/rank_3.log"), kIncident.at("node-b/rank_3.log"));
}

// `gcloud logging read --format=json` of a GKE job's containers: the current pod logs' lines as
// one pretty-printed array of entries, newest first, each with its pod and (where its describe
// names one) its node; everything else as it is.
TEST_F(ShapesTest, CloudLoggingExportsTheCurrentPodLogsNewestFirst) {
  const auto tree = LayTwoPods("cloud-logging");
  const std::string& array = tree.at("downloaded-logs.json");
  ASSERT_TRUE(array.starts_with("[\n  {\n    \"insertId\": \"")) << array;
  ASSERT_TRUE(array.ends_with("\n  }\n]\n")) << array;
  const std::regex entry(
      R"re(  \{\n    "insertId": "[0-9a-f]{14}",\n    "labels": \{\n(      "compute\.googleapis\.com/resource_name": "([a-z-]+)",\n)?      "k8s-pod/app": "trainer"\n    \},\n    "logName": "projects/denpex-sim/logs/stdout",\n    "receiveTimestamp": "[0-9TZ:.-]+",\n    "resource": \{\n      "labels": \{\n        "cluster_name": "train",\n        "container_name": "pytorch",\n        "location": "us-central1",\n        "namespace_name": "default",\n        "pod_name": "([a-z0-9-]+)",\n        "project_id": "denpex-sim"\n      \},\n      "type": "k8s_container"\n    \},\n    "severity": "INFO",\n    "textPayload": "(.*)",\n    "timestamp": "([0-9TZ:.-]+)"\n  \})re");
  const std::vector<std::array<std::string, 4>> want = {
      // node, pod, text, time: newest first
      {"node-b", "llama-worker-1", "2026-11-29T16:25:32.250000000Z b only",
       "2026-11-29T16:25:32.250000000Z"},
      {"", "llama-worker-0", "untimed after a", "2026-11-29T16:25:31.000000000Z"},
      {"", "llama-worker-0", R"(2026-11-29T16:25:31.000000000Z a \"first\")",
       "2026-11-29T16:25:31.000000000Z"}};
  std::size_t n = 0;
  for (auto it = std::sregex_iterator(array.begin(), array.end(), entry);
       it != std::sregex_iterator(); ++it, ++n) {
    ASSERT_LT(n, want.size());
    EXPECT_EQ((*it)[2], want[n][0]);
    EXPECT_EQ((*it)[3], want[n][1]);
    EXPECT_EQ((*it)[4], want[n][2]);
    EXPECT_EQ((*it)[5], want[n][3]);
  }
  EXPECT_EQ(n, want.size()) << array;
  EXPECT_FALSE(tree.contains("pods/llama-worker-0.log"));
  EXPECT_EQ(tree.at("pods/llama-worker-1.previous.log"),
            "2026-11-29T16:20:00.000000000Z b before its restart\n");
  EXPECT_EQ(tree.at("node-b/rank_3.log"), kIncident.at("node-b/rank_3.log"));
}

// `aws logs filter-log-events --output json` of an EKS cluster's Container Insights log group: the
// current pod logs' lines as the response's events in time order, each under its container log's
// stream (`<node>-application.var.log.containers.<pod>_default_pytorch-<id>.log`) and holding
// Fluent Bit's record as its message, JSON-escaped once more; everything else as it is.
TEST_F(ShapesTest, CloudWatchFetchesTheCurrentPodLogsAsContainerInsightsEvents) {
  const auto tree = LayTwoPods("cloudwatch");
  const std::string& response = tree.at("events.json");
  ASSERT_TRUE(response.starts_with("{\n    \"events\": [\n        {\n")) << response;
  ASSERT_TRUE(response.ends_with("\n    ],\n    \"searchedLogStreams\": []\n}\n")) << response;
  const std::regex event(
      R"re(        \{\n            "logStreamName": "(([a-z-]+)-)?application\.var\.log\.containers\.([a-z0-9-]+)_default_pytorch-[0-9a-f]{64}\.log",\n            "timestamp": (\d{13}),\n            "message": "\{\\"time\\":\\"([0-9TZ:.-]+)\\",\\"stream\\":\\"stdout\\",\\"_p\\":\\"F\\",\\"log\\":\\"(.*)\\",\\"kubernetes\\":\{\\"pod_name\\":\\"([a-z0-9-]+)\\",\\"namespace_name\\":\\"default\\",\\"pod_id\\":\\"[0-9a-f-]{36}\\"(,\\"host\\":\\"[a-z-]+\\")?,\\"container_name\\":\\"pytorch\\",\\"docker_id\\":\\"[0-9a-f]{64}\\",\\"container_image\\":\\"[^"\\]+\\"\}\}",\n            "ingestionTime": \d{13},\n            "eventId": "\d{56}"\n        \})re");
  const std::vector<std::array<std::string, 5>> want = {
      // node, pod, ms, text (escaped twice), the record's time: oldest first
      {"", "llama-worker-0", "1795969531000", R"(2026-11-29T16:25:31.000000000Z a \\\"first\\\")",
       "2026-11-29T16:25:31.000000000Z"},
      {"", "llama-worker-0", "1795969531000", "untimed after a", "2026-11-29T16:25:31.000000000Z"},
      {"node-b", "llama-worker-1", "1795969532250", "2026-11-29T16:25:32.250000000Z b only",
       "2026-11-29T16:25:32.250000000Z"}};
  std::size_t n = 0;
  for (auto it = std::sregex_iterator(response.begin(), response.end(), event);
       it != std::sregex_iterator(); ++it, ++n) {
    ASSERT_LT(n, want.size());
    EXPECT_EQ((*it)[2], want[n][0]);
    EXPECT_EQ((*it)[3], want[n][1]);
    EXPECT_EQ((*it)[7], want[n][1]);
    EXPECT_EQ((*it)[4], want[n][2]);
    EXPECT_EQ((*it)[6], want[n][3]);
    EXPECT_EQ((*it)[5], want[n][4]);
  }
  EXPECT_EQ(n, want.size()) << response;
  EXPECT_FALSE(tree.contains("pods/llama-worker-0.log"));
  EXPECT_EQ(tree.at("pods/llama-worker-1.previous.log"),
            "2026-11-29T16:20:00.000000000Z b before its restart\n");
  EXPECT_EQ(tree.at("node-b/rank_3.log"), kIncident.at("node-b/rank_3.log"));
}

// `aws logs tail` of the same Container Insights events: a line an event, its time as Python's
// isoformat writes it, its log stream, Fluent Bit's record as it is.
TEST_F(ShapesTest, CloudWatchTailPrintsTheContainerInsightsEventsALineEach) {
  const auto tree = LayTwoPods("cloudwatch-tail");
  const std::regex event(
      R"re((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})\+00:00 (([a-z-]+)-)?application\.var\.log\.containers\.([a-z0-9-]+)_default_pytorch-[0-9a-f]{64}\.log \{"time":"([0-9TZ:.-]+)","stream":"stdout","_p":"F","log":"(.*)","kubernetes":\{"pod_name":"([a-z0-9-]+)","namespace_name":"default","pod_id":"[0-9a-f-]{36}"(,"host":"[a-z-]+")?,"container_name":"pytorch","docker_id":"[0-9a-f]{64}","container_image":"[^"\\]+"\}\})re");
  const std::vector<std::array<std::string, 5>> want = {
      // the event's time, node, pod, text (escaped once), the record's time: oldest first
      {"2026-11-29T16:25:31.000000", "", "llama-worker-0",
       R"(2026-11-29T16:25:31.000000000Z a \"first\")", "2026-11-29T16:25:31.000000000Z"},
      {"2026-11-29T16:25:31.000000", "", "llama-worker-0", "untimed after a",
       "2026-11-29T16:25:31.000000000Z"},
      {"2026-11-29T16:25:32.250000", "node-b", "llama-worker-1",
       "2026-11-29T16:25:32.250000000Z b only", "2026-11-29T16:25:32.250000000Z"}};
  std::istringstream in(tree.at("tail.log"));
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, event)) << line;
    ASSERT_LT(n, want.size());
    EXPECT_EQ(m[1], want[n][0]);
    EXPECT_EQ(m[3], want[n][1]);
    EXPECT_EQ(m[4], want[n][2]);
    EXPECT_EQ(m[7], want[n][2]);
    EXPECT_EQ(m[6], want[n][3]);
    EXPECT_EQ(m[5], want[n][4]);
  }
  EXPECT_EQ(n, want.size()) << tree.at("tail.log");
  EXPECT_FALSE(tree.contains("events.json"));
  EXPECT_EQ(tree.at("pods/llama-worker-1.previous.log"),
            "2026-11-29T16:20:00.000000000Z b before its restart\n");
  EXPECT_EQ(tree.at("node-b/rank_3.log"), kIncident.at("node-b/rank_3.log"));
}

// Filebeat on every machine: every log's lines as its documents in one NDJSON file in arrival
// order, each with the file's path and the host it was written on (a node folder's node, else
// the host that collected the top-level files); the checkpoint tree as it is.
TEST_F(ShapesTest, FilebeatShipsEveryLogAsItsMachinesDocuments) {
  const auto [tree, relaid] = Lay("filebeat");
  ASSERT_TRUE(relaid.applies);
  EXPECT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree.at("checkpoints/latest"), "step_10.pt\n");
  const std::regex doc(
      R"re(\{"@timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","message":"(.*)","log":\{"file":\{"path":"/var/log/collected/([^"]+)"\}\},"host":\{"name":"([a-z0-9-]+)"\},"input":\{"type":"filestream"\},"agent":\{"type":"filebeat"\},"ecs":\{"version":"8\.0\.0"\}\})re");
  std::istringstream in(tree.at("filebeat.ndjson"));
  std::map<std::string, int> lines_of;  // path -> its documents
  std::size_t documents = 0;
  for (std::string line; std::getline(in, line); ++documents) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, doc)) << line;
    const std::string path = m[2], host = m[3];
    ++lines_of[path];
    EXPECT_EQ(host, path.find('/') == std::string::npos ? "login-01" : path.substr(0, 6)) << line;
  }
  std::size_t want = 0;
  for (const auto& [rel, text] : Logs()) {
    const auto n = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    EXPECT_EQ(lines_of[rel], n) << rel;
    want += static_cast<std::size_t>(n);
  }
  EXPECT_EQ(documents, want);
}

std::string Gunzip(const std::string& gz) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

TEST_F(ShapesTest, RotatedSplitsEachLogIntoGzipAndTwoPlainPartsThatJoinBack) {
  const auto [tree, relaid] = Lay("rotated");
  for (const auto& [rel, text] : Logs()) {
    ASSERT_TRUE(tree.contains(rel)) << rel;
    std::string joined;
    if (tree.contains(rel + ".2.gz")) joined += Gunzip(tree.at(rel + ".2.gz"));
    if (tree.contains(rel + ".1")) joined += tree.at(rel + ".1");
    joined += tree.at(rel);
    EXPECT_EQ(joined, text) << rel;
  }
  EXPECT_TRUE(tree.contains("node-a/rank_0.log.2.gz"));
  EXPECT_TRUE(tree.contains("node-a/rank_0.log.1"));
  EXPECT_FALSE(tree.at("node-a/rank_0.log").empty());
}

}  // namespace
