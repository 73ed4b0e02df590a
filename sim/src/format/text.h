// A small append-only text builder for the hot path: integers, zero-padded and right-aligned
// fields, hex, fixed and scientific decimals, appended straight into a std::string. No
// snprintf, no iostreams, no locale: the same bytes on every platform.
#pragma once

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace denpex::sim {

// One argument of LineBuilder::Fill: text or an integer.
struct FillArg {
  FillArg(std::string_view s) : text(s) {}             // NOLINT: implicit, as Fill's arguments read
  FillArg(const std::string& s) : text(s) {}           // NOLINT
  FillArg(const char* s) : text(s) {}                  // NOLINT
  FillArg(std::int64_t v) : value(v), is_int(true) {}  // NOLINT
  FillArg(int v) : value(v), is_int(true) {}           // NOLINT
  std::string_view text;
  std::int64_t value = 0;
  bool is_int = false;
};

class LineBuilder {
 public:
  explicit LineBuilder(std::string* out) : out_(out) {}

  LineBuilder& Str(std::string_view s) {
    out_->append(s);
    return *this;
  }
  LineBuilder& Char(char c) {
    out_->push_back(c);
    return *this;
  }
  LineBuilder& Int(std::int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_->append(buf, static_cast<std::size_t>(r.ptr - buf));
    return *this;
  }
  // Right-aligned in `width` columns, padded with `fill` ('0' for zero padding; a minus sign
  // goes before the zeros only for fill ' ').
  LineBuilder& Padded(std::int64_t v, int width, char fill);
  LineBuilder& Zero(std::int64_t v, int width) { return Padded(v, width, '0'); }
  // Lowercase hex without a prefix.
  LineBuilder& Hex(std::uint64_t v) {
    char buf[20];
    auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
    out_->append(buf, static_cast<std::size_t>(r.ptr - buf));
    return *this;
  }
  // A line table's format string: `format` with each "{N}" (N one digit) replaced by args[N];
  // every other character, other braces included, as is. Rows of one table may use their
  // arguments in any order, or leave some out.
  LineBuilder& Fill(std::string_view format, std::initializer_list<FillArg> args);
  // printf("%.<decimals>f"), rounding half away from zero.
  LineBuilder& Fixed(double v, int decimals);
  // printf("%.<decimals>E"): 1.234567E-04.
  LineBuilder& Sci(double v, int decimals);
  // Python's repr(float): the shortest digits that read back as v, positional for exponents
  // -4..15 ("0.00015", "7.864669709950182", "60.0"), otherwise "1.5e-05", "1e+16".
  LineBuilder& PyFloat(double v);
  // Ends the line: appends '\n' and counts it.
  void EndLine() {
    out_->push_back('\n');
    ++lines_;
  }
  // Counts `n` lines appended through Str() (a pre-built block that ends in '\n').
  void AddLines(std::int64_t n) { lines_ += n; }
  std::int64_t lines() const { return lines_; }
  std::string& out() { return *out_; }

 private:
  std::string* out_;
  std::int64_t lines_ = 0;
};

}  // namespace denpex::sim
