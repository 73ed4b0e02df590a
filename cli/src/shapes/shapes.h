// Collection shapes (`denpex eval --shapes`, docs/evaluation.md "Collection shapes"): an
// incident re-laid the way operators really collect logs (one merged file, an aggregator's
// stream, opaque names, container and journal prefixes, a terminal paste, partial or shared
// logs, rotation), so the harness can check that the engine's answer does not depend on the
// layout. Each shape is one row of AllShapes(): its name, what it destroys, what answer is
// then right, and the function that writes the copy. The harness may read the truth (the
// initiator's node for one-node and victims-only); the engine never does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::cli::shapes {

// One file of the canonical incident, by its path relative to the incident directory.
struct SourceFile {
  std::string rel;  // generic form, '/'-separated
  bool log = true;  // false: kept as it is (the checkpoint tree, binary files)
};

// What a shape reads: the canonical incident (never written to) and its truth.
struct Source {
  std::filesystem::path dir;
  const v1::Truth* truth = nullptr;
  std::vector<SourceFile> files;  // sorted by rel: node after node
  std::uint64_t seed = 0;         // a hash of the incident: every choice a shape makes
  int year = 1970;                // the job's year, for year-less stamps (from the truth)
  std::int64_t start_ns = 0;      // the job's start (truth), the time of lines before any stamp
};

// What a scorer needs to compare the copy's answer with the canonical one.
struct Relaid {
  bool applies = true;  // false: not applicable (one-node of a job-level truth); no copy
  // Names the copy may give a node of the canonical layout: lower-case new name -> the old
  // names it stands for (same-host: one name for every node; flat, renamed: opaque folders).
  std::map<std::string, std::vector<std::string>> node_aliases;
};

struct Shape {
  const char* name;
  const char* destroys;  // what information the copy loses
  const char* right;     // what answer is then right
  Status (*relay)(const Source& src, const std::filesystem::path& out, Relaid* relaid);
};

// Every shape, in the order `--shapes all` runs them.
const std::vector<Shape>& AllShapes();
const Shape* FindShape(std::string_view name);
// "all" or names (each item may itself be a comma-separated list); unknown names are a
// kInvalidArgument that lists the known ones.
Result<std::vector<const Shape*>> ParseShapes(const std::vector<std::string>& names);

// Reads `incident` and writes the shape's copy into `out` (created; must not exist yet).
Result<Relaid> Relay(const Shape& shape, const std::filesystem::path& incident,
                     const v1::Truth& truth, const std::filesystem::path& out);

}  // namespace denpex::cli::shapes
