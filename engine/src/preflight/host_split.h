// One file holding many nodes' outputs, as a fan-out tool leaves them: `pdsh -w ... nvidia-smi -q
// > all.txt` puts `host: ` before every line; `dshbak -c` and `clush -b` print each group of
// identical outputs once, under the list of its hosts between two dashed lines. Split back into
// one text per host, each line remembering where it was in the file, so that `denpex preflight
// --from` judges a pasted collection as it judges one folder per node (docs/preflight.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine::preflight {

struct HostText {
  std::string host;
  std::string text;                 // the host's lines, the prefix removed, '\n'-joined
  std::vector<std::int32_t> lines;  // the 1-based line in the file of each of them
};

// Empty when the text is neither form: fewer than nine in ten of its non-empty lines carry a
// `host: ` prefix (a host holds a letter: srun's `0: ` task labels are not hosts; and is not a
// syslog tag such as `kernel:`), and it has no dshbak header.
std::vector<HostText> SplitByHost(std::string_view text);

// `gpu-[0001-0003,0007],login1` -> gpu-0001, gpu-0002, gpu-0003, gpu-0007, login1 (Slurm's and
// pdsh's host list syntax, one bracket per name, zero padding kept); empty when malformed or
// when it would name more than 65,536 hosts.
std::vector<std::string> ExpandHostList(std::string_view list);

}  // namespace denpex::engine::preflight
