// Python Jinja filters that @huggingface/jinja 0.5.11 lacks, with Python Jinja's semantics
// (jinja2/filters.py): d (default), default without parentheses, count (length), select /
// reject(test, args...), map(filter, args...), sum(attribute, start), min / max(case_sensitive,
// attribute), batch(linecount, fill_with), round(precision, method), wordcount, trim(chars), list /
// first / last / reverse of a string (by code point), list of a dict (its keys), and the call form
// of any bare filter (`x | upper()`). The reference fails on all of these, so adding them changes
// no template it renders.
#include <charconv>
#include <cmath>
#include <system_error>
#include <utility>

#include <unicode/uchar.h>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/filters.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/string_ops.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

namespace {

using Kind = Value::Kind;

Value default_filter(const Value& x, const CallArgs& a) {
  const Value def = a.positional.empty() ? make_string("", false) : a.positional[0];
  const Value* boolean = arg_or_kw(a, 1, "boolean");
  const bool use_bool = boolean && truthy(*boolean);
  if (x.is_undefined() || (use_bool && !truthy(x))) return def;
  return x;
}

// Python's round(x, ndigits): the double's exact value rounded half to even.
double round_digits(double x, std::int64_t precision) {
  if (!std::isfinite(x)) return x;
  if (precision < 0) {
    const double scale = std::pow(10.0, static_cast<double>(-precision));
    return std::nearbyint(x / scale) * scale;
  }
  char buf[512];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed,
                                 static_cast<int>(std::min<std::int64_t>(precision, 300)));
  if (res.ec != std::errc()) return x;
  double out = x;
  std::from_chars(buf, res.ptr, out);
  return out;
}

Value round_filter(const Value& x, const CallArgs& a) {
  const Value* precision = arg_or_kw(a, 0, "precision");
  const Value* method = arg_or_kw(a, 1, "method");
  const std::int64_t p = precision && precision->kind() == Kind::kInt ? precision->as_int() : 0;
  const std::string_view m = method && method->is_string() ? bytes_of(*method) : "common";
  if (m != "common" && m != "ceil" && m != "floor") fail("method must be common, ceil or floor");
  const bool data = ValueAccess::scalar_data(x);
  if (m == "common") {
    if (x.kind() == Kind::kInt && p >= 0) return x;  // round(int, n) is the int
    return Value::number(round_digits(x.as_float(), p), data);
  }
  const double scale = std::pow(10.0, static_cast<double>(p));
  const double v = x.as_float() * scale;
  return Value::number((m == "ceil" ? std::ceil(v) : std::floor(v)) / scale, data);
}

bool word_char(char32_t cp) {
  if (cp == '_') return true;
  const auto t = u_charType(static_cast<UChar32>(cp));
  return u_isalnum(static_cast<UChar32>(cp)) || t == U_LETTER_NUMBER || t == U_OTHER_NUMBER;
}

std::int64_t word_count(std::string_view s) {
  std::int64_t n = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < s.size();) {
    const unicode::Decoded d = unicode::decode(s, i);
    const bool w = word_char(d.cp);
    if (w && !in_word) ++n;
    in_word = w;
    i += d.len;
  }
  return n;
}

// The arguments after the first (a test or filter name), keyword ones kept.
CallArgs rest_args(const CallArgs& a) {
  CallArgs rest;
  if (a.positional.size() > 1) rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  return rest;
}

std::optional<Value> list_filter(Interpreter& interp, Scope& s, const Value& x, std::string_view name,
                                 const CallArgs& a) {
  Ctx& ctx = interp.ctx();
  const auto& items = list_of(x).items;
  if (name == "select" || name == "reject") {
    const bool select = name == "select";
    std::optional<std::string> test;
    if (!a.positional.empty()) {
      if (!a.positional[0].is_string()) fail("the test of select / reject must be a name");
      test = std::string(bytes_of(a.positional[0]));
    }
    const std::vector<Value> test_args = rest_args(a).positional;
    ctx.charge_items(items.size());
    std::vector<Value> out;
    for (const Value& item : items) {
      const bool r = test ? run_test(ctx, *test, item, test_args) : truthy(item);
      if (r == select) out.push_back(item);
    }
    return make_list(std::move(out));
  }
  if (name == "map" && !a.positional.empty() && a.positional[0].is_string()) {
    const std::string filter(bytes_of(a.positional[0]));
    CallArgs rest = rest_args(a);
    const bool bare = rest.positional.empty() && rest.keyword.empty();
    std::vector<Value> out;
    ctx.charge_items(items.size());
    for (const Value& item : items) {
      CallArgs copy = rest;
      out.push_back(bare ? filter_bare(interp, item, filter) : filter_call(interp, s, item, filter, copy, nullptr));
    }
    return make_list(std::move(out));
  }
  if (name == "sum") {
    const Value* attribute = a.kw("attribute");
    const Value* start = a.kw("start");
    Value total = start ? *start : Value::integer(0);
    ctx.charge_items(items.size());
    for (const Value& item : items) {
      const Value v = attribute && attribute->is_string() ? attribute_path(item, bytes_of(*attribute)) : item;
      total = binary_op(ctx, BinOp::kAdd, total, v);
    }
    return total;
  }
  if (name == "min" || name == "max") {
    const Value* cs = arg_or_kw(a, 0, "case_sensitive");
    const Value* attribute = arg_or_kw(a, 1, "attribute");
    if (items.empty()) return Value();
    auto key = [&](const Value& v) {
      return attribute && attribute->is_string() ? attribute_path(v, bytes_of(*attribute)) : v;
    };
    std::size_t best = 0;
    ctx.charge_items(items.size());
    for (std::size_t i = 1; i < items.size(); ++i) {
      const int r = compare_values(key(items[i]), key(items[best]), cs && truthy(*cs));
      if (name == "min" ? r < 0 : r > 0) best = i;
    }
    return items[best];
  }
  if (name == "batch") {
    const Value* count = arg_or_kw(a, 0, "linecount");
    if (!count || count->kind() != Kind::kInt || count->as_int() < 1) fail("batch() needs a positive line count");
    const Value* fill = arg_or_kw(a, 1, "fill_with");
    const auto n = static_cast<std::size_t>(count->as_int());
    std::vector<Value> out, row;
    for (const Value& item : items) {
      if (row.size() == n) out.push_back(make_list(std::exchange(row, {})));
      row.push_back(item);
    }
    if (!row.empty()) {
      if (fill && !fill->is_none()) {
        ctx.check_items(n);
        while (row.size() < n) row.push_back(*fill);
      }
      out.push_back(make_list(std::move(row)));
    }
    return make_list(std::move(out));
  }
  return std::nullopt;
}

std::optional<Value> string_filter(Ctx& ctx, const Value& x, std::string_view name, const CallArgs* a) {
  if (name == "wordcount") return Value::integer(word_count(bytes_of(x)));
  if (name == "list") return make_list(str_code_points(ctx, x));
  if (name == "first" || name == "last") {
    const std::vector<Value> cps = str_code_points(ctx, x);
    if (cps.empty()) return Value();
    return name == "first" ? cps.front() : cps.back();
  }
  if (name == "reverse") {
    const std::vector<Value> cps = str_code_points(ctx, x);
    StrBuilder out(ctx);
    for (auto it = cps.rbegin(); it != cps.rend(); ++it) out.add(*it);
    return out.finish();
  }
  if (name == "trim" && a) {
    const Value* chars = arg_or_kw(*a, 0, "chars");
    if (chars && chars->is_string()) return str_strip_chars(x, *chars, Strip::kBoth);
    if (!chars || chars->is_none()) return str_strip(x, Strip::kBoth);
    fail("trim() chars must be a string");
  }
  return std::nullopt;
}

}  // namespace

std::optional<Value> python_filter(Interpreter& interp, Scope& s, const Value& x, std::string_view name, CallArgs* a) {
  static const CallArgs kNoArgs;
  const CallArgs& args = a ? *a : kNoArgs;
  if (name == "d" || (name == "default" && !a)) return default_filter(x, args);
  if (name == "count") return filter_bare(interp, x, "length");
  std::optional<Value> r;
  if (x.is_list()) r = list_filter(interp, s, x, name, args);
  if (x.is_string()) r = string_filter(interp.ctx(), x, name, a);
  if (is_number(x) && name == "round") r = round_filter(x, args);
  if (x.is_dict() && name == "list") {
    CallArgs none;
    r = call_method(interp, x, "keys", none);
  }
  if (r) return r;
  // The call form of a bare filter: x | upper()
  if (a && a->positional.empty() && a->keyword.empty()) return filter_bare(interp, x, name);
  return std::nullopt;
}

}  // namespace pagedchat::jinja::detail
