// `denpex freeze`'s name map: each original a team's incidents held and its replacement
// (denpex.v1.NameMap, docs/freeze.md). Replacements keep the shapes the engine reads: a host
// keeps its digits and punctuation and only its letter runs change (so `gpu-[0001-0004]` still
// expands and a hostlist still names the hosts it named), an IPv4 address stays an address of the
// same length, a user name, a secret, a UUID and a Slurm job id keep their lengths. New
// originals are given replacements in their sorted order, so one freeze keeps the order of names.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_set>

#include "denpex/common/status.h"
#include "denpex/v1/freeze.pb.h"

namespace denpex::freeze {

class NameMap {
 public:
  // An empty map when `path` does not exist; its error when it cannot be read or parsed.
  static Result<NameMap> Load(const std::filesystem::path& path);
  // Written readable by its owner only (the map is the key to the anonymisation).
  Status Save(const std::filesystem::path& path) const;

  // Get-or-allocate. Each returns the replacement of one original.
  std::string Host(std::string_view host);              // letter runs mapped; digits, `-`, `.` kept
  std::string HostlistPrefix(std::string_view prefix);  // `gpu-` of `gpu-[0001-0004]`
  std::string PathSegment(std::string_view segment);    // a project folder: letter runs mapped
  std::string Ipv4(std::string_view address);
  std::string Ipv6(std::string_view address);
  std::string User(std::string_view user);
  std::string Email(std::string_view email);
  std::string Secret(std::string_view token);
  std::string Job(std::string_view id);
  std::string Uuid(std::string_view uuid);

  // Originals about to be mapped: no replacement may equal one of them.
  void Avoid(std::string_view original) { avoid_.emplace(original); }

  const v1::NameMap& proto() const { return map_; }

 private:
  std::string Word(std::string_view word);   // one letter run; same length and case pattern
  std::string Words(std::string_view text);  // every letter run of two or more in `text`
  std::string Fresh(const google::protobuf::Map<std::string, std::string>& used,
                    std::string_view original,
                    std::string (*make)(std::string_view original, std::uint64_t n));

  v1::NameMap map_;
  std::unordered_set<std::string> taken_;  // every original and replacement of the map
  std::unordered_set<std::string> avoid_;
};

// Whether `s` is a dotted IPv4 address (four decimal octets 0-255, no leading zeros beyond "0").
bool IsIpv4(std::string_view s);
// Addresses left as they are: loopback, unspecified, broadcast, the documentation ranges
// (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) and the range replacements come from.
bool KeepIpv4(std::string_view s);
// Whether `s` is an IPv6 address in text form that is worth mapping (not `::1`, `::`, and
// holding `::` or eight groups, so times such as `16:25:34` never pass).
bool IsIpv6(std::string_view s);

}  // namespace denpex::freeze
