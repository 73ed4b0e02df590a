// Small JSON documents of checkpoints (safetensors headers, trainer_state.json, index and
// metadata files), parsed with protobuf's JSON parser into a google.protobuf.Struct after one
// linear pass has bounded their nesting.
#pragma once

#include <google/protobuf/struct.pb.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "denpex/common/json_reader.h"
#include "denpex/common/status.h"

namespace denpex::engine::ckpt {

using denpex::JsonReader;

// Deeper nesting is refused before parsing (real headers and metadata nest a few levels).
inline constexpr std::size_t kMaxJsonDepth = JsonReader::kMaxDepth;

// kInvalidInput when `text` is not a JSON object, nests deeper than kMaxJsonDepth or ends
// inside a value; time linear in its size.
Result<google::protobuf::Struct> ParseJsonObject(std::string_view text);

// A field that is a whole number in [0, 2^53]; nullopt otherwise.
std::optional<std::int64_t> JsonCount(const google::protobuf::Value& v);
std::optional<std::int64_t> JsonCount(const google::protobuf::Struct& s, std::string_view key);
const google::protobuf::Value* JsonField(const google::protobuf::Struct& s, std::string_view key);


}  // namespace denpex::engine::ckpt
