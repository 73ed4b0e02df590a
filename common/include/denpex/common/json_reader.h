// A pull reader over one JSON text: one pass, time linear in the text, no tree. Used where a
// document may be large or many (a safetensors header of 100 MB, a history store of 200,000
// lines) and only some of its fields matter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace denpex {

// Nothing is allocated but the keys and strings it returns. Every call consumes what it reads;
// the first error stops the reader (ok() false, error() says what and at which byte) and every
// later call fails.
class JsonReader {
 public:
  static constexpr std::size_t kMaxDepth = 128;  // real documents nest a few levels

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
  // A number, `true`, `false` or `null`, as written (`-12`, `1.5e3`); nullopt (an error) for
  // anything else. The caller converts it: Count() refuses signed, fractional and large numbers.
  std::optional<std::string_view> Token();
  // Any value, nested up to kMaxDepth levels, without recursion.
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

}  // namespace denpex
