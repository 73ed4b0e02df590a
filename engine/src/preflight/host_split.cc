#include "preflight/host_split.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace denpex::engine::preflight {
namespace {

constexpr std::size_t kMaxHosts = 65536;

// Calls f(line, number) for each line (without its '\n' or '\r').
template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  std::int32_t number = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, ++number);
    at = end + 1;
  }
}

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// Programs whose syslog lines read `name: message` like pdsh's `host: line`.
bool SyslogTag(std::string_view word) {
  static constexpr std::string_view kTags[] = {
      "kernel",     "systemd",   "sshd",    "sudo",          "slurmd",
      "slurmstepd", "slurmctld", "dcgm",    "nv-hostengine", "nvidia-persistenced",
      "containerd", "kubelet",   "dockerd", "NVRM"};
  return std::find(std::begin(kTags), std::end(kTags), word) != std::end(kTags);
}

// `host: rest` -> host, with `rest` the line after `: ` (pdsh prints `host: ` for an empty
// line, and `host:` when it trims); empty when the line has no such prefix.
std::string_view PdshHost(std::string_view line, std::string_view* rest) {
  std::size_t i = 0;
  while (i < line.size() && HostChar(line[i])) ++i;
  if (i == 0 || i >= line.size() || line[i] != ':') return {};
  if (i + 1 < line.size() && line[i + 1] != ' ') return {};
  const std::string_view host = line.substr(0, i);
  if (!std::any_of(host.begin(), host.end(),
                   [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }))
    return {};
  if (SyslogTag(host)) return {};
  *rest = i + 2 <= line.size() ? line.substr(i + 2) : std::string_view();
  return host;
}

bool Dashes(std::string_view line) {
  return line.size() >= 5 && line.find_first_not_of('-') == std::string_view::npos;
}

void Add(HostText& h, std::string_view line, std::int32_t number) {
  h.text.append(line);
  h.text.push_back('\n');
  h.lines.push_back(number);
}

std::vector<HostText> Pdsh(std::string_view text) {
  std::int64_t lines = 0, prefixed = 0;
  std::map<std::string, HostText, std::less<>> hosts;
  ForEachLine(text, [&](std::string_view line, std::int32_t number) {
    if (line.empty()) return;
    ++lines;
    std::string_view rest;
    const std::string_view host = PdshHost(line, &rest);
    if (host.empty()) return;
    ++prefixed;
    auto it = hosts.find(host);
    if (it == hosts.end())
      it = hosts.emplace(std::string(host), HostText{.host = std::string(host)}).first;
    Add(it->second, rest, number);
  });
  if (lines < 2 || prefixed * 10 < lines * 9) return {};
  std::vector<HostText> out;
  for (auto& [name, h] : hosts) out.push_back(std::move(h));
  return out;
}

// dshbak -c / clush -b: `----` / `gpu-[0001-0003] (3)` / `----`, then the group's output.
std::vector<HostText> Dshbak(std::string_view text) {
  std::vector<std::string_view> all;
  ForEachLine(text, [&](std::string_view line, std::int32_t) { all.push_back(line); });
  std::map<std::string, HostText> hosts;
  std::vector<std::string> current;
  bool any = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (Dashes(all[i]) && i + 2 < all.size() && Dashes(all[i + 2])) {
      std::string_view list = all[i + 1];
      if (const std::size_t paren = list.find(" ("); paren != std::string_view::npos)
        list = list.substr(0, paren);
      std::vector<std::string> named = ExpandHostList(list);
      if (!named.empty()) {
        current = std::move(named);
        any = true;
        i += 2;
        continue;
      }
    }
    for (const std::string& h : current) {
      HostText& t = hosts[h];
      t.host = h;
      Add(t, all[i], static_cast<std::int32_t>(i + 1));
    }
  }
  if (!any) return {};
  std::vector<HostText> out;
  for (auto& [name, h] : hosts) out.push_back(std::move(h));
  return out;
}

bool Digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::vector<std::string> ExpandHostList(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    // One name: up to the next ',' outside brackets.
    std::size_t end = 0;
    int depth = 0;
    while (end < list.size() && (list[end] != ',' || depth > 0)) {
      depth += list[end] == '[' ? 1 : list[end] == ']' ? -1 : 0;
      if (depth < 0 || depth > 1) return {};
      ++end;
    }
    if (depth != 0) return {};
    const std::string_view name = list.substr(0, end);
    list = end < list.size() ? list.substr(end + 1) : std::string_view();
    const std::size_t open = name.find('[');
    if (open == std::string_view::npos) {
      if (name.empty() || !std::all_of(name.begin(), name.end(), HostChar)) return {};
      out.emplace_back(name);
      continue;
    }
    const std::size_t close = name.find(']', open);
    const std::string_view prefix = name.substr(0, open), suffix = name.substr(close + 1);
    if (!std::all_of(prefix.begin(), prefix.end(), HostChar) ||
        !std::all_of(suffix.begin(), suffix.end(), HostChar))
      return {};
    std::string_view ranges = name.substr(open + 1, close - open - 1);
    while (!ranges.empty()) {
      const std::size_t comma = ranges.find(',');
      const std::string_view range = ranges.substr(0, comma);
      ranges = comma == std::string_view::npos ? std::string_view() : ranges.substr(comma + 1);
      const std::size_t dash = range.find('-');
      const std::string_view lo = range.substr(0, dash),
                             hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
      if (!Digits(lo) || !Digits(hi)) return {};
      std::uint64_t a = 0, b = 0;
      std::from_chars(lo.data(), lo.data() + lo.size(), a);
      std::from_chars(hi.data(), hi.data() + hi.size(), b);
      if (b < a || b - a >= kMaxHosts || out.size() + (b - a) >= kMaxHosts) return {};
      for (std::uint64_t v = a; v <= b; ++v) {
        std::string digits = std::to_string(v);
        if (digits.size() < lo.size())
          digits.insert(0, lo.size() - digits.size(), '0');  // the padding kept
        out.push_back(std::string(prefix) + digits + std::string(suffix));
      }
    }
  }
  return out;
}

std::vector<HostText> SplitByHost(std::string_view text) {
  if (std::vector<HostText> pdsh = Pdsh(text); !pdsh.empty()) return pdsh;
  return Dshbak(text);
}

}  // namespace denpex::engine::preflight
