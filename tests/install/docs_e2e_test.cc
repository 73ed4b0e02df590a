// `denpex --version`, and the man page and shell completions the build generates from the CLI
// definitions (cli/src/docgen.cc): the page renders with man(1) without warnings and names
// every flag `--help` does; the bash and zsh completions offer the subcommands and flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "support/denpex_cmd.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using denpex::testing::CmdResult;
using denpex::testing::Denpex;
using denpex::testing::Shell;
using denpex::testing::TempDir;

namespace {

const fs::path kCliDir = fs::path(DENPEX_BUILD_DIR) / "cli";

// `p` single-quoted for the shell (built by appending: GCC 12 warns, wrongly, of
// "'" + std::string&& with -Wrestrict).
std::string Q(const fs::path& p) {
  std::string q = "'";
  q += p.string();
  q += '\'';
  return q;
}

std::string Man() {
  const CmdResult r = Shell("MANWIDTH=200 man -P cat -l " + Q(kCliDir / "denpex.1"));
  EXPECT_EQ(r.code, 0) << r.output;
  return r.output;
}

// Every `--flag` a text names.
std::set<std::string> Flags(const std::string& text) {
  std::set<std::string> flags;
  const std::regex flag(R"((^|[\s,\[(])(--[a-z][a-z0-9-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator();
       ++it) {
    flags.insert((*it)[2]);
  }
  return flags;
}

// What the generated bash completion offers for `words` (shell words; the last one is being
// completed), run in `cwd`, one word a line.
std::string BashComplete(const std::string& words, const fs::path& cwd) {
  return Shell("cd " + Q(cwd) + " && bash -c 'source \"$0\"; COMP_WORDS=(\"$@\"); " +
               "COMP_CWORD=$(($# - 1)); _denpex; printf \"%s\\n\" \"${COMPREPLY[@]}\"' " +
               Q(kCliDir / "completion/denpex") + " " + words)
      .output;
}

}  // namespace

TEST(Version, NamesTheReleaseTheCommitItWasBuiltFromAndTheFormatsItReadsBest) {
  const CmdResult r = Denpex("--version");
  ASSERT_EQ(r.code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m, std::regex("^denpex " DENPEX_VERSION "\ncommit ([A-Za-z0-9._+-]+)\n")))
      << r.output;
  EXPECT_NE(r.output.find("PyTorch 1.13"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NCCL 2.18.5"), std::string::npos) << r.output;
  // The commit is `git describe`'s: the abbreviated hash of a commit of this checkout (after a
  // tag's name and distance, if any; "-dirty" when the tree had changes), or "unknown".
  std::string commit = m[1];
  // A checkout of its own (cmake/BuildInfo.cmake's rule: not a tree inside another repository).
  const CmdResult top = Shell("git -C " + Q(DENPEX_SOURCE_DIR) + " rev-parse --show-toplevel");
  std::error_code ec;
  if (top.code != 0 ||
      !fs::equivalent(top.output.substr(0, top.output.find('\n')), DENPEX_SOURCE_DIR, ec)) {
    EXPECT_EQ(commit, "unknown");
    return;
  }
  if (commit.ends_with("-dirty")) commit.resize(commit.size() - 6);
  std::smatch hash;
  if (std::regex_search(commit, hash, std::regex("-g([0-9a-f]+)$"))) commit = hash[1];
  EXPECT_EQ(Shell("git -C " + Q(DENPEX_SOURCE_DIR) + " cat-file -e " + commit + "^{commit}").code,
            0)
      << commit << " is no commit of " << DENPEX_SOURCE_DIR;
}

TEST(ManPage, RendersWithoutWarningsAndNamesEveryCommand) {
  const CmdResult warnings = Shell("MANWIDTH=200 man --warnings -P cat -l " +
                                   Q(kCliDir / "denpex.1") + " 2>&1 >/dev/null");
  EXPECT_EQ(warnings.output, "");
  const std::string man = Man();
  for (const char* s :
       {"denpex - find patient zero", "SYNOPSIS", "EXIT STATUS", "simulate", "diagnose",
        "checkpoint verify", "eval merge", "DENPEX_DATA_DIR", "share/denpex/scenarios"}) {
    EXPECT_NE(man.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(man.find("generate-docs"), std::string::npos) << "a hidden command is documented";
}

TEST(ManPage, NamesEveryFlagThatHelpNames) {
  const std::set<std::string> in_man = Flags(Man());
  for (const char* cmd :
       {"", "simulate", "diagnose", "watch", "events", "score", "eval", "eval merge",
        "checkpoint verify", "preflight", "canary", "demo", "run", "freeze"}) {
    const CmdResult help = Denpex(std::string(cmd) + " --help");
    ASSERT_EQ(help.code, 0) << cmd;
    for (const std::string& flag : Flags(help.output)) {
      EXPECT_TRUE(in_man.contains(flag))
          << "denpex " << cmd << " --help names " << flag << "; the man page does not";
    }
  }
}

TEST(BashCompletion, OffersSubcommandsThenTheirFlags) {
  TempDir cwd;  // an empty directory: no file names among the offers
  EXPECT_EQ(BashComplete("denpex ev", cwd.path()), "events\neval\n");
  EXPECT_EQ(BashComplete("denpex eva", cwd.path()), "eval\n");
  EXPECT_EQ(BashComplete("denpex checkpoint ''", cwd.path()), "verify\n");
  EXPECT_EQ(BashComplete("denpex diagnose --st", cwd.path()), "--strategy\n");
  EXPECT_EQ(BashComplete("denpex eval merge --ma", cwd.path()), "--markdown\n");
  EXPECT_EQ(BashComplete("denpex checkpoint verify --d", cwd.path()), "--deep\n--dp\n");
  // A flag of another command is not offered, nor a hidden command.
  EXPECT_EQ(BashComplete("denpex demo --st", cwd.path()), "\n");
  EXPECT_EQ(BashComplete("denpex gen", cwd.path()), "\n");
  const std::string top = BashComplete("denpex ''", cwd.path());
  for (const char* sub : {"simulate", "diagnose", "watch", "eval", "checkpoint", "preflight",
                          "canary", "run", "freeze"}) {
    EXPECT_NE(top.find(std::string(sub) + "\n"), std::string::npos) << sub << " in " << top;
  }
}

TEST(BashCompletion, OffersFilesForAnOptionsValueAndAPositional) {
  TempDir cwd;
  std::ofstream(cwd.path() / "job.textproto") << "";
  // The value of --out is a path, not a flag; the scenario positional too.
  EXPECT_EQ(BashComplete("denpex simulate --out ''", cwd.path()), "job.textproto\n");
  EXPECT_EQ(BashComplete("denpex simulate --out x j", cwd.path()), "job.textproto\n");
  EXPECT_EQ(BashComplete("denpex simulate --seed 3 --fo", cwd.path()), "--force\n");
}

// What zsh's own completion system offers for `line` with the generated `_denpex` on fpath
// (tests/install/zsh_complete.zsh drives an interactive zsh in a pseudo-terminal), one word a
// line, sorted.
std::string ZshComplete(const std::string& line) {
  return Shell("timeout 60 zsh -f " +
               Q(fs::path(DENPEX_SOURCE_DIR) / "tests/install/zsh_complete.zsh") + " " +
               Q(kCliDir / "completion") + " '" + line + "'")
      .output;
}

TEST(ZshCompletion, OffersSubcommandsThenTheirFlags) {
  if (Shell("command -v zsh").code != 0) GTEST_SKIP() << "no zsh (scripts/install-deps.sh)";
  const CmdResult syntax = Shell("zsh -n " + Q(kCliDir / "completion/_denpex"));
  EXPECT_EQ(syntax.code, 0) << syntax.output;
  EXPECT_EQ(ZshComplete("denpex eva"), "eval\n");
  EXPECT_EQ(ZshComplete("denpex checkpoint "), "verify\n");
  EXPECT_EQ(ZshComplete("denpex diagnose --st"), "--strategy\n");
  EXPECT_EQ(ZshComplete("denpex eval merge --ma"), "--markdown\n");
  EXPECT_EQ(ZshComplete("denpex checkpoint verify --d"), "--deep\n--dp\n");
  EXPECT_EQ(ZshComplete("denpex demo --"), "--force\n--help\n--out\n");
  EXPECT_EQ(ZshComplete("denpex gen"), "");
}
