// Finding: what a strategy concludes, before it is written as a v1::Diagnosis. Cited lines
// are event indexes here; the report quotes them from the files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/reason.h"
#include "denpex/common/time.h"
#include "denpex/v1/diagnosis.pb.h"
#include "parse/parse_log.h"
#include "parse/strings.h"

namespace denpex::engine {

struct Citation {
  std::int32_t event = -1;
  v1::EvidenceRole role = v1::EVIDENCE_ROLE_UNSPECIFIED;
};

// A cited line no event stands for (the last line of a log that stops).
struct LineCitation {
  std::uint32_t file = 0;
  LineSpan span;
  v1::EvidenceRole role = v1::EVIDENCE_ROLE_UNSPECIFIED;
};

struct CandidateScore {
  std::int32_t rank = -1;
  std::int32_t node = -1;
  double score = 0;
};

struct ErrorGroupSummary {
  StrId signature = kNoStr;
  std::string family;
  std::int32_t count = 0;
  std::int32_t ranks = 0;
  TimeNs first_time = 0;
  bool timed = false;  // some line of the group carries a time
};

struct CascadeSummary {
  std::vector<std::int32_t> secondary_ranks;  // sorted
  std::int32_t secondary_errors = 0;
  std::int32_t grouped_errors = 0;
  std::vector<ErrorGroupSummary> groups;  // most frequent first
};

// One end of a bad network link (analyze/network.h).
struct LinkEnd {
  std::int32_t rank = -1;
  std::int32_t node = -1;
  std::string hca;            // `mlx5_3`; empty when nothing names it
  std::int32_t event = -1;    // its first status-12 WARN
};

struct LinkFinding {
  LinkEnd a, b;               // a: the end that failed first when `ordered`
  bool ordered = false;
};

struct Action {
  std::string action;
  std::string target;
  Reason text;
};

struct Finding {
  std::string strategy;
  v1::Verdict verdict = v1::VERDICT_UNSPECIFIED;
  Reason reason;  // rendered by report/reasons.cc
  std::int32_t rank = -1;
  std::int32_t node = -1;
  std::int32_t local_rank = -1;
  std::string gpu;  // the initiator's GPU (`dddd:bb:dd`) when the evidence names it
  std::optional<TimeNs> time;
  v1::FailureClass failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
  double confidence = 0;
  v1::Owner owner = v1::OWNER_UNSPECIFIED;
  std::vector<CandidateScore> candidates;  // most likely first
  CascadeSummary cascade;
  std::vector<Citation> evidence;  // initiating lines first
  std::vector<LineCitation> lines;  // cited after `evidence`
  std::vector<Action> recovery;
  std::optional<LinkFinding> link;  // a single bad link between two nodes
  std::int32_t ranks_seen = 0;
  std::int32_t world_size = 0;
  // What the analysis found wrong or missing in the input (a world size the logs state beyond
  // the ranks heard from, statements that contradict each other): input.problems.
  std::vector<std::string> problems;
  // Each node's clock offset as the wait analysis aligned it (ClockOffsets::by_node; empty when
  // the answer came before it): what a report subtracts to show times on one clock.
  std::vector<TimeNs> clock_offsets;
};

// What a finding commits to: who failed (rank, node, local rank; -1: not named), the class, the
// owner and how sure. Every detector's finding opens with it (Commit).
struct Answer {
  std::int32_t rank = -1;
  std::int32_t node = -1;
  std::int32_t local_rank = -1;
  v1::FailureClass failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
  v1::Owner owner = v1::OWNER_UNSPECIFIED;
  double confidence = 0;
  v1::Verdict verdict = v1::VERDICT_DIAGNOSED;
};

inline void Commit(const Answer& a, Finding* f) {
  f->verdict = a.verdict;
  f->rank = a.rank;
  f->node = a.node;
  f->local_rank = a.local_rank;
  f->failure_class = a.failure_class;
  f->owner = a.owner;
  f->confidence = a.confidence;
}

}  // namespace denpex::engine
