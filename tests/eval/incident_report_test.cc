// The incident report of `denpex diagnose --html/--markdown` (cli/src/report_incident*.cc), in
// process: hostile log text escaped, the size bounded whatever the cascade, the cited lines'
// context at a file's start and end, missing and outside files, the timeline's order and clocks.
#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <string>

#include "denpex/common/time.h"
#include "report.h"
#include "report_incident.h"
#include "support/temp_dir.h"

namespace denpex::cli {
namespace {

namespace fs = std::filesystem;
using denpex::testing::TempDir;

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

v1::Evidence Cite(const std::string& file, int line, const std::string& text) {
  v1::Evidence e;
  e.set_file(file);
  e.set_line(line);
  e.set_text(text);
  e.set_role(v1::EVIDENCE_ROLE_INITIATING);
  return e;
}

v1::Diagnosis Diagnosed(int rank) {
  v1::Diagnosis d;
  d.set_strategy("engine");
  d.set_verdict(v1::VERDICT_DIAGNOSED);
  d.set_reason("rank 3 exited first");
  d.set_owner(v1::OWNER_GPU_HARDWARE);
  d.mutable_initiator()->set_rank(rank);
  d.mutable_initiator()->set_node("node-a");
  d.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS);
  d.mutable_initiator()->set_confidence(0.9);
  d.mutable_input()->set_world_size(8);
  auto* p = d.mutable_recovery()->add_preconditions();
  p->set_action("drain_node");
  p->set_target("node-a");
  p->set_text("Drain node-a before the restart.");
  d.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_RESUME);
  d.mutable_checkpoint()->set_dir("checkpoints");
  d.mutable_checkpoint()->set_path("step_200");
  d.mutable_checkpoint()->set_step(200);
  d.mutable_checkpoint()->set_summary("step 300 was written after the fault");
  return d;
}

engine::RankFirstError RankAt(int rank, const std::string& node, TimeNs printed, TimeNs offset) {
  return {.rank = rank,
          .node = node,
          .printed = printed,
          .aligned = printed - offset,
          .what = "nccl_watchdog watchdog_timeout",
          .file = std::string("rank").append(std::to_string(rank)).append(".log"),
          .line = 7};
}

void ExpectHas(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << p;
}
void ExpectLacks(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) EXPECT_EQ(text.find(p), std::string::npos) << p;
}

// Markdown outside its fenced blocks (inside them text is verbatim, never markup).
std::string OutsideFences(const std::string& md) {
  std::string out, fence;
  size_t at = 0;
  while (at < md.size()) {
    size_t nl = md.find('\n', at);
    if (nl == std::string::npos) nl = md.size();
    const std::string line = md.substr(at, nl - at);
    const size_t ticks = line.find_first_not_of('`');
    if (fence.empty() && ticks >= 3 && ticks != std::string::npos) {
      fence = line.substr(0, ticks);
    } else if (!fence.empty() && line == fence) {
      fence.clear();
    } else if (fence.empty()) {
      out += line + "\n";
    }
    at = nl + 1;
  }
  return out;
}

constexpr TimeNs kT0 = 1'780'000'000LL * kNsPerSec;

TEST(IncidentReport, HostileLogTextIsEscapedInHtmlAndMarkdown) {
  TempDir tmp;
  const std::string hostile =
      "<script>alert(1)</script> \x1b[2J\x07 | x | [a](javascript:alert(2)) ```` *b* &amp;";
  Write(tmp.path() / "logs/rank3.log", "ok\n" + hostile + "\nafter\n");
  v1::Diagnosis d = Diagnosed(3);
  *d.add_evidence() = Cite("logs/rank3.log", 2, hostile);
  d.set_reason("why: " + hostile);
  engine::CascadeTimes times;
  times.ranks.push_back(RankAt(3, "node-<b>", kT0, 0));
  const IncidentReport r = BuildIncidentReport(tmp.path(), d, times);
  ASSERT_EQ(r.evidence.size(), 1u);
  ASSERT_EQ(r.evidence[0].lines.size(), 3u);

  const std::string html = RenderIncidentHtml(r);
  ExpectLacks(html, {"<script", "\x1b", "\x07", "node-<b>"});
  ExpectHas(html, {"&lt;script&gt;alert(1)&lt;/script&gt; \\x1b[2J\\x07", "&amp;amp;"});

  const std::string md = RenderIncidentMarkdown(r);
  const std::string prose = OutsideFences(md);
  EXPECT_EQ(prose.find("<script"), std::string::npos);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  for (size_t at = prose.find("](javascript"); at != std::string::npos;
       at = prose.find("](javascript", at + 1)) {
    EXPECT_EQ(prose[at - 1], '\\') << "a link in prose or a cell";
  }
  EXPECT_NE(md.find("why: &lt;script&gt;"), std::string::npos);
  EXPECT_NE(md.find("\\| x \\|"), std::string::npos);
  // The cited line sits in a fence longer than its own run of four backticks.
  EXPECT_NE(md.find("`````text\n"), std::string::npos);
  EXPECT_NE(md.find(">>     2 | <script>"), std::string::npos) << md;  // verbatim inside the fence
}

TEST(IncidentReport, SizeStaysBoundedWithAHugeCascade) {
  TempDir tmp;
  std::string log;
  for (int i = 0; i < 5000; ++i) log += std::string(2000, 'x') + "\n";  // long lines
  Write(tmp.path() / "big.log", log);
  v1::Diagnosis d = Diagnosed(3);
  d.mutable_input()->set_world_size(131072);
  for (int i = 0; i < 131072; ++i) d.mutable_cascade()->add_secondary_ranks(i);
  for (int i = 0; i < 2000; ++i) {
    *d.add_evidence() = Cite("big.log", 1 + i * 2, std::string(2000, 'x'));
    auto* g = d.mutable_cascade()->add_groups();
    g->set_signature(std::string(3000, 's'));
    g->set_family("nccl_watchdog");
    g->set_first_time("2026-06-01T00:00:00Z");
  }
  engine::CascadeTimes times;
  for (int r = 0; r < 131072; ++r) times.ranks.push_back(RankAt(r, "n", kT0 + r * 1000, 0));
  const IncidentReport rep = BuildIncidentReport(tmp.path(), d, times);
  EXPECT_EQ(rep.evidence.size(), static_cast<std::size_t>(kReportMaxEvidence));
  EXPECT_EQ(rep.evidence_left_out, 2000 - kReportMaxEvidence);
  const std::string html = RenderIncidentHtml(rep);
  const std::string md = RenderIncidentMarkdown(rep);
  EXPECT_LT(html.size(), 1'500'000u);
  EXPECT_LT(md.size(), 500'000u);
  EXPECT_NE(html.find("131022 more ranks not listed"), std::string::npos);
  EXPECT_NE(html.find("1960 more cited lines"), std::string::npos);
  EXPECT_NE(md.find("[... cut: 2000 bytes]"), std::string::npos);
}

TEST(IncidentReport, ContextStopsAtTheFileStartAndEnd) {
  TempDir tmp;
  Write(tmp.path() / "a.log", "one\ntwo\nthree\nfour\nfive");  // no final newline
  v1::Diagnosis d = Diagnosed(3);
  *d.add_evidence() = Cite("a.log", 1, "one");
  *d.add_evidence() = Cite("a.log", 5, "five");
  *d.add_evidence() = Cite("a.log", 9, "nine");
  const IncidentReport r = BuildIncidentReport(tmp.path(), d, {});
  ASSERT_EQ(r.evidence.size(), 3u);
  EXPECT_EQ(r.evidence[0].first_line, 1u);
  EXPECT_EQ(r.evidence[0].lines, (std::vector<std::string>{"one", "two", "three", "four"}));
  EXPECT_EQ(r.evidence[1].first_line, 2u);
  EXPECT_EQ(r.evidence[1].lines, (std::vector<std::string>{"two", "three", "four", "five"}));
  EXPECT_TRUE(r.evidence[2].lines.empty());
  EXPECT_NE(r.evidence[2].note.find("the file has 5 lines"), std::string::npos)
      << r.evidence[2].note;
  const std::string html = RenderIncidentHtml(r);
  EXPECT_NE(html.find("<span class=\"l hit\"><span class=\"ln\">5</span>five</span>"),
            std::string::npos);
}

TEST(IncidentReport, MissingAndOutsideFilesShowTheCitedTextWithANote) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "inc");
  Write(tmp.path() / "secret.log", "secret\n");
  fs::create_symlink(tmp.path() / "secret.log", tmp.path() / "inc/link.log");
  v1::Diagnosis d = Diagnosed(3);
  *d.add_evidence() = Cite("gone.log", 4, "the cited text");
  *d.add_evidence() = Cite("../secret.log", 1, "x");
  *d.add_evidence() = Cite("link.log", 1, "x");
  const IncidentReport r = BuildIncidentReport(tmp.path() / "inc", d, {});
  ASSERT_EQ(r.evidence.size(), 3u);
  EXPECT_NE(r.evidence[0].note.find("no longer in the incident directory"), std::string::npos);
  EXPECT_NE(r.evidence[1].note.find("not a file inside"), std::string::npos);
  EXPECT_NE(r.evidence[2].note.find("links outside"), std::string::npos);
  for (const auto& e : r.evidence) EXPECT_TRUE(e.lines.empty());
  const std::string html = RenderIncidentHtml(r);
  EXPECT_EQ(html.find("secret\n"), std::string::npos);
  EXPECT_NE(html.find("the cited text"), std::string::npos);
  EXPECT_NE(RenderIncidentMarkdown(r).find("the cited text"), std::string::npos);
}

TEST(IncidentReport, TimelineListsTheInitiatorFirstOnAlignedClocksWithPrintedStamps) {
  v1::Diagnosis d = Diagnosed(3);
  engine::CascadeTimes times{.aligned = true};
  // rank 0's node runs 5 s fast: printed before the initiator, aligned 2 s after it.
  times.ranks.push_back(RankAt(0, "node-b", kT0 - 3 * kNsPerSec, -5 * kNsPerSec));
  times.ranks.push_back(RankAt(3, "node-a", kT0, 0));
  times.ranks.push_back(RankAt(5, "node-a", kT0 + kNsPerSec, 0));
  times.clocks.push_back({"node-b", -5 * kNsPerSec});
  const IncidentReport r = BuildIncidentReport("/nonexistent", d, times);
  int left_out = -1;
  const auto rows = RankRows(r, &left_out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(left_out, 0);
  EXPECT_EQ(rows[1][0], "3 (initiator)");
  EXPECT_EQ(rows[2][0], "5");
  EXPECT_EQ(rows[3][0], "0");
  EXPECT_EQ(rows[3][2], "+2.000");
  EXPECT_EQ(rows[3][3], FormatRfc3339(kT0 + 2 * kNsPerSec).substr(0, 23) + "Z");
  EXPECT_EQ(rows[3][4], FormatRfc3339(kT0 - 3 * kNsPerSec).substr(0, 23) + "Z");
  EXPECT_EQ(rows[3][5], "-5.000 s");
  const v1::Timeline tl = IncidentTimeline(r);
  EXPECT_EQ(tl.world_size(), 8);
  const std::string html = RenderIncidentHtml(r);
  EXPECT_NE(html.find("<circle class=\"pt initiator\""), std::string::npos);
  EXPECT_NE(html.find("seconds after rank 3's first error (the initiator), on aligned clocks"),
            std::string::npos);
}

TEST(IncidentReport, InconclusiveSaysWhatIsMissing) {
  v1::Diagnosis d;
  d.set_strategy("engine");
  d.set_verdict(v1::VERDICT_INCONCLUSIVE);
  d.set_reason("two ranks are tied");
  d.mutable_initiator()->set_rank(-1);
  auto* c = d.add_candidates();
  c->set_rank(4);
  c->set_node("node-c");
  c->set_score(0.5);
  d.mutable_input()->set_world_size(16);
  d.mutable_input()->set_ranks_seen(12);
  const IncidentReport r = BuildIncidentReport("/nonexistent", d, {});
  const std::string html = RenderIncidentHtml(r);
  ExpectHas(html, {"Verdict: INCONCLUSIVE", "What is missing", "rank 4 on node-c",
                   "Logs of 12 of 16 ranks", "nothing to draw"});
  EXPECT_NE(RenderIncidentMarkdown(r).find("### What is missing"), std::string::npos);
}

}  // namespace
}  // namespace denpex::cli
