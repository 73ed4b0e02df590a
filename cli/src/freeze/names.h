// What an incident's text names (host names, addresses, users, project paths, e-mail
// addresses, secrets, Slurm job ids, UUIDs), found by the line shapes that carry them, and the
// rewrite of a text through a name map, forwards (anonymise) or back (the originals again).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "denpex/v1/freeze.pb.h"

namespace denpex::freeze {

struct Found {
  std::set<std::string> hosts;              // as written: `gpu-0001`, `node-a.cluster.example`
  std::set<std::string> hostlist_prefixes;  // `gpu-` of `gpu-[0001-0004]`
  std::set<std::string> ipv4, ipv6, users, emails, secrets, jobs, uuids;
  std::set<std::string> paths;  // project folders: `llm-pretrain` of `/lustre/llm-pretrain/...`
  // The team's job, pod and namespace names (`JobName=`, `pod/<name>`, `jobset-name=`), kept
  // with the hosts in the map: letter runs mapped, replaced wherever they stand as a name.
  std::set<std::string> job_names;
};

// Adds what `text`'s lines name: NCCL's `host:pid:tid`, journal and syslog hosts, Slurm's
// `NodeList=`/`SLURM_NODELIST=` and every hostlist (`gpu-[0001-0004]`, expanded), torchrun's
// `host : NAME`, `MASTER_ADDR`, rendezvous endpoints, addresses, `/home/<user>` and `USER=`,
// project folders under the shared file systems' roots, e-mail addresses, UUIDs, tokens that
// look like secrets and the Slurm job ids of `JobId=`, `SLURM_JOB_ID=`, `slurm-<id>.out`.
void Discover(std::string_view text, Found* found);

// A host name as the engine names one (a node, a line's host, a hostlist): added to `found` as
// a host, an address or a hostlist with its hosts. Names that are no host's (`localhost`, a
// number) are left out.
void AddHost(std::string_view name, Found* found);

class NameMap;
// Every name found given its replacement in `map` (kept where the map already has one); no
// replacement is a name or a word of one that stays as it is (names.cc).
void Allocate(const Found& f, NameMap* map);

// Expands a Slurm hostlist (`gpu-[0001-0003,0007],cpu-1` -> gpu-0001 ... cpu-1), at most `cap`
// names; empty when `text` is not one.
std::vector<std::string> ExpandHostlist(std::string_view text, std::size_t cap);

class Rewriter {
 public:
  enum class Direction { kForward, kBack };
  Rewriter(const v1::NameMap& map, Direction direction);

  // `text` with every known name replaced where it stands as a name (a whole token, a hostlist's
  // prefix before `[`, a path segment after `/`, a job id where a job is named).
  std::string Apply(std::string_view text, std::size_t* replaced = nullptr) const;

  // `text` with every letter run that is a mapped word replaced (a host's stem where the rest of
  // the name was masked away, as in a diagnosis's error signatures: `srun: error: sn<n>: ...`).
  std::string ApplyWords(std::string_view text) const;

  // Every (original, replacement) pair of whole names, for a byte-level search in binaries.
  const std::unordered_map<std::string, std::string>& tokens() const { return tokens_; }

 private:
  bool Match(std::string_view text, std::size_t at, std::size_t end, std::string* out) const;

  std::unordered_map<std::string, std::string> tokens_;    // hosts, addresses, users, secrets, ...
  std::unordered_map<std::string, std::string> prefixes_;  // hostlist prefixes (before `[`)
  std::unordered_map<std::string, std::string> paths_;     // after `/`
  std::unordered_map<std::string, std::string> jobs_;      // where a job is named
  std::unordered_map<std::string, std::string> words_;     // letter runs (lower case)
  // Forwards, a number is a job id only where a job is named; back, every replacement id is
  // one (a diagnosis lists them: `JobId 1001, 1002`).
  bool jobs_need_context_ = true;
};

}  // namespace denpex::freeze
