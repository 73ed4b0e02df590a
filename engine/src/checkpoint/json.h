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

#include "denpex/common/status.h"

namespace denpex::engine::ckpt {

// Deeper nesting is refused before parsing (real headers and metadata nest a few levels).
inline constexpr std::size_t kMaxJsonDepth = 128;

// kInvalidInput when `text` is not a JSON object, nests deeper than kMaxJsonDepth or ends
// inside a value; time linear in its size.
Result<google::protobuf::Struct> ParseJsonObject(std::string_view text);

// A field that is a whole number in [0, 2^53]; nullopt otherwise.
std::optional<std::int64_t> JsonCount(const google::protobuf::Value& v);
std::optional<std::int64_t> JsonCount(const google::protobuf::Struct& s, std::string_view key);
const google::protobuf::Value* JsonField(const google::protobuf::Struct& s, std::string_view key);

// A pull reader over one JSON text, for documents too large to hold as a Struct (a safetensors
// header may have 100 MB): one pass, time linear in the text, nothing allocated but the keys and
// strings it returns. Every call consumes what it reads; the first error stops the reader
// (ok() false, error() says what and at which byte) and every later call fails.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  bool BeginObject() { return Expect('{'); }
  bool BeginArray() { return Expect('['); }
  // In an object: the next key (its ':' consumed), or nullopt at the closing '}' (consumed) or
  // on an error.
  std::optional<std::string> NextKey();
  // In an array: true when an element follows, false at the closing ']' (consumed) or on an
  // error.
  bool NextElement();
  std::optional<std::string> String();
  // A whole number written as digits, 0 to 2^53; nullopt (an error) for anything else.
  std::optional<std::uint64_t> Count();
  // Any value, nested up to kMaxJsonDepth levels, without recursion.
  bool Skip();
  // True when only white space follows.
  bool AtEnd();
  // The next byte that is not white space ('{', '[', '"', a digit, ...), '\0' at the end;
  // consumes only the white space.
  char Peek();

  // Where the last String() or NextKey() began (its opening quote), to read it again later
  // with JsonReader(text.substr(at)).String() instead of keeping a copy.
  std::size_t last_string_at() const { return last_string_at_; }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  bool Expect(char c);
  bool Fail(std::string what);
  bool SkipScalar();

  std::string_view text_;
  std::size_t pos_ = 0;
  bool first_ = true;  // the next NextKey()/NextElement() is the first of its container
  std::size_t last_string_at_ = 0;
  std::string error_;
};

}  // namespace denpex::engine::ckpt
