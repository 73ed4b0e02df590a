// The node/GPU history store (denpex/engine/history_store.h, docs/history_format.md) and `denpex
// diagnose --history FILE [--record-history]`: earlier incidents of the initiator's node and GPU
// are counted and named, a repeat offender's recovery is escalated (drain + RMA instead of a
// reset), bad lines get file:line messages, and the store is written only when asked and never
// inside the incident.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "denpex/cli/commands.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/history_store.h"
#include "fixture.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

void Append(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::app) << text;
}

// The fixture's job (rank 3 on gpu-0001 SIGKILLed at 09:17:03 on 2 March) with an ECC burst on
// its GPU (nvidia-smi index 3, 0000:5d:00).
struct EccJob {
  TempDir dir;
  fs::path incident() const { return dir.path() / "incident"; }
  EccJob() {
    testing::WriteIncident(incident(), testing::Incident{});
    Append(incident() / "gpu-0001" / "nvidia-smi.log",
           "|   3  NVIDIA H100 80GB HBM3          On  | 00000000:5D:00.0 Off |                    1 |\n");
    Append(incident() / "gpu-0001" / "kern.log",
           "Mar  2 09:17:03 gpu-0001 kernel: [2726584.934322] NVRM: Xid (PCI:0000:5d:00): 48, pid='<unknown>', name=<unknown>, "
           "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdb481b7 "
           "partition 3, subpartition 1\n");
  }
};

std::string Entry(const std::string& time, const std::string& node, const std::string& gpu, const std::string& cls,
                  const std::string& owner = "OWNER_GPU_HARDWARE") {
  return "{\"time\":\"" + time + "\",\"node\":\"" + node + "\",\"gpu\":\"" + gpu + "\",\"failure_class\":\"" + cls +
         "\",\"owner\":\"" + owner + "\",\"incident\":\"/incidents/" + time.substr(0, 10) + "\",\"action\":\"reset_gpu\"}\n";
}

int Diagnose(const cli::DiagnoseArgs& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = cli::RunDiagnose(args, o, e);
  *out = o.str(), *err = e.str();
  return rc;
}

TEST(History, ARepeatOffenderGpuIsDrainedAndRmaedInsteadOfReset) {
  EccJob job;
  const fs::path store = job.dir.path() / "history.jsonl";
  Append(store, Entry("2026-02-11T04:00:00Z", "gpu-0001", "0000:5d:00", "FAILURE_CLASS_GPU_ECC") +
                    Entry("2026-02-20T04:00:00Z", "gpu-0002", "0000:5d:00", "FAILURE_CLASS_GPU_ECC") +  // another node
                    Entry("2026-03-09T04:00:00Z", "gpu-0001", "0000:5d:00", "FAILURE_CLASS_GPU_ECC"));  // later
  auto d = engine::Diagnose(job.incident(), {.threads = 1});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->initiator().gpu(), "0000:5d:00");
  EXPECT_EQ(d->recovery().preconditions(0).action(), "reset_gpu");  // without history
  auto h = ReadHistory(store);
  ASSERT_TRUE(h.ok());
  ApplyHistory(*h, store.string(), job.incident(), &*d);
  EXPECT_EQ(d->recurrence().node_incidents(), 1);
  EXPECT_EQ(d->recurrence().gpu_incidents(), 1);
  EXPECT_TRUE(d->recurrence().escalated());
  EXPECT_EQ(d->recovery().preconditions(0).action(), "drain_and_rma");
  for (const auto& p : d->recovery().preconditions()) EXPECT_NE(p.action(), "reset_gpu");
  EXPECT_NE(d->reason().find("gpu-0001 had 1 earlier incident(s)"), std::string::npos) << d->reason();
  EXPECT_NE(d->reason().find("2026-02-11 GPU_ECC on GPU 0000:5d:00"), std::string::npos) << d->reason();
}

TEST(History, ANodeWithTwoEarlierHardwareIncidentsIsDrainedButAnApplicationsBugIsNotHeldAgainstIt) {
  EccJob job;
  History h;
  for (const char* t : {"2026-01-05T04:00:00Z", "2026-02-05T04:00:00Z"}) {
    v1::HistoryEntry e;
    e.set_time(t), e.set_node("gpu-0001"), e.set_gpu("0000:18:00"), e.set_owner(v1::OWNER_GPU_HARDWARE);
    e.set_failure_class(v1::FAILURE_CLASS_GPU_NVLINK), e.set_incident(std::string("/i/") + t);
    h.entries.push_back(e);
  }
  auto d = engine::Diagnose(job.incident(), {.threads = 1});
  ASSERT_TRUE(d.ok());
  v1::Diagnosis app = *d;
  ApplyHistory(h, "h.jsonl", job.incident(), &*d);
  EXPECT_EQ(d->recurrence().gpu_incidents(), 0);
  EXPECT_TRUE(d->recurrence().escalated());
  EXPECT_EQ(d->recovery().preconditions(0).action(), "drain_node");
  EXPECT_EQ(d->recovery().preconditions(1).action(), "reset_gpu");  // this GPU's own first time
  app.set_owner(v1::OWNER_APPLICATION);  // an application's failure: counted, never escalated
  ApplyHistory(h, "h.jsonl", job.incident(), &app);
  EXPECT_EQ(app.recurrence().node_incidents(), 2);
  EXPECT_FALSE(app.recurrence().escalated());
}

TEST(History, BadLinesAreSkippedWithTheirFileAndLine) {
  TempDir dir;
  const fs::path store = dir.path() / "h.jsonl";
  Append(store, Entry("2026-02-11T04:00:00Z", "gpu-0001", "", "FAILURE_CLASS_GPU_ECC") + "not json\n\n" +
                    "{\"time\":\"yesterday\",\"node\":\"gpu-0001\"}\n{\"node\":\"x\",\"colour\":\"red\"}\n");
  auto h = ReadHistory(store);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->entries.size(), 1u);
  ASSERT_EQ(h->problems.size(), 3u);
  EXPECT_EQ(h->problems[0].rfind(store.string() + ":2: not a history entry", 0), 0u) << h->problems[0];
  EXPECT_NE(h->problems[1].find(":4: time \"yesterday\" is not RFC 3339"), std::string::npos) << h->problems[1];
  EXPECT_NE(h->problems[2].find(":5: "), std::string::npos) << h->problems[2];
  EXPECT_NE(h->problems[2].find("unknown field \"colour\""), std::string::npos) << h->problems[2];
  auto missing = ReadHistory(dir.path() / "none.jsonl");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->exists);
}

// As protobuf's JSON mapping writes and reads them: enums by name or number, null for a default,
// white space anywhere; a bad enum, a non-string field or trailing text is a bad line.
TEST(History, EntriesAreReadAsProtobufJsonWritesThem) {
  TempDir dir;
  const fs::path store = dir.path() / "h.jsonl";
  Append(store,
         " { \"time\" : \"2026-02-11T04:00:00Z\", \"node\":\"gpu-0001\", \"gpu\": null,"
         " \"failure_class\": \"FAILURE_CLASS_GPU_ECC\", \"owner\": 2, \"incident\": \"/i/\\u00e9\"}\r\n"
         "{\"time\":\"2026-02-11T04:00:00Z\",\"node\":\"n\",\"owner\":\"OWNER_NOBODY\"}\n"
         "{\"time\":\"2026-02-11T04:00:00Z\",\"node\":7}\n"
         "{\"time\":\"2026-02-11T04:00:00Z\",\"node\":\"n\"} x\n");
  auto h = ReadHistory(store);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->entries.size(), 1u);
  EXPECT_EQ(h->entries[0].failure_class(), v1::FAILURE_CLASS_GPU_ECC);
  EXPECT_EQ(static_cast<int>(h->entries[0].owner()), 2);
  EXPECT_EQ(h->entries[0].incident(), "/i/\xc3\xa9");
  EXPECT_TRUE(h->entries[0].gpu().empty());
  ASSERT_EQ(h->problems.size(), 3u);
  EXPECT_NE(h->problems[0].find(":2: not a history entry (invalid owner)"), std::string::npos)
      << h->problems[0];
  EXPECT_NE(h->problems[1].find("\"node\" is not a string"), std::string::npos) << h->problems[1];
  EXPECT_NE(h->problems[2].find("text after the object"), std::string::npos) << h->problems[2];
}

TEST(History, TheCliReadsWithoutWritingAndRecordsOnlyWhenAskedOnce) {
  EccJob job;
  const fs::path store = job.dir.path() / "fleet" / "history.jsonl";
  std::string out, err;
  ASSERT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = store}, &out, &err), 0) << err;
  EXPECT_FALSE(fs::exists(store));  // read only
  // A folder that does not exist is named, not created.
  ASSERT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = store, .record_history = true}, &out, &err), 2);
  EXPECT_NE(err.find((job.dir.path() / "fleet").string() + " does not exist"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(store.parent_path()));
  fs::create_directories(store.parent_path());
  ASSERT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = store, .record_history = true}, &out, &err), 0) << err;
  ASSERT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = store, .record_history = true}, &out, &err), 0) << err;
  auto h = ReadHistory(store);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->entries.size(), 1u);  // the same incident is recorded once
  EXPECT_EQ(h->entries[0].node(), "gpu-0001");
  EXPECT_EQ(h->entries[0].gpu(), "0000:5d:00");
  EXPECT_EQ(h->entries[0].failure_class(), v1::FAILURE_CLASS_GPU_ECC);
  EXPECT_TRUE(h->problems.empty());
}

TEST(History, TheCliNeverWritesTheStoreInsideTheIncident) {
  EccJob job;
  const fs::path inside = job.incident() / "history.jsonl";
  std::string out, err;
  EXPECT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = inside, .record_history = true}, &out, &err), 2);
  EXPECT_NE(err.find("inside the incident directory"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(inside));
  EXPECT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .record_history = true}, &out, &err), 2);
  EXPECT_NE(err.find("--record-history needs --history"), std::string::npos) << err;
}

TEST(History, TheCliReportsBadStoreLinesAndStillDiagnoses) {
  EccJob job;
  const fs::path store = job.dir.path() / "h.jsonl";
  Append(store, "{oops\n" + Entry("2026-02-11T04:00:00Z", "gpu-0001", "0000:5d:00", "FAILURE_CLASS_GPU_ECC"));
  std::string out, err;
  ASSERT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = store}, &out, &err), 0) << err;
  EXPECT_NE(err.find(store.string() + ":1: not a history entry"), std::string::npos) << err;
  EXPECT_NE(out.find("drain_and_rma"), std::string::npos) << out;
}

// `--history /dev/zero` must not grow memory without bound: what is not a regular file is not
// read; a line past 64 KiB is skipped as it streams by, and the entries around it still count.
TEST(History, TheReaderIsBoundedInLineLengthAndKind) {
  const auto t0 = std::chrono::steady_clock::now();
  auto zero = ReadHistory("/dev/zero");
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->entries.empty());
  ASSERT_EQ(zero->problems.size(), 1u);
  EXPECT_NE(zero->problems[0].find("not a regular file"), std::string::npos) << zero->problems[0];
  TempDir t;
  const fs::path store = t.path() / "h.jsonl";
  Append(store, Entry("2026-02-11T04:00:00Z", "gpu-0001", "0000:5d:00", "FAILURE_CLASS_GPU_ECC") +
                    std::string(8 << 20, 'x') + "\n" + std::string(3 << 20, '\0') + "\n" +
                    Entry("2026-02-20T04:00:00Z", "gpu-0001", "0000:5d:00", "FAILURE_CLASS_GPU_ECC"));
  for (int i = 0; i < 30; ++i) Append(store, "{oops\n");
  auto h = ReadHistory(store);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->entries.size(), 2u);
  ASSERT_GE(h->problems.size(), 2u);
  EXPECT_NE(h->problems[0].find(store.string() + ":2: longer than 65536 bytes"), std::string::npos) << h->problems[0];
  EXPECT_NE(h->problems[1].find(store.string() + ":3: longer than"), std::string::npos) << h->problems[1];
  EXPECT_EQ(h->problems.size(), 21u);  // 20 listed, then a count
  EXPECT_NE(h->problems.back().find("12 more bad lines"), std::string::npos) << h->problems.back();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}

TEST(History, TheStoreIsWrittenOnlyAsARegularFile) {
  EccJob job;
  std::string out, err;
  EXPECT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = "/dev/null", .record_history = true}, &out, &err), 2);
  EXPECT_NE(err.find("character device"), std::string::npos) << err;
  const fs::path link = job.dir.path() / "h.jsonl";
  fs::create_symlink(job.incident() / "gpu-0001" / "kern.log", link);
  EXPECT_EQ(Diagnose({.incident = job.incident(), .threads = 1, .history = link, .record_history = true}, &out, &err), 2);
  EXPECT_NE(err.find("symbolic link"), std::string::npos) << err;
}

}  // namespace
}  // namespace denpex::engine
