#include "checkpoint/json.h"

namespace denpex::engine::ckpt {

Status ReadJsonObject(std::string_view text,
                      const std::function<void(const std::string&, JsonReader&)>& field) {
  JsonReader r(text);
  if (r.Peek() != '{') return Status::InvalidInput("not a JSON object");
  r.BeginObject();
  while (auto key = r.NextKey()) field(*key, r);
  if (!r.ok()) return Status::InvalidInput(r.error());
  if (!r.AtEnd()) return Status::InvalidInput("text after the object");
  return Status::Ok();
}

Status CheckJsonObject(std::string_view text) {
  return ReadJsonObject(text, [](const std::string&, JsonReader& r) { r.Skip(); });
}

}  // namespace denpex::engine::ckpt
