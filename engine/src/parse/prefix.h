// Stacked line prefixes (docs/log_formats.md), outermost first: a paste's
// quoting or indentation and a line number, a container or collector timestamp (with CRI's
// `stdout F ` stream and tag), a journal's `host unit[pid]: `, `srun --label`'s task id, a
// pdsh/DeepSpeed host, OpenMPI's `[job,rank]<stdout>:`, a TorchX/NeMo role, torchrun's
// `[default<L>]:`, Ray's `(Actor pid=N) `, and torch's `[rank<G>]:`. Stripping them leaves the
// line as its program printed it, and says whose line it is.
#pragma once

#include <cstdint>
#include <string_view>

#include "denpex/common/time.h"
#include "parse/scan.h"

namespace denpex::engine {

class ReadBehind;  // parse/parse_log.h

struct LineOrigin {
  std::int32_t rank = -1;        // global rank: `[rank13]:`, OpenMPI `[1,13]<stdout>:`
  std::int32_t task = -1;        // srun `13: ` (a rank, or a node when srun starts torchrun)
  std::int32_t local_rank = -1;  // torchrun `[default3]:`, TorchX `[3]:`
  std::string_view host;         // pdsh / DeepSpeed `host: `
  TimeNs time = 0;               // container or collector stamp, when `timed`
  bool timed = false;
  // The stamp has no fraction of a second (`journalctl -o short-iso`, a collector's minute):
  // a time the line's own header states is finer, and wins.
  bool coarse = false;
  // The stamp is a collector's (a container runtime's with its stream tag, a journal's with its
  // host and unit, nanoseconds in UTC as containerd and kubectl write them, a collector's minute)
  // and no stamp of the program's own follows it: when the line was read, not when it was written.
  bool collected = false;
  // A syslog stamp `Nov 29 16:25:31 ` has no year (Clock::kNoYear): the line's time when its
  // own header states none.
  TimeNs yearless_time = 0;
  bool yearless = false;
  // A journal's `host unit[pid]: `: the machine the journal was read on (kept apart from `host`:
  // a login node's journal relays every srun task's lines, so it names no rank's node) and the
  // process (one stream of lines).
  std::string_view journal_host;
  std::int64_t pid = 0;
  bool journal = false;
  // CRI (containerd, CRI-O) stream and tag: `stdout F `; a `P` line is the head of a line the
  // runtime split, continued by the stream's next lines up to an `F` one (file_parser.cc joins
  // them).
  char stream = 0;               // 'o' stdout, 'e' stderr, 0 none
  bool partial = false;
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
  // Journal lines whose unit prints no `[pid]` (`host sshd: `) are taken only when most of the
  // file's first lines are journal lines (`journalctl -o short`, rsyslog).
  bool journal = false;
  // Some of the file's first lines are a container runtime's (`<stamp> stdout P `): its `P`
  // pieces are joined (file_parser.cc); other files never pay for looking.
  bool cri = false;
  // A terminal copy's quoting (`> `, `> > `) or indentation common to the file's lines, peeled
  // before any other prefix (a line that starts with less of it loses what it has).
  char quote[15] = {};
  std::uint8_t quote_size = 0;
  // A line number every line opens with: `[80746] ` (a log viewer), `80746:` (`grep -n`),
  // `  80746\t` (`cat -n`). 0: none.
  char numbered = 0;  // '[', ':' or '\t'
  // The file was hard-wrapped at this many bytes (a terminal copy): a line of exactly this
  // length is continued by the next when that one starts no line of its own (file_parser.cc).
  std::uint32_t wrap_width = 0;
  // Most lines open with a pod's name and one container's name (`stern`'s default output: every
  // pod a query names in one stream, `llama-worker-3 pytorch text`): that container's name; the
  // pod's and its are peeled from a line that opens with them. Empty: none.
  // Most lines open with a container's name padded to the widest and a bar (`docker compose
  // logs`: `trainer-1  | text`): peeled from a line that opens with one.
  bool compose = false;
  char pod_container[32] = {};
  std::uint8_t pod_container_size = 0;
  std::string_view Quote() const { return {quote, quote_size}; }
  std::string_view PodContainer() const { return {pod_container, pod_container_size}; }
};

// Strips every prefix at the start of `*line`; returns how many were stripped (the policy's
// quote and line number are peeled first and not counted).
int StripPrefixes(std::string_view* line, const PrefixPolicy& policy, LineOrigin* out);

// Peels the policy's quote and line number (what StripPrefixes peels first).
void PeelPaste(std::string_view* line, const PrefixPolicy& policy);

// The stream a line of a file that relays several containers' lines is in, by the collector's tag
// it opens with (after the policy's quote and line number): `kubectl logs --prefix`'s
// `[pod/<pod>/<container>] ` (`<pod>/<container>`), stern's `<pod> <container> ` of the policy's
// container (`<pod>`), `docker compose logs`' `trainer-1  | ` (`trainer-1`), the label set after a
// stamp of Loki's `logcli query` (`{pod="llama-worker-3"}`); empty when it opens with none
// (ingest/streams.h splits such a file into a stream per tag).
std::string_view CollectorStream(std::string_view line, const PrefixPolicy& policy);

// The value of label `name` in a Prometheus label set (`{app="x", pod="y"}`: a Loki stream's,
// `{gpu="3",UUID="GPU-..."}`: a DCGM sample's), escapes left in; empty when the set names none.
std::string_view LabelValue(std::string_view set, std::string_view name);

// A line that starts a line of its own (a prefix or a header it opens with, a traceback or an
// exception line, or the opening of `before`, the line it would continue, digits aside), not a
// piece of that line that a terminal hard-wrapped.
bool StartsOwnLine(std::string_view line, const PrefixPolicy& policy, std::string_view before = {});

// An MPI daemon's `[<host>:<pid>] ` before its own lines (Open MPI, PRRTE: `[gpu-0001:123] MCW
// rank 5 bound to ...`), its host; a bracketed address (`[10.64.0.2]:29500`) has its colon outside.
bool DaemonTag(Scanner* s, std::string_view* host);

// The columns a line takes on a terminal: its bytes less its ANSI control sequences.
std::size_t VisibleSize(std::string_view line);
// `line` without its ANSI control sequences (`\x1b[31m`, `\x1b[0m`, `\x1b[K`), in `*store`.
std::string_view WithoutEscapes(std::string_view line, std::string* store);

// The policy for a file, from its first lines. `file`, where `text` is a mapped file's: the
// bytes its long probe reads (the first OpenMPI tag, up to 32 MiB in) are read through it, not
// through the mapping (parse/parse_log.h, ReadBehind::Copy).
PrefixPolicy SniffPrefixes(std::string_view text, const ReadBehind* file = nullptr);

// A CRI log line `<RFC 3339 nano> stdout F <text>` / `... stderr P <text>`: its stream ('o',
// 'e'), whether it is partial, and where its text starts. Read apart from StripPrefixes:
// file_parser.cc joins a `P` line with the stream's next lines.
bool CriLine(std::string_view line, char* stream, bool* partial, std::size_t* content);

// `[rank<G>]:` alone (torch ≥ 2.2).
Match StripRankPrefix(std::string_view* line, std::int32_t* rank);

}  // namespace denpex::engine
