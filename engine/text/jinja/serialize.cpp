// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
#include "engine/text/jinja/serialize.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/text/jinja/js_number.h"
#include "engine/text/jinja/objects.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

using Kind = Value::Kind;

namespace {

bool data_flag(const Value& v) { return ValueAccess::scalar_data(v); }

void check_depth(std::size_t depth) {
  if (depth > kMaxValueDepth) fail_limit("values nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
}

void append_int(StrBuilder& out, const Value& v) { out.add_text(std::to_string(v.as_int()), data_flag(v)); }

const char kHex[] = "0123456789abcdef";

void append_u_escape(std::string& out, unsigned unit) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xF];
}

// JSON.stringify of the bytes [begin, end) of `s` (no quotes), then makeAsciiSafe when asked.
void escape_json(std::string_view s, bool ensure_ascii, std::string& out) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || (ensure_ascii && c == 0x7F)) {
            append_u_escape(out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const unicode::Decoded d = unicode::decode(s, i);
    if (ensure_ascii) {
      if (d.cp >= 0x10000) {
        append_u_escape(out, 0xD800 + ((d.cp - 0x10000) >> 10));
        append_u_escape(out, 0xDC00 + ((d.cp - 0x10000) & 0x3FF));
      } else {
        append_u_escape(out, d.cp);
      }
    } else if (d.cp == 0xFFFD && d.len == 1) {
      unicode::encode(0xFFFD, out);  // a malformed byte: JavaScript strings cannot hold one
    } else {
      out.append(s, i, d.len);
    }
    i += d.len;
  }
}

// A JSON string literal of a string value; its characters keep their data ranges.
void append_json_string(StrBuilder& out, const StrView& v, bool ensure_ascii) {
  out.add_text("\"");
  const std::string_view bytes = v.bytes();
  std::size_t pos = 0;
  std::string piece;
  auto emit = [&](std::size_t from, std::size_t to, bool data) {
    if (from >= to) return;
    piece.clear();
    escape_json(bytes.substr(from, to - from), ensure_ascii, piece);
    out.add_text(piece, data);
  };
  v.for_each_range([&](std::size_t b, std::size_t e) {
    emit(pos, b, false);
    emit(b, e, true);
    pos = e;
  });
  emit(pos, bytes.size(), false);
  out.add_text("\"");
}

void append_json_number(StrBuilder& out, const Value& v) {
  if (v.kind() == Kind::kInt) return append_int(out, v);
  const double d = v.as_float();
  out.add_text(std::isfinite(d) ? js::number_to_string(d) : "null", data_flag(v));
}

}  // namespace

void append_json(Ctx& ctx, StrBuilder& out, const Value& v, const JsonOptions& o, bool undefined_to_null,
                 std::size_t depth) {
  check_depth(depth);
  ctx.step();
  switch (v.kind()) {
    case Kind::kNone:
      return out.add_text("null", data_flag(v));
    case Kind::kUndefined:
      return out.add_text(undefined_to_null ? "null" : "undefined");
    case Kind::kInt:
    case Kind::kFloat:
      return append_json_number(out, v);
    case Kind::kBool:
      return out.add_text(v.as_bool() ? "true" : "false", data_flag(v));
    case Kind::kString:
      return append_json_string(out, view_of(v), o.ensure_ascii);
    case Kind::kCallable:
      fail("Cannot convert to JSON: FunctionValue");
    case Kind::kList:
      if (list_of(v).tuple) fail("Cannot convert to JSON: TupleValue");
      break;
    case Kind::kDict:
    case Kind::kNamespace:
      break;
  }
  const bool indent = o.indent != 0;
  if (o.indent < 0) fail("Invalid count value: " + std::to_string(o.indent));  // " ".repeat(-n) throws
  const std::string indent_unit =
      indent ? std::string(static_cast<std::size_t>(std::min<std::int64_t>(
                               o.indent, static_cast<std::int64_t>(ctx.limits.max_output_bytes) + 1)),
                           ' ')
             : std::string();
  auto padding = [&](std::size_t level) {
    std::string p = "\n";
    ctx.check_string_size(indent_unit.size() * level);
    for (std::size_t i = 0; i < level; ++i) p += indent_unit;
    return p;
  };
  auto item_sep = [&] {
    if (o.item_separator) return out.add(*o.item_separator);
    out.add_text(indent ? "," : ", ");
  };
  auto key_sep = [&] {
    if (o.key_separator) return out.add(*o.key_separator);
    out.add_text(": ");
  };
  if (v.kind() == Kind::kList) {
    const auto& items = list_of(v).items;
    out.add_text("[");
    const std::string children = indent && !items.empty() ? padding(depth + 1) : std::string();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) item_sep();
      out.add_text(children);
      append_json(ctx, out, items[i], o, undefined_to_null, depth + 1);
    }
    if (indent && !items.empty()) out.add_text(padding(depth));
    out.add_text("]");
    return;
  }
  const auto& entries = dict_of(v).entries;
  std::vector<std::size_t> order(entries.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (o.sort_keys) {
    ctx.charge_items(entries.size());
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return unicode::locale_compare(bytes_of(entries[a].first), bytes_of(entries[b].first)) < 0;
    });
  }
  out.add_text("{");
  const std::string children = indent && !entries.empty() ? padding(depth + 1) : std::string();
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) item_sep();
    out.add_text(children);
    const auto& [key, value] = entries[order[i]];
    append_json_string(out, view_of(key), o.ensure_ascii);
    key_sep();
    append_json(ctx, out, value, o, undefined_to_null, depth + 1);
  }
  if (indent && !entries.empty()) out.add_text(padding(depth));
  out.add_text("}");
}

void append_display(Ctx& ctx, StrBuilder& out, const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return out.add_text("undefined");  // String(undefined): a NullValue holds undefined
    case Kind::kBool:
      return out.add_text(v.as_bool() ? "true" : "false", data_flag(v));
    case Kind::kInt:
      return append_int(out, v);
    case Kind::kFloat:
      return out.add_text(js::float_display(v.as_float()), data_flag(v));
    case Kind::kString:
      return out.add(v);
    case Kind::kList:
    case Kind::kDict:
    case Kind::kNamespace:
      return append_json(ctx, out, v, JsonOptions{}, false);
    case Kind::kCallable:
      fail("cannot print a callable (" + callable_of(v).describe() + ")");
  }
}

void append_raw(Ctx& ctx, StrBuilder& out, const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return;  // Array.prototype.join writes nothing for them
    case Kind::kBool:
      return out.add_text(v.as_bool() ? "true" : "false", data_flag(v));
    case Kind::kInt:
      return append_int(out, v);
    case Kind::kFloat:
      return out.add_text(js::number_to_string(v.as_float()), data_flag(v));
    case Kind::kString:
      return out.add(v);
    case Kind::kList: {
      const auto& items = list_of(v).items;
      ctx.charge_items(items.size());
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out.add_text(",");
        append_display(ctx, out, items[i]);
      }
      return;
    }
    case Kind::kDict:
    case Kind::kNamespace:
      return out.add_text("[object Map]");
    case Kind::kCallable:
      fail("cannot convert a callable (" + callable_of(v).describe() + ") to a string");
  }
}

Value display_string(Ctx& ctx, const Value& v) {
  if (v.is_string()) return v;
  StrBuilder out(ctx);
  append_display(ctx, out, v);
  return out.finish();
}

Value raw_string(Ctx& ctx, const Value& v) {
  if (v.is_string()) return v;
  StrBuilder out(ctx);
  append_raw(ctx, out, v);
  return out.finish();
}

}  // namespace pagedchat::jinja::detail
