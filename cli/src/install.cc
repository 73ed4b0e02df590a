// Where an installed `denpex` finds its shipped data, and its version text
// (denpex/cli/install.h). The build bakes in three paths: the data directory relative to
// the binary's own (DENPEX_DATA_FROM_BIN, from GNUInstallDirs), and the source and build
// trees (read only by a binary that still lies in its build tree).
#include "denpex/cli/install.h"

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <span>
#include <sstream>
#include <system_error>

#include "denpex/sim/releases.h"

namespace denpex::cli {
namespace fs = std::filesystem;
namespace {

bool HoldsScenarios(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "scenarios", ec);
}

// Whether `path` lies inside `dir` (both made absolute and free of links where they exist).
bool Inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return false;
  const fs::path d = fs::weakly_canonical(dir, ec);
  if (ec || d.empty()) return false;
  auto [d_end, p_it] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return d_end == d.end();
}

void List(std::ostream& out, std::string_view what, std::span<const std::string_view> releases) {
  out << "  " << what;
  for (size_t i = 0; i < releases.size(); ++i) out << (i == 0 ? " " : ", ") << releases[i];
  out << "\n";
}

}  // namespace

std::optional<fs::path> ShippedDataDir(std::string_view env_data_dir, const fs::path& exe) {
  if (!env_data_dir.empty()) return fs::path(env_data_dir);
  if (!exe.empty()) {
    const fs::path installed = (exe.parent_path() / DENPEX_DATA_FROM_BIN).lexically_normal();
    if (HoldsScenarios(installed)) return installed;
    if (Inside(exe, DENPEX_BUILD_TREE) && HoldsScenarios(DENPEX_SOURCE_TREE)) {
      return fs::path(DENPEX_SOURCE_TREE);
    }
  }
  return std::nullopt;
}

std::optional<fs::path> ShippedDataDir() {
  const char* env = std::getenv("DENPEX_DATA_DIR");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ShippedDataDir(env == nullptr ? "" : env, ec ? fs::path() : exe);
}

fs::path ResolveShipped(const fs::path& path, const std::optional<fs::path>& data_dir) {
  if (!data_dir || path.empty() || path.is_absolute()) return path;
  const std::string first = path.begin()->string();
  if (first != "scenarios" && first != "corpora") return path;
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  const fs::path shipped = *data_dir / path;
  return fs::exists(shipped, ec) ? shipped : path;
}

std::string VersionText(std::string_view commit) {
  std::ostringstream out;
  out << "denpex " << DENPEX_VERSION << "\n"
      << "commit " << (commit.empty() ? "unknown" : commit) << "\n"
      << "reads best (the releases whose lines are simulated and diagnosed in every test run; "
         "docs/log_formats.md):\n";
  const sim::FormatReleases r = sim::KnownFormatReleases();
  List(out, "PyTorch", r.torch);
  List(out, "NCCL", r.nccl);
  List(out, "Slurm", r.slurm);
  out << "  PyTorch Flight Recorder dumps, format " << r.flight_recorder << " (pickle or JSON)\n"
      << "  NCCL RAS reports, text from NCCL 2.24, JSON from 2.28.7";
  return out.str();
}

}  // namespace denpex::cli
