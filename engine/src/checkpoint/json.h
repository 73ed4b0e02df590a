// JSON documents of checkpoints (safetensors headers, trainer_state.json, index and metadata
// files), read with the pull reader (denpex/common/json_reader.h): one pass, time linear in the
// document, nesting bounded, no tree — a trainer_state.json grows with its log_history, and a
// tree of a 27 MB one took 7.7 s and 328 MB.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "denpex/common/json_reader.h"
#include "denpex/common/status.h"

namespace denpex::engine::ckpt {

using denpex::JsonReader;

// Deeper nesting is refused (real headers and metadata nest a few levels).
inline constexpr std::size_t kMaxJsonDepth = JsonReader::kMaxDepth;

// Reads `text` as one JSON object, calling `field(key, reader)` for each top-level key; the
// callback reads the value it wants (or calls reader.Skip()) and must consume exactly one value.
// kInvalidInput, with the reader's error, when `text` is not one well-formed JSON object.
Status ReadJsonObject(std::string_view text,
                      const std::function<void(const std::string&, JsonReader&)>& field);

// ReadJsonObject that reads nothing: is `text` one well-formed JSON object?
Status CheckJsonObject(std::string_view text);

}  // namespace denpex::engine::ckpt
