// Private pieces of scenario loading (scenario.cc): field paths, source locations for error
// messages, --set overrides, and defaults plus validation. Every user-facing error reads
//   <file>:<line>:<column>: <what>; hint: <what to do>
// or, when a --set override caused it,
//   --set <path>=<value>: <what>; hint: <what to do>
#pragma once

#include <google/protobuf/text_format.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/scenario.pb.h"

namespace denpex::sim {

// One step of a field path: `faults[0]` is {"faults", 0}; `job` is {"job", -1}.
struct PathSegment {
  std::string name;
  int index = -1;
};

// Parses "job.nodes", "faults[0].rank". Returns an empty vector for a malformed path.
std::vector<PathSegment> ParseFieldPath(std::string_view path);
std::string FormatFieldPath(const std::vector<PathSegment>& path);

// Turns field paths into the locations users see. Owns nothing but the source name, the
// override list and a view of the parse-info tree (which must outlive it).
class Locator {
 public:
  using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;
  Locator(std::string source, const ParseInfoTree* tree)
      : source_(std::move(source)), tree_(tree) {}

  // Remembers that `--set <arg>` set the field at canonical `path`.
  void RecordOverride(const std::string& path, const std::string& arg) { overrides_[path] = arg; }

  // Where the field at `path` was written: the override that set it, else its file:line:col,
  // else that of its deepest written ancestor, else <file>:1:1.
  std::string Where(std::string_view path) const;

  // An error at the first of `paths` that an override set, else at the first path.
  Status Error(std::initializer_list<std::string_view> paths, std::string_view what,
               std::string_view hint) const;
  Status Error(std::string_view path, std::string_view what, std::string_view hint) const {
    return Error({path}, what, hint);
  }
  const std::string& source() const { return source_; }

 private:
  const std::string* OverrideFor(std::string_view path) const;
  std::string source_;
  const ParseInfoTree* tree_;
  std::map<std::string, std::string, std::less<>> overrides_;
};

// Applies one `field.path=value` override. On success stores the canonical path.
Status ApplyOverride(std::string_view arg, v1::Scenario* scenario, std::string* canonical_path);

// Fills the documented defaults (docs/scenario_format.md) and checks every rule. Faults'
// rank and at_fraction stay absent when absent: the simulator draws them from the seed.
Status FillDefaultsAndValidate(v1::Scenario* scenario, const Locator& locator);

// scenario_validate_launch.cc: the async error handling, blocking wait and heartbeat knobs of
// `timeouts` (needs format.torch filled in), realism.interleaved_line_rate (needs layout) and the
// RAS poller.
Status CheckErrorHandling(v1::Scenario* scenario, const Locator& locator);
Status CheckInterleaving(const v1::Scenario& scenario, const Locator& locator);
// nccl_ras: the poller's knobs, and the NCCL release they need (format.nccl filled in).
Status CheckNcclRas(const v1::Scenario& scenario, const Locator& locator);

// The values of the enum fields named `field_name` reachable from `root` (a file's top-level
// message), for suggestions.
std::vector<std::string> EnumValueNamesForField(const google::protobuf::Descriptor* root,
                                                std::string_view field_name);
// "job" for denpex.v1.Job under denpex.v1.Scenario: the path users write for a message type.
std::string PathForMessageType(const google::protobuf::Descriptor* root,
                               std::string_view full_name);

// Parses `text` into `msg` strictly: invalid UTF-8, unknown fields and unknown enum values are
// errors. The first one is kInvalidInput "<source>:<line>:<column>: <what>; hint: <what to do>"
// (a suggestion for a misspelt name; `doc` the format's documentation). `tree` receives where
// each field was written.
Status ParseTextProtoStrict(std::string_view text, std::string_view source,
                            google::protobuf::Message* msg,
                            google::protobuf::TextFormat::ParseInfoTree* tree,
                            std::string_view doc);

}  // namespace denpex::sim
