// The engine's diagnosis of an incident a test wrote; a refused diagnosis fails the test (and
// gives an empty one, so the test's own expectations fail too rather than crash).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

#include "denpex/engine/engine.h"

namespace denpex::engine::testing {

inline v1::Diagnosis DiagnoseOk(const std::filesystem::path& dir, Strategy strategy = Strategy::kEngine) {
  auto d = Diagnose(dir, {.strategy = strategy, .threads = 2});
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : v1::Diagnosis();
}

}  // namespace denpex::engine::testing
