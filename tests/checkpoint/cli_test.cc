// `denpex checkpoint verify` as a library call: text on stdout, the JSON contract, exit codes
// (0 for any decision, 2 usage, 3 missing or unreadable directory).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "denpex/cli/commands.h"
#include "denpex/proto/json_io.h"
#include "denpex/v1/diagnosis.pb.h"
#include "writers.h"

namespace denpex::cli {
namespace {

using namespace denpex::ckpt_test;

int Verify(const CheckpointVerifyArgs& a, std::string* out = nullptr, std::string* err = nullptr) {
  std::ostringstream o, e;
  const int rc = RunCheckpointVerify(a, o, e);
  if (out != nullptr) *out = o.str();
  if (err != nullptr) *err = e.str();
  return rc;
}

TEST(CheckpointVerifyCli, PrintsEveryCandidateAndWritesTheJsonContract) {
  TempDir t, out_dir;
  Put(t.path() / "step_10.pt", TorchState("step_10", {{"step", 10}}));
  Put(t.path() / "step_20.pt", "");
  CheckpointVerifyArgs a{.dir = t.path(), .json = out_dir.path() / "verify.json", .deep = true};
  std::string out;
  ASSERT_EQ(Verify(a, &out), 0);
  EXPECT_NE(out.find("RESUME from step_10.pt"), std::string::npos) << out;
  EXPECT_NE(out.find("step_20.pt"), std::string::npos) << out;
  v1::CheckpointVerification v;
  ASSERT_TRUE(proto::ReadJsonFile(out_dir.path() / "verify.json", &v).ok());
  EXPECT_EQ(v.outcome().decision(), v1::CHECKPOINT_DECISION_RESUME);
  EXPECT_EQ(v.outcome().step(), 10);
  EXPECT_EQ(v.steps_lost(), 10);
  ASSERT_EQ(v.candidates_size(), 2);
  EXPECT_EQ(v.candidates(0).verdict(), v1::CHECKPOINT_VERDICT_INCOMPLETE);
}

TEST(CheckpointVerifyCli, InconclusiveIsASuccess) {
  TempDir t;
  Put(t.path() / "step_3" / "blob.bin", "?");
  std::string out;
  EXPECT_EQ(Verify({.dir = t.path()}, &out), 0);
  EXPECT_NE(out.find("INCONCLUSIVE"), std::string::npos) << out;
}

TEST(CheckpointVerifyCli, ExitCodesForMissingDirectoriesAndUsageErrors) {
  std::string err;
  EXPECT_EQ(Verify({.dir = "/nonexistent/ckpt"}, nullptr, &err), 3);
  EXPECT_NE(err.find("/nonexistent/ckpt"), std::string::npos);
  TempDir t;
  EXPECT_EQ(Verify({.dir = t.path(), .json = t.path() / "x.json"}, nullptr, &err), 2);
  EXPECT_NE(err.find("never modifies"), std::string::npos);
  EXPECT_FALSE(fs::exists(t.path() / "x.json"));
  EXPECT_EQ(Verify({.dir = t.path(), .not_after = "yesterday"}), 2);
  EXPECT_EQ(Verify({.dir = t.path(), .not_after = "2026-03-02T09:17:03Z"}), 0);
}

// `denpex diagnose --checkpoint-dir`: a missing directory is unreadable input (3); a --json
// inside the checkpoint directory is refused (2); the text names the decision.
TEST(DiagnoseCheckpointDirCli, VerifiesTheGivenDirectoryAndRefusesToWriteIntoIt) {
  const std::filesystem::path incident =
      std::filesystem::path(DENPEX_SOURCE_DIR) / "corpora/real/tr_kill_in_save_rank0/incident";
  if (!std::filesystem::exists(incident)) GTEST_SKIP() << "no real corpus";
  TempDir t;
  Put(t.path() / "step_10.pt", TorchState("step_10", {{"step", 10}}));
  Put(t.path() / "step_20.pt", "");
  std::ostringstream out, err;
  ASSERT_EQ(RunDiagnose({.incident = incident, .checkpoint_dir = t.path()}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("RESUME from step_10.pt"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("resume_from_checkpoint"), std::string::npos) << out.str();
  std::ostringstream o2, e2;
  EXPECT_EQ(RunDiagnose({.incident = incident, .checkpoint_dir = t.path() / "nope"}, o2, e2), 3);
  EXPECT_NE(e2.str().find("--checkpoint-dir"), std::string::npos) << e2.str();
  std::ostringstream o3, e3;
  EXPECT_EQ(RunDiagnose({.incident = incident, .json = t.path() / "d.json", .checkpoint_dir = t.path()}, o3, e3), 2);
  EXPECT_FALSE(std::filesystem::exists(t.path() / "d.json"));
}

}  // namespace
}  // namespace denpex::cli
