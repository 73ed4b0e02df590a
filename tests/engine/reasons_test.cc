// Reason templates (analyze/reason.h) and their words (report/reasons.cc).
#include <gtest/gtest.h>

#include <cstddef>
#include <regex>
#include <string>

#include "report/reasons.h"

namespace denpex::engine {
namespace {

TEST(Reasons, FillsEveryBlankOfEveryPartInOrder) {
  Reason r = Say(ReasonId::kNodeLostAllRanks, {{"node", "gpu-0003"}, {"ranks", "8"}});
  r.Add(ReasonId::kSlurmReportsNodeFailed, {{"where", "slurmctld.log:41"}});
  EXPECT_EQ(RenderReason(r),
            "Node gpu-0003 was lost: all 8 of its ranks went silent together with no error and no "
            "exit of their own, and "
            "Slurm reports the node failed (slurmctld.log:41).");
}

TEST(Reasons, FillsABlankEachTimeItAppears) {
  EXPECT_EQ(
      RenderReason(Say(ReasonId::kRendezvousNeverJoined, {{"agents", "3"}, {"node", "node-7"}})),
      "The c10d rendezvous never completed: 3 agents waited out the join timeout and raised "
      "RendezvousTimeoutError "
      "(victims), while node-7's agent never joined and reported nothing; no worker started. "
      "node-7 never joined.");
}

TEST(Reasons, KeepsVerbatimWordsAndArgumentsAsWritten) {
  Reason r = "Rank 3 raised {not a blank}";  // words not yet a template
  r.Add(ReasonId::kCitedInParentheses, {{"where", "rank_3.log:{7}"}});
  r += ".";
  EXPECT_EQ(RenderReason(r), "Rank 3 raised {not a blank} (rank_3.log:{7}).");
}

TEST(Reasons, RendersWordsGivenAsAnArgumentInPlace) {
  const Reason code = Say(ReasonId::kXidCode, {{"code", "79"}});
  EXPECT_EQ(RenderReason(Say(ReasonId::kCodeAt, {{"code", code}, {"where", "kern.log:12"}})),
            "Xid 79 at kern.log:12");
  EXPECT_EQ(RenderReason(Say(ReasonId::kCodeAt, {{"code", Reason()}, {"where", "kern.log:12"}})),
            " at kern.log:12");
}

TEST(Reasons, LeavesABlankWithNoArgumentAsWritten) {
  EXPECT_EQ(RenderReason(Say(ReasonId::kAtTime)), " at {time}");
}

TEST(Reasons, ReplaceSwapsTheFirstPartsTemplate) {
  Reason r = Say(ReasonId::kSlurmReportsNodeFailed, {{"where", "events.txt:2"}});
  r.Replace(ReasonId::kSlurmReportsNodeFailed, ReasonId::kKubernetesReportsNodeFailed);
  EXPECT_EQ(RenderReason(r), "Kubernetes reports the node failed (events.txt:2).");
}

TEST(Reasons, EveryTemplateHasWordsAndOnlyNamedBlanks) {
  const std::regex braces(R"(\{[^}]*\}|\{|\})");
  const std::regex blank(R"(\{[a-z_]+\})");
  for (std::size_t i = 0; i < static_cast<std::size_t>(ReasonId::kCount); ++i) {
    const std::string words(ReasonTemplate(static_cast<ReasonId>(i)));
    EXPECT_FALSE(words.empty()) << "template " << i;
    for (auto it = std::sregex_iterator(words.begin(), words.end(), braces);
         it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(std::regex_match(it->str(), blank))
          << "template " << i << ": " << it->str() << " in " << words;
    }
  }
}

}  // namespace
}  // namespace denpex::engine
