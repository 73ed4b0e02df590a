// The canary's plan (denpex/engine/canary.h): the drained nodes, the checkpoint to resume from,
// the command's placeholders and environment.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/engine/canary.h"
#include "denpex/engine/checkpoint.h"

namespace denpex::engine {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> Targets(const v1::Diagnosis& diagnosis, std::string_view action) {
  std::set<std::string> nodes;
  for (const v1::Precondition& p : diagnosis.recovery().preconditions()) {
    if (p.action() == action && !p.target().empty()) nodes.insert(p.target());
  }
  return {nodes.begin(), nodes.end()};
}

}  // namespace

std::vector<std::string> DrainedNodes(const v1::Diagnosis& diagnosis) {
  return Targets(diagnosis, "drain_node");
}
std::vector<std::string> CanaryNodes(const v1::Diagnosis& diagnosis) {
  return Targets(diagnosis, "run_canary");
}

namespace {

std::string DecisionName(v1::CheckpointDecision d) {
  std::string name = v1::CheckpointDecision_Name(d);
  return name.starts_with("CHECKPOINT_DECISION_") ? name.substr(20) : name;
}

// The chosen checkpoint of an outcome: `path` in `dir` ("." is the directory itself).
fs::path Chosen(const fs::path& dir, const std::string& path) {
  return path.empty() || path == "." ? dir : dir / path;
}

}  // namespace

Result<ResumePoint> FindResumePoint(const v1::Diagnosis& diagnosis, const fs::path& incident,
                                    const fs::path& checkpoint_dir) {
  ResumePoint r;
  if (!checkpoint_dir.empty()) {
    auto report =
        VerifyCheckpointDir(checkpoint_dir, {.world_size = diagnosis.input().world_size()});
    if (!report.ok()) return report.status();
    if (report->outcome.decision() != v1::CHECKPOINT_DECISION_RESUME) {
      return Status::InvalidArgument("--checkpoint " + checkpoint_dir.string() +
                                     ": no checkpoint there is safe to resume from (" +
                                     DecisionName(report->outcome.decision()) + ": " +
                                     report->summary + "); `denpex checkpoint verify " +
                                     checkpoint_dir.string() +
                                     "` lists why; give a directory with a valid checkpoint");
    }
    r.dir = checkpoint_dir;
    r.checkpoint = Chosen(checkpoint_dir, report->outcome.path());
    r.step = report->outcome.step();
    r.source = "--checkpoint";
    return r;
  }
  const v1::CheckpointOutcome& c = diagnosis.checkpoint();
  if (c.decision() != v1::CHECKPOINT_DECISION_RESUME) {
    return Status::InvalidArgument(
        "the diagnosis's checkpoint decision is " + DecisionName(c.decision()) +
        (c.summary().empty() ? std::string() : " (" + c.summary() + ")") +
        ": it names no checkpoint safe to resume from; give --checkpoint DIR (verified again "
        "before the canary starts)");
  }
  fs::path dir = c.dir();
  if (dir.empty()) {
    return Status::InvalidArgument(
        "the diagnosis's checkpoint outcome says RESUME but names no directory; give --checkpoint "
        "DIR");
  }
  if (dir.is_relative()) dir = incident / dir;
  r.dir = dir;
  r.checkpoint = Chosen(dir, c.path());
  r.step = c.step();
  r.source = "diagnosis";
  std::error_code ec;
  if (!fs::exists(r.checkpoint, ec)) {
    return Status::InvalidArgument(
        r.checkpoint.string() +
        ": the diagnosis's checkpoint is not there (moved, or the diagnosis was made elsewhere); "
        "give --checkpoint DIR");
  }
  return r;
}

namespace {

std::vector<std::pair<std::string, std::string>> Values(const CanaryShape& s) {
  return {{"exclude", s.exclude},
          {"nodes", s.nodes},
          {"include", s.include},
          {"checkpoint", s.resume.checkpoint.string()},
          {"checkpoint_dir", s.resume.dir.string()},
          {"step", std::to_string(s.resume.step)},
          {"steps", std::to_string(s.steps)},
          {"until", std::to_string(s.resume.step + s.steps)},
          {"out", s.out.string()}};
}

}  // namespace

std::vector<std::string> ExpandCanaryCommand(const std::vector<std::string>& argv,
                                             const CanaryShape& shape) {
  const auto values = Values(shape);
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& a : argv) {
    std::string s;
    for (std::size_t i = 0; i < a.size();) {
      bool replaced = false;
      if (a[i] == '{') {
        const std::size_t close = a.find('}', i);
        if (close != std::string::npos) {
          const std::string_view name(a.data() + i + 1, close - i - 1);
          for (const auto& [key, value] : values) {
            if (name != key) continue;
            s += value;
            i = close + 1;
            replaced = true;
            break;
          }
        }
      }
      if (!replaced) s += a[i++];
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> CanaryEnvironment(const CanaryShape& shape) {
  static constexpr std::pair<std::string_view, const char*> kNames[] = {
      {"exclude", "DENPEX_CANARY_EXCLUDE"},
      {"nodes", "DENPEX_CANARY_NODES"},
      {"include", "DENPEX_CANARY_INCLUDE"},
      {"checkpoint", "DENPEX_RESUME_CHECKPOINT"},
      {"checkpoint_dir", "DENPEX_RESUME_CHECKPOINT_DIR"},
      {"step", "DENPEX_RESUME_STEP"},
      {"steps", "DENPEX_CANARY_STEPS"},
      {"until", "DENPEX_CANARY_UNTIL"},
      {"out", "DENPEX_CANARY_OUT"}};
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [key, value] : Values(shape)) {
    for (const auto& [name, var] : kNames) {
      if (name == key) env.emplace_back(var, value);
    }
  }
  return env;
}

}  // namespace denpex::engine
