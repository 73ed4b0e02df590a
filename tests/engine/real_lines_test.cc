// The corpus of real lines (tests/data/real_lines, its README the format): every block, as a
// file of its own in a directory of its own, through `denpex events` (engine::WriteEvents), must
// yield the events its header expects. A block marked `known-miss` must still miss (so the list
// of what the engine does not read yet stays exact); the recognition rate per family is printed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/engine/engine.h"
#include "support/json_logs.h"

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
  std::string shape;        // `# shape:` how the reporter's paste left the lines
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
    if (key == "shape") b->shape = value;
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

// A collector's stamp (CRI, journald, `kubectl logs --timestamps`) is when the line was collected,
// not the time the line says: under one, an `expect` line's time keys are not compared.
std::string WithoutTimes(std::string_view expect) {
  std::istringstream words{std::string(expect)};
  std::string out, word;
  while (words >> word) {
    if (word.starts_with("time=") || word.starts_with("yearless_time=")) continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

Outcome ReadBodyEvents(const Block& b, const std::string& body, const fs::path& scratch, bool drop_times) {
  fs::create_directories(scratch);  // holds console.log alone: each block overwrites the last
  {
    std::ofstream out(scratch / "console.log", std::ios::binary);
    out << body;
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
    const std::string expect = drop_times ? WithoutTimes(e) : e;
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return Matches(l, expect); });
  });
  return o;
}

Outcome ReadBlockEvents(const Block& b, const fs::path& scratch) { return ReadBodyEvents(b, b.body, scratch, false); }

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
  fs::remove_all(scratch);
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


// ---- Prefix invariance -------------------------------------------------------------------------
// Every block read today, under each prefix shape a paste or a collector puts before its lines,
// yields the same events: every `expect` line still met, and the same families and kinds, as many
// of each, on every block, a one-line title as much as a long dump.

struct PrefixShape {
  std::string_view name;
  bool collected;           // a collector's stamp: it replaces the lines' own times
  bool blank_lines_too;     // whether an empty line gets the prefix as well
  bool paste;               // the paste's own layer (acts last: outside a quote, after a wrap)
  std::function<std::string(std::size_t i, std::string_view line)> apply;
};

const PrefixShape kPrefixShapes[] = {
    {"quoted `> `", false, false, true,
     [](std::size_t, std::string_view l) { return "> " + std::string(l); }},
    {"indented 4", false, false, true,
     [](std::size_t, std::string_view l) { return "    " + std::string(l); }},
    {"numbered `[n] `", false, false, false,
     [](std::size_t i, std::string_view l) {
       return "[" + std::to_string(1000 + i) + "] " + std::string(l);
     }},
    {"CRI", true, true, false,
     [](std::size_t i, std::string_view l) {
       return "2026-03-01T10:00:" + std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + ".123456789Z stderr F " +
              std::string(l);
     }},
    {"journald short", true, true, false,
     [](std::size_t i, std::string_view l) {
       return "Mar  1 10:00:" + std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + " gpu-node-07 python3[4242]: " +
              std::string(l);
     }},
    {"kubectl --timestamps", true, true, false,
     [](std::size_t i, std::string_view l) {
       return "2026-03-01T10:00:" + std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + ".123456789Z " +
              std::string(l);
     }},
    {"kubectl --prefix --timestamps", true, true, false,
     [](std::size_t i, std::string_view l) {
       return "[pod/llama-worker-7/pytorch] 2026-03-01T10:00:" +
              std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + ".123456789Z " +
              std::string(l);
     }},
    {"Loki logcli", true, true, false,
     [](std::size_t i, std::string_view l) {
       // `logcli query`'s default output: its RFC 3339 stamp (seconds, the local zone), the
       // stream's labels padded to the widest, the line with its spaces trimmed. One stream: a
       // block is one process's lines (a query over several streams is read as a stream per
       // label set, ingest/streams.h).
       while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
       while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r'))
         l.remove_suffix(1);
       const std::string labels = R"({job="trainer", pod="llama-worker-0"})";
       return "2026-03-01T11:00:" + std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) +
              "+01:00 " + labels + std::string(40 - labels.size(), ' ') + " " + std::string(l);
     }},
    {"stern", false, true, false,
     [](std::size_t, std::string_view l) { return "llama-worker-3 pytorch " + std::string(l); }},
    {"docker compose logs", false, true, false,
     [](std::size_t, std::string_view l) { return "trainer-1            | " + std::string(l); }},
    {"journalctl -o json", true, true, false,
     [](std::size_t i, std::string_view l) {
       std::string record = denpex::testing::JournalRecord(
           l, 1772359200000000LL + static_cast<long long>(i % 60) * 1000000, "gpu-node-07",
           "python3", 4242);
       record.pop_back();  // the shape's lines are joined with their newlines
       return record;
     }},
    {"Docker json-file", true, true, false,
     [](std::size_t i, std::string_view l) {
       std::string record =
           denpex::testing::DockerRecord(l, true, "stderr",
                                         "2026-03-01T10:00:" + std::string(i % 60 < 10 ? "0" : "") +
                                             std::to_string(i % 60) + ".12345Z");
       record.pop_back();  // the shape's lines are joined with their newlines
       return record;
     }},
};

// Blocks (by path under the corpus) that a shape defeats although they are long enough to teach
// it, each with the reason. The test asserts they still miss, so the list stays exact.
struct ShapeMiss {
  std::string_view block, shape, reason;
};
const std::vector<ShapeMiss> kShapeMisses = {
#include "real_lines_shape_misses.inc"
};

// The block's lines, `\n`-separated (the last may be unterminated).
std::vector<std::string_view> Lines(std::string_view body) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at <= body.size();) {
    std::size_t nl = body.find('\n', at);
    if (nl == std::string_view::npos) nl = body.size();
    out.push_back(body.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// A paste's own layers act last, after the program, a collector or a log viewer wrote the lines:
// a Markdown reply's `> ` quote stays outermost, and a terminal's hard wrap (`# shape: ...
// hard-wrapped ... at N columns`: its lines are cut at the longest one's width) cuts the lines as
// they were stamped or numbered. So a collector's or a viewer's shape goes inside the quote of a
// block that every line quotes, and a wrapped block is re-joined, shaped and wrapped again at its
// width; a paste's shape (quoting, indentation) goes outside both.
std::size_t WrapWidth(const Block& b, const std::vector<std::string_view>& lines) {
  const std::size_t wrapped = b.shape.find("hard-wrapped");
  if (wrapped == std::string::npos || b.shape.find(" columns", wrapped) == std::string::npos) return 0;
  std::size_t width = 0;
  for (std::string_view l : lines) width = std::max(width, l.size());
  return width;
}

bool EveryLineQuoted(const std::vector<std::string_view>& lines) {
  return std::all_of(lines.begin(), lines.end(), [](std::string_view l) { return l.empty() || l.starts_with('>'); });
}

std::string Shaped(const Block& b, const PrefixShape& shape) {
  std::vector<std::string_view> lines = Lines(b.body);
  const bool last_terminated = !b.body.empty() && b.body.back() == '\n';
  if (last_terminated) lines.pop_back();
  const bool inside_quote = !shape.paste && EveryLineQuoted(lines);
  const std::size_t width = shape.paste ? 0 : WrapWidth(b, lines);
  std::vector<std::string> joined;  // the lines as the program wrote them
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::string line(lines[k]);
    while (width > 0 && lines[k].size() == width && k + 1 < lines.size()) line += lines[++k];
    joined.push_back(std::move(line));
  }
  std::string out;
  for (std::size_t i = 0; i < joined.size(); ++i) {
    std::string_view line = joined[i];
    std::string quote;
    if (inside_quote && line.starts_with('>')) {
      quote = line.starts_with("> ") ? "> " : ">";
      line.remove_prefix(quote.size());
    }
    const std::string shaped =
        line.empty() && !shape.blank_lines_too ? std::string(joined[i]) : quote + shape.apply(i, line);
    std::string_view rest = shaped;
    for (; width > 0 && rest.size() > width; rest.remove_prefix(width)) out += std::string(rest.substr(0, width)) + '\n';
    out += rest;
    if (i + 1 < joined.size() || last_terminated) out += '\n';
  }
  return out;
}

// The families and kinds of the events, sorted (a multiset).
std::vector<std::string> Kinds(const std::string& events) {
  std::vector<std::string> out;
  std::istringstream in(events);
  for (std::string line; std::getline(in, line);) {
    auto value = [&](std::string_view key) {
      const std::string k = "\"" + std::string(key) + "\":\"";
      const std::size_t at = line.find(k);
      if (at == std::string::npos) return std::string();
      const std::size_t from = at + k.size();
      return line.substr(from, line.find('"', from) - from);
    };
    out.push_back(value("family") + "/" + value("kind"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct ShapeResult {
  int asserted = 0, held = 0;
  std::vector<std::string> failures;                   // asserted and broken, not in kShapeMisses
  std::vector<std::string> listed_misses_now_read;     // in kShapeMisses but read now
};

ShapeResult RunShape(const std::vector<Block>& blocks, const std::vector<Outcome>& plain, const PrefixShape& shape,
                     const fs::path& scratch) {
  ShapeResult r;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Block& b = blocks[k];
    if (b.known_miss) continue;
    const std::string rel = fs::relative(b.path, kCorpus).string();
    const Outcome o = ReadBodyEvents(b, Shaped(b, shape), scratch, shape.collected);
    const bool same = o.all_expects && Kinds(o.events) == Kinds(plain[k].events);
    const bool listed = std::any_of(kShapeMisses.begin(), kShapeMisses.end(),
                                    [&](const ShapeMiss& m) { return m.block == rel && m.shape == shape.name; });
    ++r.asserted;
    r.held += same;
    if (listed && same) r.listed_misses_now_read.push_back(rel);
    if (!listed && !same) r.failures.push_back(rel + "\n" + o.events);
  }
  return r;
}

TEST(RealLines, EveryBlockYieldsTheSameEventsUnderEveryPrefixShape) {
  const std::vector<Block> blocks = LoadCorpus();
  ASSERT_FALSE(blocks.empty());
  const fs::path base = fs::temp_directory_path() / ("denpex_real_lines_shapes_" + std::to_string(::getpid()));
  std::vector<Outcome> plain;
  for (const Block& b : blocks) plain.push_back(ReadBlockEvents(b, base / "plain"));
  std::vector<std::future<ShapeResult>> runs;
  for (std::size_t s = 0; s < std::size(kPrefixShapes); ++s) {
    runs.push_back(std::async(std::launch::async, RunShape, std::cref(blocks), std::cref(plain), std::cref(kPrefixShapes[s]),
                              base / std::to_string(s)));
  }
  std::ostringstream table;
  table << "| shape | blocks asserted | same events |\n|---|---|---|\n";
  for (std::size_t s = 0; s < runs.size(); ++s) {
    const ShapeResult r = runs[s].get();
    const PrefixShape& shape = kPrefixShapes[s];
    table << "| " << shape.name << " | " << r.asserted << " | " << r.held << " |\n";
    for (const std::string& f : r.failures) ADD_FAILURE() << shape.name << ": " << f;
    for (const std::string& m : r.listed_misses_now_read) {
      ADD_FAILURE() << shape.name << ": " << m << " is read now: drop it from real_lines_shape_misses.inc";
    }
  }
  fs::remove_all(base);
  std::cout << table.str();
}

}  // namespace
}  // namespace denpex::engine
