// Resolution steps run once every file is merged (resolve.cc). Their passes over the events run
// in parallel in the calling task arena (LoadIncident's); their results never depend on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "incident/incident.h"
#include "ingest/walk.h"

namespace denpex::engine {

// Appends to the report's problems (at most a few dozen; the rest are counted).
void AddProblem(InputCounts* in, std::string problem);
// A note that loses nothing, listed after the problems (InputCounts::notes).
void AddNote(InputCounts* in, std::string note);
// The notes appended to the problems, the list's length kept; once the incident is loaded.
void FinishProblems(InputCounts* in);

// What the steps below look for among the events, found in one pass over them: each step read
// all of a 16k-rank job's ~150 k events (~20 MB) for the few of a kind, ~1 ms a pass. Taken
// once the events are final (after DropCopies); it holds nothing the steps change.
struct EventCensus {
  // Indices into Incident::events, in order.
  std::vector<std::size_t> pod_nodes;     // Kind::kPodNode naming a host
  std::vector<std::size_t> world_infos;   // Kind::kWorldInfo
  std::vector<std::size_t> ray_workers;   // Kind::kRayWorker
  std::vector<std::size_t> agent_ranks;   // Kind::kAgentRanks
  std::vector<std::size_t> local_ranked;  // a local rank, or a ChildFailedError table entry
  std::vector<std::uint8_t> named;        // per string id: how events name it (resolve.cc)
  std::optional<TimeNs> latest_full;      // the latest stamp with a full date
  bool yearless = false;                  // some stamp has no year
};
EventCensus TakeCensus(const Incident& inc);

// Node names from directories and the hosts lines name; each event's node.
void ResolveNodes(const std::vector<SourceFile>& sources, const EventCensus& census, Incident* inc);
// Ranks of a Ray worker's lines that carry only its `(RayTrainWorker pid=…)` prefix.
void ResolveRayWorkers(const EventCensus& census, Incident* inc);
// Whose file a file is when its name does not say (LogFile::own_rank): the one rank torch's
// store-based barrier lines in it name as the printer's own. Only where the collection is one
// file per process by its lines (two or more files name one rank each, each a different one) and
// the file is no console several processes share (an agent's, srun-labelled, `[default<L>]:`
// tagged, DeepSpeed's runner): a shared console's lone barrier line (the others logging only
// warnings) does not make the others' lines its rank's. Its lines without a rank of their own
// become that rank's, as a `rank_<R>.log`'s do.
void ResolveOwnRanks(Incident* inc);
// Ranks of lines that carry only a task id or a local rank.
void ResolveRanks(const EventCensus& census, Incident* inc);
// Ranks of NCCL lines (`host:pid:tid [dev] NCCL WARN ...`, `NCCL INFO comm ... rank R nranks N`)
// that no file or prefix gave one: their process is a rank when its agent's ChildFailedError
// table names its pid (`exitcode: -6 (pid: P)` under `rank: R`), or when its own communicator
// init of the job's largest communicator says `rank R` (the default process group's: its rank is
// the global rank). By (node, pid); a pid two ranks claim names neither.
void ResolveNcclPids(Incident* inc);
// Ranks of watchdog lines no file or prefix gave one (libstdc++'s `what():` quoting the abort, a
// line torn from its `[rank<G>]:` prefix) from their named process group: a group's uid is the
// same on every member (torch >= 2.3 prints it, `[PG ID 3 PG GUID 3(desc) Rank 5]`), and one
// member holds each rank within it, so (uid, group rank) names the process that another line with
// a global rank shows holding it. A pair two ranks claim names neither. A quoted timeout takes
// it only as a copy of a timeout that rank printed itself (the same SeqNum).
void ResolvePgRanks(Incident* inc);
// The year of year-less stamps, from the latest full date (none known: they stay year-less).
void ResolveYears(const EventCensus& census, Incident* inc);
// Problems that say how many lines were joined, cut short or untimed.
void NoteRecovery(Incident* inc);

}  // namespace denpex::engine
