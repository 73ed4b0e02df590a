// `denpex freeze` (docs/freeze.md): a resolved incident copied into a corpus entry with its host
// names, addresses, users, project paths, job and pod ids, e-mail addresses and secrets replaced
// consistently through the team's name map (kept outside the entry), and an expected outcome
// drafted from the engine's diagnosis until a person confirms or corrects it (`--confirm`).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/freeze.pb.h"

namespace denpex::freeze {

struct FreezeOptions {
  std::filesystem::path incident;  // read only, never written
  std::filesystem::path entry;     // CORPUS/<name>: created; must not exist or be empty
  std::filesystem::path map;       // empty: <entry>.map.json beside the entry
  int threads = 0;
  std::string drafted_by;  // "denpex freeze <version>"
};

struct FreezeReport {
  std::filesystem::path map;  // where the map was written
  int files = 0;              // files in the entry's incident/
  int rewritten = 0;          // text files (names replaced where any stood)
  int recompressed = 0;       // compressed logs decompressed, rewritten and compressed again
  int binary_rewritten = 0;   // pickles with their names replaced in place, lengths kept
  std::size_t replacements = 0;
  // What was copied as it was and still holds originals, or could not be checked:
  // "incident/checkpoints/step_10.pt: zip archive copied unchanged; it holds 2 host names".
  std::vector<std::string> not_anonymised;
  std::vector<std::string> notes;  // links left out, ...
  // How many originals of each kind this incident named ("hosts", "ipv4", ...).
  std::vector<std::pair<std::string, int>> names;
  // The frozen copy's diagnosis equals the original's once its names are mapped back.
  bool diagnosis_identical = false;
  std::string difference;  // the first differing line when not
};

Result<FreezeReport> Freeze(const FreezeOptions& options);

// The diagnosis as JSON, comparable across the original and the frozen copy: the incident
// directory written as `<incident>`, the byte count (which a replacement of another length
// changes) left out.
std::string ComparableDiagnosis(v1::Diagnosis d, const std::filesystem::path& incident);

struct ConfirmOptions {
  std::filesystem::path entry;
  std::filesystem::path map;  // to map a real host name given to --node; empty: <entry>.map.json
  std::optional<std::string> owner;          // OWNER_* or its short name (`host`)
  std::optional<std::string> failure_class;  // FAILURE_CLASS_* or its short name
  std::optional<int> rank;
  std::optional<std::string> node;          // a real name (mapped through the map) or a replacement
  std::optional<std::string> checkpoint;    // PATH[@STEP] or `none`
  std::optional<std::string> resumed_from;  // PATH[@STEP]
  std::vector<std::string> recovery;
  std::optional<double> operator_minutes;
  std::optional<std::string> investigation_started;  // RFC 3339
  std::optional<std::string> investigation_ended;
  std::optional<std::string> process_owner;
  std::optional<std::string> process_failure_class;
  std::optional<std::string> notes;
  std::string now;  // RFC 3339; empty: the wall clock
};

// Corrects and confirms a drafted entry's expected.json (draft -> false).
Status Confirm(const ConfirmOptions& options);

}  // namespace denpex::freeze
