// `denpex diagnose --html/--markdown` on a simulated incident, the page opened in headless
// Chromium: its DOM holds every section, and a screenshot shows the timeline (the plot's
// background, the initiator's ring, the error groups' wave fronts and the ranks' dots in their
// colours inside it). Progress lines on a stderr that is not a terminal (`eval`, `simulate
// --replay`) leave stdout and the output files as they are.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/denpex_cmd.h"
#include "support/launchers.h"
#include "support/png.h"
#include "support/temp_dir.h"

namespace {
namespace fs = std::filesystem;

using denpex::testing::CmdResult;
using denpex::testing::Denpex;
using denpex::testing::Shell;
using denpex::testing::TempDir;
using denpex::testing::launchers::ReadAll;
using denpex::testing::launchers::Required;

std::string Source(const std::string& rel) { return std::string(DENPEX_SOURCE_DIR) + "/" + rel; }
std::string operator/(const TempDir& t, const std::string& rel) {
  return (t.path() / rel).string();
}

// A small job with skewed clocks and checkpoints: every section of the report has content.
const std::string kScenario = Source("scenarios/checkpoint/torch_save_1024.textproto") +
                              " --set job.nodes=8 --set clocks.skew_sigma_ms=800";

struct Box {
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
  bool empty() const { return x1 < 0; }
};

bool Near(const std::uint8_t* p, int r, int g, int b, int tol) {
  return std::abs(p[0] - r) <= tol && std::abs(p[1] - g) <= tol && std::abs(p[2] - b) <= tol;
}

int Count(const denpex::testing::Image& img, const Box& box, int r, int g, int b, int tol) {
  int n = 0;
  for (int y = box.y0; y <= box.y1; ++y) {
    for (int x = box.x0; x <= box.x1; ++x) n += Near(img.At(x, y), r, g, b, tol);
  }
  return n;
}

TEST(IncidentReportE2e, HtmlOpensInHeadlessChromiumAndTheScreenshotShowsTheTimeline) {
  if (Shell("command -v chromium").code != 0) {
    SKIP_OR_FAIL(
        "chromium is not installed; `scripts/install-deps.sh --with-services` installs it");
  }
  TempDir tmp;
  const CmdResult sim = Denpex("simulate " + kScenario + " --out " + tmp / "sim");
  ASSERT_EQ(sim.code, 0) << sim.output;
  const CmdResult diag = Denpex("diagnose " + tmp / "sim/incident" + " --html " + tmp / "r.html" +
                                " --markdown " + tmp / "r.md");
  ASSERT_EQ(diag.code, 0) << diag.output;
  const std::string html = ReadAll(tmp.path() / "r.html");
  // Self-contained: no script, no fetched resource (the SVG namespace is a name, not a fetch).
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  std::string rest = html;
  for (size_t at; (at = rest.find("http://www.w3.org/2000/svg")) != std::string::npos;)
    rest.erase(at, 26);
  EXPECT_EQ(rest.find("http"), std::string::npos);
  EXPECT_NE(ReadAll(tmp.path() / "r.md").find("## Cascade timeline"), std::string::npos);

  const CmdResult dom = Shell(
      "timeout 120 chromium --headless --no-sandbox --disable-gpu "
      "--user-data-dir=" +
      tmp / "profile" + " --dump-dom file://" + tmp / "r.html");
  ASSERT_EQ(dom.code, 0) << dom.output;
  for (const char* part :
       {"Verdict: DIAGNOSED", "<svg class=\"timeline\"", "<circle class=\"pt initiator\"",
        "<circle class=\"pt rank\"", "<line class=\"wave group\"", "Ranks over time", "(initiator)",
        "<span class=\"l hit\">", "<h2>Checkpoint</h2>", "Before resuming"}) {
    EXPECT_NE(dom.output.find(part), std::string::npos) << part;
  }

  const CmdResult shot = Shell(
      "timeout 120 chromium --headless --no-sandbox --disable-gpu "
      "--hide-scrollbars --user-data-dir=" +
      tmp / "profile" + " --window-size=1200,900 --screenshot=" + tmp / "r.png" + " file://" +
      tmp / "r.html");
  ASSERT_EQ(shot.code, 0) << shot.output;
  const auto img = denpex::testing::ReadPng(tmp.path() / "r.png");
  ASSERT_TRUE(img.has_value()) << "not an 8-bit RGB(A) PNG";
  // The plot area is the only #fbfbfb of the page: its bounding box is the timeline's place.
  Box plot;
  for (int y = 0; y < img->height; ++y) {
    for (int x = 0; x < img->width; ++x) {
      if (!Near(img->At(x, y), 0xfb, 0xfb, 0xfb, 0)) continue;
      plot.x0 = std::min(plot.x0, x), plot.x1 = std::max(plot.x1, x);
      plot.y0 = std::min(plot.y0, y), plot.y1 = std::max(plot.y1, y);
    }
  }
  ASSERT_FALSE(plot.empty()) << "no timeline plot in the first screen";
  EXPECT_GT(plot.x1 - plot.x0, 600);
  EXPECT_GT(plot.y1 - plot.y0, 150);
  // Inside it: the initiator's blue ring, the orange wave fronts (opacity .7 on #fbfbfb) and the
  // ranks' grey dots (#555, opacity .6).
  EXPECT_GE(Count(*img, plot, 0x1a, 0x56, 0xc4, 40), 10) << "no initiator ring";
  EXPECT_GE(Count(*img, plot, 232, 172, 75, 30), 50) << "no error-group wave front";
  EXPECT_GE(Count(*img, plot, 151, 151, 151, 40), 8) << "no rank dots";
  // Where the docs' picture is refreshed from (docs/incident_report.md).
  if (const char* dir = std::getenv("DENPEX_SCREENSHOT_DIR")) {
    fs::copy_file(tmp.path() / "r.png", fs::path(dir) / "incident_report.png",
                  fs::copy_options::overwrite_existing);
  }
}

// The same eval with periodic lines at every 10 % (no wait) and with none: the same stdout but
// for its wall times, the same JSON report but for them, and the lines only on stderr.
TEST(ProgressE2e, EvalAndReplayPrintStatusLinesOnANonTerminalStderrOnly) {
  TempDir tmp;
  const std::string eval = "eval " + Source("scenarios/smoke") + " --seeds 2 --jobs 2";
  // In a subshell: Shell() sends the command's stderr to its stdout.
  ASSERT_EQ(Shell(std::string("(") + DENPEX_BINARY + " " + eval + " --progress-interval 0 --json " +
                  tmp / "a.json" + " >" + tmp / "a.out" + " 2>" + tmp / "a.err)")
                .code,
            0);
  ASSERT_EQ(Shell(std::string("(") + DENPEX_BINARY + " " + eval + " --no-progress --json " +
                  tmp / "b.json" + " >" + tmp / "b.out" + " 2>" + tmp / "b.err)")
                .code,
            0);
  const std::string err = ReadAll(tmp.path() / "a.err");
  EXPECT_NE(err.find("denpex eval: 50% (3/6 jobs), "), std::string::npos) << err;
  EXPECT_NE(err.find(", ETA "), std::string::npos) << err;
  EXPECT_NE(err.find("denpex eval: 100% (6/6 jobs)"), std::string::npos) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos);
  EXPECT_TRUE(ReadAll(tmp.path() / "b.err").empty());
  const std::string out = ReadAll(tmp.path() / "a.out");
  EXPECT_EQ(out.find("denpex eval:"), std::string::npos);
  auto drop_walls = [](std::string s) {  // "... 1.2 s ..." differs run to run
    std::string kept;
    for (size_t at = 0; at < s.size();) {
      size_t nl = s.find('\n', at);
      if (nl == std::string::npos) nl = s.size();
      const std::string line = s.substr(at, nl - at);
      if (line.find("Wall") == std::string::npos && line.find("wall") == std::string::npos &&
          line.find("seconds") == std::string::npos && line.find(" s ") == std::string::npos &&
          line.find(" s)") == std::string::npos && line.find(" s.") == std::string::npos) {
        kept += line + "\n";
      }
      at = nl + 1;
    }
    return kept;
  };
  EXPECT_EQ(drop_walls(out), drop_walls(ReadAll(tmp.path() / "b.out")));

  // A replay's status is the share of its wall time written.
  const CmdResult replay =
      Shell(std::string("(") + DENPEX_BINARY + " simulate " + kScenario + " --out " + tmp / "rp" +
            " --replay 600 --replay-max-gap 0.05 --progress-interval 0 2>" + tmp / "rp.err)");
  ASSERT_EQ(replay.code, 0) << replay.output;
  const std::string rerr = ReadAll(tmp.path() / "rp.err");
  EXPECT_NE(rerr.find("Z denpex simulate --replay: "), std::string::npos) << rerr;
  EXPECT_NE(rerr.find("s elapsed"), std::string::npos) << rerr;
  EXPECT_EQ(replay.output.find("denpex simulate --replay:"), std::string::npos);
}

// The model stage of a large simulation (562,819 events at 4,096 ranks) and `eval --preflight`
// print the same status lines; the simulated incident's truth is the same with them or without.
TEST(ProgressE2e, SimulateModelStageAndPreflightEvalPrintStatusLines) {
  TempDir tmp;
  const std::string scenario = Source("scenarios/smoke/sigkill_4096.textproto");
  ASSERT_EQ(Shell(std::string("(") + DENPEX_BINARY + " simulate " + scenario + " --out " +
                  tmp / "a" + " --progress-interval 0 >" + tmp / "a.out" + " 2>" + tmp / "a.err)")
                .code,
            0);
  ASSERT_EQ(Shell(std::string("(") + DENPEX_BINARY + " simulate " + scenario + " --out " +
                  tmp / "b" + " --no-progress 2>" + tmp / "b.err)")
                .code,
            0);
  const std::string err = ReadAll(tmp.path() / "a.err");
  EXPECT_NE(err.find("Z denpex simulate: "), std::string::npos) << err;
  EXPECT_NE(err.find(", ETA "), std::string::npos) << err;
  EXPECT_NE(err.find("modelling the job"), std::string::npos) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos);
  EXPECT_TRUE(ReadAll(tmp.path() / "b.err").empty());
  EXPECT_EQ(ReadAll(tmp.path() / "a.out").find("denpex simulate:"), std::string::npos);
  EXPECT_EQ(ReadAll(tmp.path() / "a" / "truth.json"), ReadAll(tmp.path() / "b" / "truth.json"));

  ASSERT_EQ(
      Shell(std::string("(") + DENPEX_BINARY + " eval --preflight " +
            Source("scenarios/preflight/healthy_256.textproto") +
            " --seeds 2 --jobs 1 --progress-interval 0 >" + tmp / "p.out" + " 2>" + tmp / "p.err)")
          .code,
      0);
  const std::string perr = ReadAll(tmp.path() / "p.err");
  EXPECT_NE(perr.find("Z denpex eval --preflight: 50% (1/2 jobs), "), std::string::npos) << perr;
  EXPECT_NE(perr.find("Z denpex eval --preflight: 100% (2/2 jobs)"), std::string::npos) << perr;
  EXPECT_EQ(ReadAll(tmp.path() / "p.out").find("denpex eval --preflight:"), std::string::npos);
}

}  // namespace
