// Internal: values as text, the three ways the reference writes them.
//  - display: what {{ v }} prints (RuntimeValue.toString): integers as digits, floats with one
//    decimal when integral ("3.0", "-0.0"), true/false lowercase, lists and dicts as compact JSON
//    with undefined items written `undefined`;
//  - raw: JavaScript's String(v.value), what ~, string + and join use: floats without the forced
//    decimal ("3"), lists as their items' display joined with ",", dicts as "[object Map]";
//  - JSON (tojson): JSON.stringify rules for strings and numbers (1.0 -> 1, non-ASCII kept unless
//    ensure_ascii, control characters \u00XX), ", " and ": " separators without indent, "," and
//    ": " with it, keys in insertion order unless sort_keys (localeCompare order).
// Bytes written from data (strings' data ranges, data-flagged numbers) stay data; quotes,
// separators and indentation are template text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/text/jinja/runtime.h"
#include "engine/text/jinja/strings.h"
#include "engine/text/jinja/value.h"

namespace pagedchat::jinja::detail {

void append_display(Ctx& ctx, StrBuilder& out, const Value& v);
void append_raw(Ctx& ctx, StrBuilder& out, const Value& v);
/// The display / raw text as a string value (a string is returned as it is).
Value display_string(Ctx& ctx, const Value& v);
Value raw_string(Ctx& ctx, const Value& v);

struct JsonOptions {
  std::int64_t indent = 0;  ///< 0: compact
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::optional<Value> item_separator;  ///< both set or neither
  std::optional<Value> key_separator;
};
/// toJSON: undefined becomes null when `undefined_to_null`, `undefined` otherwise. Throws Failure
/// for tuples and callables (the reference cannot convert them) and for values nested too deep.
void append_json(Ctx& ctx, StrBuilder& out, const Value& v, const JsonOptions& options, bool undefined_to_null,
                 std::size_t depth = 0);

}  // namespace pagedchat::jinja::detail
