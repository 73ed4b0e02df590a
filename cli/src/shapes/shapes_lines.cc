// Shapes that change the lines themselves: same-host, cri, journald, kubectl-ts, docker-json,
// journald-json, paste.
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "denpex/common/text.h"
#include "shapes_internal.h"

namespace denpex::cli::shapes {
namespace fs = std::filesystem;

namespace {

// Applies `fn(lines, rel) -> text` to every log, keeping paths; copies the rest.
template <typename Fn>
Status EachLog(const Source& src, const fs::path& out, Fn fn) {
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    DENPEX_RETURN_IF_ERROR(WriteText(out / f.rel, fn(*text, f.rel)));
  }
  return CopyKept(src, out);
}

// Adds `prefix(i)` before line i of `text`; a last line without '\n' stays without one.
template <typename Prefix>
std::string Prefixed(std::string_view text, Prefix prefix) {
  const auto lines = Lines(text);
  std::string out;
  out.reserve(text.size() + lines.size() * 40);
  for (size_t i = 0; i < lines.size(); ++i) {
    out += prefix(lines, i);
    out.append(lines[i]);
    if (i + 1 < lines.size() || text.ends_with('\n')) out.push_back('\n');
  }
  return out;
}

bool HostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Every whole host-name token (also `host.domain`) replaced by `name`.
std::string ReplaceHosts(std::string_view text, const std::set<std::string>& lower_hosts,
                         const std::string& name) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!HostChar(text[i])) {
      out.push_back(text[i++]);
      continue;
    }
    size_t j = i;
    while (j < text.size() && HostChar(text[j])) ++j;
    std::string_view tok = text.substr(i, j - i);
    while (!tok.empty() && tok.back() == '.') tok.remove_suffix(1);
    const std::string low = LowerCopy(tok);
    size_t keep = 0;  // bytes of the token that are a host name
    if (lower_hosts.contains(low)) {
      keep = tok.size();
    } else if (const size_t dot = low.find('.'); dot != std::string::npos &&
                                                 lower_hosts.contains(low.substr(0, dot))) {
      keep = dot;
    }
    if (keep > 0) {
      out += name;
      out.append(text.substr(i + keep, j - i - keep));
    } else {
      out.append(text.substr(i, j - i));
    }
    i = j;
  }
  return out;
}

constexpr std::array<const char*, 12> kMon = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

std::string Journal(TimeNs t) {
  const CivilTime c = ToCivil(t);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s %02d %02d:%02d:%02d ", kMon[static_cast<size_t>(c.month - 1)],
                c.day, c.hour, c.minute, c.second);
  return buf;
}

// The unit a journal would name for a file, and whether it carries a pid.
std::string UnitOf(std::string_view rel, const Source& src) {
  const std::string name = LowerCopy(fs::path(rel).filename().string());
  std::string pid = "[";
  (pid += std::to_string(1000 + Hash(rel, src.seed) % 60000)) += ']';
  if (name.find("slurmctld") != std::string::npos) return "slurmctld" + pid;
  if (name.find("slurmd") != std::string::npos) return "slurmd" + pid;
  if (name.find("torchrun") != std::string::npos) return "torchrun" + pid;
  if (name.find("kern") != std::string::npos || name.find("dmesg") != std::string::npos) {
    return "kernel";
  }
  return "python3" + pid;
}

bool ErrorLike(std::string_view line) {
  for (std::string_view w : {"rror", "ERROR", "Traceback", "WARN", "exitcode", "FAILED", "Killed",
                             "Xid", "timeout", "Timeout"}) {
    if (line.find(w) != std::string_view::npos) return true;
  }
  return line.size() > 1 && (line[0] == 'E' || line[1] == 'E') && line.find(']') != line.npos &&
         line.find(']') < 40;
}

}  // namespace

Status RelaySameHost(const Source& src, const fs::path& out, Relaid* r) {
  const std::string name = "host-0";
  std::set<std::string> lower;
  for (const auto& n : NodeNames(src)) {
    lower.insert(LowerCopy(n));
    r->node_aliases[name].push_back(n);
  }
  std::set<std::string> used;
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    std::string rel = f.rel;
    if (const std::string node = NodeOf(f.rel); !node.empty() && lower.contains(LowerCopy(node))) {
      rel = name + f.rel.substr(node.size());
      for (int k = 1; !used.insert(rel).second; ++k) {  // two nodes' torchrun.log, kern.log
        const fs::path p(name + f.rel.substr(node.size()));
        rel = (p.parent_path() / (p.stem().string() + "-" + std::to_string(k) +
                                  p.extension().string()))
                  .generic_string();
      }
    }
    DENPEX_RETURN_IF_ERROR(WriteText(out / rel, ReplaceHosts(*text, lower, name)));
  }
  return CopyKept(src, out);
}

Status RelayCri(const Source& src, const fs::path& out, Relaid*) {
  return EachLog(src, out, [&src](std::string_view text, const std::string& rel) {
    const auto times = ArrivalTimes(Lines(text), src);
    const char* stream = rel.ends_with("stderr.log") ? " stderr F " : " stdout F ";
    return Prefixed(text, [&](const auto&, size_t i) { return FormatRfc3339(times[i]) + stream; });
  });
}

Status RelayKubectlTs(const Source& src, const fs::path& out, Relaid*) {
  return EachLog(src, out, [&src](std::string_view text, const std::string&) {
    const auto times = ArrivalTimes(Lines(text), src);
    return Prefixed(text, [&](const auto&, size_t i) { return FormatRfc3339(times[i]) + " "; });
  });
}

namespace {

constexpr std::size_t kDockerRecordBytes = 16 * 1024;  // the most text of a line one record holds

// Go's RFC3339Nano, as Docker writes a record's time: the fraction's trailing zeros dropped,
// and the point with them on a whole second.
std::string GoRfc3339Nano(TimeNs t) {
  std::string s = FormatRfc3339(t);  // `2024-06-01T09:00:21.972589800Z`
  const std::size_t dot = s.find('.');
  std::size_t end = s.size() - 1;  // the `Z`
  while (end > dot + 1 && s[end - 1] == '0') --end;
  if (end == dot + 1) end = dot;
  return s.substr(0, end) + "Z";
}

// The bytes of the UTF-8 character that starts `s` (a non-ASCII byte), 0 when it starts none.
std::size_t CharLength(std::string_view s) {
  const auto b = static_cast<unsigned char>(s[0]);
  const std::size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
  return n > 0 && n <= s.size() && FirstInvalidUtf8(s.substr(0, n)) == std::string_view::npos ? n
                                                                                              : 0;
}

}  // namespace

void AppendJsonEscaped(std::string_view bytes, std::string* out) {
  constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b < 0x80) {
      if (b >= 0x20 && b != '\\' && b != '"' && b != '<' && b != '>' && b != '&') {
        out->push_back(static_cast<char>(b));
      } else if (b == '\\' || b == '"') {
        out->push_back('\\');
        out->push_back(static_cast<char>(b));
      } else if (b == '\n') {
        out->append("\\n");
      } else if (b == '\r') {
        out->append("\\r");
      } else {
        out->append("\\u00");
        out->push_back(kHex[b >> 4]);
        out->push_back(kHex[b & 0xF]);
      }
      ++i;
      continue;
    }
    const std::size_t n = CharLength(bytes.substr(i));
    if (n == 0) {
      out->append("\\ufffd");
      ++i;
      continue;
    }
    const std::string_view ch = bytes.substr(i, n);
    if (ch == "\xe2\x80\xa8" || ch == "\xe2\x80\xa9") {
      out->append(ch == "\xe2\x80\xa8" ? "\\u2028" : "\\u2029");
    } else {
      out->append(ch);
    }
    i += n;
  }
}

// Docker's json-file driver: each line a record
// `{"log":"<line>\n","stream":"stdout","time":"<RFC3339Nano>"}` (stderr for a `*stderr.log`, as
// cri), written when the line arrived; a line over 16 KiB split into records of 16 KiB, the ones
// before its last without their newline, as Docker's copier splits it; a last line without a
// newline is such a head too.
Status RelayDockerJson(const Source& src, const fs::path& out, Relaid*) {
  return EachLog(src, out, [&src](std::string_view text, const std::string& rel) {
    const auto lines = Lines(text);
    const auto times = ArrivalTimes(lines, src);
    const std::string stream =  // what every record of the file has between its text and its time
        rel.ends_with("stderr.log") ? "\",\"stream\":\"stderr\",\"time\":\""
                                    : "\",\"stream\":\"stdout\",\"time\":\"";
    std::string outtext;
    outtext.reserve(text.size() + lines.size() * 72);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const bool ended = i + 1 < lines.size() || text.ends_with('\n');
      const std::string time = GoRfc3339Nano(times[i]);
      std::string_view line = lines[i];
      do {
        std::size_t n = std::min(kDockerRecordBytes, line.size());
        while (n > 0 && n < line.size() && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80)
          --n;
        if (n == 0) n = std::min(kDockerRecordBytes, line.size());
        const bool last = n == line.size();
        outtext += "{\"log\":\"";
        AppendJsonEscaped(line.substr(0, n), &outtext);
        if (last && ended) outtext += "\\n";
        outtext += stream;
        outtext += time;
        outtext += "\"}\n";
        line.remove_prefix(n);
      } while (!line.empty());
    }
    return outtext;
  });
}

// A file already in syslog shape (a kernel log) is left as it is. The host is where the
// writer ran: a top-level file relayed by srun, mpirun, pdsh or Ray's driver carries the
// collecting host (`login-01`), not the ranks' nodes.
Status RelayJournald(const Source& src, const fs::path& out, Relaid*) {
  const auto pods = PodNodes(src);
  return EachLog(src, out, [&src, &pods](std::string_view text, const std::string& rel) {
    const auto lines = Lines(text);
    for (auto l : lines) {
      if (!LineTime(l, src.year)) continue;
      if (l.size() > 16 && std::isupper(static_cast<unsigned char>(l[0])) &&
          l.find(" kernel: ") != std::string_view::npos) {
        return std::string(text);
      }
      break;
    }
    const auto times = ArrivalTimes(lines, src);
    // The host the writer ran on: the node of a node folder's file or of a pod's log, else
    // the host that collected the top-level files (srun's, mpirun's, the controller's).
    std::string node = NodeOf(rel);
    if (auto pod = pods.find(PodOf(rel)); node.empty() && pod != pods.end()) node = pod->second;
    const std::string head = (node.empty() ? std::string("login-01") : node) + " " +
                             UnitOf(rel, src) + ": ";
    return Prefixed(text, [&](const auto&, size_t i) { return Journal(times[i]) + head; });
  });
}

namespace {

// `bytes` as a JSON string's content as systemd's JSON output writes it: `"`, `\\` and the
// control bytes escaped (`\n`, `\t`, `\u001b`); false (nothing written) when `bytes` is no
// UTF-8, which the journal writes as an array of bytes instead.
bool AppendJournalEscaped(std::string_view bytes, std::string* out) {
  if (FirstInvalidUtf8(bytes) != std::string_view::npos) return false;
  constexpr char kHex[] = "0123456789abcdef";
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '"' || b == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (b == '\n' || b == '\t' || b == '\r') {
      out->push_back('\\');
      out->push_back(b == '\n' ? 'n' : b == '\t' ? 't' : 'r');
    } else if (b < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[b >> 4]);
      out->push_back(kHex[b & 0xF]);
    } else {
      out->push_back(c);
    }
  }
  return true;
}

}  // namespace

// `journalctl -o json`: each line an entry of the journal on the writer's host (as journald's),
// at the line's arrival time: a kernel log's lines the kernel's entries (a syslog-shaped line's
// message after its `kernel: `, at its own stamp), every other file's lines a process's
// (`SYSLOG_IDENTIFIER` and `_PID` from the file's name, as journald's unit), its message the line.
Status RelayJournaldJson(const Source& src, const fs::path& out, Relaid*) {
  const auto pods = PodNodes(src);
  return EachLog(src, out, [&src, &pods](std::string_view text, const std::string& rel) {
    const auto lines = Lines(text);
    const auto times = ArrivalTimes(lines, src);
    std::string node = NodeOf(rel);
    if (auto pod = pods.find(PodOf(rel)); node.empty() && pod != pods.end()) node = pod->second;
    const std::string host = node.empty() ? std::string("login-01") : node;
    const std::string unit = UnitOf(rel, src);
    const bool kernel = unit == "kernel";
    const std::string identifier = unit.substr(0, unit.find('['));
    const std::string pid =
        kernel ? "" : unit.substr(unit.find('[') + 1, unit.size() - unit.find('[') - 2);
    // What every entry of the file shares, written once: the cursor's stream, the fields after
    // the time up to the message.
    const std::string cursor = "{\"__CURSOR\":\"s=" + Opaque(src, rel, 8) + ";i=";
    std::string fields = "\",\"_TRANSPORT\":\"";
    fields += kernel ? "kernel" : "stdout";
    fields += "\",\"SYSLOG_IDENTIFIER\":\"" + identifier + "\",";
    if (!kernel) fields += "\"_PID\":\"" + pid + "\",";
    fields += "\"_HOSTNAME\":\"" + host + "\",\"MESSAGE\":";
    std::string outtext;
    outtext.reserve(text.size() * 2 + lines.size() * 200);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::string_view message = lines[i];
      TimeNs t = times[i];
      if (const std::size_t k = message.find(" kernel: ");
          kernel && k != std::string_view::npos && k < 80) {
        if (const auto own = LineTime(message, src.year)) t = *own;
        message.remove_prefix(k + 9);
      }
      outtext += cursor;
      outtext += std::to_string(i + 1);
      outtext += "\",\"__REALTIME_TIMESTAMP\":\"";
      outtext += std::to_string(t / 1000);
      outtext += fields;
      outtext += '"';
      if (AppendJournalEscaped(message, &outtext)) {
        outtext += '"';
      } else {
        outtext.pop_back();  // no UTF-8: an array of its bytes
        outtext += '[';
        for (std::size_t b = 0; b < message.size(); ++b) {
          if (b > 0) outtext += ',';
          outtext += std::to_string(static_cast<unsigned char>(message[b]));
        }
        outtext += ']';
      }
      outtext += "}\n";
    }
    return outtext;
  });
}

// A terminal copy: quoted with "> " or indented 4 spaces, error lines in red and one line in
// eight dimmed (ANSI), hard-wrapped at a width of 80-200 columns (quote included); per file.
Status RelayPaste(const Source& src, const fs::path& out, Relaid*) {
  return EachLog(src, out, [&src](std::string_view text, const std::string& rel) {
    Rng rng(Hash(rel, src.seed));
    const size_t width = 80 + rng.Below(121);
    const std::string quote = rng.Below(2) == 0 ? "> " : "    ";
    const size_t room = width - quote.size();
    std::string outtext;
    outtext.reserve(text.size() * 11 / 10);
    const auto lines = Lines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string_view line = lines[i];
      const char* colour = ErrorLike(line) ? "\x1b[1;31m" : (rng.Below(8) == 0 ? "\x1b[2m" : "");
      size_t pos = 0;
      do {
        size_t len = std::min(room, line.size() - pos);
        while (len > 0 && pos + len < line.size() &&
               (static_cast<unsigned char>(line[pos + len]) & 0xC0) == 0x80) {
          --len;  // never cut a UTF-8 character
        }
        if (len == 0) len = std::min(room, line.size() - pos);
        outtext += quote;
        if (pos == 0) outtext += colour;
        outtext.append(line.substr(pos, len));
        pos += len;
        if (pos >= line.size() && *colour != '\0') outtext += "\x1b[0m";
        outtext.push_back('\n');
      } while (pos < line.size());
    }
    return outtext;
  });
}

}  // namespace denpex::cli::shapes
