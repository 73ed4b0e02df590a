// The driver release table (driver.h).
#include "driver.h"

#include <iterator>

namespace denpex::sim {

namespace {

// Driver branches by era: 418 (2019, no pid), 470 (2021, pid=), 535 (2023, name=, GSP on
// Hopper), 560 (2024, Xid 154 recovery actions, the longer GSP timeout message).
constexpr DriverProfile kDriverProfiles[] = {
    {"418", "418.87.01", "Tue Aug 27 03:44:27 CDT 2019", false, false, false},
    {"470", "470.182.03", "Fri Feb 24 03:29:56 UTC 2023", false, true, false},
    {"535", "535.161.08", "Thu Feb 29 16:56:05 UTC 2024", true, true, false},
    {"560", "560.35.03", "Fri Aug 16 21:39:15 UTC 2024", true, true, true},
};

constexpr bool SameReleases() {
  if (std::size(kDriverProfiles) != std::size(kDriverReleases)) return false;
  for (std::size_t i = 0; i < std::size(kDriverProfiles); ++i) {
    if (kDriverProfiles[i].name != kDriverReleases[i]) return false;
  }
  return true;
}
static_assert(SameReleases());

}  // namespace

const DriverProfile* FindDriverProfile(std::string_view name) {
  for (const DriverProfile& p : kDriverProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string_view SupportedDriverProfiles() { return "\"418\", \"470\", \"535\", \"560\""; }
}  // namespace denpex::sim
