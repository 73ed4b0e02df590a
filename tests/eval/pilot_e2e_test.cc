// The pilot report end to end through the binary: a fixture corpus made in the test from
// real corpus incidents (`denpex freeze`, then `denpex freeze --confirm` with a postmortem:
// operator minutes, the checkpoint the team resumed from, what the process first blamed), one
// entry left a draft and one broken; `denpex eval --corpus` scores the rest and its Markdown,
// JSON and HTML reports carry the pilot section.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "denpex/proto/json_io.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"
#include "support/denpex_cmd.h"
#include "support/temp_dir.h"

namespace denpex::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

v1::Truth Expected(const fs::path& entry) {
  v1::Truth t;
  EXPECT_TRUE(proto::ReadJsonFile(entry / "expected.json", &t).ok()) << entry;
  return t;
}

// Freezes a corpus incident into `entry`; its draft names the engine's answer.
v1::Truth Freeze(const std::string& corpus_incident, const fs::path& entry) {
  const CmdResult r =
      Denpex("freeze " + std::string(DENPEX_SOURCE_DIR) + "/corpora/" + corpus_incident +
             "/incident --out " + entry.string() + " --threads 2");
  EXPECT_EQ(r.code, 0) << r.output;
  return Expected(entry);
}

// An owner other than `o`.
std::string OtherOwner(v1::Owner o) {
  return o == v1::OWNER_APPLICATION ? "OWNER_HOST" : "OWNER_APPLICATION";
}

// A checkpoint file of the entry other than the one the draft resumes from: "NAME@STEP".
std::string OtherCheckpoint(const fs::path& entry, const v1::Truth& draft) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(entry / "incident" / "checkpoints")) {
    const std::string n = e.path().filename().string();
    if (n.ends_with(".pt") && n != draft.checkpoint().path()) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  EXPECT_FALSE(names.empty());
  if (names.empty()) return "none";
  const std::string& n = names[0];  // step_<N>.pt
  return n + "@" + n.substr(5, n.size() - 8);
}

const v1::PilotDimension& Dimension(const v1::PilotSummary& s, const std::string& name) {
  for (const auto& d : s.dimensions()) {
    if (d.dimension() == name) return d;
  }
  static const v1::PilotDimension kNone;
  ADD_FAILURE() << "no dimension " << name;
  return kNone;
}

const v1::PilotDecision* Decision(const v1::PilotIncident& p, const std::string& what) {
  for (const auto& d : p.decisions()) {
    if (d.decision() == what) return &d;
  }
  return nullptr;
}

TEST(PilotReport, ScoresEachDimensionBesideTheRecordedProcess) {
  const TempDir dir("denpex-pilot-e2e-");
  const fs::path corpus = dir.path() / "pilot";
  fs::create_directories(corpus);

  // a: the engine's owner and checkpoint confirmed; the process blamed another owner and
  // resumed from an older checkpoint; 50 operator minutes.
  const fs::path a = corpus / "a-oom";
  const v1::Truth draft_a = Freeze("real/tr_oom_rank3", a);
  ASSERT_EQ(draft_a.checkpoint().decision(), v1::CHECKPOINT_DECISION_RESUME);
  const std::string older = OtherCheckpoint(a, draft_a);
  CmdResult r =
      Denpex("freeze --confirm " + a.string() + " --operator-minutes 50 --process-owner " +
             OtherOwner(draft_a.owner()) + " --resumed-from " + older +
             " --recovery 'resubmitted from the older checkpoint'");
  ASSERT_EQ(r.code, 0) << r.output;

  // b: a person corrected the owner to what the process blamed; the team resumed from the
  // engine's checkpoint; 20 operator minutes.
  const fs::path b = corpus / "b-sigkill";
  const v1::Truth draft_b = Freeze("real/tr_sigkill_rank3", b);
  ASSERT_EQ(draft_b.checkpoint().decision(), v1::CHECKPOINT_DECISION_RESUME);
  const std::string other_b = OtherOwner(draft_b.owner());
  r = Denpex("freeze --confirm " + b.string() + " --owner " + other_b + " --process-owner " +
             other_b + " --operator-minutes 20 --resumed-from " + draft_b.checkpoint().path() +
             "@" + std::to_string(draft_b.checkpoint().step()));
  ASSERT_EQ(r.code, 0) << r.output;

  // c: left a draft. d: broken (expected.json is not JSON).
  Freeze("real/tr_exit_rank1", corpus / "c-draft");
  fs::create_directories(corpus / "d-broken" / "incident");
  std::ofstream(corpus / "d-broken" / "expected.json") << "{ not json\n";

  const fs::path md = dir.path() / "r.md", json = dir.path() / "r.json",
                 html = dir.path() / "r.html";
  r = Denpex("eval --corpus " + corpus.string() + " --strategies engine --jobs 1 --markdown " +
             md.string() + " --json " + json.string() + " --html " + html.string());
  EXPECT_EQ(r.code, 3) << r.output;  // the broken entry is a failure, the rest is scored
  EXPECT_THAT(r.output, HasSubstr("corpus:pilot/d-broken: skipped"));
  EXPECT_THAT(r.output, HasSubstr("c-draft: expected.json is a draft"));
  EXPECT_THAT(r.output, HasSubstr("operator time:"));

  v1::EvalReport report;
  ASSERT_TRUE(proto::ReadJsonFile(json, &report).ok());
  ASSERT_GE(report.run().failures_size(), 1);
  EXPECT_THAT(report.run().failures(0), HasSubstr("corpus:pilot/d-broken: skipped"));
  EXPECT_THAT(report.run().failures(0), HasSubstr("expected.json"));
  ASSERT_EQ(report.incidents_size(), 3);
  EXPECT_FALSE(report.incidents(0).expected_draft());
  EXPECT_TRUE(report.incidents(2).expected_draft());
  ASSERT_GE(report.aggregates_size(), 1);
  EXPECT_EQ(report.aggregates(0).group(), "overall");
  EXPECT_EQ(report.aggregates(0).drafts(), 1);

  const v1::PilotSummary& s = report.pilot();
  EXPECT_EQ(s.entries(), 3);
  EXPECT_EQ(s.drafts(), 1);
  EXPECT_EQ(s.postmortems(), 2);
  ASSERT_EQ(report.pilot_incidents_size(), 3);
  const v1::PilotIncident& pa = report.pilot_incidents(0);
  const v1::PilotIncident& pb = report.pilot_incidents(1);
  const v1::PilotIncident& pc = report.pilot_incidents(2);
  EXPECT_EQ(pa.incident(), "a-oom");
  EXPECT_TRUE(pc.draft());
  EXPECT_FALSE(pc.has_operator_minutes());
  EXPECT_FALSE(pc.has_recovery_verified());

  // a: the engine right on owner and checkpoint, the process wrong on both; minutes saved.
  EXPECT_TRUE(pa.owner_correct());
  EXPECT_FALSE(pa.process_owner_correct());
  EXPECT_FALSE(pa.recovery_verified());
  EXPECT_FALSE(pa.process_checkpoint_correct());
  EXPECT_DOUBLE_EQ(pa.operator_minutes(), 50);
  EXPECT_GT(pa.engine_minutes(), 0);
  EXPECT_DOUBLE_EQ(pa.minutes_saved(), 50 - pa.engine_minutes());
  ASSERT_NE(Decision(pa, "owner"), nullptr);
  EXPECT_TRUE(Decision(pa, "owner")->differed());
  EXPECT_EQ(Decision(pa, "owner")->right(), v1::PILOT_RIGHT_ENGINE);
  ASSERT_NE(Decision(pa, "checkpoint"), nullptr);
  EXPECT_TRUE(Decision(pa, "checkpoint")->differed());
  EXPECT_EQ(Decision(pa, "checkpoint")->right(), v1::PILOT_RIGHT_ENGINE);

  // b: the process right on the owner, so no minutes saved; the same checkpoint, verified.
  EXPECT_FALSE(pb.owner_correct());
  EXPECT_TRUE(pb.process_owner_correct());
  EXPECT_DOUBLE_EQ(pb.minutes_saved(), 0);
  EXPECT_TRUE(pb.recovery_verified());
  ASSERT_NE(Decision(pb, "owner"), nullptr);
  EXPECT_EQ(Decision(pb, "owner")->right(), v1::PILOT_RIGHT_PROCESS);
  ASSERT_NE(Decision(pb, "checkpoint"), nullptr);
  EXPECT_FALSE(Decision(pb, "checkpoint")->differed());
  EXPECT_EQ(Decision(pb, "checkpoint")->right(), v1::PILOT_RIGHT_BOTH);

  const auto& time = Dimension(s, "operator time");
  EXPECT_EQ(time.recorded(), 2);
  EXPECT_EQ(time.engine_right(), 1);
  EXPECT_DOUBLE_EQ(time.operator_minutes(), 70);
  EXPECT_DOUBLE_EQ(time.minutes_saved(), pa.minutes_saved());
  EXPECT_EQ(Dimension(s, "verified recovery").recorded(), 2);
  EXPECT_EQ(Dimension(s, "verified recovery").engine_right(), 1);
  EXPECT_EQ(Dimension(s, "causal owner").recorded(), 3);
  EXPECT_EQ(Dimension(s, "causal owner").process_recorded(), 2);
  EXPECT_EQ(Dimension(s, "causal owner").process_right(), 1);
  EXPECT_EQ(s.decisions_compared(), 4);
  EXPECT_EQ(s.decisions_differed(), 3);
  EXPECT_EQ(s.engine_right(), 2);
  EXPECT_EQ(s.process_right(), 1);

  const std::string m = Read(md);
  EXPECT_THAT(m, HasSubstr("## Pilot"));
  EXPECT_THAT(m, HasSubstr("| operator time | 2 of 3 entries |"));
  EXPECT_THAT(m, HasSubstr("| verified recovery | 2 of 3 entries |"));
  EXPECT_THAT(m, HasSubstr("| corpus:pilot/c-draft (draft) |"));
  EXPECT_THAT(m, HasSubstr("| corpus:pilot | c-draft (draft) |"));  // the incidents table
  EXPECT_THAT(m, HasSubstr("**Drafts:** 1 of 3 incidents"));
  EXPECT_THAT(m, HasSubstr("d-broken: skipped"));
  EXPECT_THAT(m, HasSubstr("### Decisions: engine and process"));

  // The HTML page, structurally: the pilot section's tables with a row per dimension and per
  // entry, every table and row closed.
  const std::string h = Read(html);
  EXPECT_EQ(Count(h, "<h2 id=\"pilot\">Pilot</h2>"), 1);
  const auto table_rows = [&h](const std::string& cls) {
    const size_t at = h.find("<table class=\"" + cls + "\">");
    if (at == std::string::npos) return -1;
    return Count(h.substr(at, h.find("</table>", at) - at), "<tr>");
  };
  EXPECT_EQ(table_rows("pilot-dimensions"), 1 + 5);
  EXPECT_EQ(table_rows("pilot-incidents"), 1 + 3);
  EXPECT_EQ(table_rows("pilot-decisions"), 1 + 4);
  EXPECT_LT(h.find("id=\"pilot\""), h.find("<h2>Overall</h2>"));
  EXPECT_EQ(Count(h, "<table"), Count(h, "</table>"));
  EXPECT_EQ(Count(h, "<tr"), Count(h, "</tr>"));
  EXPECT_THAT(h, HasSubstr("c-draft <span class=\"draft\">(draft)</span>"));
  EXPECT_THAT(h, HasSubstr("<b>Drafts:</b> 1 of 3 incidents"));
}

}  // namespace
}  // namespace denpex::testing
