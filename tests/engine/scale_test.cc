// A 4,096-rank job (512 nodes x 8, TP8 x PP8 x DP64) as issue #2's smoke scenario shapes it:
// the engine must still name the SIGKILLed rank. The time is printed, not asserted
// (docs/benchmarks.md records measured numbers).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "denpex/engine/engine.h"
#include "fixture.h"

namespace denpex::engine {
namespace {

TEST(EngineScale, FindsTheKilledRankAmong4096) {
  testing::TempDir tmp;
  testing::Incident spec;
  spec.job = {.nodes = 512, .gpus = 8, .tp = 8, .pp = 8, .dp = 64};
  spec.initiator = 1091;
  for (int n = 0; n < 512; ++n) spec.skew_ms[n] = (n * 37) % 101 - 50;
  testing::WriteIncident(tmp.path(), spec);

  for (int threads : {1, 2}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto d = Diagnose(tmp.path(), {.threads = threads});
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->verdict(), v1::VERDICT_DIAGNOSED) << d->reason();
    EXPECT_EQ(d->initiator().rank(), 1091);
    EXPECT_EQ(d->initiator().node(), "gpu-0137");
    EXPECT_EQ(d->initiator().local_rank(), 3);
    EXPECT_EQ(d->input().world_size(), 4096);
    std::cout << "diagnose 4096 ranks, " << threads << " thread(s): " << secs << " s, " << d->input().files()
              << " files, " << d->input().bytes() << " bytes, " << d->input().lines() << " lines, "
              << d->input().events() << " events\n";
  }
}

}  // namespace
}  // namespace denpex::engine
