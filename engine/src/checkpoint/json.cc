#include "checkpoint/json.h"

#include <cmath>

#include "denpex/proto/json_io.h"

namespace denpex::engine::ckpt {

namespace {

// One pass over `text` that finds how deep its arrays and objects nest and whether they close,
// skipping strings. protobuf's JSON parser costs time quadratic in the nesting depth (a 200 KB
// header of 100,000 levels ran for minutes) and much memory on an unterminated document; what
// this rejects never reaches it, so a checkpoint file costs time linear in its size.
Status CheckNesting(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{':
      case '[':
        if (++depth > kMaxJsonDepth) {
          return Status::InvalidInput("nested deeper than " + std::to_string(kMaxJsonDepth) +
                                      " levels at byte " + std::to_string(i));
        }
        break;
      case '}':
      case ']':
        if (depth == 0) return Status::InvalidInput("unbalanced '" + std::string(1, c) + "' at byte " + std::to_string(i));
        --depth;
        break;
      default: break;
    }
  }
  if (in_string || depth > 0) return Status::InvalidInput("unterminated: the document ends inside a value");
  return Status::Ok();
}

}  // namespace

Result<google::protobuf::Struct> ParseJsonObject(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{')
    return Status::InvalidInput("not a JSON object");
  DENPEX_RETURN_IF_ERROR(CheckNesting(text));
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
