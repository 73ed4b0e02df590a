#include "checkpoint/json.h"

#include <cmath>

#include "denpex/proto/json_io.h"

namespace denpex::engine::ckpt {

Result<google::protobuf::Struct> ParseJsonObject(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{')
    return Status::InvalidInput("not a JSON object");
  google::protobuf::Struct s;
  if (auto st = proto::FromJson(text, "JSON", &s); !st.ok()) return st;
  return s;
}

std::optional<std::int64_t> JsonCount(const google::protobuf::Value& v) {
  if (v.kind_case() != google::protobuf::Value::kNumberValue) return std::nullopt;
  const double d = v.number_value();
  if (!(d >= 0) || d > 9007199254740992.0 || std::floor(d) != d) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

const google::protobuf::Value* JsonField(const google::protobuf::Struct& s, std::string_view key) {
  auto it = s.fields().find(std::string(key));
  return it == s.fields().end() ? nullptr : &it->second;
}

std::optional<std::int64_t> JsonCount(const google::protobuf::Struct& s, std::string_view key) {
  const auto* v = JsonField(s, key);
  return v == nullptr ? std::nullopt : JsonCount(*v);
}

}  // namespace denpex::engine::ckpt
