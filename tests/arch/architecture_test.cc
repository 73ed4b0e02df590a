// The architecture's hard rules, checked on the source tree (the build enforces the link
// graph too: cmake/CheckArchitecture.cmake).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace
