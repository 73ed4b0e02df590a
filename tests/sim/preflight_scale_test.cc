// The preflight scenario files (scenarios/preflight/) at their own scale, 256 nodes and one at
// 2,048: simulated, then judged by `denpex preflight --from`, which must agree with the truth.
#include <gtest/gtest.h>

#include <filesystem>

#include "denpex/sim/preflight.h"
#include "preflight_round_trip.h"
#include "support/temp_dir.h"

namespace denpex::sim {
namespace {

namespace fs = std::filesystem;

// The scenario files, at their own scale (256 nodes; one at 2,048).
TEST(PreflightRoundTrip, ScenarioFiles) {
  const fs::path dir = fs::path(DENPEX_SOURCE_DIR) / "scenarios/preflight";
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".textproto") continue;
    SCOPED_TRACE(e.path().filename().string());
    auto s = LoadPreflightScenario(e.path());
    ASSERT_TRUE(s.ok()) << s.status().message();
    testing::TempDir out;
    auto truth = SimulatePreflight(*s, {.out_dir = out.path()});
    ASSERT_TRUE(truth.ok()) << truth.status().message();
    EXPECT_EQ(truth->scenario(), s->name());
    ExpectEngineAgrees(out.path(), *truth, s->nodes(), s->gpus_per_node(), s->nvlinks_per_pair());
  }
}

}  // namespace
}  // namespace denpex::sim
