// What one format reader concludes about one file (or slice of a file): a verdict and the
// evidence, phrased for an operator (file, offset, expected vs actual).
#pragma once

#include <string>
#include <utility>

#include "denpex/engine/checkpoint.h"

namespace denpex::engine::ckpt {

struct Finding {
  CheckpointVerdict verdict = CheckpointVerdict::kValid;
  std::string detail;

  bool ok() const { return verdict == CheckpointVerdict::kValid; }
  // A definitive failure: the candidate is rejected whatever else holds.
  bool rejects() const {
    return verdict != CheckpointVerdict::kValid && verdict != CheckpointVerdict::kInconclusive;
  }
};

inline Finding Valid(std::string detail) { return {CheckpointVerdict::kValid, std::move(detail)}; }
inline Finding Incomplete(std::string detail) {
  return {CheckpointVerdict::kIncomplete, std::move(detail)};
}
inline Finding Corrupt(std::string detail) {
  return {CheckpointVerdict::kCorrupt, std::move(detail)};
}
inline Finding Incompatible(std::string detail) {
  return {CheckpointVerdict::kIncompatible, std::move(detail)};
}
inline Finding Inconclusive(std::string detail) {
  return {CheckpointVerdict::kInconclusive, std::move(detail)};
}

// A read error becomes INCONCLUSIVE: an unreadable file is not evidence either way.
inline Finding Unreadable(const std::string& what, const Status& st) {
  return Inconclusive(what + ": unreadable (" + st.message() + ")");
}

}  // namespace denpex::engine::ckpt
