// The shipped forms of `denpex`, as an operator puts them on a cluster (README.md, "Install
// on a cluster"): `cmake --install` into a prefix, that prefix copied elsewhere (a shared
// filesystem), and the Debian package `cpack -G DEB` builds, unpacked with `dpkg-deb -x`. Each
// runs from outside the source tree and reads only what it carries. Label `package`: each test
// installs or packages the build (tens of seconds), so they stay out of `ctest -L unit`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "support/denpex_cmd.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using denpex::testing::CmdResult;
using denpex::testing::Shell;
using denpex::testing::TempDir;

namespace {

// `p` single-quoted for the shell (built by appending: GCC 12 warns, wrongly, of
// "'" + std::string&& with -Wrestrict).
std::string Q(const fs::path& p) {
  std::string q = "'";
  q += p.string();
  q += '\'';
  return q;
}

// `cmd` run in `dir`, with no DENPEX_DATA_DIR that could point it back at the source tree.
CmdResult In(const fs::path& dir, const std::string& cmd) {
  return Shell("cd " + Q(dir) + " && env -u DENPEX_DATA_DIR " + cmd);
}

// What the bash completion `script` offers for `words` (shell words; the last one is being
// completed), run in `cwd`.
std::string BashComplete(const fs::path& script, const fs::path& cwd, const std::string& words) {
  return In(cwd, "bash -c 'source \"$0\"; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _denpex; " +
                     std::string("echo \"${COMPREPLY[*]}\"' ") + Q(script) + " " + words)
      .output;
}

void ExpectFile(const fs::path& p) { EXPECT_TRUE(fs::is_regular_file(p)) << p << " not installed"; }

// The demo and the diagnosis of its incident, by `denpex` at `exe`, with `work` as the cwd.
void ExpectDemoAndDiagnoseWork(const fs::path& exe, const fs::path& work) {
  CmdResult r = In(work, Q(exe) + " demo --out demo");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("rank"), std::string::npos) << r.output;
  r = In(work, Q(exe) + " diagnose demo/incident --json diagnosis.json");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::file_size(work / "diagnosis.json") > 0);
  r = In(work, Q(exe) + " score --truth demo/truth.json --diagnosis diagnosis.json");
  EXPECT_EQ(r.code, 0) << r.output;
}

}  // namespace

TEST(Package, CmakeInstallGivesAWorkingDenpexOutsideTheSourceTree) {
  TempDir tmp("denpex-install-");
  const fs::path prefix = tmp.path() / "prefix";
  CmdResult r = Shell("cmake --install " + Q(DENPEX_BUILD_DIR) + " --prefix " + Q(prefix));
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* f :
       {"bin/denpex", "share/man/man1/denpex.1", "share/bash-completion/completions/denpex",
        "share/zsh/vendor-completions/_denpex", "share/doc/denpex/README.md",
        "share/doc/denpex/docs/log_formats.md",
        "share/denpex/scenarios/smoke/sigkill_4096.textproto",
        "share/denpex/scenarios/suites/smoke.suite.textproto", "share/denpex/corpora/README.md",
        "share/denpex/corpora/real/FORMATS-OBSERVED.md"}) {
    ExpectFile(prefix / f);
  }
  // The prefix copied elsewhere, as onto a shared filesystem: nothing points back.
  const fs::path shared = tmp.path() / "shared/denpex";
  fs::create_directories(shared.parent_path());
  ASSERT_EQ(Shell("cp -a " + Q(prefix) + " " + Q(shared)).code, 0);
  const fs::path exe = shared / "bin/denpex";
  const fs::path work = tmp.path() / "work";
  fs::create_directories(work);
  ExpectDemoAndDiagnoseWork(exe, work);

  // A relative scenarios/... path is read from the copy's share/denpex: a scenario that only
  // the copy holds is found, and so are the suites and the corpora they name.
  fs::copy_file(shared / "share/denpex/scenarios/smoke/sigkill_1024_debug.textproto",
                shared / "share/denpex/scenarios/smoke/only_in_this_copy.textproto");
  r = In(work,
         Q(exe) + " eval scenarios/smoke/only_in_this_copy.textproto --seeds 1 --json report.json");
  EXPECT_EQ(r.code, 0) << r.output;
  std::ifstream report(work / "report.json");
  const std::string json((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(json.find((shared / "share/denpex/scenarios/smoke/only_in_this_copy").string()),
            std::string::npos)
      << "the report's inputs name no path in the copy: " << json.substr(0, 2000);
  r = In(work, Q(exe) + " eval scenarios/suites/real.suite.textproto --seeds 1");
  EXPECT_EQ(r.code, 0) << r.output;
  r = In(work, Q(exe) + " eval scenarios/smoke/none_such.textproto");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("scenarios/smoke/none_such.textproto"), std::string::npos) << r.output;

  // The installed man page and completion.
  r = Shell("MANWIDTH=120 man -P cat -l " + Q(shared / "share/man/man1/denpex.1"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("checkpoint verify"), std::string::npos) << r.output;
  EXPECT_EQ(BashComplete(shared / "share/bash-completion/completions/denpex", work, "denpex diag"),
            "diagnose\n");
}

TEST(Package, TheDebRunsFromAnUnpackedRootAndDependsOnItsLibraries) {
  TempDir tmp("denpex-deb-");
  CmdResult r =
      Shell("cpack -G DEB --config " + Q(fs::path(DENPEX_BUILD_DIR) / "CPackConfig.cmake") +
            " -B " + Q(tmp.path() / "pkg"));
  ASSERT_EQ(r.code, 0) << r.output;
  fs::path deb;
  for (const auto& e : fs::directory_iterator(tmp.path() / "pkg")) {
    if (e.path().extension() == ".deb") deb = e.path();
  }
  ASSERT_FALSE(deb.empty()) << r.output;
  EXPECT_TRUE(deb.filename().string().starts_with("denpex_" DENPEX_VERSION "_")) << deb;

  // Depends: the runtime packages of what the binary links, found by dpkg-shlibdeps.
  r = Shell("dpkg-deb -f " + Q(deb) + " Depends");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* lib :
       {"libc6", "libstdc++6", "libprotobuf", "libtbb", "zlib1g", "liblzma5", "libzstd1"}) {
    EXPECT_NE(r.output.find(lib), std::string::npos) << lib << " not in Depends: " << r.output;
  }
  r = Shell("dpkg-deb -c " + Q(deb));
  for (const char* f : {"./usr/bin/denpex", "./usr/share/man/man1/denpex.1",
                        "./usr/share/bash-completion/completions/denpex",
                        "./usr/share/denpex/scenarios/smoke/sigkill_4096.textproto"}) {
    EXPECT_NE(r.output.find(f), std::string::npos) << f << " not in the package";
  }

  const fs::path root = tmp.path() / "root";
  r = Shell("dpkg-deb -x " + Q(deb) + " " + Q(root));
  ASSERT_EQ(r.code, 0) << r.output;
  const fs::path exe = root / "usr/bin/denpex";
  r = Shell("ldd " + Q(exe));
  EXPECT_EQ(r.output.find("not found"), std::string::npos) << r.output;
  r = Shell(Q(exe) + " --version");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.output.starts_with("denpex " DENPEX_VERSION "\ncommit ")) << r.output;
  const fs::path work = tmp.path() / "work";
  fs::create_directories(work);
  ExpectDemoAndDiagnoseWork(exe, work);
  r = In(work, Q(exe) + " eval scenarios/smoke/sigkill_1024_debug.textproto --seeds 1");
  EXPECT_EQ(r.code, 0) << r.output;
}
