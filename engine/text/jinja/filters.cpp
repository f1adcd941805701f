// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
// The reference's filters (@huggingface/jinja 0.5.11 applyFilter), by form and operand type:
//   any:     safe, tojson; call form: tojson(indent=, ensure_ascii=, sort_keys=, separators=),
//            join(sep), int(default), float(default), default(value, boolean)
//   list:    list, first, last, length, reverse, sort, join, string, unique;
//            sort(reverse, case_sensitive, attribute), selectattr / rejectattr(attr, test, value),
//            map(attribute=, default=)
//   string:  length (UTF-16 units), upper, lower, title, capitalize, trim, indent, join, string,
//            int, float; indent(width, first, blank), replace(old, new, count)
//   number:  abs, int (floors), float, string
//   dict:    items, length, keys, values, dictsort (and get) with or without arguments
//   bool:    bool, int, float, string
// Quirks kept: `default` needs parentheses in the reference (the bare form falls to
// python_filters.cpp here), `1.5 | int(0)` keeps 1.5 while `1.5 | int` floors, unique is
// case-sensitive, sort is case-insensitive unless told, selectattr looks attributes up without
// dotted paths and wants literal string arguments.
#include "engine/text/jinja/filters.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_set>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/js_number.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/serialize.h"
#include "engine/text/jinja/string_ops.h"

namespace pagedchat::jinja::detail {

namespace {

using Kind = Value::Kind;

std::string quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

[[noreturn]] void cannot_apply(std::string_view name, const Value& v) {
  fail("Cannot apply filter " + quoted(name) + " to type: " + type_name(v));
}

// A double that JavaScript holds as an IntegerValue, as int64.
Value js_integer(double d, bool data) {
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) fail("integer out of range (the reference's numbers are doubles)");
  return Value::integer(static_cast<std::int64_t>(d), data);
}

bool any_data_of(const Value& s) { return view_of(s).any_data(); }

Value json_string(Ctx& ctx, const Value& v, const JsonOptions& o, bool undefined_to_null) {
  StrBuilder out(ctx);
  append_json(ctx, out, v, o, undefined_to_null);
  return out.finish();
}

Value tojson_call(Ctx& ctx, const Value& operand, const CallArgs& a) {
  JsonOptions o;
  if (const Value* indent = a.kw("indent")) {
    if (indent->kind() != Kind::kInt && !indent->is_none()) fail("If set, indent must be a number");
    if (indent->kind() == Kind::kInt) o.indent = indent->as_int();
  }
  if (const Value* ascii = a.kw("ensure_ascii")) {
    if (ascii->kind() != Kind::kBool) fail("If set, ensure_ascii must be a boolean");
    o.ensure_ascii = ascii->as_bool();
  }
  if (const Value* sort = a.kw("sort_keys")) {
    if (sort->kind() != Kind::kBool) fail("If set, sort_keys must be a boolean");
    o.sort_keys = sort->as_bool();
  }
  if (const Value* seps = a.kw("separators")) {
    if (seps->is_list()) {
      const auto& items = list_of(*seps).items;
      if (items.size() != 2 || !items[0].is_string() || !items[1].is_string()) {
        fail("separators must be a tuple of two strings");
      }
      o.item_separator = items[0];
      o.key_separator = items[1];
    } else if (!seps->is_none()) {
      fail("If set, separators must be a tuple of two strings");
    }
  }
  return json_string(ctx, operand, o, true);
}

Value indent_string(Ctx& ctx, const Value& s, std::int64_t width, bool first, bool blank) {
  if (width < 0) fail("Invalid count value: " + std::to_string(width));
  ctx.check_string_size(
      static_cast<std::size_t>(std::min<std::int64_t>(width, std::numeric_limits<std::int32_t>::max())));
  const std::string pad(static_cast<std::size_t>(width), ' ');
  const std::string_view bytes = bytes_of(s);
  StrBuilder out(ctx);
  std::size_t start = 0;
  for (std::size_t line = 0;; ++line) {
    const std::size_t nl = bytes.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? bytes.size() : nl;
    const bool empty = end == start;
    if (!((!first && line == 0) || (!blank && empty))) out.add_text(pad);
    out.add(substring(s, start, end - start));
    if (nl == std::string_view::npos) break;
    out.add(substring(s, nl, 1));
    start = nl + 1;
  }
  return out.finish();
}

Value sort_list(Ctx& ctx, const Value& list, bool reverse, bool case_sensitive, const Value* attribute) {
  std::vector<Value> items = list_of(list).items;
  ctx.charge_items(items.size() * 2);
  std::string path;
  if (attribute && attribute->is_string()) path = std::string(bytes_of(*attribute));
  if (attribute && attribute->kind() == Kind::kInt) path = std::to_string(attribute->as_int());
  const bool by_attr = attribute && !attribute->is_none();
  sort_values(items, [&](const Value& a, const Value& b) {
    ctx.step();
    const int r = by_attr ? compare_values(attribute_path(a, path), attribute_path(b, path), case_sensitive)
                          : compare_values(a, b, case_sensitive);
    return reverse ? -r : r;
  });
  return make_list(std::move(items));
}

Value select_attr(Interpreter& interp, const Value& list, bool select, const CallArgs& a) {
  const auto& items = list_of(list).items;
  for (const Value& item : items) {
    if (!item.is_dict() && item.kind() != Kind::kNamespace) {
      fail(std::string("`") + (select ? "selectattr" : "rejectattr") + "` can only be applied to array of objects");
    }
  }
  if (a.positional.empty() || !a.positional[0].is_string()) fail("selectattr / rejectattr need an attribute name");
  const std::string_view attr = bytes_of(a.positional[0]);
  std::optional<std::string> test;
  if (a.positional.size() > 1) {
    if (!a.positional[1].is_string()) fail("the test of selectattr / rejectattr must be a name");
    test = std::string(bytes_of(a.positional[1]));
  }
  const std::vector<Value> test_args(a.positional.size() > 2 ? a.positional.begin() + 2 : a.positional.end(),
                                     a.positional.end());
  interp.ctx().charge_items(items.size());
  std::vector<Value> out;
  for (const Value& item : items) {
    const Value* v = dict_of(item).find(attr);
    const bool result = v != nullptr && (test ? run_test(interp.ctx(), *test, *v, test_args) : truthy(*v));
    if (result == select) out.push_back(item);
  }
  return make_list(std::move(out));
}

Value map_attribute(const Value& list, const CallArgs& a) {
  const Value* attr = a.kw("attribute");
  if (!attr->is_string()) fail("attribute must be a string");
  const Value* def = a.kw("default");
  std::vector<Value> out;
  for (const Value& item : list_of(list).items) {
    if (!item.is_dict() && item.kind() != Kind::kNamespace) fail("items in map must be an object");
    Value v = attribute_path(item, bytes_of(*attr));
    out.push_back(v.is_undefined() && def ? *def : std::move(v));
  }
  return make_list(std::move(out));
}

Value int_or_float_call(std::string_view name, const Value& operand, const CallArgs& a) {
  const bool to_int = name == "int";
  const Value* given = arg_or_kw(a, 0, "default");
  const Value def = given ? *given : to_int ? Value::integer(0) : Value::number(0);
  switch (operand.kind()) {
    case Kind::kString: {
      const auto parsed = to_int ? js::parse_int(bytes_of(operand)) : js::parse_float(bytes_of(operand));
      if (!parsed || std::isnan(*parsed)) return def;
      return to_int ? js_integer(*parsed, any_data_of(operand)) : Value::number(*parsed, any_data_of(operand));
    }
    case Kind::kInt:
    case Kind::kFloat:
      return operand;
    case Kind::kBool:
      return to_int ? Value::integer(operand.as_bool()) : Value::number(operand.as_bool() ? 1 : 0);
    default:
      cannot_apply(name, operand);
  }
}

}  // namespace

const Value* arg_or_kw(const CallArgs& a, std::size_t i, std::string_view kw) {
  if (i < a.positional.size()) return &a.positional[i];
  return a.kw(kw);
}

Value join_values(Ctx& ctx, const Value& operand, const Value& separator) {
  StrBuilder out(ctx);
  if (operand.is_string()) {  // Array.from(string): code points
    const std::vector<Value> chars = str_code_points(ctx, operand);
    for (std::size_t i = 0; i < chars.size(); ++i) {
      if (i > 0) out.add(separator);
      out.add(chars[i]);
    }
    return out.finish();
  }
  const auto& items = list_of(operand).items;
  ctx.charge_items(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.add(separator);
    append_raw(ctx, out, items[i]);
  }
  return out.finish();
}

Value unique_values(Ctx& ctx, const Value& list) {
  // A JavaScript Set of the underlying values (SameValueZero), keyed here by type and value.
  std::unordered_set<std::string> seen;
  std::vector<Value> out;
  const auto& items = list_of(list).items;
  ctx.charge_items(items.size());
  for (const Value& item : items) {
    std::string key;
    switch (item.kind()) {
      case Kind::kUndefined:
      case Kind::kNone:
        key = "u";
        break;
      case Kind::kBool:
        key = item.as_bool() ? "b1" : "b0";
        break;
      case Kind::kInt:
      case Kind::kFloat: {  // JavaScript numbers: 1 and 1.0 are one value, so are -0 and 0
        const double d = item.as_float();
        key = std::isnan(d) ? std::string("nNaN") : "n" + js::number_to_string(d == 0 ? 0.0 : d);
        break;
      }
      case Kind::kString:
        key = "s" + std::string(bytes_of(item));
        break;
      default: {
        char buf[32];
        std::snprintf(buf, sizeof buf, "o%p", static_cast<const void*>(ValueAccess::obj(item).get()));
        key = buf;
      }
    }
    if (seen.insert(std::move(key)).second) out.push_back(item);
  }
  return make_list(std::move(out));
}

Value filter_bare(Interpreter& interp, const Value& operand, std::string_view name) {
  Ctx& ctx = interp.ctx();
  if (name == "safe") return operand;
  if (name == "tojson") return json_string(ctx, operand, JsonOptions{}, true);
  const char* unknown = nullptr;
  switch (operand.kind()) {
    case Kind::kList: {
      const auto& items = list_of(operand).items;
      if (name == "list") return operand;
      if (name == "first") return items.empty() ? Value() : items.front();
      if (name == "last") return items.empty() ? Value() : items.back();
      if (name == "length") return Value::integer(static_cast<std::int64_t>(items.size()));
      if (name == "reverse") return make_list(std::vector<Value>(items.rbegin(), items.rend()));
      if (name == "sort") return sort_list(ctx, operand, false, false, nullptr);
      if (name == "join") return join_values(ctx, operand, make_string("", false));
      if (name == "string") return json_string(ctx, operand, JsonOptions{}, false);
      if (name == "unique") return unique_values(ctx, operand);
      unknown = "Unknown ArrayValue filter: ";
      break;
    }
    case Kind::kString: {
      if (name == "length") return Value::integer(str_length(operand));
      if (name == "upper") return str_upper(ctx, operand);
      if (name == "lower") return str_lower(ctx, operand);
      if (name == "title") return str_title(ctx, operand);
      if (name == "capitalize") return str_capitalize(ctx, operand);
      if (name == "trim") return str_strip(operand, Strip::kBoth);
      if (name == "indent") return indent_string(ctx, operand, 4, false, false);
      if (name == "join" || name == "string") return operand;
      if (name == "int") {
        const auto v = js::parse_int(bytes_of(operand));
        return v ? js_integer(*v, any_data_of(operand)) : Value::integer(0);
      }
      if (name == "float") {
        const auto v = js::parse_float(bytes_of(operand));
        return v ? Value::number(*v, any_data_of(operand)) : Value::number(0);
      }
      unknown = "Unknown StringValue filter: ";
      break;
    }
    case Kind::kInt:
    case Kind::kFloat: {
      const bool data = ValueAccess::scalar_data(operand);
      if (name == "abs") {
        if (operand.kind() == Kind::kFloat) return Value::number(std::fabs(operand.as_float()), data);
        if (operand.as_int() == std::numeric_limits<std::int64_t>::min()) fail("integer overflow");
        return Value::integer(operand.as_int() < 0 ? -operand.as_int() : operand.as_int(), data);
      }
      if (name == "int") {
        if (operand.kind() == Kind::kInt) return operand;
        return js_integer(std::floor(operand.as_float()), data);
      }
      if (name == "float") return Value::number(operand.as_float(), data);
      if (name == "string") return display_string(ctx, operand);
      unknown = "Unknown NumericValue filter: ";
      break;
    }
    case Kind::kDict: {
      if (name == "items" || name == "keys" || name == "values" || name == "dictsort" || name == "get") {
        CallArgs none;
        if (auto r = call_method(interp, operand, name, none)) return *r;
      }
      if (name == "length") return Value::integer(static_cast<std::int64_t>(dict_of(operand).entries.size()));
      unknown = "Unknown ObjectValue filter: ";
      break;
    }
    case Kind::kBool: {
      if (name == "bool") return operand;
      if (name == "int") return Value::integer(operand.as_bool(), ValueAccess::scalar_data(operand));
      if (name == "float") return Value::number(operand.as_bool() ? 1 : 0, ValueAccess::scalar_data(operand));
      if (name == "string") return make_string(operand.as_bool() ? "true" : "false", ValueAccess::scalar_data(operand));
      unknown = "Unknown BooleanValue filter: ";
      break;
    }
    default:
      break;
  }
  Scope none(nullptr);
  if (auto r = python_filter(interp, none, operand, name, nullptr)) return *r;
  if (unknown) fail(unknown + std::string(name));
  cannot_apply(name, operand);
}

Value filter_call(Interpreter& interp, Scope& s, const Value& operand, std::string_view name, CallArgs& a,
                  const std::vector<NodePtr>* nodes) {
  Ctx& ctx = interp.ctx();
  if (name == "tojson") return tojson_call(ctx, operand, a);
  if (name == "join") {
    if (!operand.is_string() && !operand.is_list()) cannot_apply(name, operand);
    const Value* sep = arg_or_kw(a, 0, "separator");
    if (sep && !sep->is_string()) fail("separator must be a string");
    return join_values(ctx, operand, sep ? *sep : make_string("", false));
  }
  if (name == "int" || name == "float") return int_or_float_call(name, operand, a);
  if (name == "default") {
    const Value def = a.positional.empty() ? make_string("", false) : a.positional[0];
    const Value* boolean = arg_or_kw(a, 1, "boolean");
    if (boolean && boolean->kind() != Kind::kBool) fail("`default` filter flag must be a boolean");
    if (operand.is_undefined() || (boolean && boolean->as_bool() && !truthy(operand))) return def;
    return operand;
  }
  const char* unknown = nullptr;
  if (operand.is_list()) {
    if (name == "sort") {
      const Value* reverse = arg_or_kw(a, 0, "reverse");
      if (reverse && reverse->kind() != Kind::kBool) fail("reverse must be a boolean");
      const Value* cs = arg_or_kw(a, 1, "case_sensitive");
      if (cs && cs->kind() != Kind::kBool) fail("case_sensitive must be a boolean");
      const Value* attribute = arg_or_kw(a, 2, "attribute");
      if (attribute && !attribute->is_string() && attribute->kind() != Kind::kInt && !attribute->is_none()) {
        fail("attribute must be a string, integer, or null");
      }
      return sort_list(ctx, operand, reverse && reverse->as_bool(), cs && cs->as_bool(), attribute);
    }
    if (name == "selectattr" || name == "rejectattr") {
      (void)nodes;  // non-literal arguments, refused by the reference, are accepted (Python Jinja does)
      return select_attr(interp, operand, name == "selectattr", a);
    }
    if (name == "map" && a.kw("attribute")) return map_attribute(operand, a);
    unknown = "Unknown ArrayValue filter: ";
  } else if (operand.is_string()) {
    if (name == "indent") {
      const Value* width = arg_or_kw(a, 0, "width");
      if (width && width->kind() != Kind::kInt) fail("width must be a number");
      const Value* first = arg_or_kw(a, 1, "first");
      const Value* blank = arg_or_kw(a, 2, "blank");
      return indent_string(ctx, operand, width ? width->as_int() : 4, first && raw_truthy(*first),
                           blank && raw_truthy(*blank));
    }
    if (name == "replace") {
      if (auto r = call_method(interp, operand, "replace", a)) return *r;
    }
    unknown = "Unknown StringValue filter: ";
  } else if (operand.is_dict()) {
    if (name == "items" || name == "keys" || name == "values" || name == "dictsort" || name == "get") {
      if (auto r = call_method(interp, operand, name, a)) return *r;
    }
    unknown = "Unknown ObjectValue filter: ";
  }
  if (auto r = python_filter(interp, s, operand, name, &a)) return *r;
  if (name == "map" && operand.is_list())
    fail("`map` expressions without `attribute` set are not currently supported.");
  if (unknown) fail(unknown + std::string(name));
  cannot_apply(name, operand);
}

Value apply_filter(Interpreter& interp, Scope& s, const Value& operand, std::string_view name,
                   const std::vector<NodePtr>* args) {
  if (!args) return filter_bare(interp, operand, name);
  CallArgs a = interp.eval_args(*args, s);
  return filter_call(interp, s, operand, name, a, args);
}

void sort_values(std::vector<Value>& v, const std::function<int(const Value&, const Value&)>& cmp) {
  const std::size_t n = v.size();
  if (n < 2) return;
  std::vector<Value> tmp(n);
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp(v[j], v[i]) < 0 ? v[j++] : v[i++];
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    v.swap(tmp);
  }
}

Value attribute_path(const Value& item, std::string_view path) {
  Value v = item;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string_view part = path.substr(start,
                                              dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (v.is_dict() || v.kind() == Kind::kNamespace) {
      const Value* next = dict_of(v).find(part);
      v = next ? *next : Value();
    } else if (v.is_list()) {
      const auto index = js::parse_int(part);  // parseInt: "1abc" is 1
      const auto& items = list_of(v).items;
      if (!index || *index < 0 || *index >= static_cast<double>(items.size())) return Value();
      v = items[static_cast<std::size_t>(*index)];
    } else {
      return Value();
    }
    if (dot == std::string_view::npos) return v;
    start = dot + 1;
  }
}

}  // namespace pagedchat::jinja::detail
