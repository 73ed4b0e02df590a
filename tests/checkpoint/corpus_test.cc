// The real checkpoints of the real corpus (corpora/real/<id>/incident/checkpoints, written
// by torch.save under torchrun and Slurm): the decision, path and step must match each
// incident's expected.json. Skipped when the corpus is not in the tree.
#include <gtest/gtest.h>

#include <filesystem>

#include "denpex/engine/checkpoint.h"
#include "denpex/proto/json_io.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

TEST(RealCorpus, EveryCheckpointDecisionMatchesTheExpectedOutcome) {
  const fs::path corpus = fs::path(DENPEX_SOURCE_DIR) / "corpora" / "real";
  int checked = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(corpus, ec)) {
    const fs::path ckpt = e.path() / "incident" / "checkpoints";
    if (!fs::is_directory(ckpt) || !fs::exists(e.path() / "expected.json")) continue;
    v1::Truth truth;
    ASSERT_TRUE(proto::ReadJsonFile(e.path() / "expected.json", &truth).ok()) << e.path();
    if (truth.checkpoint().decision() == v1::CHECKPOINT_DECISION_NOT_EVALUATED) continue;
    auto r = VerifyCheckpointDir(ckpt, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    SCOPED_TRACE(e.path().filename().string() + "\n" + RenderCheckpointText(*r));
    EXPECT_EQ(r->outcome.decision(), truth.checkpoint().decision());
    EXPECT_EQ(r->outcome.path(), truth.checkpoint().path());
    EXPECT_EQ(r->outcome.step(), truth.checkpoint().step());
    for (const auto& rej : truth.checkpoint().rejected()) {
      bool found = false;
      for (const auto& mine : r->outcome.rejected()) found |= mine.path() == rej.path();
      EXPECT_TRUE(found) << rej.path() << " must be rejected";
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no real corpus with checkpoints under " << corpus;
}

}  // namespace
}  // namespace denpex::engine
