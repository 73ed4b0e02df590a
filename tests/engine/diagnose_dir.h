// The engine's diagnosis of a test's incident directory, on one thread; a failure to diagnose
// fails the test and gives an empty diagnosis.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

#include "denpex/engine/engine.h"

namespace denpex::engine::testing {

inline v1::Diagnosis DiagnoseDir(const std::filesystem::path& dir) {
  auto d = Diagnose(dir, {.threads = 1});
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : v1::Diagnosis();
}

}  // namespace denpex::engine::testing
