// Internal: string operations as the reference's JavaScript performs them, keeping data ranges:
// the bytes of a result that come from data stay data. Views (strip, split, slices) keep the
// source's ranges as they are; replace keeps the ranges of the kept text and of the replacement;
// case mapping keeps them piece by piece when mapping each piece alone gives the same text,
// otherwise (a context-dependent mapping across a boundary, such as a final sigma) the whole
// result is data when any byte of the input was.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/text/jinja/runtime.h"
#include "engine/text/jinja/strings.h"

namespace pagedchat::jinja::detail {

/// toUpperCase / toLowerCase.
Value str_upper(Ctx& ctx, const Value& s);
Value str_lower(Ctx& ctx, const Value& s);
/// The reference's title(): an ASCII letter after a non-word character is uppercased; nothing is
/// lowercased ("hELLO wORLD" -> "HELLO WORLD"; Python would give "Hello World").
Value str_title(Ctx& ctx, const Value& s);
/// charAt(0).toUpperCase() + slice(1): the rest is kept as it is (Python lowercases it).
Value str_capitalize(Ctx& ctx, const Value& s);
/// trim / trimStart / trimEnd (JavaScript whitespace).
enum class Strip { kBoth, kStart, kEnd };
Value str_strip(const Value& s, Strip which);
/// Python's strip(chars) with explicit characters (code points of `chars`).
Value str_strip_chars(const Value& s, const Value& chars, Strip which);
/// split(sep, maxsplit) as the reference implements Python's str.split: without `sep`, runs of
/// non-whitespace; with it, every occurrence (an empty sep is an error); maxsplit -1 is unlimited.
Value str_split(Ctx& ctx, const Value& s, const std::optional<Value>& sep, std::int64_t maxsplit);
/// replace(old, new, count): every occurrence left to right, or the first `count` (none or
/// negative: all; 0: none). An empty `old` matches between every two code points and at both ends.
Value str_replace(Ctx& ctx, const Value& s, const Value& old_s, const Value& new_s, std::optional<std::int64_t> count);
/// String.prototype.length.
std::int64_t str_length(const Value& s);
/// The code points of a string, each a string value (Array.from).
std::vector<Value> str_code_points(Ctx& ctx, const Value& s);

}  // namespace pagedchat::jinja::detail
