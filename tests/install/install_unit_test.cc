// Where an installed `denpex` finds its shipped data, and what --version says
// (cli/src/install.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "denpex/cli/install.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using denpex::cli::ResolveShipped;
using denpex::cli::ShippedDataDir;
using denpex::testing::TempDir;

namespace {

// A prefix as `cmake --install` lays it out: bin/denpex and share/denpex/scenarios/.
struct Prefix {
  TempDir dir{"denpex-prefix-"};
  Prefix() {
    fs::create_directories(dir.path() / "bin");
    fs::create_directories(dir.path() / "share/denpex/scenarios/smoke");
    std::ofstream(dir.path() / "bin/denpex") << "";
    std::ofstream(dir.path() / "share/denpex/scenarios/smoke/a.textproto") << "";
  }
  fs::path exe() const { return dir.path() / "bin/denpex"; }
  fs::path data() const { return dir.path() / "share/denpex"; }
};

// Runs in `dir` for the scope's duration (relative paths are resolved against the cwd).
struct InDir {
  fs::path old = fs::current_path();
  explicit InDir(const fs::path& dir) { fs::current_path(dir); }
  ~InDir() { fs::current_path(old); }
};

}  // namespace

TEST(ShippedData, IsFoundBesideAnInstalledBinary) {
  Prefix p;
  EXPECT_EQ(ShippedDataDir("", p.exe()), p.data());
}

TEST(ShippedData, TheEnvironmentOverridesTheInstalledDirectory) {
  Prefix p;
  EXPECT_EQ(ShippedDataDir("/srv/denpex-data", p.exe()), fs::path("/srv/denpex-data"));
}

TEST(ShippedData, ABinaryOutsideAnyPrefixOrBuildTreeHasNone) {
  TempDir d;
  fs::create_directories(d.path() / "bin");
  EXPECT_EQ(ShippedDataDir("", d.path() / "bin/denpex"), std::nullopt);
}

TEST(ShippedData, ABinaryInItsBuildTreeReadsTheSourceTree) {
  // This test binary lies in the build tree, as the build's denpex does.
  EXPECT_EQ(ShippedDataDir("", fs::path(DENPEX_BINARY)), fs::path(DENPEX_SOURCE_DIR));
}

TEST(ShippedData, AMissingScenarioPathIsTakenFromTheShippedData) {
  Prefix p;
  TempDir elsewhere;
  InDir in(elsewhere.path());
  EXPECT_EQ(ResolveShipped("scenarios/smoke", p.data()), p.data() / "scenarios/smoke");
  EXPECT_EQ(ResolveShipped("scenarios/smoke/a.textproto", p.data()),
            p.data() / "scenarios/smoke/a.textproto");
}

TEST(ShippedData, APathThatExistsHereOrOutsideScenariosAndCorporaIsKept) {
  Prefix p;
  TempDir here;
  InDir in(here.path());
  fs::create_directories("scenarios/smoke");
  EXPECT_EQ(ResolveShipped("scenarios/smoke", p.data()), fs::path("scenarios/smoke"));
  EXPECT_EQ(ResolveShipped("smoke/a.textproto", p.data()), fs::path("smoke/a.textproto"));
  EXPECT_EQ(ResolveShipped("/abs/scenarios/x", p.data()), fs::path("/abs/scenarios/x"));
  // Not shipped either: kept, so the error names the path as typed.
  EXPECT_EQ(ResolveShipped("scenarios/nope", p.data()), fs::path("scenarios/nope"));
  EXPECT_EQ(ResolveShipped("scenarios/nope", std::nullopt), fs::path("scenarios/nope"));
}

TEST(VersionText, NamesTheReleaseTheCommitAndTheFormatsReadBest) {
  const std::string v = denpex::cli::VersionText("7f41fc2a");
  EXPECT_TRUE(v.starts_with("denpex " DENPEX_VERSION "\ncommit 7f41fc2a\n")) << v;
  for (const char* s : {"PyTorch 1.13, 2.1, 2.4, 2.6", "NCCL 2.18.5", "2.29.2", "Slurm 22.05",
                        "Flight Recorder dumps, format 2.2", "NCCL RAS"}) {
    EXPECT_NE(v.find(s), std::string::npos) << s << " in:\n" << v;
  }
  EXPECT_FALSE(v.ends_with("\n"));
  EXPECT_NE(denpex::cli::VersionText("").find("commit unknown\n"), std::string::npos);
}
