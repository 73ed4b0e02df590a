// The release lists of the format stage's profile tables, for `denpex --version`.
#include "denpex/sim/releases.h"

#include <string>

#include "format/flight_recorder.h"
#include "format/profiles.h"

namespace denpex::sim {
namespace {

// `"2.2", "2.4"` (the list as error messages quote it) -> `2.2, 2.4`.
std::string Unquoted(std::string list) {
  std::erase(list, '"');
  return list;
}

}  // namespace

FormatReleases KnownFormatReleases() {
  return {.torch = kTorchReleases,
          .nccl = kNcclReleases,
          .slurm = kSlurmReleases,
          .flight_recorder = Unquoted(FlightRecorderVersionList())};
}

}  // namespace denpex::sim
