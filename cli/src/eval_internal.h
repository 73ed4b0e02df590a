// Shared by `denpex eval` and `denpex demo`: one scenario and seed, simulated, diagnosed by
// each strategy, and scored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::cli {

struct IncidentRun {
  v1::Truth truth;
  std::vector<v1::Diagnosis> diagnoses;  // one per strategy, in the order asked
  std::vector<v1::IncidentScore> scores;
  double simulate_seconds = 0;
};

// Simulates `scenario` with `seed` into `dir` (dir/incident, dir/truth.json), diagnoses it
// with each strategy and scores each diagnosis against the truth.
Result<IncidentRun> RunIncident(const v1::Scenario& scenario, std::uint64_t seed,
                                const std::filesystem::path& dir,
                                const std::vector<std::string>& strategies);

}  // namespace denpex::cli
