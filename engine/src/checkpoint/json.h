// Small JSON documents of checkpoints (safetensors headers, trainer_state.json, index and
// metadata files), parsed with protobuf's JSON parser into a google.protobuf.Struct.
#pragma once

#include <google/protobuf/struct.pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "denpex/common/status.h"

namespace denpex::engine::ckpt {

// kInvalidInput when `text` is not a JSON object.
Result<google::protobuf::Struct> ParseJsonObject(std::string_view text);

// A field that is a whole number in [0, 2^53]; nullopt otherwise.
std::optional<std::int64_t> JsonCount(const google::protobuf::Value& v);
std::optional<std::int64_t> JsonCount(const google::protobuf::Struct& s, std::string_view key);
const google::protobuf::Value* JsonField(const google::protobuf::Struct& s, std::string_view key);

}  // namespace denpex::engine::ckpt
