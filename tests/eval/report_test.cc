// Reports of an evaluation (cli/src/report_*.cc), in process: Markdown tables, the
// self-contained HTML page, the timeline and the bounded diagnosis copy.
#include <gtest/gtest.h>

#include "denpex/scorer/scorer.h"
#include "eval_internal.h"
#include "report.h"

namespace denpex::cli {
namespace {

v1::Truth Truth() {
  v1::Truth t;
  t.set_scenario("sigkill");
  t.set_verdict(v1::VERDICT_DIAGNOSED);
  t.mutable_initiator()->set_rank(3);
  t.mutable_initiator()->set_node("gpu-0001");
  auto* e = t.add_events();
  e->set_kind("FAULT_KIND_SIGKILL");
  e->set_rank(3);
  e->set_time("2026-03-02T09:00:30Z");
  auto* job = t.mutable_job();
  job->set_world_size(32);
  job->set_fault_time("2026-03-02T09:00:30Z");
  job->set_end_time("2026-03-02T09:10:40Z");
  return t;
}

v1::Diagnosis Diagnosis(const std::string& strategy, int rank) {
  v1::Diagnosis d;
  d.set_strategy(strategy);
  d.set_verdict(v1::VERDICT_DIAGNOSED);
  d.mutable_initiator()->set_rank(rank);
  d.mutable_initiator()->set_node("gpu-0001");
  d.mutable_initiator()->set_time("2026-03-02T09:00:31Z");
  auto* g = d.mutable_cascade()->add_groups();
  g->set_family("nccl_watchdog");
  g->set_count(24);
  g->set_ranks(24);
  g->set_first_time("2026-03-02T09:10:30Z");
  for (int r = 0; r < 200; ++r) d.mutable_cascade()->add_secondary_ranks(r);
  return d;
}

v1::EvalReport Report() {
  v1::EvalReport r;
  r.mutable_run()->add_strategies("engine");
  r.mutable_run()->add_strategies("first-error");
  r.mutable_run()->add_inputs("scenarios/smoke");
  std::vector<v1::IncidentScore> scores;
  for (const auto& [strategy, rank] : {std::pair{"engine", 3}, std::pair{"first-error", 9}}) {
    auto s = scorer::ScoreIncident(Truth(), Diagnosis(strategy, rank));
    s.set_suite("smoke");
    scores.push_back(s);
  }
  for (const auto& a : scorer::Aggregate(scores)) *r.add_aggregates() = a;
  for (const auto& s : scores) *r.add_incidents() = s;
  auto* d = r.add_details();
  d->set_suite("smoke");
  d->set_incident("sigkill");
  *d->mutable_diagnosis() = TrimForReport(Diagnosis("engine", 3));
  *d->mutable_timeline() = TimelineOf(Truth(), Diagnosis("engine", 3));
  d->set_diagnosis_text("verdict DIAGNOSED <rank 3>");
  return r;
}

TEST(EvalReportTimeline, PointsAreSecondsAfterTheTruthFault) {
  const auto tl = TimelineOf(Truth(), Diagnosis("engine", 3));
  EXPECT_EQ(tl.source(), "diagnosis");
  ASSERT_EQ(tl.points_size(), 4);
  EXPECT_EQ(tl.points(0).kind(), "fault");
  EXPECT_DOUBLE_EQ(tl.points(0).seconds(), 0.0);
  EXPECT_EQ(tl.points(1).kind(), "initiator");
  EXPECT_DOUBLE_EQ(tl.points(1).seconds(), 1.0);
  EXPECT_EQ(tl.points(2).kind(), "group");
  EXPECT_DOUBLE_EQ(tl.points(2).seconds(), 600.0);
  EXPECT_EQ(tl.points(2).count(), 24);
  EXPECT_EQ(tl.points(3).kind(), "end");
  EXPECT_DOUBLE_EQ(tl.points(3).seconds(), 610.0);
}

TEST(EvalReportTimeline, NoFaultTimeGivesNoPoints) {
  v1::Truth t = Truth();
  t.mutable_job()->clear_fault_time();
  t.mutable_initiator()->clear_time();
  EXPECT_EQ(TimelineOf(t, Diagnosis("engine", 3)).points_size(), 0);
}

TEST(EvalReportTimeline, RankFirstErrorsNeedTheTruthFaultTime) {
  v1::Timeline tl;  // no fault time: nothing to place the ranks against
  const Status st = AddRankFirstErrors("/nonexistent", 1, &tl);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(tl.points_size(), 0);
}

TEST(EvalReportTimeline, ZoomSpansTheRanksFirstErrors) {
  v1::Timeline tl = TimelineOf(Truth(), Diagnosis("engine", 3));
  for (int r = 0; r < 32; ++r) {
    auto* p = tl.add_points();
    p->set_kind("rank");
    p->set_rank(r);
    p->set_seconds(600.0 + r * 0.01);
  }
  const std::string whole = TimelineSvg(tl, 600, 200);
  const std::string zoomed = TimelineSvg(tl, 600, 200, true);
  EXPECT_NE(whole.find(">0.0 s<"), std::string::npos) << whole;
  EXPECT_EQ(zoomed.find(">0.0 s<"), std::string::npos);  // the fault at 0 s is outside
  EXPECT_NE(zoomed.find("<circle class=\"pt rank\""), std::string::npos);
}

TEST(EvalReportTimeline, SvgDrawsEveryPointWithItsLabel) {
  const std::string svg = TimelineSvg(TimelineOf(Truth(), Diagnosis("engine", 3)), 600, 200);
  EXPECT_EQ(svg.rfind("<svg class=\"timeline\"", 0), 0u);
  EXPECT_NE(svg.find("<circle class=\"pt fault\""), std::string::npos);
  EXPECT_NE(svg.find("<line class=\"wave group\""), std::string::npos);
  EXPECT_NE(svg.find("nccl_watchdog: 24 errors on 24 ranks"), std::string::npos);
}

TEST(EvalReportTrim, EmbeddedDiagnosisIsBounded) {
  const auto t = TrimForReport(Diagnosis("engine", 3));
  EXPECT_EQ(t.cascade().secondary_ranks_size(), 64);
  EXPECT_EQ(t.initiator().rank(), 3);
  EXPECT_FALSE(TrimForReport(v1::Diagnosis{}).has_cascade());
}

TEST(EvalReportMarkdown, ShowsEachGroupWithEngineBesideBaselineAndIncidentRows) {
  const std::string md = RenderMarkdown(Report());
  EXPECT_NE(md.find("## Overall"), std::string::npos);
  EXPECT_NE(md.find("## By family"), std::string::npos);
  EXPECT_NE(md.find("| family:sigkill | engine |"), std::string::npos) << md;
  EXPECT_NE(md.find("| family:sigkill | first-error |"), std::string::npos);
  EXPECT_NE(md.find("| smoke | sigkill | 0 | sigkill | 32 | rank 3 on gpu-0001 | RIGHT rank 3 | "
                    "wrong rank 9 |"),
            std::string::npos)
      << md;
}

TEST(EvalReportHtml, IsSelfContainedWithTablesTimelineAndIncidentRows) {
  const std::string html = RenderHtml(Report());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* part : {"<table class=\"aggregates\"", "<svg class=\"timeline\"",
                           "<table class=\"incidents\"", "<tr class=\"row\"",
                           "<tr class=\"detail\" hidden", "<style>", "<script>"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  // Nothing is fetched: no external stylesheet, script, image or font.
  for (const char* external : {"<link", " src=", "url(", "@import", "https://"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  EXPECT_NE(html.find("verdict DIAGNOSED &lt;rank 3&gt;"), std::string::npos);  // escaped
}

}  // namespace
// --shapes: one row per shape and the wrong pair, in Markdown and in an HTML table.
TEST(EvalReportShapes, MarkdownAndHtmlShowTheShapeRowsAndTheWrongPairs) {
  v1::EvalReport r = Report();
  r.mutable_run()->add_shapes("cri");
  v1::ShapeResult same, wrong;
  same.set_shape("cri");
  same.set_outcome(v1::SHAPE_OUTCOME_SAME);
  wrong = scorer::CompareShape(Truth(), Diagnosis("engine", 3), Diagnosis("engine", 9));
  wrong.set_suite("smoke");
  wrong.set_incident("sigkill");
  wrong.set_shape("cri");
  for (const auto& x : {same, wrong}) *r.add_shape_results() = x;
  for (const auto& g : scorer::AggregateShapes({same, wrong}, {"cri"})) *r.add_shape_aggregates() = g;
  const std::string md = RenderMarkdown(r);
  EXPECT_NE(md.find("## Collection shapes"), std::string::npos) << md;
  EXPECT_NE(md.find("| cri | 2 | 50.0% | 0.0% | 0.0% | 50.0% | 0.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| wrong | smoke/sigkill | 0 | cri |"), std::string::npos) << md;
  const std::string html = RenderHtml(r);
  EXPECT_NE(html.find("<table class=\"shapes\"><tr><th>shape</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>wrong</td><td>smoke/sigkill</td>"), std::string::npos) << html;
  EXPECT_EQ(RenderMarkdown(Report()).find("Collection shapes"), std::string::npos);
}

namespace {

// A simulated-only report has no pilot section; a corpus entry's scores add one, a draft marked.
TEST(EvalReportPilot, OnlyCorpusEntriesAddThePilotSectionAndDraftsAreMarked) {
  v1::EvalReport plain = Report();
  EXPECT_EQ(RenderMarkdown(plain).find("## Pilot"), std::string::npos);
  EXPECT_EQ(RenderHtml(plain).find("id=\"pilot\""), std::string::npos);
  EXPECT_TRUE(PilotDimensionRows(plain).empty());

  v1::Truth t = Truth();
  t.set_owner(v1::OWNER_HOST);
  t.mutable_corpus_entry()->set_draft(true);
  v1::Diagnosis d = Diagnosis("engine", 3);
  d.set_owner(v1::OWNER_HOST);
  v1::IncidentScore s = scorer::ScoreIncident(t, d, {.diagnose_seconds = 0.3});
  s.set_suite("corpus:mine");
  s.set_incident("job1");
  v1::EvalReport r;
  r.mutable_run()->add_strategies("engine");
  *r.add_incidents() = s;
  auto* detail = r.add_details();
  detail->set_suite("corpus:mine");
  detail->set_incident("job1");
  for (const auto& a : scorer::Aggregate({s})) *r.add_aggregates() = a;
  *r.add_pilot_incidents() = scorer::ScorePilot(t, d, s);
  *r.mutable_pilot() = scorer::SummarizePilot({r.pilot_incidents(0)});

  const std::string md = RenderMarkdown(r);
  EXPECT_NE(md.find("## Pilot"), std::string::npos);
  EXPECT_NE(md.find("| causal owner | 1 of 1 entries | 1/1 (100.0%) right | not recorded |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| operator time | 0 of 1 entries | not recorded | not recorded |"),
            std::string::npos);
  EXPECT_NE(md.find("| corpus:mine/job1 (draft) | right |"), std::string::npos);
  EXPECT_NE(md.find("| corpus:mine | job1 (draft) |"), std::string::npos);
  EXPECT_NE(md.find("**Drafts:** 1 of 1 incidents"), std::string::npos);
  EXPECT_NE(md.find("1 corpus entries scored, 1 of them drafts"), std::string::npos);
  const std::string html = RenderHtml(r);
  EXPECT_NE(html.find("<table class=\"pilot-dimensions\">"), std::string::npos);
  EXPECT_NE(html.find("job1 <span class=\"draft\">(draft)</span>"), std::string::npos);
}

}  // namespace
}  // namespace denpex::cli
