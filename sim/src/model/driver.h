// The job's NVIDIA driver release (scenario `format.driver`): what it does when a GPU fails
// (GSP firmware timeouts, the row remapper, Xid 154 recovery actions), which the model's
// kernel-log bursts follow (gpu_faults.cc), and its banners' version and build date. A release
// is a row of kDriverProfiles (driver.cc); how its NVRM lines read is the formatter's table
// (format/formatter_gpu.cc, kXidWords).
#pragma once

#include <cstdint>
#include <string_view>

namespace denpex::sim {

// The releases kDriverProfiles knows, for the line tables' static checks (driver.cc asserts
// that they match the profiles).
inline constexpr std::string_view kDriverReleases[] = {"418", "470", "535", "560"};

struct DriverProfile {
  std::string_view name;     // "535"
  std::string_view version;  // "535.161.08": the NVRM module banner
  std::string_view built;    // the banner's build date
  bool gsp;                  // GSP firmware: Xid 119/120, GSP RPC rate limiting
  bool row_remapping;        // Ampere+ drivers: Xid 63/64 row remapper, 94/95 containment
  bool recovery_action;      // Xid 154 "GPU recovery action changed"
};

// nullptr when the name is not a known release.
const DriverProfile* FindDriverProfile(std::string_view name);

// Names for hints: the releases the simulator implements.
std::string_view SupportedDriverProfiles();  // "\"418\", \"470\", \"535\", \"560\""

}  // namespace denpex::sim
