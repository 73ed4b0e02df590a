// The man page and the shell completions of `denpex`, generated from the same CLI11
// definitions that print `--help` (cli/src/main.cc), so the three never disagree. The build
// runs `denpex generate-docs man|bash|zsh --out FILE` (a hidden subcommand) and installs
// the files; commands and options hidden from --help (an empty group) are left out here too.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace denpex::cli {

// A roff man page, section 1: every visible command with its options and positionals, the
// root's footer as EXIT STATUS, then where the shipped data and documentation are found.
std::string ManPage(const CLI::App& root, std::string_view version);
// A bash completion script defining `_denpex` and registering it for `denpex`.
std::string BashCompletion(const CLI::App& root);
// A zsh completion script (`#compdef denpex`, installed as `_denpex`).
std::string ZshCompletion(const CLI::App& root);

// `denpex generate-docs KIND --out FILE`: KIND man, bash or zsh. Returns the exit code.
int RunGenerateDocs(const CLI::App& root, std::string_view kind, std::string_view version,
                    const std::filesystem::path& out_path, std::ostream& out, std::ostream& err);

}  // namespace denpex::cli
