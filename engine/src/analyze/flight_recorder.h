// What the Flight Recorder dumps say (the flight_recorder family's events, docs/log_formats.md
// §28): per process group, the collective its dumped members wait in (the newest one enqueued
// and not completed) and the members it waits on. A member whose dump shows it never enqueued
// that collective while it waits in no collective of its own stopped on the host (its own code,
// a data loader, a lock: most watchdog timeouts); one whose entry at that sequence number is
// another collective (op, sizes or dtypes) than every other member's issued a mismatched or
// skipped one; a member that wrote no dump while every member that did waits on it is the one
// to look at when it is the only such rank (the rank that died first often wrote none). A
// member that never enqueued the collective but waits in another group's is a victim: the wait
// goes on through that group.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "incident/incident.h"

namespace denpex::engine {

struct FrBlocker {
  enum class Why : std::uint8_t { kNeverJoined, kOddCollective, kNoDump };
  std::int32_t rank = -1;
  Why why = Why::kNeverJoined;
  // kNeverJoined: its kFrGroup event (its last enqueued and completed sequence numbers);
  // kOddCollective: its own entry at the stuck sequence number; kNoDump: -1.
  std::int32_t own = -1;
  std::int32_t waiter = -1;  // a waiting member's entry (kFrCollective) at the stuck seq
  std::int32_t waiting = 0;  // the group's dumped members waiting in that collective
};

struct FrAnalysis {
  std::int32_t dumps = 0;             // ranks that wrote a dump
  std::vector<std::int32_t> waiting;  // ranks whose dump shows an operation not completed (p2p too)
  // Where the waits end, in rank order: the members that never joined (and wait in nothing);
  // when none, the members that issued another collective than their peers; when none, the one
  // member without a dump that every stuck group waits on (never several: that is ambiguous).
  std::vector<FrBlocker> roots;

  const FrBlocker* RootOf(std::int32_t rank) const {
    for (const FrBlocker& b : roots) {
      if (b.rank == rank) return &b;
    }
    return nullptr;
  }
};

FrAnalysis AnalyzeFlightRecorder(const Incident& inc);

// The ranks of a dump's `pg_config` `ranks` string ("[0, 1, 2]"); empty when it lists none or
// does not parse ("all", a cut string).
std::vector<std::int32_t> ParseFrRanks(std::string_view text);

// What the dumps alone decide, as the public analysers do (the baselines, analyze/baselines.cc).
// `fr_trace`: torch's analyser with --allow-incomplete-ranks: process groups in the dumps' order,
// collectives by sequence number, the first one not every dumped member joined (or whose members
// disagree on op, sizes or dtypes): its missing (or odd) ranks; ranks without a dump are not
// expected. `wavefront`: NVRx's attribution: the groups with missing ranks (a member whose
// largest enqueued sequence number is below the group's), the head one the group whose stuck
// collective was created first: its missing ranks. Both return the event to cite.
struct FrVerdict {
  std::vector<std::int32_t> ranks;  // sorted
  std::int32_t event = -1;
};
FrVerdict FrTraceVerdict(const Incident& inc);
FrVerdict FrWavefrontVerdict(const Incident& inc);

}  // namespace denpex::engine
