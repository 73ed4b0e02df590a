// The LineBuilder's decimal formatting (see text.h): padded integers, %.Nf and %.NE.
#include "text.h"

#include <cmath>

namespace denpex::sim {

namespace {
// Exact powers of ten (every one up to 1e22 is representable).
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kMaxDecimals = 15;

double Pow10(int e) {
  if (e >= 0) return e <= 22 ? kPow10[e] : std::pow(10.0, e);
  return -e <= 22 ? 1.0 / kPow10[-e] : std::pow(10.0, e);
}

// v / 10^e, with one correctly rounded operation when 10^|e| is exact.
double Unscale(double v, int e) { return e >= 0 ? v / Pow10(e) : v * Pow10(-e); }
}  // namespace

LineBuilder& LineBuilder::Fill(std::string_view format, std::initializer_list<FillArg> args) {
  for (std::size_t open = format.find('{'); open != std::string_view::npos;
       open = format.find('{')) {
    const bool placeholder = open + 2 < format.size() && format[open + 1] >= '0' &&
                             format[open + 1] <= '9' && format[open + 2] == '}' &&
                             static_cast<std::size_t>(format[open + 1] - '0') < args.size();
    if (!placeholder) {
      out_->append(format.substr(0, open + 1));
      format.remove_prefix(open + 1);
      continue;
    }
    out_->append(format.substr(0, open));
    const FillArg& arg = args.begin()[format[open + 1] - '0'];
    if (arg.is_int) {
      Int(arg.value);
    } else {
      out_->append(arg.text);
    }
    format.remove_prefix(open + 3);
  }
  out_->append(format);
  return *this;
}

LineBuilder& LineBuilder::Padded(std::int64_t v, int width, char fill) {
  char buf[24];
  char* begin = buf;
  const bool negative = v < 0;
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  int len = static_cast<int>(r.ptr - buf);
  if (negative && fill == '0') {
    out_->push_back('-');
    ++begin;
    --len;
    --width;
  }
  if (len < width) out_->append(static_cast<std::size_t>(width - len), fill);
  out_->append(begin, static_cast<std::size_t>(r.ptr - begin));
  return *this;
}

LineBuilder& LineBuilder::Fixed(double v, int decimals) {
  if (decimals > kMaxDecimals) decimals = kMaxDecimals;
  if (v < 0) {
    out_->push_back('-');
    v = -v;
  }
  const double scale = Pow10(decimals);
  const auto q = static_cast<std::uint64_t>(std::llround(v * scale));
  const auto unit = static_cast<std::uint64_t>(scale);
  Int(static_cast<std::int64_t>(q / unit));
  if (decimals > 0) {
    out_->push_back('.');
    Zero(static_cast<std::int64_t>(q % unit), decimals);
  }
  return *this;
}

LineBuilder& LineBuilder::Sci(double v, int decimals) {
  if (decimals > kMaxDecimals) decimals = kMaxDecimals;
  if (v < 0) {
    out_->push_back('-');
    v = -v;
  }
  int exp = 0;
  std::uint64_t q = 0;
  const auto unit = static_cast<std::uint64_t>(Pow10(decimals));
  if (v > 0) {
    exp = static_cast<int>(std::floor(std::log10(v)));
    // log10 may be off by one near powers of ten; the mantissa check settles it.
    if (Unscale(v, exp) >= 10.0) ++exp;
    if (Unscale(v, exp) < 1.0) --exp;
    q = static_cast<std::uint64_t>(std::llround(Unscale(v, exp) * static_cast<double>(unit)));
    if (q >= 10 * unit) {  // rounding carried into a new digit: 9.9999996 -> 1.000000E+01
      q = (q + 5) / 10;
      ++exp;
    }
  }
  Int(static_cast<std::int64_t>(q / unit));
  if (decimals > 0) {
    out_->push_back('.');
    Zero(static_cast<std::int64_t>(q % unit), decimals);
  }
  out_->push_back('E');
  out_->push_back(exp < 0 ? '-' : '+');
  Zero(exp < 0 ? -exp : exp, 2);
  return *this;
}

LineBuilder& LineBuilder::PyFloat(double v) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // "-1.2345e-06"
  const std::size_t e = sci.find('e');
  const bool negative = sci.front() == '-';
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c >= '0' && c <= '9') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  if (negative) Char('-');
  if (exponent < -4 || exponent >= 16) {
    Char(digits[0]);
    if (digits.size() > 1) Char('.').Str(std::string_view(digits).substr(1));
    Char('e').Char(exponent < 0 ? '-' : '+').Zero(exponent < 0 ? -exponent : exponent, 2);
    return *this;
  }
  if (exponent < 0) {
    Str("0.").Str(std::string(static_cast<std::size_t>(-exponent - 1), '0')).Str(digits);
    return *this;
  }
  const auto int_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    Str(digits).Str(std::string(int_digits - digits.size(), '0')).Str(".0");
  } else {
    Str(std::string_view(digits).substr(0, int_digits)).Char('.');
    Str(std::string_view(digits).substr(int_digits));
  }
  return *this;
}

}  // namespace denpex::sim
