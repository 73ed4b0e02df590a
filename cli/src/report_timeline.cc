// The incident timeline: built from the truth (fault and end times, injected events), a
// diagnosis (its initiator and the first time of each error group) and, for chosen
// incidents, each rank's first error from the engine's event listing; drawn as SVG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "denpex/common/time.h"
#include "denpex/engine/engine.h"
#include "eval_internal.h"
#include "report.h"

namespace denpex::cli {
namespace {

constexpr int kMaxSecondaryRanks = 64;
constexpr int kMaxCandidates = 5;
constexpr int kMaxGroups = 8;
constexpr int kMaxProblems = 5;

std::optional<double> SecondsAfter(const std::string& t, std::optional<TimeNs> origin) {
  const auto v = ParseRfc3339(t);
  if (!v || !origin) return std::nullopt;
  return static_cast<double>(*v - *origin) / kNsPerSec;
}

v1::TimelinePoint Point(const std::string& kind, int rank, const std::string& node,
                        double seconds, const std::string& label) {
  v1::TimelinePoint p;
  p.set_kind(kind);
  p.set_rank(rank);
  p.set_node(node);
  p.set_seconds(seconds);
  p.set_label(label);
  return p;
}

std::string F(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct FirstError {
  TimeNs time;
  std::string node, what;
};

}  // namespace

// Keys are looked up before "fields", whose texts are escaped, so a key cannot match inside them.
std::optional<std::string_view> JsonValue(std::string_view line, std::string_view key) {
  line = line.substr(0, line.find("\"fields\":"));
  std::string pattern(1, '"');
  (pattern += key) += "\":";
  const size_t at = line.find(pattern);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + pattern.size());
  if (rest.starts_with('"')) {
    const size_t end = rest.find('"', 1);
    if (end == std::string_view::npos) return std::nullopt;
    return rest.substr(1, end - 1);
  }
  return rest.substr(0, rest.find_first_of(",}"));
}

Status AddRankFirstErrors(const std::filesystem::path& incident_dir, int threads,
                          v1::Timeline* tl) {
  const auto origin = ParseRfc3339(tl->fault_time());
  if (!origin) return Status::InvalidInput("the truth has no fault time");
  std::ostringstream events;
  DENPEX_RETURN_IF_ERROR(engine::WriteEvents(incident_dir, {.threads = threads}, events));
  std::map<int, FirstError> first;  // by rank
  std::istringstream in(events.str());
  for (std::string line; std::getline(in, line);) {
    const auto family = JsonValue(line, "family");
    const auto kind = JsonValue(line, "kind");
    const auto rank = JsonValue(line, "rank");
    const auto time = JsonValue(line, "time");
    if (!family || !kind || !rank || !time || *family == "trainer" || *kind == "comm_init") {
      continue;  // progress and set-up lines are not errors; unranked lines have no row
    }
    const auto t = ParseRfc3339(*time);
    const int r = std::atoi(std::string(*rank).c_str());
    if (!t) continue;
    auto it = first.find(r);
    if (it != first.end() && it->second.time <= *t) continue;
    first[r] = {*t, std::string(JsonValue(line, "node").value_or("")),
                std::string(*family) + " " + std::string(*kind)};
  }
  const size_t stride = (first.size() + kMaxRankPoints - 1) / kMaxRankPoints;
  size_t i = 0;
  for (const auto& [rank, e] : first) {
    if (i++ % std::max<size_t>(1, stride) != 0) continue;
    *tl->add_points() = Point("rank", rank, e.node,
                              static_cast<double>(e.time - *origin) / kNsPerSec,
                              "first error: " + e.what);
  }
  tl->set_source(stride > 1 ? "events (one rank in " + std::to_string(stride) + ")" : "events");
  return Status::Ok();
}

v1::Diagnosis TrimForReport(const v1::Diagnosis& d) {
  v1::Diagnosis t = d;
  auto* ranks = t.mutable_cascade()->mutable_secondary_ranks();
  if (ranks->size() > kMaxSecondaryRanks) ranks->Truncate(kMaxSecondaryRanks);
  if (t.candidates_size() > kMaxCandidates) {
    t.mutable_candidates()->DeleteSubrange(kMaxCandidates, t.candidates_size() - kMaxCandidates);
  }
  auto* groups = t.mutable_cascade()->mutable_groups();
  if (groups->size() > kMaxGroups) groups->DeleteSubrange(kMaxGroups, groups->size() - kMaxGroups);
  auto* problems = t.mutable_input()->mutable_problems();
  if (problems->size() > kMaxProblems) {
    problems->DeleteSubrange(kMaxProblems, problems->size() - kMaxProblems);
  }
  if (!d.has_cascade()) t.clear_cascade();
  if (!d.has_input()) t.clear_input();
  return t;
}

v1::Timeline TimelineOf(const v1::Truth& truth, const v1::Diagnosis& d) {
  v1::Timeline tl;
  tl.set_source("diagnosis");
  tl.set_world_size(truth.job().world_size());
  tl.set_fault_time(truth.job().fault_time());
  tl.set_end_time(truth.job().end_time());
  std::optional<TimeNs> origin = ParseRfc3339(truth.job().fault_time());
  if (!origin) origin = ParseRfc3339(truth.initiator().time());
  if (!origin) return tl;
  for (const auto& e : truth.events()) {
    if (auto s = SecondsAfter(e.time(), origin)) {
      *tl.add_points() = Point("fault", e.rank(), e.node(), *s, "injected " + e.kind());
    }
  }
  if (auto s = SecondsAfter(d.initiator().time(), origin);
      s && d.verdict() == v1::VERDICT_DIAGNOSED) {
    *tl.add_points() = Point("initiator", d.initiator().rank(), d.initiator().node(), *s,
                             "initiator named by " + d.strategy());
  }
  for (const auto& g : d.cascade().groups()) {
    auto s = SecondsAfter(g.first_time(), origin);
    if (!s) continue;
    auto p = Point("group", -1, "", *s,
                   g.family() + ": " + std::to_string(g.count()) + " errors on " +
                       std::to_string(g.ranks()) + " ranks");
    p.set_count(g.count());
    p.set_ranks(g.ranks());
    *tl.add_points() = std::move(p);
  }
  if (auto s = SecondsAfter(truth.job().end_time(), origin)) {
    *tl.add_points() = Point("end", -1, "", *s, "last process exited");
  }
  return tl;
}

namespace {

// Maps seconds and ranks to pixels.
struct Frame {
  static constexpr int kLeft = 80, kRight = 20, kTop = 20, kBottom = 40;
  int width, height, world;
  double lo, hi;
  double pw() const { return width - kLeft - kRight; }
  double ph() const { return height - kTop - kBottom; }
  double X(double s) const { return kLeft + (s - lo) / (hi - lo) * pw(); }
  double Y(int rank) const { return kTop + ph() - (rank + 0.5) / world * ph(); }
};

std::string Text(double x, double y, const char* anchor, const std::string& text) {
  return "<text x=\"" + F(x) + "\" y=\"" + F(y) + "\" class=\"tick\" text-anchor=\"" + anchor +
         "\">" + HtmlEscape(text) + "</text>";
}

std::string Axes(const Frame& f, const std::string& x_label) {
  std::string svg = "<rect x=\"" + std::to_string(Frame::kLeft) + "\" y=\"" +
                    std::to_string(Frame::kTop) + "\" width=\"" + F(f.pw()) + "\" height=\"" +
                    F(f.ph()) + "\" class=\"plot\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double s = f.lo + (f.hi - f.lo) * i / 4;
    svg += Text(f.X(s), f.height - Frame::kBottom + 16, "middle", F(s) + " s");
  }
  for (int r : {0, f.world - 1}) {
    svg += Text(Frame::kLeft - 6, f.Y(r) + 4, "end", "rank " + std::to_string(r));
  }
  return svg + Text(Frame::kLeft + f.pw() / 2, f.height - 6, "middle", x_label);
}

// A dot at (time, rank) for a rank's event; a full-height wave front otherwise. Each mark
// carries its label as a tooltip and, beside it, as text.
std::string Mark(const Frame& f, const v1::TimelinePoint& p, int nth_wave) {
  const std::string title = "<title>" + HtmlEscape(p.label()) + " at " + F(p.seconds()) + " s" +
                            (p.rank() >= 0 ? ", rank " + std::to_string(p.rank()) : "") +
                            "</title>";
  const double x = f.X(p.seconds());
  const bool right_half = x > Frame::kLeft + f.pw() / 2;
  const char* anchor = right_half ? "end" : "start";
  const double tx = right_half ? x - 8 : x + 8;
  if (p.kind() == "rank") {  // one of up to thousands: a small dot, no text
    return "<circle class=\"pt rank\" cx=\"" + F(x) + "\" cy=\"" + F(f.Y(p.rank())) +
           "\" r=\"1.5\">" + title + "</circle>";
  }
  if (p.rank() >= 0) {
    const double y = f.Y(p.rank());
    const double ty = p.kind() == "initiator" ? y + 16 : y - 8;
    return "<circle class=\"pt " + p.kind() + "\" cx=\"" + F(x) + "\" cy=\"" + F(y) +
           "\" r=\"6\">" + title + "</circle>" +
           Text(tx, ty, anchor, p.label() + " (rank " + std::to_string(p.rank()) + ")");
  }
  return "<line class=\"wave " + p.kind() + "\" x1=\"" + F(x) + "\" x2=\"" + F(x) + "\" y1=\"" +
         std::to_string(Frame::kTop) + "\" y2=\"" + F(Frame::kTop + f.ph()) + "\">" + title +
         "</line>" + Text(tx, Frame::kTop + 14 + 14 * nth_wave, anchor, p.label());
}

}  // namespace

std::string TimelineSvg(const v1::Timeline& tl, int width, int height, bool zoom_on_ranks,
                        const std::string& x_label) {
  Frame f{.width = width, .height = height, .world = std::max(1, tl.world_size()), .lo = 0,
          .hi = 1};
  std::vector<double> ranks;  // the ranks' first errors, in seconds
  for (const auto& p : tl.points()) {
    if (p.kind() == "rank") ranks.push_back(p.seconds());
  }
  const bool zoom = zoom_on_ranks && !ranks.empty();
  if (zoom) {  // from the 2nd percentile (the initiator's own node falls early) to the last
    std::sort(ranks.begin(), ranks.end());
    f.lo = ranks[ranks.size() / 50];
    f.hi = ranks.back();
  } else {
    for (const auto& p : tl.points()) {
      f.lo = std::min(f.lo, p.seconds());
      f.hi = std::max(f.hi, p.seconds());
    }
  }
  const double pad = std::max(0.5, (f.hi - f.lo) * 0.05);
  f.hi += pad;
  if (zoom) f.lo -= pad;
  std::string svg = "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
                    "\" role=\"img\">" + Axes(f, x_label);
  int waves = 0;
  for (const auto& p : tl.points()) {
    if (zoom && (p.seconds() < f.lo || p.seconds() > f.hi)) continue;
    svg += Mark(f, p, p.rank() >= 0 ? 0 : waves++);
  }
  return svg + "</svg>";
}

}  // namespace denpex::cli
