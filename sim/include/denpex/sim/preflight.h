// A cluster before a run: a preflight scenario (denpex.v1.PreflightScenario) goes in; each
// node's health tools' outputs and the nccl-tests runs of the scenario's plan come out, as a
// health check leaves them for `denpex preflight --from` (docs/preflight.md, "Simulated
// clusters"), with the truth about the faults it injected.
//
//   auto s = sim::LoadPreflightScenario("scenarios/preflight/pcie_downtrained_256.textproto");
//   auto truth = sim::SimulatePreflight(*s, {.out_dir = "out"});  // out/collected,
//   out/preflight_truth.json
//
// Same scenario and seed give byte-identical output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "denpex/common/status.h"
#include "denpex/v1/preflight.pb.h"

namespace denpex::sim {

// Parses a textproto preflight scenario, fills defaults and validates it (every error names
// source:line:column or the field, and what to do).
Result<v1::PreflightScenario> ParsePreflightScenario(std::string_view text,
                                                     std::string_view source);
Result<v1::PreflightScenario> LoadPreflightScenario(const std::filesystem::path& path);

struct PreflightSimulateOptions {
  std::filesystem::path out_dir;      // receives collected/ and preflight_truth.json
  std::optional<std::uint64_t> seed;  // overrides scenario.seed
};

// Writes out_dir/collected/<node>/ (nvidia-smi -q, nvidia-smi topo -m, ibstat, the kernel log,
// the node's own nccl-tests run) and out_dir/collected/<a>_<b>.nccl-tests.txt for each pair run
// of the plan, and out_dir/preflight_truth.json. Returns the truth.
Result<v1::PreflightTruth> SimulatePreflight(const v1::PreflightScenario& scenario,
                                             const PreflightSimulateOptions& options);

}  // namespace denpex::sim
