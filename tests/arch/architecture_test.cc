// The architecture's hard rules, checked on the source tree (the build enforces the link
// graph too: cmake/CheckArchitecture.cmake).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

struct Hit {
  std::string file;
  int line;
  std::string text;
};

// Lines of C++ sources under `dir` matching `re`, ignoring // comment lines.
std::vector<Hit> Grep(const fs::path& dir, const std::regex& re) {
  std::vector<Hit> hits;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".in")) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
      if (std::regex_search(line, re)) hits.push_back({e.path().string(), n, line});
    }
  }
  return hits;
}

std::string Describe(const std::vector<Hit>& hits) {
  std::ostringstream os;
  for (const auto& h : hits) os << h.file << ":" << h.line << ": " << h.text << "\n";
  return os.str();
}

const fs::path kRoot = DENPEX_SOURCE_DIR;

// The simulator's stages under sim/src, in the order they may include one another: a file
// includes headers of its own folder (by bare name) and of the folders before it (by
// "<stage>/<name>"), never of a later one. Files directly under sim/src (simulator.cc) run
// the stages and may include them all.
const std::vector<std::string> kSimStages = {"model", "format", "scenario", "output", "preflight"};

int StageIndex(const std::string& stage) {
  const auto it = std::find(kSimStages.begin(), kSimStages.end(), stage);
  return it == kSimStages.end() ? -1 : static_cast<int>(std::distance(kSimStages.begin(), it));
}

std::string StageOrder() {
  std::string order;
  for (const auto& stage : kSimStages) order += (order.empty() ? "" : " -> ") + stage;
  return order;
}

// Every quoted include under `src` (a copy of sim/src's layout) that runs against the stage
// order, one message per line: "<file>:<line>: <stage>/ must not include <path> (...)".
std::vector<std::string> SimStageViolations(const fs::path& src) {
  const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> problems;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".in")) continue;
    const fs::path rel = fs::relative(e.path(), src);
    if (rel.parent_path().empty()) continue;  // sim/src/simulator.cc: the pipeline itself
    const std::string stage = rel.begin()->string();
    const int own = StageIndex(stage);
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string path = m[1].str();
      if (path.rfind("denpex/", 0) == 0) continue;  // public headers of linked libraries
      std::string problem;
      if (own < 0) {
        problem = "is in no stage folder (use one of " + StageOrder() + ")";
      } else if (path.find("..") != std::string::npos) {
        problem = "reaches " + path + " through '..' (name it as <stage>/<file>)";
      } else if (const auto slash = path.find('/'); slash != std::string::npos) {
        const std::string target = path.substr(0, slash);
        const int other = StageIndex(target);
        if (other < 0) {
          problem = "includes " + path + ", which is in no stage folder";
        } else if (other > own) {
          problem = "includes " + path + ": " + stage + "/ comes before " + target +
                    "/ (stages in order: " + StageOrder() +
                    "); move what it needs down, or the code up";
        }
      }
      if (!problem.empty()) {
        problems.push_back("sim/src/" + rel.generic_string() + ":" + std::to_string(n) + ": " +
                           problem);
      }
    }
  }
  std::sort(problems.begin(), problems.end());
  return problems;
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(Architecture, EngineNeverIncludesSimulatorHeaders) {
  const auto hits = Grep(kRoot / "engine", std::regex(R"(#\s*include\s*["<](denpex/)?sim/)"));
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(Architecture, EngineNeverOpensTruthJson) {
  const auto hits = Grep(kRoot / "engine", std::regex(R"(truth\.json)"));
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

// analyze says what it found as reason template ids and arguments (analyze/reason.h); report
// holds the templates' words and renders them, and analyze never reaches back into report.
TEST(Architecture, AnalyzeNeverIncludesReport) {
  const auto hits =
      Grep(kRoot / "engine" / "src" / "analyze", std::regex(R"(#\s*include\s*["<]report/)"));
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(Architecture, ScorerIncludesOnlyProtoAndCommon) {
  const auto hits =
      Grep(kRoot / "scorer", std::regex(R"(#\s*include\s*["<]denpex/(sim|engine|cli)/)"));
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(Architecture, SimulatorNeverIncludesEngineHeaders) {
  const auto hits = Grep(kRoot / "sim", std::regex(R"(#\s*include\s*["<]denpex/(engine|scorer)/)"));
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(Architecture, SimulatorStagesIncludeOnlyThemselvesAndEarlierStages) {
  const auto problems = SimStageViolations(kRoot / "sim" / "src");
  EXPECT_TRUE(problems.empty()) << Lines(problems);
}

TEST(Architecture, SimulatorStageCheckNamesAnIncludeOfALaterStage) {
  denpex::testing::TempDir dir;
  const fs::path src = dir.path() / "src";
  fs::create_directories(src / "model");
  fs::create_directories(src / "output");
  std::ofstream(src / "model" / "job.cc") << "#include \"job.h\"\n#include \"output/writer.h\"\n";
  std::ofstream(src / "output" / "writer.cc") << "#include \"model/job.h\"\n";
  std::ofstream(src / "simulator.cc") << "#include \"output/writer.h\"\n";
  const auto problems = SimStageViolations(src);
  ASSERT_EQ(problems.size(), 1u) << Lines(problems);
  EXPECT_EQ(
      problems[0],
      "sim/src/model/job.cc:2: includes output/writer.h: model/ comes before output/ "
      "(stages in order: model -> format -> scenario -> output -> preflight); move what it needs "
      "down, or the code up");
}

}  // namespace
