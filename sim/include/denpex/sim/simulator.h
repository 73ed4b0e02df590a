// Start here: the discrete-event simulator. A scenario (textproto) goes in; an incident
// directory (only what a real job leaves behind) and its ground truth come out.
//
//   auto scenario = sim::LoadScenario("scenarios/smoke/sigkill_4096.textproto", {});
//   auto result = sim::Simulate(*scenario, {.out_dir = "out"});   // out/incident, out/truth.json
//
// Same scenario and seed give byte-identical output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "denpex/common/status.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::sim {

// Parses a textproto scenario, applies `overrides` ("field.path=value", as `--set`), fills
// defaults and validates it. Every error names source:line:column and gives a hint.
Result<v1::Scenario> ParseScenario(std::string_view text, std::string_view source,
                                   std::span<const std::string> overrides = {});
Result<v1::Scenario> LoadScenario(const std::filesystem::path& path,
                                  std::span<const std::string> overrides = {});

// The embedded default: a 4,096-rank job (512 nodes x 8 GPUs) with one rank SIGKILLed
// mid-step. Identical to scenarios/smoke/sigkill_4096.textproto.
std::string_view DefaultScenarioText();

struct SimulateOptions {
  std::filesystem::path out_dir;      // receives incident/ and truth.json
  // Where the incident's files go instead of out_dir/incident (empty: there); truth.json and
  // the history store stay in out_dir. `denpex simulate --replay` stages the incident here.
  std::filesystem::path incident_dir;
  std::optional<std::uint64_t> seed;  // overrides scenario.seed
  int writer_threads = 1;             // threads writing files (0: inline); bytes are the same
  // Called now and then while the job is modelled (the model stage, most of a large scenario's
  // time): the share of the job's expected simulated span reached, in [0, 1]. An estimate from
  // the plan (the fault's step, the watchdog timeout, the teardown), for a progress line; it
  // never changes the output.
  std::function<void(double fraction)> on_model_progress;
};

struct SimulateStats {
  std::uint64_t events = 0;  // discrete events processed
  std::uint64_t lines = 0;   // log lines written
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
};

struct SimulateResult {
  v1::Truth truth;
  SimulateStats stats;
};

// Runs the scenario and writes out_dir/incident/ (or incident_dir) and out_dir/truth.json.
Result<SimulateResult> Simulate(const v1::Scenario& scenario, const SimulateOptions& options);

}  // namespace denpex::sim
