// `denpex`'s man page and shell completions, from the CLI11 tree that prints --help
// (denpex/cli/docgen.h). One pass collects each visible command's options, positionals and
// subcommands into plain structs; each writer renders those.
#include "denpex/cli/docgen.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <ostream>
#include <vector>

#include "denpex/common/output_file.h"
#include "denpex/common/status.h"

namespace denpex::cli {
namespace {

struct OptionDoc {
  std::vector<std::string> names;  // "-h", "--help"
  std::string value;               // what it takes ("TEXT", "UINT64"); empty: a flag
  std::string description;
  std::string default_value;  // as --help shows it; empty: none
  bool required = false;
  bool repeats = false;
};

struct PositionalDoc {
  std::string name;
  std::string description;
  bool required = false;
  bool repeats = false;
};

struct CommandDoc {
  std::vector<std::string> path;  // {"eval", "merge"}; empty: `denpex` itself
  std::string description;
  std::string footer;
  std::vector<OptionDoc> options;
  std::vector<PositionalDoc> positionals;
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, description
};

// Hidden from --help: CLI11's empty group. Option groups are nameless apps: not commands.
std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app) {
  return app.get_subcommands(
      [](const CLI::App* s) { return !s->get_group().empty() && !s->get_name().empty(); });
}

void Collect(const CLI::App& app, std::vector<std::string> path, std::vector<CommandDoc>& out) {
  CommandDoc doc{.path = path, .description = app.get_description(), .footer = app.get_footer()};
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;
    const bool repeats = o->get_items_expected_max() > 1;  // a vector (a flag expects none)
    if (!o->nonpositional()) {
      doc.positionals.push_back({.name = o->get_name(true),
                                 .description = o->get_description(),
                                 .required = o->get_required(),
                                 .repeats = repeats});
      continue;
    }
    OptionDoc od{.description = o->get_description(),
                 .default_value = o->get_default_str(),
                 .required = o->get_required(),
                 .repeats = repeats};
    for (const auto& s : o->get_snames()) od.names.push_back("-" + s);
    for (const auto& l : o->get_lnames()) od.names.push_back("--" + l);
    if (o->get_expected_max() > 0 && o->get_type_size_max() > 0) {
      od.value = o->get_type_name();
      if (od.value.empty()) od.value = "VALUE";
    }
    doc.options.push_back(std::move(od));
  }
  const auto subs = VisibleSubcommands(app);
  for (const CLI::App* s : subs) doc.subcommands.emplace_back(s->get_name(), s->get_description());
  out.push_back(std::move(doc));
  for (const CLI::App* s : subs) {
    auto sub_path = path;
    sub_path.push_back(s->get_name());
    Collect(*s, std::move(sub_path), out);
  }
}

std::vector<CommandDoc> Commands(const CLI::App& root) {
  std::vector<CommandDoc> out;
  Collect(root, {}, out);
  return out;
}

std::string Joined(const std::vector<std::string>& words, std::string_view sep) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : std::string(sep)) + w;
  return s;
}

// ---- man page (roff, man macros) ----

// Text as roff: backslashes and minus signs escaped (so that `--out` copies as typed), a line
// break as `.br`, no line starting with a control character.
std::string Roff(std::string_view text) {
  std::string r;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) r += "\\&";
    line_start = false;
    if (c == '\\') {
      r += "\\e";
    } else if (c == '-') {
      r += "\\-";
    } else if (c == ',' || c == '|') {
      r += c;
      r += "\\:";  // a place a long unspaced list (--set's knobs) may break
    } else if (c == '\n') {
      r += "\n.br\n";
      line_start = true;
    } else {
      r += c;
    }
  }
  return r;
}

std::string Synopsis(const CommandDoc& c) {
  std::string s = ".B denpex" + (c.path.empty() ? "" : " " + Roff(Joined(c.path, " "))) + "\n";
  if (!c.subcommands.empty())
    s += ".I " + std::string(c.positionals.empty() ? "command" : "[command]") + "\n";
  if (!c.options.empty()) s += ".RI [ options ]\n";
  for (const auto& p : c.positionals) {
    const std::string name = Roff(p.name) + (p.repeats ? "..." : "");
    s += p.required ? ".I " + name + "\n" : ".RI [ " + name + " ]\n";
  }
  return s;
}

void ManOptions(const CommandDoc& c, std::string& s) {
  for (const auto& p : c.positionals) {
    s += ".TP\n.I " + Roff(p.name) + (p.repeats ? "..." : "") + "\n" + Roff(p.description) +
         (p.required ? " (required)" : "") + "\n";
  }
  for (const auto& o : c.options) {
    std::string head;
    for (const auto& n : o.names)
      head += (head.empty() ? "" : ", ") + std::string("\\fB") + Roff(n) + "\\fR";
    if (!o.value.empty()) head += " \\fI" + Roff(o.value) + "\\fR";
    std::string body = Roff(o.description);
    if (o.required) body += " (required)";
    if (!o.default_value.empty()) body += " (default: " + Roff(o.default_value) + ")";
    if (o.repeats) body += " (repeatable)";
    s += ".TP\n" + head + "\n" + body + "\n";
  }
}

// ---- completion helpers ----

// The first clause of a description, for a completion menu: up to 80 characters.
std::string Short(std::string_view text) {
  std::string s(text.substr(0, text.find('\n')));
  for (std::string_view cut : {"; ", " ("}) {
    if (const auto at = s.find(cut); at != std::string::npos && at > 10) s.resize(at);
  }
  if (s.size() > 80) s = s.substr(0, s.rfind(' ', 77)) + "...";
  return s;
}

// A word for the shell inside single quotes.
std::string SingleQuoted(std::string_view text) {
  std::string r = "'";
  for (char c : text) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// Text inside a zsh _arguments "[...]" explanation.
std::string ZshExplanation(std::string_view text) {
  std::string r;
  for (char c : text) {
    if (c == '[' || c == ']' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

std::string ZshFunction(const std::vector<std::string>& path) {
  std::string f = "_denpex";
  for (const auto& p : path) {
    f += "_";
    for (char c : p) f += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return f;
}

}  // namespace

std::string ManPage(const CLI::App& root, std::string_view version) {
  const auto commands = Commands(root);
  const CommandDoc& top = commands.front();
  std::string name_line = top.description;
  if (name_line.starts_with("denpex: ")) name_line.erase(0, 8);
  std::string s;
  s += ".\\\" Generated from denpex's CLI definitions (denpex generate-docs man). Do not edit.\n";
  s += ".TH DENPEX 1 \"\" \"denpex " + Roff(version) + "\" \"User Commands\"\n";
  s += ".nh\n.ad l\n";  // no hyphenation, ragged right: flags and paths stay whole
  s += ".SH NAME\ndenpex \\- " + Roff(name_line) + "\n";
  s += ".SH SYNOPSIS\n" + Synopsis(top);
  s += ".SH DESCRIPTION\n"
       "When a training job with thousands of ranks dies, one rank or node stopped first and "
       "every other rank then timed out waiting for it. \\fBdenpex diagnose\\fR reads the "
       "job's logs and names that rank, patient zero, with the lines an operator can check; "
       "\\fBdenpex simulate\\fR, \\fBscore\\fR and \\fBeval\\fR produce such failures with "
       "ground truth and measure the diagnosis against it; \\fBrun\\fR, \\fBwatch\\fR and "
       "\\fBpreflight\\fR run beside a real job.\n.PP\n";
  s += "Each command below prints the same text with \\fB\\-\\-help\\fR, e.g. \\fBdenpex "
       "diagnose \\-\\-help\\fR.\n";
  s += ".SH OPTIONS\n";
  ManOptions(top, s);
  s += ".SH COMMANDS\n";
  for (size_t i = 1; i < commands.size(); ++i) {
    const CommandDoc& c = commands[i];
    s += ".SS \"" + Roff(Joined(c.path, " ")) + "\"\n" + Synopsis(c) + ".PP\n" +
         Roff(c.description) + "\n";
    if (!c.subcommands.empty()) {
      s += ".PP\nCommands:";
      for (const auto& [sub, _] : c.subcommands) s += " \\fB" + Roff(sub) + "\\fR";
      s += ".\n";
    }
    ManOptions(c, s);
    if (!c.footer.empty() && c.footer != top.footer) s += ".PP\n" + Roff(c.footer) + "\n";
  }
  s += ".SH EXIT STATUS\n" + Roff(top.footer) + "\n";
  s += ".SH ENVIRONMENT\n.TP\n.B DENPEX_DATA_DIR\n"
       "The directory holding the shipped \\fIscenarios/\\fR and \\fIcorpora/\\fR, instead of "
       "the one beside the binary.\n"
       ".TP\n.B GLIBC_TUNABLES\n"
       "Where the kernel gives transparent huge pages on request, \\fBdiagnose\\fR, \\fBeval\\fR, "
       "\\fBevents\\fR, \\fBsimulate\\fR, \\fBdemo\\fR and \\fBmerge\\fR start once more with "
       "\\fIglibc.malloc.hugetlb=1\\fR added (their heap in huge pages) and put the variable back "
       "for the processes they start; \\fIglibc.malloc.hugetlb=0\\fR keeps the plain heap.\n";
  s += ".SH FILES\n.TP\n.I <prefix>/share/denpex/scenarios\n"
       "The shipped scenarios and suites. A relative path under \\fIscenarios/\\fR or "
       "\\fIcorpora/\\fR that does not exist in the working directory is read from here "
       "(\\fBdenpex eval scenarios/smoke\\fR from any directory).\n"
       ".TP\n.I <prefix>/share/denpex/corpora\nThe frozen real incidents of \\fIcorpora/real\\fR "
       "with their expected outcomes (\\fBdenpex eval \\-\\-corpus corpora/real\\fR).\n"
       ".TP\n.I <prefix>/share/doc/denpex\nThe documentation: README.md and docs/ "
       "(log formats, scenario, diagnosis and truth formats, evaluation).\n";
  s += ".SH SEE ALSO\n\\fBtorchrun\\fR(1), \\fBsrun\\fR(1)\n";
  return s;
}

std::string BashCompletion(const CLI::App& root) {
  const auto commands = Commands(root);
  std::string walk, offer;
  for (const CommandDoc& c : commands) {
    const std::string path = Joined(c.path, " ");
    for (const auto& [sub, _] : c.subcommands) {
      walk += "      " + SingleQuoted(path + "|" + sub) +
              ") cmd=" + SingleQuoted(path.empty() ? sub : path + " " + sub) + " ;;\n";
    }
    std::vector<std::string> takes_value, words;
    for (const auto& o : c.options) {
      for (const auto& n : o.names) {
        words.push_back(n);
        if (!o.value.empty()) takes_value.push_back(SingleQuoted(path + "|" + n));
      }
    }
    if (!takes_value.empty()) walk += "      " + Joined(takes_value, "|") + ") skip=1 ;;\n";
    std::vector<std::string> subs;
    for (const auto& [sub, _] : c.subcommands) subs.push_back(sub);
    offer += "    " + SingleQuoted(path) + ") subs=" + SingleQuoted(Joined(subs, " ")) +
             " opts=" + SingleQuoted(Joined(words, " ")) +
             " files=" + (c.positionals.empty() ? "0" : "1") + " ;;\n";
  }
  std::string s;
  s += "# bash completion for denpex. Generated from its CLI definitions (denpex generate-docs "
       "bash); do not edit.\n";
  s += "_denpex() {\n";
  s += "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd='' w i skip=0 subs='' opts='' files=0\n";
  s += "  COMPREPLY=()\n";
  s += "  # Which command the words so far name; skip the value of an option that takes one.\n";
  s += "  for ((i = 1; i < COMP_CWORD; i++)); do\n";
  s += "    w=\"${COMP_WORDS[i]}\"\n";
  s += "    if ((skip)); then skip=0; continue; fi\n";
  s += "    if [[ $w == -- ]]; then\n";
  s += "      # After --: a command and its arguments (denpex run -- COMMAND...).\n";
  s += "      COMPREPLY=($(compgen -c -- \"$cur\") $(compgen -f -- \"$cur\"))\n";
  s += "      return 0\n";
  s += "    fi\n";
  s += "    case \"$cmd|$w\" in\n" + walk + "    esac\n";
  s += "  done\n";
  s += "  if ((skip)); then\n";
  s += "    COMPREPLY=($(compgen -f -- \"$cur\"))\n";
  s += "    return 0\n";
  s += "  fi\n";
  s += "  case \"$cmd\" in\n" + offer + "  esac\n";
  s += "  if [[ $cur == -* ]]; then\n";
  s += "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n";
  s += "  else\n";
  s += "    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n";
  s += "    if ((files)); then COMPREPLY+=($(compgen -f -- \"$cur\")); fi\n";
  s += "  fi\n";
  s += "}\n";
  s += "complete -o filenames -F _denpex denpex\n";
  return s;
}

std::string ZshCompletion(const CLI::App& root) {
  const auto commands = Commands(root);
  std::string s;
  s += "#compdef denpex\n";
  s += "# zsh completion for denpex. Generated from its CLI definitions (denpex generate-docs "
       "zsh); do not edit.\n";
  // Deepest first, so that each function is defined before the text that calls it is read.
  for (auto it = commands.rbegin(); it != commands.rend(); ++it) {
    const CommandDoc& c = *it;
    s += "\n" + ZshFunction(c.path) + "() {\n";
    if (!c.subcommands.empty()) {
      // A subcommand word already typed: its function completes the rest, words shifted so
      // that the subcommand is the command name.
      s += "  local i\n  for ((i = 2; i < CURRENT; i++)); do\n    case ${words[i]} in\n";
      for (const auto& [sub, _] : c.subcommands) {
        auto sub_path = c.path;
        sub_path.push_back(sub);
        s += "      " + sub + ") shift $((i - 1)) words; ((CURRENT -= i - 1)); " +
             ZshFunction(sub_path) + "; return ;;\n";
      }
      s += "    esac\n  done\n";
      s += "  local -a subs\n  subs=(\n";
      for (const auto& [sub, text] : c.subcommands) {
        s += "    " + SingleQuoted(sub + ":" + Short(text)) + "\n";
      }
      s += "  )\n";
    }
    s += "  _arguments -S";
    for (const auto& o : c.options) {
      std::string spec;
      if (o.names.size() > 1) {
        spec = "'(" + Joined(o.names, " ") + ")'{" + Joined(o.names, ",") + "}";
      } else {
        spec = (o.repeats ? "'*'" : "") + o.names.front();
      }
      std::string rest = "[" + ZshExplanation(Short(o.description)) + "]";
      if (!o.value.empty()) {
        // A text value is most often a path; a number has nothing to complete.
        std::string message = o.names.back();
        message.erase(0, message.find_first_not_of('-'));
        rest += ":" + message + ":" + (o.value.starts_with("TEXT") ? "_files" : " ");
      }
      s += " \\\n    " + spec + SingleQuoted(rest);
    }
    std::string rest_action;
    if (!c.subcommands.empty()) {
      rest_action = "{_describe -t commands " + std::string("'denpex") +
                    (c.path.empty() ? "" : " " + Joined(c.path, " ")) + " command' subs" +
                    (c.positionals.empty() ? "" : "; _files") + "}";
    } else if (!c.positionals.empty()) {
      rest_action = "_files";
    }
    if (!rest_action.empty()) {
      const bool many =
          !c.subcommands.empty() || c.positionals.size() > 1 || c.positionals.front().repeats;
      s += " \\\n    " + SingleQuoted((many ? "*: :" : "1: :") + rest_action);
    }
    s += "\n}\n";
  }
  s += "\n_denpex \"$@\"\n";
  return s;
}

int RunGenerateDocs(const CLI::App& root, std::string_view kind, std::string_view version,
                    const std::filesystem::path& out_path, std::ostream& out, std::ostream& err) {
  std::string text;
  if (kind == "man") {
    text = ManPage(root, version);
  } else if (kind == "bash") {
    text = BashCompletion(root);
  } else if (kind == "zsh") {
    text = ZshCompletion(root);
  } else {
    err << "denpex generate-docs: unknown kind '" << kind << "' (man, bash or zsh)\n";
    return kExitUsage;
  }
  if (out_path.empty() || IsStdout(out_path)) {
    out << text;
    return out ? kExitOk : kExitInternal;
  }
  if (const Status st = WriteOutputFile(out_path, text); !st.ok()) {
    err << "denpex generate-docs: " << st.message() << "\n";
    return ExitCodeFor(st);
  }
  return kExitOk;
}

}  // namespace denpex::cli
