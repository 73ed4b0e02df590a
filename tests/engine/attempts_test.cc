// Kubernetes restarts (docs/log_formats.md §24, "Restarts"; ingest/attempts.h): the later
// attempts' pod logs are set aside, whatever wrote them. Hand-written incidents, real shapes.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "fixture.h"
#include "ingest/attempts.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::Write;

const LogFile* FileOf(const Incident& inc, std::string_view path) {
  for (const LogFile& f : inc.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

int EventsIn(const Incident& inc, std::string_view path) {
  int n = 0;
  for (const Event& e : inc.events) n += inc.files[e.file].path == path ? 1 : 0;
  return n;
}

constexpr char kFailed[] =
    "E0302 09:00:23.624000 1415591 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 3 "
    "(pid: 1415637) of binary: /usr/bin/python3\n";

// A container restarted in place: `kubectl logs --previous` beside `kubectl logs`.
TEST(Attempts, PreviousLogBesideTheCurrentOneIsTheFirstAttempt) {
  testing::TempDir dir;
  Write(dir.path() / "pods/llama-worker-3.previous.log", kFailed);
  Write(dir.path() / "pods/llama-worker-3.log", kFailed);
  Write(dir.path() / "pods/llama-worker-4.log", kFailed);  // never restarted: one attempt
  Write(dir.path() / "describe/llama-worker-3.txt", "Node:             gpu-0005/10.128.0.6\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_EQ(EventsIn(*inc, "pods/llama-worker-3.log"), 1);
  SetAsideLaterAttempts(&*inc);
  EXPECT_EQ(inc->later_attempt_files, 1);
  EXPECT_TRUE(FileOf(*inc, "pods/llama-worker-3.log")->later_attempt);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-worker-3.log"), 0);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-worker-3.previous.log"), 1);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-worker-4.log"), 1);
}

// A JobSet recreated its gang: the gone pod (no describe) and the new one share a hostname; the
// gone pod's node comes from its `Scheduled` row.
TEST(Attempts, RecreatedJobSetPodIsTheLaterAttempt) {
  testing::TempDir dir;
  Write(dir.path() / "pods/llama-workers-0-1-l8l87.log", kFailed);
  Write(dir.path() / "pods/llama-workers-0-1-qww6k.log", kFailed);
  Write(dir.path() / "pods/llama-workers-0-2-bcdfg.log", kFailed);  // described, no earlier pod
  Write(dir.path() / "describe/llama-workers-0-1-qww6k.txt", "Node:             gpu-0002/10.128.0.3\n");
  Write(dir.path() / "describe/llama-workers-0-2-bcdfg.txt", "Node:             gpu-0003/10.128.0.4\n");
  Write(dir.path() / "events.txt",
        "LAST SEEN   TYPE     REASON      OBJECT                          MESSAGE\n"
        "17m         Normal   Scheduled   pod/llama-workers-0-1-l8l87     Successfully assigned training/llama-workers-0-1-l8l87 to gpu-0009\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const LogFile* gone = FileOf(*inc, "pods/llama-workers-0-1-l8l87.log");
  ASSERT_NE(gone, nullptr);
  ASSERT_GE(gone->node, 0);
  EXPECT_EQ(inc->nodes[gone->node], "gpu-0009");
  SetAsideLaterAttempts(&*inc);
  EXPECT_EQ(inc->later_attempt_files, 1);
  EXPECT_TRUE(FileOf(*inc, "pods/llama-workers-0-1-qww6k.log")->later_attempt);
  EXPECT_FALSE(FileOf(*inc, "pods/llama-workers-0-2-bcdfg.log")->later_attempt);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-workers-0-1-l8l87.log"), 1);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-workers-0-1-qww6k.log"), 0);
}

// A JobSet recreated twice (maxRestarts 2): a hostname has two gone pods; the first attempt's is
// the one whose lines start first, whatever the order of the names.
TEST(Attempts, OfTwoGonePodsTheOneThatStartsFirstIsTheFirstAttempt) {
  testing::TempDir dir;
  const std::string later =
      "E0302 09:14:02.100000 1415591 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 3 "
      "(pid: 1415637) of binary: /usr/bin/python3\n";
  Write(dir.path() / "pods/llama-workers-0-1-a2b3c.log", later);    // attempt 1
  Write(dir.path() / "pods/llama-workers-0-1-z9y8x.log", kFailed);  // attempt 0 (09:00:23)
  Write(dir.path() / "pods/llama-workers-0-1-qww6k.log", later);    // attempt 2, described
  Write(dir.path() / "describe/llama-workers-0-1-qww6k.txt", "Node:             gpu-0002/10.128.0.3\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  SetAsideLaterAttempts(&*inc);
  EXPECT_EQ(inc->later_attempt_files, 2);
  EXPECT_FALSE(FileOf(*inc, "pods/llama-workers-0-1-z9y8x.log")->later_attempt);
  EXPECT_TRUE(FileOf(*inc, "pods/llama-workers-0-1-a2b3c.log")->later_attempt);
  EXPECT_TRUE(FileOf(*inc, "pods/llama-workers-0-1-qww6k.log")->later_attempt);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-workers-0-1-z9y8x.log"), 1);
}

// One attempt: nothing changes.
TEST(Attempts, SingleAttemptIsLeftAlone) {
  testing::TempDir dir;
  Write(dir.path() / "pods/llama-workers-0-1-qww6k.log", kFailed);
  Write(dir.path() / "describe/llama-workers-0-1-qww6k.txt", "Node:             gpu-0002/10.128.0.3\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok());
  const std::size_t events = inc->events.size();
  SetAsideLaterAttempts(&*inc);
  EXPECT_EQ(inc->later_attempt_files, 0);
  EXPECT_EQ(inc->events.size(), events);
}

// Rotated by a log shipper: each attempt's pod log is a stream of pieces (`X.log.1`,
// `X.log.2.gz`), decided as one by its live piece's name and counted once.
TEST(Attempts, RotatedPiecesFollowTheirLivePiece) {
  testing::TempDir dir;
  Write(dir.path() / "pods/llama-worker-3.previous.log.1", kFailed);
  Write(dir.path() / "pods/llama-worker-3.previous.log", kFailed);
  Write(dir.path() / "pods/llama-worker-3.log.1", kFailed);
  Write(dir.path() / "pods/llama-worker-3.log", kFailed);
  Write(dir.path() / "describe/llama-worker-3.txt", "Node:             gpu-0005/10.128.0.6\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_GE(FileOf(*inc, "pods/llama-worker-3.log.1")->rotated_into, 0);
  SetAsideLaterAttempts(&*inc);
  EXPECT_EQ(inc->later_attempt_files, 1);
  EXPECT_TRUE(FileOf(*inc, "pods/llama-worker-3.log.1")->later_attempt);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-worker-3.log.1"), 0);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-worker-3.log"), 0);
  EXPECT_FALSE(FileOf(*inc, "pods/llama-worker-3.previous.log.1")->later_attempt);
  EXPECT_EQ(EventsIn(*inc, "pods/llama-worker-3.previous.log.1"), 1);
}

}  // namespace
}  // namespace denpex::engine
