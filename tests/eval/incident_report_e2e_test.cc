// `denpex diagnose --html/--markdown` on a simulated incident, the page opened in headless
// Chromium: its DOM holds every section, and a screenshot shows the timeline (the plot's
// background, the initiator's ring, the error groups' wave fronts and the ranks' dots in their
// colours inside it).
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

}  // namespace
