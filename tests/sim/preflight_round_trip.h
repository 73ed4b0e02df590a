// The round trip of a simulated cluster through `denpex preflight --from` (the engine), shared by
// preflight_sim_test.cc and preflight_scale_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "denpex/engine/preflight.h"
#include "denpex/v1/preflight.pb.h"

namespace denpex::sim {

inline const v1::PreflightNode* NodeOf(const v1::PreflightReport& r, const std::string& name) {
  for (const auto& n : r.nodes()) {
    if (n.node() == name) return &n;
  }
  return nullptr;
}

// What the engine says about a simulated cluster, against its truth: exactly the truth's nodes
// failed, and each slow link named on both ends by a warning.
// `gpus`, `nvlinks`: the scenario's GPUs per node and NVLinks per pair.
inline void ExpectEngineAgrees(const std::filesystem::path& out, const v1::PreflightTruth& truth,
                               int nodes, int gpus = 8, int nvlinks = 18) {
  auto report = engine::PreflightFrom(out / "collected");
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::vector<std::string> bad(truth.bad_nodes().begin(), truth.bad_nodes().end());
  EXPECT_EQ(report->exclude(), engine::SlurmHostList(bad)) << engine::RenderPreflightText(*report);
  EXPECT_EQ(report->verdict(), bad.empty() ? v1::PREFLIGHT_PASS : v1::PREFLIGHT_FAIL);
  EXPECT_EQ(report->nodes_size(), nodes);
  EXPECT_TRUE(report->problems().empty()) << engine::RenderPreflightText(*report);
  EXPECT_EQ(report->majority().gpus(), gpus);
  EXPECT_EQ(report->majority().nvlinks_per_pair(), nvlinks);
  for (const std::string& link : truth.bad_links()) {
    const std::string a = link.substr(0, link.find("<->")), b = link.substr(link.find("<->") + 3);
    for (const std::string& end : {a, b}) {
      const v1::PreflightNode* n = NodeOf(*report, end);
      ASSERT_NE(n, nullptr) << end;
      const bool named =
          std::any_of(n->findings().begin(), n->findings().end(), [&](const auto& f) {
            return f.code() == "BUSBW_LOW" && !f.fail() && f.device() == link;
          });
      EXPECT_TRUE(named) << end << " carries no BUSBW_LOW warning for " << link << "\n"
                         << engine::RenderPreflightText(*report);
    }
  }
}

}  // namespace denpex::sim
