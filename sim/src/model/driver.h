// The job's NVIDIA driver release (scenario `format.driver`): what it does when a GPU fails
// (GSP firmware timeouts, the row remapper, Xid 154 recovery actions), which the model's
// kernel-log bursts follow (gpu_faults.cc), and how its NVRM lines and banners read, which the
// formatters print. A release is a row of kDriverProfiles (driver.cc).
#pragma once

#include <cstdint>
#include <string_view>

namespace denpex::sim {

// How an NVIDIA driver branch prints its NVRM lines (docs/log_formats.md, "xid").
enum class XidAttribution : std::uint8_t {
  kNone,     // 418: "Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."
  kPid,      // 470: "..., pid=0, GPU has fallen off the bus." (the pid, 0 when unknown)
  kPidName,  // 535+: "..., pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
};

struct DriverProfile {
  std::string_view name;     // "535"
  std::string_view version;  // "535.161.08": the NVRM module banner
  std::string_view built;    // the banner's build date
  XidAttribution attribution;
  bool gsp;               // GSP firmware: Xid 119/120, GSP RPC rate limiting
  bool row_remapping;     // Ampere+ drivers: Xid 63/64 row remapper, 94/95 containment
  bool recovery_action;   // Xid 154 "GPU recovery action changed"
  bool gsp_timeout_long;  // "Timeout after 6s of waiting for RPC response from GPU0 GSP!"
};

// nullptr when the name is not a known release.
const DriverProfile* FindDriverProfile(std::string_view name);

// Names for hints: the releases the simulator implements.
std::string_view SupportedDriverProfiles();  // "\"418\", \"470\", \"535\", \"560\""

}  // namespace denpex::sim
