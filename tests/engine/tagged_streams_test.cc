// A file that relays several containers' tagged lines (`kubectl logs --prefix`, stern, `docker
// compose logs`) read as a stream per tag (ingest/streams.h): each stream parsed as a file of its
// own, its node the one its pod's describe names, its lines cited where the file has them.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "analyze/gpu_health.h"
#include "fixture.h"
#include "ingest/attempts.h"
#include "ingest/file_text.h"
#include "ingest/load.h"
#include "ingest/streams.h"
#include "parse/prefix.h"

namespace denpex::engine {
namespace {
using testing::Write;

std::vector<TaggedStream> Split(std::string_view text) {
  return SplitTaggedStreams(text, SniffPrefixes(text));
}

TEST(TaggedStreams, KubectlPrefixSplitsByPodAndContainerWithTheFilesLines) {
  const std::string text =
      "collected by ops\n"  // before any tag
      "[pod/llama-worker-0/pytorch] [default0]:step 1\n"
      "[pod/llama-worker-1/pytorch] [default0]:step 1\n"
      "  a piece of the line before\n"  // no tag: the line before's
      "\n"
      "[pod/llama-worker-0/pytorch] [default1]:step 2\r\n"
      "[pod/llama-worker-1/pytorch] [default0]:step 2\n"
      "[pod/llama-worker-1/pytorch] [default0]:step 3\n"
      "[pod/llama-worker-0/sidecar] ready";  // no final newline
  const std::vector<TaggedStream> streams = Split(text);
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[0].tag, "llama-worker-0/pytorch");
  EXPECT_EQ(streams[1].tag, "llama-worker-1/pytorch");
  EXPECT_EQ(streams[2].tag, "llama-worker-0/sidecar");
  EXPECT_EQ(TaggedPod(streams[2].tag), "llama-worker-0");
  EXPECT_EQ(streams[0].text,
            "collected by ops\n[pod/llama-worker-0/pytorch] [default0]:step 1\n"
            "[pod/llama-worker-0/pytorch] [default1]:step 2\r\n");
  EXPECT_EQ(streams[1].text,
            "[pod/llama-worker-1/pytorch] [default0]:step 1\n  a piece of the line before\n\n"
            "[pod/llama-worker-1/pytorch] [default0]:step 2\n[pod/llama-worker-1/pytorch] "
            "[default0]:step 3\n");
  EXPECT_EQ(streams[2].text, "[pod/llama-worker-0/sidecar] ready\n");
  for (const TaggedStream& s : streams) {  // each line at its number and offset in the file
    for (const TaggedStream::Line& l : s.lines) {
      const std::string_view in_text = std::string_view(s.text).substr(l.text_offset);
      const std::string_view in_file = std::string_view(text).substr(l.file_offset);
      EXPECT_EQ(in_text.substr(0, in_text.find('\n')), in_file.substr(0, in_file.find('\n')));
      EXPECT_EQ(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(l.file_offset),
                           '\n') +
                    1,
                l.number);
    }
  }
  EXPECT_EQ(streams[1].lines[2].number, 5u);
}

TEST(TaggedStreams, SternAndComposeTagsSplitToo) {
  const std::vector<TaggedStream> stern = Split(
      "llama-worker-0 pytorch step 1\nllama-worker-1 pytorch step 1\n"
      "llama-worker-0 pytorch step 2\nllama-worker-1 pytorch step 2\n");
  ASSERT_EQ(stern.size(), 2u);
  EXPECT_EQ(stern[0].tag, "llama-worker-0");
  EXPECT_EQ(stern[1].lines[1].number, 4u);
  const std::vector<TaggedStream> compose =
      Split("trainer-1  | step 1\ntrainer-10 | step 1\ntrainer-1  | step 2\ntrainer-10 | step 2\n");
  ASSERT_EQ(compose.size(), 2u);
  EXPECT_EQ(compose[1].tag, "trainer-10");
  // logcli leaves out the labels every stream shares, and pads the sets to the widest
  const std::vector<TaggedStream> loki = Split(
      "2026-03-02T09:00:21.972589808Z {pod=\"llama-worker-0\"}    step 1\n"
      "2026-03-02T09:00:21.972589809Z {pod=\"llama-worker-10\"}   step 1\n"
      "2026-03-02T09:00:22.972589808Z {pod=\"llama-worker-0\"}    step 2\n");
  ASSERT_EQ(loki.size(), 2u);
  EXPECT_EQ(loki[1].tag, "{pod=\"llama-worker-10\"}");
  EXPECT_EQ(TaggedPod(loki[1].tag), "llama-worker-10");
  EXPECT_EQ(TaggedPod("{app=\"x\", kubernetes_pod_name=\"llama-worker-3\"}"), "llama-worker-3");
  EXPECT_EQ(TaggedPod("{app=\"x\", mypod=\"y\"}"), "{app=\"x\", mypod=\"y\"}");
}

// Promtail labels each line with the stream it came from: a pod's stdout and stderr are its one
// console (as `kubectl logs` prints it), so its two label sets are one stream.
TEST(TaggedStreams, ALokiStreamLabelMakesNoStreamOfItsOwn) {
  const std::vector<TaggedStream> loki = Split(
      "2026-03-02T09:00:21Z {pod=\"llama-worker-0\", stream=\"stdout\"} step 1\n"
      "2026-03-02T09:00:21Z {pod=\"llama-worker-1\", stream=\"stderr\"} E0302 boom\n"
      "2026-03-02T09:00:22Z {pod=\"llama-worker-0\", stream=\"stderr\"} W0302 slow\n"
      "2026-03-02T09:00:22Z {pod=\"llama-worker-1\", stream=\"stdout\"} step 1\n"
      "2026-03-02T09:00:23Z {stream=\"stdout\", pod=\"llama-worker-0\"} step 2\n");
  ASSERT_EQ(loki.size(), 2u);
  EXPECT_EQ(loki[0].tag, "{pod=\"llama-worker-0\"}");
  EXPECT_EQ(loki[1].tag, "{pod=\"llama-worker-1\"}");
  EXPECT_EQ(loki[0].lines.size(), 3u);
  EXPECT_EQ(loki[1].lines.size(), 2u);
  // a label whose name merely ends in `stream` is kept
  const std::vector<TaggedStream> other = Split(
      "2026-03-02T09:00:21Z {pod=\"a-1\", upstream=\"x\"} step 1\n"
      "2026-03-02T09:00:21Z {pod=\"a-1\", upstream=\"y\"} step 1\n");
  ASSERT_EQ(other.size(), 2u);
  EXPECT_EQ(other[1].tag, "{pod=\"a-1\", upstream=\"y\"}");
}

TEST(TaggedStreams, OneTagOrAFewTaggedLinesIsNoSplit) {
  EXPECT_TRUE(Split("[pod/llama-worker-0/pytorch] a\n[pod/llama-worker-0/pytorch] b\n").empty());
  // two pods' lines pasted into a log of other lines: read as it is
  EXPECT_TRUE(
      Split("a\nb\nc\n[pod/llama-worker-0/pytorch] a\n[pod/llama-worker-1/pytorch] b\n").empty());
  EXPECT_TRUE(Split("RuntimeError: boom\nValueError: x\n").empty());
  EXPECT_FALSE(MayRelayStreams("RuntimeError: boom\n", SniffPrefixes("RuntimeError: boom\n")));
  // one label set that names no node: read as it is
  EXPECT_TRUE(Split("2026-03-02T10:00:21Z {job=\"trainer\", pod=\"w-1\"} a\n"
                    "2026-03-02T10:00:22Z {job=\"trainer\", pod=\"w-1\"} b\n")
                  .empty());
}

const LogFile* StreamOf(const Incident& inc, std::string_view tag) {
  for (const LogFile& f : inc.files) {
    if (f.tag == tag) return &f;
  }
  return nullptr;
}

// The streams of `inc` tagged `tag0` and `tag1`, each listed under `path`, the first on gpu-0005
// and the second on gpu-0006 (as the tests' describes or records place them); nullptr where one
// is missing.
std::pair<const LogFile*, const LogFile*> TwoStreamsOnTheirNodes(const Incident& inc,
                                                                 std::string_view path,
                                                                 std::string_view tag0,
                                                                 std::string_view tag1) {
  const LogFile* w[2] = {StreamOf(inc, tag0), StreamOf(inc, tag1)};
  for (int k = 0; k < 2; ++k) {
    if (w[k] == nullptr) continue;
    EXPECT_EQ(w[k]->path, path);
    EXPECT_EQ(w[k]->node >= 0 ? inc.nodes[w[k]->node] : "", k == 0 ? "gpu-0005" : "gpu-0006");
  }
  return {w[0], w[1]};
}

constexpr std::string_view kFailed =
    "E0302 09:00:23.624000 1415591 torch/distributed/elastic/multiprocessing/api.py:833] failed "
    "(exitcode: 1) "
    "local_rank: 3 (pid: 1415637) of binary: /usr/bin/python3";

std::string Tagged(std::string_view pod, std::string_view line) {
  return "[pod/" + std::string(pod) + "/pytorch] " + std::string(line) + "\n";
}

// `kubectl logs -l job-name=llama --prefix > pods.log`: each pod's stream is the node its
// describe names, as `pods/<pod>.log` would be, and its events cite pods.log's own lines.
TEST(TaggedStreams, EachPodsStreamIsTheNodeItsDescribeNames) {
  testing::TempDir dir;
  Write(dir.path() / "pods.log", Tagged("llama-worker-0", "[default0]:step 1") +
                                     Tagged("llama-worker-1", "[default0]:step 1") +
                                     Tagged("llama-worker-1", kFailed) +
                                     Tagged("llama-worker-0", "[default0]:step 2"));
  Write(dir.path() / "describe/llama-worker-0.txt", "Node:             gpu-0005/10.128.0.6\n");
  Write(dir.path() / "describe/llama-worker-1.txt", "Node:             gpu-0006/10.128.0.7\n");
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const auto [w0, w1] =
      TwoStreamsOnTheirNodes(*inc, "pods.log", "llama-worker-0/pytorch", "llama-worker-1/pytorch");
  ASSERT_NE(w0, nullptr);
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w0->last_line.line, 4u);
  EXPECT_EQ(inc->input.files, 3);  // pods.log once, the two describes
  bool cited = false;
  for (const Event& e : inc->events) {
    if (e.kind != Kind::kWorkerFailed) continue;
    cited = true;
    EXPECT_EQ(&inc->files[e.file], w1);
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(inc->nodes[e.node], "gpu-0006");
  }
  EXPECT_TRUE(cited);
}

// A relayed file holds every pod's lines: a pod's stream, whose path is the file's, is not read
// as its node's GPU snapshot (another pod's CUDA_VISIBLE_DEVICES would be taken for its node's).
TEST(TaggedStreams, AStreamsFileIsNotReadAsItsNodesGpuHealth) {
  testing::TempDir dir;
  Write(dir.path() / "pods.log",
        Tagged("llama-worker-0", "[default0]:step 1") +
            Tagged("llama-worker-1", "CUDA_VISIBLE_DEVICES=4,5,6,7,0,1,2,3") +
            Tagged("llama-worker-1", "[default0]:step 1") +
            Tagged("llama-worker-0", "[default0]:step 2"));
  Write(dir.path() / "describe/llama-worker-0.txt", "Node:             gpu-0005/10.128.0.6\n");
  Write(dir.path() / "describe/llama-worker-1.txt", "Node:             gpu-0006/10.128.0.7\n");
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const LogFile* w0 = StreamOf(*inc, "llama-worker-0/pytorch");
  ASSERT_NE(w0, nullptr);
  ASSERT_GE(w0->node, 0);
  const NodeGpuHealth health = ReadNodeGpuHealth(*inc, w0->node);
  EXPECT_TRUE(health.visible.empty());
  // which says so: the node's GPUs are then not taken in their default order for its local ranks
  // (a list in a stream may reorder them)
  EXPECT_TRUE(health.streams_unread);
}

// A JobSet recreated its gang, every pod's log in one `--prefix` file: the gone pod's stream is
// the first attempt's, the recreated pod's stream is set aside (as its `pods/<pod>.log` would be).
TEST(TaggedStreams, RecreatedJobSetPodsStreamIsTheLaterAttempt) {
  testing::TempDir dir;
  Write(dir.path() / "pods.log", Tagged("llama-workers-0-1-l8l87", kFailed) +
                                     Tagged("llama-workers-0-1-qww6k", kFailed) +
                                     Tagged("llama-workers-0-2-bcdfg", kFailed));
  Write(dir.path() / "describe/llama-workers-0-1-qww6k.txt",
        "Node:             gpu-0002/10.128.0.3\n");
  Write(dir.path() / "describe/llama-workers-0-2-bcdfg.txt",
        "Node:             gpu-0003/10.128.0.4\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  SetAsideLaterAttempts(&*inc);
  EXPECT_EQ(inc->later_attempt_files, 1);
  EXPECT_FALSE(StreamOf(*inc, "llama-workers-0-1-l8l87/pytorch")->later_attempt);
  EXPECT_TRUE(StreamOf(*inc, "llama-workers-0-1-qww6k/pytorch")->later_attempt);
  EXPECT_FALSE(StreamOf(*inc, "llama-workers-0-2-bcdfg/pytorch")->later_attempt);
}

// A log shipper's records of two pods (Fluent Bit's `kubernetes` filter), no describe: each pod's
// stream is the node its records name, and a line naming the pod's hostname (NCCL's
// `<host>:<pid>:<tid>`) is that node's too.
TEST(TaggedStreams, AShippersRecordsAreAStreamPerPodEachTheNodeTheyName) {
  testing::TempDir dir;
  const auto record = [](std::string_view pod, std::string_view node, std::string_view line) {
    return R"({"date":1772442021.5,"log":")" + std::string(line) +
           R"(","kubernetes":{"pod_name":")" + std::string(pod) +
           R"(","namespace_name":"default","host":")" + std::string(node) +
           R"(","container_name":"pytorch"}})" + "\n";
  };
  Write(dir.path() / "pods.json",
        record("llama-worker-0", "gpu-0005", "[default0]:step 1") +
            record("llama-worker-1", "gpu-0006", "[default0]:step 1") +
            record("llama-worker-1", "gpu-0006",
                   "llama-worker-1:1415637:1415700 [3] NCCL INFO comm 0x5581 rank 11 nranks 16 "
                   "cudaDev 3 nvmlDev 3 busId 9c000 commId 0x1b2 - Init COMPLETE") +
            record("llama-worker-1", "gpu-0006", std::string(kFailed)) +
            record("llama-worker-0", "gpu-0005", "[default0]:step 2"));
  EXPECT_EQ(TaggedNode("{container=\"pytorch\", node_name=\"gpu-0006\", pod=\"llama-worker-1\"}"),
            "gpu-0006");
  EXPECT_EQ(TaggedNode("{kubernetes_node=\"gpu-0006\"}"), "gpu-0006");
  EXPECT_EQ(TaggedNode("{mynode=\"gpu-0006\"}"), "");
  EXPECT_EQ(TaggedNode("llama-worker-1/pytorch"), "");
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const auto [w0, w1] = TwoStreamsOnTheirNodes(
      *inc, "pods.json",
      "{container=\"pytorch\", namespace=\"default\", node_name=\"gpu-0005\", "
      "pod=\"llama-worker-0\"}",
      "{container=\"pytorch\", namespace=\"default\", node_name=\"gpu-0006\", "
      "pod=\"llama-worker-1\"}");
  ASSERT_NE(w0, nullptr);
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(std::count(inc->nodes.begin(), inc->nodes.end(), "llama-worker-1"), 0);
  int seen = 0;
  for (const Event& e : inc->events) {
    if (e.kind != Kind::kWorkerFailed && e.kind != Kind::kCommInit) continue;
    ++seen;
    EXPECT_EQ(&inc->files[e.file], w1);
    EXPECT_EQ(e.line, e.kind == Kind::kWorkerFailed ? 4u : 3u);
    ASSERT_GE(e.node, 0);
    EXPECT_EQ(inc->nodes[e.node], "gpu-0006");
  }
  EXPECT_EQ(seen, 2);
}

// One pod's export (a search for one pod, Fluent Bit's records of one pod): its one label set
// names its node, which is the stream's, not a node named for the file.
TEST(TaggedStreams, OnePodsRecordsAreTheNodeTheyName) {
  testing::TempDir dir;
  Write(
      dir.path() / "pods.json",
      R"({"date":1772442021.5,"log":"[default3]:step 1","kubernetes":{"pod_name":"llama-worker-1","host":"gpu-0006","container_name":"pytorch"}})"
      "\n"
      R"({"date":1772442022.5,"log":")" +
          std::string(kFailed) +
          R"(","kubernetes":{"pod_name":"llama-worker-1","host":"gpu-0006","container_name":"pytorch"}})"
          "\n");
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  int seen = 0;
  for (const Event& e : inc->events) {
    if (e.kind != Kind::kWorkerFailed) continue;
    ++seen;
    EXPECT_EQ(inc->files[e.file].path, "pods.json");
    EXPECT_EQ(inc->files[e.file].tag,
              "{container=\"pytorch\", node_name=\"gpu-0006\", pod=\"llama-worker-1\"}");
    ASSERT_GE(e.node, 0);
    EXPECT_EQ(inc->nodes[e.node], "gpu-0006");
    EXPECT_EQ(e.line, 2u);
  }
  EXPECT_EQ(seen, 1);
}

// Google Cloud Logging's export of two pods (`gcloud logging read --format=json`: one
// pretty-printed array, newest first, larger than a file's head): each pod's stream is the node
// its entries' label names, its lines in time order, cited and quoted in the decoded text.
TEST(TaggedStreams, ACloudLoggingExportIsAStreamPerPodInTimeOrder) {
  testing::TempDir dir;
  const auto entry = [](int ms, std::string_view pod, std::string_view node,
                        std::string_view line) {
    char time[32];
    std::snprintf(time, sizeof time, "2026-03-02T09:00:%02d.%03dZ", 10 + ms / 1000, ms % 1000);
    return R"(  {
    "labels": {
      "compute.googleapis.com/resource_name": ")" +
           std::string(node) + R"("
    },
    "resource": {
      "labels": {
        "container_name": "pytorch",
        "pod_name": ")" +
           std::string(pod) + R"("
      },
      "type": "k8s_container"
    },
    "textPayload": ")" +
           std::string(line) + R"(",
    "timestamp": ")" +
           time + "\"\n  }";
  };
  std::vector<std::string> entries;  // oldest first; written newest first
  for (int step = 0; step < 200; ++step)
    entries.push_back(
        entry(step * 10, "llama-worker-0", "gpu-0005", "[default0]:step " + std::to_string(step)));
  entries.push_back(entry(2500, "llama-worker-1", "gpu-0006", "[default0]:step 1"));
  entries.push_back(entry(2600, "llama-worker-1", "gpu-0006", std::string(kFailed)));
  std::string bytes = "[\n";
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    bytes += (bytes.size() > 2 ? ",\n" : "") + *it;
  Write(dir.path() / "downloaded-logs.json", bytes + "\n]\n");
  ASSERT_GT(bytes.size(), 64u * 1024);  // read past its head: mapped, then decoded whole
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const auto [w0, w1] = TwoStreamsOnTheirNodes(
      *inc, "downloaded-logs.json",
      "{container=\"pytorch\", node_name=\"gpu-0005\", pod=\"llama-worker-0\"}",
      "{container=\"pytorch\", node_name=\"gpu-0006\", pod=\"llama-worker-1\"}");
  ASSERT_NE(w0, nullptr);
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w0->last_line.line, 200u);  // its newest line, the array's second element
  bool cited = false;
  for (const Event& e : inc->events) {
    if (e.kind != Kind::kWorkerFailed) continue;
    cited = true;
    EXPECT_EQ(&inc->files[e.file], w1);
    EXPECT_EQ(e.line, 202u);  // the last line in time, the array's first element
    auto quote = ReadSpan(dir.path() / "downloaded-logs.json", e.offset, 200);
    ASSERT_TRUE(quote.ok()) << quote.status().message();
    EXPECT_TRUE(
        quote->starts_with("2026-03-02T09:00:12.600Z {container=\"pytorch\", "
                           "node_name=\"gpu-0006\", pod=\"llama-worker-1\"} E0302"))
        << *quote;
  }
  EXPECT_TRUE(cited);
}

constexpr std::string_view kTimeout =
    "[E302 09:00:21.535 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
    "for 600010 milliseconds before timing out.";

// A search response's hits shuffled, as a search by score leaves them, with no place in their
// file: torchrun's failure table (printed in one millisecond) comes with its entries' fields in
// no known order. Each `rank :` field is read alone: the rank and local rank it names (what
// places the pod's `[default<L>]:` lines), never an exit code that may be another entry's.
TEST(TaggedStreams, AShuffledSearchResponsesFailureTableIsReadFieldByField) {
  testing::TempDir dir;
  const auto hit = [](std::string_view time, std::string_view line,
                      std::string_view pod = "llama-worker-1", std::string_view node = "gpu-0006") {
    std::string escaped;
    for (const char c : line) (escaped += c == '"' ? "\\" : "") += c;
    return R"({"_index":"logs","_id":"x","_score":1.0,"_source":{"@timestamp":"2026-03-02T09:00:)" +
           std::string(time) + R"(Z","message":")" + escaped +
           R"(","kubernetes":{"pod":{"name":")" + std::string(pod) + R"("},"node":{"name":")" +
           std::string(node) + R"("}}}})";
  };
  // the table with its two `exitcode :` lines swapped: read in this order, rank 8 would be the
  // one killed by SIGSEGV
  const std::vector<std::string_view> table = {
      "[2026-03-02 09:00:23,624] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
      "(exitcode: -11) local_rank: 3 (pid: 1415637) of binary: /usr/bin/python3",
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
      "============================================================",
      "train.py FAILED",
      "------------------------------------------------------------",
      "Failures:",
      "[1]:",
      "  time      : 2026-03-02_09:00:23",
      "  host      : llama-worker-1",
      "  rank      : 8 (local_rank: 0)",
      "  exitcode  : -11 (pid: 1415637)",
      "  error_file: <N/A>",
      "  traceback : Signal 15 (SIGTERM) received by PID 1415634",
      "------------------------------------------------------------",
      "Root Cause (first observed failure):",
      "[0]:",
      "  time      : 2026-03-02_09:00:23",
      "  host      : llama-worker-1",
      "  rank      : 11 (local_rank: 3)",
      "  exitcode  : -15 (pid: 1415634)",
      "  error_file: <N/A>",
      "  traceback : Signal 11 (SIGSEGV) received by PID 1415637",
      "============================================================"};
  std::string hits = hit("21.535", "[default0]:" + std::string(kTimeout));
  for (const std::string_view line : table) (hits += ',') += hit("23.624", line);
  (hits += ',') += hit("22.000", "[default3]:step 2");  // earlier than the table, after it
  (hits += ',') += hit("22.000", "[default0]:step 2", "llama-worker-0", "gpu-0005");
  Write(dir.path() / "search.json", R"({"took":5,"hits":{"hits":[)" + hits + "]}}\n");
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  std::map<std::int32_t, std::int32_t> local_ranks;  // of the entries' ranks
  int timeouts = 0;
  for (const Event& e : inc->events) {
    if (const auto* fe = std::get_if<FailureEntry>(&e.detail)) {
      local_ranks[e.rank] = fe->local_rank;
      ASSERT_GE(e.node, 0);
      EXPECT_EQ(inc->nodes[e.node], "gpu-0006");
      EXPECT_EQ(fe->exit_code, 0) << "rank " << e.rank;  // not said: no exit code guessed
      EXPECT_FALSE(fe->root_cause);
    } else if (e.kind == Kind::kWatchdogTimeout) {
      ++timeouts;
      EXPECT_EQ(e.rank, 8);  // local rank 0 of gpu-0006, as the `rank :` field alone says
    }
  }
  EXPECT_EQ(local_ranks, (std::map<std::int32_t, std::int32_t>{{8, 0}, {11, 3}}));
  EXPECT_EQ(timeouts, 1);
  EXPECT_NE(inc->input.problems.front().find("read each alone"), std::string::npos)
      << inc->input.problems.front();
}

// A machine's shipper (Filebeat, no Kubernetes) names the host a file was read on, not the nodes
// its lines are of: srun's console, written on the batch host, holds every node's lines. A
// stream per host, its node what its lines say.
TEST(TaggedStreams, AMachinesShippedLinesAreAStreamWhoseNodeItsLinesSay) {
  testing::TempDir dir;
  const auto record = [](std::string_view host, std::string_view line) {
    return R"({"@timestamp":"2026-03-02T09:00:21Z","message":")" + std::string(line) +
           R"(","host":{"name":")" + std::string(host) +
           R"("},"log":{"file":{"path":"/var/log/x.log"}}})" + "\n";
  };
  Write(dir.path() / "export.ndjson",
        record("gpu-0001", "3: " + std::string(kTimeout)) +
            record("gpu-0002", "Mar  2 09:00:21 gpu-0002 kernel: nvidia: probe") +
            record("gpu-0001", "5: " + std::string(kTimeout)) +
            record("gpu-0002", "Mar  2 09:00:22 gpu-0002 kernel: nvidia: ready"));
  auto inc = LoadIncident(dir.path(), 2);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const LogFile* batch_host = StreamOf(*inc, "{node_name=\"gpu-0001\"}");
  ASSERT_NE(batch_host, nullptr);
  ASSERT_NE(StreamOf(*inc, "{node_name=\"gpu-0002\"}"), nullptr);
  EXPECT_LT(batch_host->node, 0);  // srun's console is no one node's
  int ranked = 0;
  for (const Event& e : inc->events) {
    if (e.rank < 0) continue;
    ++ranked;
    EXPECT_EQ(&inc->files[e.file], batch_host);
    EXPECT_LT(e.node, 0) << e.rank;
  }
  EXPECT_EQ(ranked, 2);
}

}  // namespace
}  // namespace denpex::engine
