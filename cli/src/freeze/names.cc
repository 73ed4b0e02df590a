#include "freeze/names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

#include "denpex/common/base64.h"
#include "freeze/name_map.h"
#include "freeze/shapes.h"

namespace denpex::freeze {
namespace {

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !IsHex(s[i])) return false;
  }
  return true;
}

// A user name worth hiding: not a system account, not a placeholder.
bool IsUserName(std::string_view u) {
  static constexpr std::array<std::string_view, 16> kSystem = {
      "root", "nobody", "slurm", "munge", "daemon",  "admin",  "user",   "users",
      "home", "shared", "null",  "none",  "unknown", "ubuntu", "jovyan", "runner"};
  if (u.size() < 3 || u.size() > 32 || !IsLetter(u[0]) || u.back() == '.') return false;
  if (!std::all_of(u.begin(), u.end(),
                   [](char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-'; }))
    return false;
  const std::string l = Lower(u);
  return std::find(kSystem.begin(), kSystem.end(), l) == kSystem.end();
}

// A folder name that names nothing of a team's (tools, caches, the usual layout words).
bool IsGenericFolder(std::string_view s) {
  static constexpr std::array<std::string_view, 24> kGeneric = {
      "bin",  "lib",  "lib64",   "src",        "code",        "tmp",   "opt",    "usr",
      "venv", "envs", "conda",   "miniconda3", "anaconda3",   "local", "share",  "data",
      "logs", "log",  "outputs", "output",     "checkpoints", "ckpt",  "models", "datasets"};
  if (s.empty() || s[0] == '.' || s.size() < 3) return true;
  const std::string l = Lower(s);
  return std::find(kGeneric.begin(), kGeneric.end(), l) != kGeneric.end();
}

// A token that looks like a credential by its well-known prefix.
bool LooksLikeSecret(std::string_view t) {
  static constexpr std::array<std::pair<std::string_view, std::size_t>, 9> kPrefixes = {
      {{"hf_", 30},
       {"ghp_", 30},
       {"gho_", 30},
       {"ghs_", 30},
       {"github_pat_", 30},
       {"sk-", 20},
       {"xoxb-", 20},
       {"xoxp-", 20},
       {"AKIA", 16}}};
  for (const auto& [p, min] : kPrefixes) {
    if (t.substr(0, p.size()) == p && t.size() >= min) return true;
  }
  return false;
}

bool IsSecretKey(std::string_view key) {
  const std::string k = Lower(key);
  for (std::string_view s :
       {"token", "secret", "password", "passwd", "api_key", "apikey", "access_key", "auth_key"}) {
    if (k.size() >= s.size() && k.compare(k.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

// Keys whose value is a host name or a hostlist.
bool IsHostKey(std::string_view key) {
  static constexpr std::array<std::string_view, 17> kKeys = {"nodelist",
                                                             "nodes",
                                                             "nodename",
                                                             "node",
                                                             "host",
                                                             "hostname",
                                                             "slurmd_nodename",
                                                             "slurm_nodelist",
                                                             "slurm_job_nodelist",
                                                             "slurm_step_nodelist",
                                                             "master_addr",
                                                             "batchhost",
                                                             "rdzv_endpoint",
                                                             "slurm_topology_addr",
                                                             "exechost",
                                                             "node_name",
                                                             "allocnode"};
  const std::string k = Lower(key);
  return std::find(kKeys.begin(), kKeys.end(), k) != kKeys.end();
}

// Keys whose value names the team's job: Slurm's `JobName=`, Kubernetes labels and objects.
bool IsJobNameKey(std::string_view key) {
  const std::string k = Lower(key);
  return k == "jobname" || k == "job_name" || k == "job-name" || k == "jobset-name" ||
         k == "slurm_job_name" || k == "namespace" || k == "replicatedjob-name";
}

// A job name worth hiding: not a word every job has.
bool IsJobName(std::string_view n) {
  static constexpr std::array<std::string_view, 16> kGeneric = {
      "train", "training", "test",    "bash",   "python", "python3",  "job",         "run",
      "main",  "default",  "workers", "worker", "master", "launcher", "interactive", "batch"};
  if (n.size() < 4 || !IsLetter(n[0])) return false;
  if (!std::all_of(n.begin(), n.end(),
                   [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; }))
    return false;
  const std::string l = Lower(n);
  return std::find(kGeneric.begin(), kGeneric.end(), l) == kGeneric.end();
}

// A job or pod name and each of its leading parts (`llama-workers-0-3-x7k2p`: `llama-workers-0-3`,
// the pod's host name, `llama`, the job's), so every form of it maps the same way.
void AddJobName(Found* found, std::string_view name) {
  found->job_names.emplace(name);
  for (std::size_t dash = name.rfind('-'); dash != std::string_view::npos && dash > 0;
       dash = name.rfind('-', dash - 1)) {
    if (IsJobName(name.substr(0, dash))) found->job_names.emplace(name.substr(0, dash));
  }
}

bool IsUserKey(std::string_view key) {
  const std::string k = Lower(key);
  return k == "user" || k == "userid" || k == "username" || k == "logname" ||
         k == "slurm_job_user" || k == "owner";
}

bool IsJobKey(std::string_view key) {
  const std::string k = Lower(key);
  return k == "jobid" || k == "job_id" || k == "slurm_job_id" || k == "slurm_jobid" ||
         k == "slurm_array_job_id" || k == "stepid" || k == "job";
}

void AddHostToken(std::string_view t, Found* found) {
  t = TrimSeparators(t);
  if (t.empty()) return;
  if (IsIpv4(t)) {
    if (!KeepIpv4(t)) found->ipv4.emplace(t);
    return;
  }
  if (IsIpv6(t)) {
    found->ipv6.emplace(t);
    return;
  }
  // A host name has a digit, a dash or a dot (`gr064`, `node-a`), as the engine reads them: a
  // bare word (`worker`, `initializing`) is too likely to be text.
  if (t.size() > 253 || !IsLetter(t[0]) ||
      t.find_first_of("0123456789-.") == std::string_view::npos)
    return;
  // and a word of two letters or more (`W0302`, a glog level and date, is no host)
  bool word = false;
  for (std::size_t k = 0; k + 1 < t.size(); ++k) word |= IsLetter(t[k]) && IsLetter(t[k + 1]);
  if (!word) return;
  if (!std::all_of(t.begin(), t.end(), [](char c) { return IsAlnum(c) || c == '-' || c == '.'; }))
    return;
  const std::string l = Lower(t);
  // A rank's label (`[rank6]:`, `[default0]:`) is never a host.
  for (std::string_view label : {"rank", "default", "task", "local_rank"}) {
    if (l.size() > label.size() && l.compare(0, label.size(), label) == 0 &&
        AllDigits(std::string_view(l).substr(label.size())))
      return;
  }
  if (l == "localhost" || l == "none" || l == "null" || l == "unknown" || l == "n/a" ||
      l == "(null)")
    return;
  found->hosts.emplace(t);
}

// `value` of a host key: one name, a comma list, or hostlists.
void AddHostValue(std::string_view value, Found* found) {
  if (value.find('[') != std::string_view::npos) {
    const std::vector<std::string> hosts = ExpandHostlist(value, 1 << 16);
    if (!hosts.empty()) {
      AddHost(value, found);
      return;
    }
  }
  std::size_t i = 0;
  while (i < value.size()) {
    std::size_t j = value.find(',', i);
    if (j == std::string_view::npos) j = value.size();
    std::string_view one = value.substr(i, j - i);
    // `host:port` of an endpoint.
    if (const std::size_t colon = one.rfind(':'); colon != std::string_view::npos &&
                                                  AllDigits(one.substr(colon + 1)) &&
                                                  one.find(':') == colon) {
      one = one.substr(0, colon);
    }
    AddHostToken(one, found);
    i = j + 1;
  }
}

// `KEY=VALUE` and `KEY: VALUE` / `KEY : VALUE` pairs of a line.
void DiscoverPairs(std::string_view line, Found* found) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c != '=' && c != ':') continue;
    // the key: the word before (spaces allowed before `:` as torchrun's table pads them)
    std::size_t k = i;
    if (c == ':') {
      while (k > 0 && line[k - 1] == ' ') --k;
    }
    std::size_t w = k;
    while (w > 0 && (IsAlnum(line[w - 1]) || line[w - 1] == '_' || line[w - 1] == '-')) --w;
    std::string_view key = line.substr(w, k - w);
    while (!key.empty() && key[0] == '-') key.remove_prefix(1);  // `--master_addr=`
    if (key.empty()) continue;
    std::size_t v = i + 1;
    if (c == ':') {
      if (v < line.size() && line[v] == ':') continue;  // `::`
      while (v < line.size() && line[v] == ' ') ++v;
    }
    std::size_t e = v;
    while (e < line.size() && line[e] != ' ' && line[e] != '\t' && line[e] != ';' &&
           line[e] != '"' && line[e] != '\'' && line[e] != ')' && line[e] != '}' &&
           !(line[e] == ',' && (e + 1 >= line.size() || line[e + 1] == ' '))) {
      ++e;
    }
    std::string_view value = line.substr(v, e - v);
    while (!value.empty() && (value.back() == '.' || value.back() == ',')) value.remove_suffix(1);
    if (value.empty()) continue;
    if (IsHostKey(key) && (c == '=' || c == ':')) {
      // `AllocNode:Sid=host:1234`
      if (Lower(key) == "allocnode") continue;
      AddHostValue(value, found);
    } else if (c == '=' && Lower(key) == "sid") {
      if (const std::size_t colon = value.find(':'); colon != std::string_view::npos)
        AddHostToken(value.substr(0, colon), found);
    } else if (c == '=' && IsUserKey(key)) {
      // `UserId=alice(1000)`
      const std::string_view u = value.substr(0, value.find('('));
      if (IsUserName(u)) found->users.emplace(u);
    } else if (IsJobNameKey(key) || (c == ':' && key == "Name" && w == 0)) {
      // `JobName=llama`, `jobset.sigs.k8s.io/jobset-name=llama`, kubectl describe's `Name:  <pod>`
      if (IsJobName(value)) AddJobName(found, value);
    } else if (c == '=' && IsJobKey(key)) {
      std::size_t d = RunEnd(value, 0, IsDigit);
      if (d >= 3) found->jobs.emplace(value.substr(0, d));
    } else if (c == '=' && IsSecretKey(key) && value.size() >= 8 &&
               std::any_of(value.begin(), value.end(), IsLetter) &&
               std::any_of(value.begin(), value.end(), IsDigit)) {
      found->secrets.emplace(value);
    }
  }
}

// The host a line's own prefix names: NCCL's `host:pid:tid `, a syslog / journal stamp's host.
void DiscoverPrefixHost(std::string_view line, Found* found) {
  // NCCL: `gpu-0001:1234:1234 [0] NCCL ...`, possibly after a `[rank]:` or `N: ` label.
  for (std::size_t start = 0; start < line.size() && start < 48; ++start) {
    if (start > 0 && line[start - 1] != ' ' && line[start - 1] != ']') continue;
    if (!IsLetter(line[start])) continue;
    const std::size_t h =
        RunEnd(line, start, [](char c) { return IsAlnum(c) || c == '-' || c == '.' || c == '_'; });
    if (h >= line.size() || line[h] != ':') continue;
    const std::size_t p = RunEnd(line, h + 1, IsDigit);
    if (p == h + 1 || p >= line.size() || line[p] != ':') continue;
    const std::size_t t = RunEnd(line, p + 1, IsDigit);
    if (t == p + 1 || t >= line.size() || line[t] != ' ') continue;
    AddHostToken(line.substr(start, h - start), found);
    break;
  }
  // syslog: `Nov 29 16:25:31[.frac] host prog[pid]:`; ISO: `2026-11-29T16:25:31[.frac][zone] host
  // prog`.
  std::size_t after = std::string_view::npos;
  if (line.size() > 16 && IsLetter(line[0]) && line[3] == ' ' && line[9] == ':' &&
      line[12] == ':') {
    after = 15;
  } else if (line.size() > 20 && IsDigit(line[0]) && line[4] == '-' && line[10] == 'T' &&
             line[13] == ':') {
    after = 19;
  }
  if (after == std::string_view::npos) return;
  while (after < line.size() && line[after] != ' ') ++after;
  const std::size_t h = after + 1;
  const std::size_t e = RunEnd(line, h, [](char c) { return IsAlnum(c) || c == '-' || c == '.'; });
  if (e >= line.size() || line[e] != ' ' || e == h) return;
  // then `prog[pid]:` or `prog:`
  const std::size_t q = RunEnd(line, e + 1, [](char c) {
    return IsAlnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
  });
  if (q < line.size() && IsLetter(line[e + 1]) && (line[q] == '[' || line[q] == ':')) {
    const std::string_view host = line.substr(h, e - h);
    if (host.find_first_of("0123456789-.") != std::string_view::npos || q < line.size())
      AddHostToken(host, found);
  }
}

// `/home/<user>/<project>`, `/Users/<user>`, `/lustre/<project>`, ...
void DiscoverPaths(std::string_view line, Found* found) {
  static constexpr std::array<std::string_view, 18> kRoots = {
      "scratch", "lustre",   "gpfs",   "fsx",    "project",     "projects",
      "data",    "datasets", "shared", "nfs",    "checkpoints", "workspace",
      "efs",     "weka",     "vast",   "groups", "teams",       "home2"};
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    if (line[i] != '/' || (i > 0 && (IsAlnum(line[i - 1]) || line[i - 1] == '.'))) continue;
    const auto segment = [&](std::size_t at) {
      const std::size_t e =
          RunEnd(line, at, [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
      return line.substr(at, e - at);
    };
    const std::string_view root = segment(i + 1);
    if (root.empty()) continue;
    const std::size_t next = i + 1 + root.size();
    if (next >= line.size() || line[next] != '/') continue;
    const std::string_view second = segment(next + 1);
    if (second.empty()) continue;
    if (root == "home" || root == "Users") {
      if (IsUserName(second)) found->users.emplace(second);
      const std::size_t third_at = next + 1 + second.size();
      if (third_at < line.size() && line[third_at] == '/') {
        const std::string_view third = segment(third_at + 1);
        if (!IsGenericFolder(third) && third_at + 1 + third.size() < line.size() &&
            line[third_at + 1 + third.size()] == '/') {
          found->paths.emplace(third);
        }
      }
    } else if (std::find(kRoots.begin(), kRoots.end(), root) != kRoots.end()) {
      if (IsUserName(second) && !IsGenericFolder(second)) found->paths.emplace(second);
    }
  }
}

// Addresses, e-mail addresses, UUIDs, secrets and hostlists anywhere in a line.
void DiscoverTokens(std::string_view line, Found* found) {
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    const bool start = i == 0 || !(IsAlnum(line[i - 1]) || line[i - 1] == '.' ||
                                   line[i - 1] == '_' || line[i - 1] == '-');
    if (!start || !(IsAlnum(c) || c == ':')) {
      ++i;
      continue;
    }
    // IPv6 (hex and colons), before anything that stops at a colon.
    const std::size_t v6 = RunEnd(line, i, [](char x) { return IsHex(x) || x == ':'; });
    if (v6 > i + 2) {
      std::string_view cand = line.substr(i, v6 - i);
      if (cand.size() > 2 && cand.back() == ':' && cand[cand.size() - 2] != ':')
        cand.remove_suffix(1);
      // `::ffff:10.64.0.12` (an IPv4-mapped address) is left to its IPv4 part.
      if ((v6 >= line.size() || !(IsAlnum(line[v6]) || line[v6] == '.')) && IsIpv6(cand)) {
        found->ipv6.emplace(cand);
        i = v6;
        continue;
      }
    }
    if (c == ':') {
      ++i;
      continue;
    }
    // e-mail
    const std::size_t local = RunEnd(line, i, IsEmailLocal);
    if (local < line.size() && line[local] == '@') {
      const std::size_t dom =
          RunEnd(line, local + 1, [](char x) { return IsAlnum(x) || x == '.' || x == '-'; });
      std::string_view domain = TrimSeparators(line.substr(local + 1, dom - local - 1));
      const std::size_t dot = domain.rfind('.');
      if (dot != std::string_view::npos && domain.size() - dot >= 3 &&
          std::all_of(domain.begin() + static_cast<std::ptrdiff_t>(dot) + 1, domain.end(),
                      IsLetter)) {
        found->emails.emplace(line.substr(i, local + 1 + domain.size() - i));
        i = local + 1 + domain.size();
        continue;
      }
    }
    const std::size_t e = RunEnd(line, i, IsNameChar);
    std::string_view t = TrimSeparators(line.substr(i, e - i));
    if (const std::size_t d = RunEnd(line, i, IsDigit);
        d - i >= 3 && (d >= line.size() || !IsLetter(line[d])) && JobContext(line, i, d)) {
      found->jobs.emplace(line.substr(i, d - i));
    }
    if (IsIpv4(t) && !(e < line.size() && line[e] == '.')) {
      if (!KeepIpv4(t)) found->ipv4.emplace(t);
    } else if (IsUuid(t)) {
      found->uuids.emplace(Lower(t));
    } else if (LooksLikeSecret(t)) {
      found->secrets.emplace(t);
    } else if (e < line.size() && line[e] == '[' && IsLetter(line[i])) {
      // a hostlist: `gpu-[0001-0004]`, `sn[01-02],gpu-7`
      const std::size_t close = line.find(']', e);
      if (close != std::string_view::npos) {
        std::size_t end = close + 1;
        while (end < line.size() &&
               (IsNameChar(line[end]) || line[end] == ',' || line[end] == '[' || line[end] == ']'))
          ++end;
        const std::string_view list = TrimSeparators(line.substr(i, end - i));
        if (!ExpandHostlist(list, 1).empty() &&
            list.find_first_of("0123456789") != std::string_view::npos) {
          AddHost(list, found);
        }
      }
    } else if (t.substr(0, 6) == "slurm-" &&
               AllDigits(TrimSeparators(t.substr(6, t.find('.') - 6)))) {
      const std::string_view id = t.substr(6, RunEnd(t, 6, IsDigit) - 6);
      if (id.size() >= 3) found->jobs.emplace(id);
    }
    // the rest of the run: its later segments may be tokens of their own
    std::size_t next = i;
    while (next < e && !IsSeparator(line[next])) ++next;
    i = next == i ? i + 1 : next;
  }
  // Kubernetes objects: `pod/<name>`, `Successfully assigned <namespace>/<pod> to <node>`
  for (std::string_view kind : {"pod/", "pods/", "job/", "jobset/", "pytorchjob/", "node/"}) {
    for (std::size_t at = line.find(kind); at != std::string_view::npos;
         at = line.find(kind, at + 1)) {
      if (at > 0 && IsAlnum(line[at - 1])) continue;
      const std::size_t b = at + kind.size();
      const std::size_t e =
          RunEnd(line, b, [](char x) { return IsAlnum(x) || x == '-' || x == '.'; });
      const std::string_view name = TrimSeparators(line.substr(b, e - b));
      if (kind == "node/") {
        AddHostToken(name, found);
      } else if (IsJobName(name)) {
        AddJobName(found, name);
      }
    }
  }
  if (const std::size_t at = line.find("Successfully assigned "); at != std::string_view::npos) {
    const std::size_t b = at + 22;
    const std::size_t slash = line.find('/', b);
    const std::size_t to = line.find(" to ", b);
    if (slash != std::string_view::npos && to != std::string_view::npos && slash < to) {
      if (IsJobName(line.substr(b, slash - b))) AddJobName(found, line.substr(b, slash - b));
      const std::string_view pod = line.substr(slash + 1, to - slash - 1);
      if (IsJobName(pod)) AddJobName(found, pod);
      const std::size_t e =
          RunEnd(line, to + 4, [](char x) { return IsAlnum(x) || x == '-' || x == '.'; });
      AddHostToken(line.substr(to + 4, e - to - 4), found);
    }
  }
  // `Bearer <token>`
  for (std::size_t at = line.find("Bearer "); at != std::string_view::npos;
       at = line.find("Bearer ", at + 7)) {
    const std::size_t e = RunEnd(line, at + 7, [](char x) {
      return IsAlnum(x) || x == '-' || x == '_' || x == '.' || x == '=';
    });
    if (e - at - 7 >= 8) found->secrets.emplace(line.substr(at + 7, e - at - 7));
  }
}

}  // namespace

std::vector<std::string> ExpandHostlist(std::string_view text, std::size_t cap) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    // one element: prefix[ranges]suffix or a plain name
    std::size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != '[') ++j;
    const std::string prefix(text.substr(i, j - i));
    if (j < text.size() && text[j] == '[') {
      const std::size_t close = text.find(']', j);
      if (close == std::string_view::npos) return {};
      std::size_t s = close + 1;
      while (s < text.size() && text[s] != ',') ++s;
      if (s != close + 1 &&
          text.substr(close + 1, s - close - 1).find('[') != std::string_view::npos)
        return {};
      const std::string suffix(text.substr(close + 1, s - close - 1));
      const std::string_view ranges = text.substr(j + 1, close - j - 1);
      std::size_t r = 0;
      while (r <= ranges.size()) {
        std::size_t re = ranges.find(',', r);
        if (re == std::string_view::npos) re = ranges.size();
        const std::string_view one = ranges.substr(r, re - r);
        const std::size_t dash = one.find('-');
        const std::string_view lo = one.substr(0, dash);
        const std::string_view hi = dash == std::string_view::npos ? lo : one.substr(dash + 1);
        if (!AllDigits(lo) || !AllDigits(hi) || lo.size() > 9 || hi.size() > 9) return {};
        const long a = std::stol(std::string(lo)), b = std::stol(std::string(hi));
        if (b < a) return {};
        for (long n = a; n <= b; ++n) {
          std::string num = std::to_string(n);
          while (num.size() < lo.size()) num.insert(num.begin(), '0');
          out.push_back(prefix + num + suffix);
          if (out.size() >= cap) return out;
        }
        r = re + 1;
      }
      i = s + 1;
    } else {
      if (!prefix.empty()) out.push_back(prefix);
      if (out.size() >= cap) return out;
      i = j + 1;
    }
  }
  return out;
}

void AddHost(std::string_view name, Found* found) {
  if (name.find('[') == std::string_view::npos) {
    AddHostValue(name, found);
    return;
  }
  const std::vector<std::string> hosts = ExpandHostlist(name, 1 << 16);
  if (hosts.empty()) return;
  for (const std::string& h : hosts) AddHostToken(h, found);
  // each element's prefix before `[`
  for (std::size_t at = name.find('['); at != std::string_view::npos; at = name.find('[', at + 1)) {
    std::size_t p = at;
    while (p > 0 && (IsAlnum(name[p - 1]) || name[p - 1] == '-' || name[p - 1] == '.')) --p;
    if (p < at && IsLetter(name[p])) found->hostlist_prefixes.emplace(name.substr(p, at - p));
  }
}

void Discover(std::string_view text, Found* found) {
  for (std::size_t at = text.find(kWorldInfo); at != std::string_view::npos;
       at = text.find(kWorldInfo, at + 1)) {
    const std::size_t b = at + kWorldInfo.size();
    std::string json;
    if (Base64Decode(text.substr(b, RunEnd(text, b, IsBase64Char) - b), &json) && json[0] == '{') {
      // `{"gpu-0001": [0, 1], ...}`: each key a host
      for (std::size_t q = json.find('"'); q != std::string::npos; q = json.find('"', q + 1)) {
        const std::size_t close = json.find('"', q + 1);
        if (close == std::string::npos) break;
        AddHostToken(std::string_view(json).substr(q + 1, close - q - 1), found);
        q = close;
      }
    }
  }
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t e = text.find('\n', i);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(i, e - i);
    if (line.size() > 65536) line = line.substr(0, 65536);
    DiscoverPrefixHost(line, found);
    DiscoverPairs(line, found);
    DiscoverPaths(line, found);
    DiscoverTokens(line, found);
    i = e + 1;
  }
}

void Allocate(const Found& f, NameMap* map) {
  for (const auto* set : {&f.hosts, &f.hostlist_prefixes, &f.ipv4, &f.ipv6, &f.users, &f.emails,
                          &f.secrets, &f.jobs, &f.uuids, &f.paths, &f.job_names}) {
    for (const std::string& s : *set) map->Avoid(s);
  }
  // and the words of every name, so no word's replacement is another word that stays as it is
  for (const auto* set : {&f.hosts, &f.hostlist_prefixes, &f.emails, &f.paths, &f.job_names}) {
    for (const std::string& name : *set) {
      std::string word;
      for (const char c : name + ".") {
        if (std::isalpha(static_cast<unsigned char>(c))) {
          word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        } else if (!word.empty()) {
          map->Avoid(word), word.clear();
        }
      }
    }
  }
  for (const auto& s : f.hosts) map->Host(s);
  for (const auto& s : f.job_names) map->Host(s);
  for (const auto& s : f.hostlist_prefixes) map->HostlistPrefix(s);
  for (const auto& s : f.ipv4) map->Ipv4(s);
  for (const auto& s : f.ipv6) map->Ipv6(s);
  for (const auto& s : f.users) map->User(s);
  for (const auto& s : f.emails) map->Email(s);
  for (const auto& s : f.secrets) map->Secret(s);
  for (const auto& s : f.jobs) map->Job(s);
  for (const auto& s : f.uuids) map->Uuid(s);
  for (const auto& s : f.paths) map->PathSegment(s);
}

}  // namespace denpex::freeze
