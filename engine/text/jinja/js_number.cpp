#include "engine/text/jinja/js_number.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>

#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::js {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the StrUnsignedDecimalLiteral (without Infinity) at the start of `s`, 0 if none:
// digits [. digits] [e [+-] digits] | . digits [e ...]; a dangling exponent is not part of it.
std::size_t decimal_prefix(std::string_view s) {
  std::size_t i = 0, int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    std::size_t j = i + 1;
    while (j < s.size() && is_digit(s[j])) ++j, ++frac_digits;
    if (int_digits + frac_digits == 0) return 0;
    i = j;
  }
  if (int_digits + frac_digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const std::size_t exp_start = j;
    while (j < s.size() && is_digit(s[j])) ++j;
    if (j > exp_start) i = j;
  }
  return i;
}

// `s` is a validated decimal literal; from_chars is locale-independent (strtod is not) and rounds
// correctly, as JavaScript does.
double parse_decimal(std::string_view s) {
  double v = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec == std::errc::result_out_of_range) {
    // Overflow gives infinity, underflow zero (JavaScript's answers); from_chars leaves v alone.
    // The decimal magnitude tells which: digits before the point (or minus the zeros after it),
    // plus the exponent.
    const std::size_t e = s.find_first_of("eE");
    const std::string_view mantissa = s.substr(0, e);
    long long magnitude = 0;
    const std::size_t point = std::min(mantissa.find('.'), mantissa.size());
    const std::size_t first = mantissa.find_first_of("123456789");
    if (first == std::string_view::npos) return 0.0;
    magnitude = first < point ? static_cast<long long>(point - first) : -static_cast<long long>(first - point - 1);
    if (e != std::string_view::npos) {
      long long exp = 0;
      std::string_view digits = s.substr(e + 1);
      const bool neg = !digits.empty() && digits[0] == '-';
      if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
      for (const char c : digits) exp = std::min<long long>(exp * 10 + (c - '0'), 1000000000LL);
      magnitude += neg ? -exp : exp;
    }
    return magnitude > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return v;
}

}  // namespace

std::string number_to_string(double x) {
  if (std::isnan(x)) return "NaN";
  if (x == 0) return "0";
  if (std::isinf(x)) return x < 0 ? "-Infinity" : "Infinity";
  std::string out = x < 0 ? "-" : "";
  x = std::fabs(x);
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));  // "d.ddde+XX" or "de-XX"
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (const char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // x = 0.digits * 10^n
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n));
    out += '.';
    out += digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    const int e = n - 1;
    out += digits[0];
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += e < 0 ? '-' : '+';
    out += std::to_string(e < 0 ? -e : e);
  }
  return out;
}

std::string float_display(double x) {
  if (x == 0 && std::signbit(x)) return "-0.0";
  if (std::isfinite(x) && x == std::trunc(x)) {
    if (std::fabs(x) >= 1e21) return number_to_string(x);  // toFixed switches to String(x) there
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, 1);  // exact here
    return std::string(buf, res.ptr);
  }
  return number_to_string(x);
}

std::optional<double> parse_int(std::string_view s) {
  std::size_t i = unicode::js_trim_start(s);
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == start) return std::nullopt;
  const double v = parse_decimal(s.substr(start, i - start));
  return negative ? -v : v;
}

std::optional<double> parse_float(std::string_view s) {
  std::size_t i = unicode::js_trim_start(s);
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::string_view rest = s.substr(i);
  if (rest.substr(0, 8) == "Infinity") {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  const std::size_t len = decimal_prefix(rest);
  if (len == 0) return std::nullopt;
  const double v = parse_decimal(rest.substr(0, len));
  return negative ? -v : v;
}

double to_number(std::string_view s) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t b = unicode::js_trim_start(s);
  const std::size_t e = unicode::js_trim_end(s);
  if (b >= e) return 0;
  s = s.substr(b, e - b);
  if (s.size() > 2 && s[0] == '0') {
    int radix = 0;
    if (s[1] == 'x' || s[1] == 'X') radix = 16;
    if (s[1] == 'o' || s[1] == 'O') radix = 8;
    if (s[1] == 'b' || s[1] == 'B') radix = 2;
    if (radix != 0) {
      double v = 0;
      for (const char c : s.substr(2)) {
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        if (d < 0 || d >= radix) return nan;
        v = v * radix + d;
      }
      return v;
    }
  }
  bool negative = false;
  std::size_t i = 0;
  if (s[0] == '+' || s[0] == '-') negative = s[i++] == '-';
  const std::string_view rest = s.substr(i);
  if (rest == "Infinity") {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (rest.empty() || decimal_prefix(rest) != rest.size()) return nan;
  const double v = parse_decimal(rest);
  return negative ? -v : v;
}

}  // namespace pagedchat::jinja::js
