// The corpus of real lines (tests/data/real_lines, its README the format): every block, as a
// file of its own in a directory of its own, through `denpex events` (engine::WriteEvents), must
// yield the events its header expects. A block marked `known-miss` must still miss (so the list
// of what the engine does not read yet stays exact); the recognition rate per family is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "denpex/engine/engine.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(DENPEX_SOURCE_DIR) / "tests/data/real_lines";

struct Block {
  fs::path path;
  std::string family;       // its folder
  std::string source;
  std::vector<std::string> expects;  // `key=value ...` per expected event
  bool known_miss = false;
  std::string body;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Header lines `# key: value` up to a line `---`; the rest, byte for byte, is the block.
bool ReadBlock(const fs::path& path, Block* b, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::size_t sep = text.find("\n---\n");
  if (sep == std::string::npos) {
    *error = "no `---` line";
    return false;
  }
  b->path = path;
  b->family = path.parent_path().filename().string();
  b->body = text.substr(sep + 5);
  std::string_view head(text.data(), sep + 1);
  while (!head.empty()) {
    const std::size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl + 1);
    if (!line.starts_with("# ")) continue;
    line.remove_prefix(2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = Trim(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (key == "source") b->source = value;
    if (key == "expect") b->expects.emplace_back(value);
    if (key == "known-miss") b->known_miss = true;
  }
  if (b->source.empty() || b->expects.empty()) {
    *error = "no `# source:` or no `# expect:`";
    return false;
  }
  return true;
}

// `"key":value` (a number, followed by `,` or `}`) or `"key":"value...` (a string with that start).
bool HasField(std::string_view json, std::string_view key, std::string_view value) {
  const std::string k = "\"" + std::string(key) + "\":";
  for (std::size_t at = json.find(k); at != std::string_view::npos; at = json.find(k, at + 1)) {
    std::string_view v = json.substr(at + k.size());
    if (v.starts_with("\"")) {
      if (v.substr(1).starts_with(value)) return true;
    } else if (v.starts_with(value) && v.size() > value.size() && (v[value.size()] == ',' || v[value.size()] == '}')) {
      return true;
    }
  }
  return false;
}

bool Matches(std::string_view json, std::string_view expect) {
  std::istringstream words{std::string(expect)};
  std::string word;
  while (words >> word) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos) return false;
    if (!HasField(json, word.substr(0, eq), word.substr(eq + 1))) return false;
  }
  return true;
}

struct Outcome {
  bool family_seen = false;  // some event of the block's family
  bool all_expects = false;  // every `expect` line matched by some event
  std::string events;
};

Outcome ReadBlockEvents(const Block& b, const fs::path& scratch) {
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  {
    std::ofstream out(scratch / "console.log", std::ios::binary);
    out << b.body;
  }
  std::ostringstream events;
  Outcome o;
  if (!WriteEvents(scratch, {.threads = 1}, events).ok()) return o;
  o.events = events.str();
  std::vector<std::string> lines;
  std::istringstream in(o.events);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::string fam = "\"family\":\"" + b.family + "\"";
  o.family_seen = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(fam) != std::string::npos; });
  o.all_expects = std::all_of(b.expects.begin(), b.expects.end(), [&](const std::string& e) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return Matches(l, e); });
  });
  return o;
}

std::vector<Block> LoadCorpus() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpus)) {
    if (entry.is_regular_file() && entry.path().extension() == ".txt") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Block> blocks;
  for (const fs::path& p : paths) {
    Block b;
    std::string error;
    EXPECT_TRUE(ReadBlock(p, &b, &error)) << p << ": " << error;
    blocks.push_back(std::move(b));
  }
  return blocks;
}

TEST(RealLines, EveryBlockYieldsWhatItsHeaderExpects) {
  const std::vector<Block> blocks = LoadCorpus();
  ASSERT_FALSE(blocks.empty());
  const fs::path scratch = fs::temp_directory_path() / ("denpex_real_lines_" + std::to_string(::getpid()));
  struct Count {
    int blocks = 0, family = 0, full = 0;
    std::map<std::string, int> sources;
  };
  std::map<std::string, Count> per_family;
  for (const Block& b : blocks) {
    const Outcome o = ReadBlockEvents(b, scratch);
    Count& c = per_family[b.family];
    ++c.blocks;
    c.family += o.family_seen;
    c.full += o.all_expects;
    ++c.sources[b.source];
    const std::string rel = fs::relative(b.path, kCorpus).string();
    if (b.known_miss) {
      EXPECT_FALSE(o.all_expects) << rel << " is read now: drop its `known-miss` line";
    } else {
      EXPECT_TRUE(o.all_expects) << rel << " (" << b.source << ") yielded:\n" << o.events;
    }
  }
  fs::remove_all(scratch);
  std::ostringstream table;
  table << "| family | blocks | sources | family seen | every expected event |\n|---|---|---|---|---|\n";
  int total = 0, full = 0;
  for (const auto& [family, c] : per_family) {
    table << "| " << family << " | " << c.blocks << " | " << c.sources.size() << " | " << c.family << " | " << c.full << " ("
          << (100 * c.full + c.blocks / 2) / c.blocks << " %) |\n";
    total += c.blocks;
    full += c.full;
  }
  table << "| all | " << total << " | | | " << full << " |\n";
  std::cout << table.str();
}

}  // namespace
}  // namespace denpex::engine
