// Stacked line prefixes (../shared/reference/log-formats.md §1), outermost first: a container
// or collector timestamp, `srun --label`'s task id, a pdsh/DeepSpeed host, OpenMPI's
// `[job,rank]<stdout>:`, a TorchX/NeMo role, torchrun's `[default<L>]:`, Ray's
// `(Actor pid=N) `, and torch's `[rank<G>]:`. Stripping them leaves the line as its program
// printed it, and says whose line it is.
#pragma once

#include <cstdint>
#include <string_view>

#include "denpex/common/time.h"
#include "parse/scan.h"

namespace denpex::engine {

struct LineOrigin {
  std::int32_t rank = -1;        // global rank: `[rank13]:`, OpenMPI `[1,13]<stdout>:`
  std::int32_t task = -1;        // srun `13: ` (a rank, or a node when srun starts torchrun)
  std::int32_t local_rank = -1;  // torchrun `[default3]:`, TorchX `[3]:`
  std::string_view host;         // pdsh / DeepSpeed `host: `
  TimeNs time = 0;               // container or collector stamp, when `timed`
  bool timed = false;
  bool malformed = false;        // a prefix whose shape broke (e.g. `[rankX]:`)
};

// Which ambiguous prefixes a file uses: a bare `word: ` opens many ordinary lines
// (`RuntimeError: ...`), so a host prefix is taken only when the file's first lines show it.
struct PrefixPolicy {
  bool hosts = false;
  // Most lines open with an srun `--label` task id: a combined srun output, where another
  // task's line can be spliced into a line (interleave.cc).
  bool srun_labels = false;
  // OpenMPI 5 (PRRTE) writes `[1,13]<stdout>: text`, with a space after the tag that Open MPI 4
  // does not write (there a leading space is the program's own, as in ` [date] iteration`).
  bool mpi_tag_space = false;
};

// Strips every prefix at the start of `*line`; returns how many were stripped.
int StripPrefixes(std::string_view* line, const PrefixPolicy& policy, LineOrigin* out);

// The policy for a file, from its first lines.
PrefixPolicy SniffPrefixes(std::string_view text);

// `[rank<G>]:` alone (torch ≥ 2.2).
Match StripRankPrefix(std::string_view* line, std::int32_t* rank);

}  // namespace denpex::engine
