// Golden: every frozen incident under corpora/ (DIR/<id>/{incident/,expected.json}, found at any
// depth) through the engine and the scorer. The engine must name the expected initiator (its
// rank; its node when the truth names only a node; neither when the scheduler ended the job),
// the expected owner, and the expected failure class where expected.json gives one, and must
// not abstain. Replaying needs neither PyTorch nor Slurm: only the frozen files.
// corpora/golden-pending.txt lists incidents frozen before the engine handles them (one
// `<corpus>/<id>  <what the engine does now>` a line): they are skipped, saying why, until
// the engine is fixed and the line removed; a committed golden never asserts a wrong answer.
// corpora/golden-levels.txt lists incidents whose logs support a coarser answer than
// expected.json's truth (which stays the truth), one `<corpus>/<id>  <level>  <why>` a line:
// `node` (rank -1, the truth's node, class and owner), `job` (rank -1, no node or the truth's,
// the truth's class and owner: no line names the rank or the host), `none` (INCONCLUSIVE: the
// logs hold no sign of the fault). A coarser answer that matches the truth at that level passes;
// anything wrong fails, and so does a scorer that calls it wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "denpex/scorer/scorer.h"
#include "denpex/v1/truth.pb.h"

namespace denpex {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpora = fs::path(DENPEX_SOURCE_DIR) / "corpora";

// Every directory under corpora/ that holds incident/ and expected.json, relative to corpora/.
std::vector<std::string> FrozenIncidents() {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(kCorpora, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    if (it->path().filename() == "incident") {
      it.disable_recursion_pending();  // the logs themselves hold no incidents
      continue;
    }
    if (fs::is_directory(it->path() / "incident", ec) && fs::is_regular_file(it->path() / "expected.json", ec)) {
      out.push_back(fs::relative(it->path(), kCorpora).generic_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// corpora/golden-pending.txt: incident -> the note after it ('#' lines and blank lines skipped).
const std::map<std::string, std::string>& PendingIncidents() {
  static const auto* pending = [] {
    auto* out = new std::map<std::string, std::string>;
    std::ifstream in(kCorpora / "golden-pending.txt");
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const size_t space = line.find_first_of(" \t");
      (*out)[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
    }
    return out;
  }();
  return *pending;
}

// The level of answer the logs support where it is coarser than the truth's.
enum class Level { kTruth, kNode, kJob, kNone };

// corpora/golden-levels.txt: incident -> {level, why}. An unknown level word fails the test.
struct Supported {
  std::string level;
  std::string why;
};

const std::map<std::string, Supported>& SupportedLevels() {
  static const auto* levels = [] {
    auto* out = new std::map<std::string, Supported>;
    std::ifstream in(kCorpora / "golden-levels.txt");
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string id, level;
      fields >> id >> level;
      std::string why;
      std::getline(fields >> std::ws, why);
      (*out)[id] = {level, why};
    }
    return out;
  }();
  return *levels;
}

Level LevelOf(const std::string& id) {
  const auto it = SupportedLevels().find(id);
  if (it == SupportedLevels().end()) return Level::kTruth;
  if (it->second.level == "node") return Level::kNode;
  if (it->second.level == "job") return Level::kJob;
  if (it->second.level == "none") return Level::kNone;
  ADD_FAILURE() << "corpora/golden-levels.txt: unknown level '" << it->second.level << "' for " << id;
  return Level::kTruth;
}

bool SameNode(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  return std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

// The answer at the level the logs support: no rank; the truth's node (`node`), or no node or
// the truth's (`job`); the truth's class and owner; and the scorer does not call it wrong.
void ExpectCoarserAnswer(Level level, const v1::Truth& truth, const v1::Diagnosis& d, const v1::IncidentScore& score) {
  const std::string said = "the engine said: " + d.reason();
  ASSERT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << said;
  EXPECT_EQ(d.initiator().rank(), -1) << "the logs name no rank, yet " << said;
  if (level == Level::kNode) {
    EXPECT_TRUE(SameNode(d.initiator().node(), truth.initiator().node()))
        << "expected node '" << truth.initiator().node() << "', got '" << d.initiator().node() << "'; " << said;
  } else {
    EXPECT_TRUE(d.initiator().node().empty() || SameNode(d.initiator().node(), truth.initiator().node()))
        << "expected no node or '" << truth.initiator().node() << "', got '" << d.initiator().node() << "'; " << said;
  }
  EXPECT_EQ(d.owner(), truth.owner()) << "expected owner " << v1::Owner_Name(truth.owner()) << ", got "
                                      << v1::Owner_Name(d.owner()) << "; " << said;
  EXPECT_EQ(d.initiator().failure_class(), truth.initiator().failure_class())
      << "expected class " << v1::FailureClass_Name(truth.initiator().failure_class()) << ", got "
      << v1::FailureClass_Name(d.initiator().failure_class()) << "; " << said;
  EXPECT_FALSE(score.committed_wrong()) << "the scorer calls it wrong; " << said;
}

class GoldenTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto it = PendingIncidents().find(GetParam());
    if (it != PendingIncidents().end()) GTEST_SKIP() << "pending (corpora/golden-pending.txt): " << it->second;
  }
};

TEST_P(GoldenTest, EngineNamesTheExpectedInitiatorOwnerAndClass) {
  const fs::path dir = kCorpora / GetParam();
  v1::Truth truth;
  const Status read = proto::ReadJsonFile(dir / "expected.json", &truth);
  ASSERT_TRUE(read.ok()) << read.message();
  auto diagnosis = engine::Diagnose(dir / "incident", {.strategy = engine::Strategy::kEngine, .threads = 1});
  ASSERT_TRUE(diagnosis.ok()) << diagnosis.status().message();
  const v1::IncidentScore score = scorer::ScoreIncident(truth, *diagnosis);
  const std::string said = "the engine said: " + diagnosis->reason();
  const Level level = LevelOf(GetParam());
  if (level == Level::kNone) {
    EXPECT_TRUE(score.inconclusive()) << "the logs hold no sign of the fault (" << SupportedLevels().at(GetParam()).why
                                      << "), yet " << said;
    return;
  }
  if (level != Level::kTruth) {
    ExpectCoarserAnswer(level, truth, *diagnosis, score);
    return;
  }
  if (truth.verdict() == v1::VERDICT_INCONCLUSIVE) {
    EXPECT_TRUE(score.inconclusive()) << "the logs cannot tell, yet " << said;
    return;
  }
  EXPECT_FALSE(score.inconclusive()) << said;
  EXPECT_TRUE(score.initiator_rank_correct())
      << "expected initiator rank " << truth.initiator().rank() << " node '" << truth.initiator().node() << "', got rank "
      << diagnosis->initiator().rank() << " node '" << diagnosis->initiator().node() << "'; " << said;
  EXPECT_TRUE(score.owner_correct()) << "expected owner " << v1::Owner_Name(truth.owner()) << ", got "
                                     << v1::Owner_Name(diagnosis->owner()) << "; " << said;
  if (truth.initiator().failure_class() != v1::FAILURE_CLASS_UNSPECIFIED) {
    EXPECT_TRUE(score.failure_class_correct())
        << "expected class " << v1::FailureClass_Name(truth.initiator().failure_class()) << ", got "
        << v1::FailureClass_Name(diagnosis->initiator().failure_class()) << "; " << said;
  }
}

// Checkpoints (issue #7): where the incident holds checkpoints/ and expected.json judges them,
// the diagnosis decides the same (the truncated torch.save of tr_kill_in_save_rank0 rejected),
// and never resumes from a checkpoint the expectation rejects.
TEST_P(GoldenTest, EngineDecidesTheExpectedCheckpoint) {
  const fs::path dir = kCorpora / GetParam();
  v1::Truth truth;
  ASSERT_TRUE(proto::ReadJsonFile(dir / "expected.json", &truth).ok());
  const auto want = truth.checkpoint().decision();
  if (want == v1::CHECKPOINT_DECISION_UNSPECIFIED || want == v1::CHECKPOINT_DECISION_NOT_EVALUATED) {
    GTEST_SKIP() << "expected.json does not judge checkpoints";
  }
  auto diagnosis = engine::Diagnose(dir / "incident", {.strategy = engine::Strategy::kEngine, .threads = 1});
  ASSERT_TRUE(diagnosis.ok()) << diagnosis.status().message();
  const v1::IncidentScore score = scorer::ScoreIncident(truth, *diagnosis);
  EXPECT_TRUE(score.checkpoint_correct()) << diagnosis->checkpoint().summary();
  EXPECT_FALSE(score.checkpoint_unsafe()) << diagnosis->checkpoint().summary();
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpora, GoldenTest, testing::ValuesIn(FrozenIncidents()), TestName);

// Every line of golden-levels.txt names a frozen incident and a known level.
TEST(Golden, LevelsNameFrozenIncidents) {
  const std::vector<std::string> frozen = FrozenIncidents();
  for (const auto& [id, supported] : SupportedLevels()) {
    EXPECT_TRUE(std::binary_search(frozen.begin(), frozen.end(), id)) << "golden-levels.txt names no frozen incident: " << id;
    EXPECT_TRUE(supported.level == "node" || supported.level == "job" || supported.level == "none")
        << "golden-levels.txt: unknown level '" << supported.level << "' for " << id;
    EXPECT_FALSE(supported.why.empty()) << "golden-levels.txt: " << id << " says no why";
  }
}

TEST(Golden, CorporaHoldFrozenIncidents) {
  EXPECT_GE(FrozenIncidents().size(), 16u) << "no frozen incidents found under " << kCorpora;
}

}  // namespace
}  // namespace denpex
