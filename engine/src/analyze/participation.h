// The rows of the detector table (detectors.h) that answer from the ranks' scores and the
// wait-for graph (participation.cc): each true when it answered and filled `f`. Those after
// AnswerNoCandidate answer only when some rank scores.
#pragma once

#include "analyze/detectors.h"
#include "analyze/finding.h"

namespace denpex::engine {

// A straggler from the timers explains the incident: no rank failed, or the rank the others
// waited on is a slow one that then stalled.
bool AnswerStalledStraggler(const Analysis& a, Finding* f);
// No rank scores: INCONCLUSIVE, saying what the logs show (victims only, unranked timeouts).
bool AnswerNoCandidate(const Analysis& a, Finding* f);
// A rank no line places may lead the placed ones: INCONCLUSIVE.
bool AnswerUnplacedMayLead(const Analysis& a, Finding* f);
// A link failed under a process no line names, and the leaders only stopped: INCONCLUSIVE.
bool AnswerUnplacedLinkError(const Analysis& a, Finding* f);
// The leader only stopped, and few of the ranks that timed out waited on it: INCONCLUSIVE.
bool AnswerFewWaiters(const Analysis& a, Finding* f);
// The top score clearly leads: that rank.
bool AnswerLeader(const Analysis& a, Finding* f);
// Scores tie, and one of the tied is the only member missing from a collective: that rank.
bool AnswerSoleBlocker(const Analysis& a, Finding* f);
// Scores tie, and the collectives waiting on one of them started clearly first: that rank.
bool AnswerFirstToStall(const Analysis& a, Finding* f);
// Scores tie between exits of one node whose processes printed several errors no line ties to a
// rank: the node.
bool AnswerTiedExitsOfOneNode(const Analysis& a, Finding* f);
// Scores tie and nothing separates them: INCONCLUSIVE, naming the tied ranks (always answers
// when some rank scores).
bool AnswerUndecided(const Analysis& a, Finding* f);

}  // namespace denpex::engine
