// `denpex freeze` as a user runs it: a real corpus incident frozen into a new corpus, the map
// beside the entry, the draft confirmed with flags, `denpex eval --corpus` on the result, and
// the usage errors' exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "denpex/proto/json_io.h"
#include "denpex/v1/truth.pb.h"
#include "freeze_support.h"
#include "support/denpex_cmd.h"
#include "support/temp_dir.h"

namespace denpex::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(FreezeCommand, FreezesConfirmsAndEvaluates) {
  const TempDir dir;
  const fs::path corpus = dir.path() / "my-incidents";
  fs::create_directories(corpus);
  const std::string incident =
      std::string(DENPEX_SOURCE_DIR) + "/corpora/real/tr_oom_rank3/incident";
  const fs::path entry = corpus / "2026-11-29-oom";

  CmdResult r = Denpex("freeze " + incident + " --out " + entry.string() + " --threads 2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the frozen copy's diagnosis equals the original's"));
  EXPECT_THAT(r.output, HasSubstr((corpus / "2026-11-29-oom.map.json").string()));
  EXPECT_TRUE(fs::exists(entry / "incident"));
  EXPECT_TRUE(fs::exists(entry / "FREEZE.md"));
  for (const auto& [rel, text] : FilesOf(entry)) {
    EXPECT_FALSE(HoldsName(text, "node-b")) << rel;
    EXPECT_FALSE(HoldsName(rel, "node-b")) << rel;
  }

  // A second freeze into the same entry is refused; the first is left as it was.
  r = Denpex("freeze " + incident + " --out " + entry.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("exists and is not empty"));

  r = Denpex("eval --corpus " + corpus.string() + " --strategies engine --jobs 1");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2026-11-29-oom: expected.json is a draft"));

  r = Denpex(
      "freeze --confirm " + entry.string() +
      " --owner host --class host_oom --rank 3 --node node-b --operator-minutes 38"
      " --investigation-started 2026-11-29T16:40:00Z --investigation-ended 2026-11-29T17:30:00Z"
      " --resumed-from step_10.pt@10 --recovery 'raised the memory limit' --process-owner "
      "application");
  ASSERT_EQ(r.code, 0) << r.output;
  v1::Truth t;
  ASSERT_TRUE(proto::ReadJsonFile(entry / "expected.json", &t).ok());
  EXPECT_FALSE(t.corpus_entry().draft());
  EXPECT_EQ(t.owner(), v1::OWNER_HOST);
  EXPECT_EQ(t.initiator().rank(), 3);
  EXPECT_NE(t.initiator().node(), "node-b");  // stored as its replacement
  EXPECT_DOUBLE_EQ(t.corpus_entry().postmortem().operator_minutes(), 38.0);
  r = Denpex("eval --corpus " + corpus.string() + " --strategies engine --jobs 1");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("is a draft")));

  r = Denpex("freeze " + incident);  // no --out
  EXPECT_EQ(r.code, 2) << r.output;
  r = Denpex("freeze --confirm " + entry.string() + " --class no_such_class");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--class no_such_class"));
  r = Denpex("freeze " + incident + " --out " + incident + "/copy");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(fs::exists(fs::path(incident) / "copy"));
}

}  // namespace
}  // namespace denpex::testing
