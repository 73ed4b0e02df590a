#include "denpex/common/json_reader.h"

#include <utility>

#include "denpex/common/text.h"

namespace denpex {

bool JsonReader::Fail(std::string what) {
  if (error_.empty()) error_ = std::move(what) + " at byte " + std::to_string(pos_);
  return false;
}

char JsonReader::Peek() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                 text_[pos_] == '\n' || text_[pos_] == '\r')) {
    ++pos_;
  }
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

bool JsonReader::Expect(char c) {
  if (!ok()) return false;
  if (Peek() != c) return Fail(std::string("expected '") + c + "'");
  ++pos_;
  first_ = true;
  return true;
}

bool JsonReader::AtEnd() { return ok() && Peek() == '\0' && pos_ == text_.size(); }

bool JsonReader::NextElement() {
  if (!ok()) return false;
  const char c = Peek();
  if (c == ']') {
    ++pos_;
    first_ = false;
    return false;
  }
  if (!first_) {
    if (c != ',') return Fail("expected ',' or ']'");
    ++pos_;
  }
  first_ = false;
  return true;
}

std::optional<std::string> JsonReader::NextKey() {
  if (!ok()) return std::nullopt;
  char c = Peek();
  if (c == '}') {
    ++pos_;
    first_ = false;
    return std::nullopt;
  }
  if (!first_) {
    if (c != ',') {
      Fail("expected ',' or '}'");
      return std::nullopt;
    }
    ++pos_;
  }
  first_ = false;
  auto key = String();
  if (!key) return std::nullopt;
  if (Peek() != ':') {
    Fail("expected ':'");
    return std::nullopt;
  }
  ++pos_;
  return key;
}

namespace {

std::optional<std::uint32_t> Hex4(std::string_view s) {
  if (s.size() < 4) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s.substr(0, 4)) {
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
    else return std::nullopt;
  }
  return v;
}

}  // namespace

std::optional<std::string> JsonReader::String() {
  if (!ok()) return std::nullopt;
  if (Peek() != '"') {
    Fail("expected a string");
    return std::nullopt;
  }
  last_string_at_ = pos_++;
  std::string out;
  while (true) {
    const std::size_t stop = text_.find_first_of("\"\\", pos_);
    if (stop == std::string_view::npos) {
      Fail("unterminated string");
      return std::nullopt;
    }
    out.append(text_.substr(pos_, stop - pos_));
    pos_ = stop + 1;
    if (text_[stop] == '"') return out;
    if (pos_ >= text_.size()) break;
    const char e = text_[pos_++];
    switch (e) {
      case '"': case '\\': case '/': out += e; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto cp = Hex4(text_.substr(pos_));
        if (!cp) break;
        pos_ += 4;
        if (*cp >= 0xD800 && *cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
          if (auto lo = Hex4(text_.substr(pos_ + 2)); lo && *lo >= 0xDC00 && *lo < 0xE000) {
            cp = 0x10000 + ((*cp - 0xD800) << 10) + (*lo - 0xDC00);
            pos_ += 6;
          }
        }
        AppendUtf8(*cp, &out);
        continue;
      }
      default:
        Fail("invalid escape in a string");
        return std::nullopt;
    }
    if (e == 'u') break;  // a \u without four hex digits
  }
  Fail("invalid escape in a string");
  return std::nullopt;
}

std::optional<std::uint64_t> JsonReader::Count() {
  if (!ok()) return std::nullopt;
  Peek();
  std::uint64_t v = 0;
  const std::size_t start = pos_;
  while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
    if (v > (std::uint64_t{1} << 53) / 10) {
      Fail("a number over 2^53");
      return std::nullopt;
    }
    v = v * 10 + static_cast<std::uint64_t>(text_[pos_++] - '0');
  }
  const char next = pos_ < text_.size() ? text_[pos_] : '\0';
  if (pos_ == start || next == '.' || next == 'e' || next == 'E' || v > (std::uint64_t{1} << 53)) {
    Fail("expected a whole number");
    return std::nullopt;
  }
  return v;
}

std::optional<std::string_view> JsonReader::Token() {
  if (!ok()) return std::nullopt;
  Peek();
  const std::size_t start = pos_;
  for (std::string_view word : {"true", "false", "null"}) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return word;
    }
  }
  while (pos_ < text_.size() &&
         std::string_view("+-.0123456789eE").find(text_[pos_]) != std::string_view::npos) {
    ++pos_;
  }
  if (pos_ == start) {
    Fail("expected a value");
    return std::nullopt;
  }
  return text_.substr(start, pos_ - start);
}

bool JsonReader::SkipScalar() {
  const char c = Peek();
  if (c == '"') return String().has_value();
  for (std::string_view word : {"true", "false", "null"}) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
  }
  const std::size_t start = pos_;
  while (pos_ < text_.size() && std::string_view("+-.0123456789eE").find(text_[pos_]) !=
                                    std::string_view::npos) {
    ++pos_;
  }
  return pos_ > start || Fail("expected a value");
}

bool JsonReader::Skip() {
  // The open containers' closing bytes, innermost last.
  std::string open;
  do {
    if (!ok()) return false;
    if (!open.empty()) {  // between values of a container
      const bool object = open.back() == '}';
      if (object ? !NextKey() : !NextElement()) {
        if (!ok()) return false;
        open.pop_back();
        continue;
      }
    }
    const char v = Peek();
    if (v == '{' || v == '[') {
      if (open.size() >= kMaxDepth) {
        return Fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
      }
      ++pos_;
      first_ = true;
      open += v == '{' ? '}' : ']';
    } else if (!SkipScalar()) {
      return false;
    }
  } while (!open.empty());
  return ok();
}

}  // namespace denpex
