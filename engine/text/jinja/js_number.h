// Numbers as JavaScript writes and reads them, because the reference renderer (@huggingface/jinja)
// is JavaScript: Number.prototype.toString (ECMA-262 Number::toString, shortest round-trip
// digits), the FloatValue display rule of @huggingface/jinja (an integral float shows one decimal,
// "-0.0" for negative zero), parseInt(s, 10), parseFloat(s) and ToNumber(string) (used by the
// loose == the reference applies to values).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pagedchat::jinja::js {

/// String(x) for a JavaScript number: "1", "1.5", "1e+21", "1.5e-7", "NaN", "Infinity", "0" for -0.
std::string number_to_string(double x);
/// @huggingface/jinja FloatValue.toString(): "-0.0" for -0, x.toFixed(1) when x is integral
/// ("3.0", "1e+21" from 1e21 on), else number_to_string(x).
std::string float_display(double x);
/// parseInt(s, 10): leading whitespace, optional sign, the longest run of ASCII digits; nullopt
/// (NaN) when there is no digit. The result is the double JavaScript would hold.
std::optional<double> parse_int(std::string_view s);
/// parseFloat(s): leading whitespace, then the longest prefix that is a StrDecimalLiteral
/// ("Infinity" included); nullopt (NaN) when there is none.
std::optional<double> parse_float(std::string_view s);
/// ToNumber(s): the whole string (whitespace trimmed) as a StrNumericLiteral: "" -> 0, decimal,
/// 0x/0o/0b integers, [+-]Infinity; anything else NaN.
double to_number(std::string_view s);

}  // namespace pagedchat::jinja::js
