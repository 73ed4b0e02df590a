#include "freeze/name_map.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <functional>
#include <system_error>

#include "denpex/proto/json_io.h"

namespace denpex::freeze {
namespace {

using StringMap = google::protobuf::Map<std::string, std::string>;

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The n-th word of `length` letters, from `xa...` on (a word of letters that reads as made up).
std::string MakeWord(std::string_view original, std::uint64_t n) {
  const std::size_t length = original.size();
  std::string out(length, 'x');
  // The last (at most 13) letters count in base 26 from 'x' followed by 'a's.
  const std::size_t digits = std::min<std::size_t>(length, 13);
  std::uint64_t space = 1;
  for (std::size_t i = 0; i < digits; ++i) space *= 26;
  std::uint64_t v = (space / 26 * 23 + n) % space;
  for (std::size_t i = 0; i < digits; ++i) {
    out[length - 1 - i] = static_cast<char>('a' + v % 26);
    v /= 26;
  }
  return out;
}

// The digits of `original` (a Slurm job id) counted from 10..0 of as many digits.
std::string MakeJob(std::string_view original, std::uint64_t n) {
  const std::size_t length = original.size();
  std::uint64_t low = 1;
  for (std::size_t i = 1; i < length && i < 18; ++i) low *= 10;
  std::string out = std::to_string(low + n);
  if (out.size() > length) out = out.substr(out.size() - length);
  while (out.size() < length) out.insert(out.begin(), '1');
  return out;
}

// A user name of the same length: `u` then letters.
std::string MakeUser(std::string_view original, std::uint64_t n) {
  std::string w = MakeWord(original, n);
  if (!w.empty()) w[0] = 'u';
  return w;
}

// A token of the same length with its well-known prefix kept and `x`s then a counter after it.
std::string MakeSecret(std::string_view original, std::uint64_t n) {
  static constexpr std::array<std::string_view, 9> kPrefixes = {
      "hf_", "ghp_", "gho_", "ghs_", "github_pat_", "sk-", "xoxb-", "xoxp-", "AKIA"};
  std::string out(original);
  std::size_t keep = 0;
  for (std::string_view p : kPrefixes) {
    if (original.substr(0, p.size()) == p) keep = p.size();
  }
  std::string count = std::to_string(n);
  for (std::size_t i = keep; i < out.size(); ++i) out[i] = 'x';
  for (std::size_t i = 0; i < count.size() && i + keep < out.size(); ++i)
    out[out.size() - count.size() + i] = count[i];
  return out;
}

std::string MakeUuid(std::string_view /*original*/, std::uint64_t n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(n));
  return buf;
}

std::string MakeIpv6(std::string_view /*original*/, std::uint64_t n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "2001:db8::%llx:%llx", static_cast<unsigned long long>(n >> 16),
                static_cast<unsigned long long>(n & 0xffff));
  return buf;
}

// The octets' digit counts of a dotted address.
std::array<int, 4> OctetDigits(std::string_view s) {
  std::array<int, 4> d{};
  int i = 0;
  for (char c : s) {
    if (c == '.') {
      ++i;
    } else if (i < 4) {
      ++d[i];
    }
  }
  return d;
}

// The n-th address whose octets have `digits` digits, the first octets fixed to `fixed`.
std::string AddressOf(const std::vector<int>& fixed, const std::vector<int>& digits,
                      std::uint64_t n) {
  std::string out;
  for (int f : fixed) out += std::to_string(f) + ".";
  // Each free octet counts within its digit range, the last one fastest (mixed radix).
  std::vector<int> value(digits.size());
  for (std::size_t i = digits.size(); i-- > 0;) {
    const int lo = digits[i] == 1 ? 0 : digits[i] == 2 ? 10 : 100;
    const int hi = digits[i] == 1 ? 9 : digits[i] == 2 ? 99 : 255;
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo + 1);
    value[i] = lo + static_cast<int>(n % span);
    n /= span;
  }
  for (std::size_t i = 0; i < value.size(); ++i)
    out += std::to_string(value[i]) + (i + 1 < value.size() ? "." : "");
  return out;
}

// An address of the same length where a private range has one: 10.x.y.z with the remaining
// digits spread over three octets, else 192.168.x.y; else 10.0.x.y (a length changes).
std::string MakeIpv4(std::string_view original, std::uint64_t n) {
  const std::array<int, 4> d = OctetDigits(original);
  const int total = d[0] + d[1] + d[2] + d[3];
  if (total == 12) return AddressOf({192, 168}, {3, 3}, n + 257);
  int rest = total - 2;
  if (rest >= 3 && rest <= 9) {
    std::vector<int> free = {d[1], d[2], d[3]};
    int have = free[0] + free[1] + free[2];
    for (std::size_t i = 0; have != rest; i = (i + 1) % 3) {
      if (have < rest && free[i] < 3) ++free[i], ++have;
      if (have > rest && free[i] > 1) --free[i], --have;
    }
    return AddressOf({10}, free, n + 1);
  }
  return AddressOf({10, 0}, {3, 3}, n + 257);
}

}  // namespace

bool IsIpv4(std::string_view s) {
  if (s.size() < 7 || s.size() > 15) return false;
  int octets = 0, digits = 0, value = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      if (digits == 0 || value > 255 || (digits > 1 && s[i - digits] == '0')) return false;
      ++octets, digits = 0, value = 0;
    } else if (IsDigit(s[i]) && digits < 3) {
      ++digits, value = value * 10 + (s[i] - '0');
    } else {
      return false;
    }
  }
  return octets == 4;
}

bool KeepIpv4(std::string_view s) {
  const auto starts = [&](std::string_view p) { return s.substr(0, p.size()) == p; };
  return starts("127.") || s == "0.0.0.0" || s == "255.255.255.255" || starts("192.0.2.") ||
         starts("198.51.100.") || starts("203.0.113.");
}

bool IsIpv6(std::string_view s) {
  if (s.size() < 3 || s.size() > 45) return false;
  const std::size_t colons = static_cast<std::size_t>(std::count(s.begin(), s.end(), ':'));
  if (s.find("::") == std::string_view::npos && colons != 7) return false;
  if (s == "::" || s == "::1") return false;
  if (s.substr(0, 9) == "2001:db8:") return false;  // documentation range: already anonymous
  const std::string text(s);
  in6_addr a{};
  return inet_pton(AF_INET6, text.c_str(), &a) == 1;
}

Result<NameMap> NameMap::Load(const std::filesystem::path& path) {
  NameMap m;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    m.map_.set_version(1);
    return m;
  }
  DENPEX_RETURN_IF_ERROR(proto::ReadJsonFile(path, &m.map_));
  if (m.map_.version() != 1) {
    return Status::InvalidInput(path.string() + ": name map version " +
                                std::to_string(m.map_.version()) +
                                " is not 1; was it written by a newer denpex?");
  }
  return m;
}

Status NameMap::Save(const std::filesystem::path& path) const {
  DENPEX_RETURN_IF_ERROR(proto::WriteJsonFile(path, map_));
  ::chmod(path.c_str(), S_IRUSR | S_IWUSR);
  return Status::Ok();
}

std::string NameMap::Fresh(const StringMap& used, std::string_view original,
                           std::string (*make)(std::string_view, std::uint64_t)) {
  if (taken_.empty()) {
    for (const StringMap* m : {&map_.words(), &map_.ipv4(), &map_.ipv6(), &map_.users(),
                               &map_.secrets(), &map_.jobs(), &map_.uuids()}) {
      for (const auto& [k, v] : *m) taken_.insert(v), taken_.insert(k);
    }
  }
  // Replacements never equal another replacement nor an original (so mapping back is one way).
  for (std::uint64_t n = static_cast<std::uint64_t>(used.size());; ++n) {
    std::string r = make(original, n);
    if (r == original || used.count(r) > 0 || taken_.count(r) > 0 || avoid_.count(r) > 0) continue;
    taken_.insert(r);
    taken_.insert(std::string(original));
    return r;
  }
}

std::string NameMap::Word(std::string_view word) {
  if (word.size() < 2) return std::string(word);
  const std::string key = Lower(word);
  auto& words = *map_.mutable_words();
  auto it = words.find(key);
  if (it == words.end()) it = words.insert({key, Fresh(words, key, MakeWord)}).first;
  std::string out = it->second;
  for (std::size_t i = 0; i < out.size() && i < word.size(); ++i) {
    if (word[i] >= 'A' && word[i] <= 'Z')
      out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
  }
  return out;
}

std::string NameMap::Words(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!IsLetter(text[i])) {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && IsLetter(text[j])) ++j;
    out += Word(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string NameMap::Host(std::string_view host) {
  auto& hosts = *map_.mutable_hosts();
  if (auto it = hosts.find(std::string(host)); it != hosts.end()) return it->second;
  std::string r = Words(host);
  hosts[std::string(host)] = r;
  return r;
}

std::string NameMap::HostlistPrefix(std::string_view prefix) {
  auto& prefixes = *map_.mutable_hostlist_prefixes();
  if (auto it = prefixes.find(std::string(prefix)); it != prefixes.end()) return it->second;
  std::string r = Words(prefix);
  prefixes[std::string(prefix)] = r;
  return r;
}

std::string NameMap::PathSegment(std::string_view segment) {
  auto& paths = *map_.mutable_paths();
  if (auto it = paths.find(std::string(segment)); it != paths.end()) return it->second;
  std::string r = Words(segment);
  paths[std::string(segment)] = r;
  return r;
}

std::string NameMap::Email(std::string_view email) {
  auto& emails = *map_.mutable_emails();
  if (auto it = emails.find(std::string(email)); it != emails.end()) return it->second;
  // Every letter run but the top-level domain's.
  const std::size_t tld = email.rfind('.');
  std::string r = Words(email.substr(0, tld));
  if (tld != std::string_view::npos) r += email.substr(tld);
  emails[std::string(email)] = r;
  return r;
}

namespace {
std::string GetOr(StringMap* m, std::string_view original,
                  const std::function<std::string()>& make) {
  auto it = m->find(std::string(original));
  if (it == m->end()) it = m->insert({std::string(original), make()}).first;
  return it->second;
}
}  // namespace

std::string NameMap::Ipv4(std::string_view address) {
  auto* m = map_.mutable_ipv4();
  return GetOr(m, address, [&] {
    std::string r = Fresh(*m, address, MakeIpv4);
    return r;
  });
}

std::string NameMap::Ipv6(std::string_view address) {
  auto* m = map_.mutable_ipv6();
  return GetOr(m, address, [&] { return Fresh(*m, address, MakeIpv6); });
}

std::string NameMap::User(std::string_view user) {
  auto* m = map_.mutable_users();
  return GetOr(m, user, [&] { return Fresh(*m, user, MakeUser); });
}

std::string NameMap::Secret(std::string_view token) {
  auto* m = map_.mutable_secrets();
  return GetOr(m, token, [&] { return Fresh(*m, token, MakeSecret); });
}

std::string NameMap::Job(std::string_view id) {
  auto* m = map_.mutable_jobs();
  return GetOr(m, id, [&] { return Fresh(*m, id, MakeJob); });
}

std::string NameMap::Uuid(std::string_view uuid) {
  auto* m = map_.mutable_uuids();
  const std::string key = Lower(uuid);
  return GetOr(m, key, [&] { return Fresh(*m, key, MakeUuid); });
}

}  // namespace denpex::freeze
