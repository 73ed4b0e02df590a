// The releases whose log shapes the simulator writes: a row each in its line tables, checked
// against real lines (docs/log_formats.md) and diagnosed by the engine in every test run.
// `denpex --version` lists them as the formats Denpex reads best.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace denpex::sim {

struct FormatReleases {
  std::span<const std::string_view> torch;  // "1.13", "2.1", ...
  std::span<const std::string_view> nccl;   // "2.18.5", ...
  std::span<const std::string_view> slurm;  // "22.05", ...
  std::string flight_recorder;              // dump format versions, "2.2, 2.4, ..."
};
FormatReleases KnownFormatReleases();

}  // namespace denpex::sim
