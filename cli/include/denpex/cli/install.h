// What a `denpex` binary knows about where it is installed: the shipped data (scenarios,
// frozen corpora) it finds relative to its own executable, and the text of `--version`.
//
// Installed (`cmake --install`, the Debian package, a copy of the prefix on a shared
// filesystem), the data lies at <exe>/../share/denpex; run from its build tree, the binary
// reads the source tree it was built from. DENPEX_DATA_DIR overrides both.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace denpex::cli {

// The directory holding scenarios/ (and corpora/) for this binary, or none.
//   env_data_dir: $DENPEX_DATA_DIR (empty: unset); exe: this executable's path.
std::optional<std::filesystem::path> ShippedDataDir(std::string_view env_data_dir,
                                                    const std::filesystem::path& exe);
// The same for the running process (its environment and /proc/self/exe).
std::optional<std::filesystem::path> ShippedDataDir();

// A scenario, suite or corpus path as given on the command line: unchanged when it exists
// here or is absolute; a relative path under scenarios/ or corpora/ that does not exist here
// is taken from the shipped data when it is there (`denpex eval scenarios/smoke` from any
// directory).
std::filesystem::path ResolveShipped(const std::filesystem::path& path,
                                     const std::optional<std::filesystem::path>& data_dir);

// `denpex --version`: the release, the commit it was built from ("unknown" outside a git
// checkout) and the log-format releases it reads best; no final newline.
std::string VersionText(std::string_view commit);

}  // namespace denpex::cli
