// Methods of strings and dicts: the reference's StringValue / ObjectValue builtins, plus a few
// Python str methods the reference lacks (find, rfind, count, join, splitlines, removeprefix,
// removesuffix, isdigit, isspace, isalpha, isalnum, islower, isupper), reachable only as calls so
// that `s.find is defined` stays false as in the reference.
//
// As in the reference, strip(), lstrip() and rstrip() ignore their argument and remove
// JavaScript whitespace (Python would remove the given characters).
#include <algorithm>
#include <string_view>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/serialize.h"
#include "engine/text/jinja/string_ops.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

namespace {

using Kind = Value::Kind;

bool is_ref_string_method(std::string_view n) {
  return n == "upper" || n == "lower" || n == "strip" || n == "title" || n == "capitalize" || n == "rstrip" ||
         n == "lstrip" || n == "startswith" || n == "endswith" || n == "split" || n == "replace";
}
bool is_ref_dict_method(std::string_view n) {
  return n == "get" || n == "items" || n == "keys" || n == "values" || n == "dictsort";
}

const Value* arg(const CallArgs& a, std::size_t i) { return i < a.positional.size() ? &a.positional[i] : nullptr; }

// startswith / endswith: a string or a list (tuple) of strings.
Value affix_test(const Value& self, const CallArgs& a, bool start, const char* name) {
  const Value* pattern = arg(a, 0);
  if (!pattern) fail(std::string(name) + "() requires at least one argument");
  const std::string_view s = bytes_of(self);
  auto matches = [&](std::string_view p) {
    return p.size() <= s.size() && (start ? s.substr(0, p.size()) == p : s.substr(s.size() - p.size()) == p);
  };
  if (pattern->is_string()) return Value::boolean(matches(bytes_of(*pattern)));
  if (pattern->is_list()) {
    for (const Value& item : list_of(*pattern).items) {
      if (!item.is_string()) fail(std::string(name) + "() tuple elements must be strings");
      if (matches(bytes_of(item))) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  fail(std::string(name) + "() argument must be a string or tuple of strings");
}

Value split_method(Ctx& ctx, const Value& self, const CallArgs& a) {
  const Value* sep = arg(a, 0);
  if (!sep) sep = a.kw("sep");  // keyword form: Python's, not the reference's
  const Value* maxsplit = arg(a, 1);
  if (!maxsplit) maxsplit = a.kw("maxsplit");
  if (sep && !sep->is_string() && !sep->is_none()) fail("sep argument must be a string or null");
  if (maxsplit && maxsplit->kind() != Kind::kInt) fail("maxsplit argument must be a number");
  std::optional<Value> separator;
  if (sep && sep->is_string()) separator = *sep;
  return str_split(ctx, self, separator, maxsplit ? maxsplit->as_int() : -1);
}

Value replace_method(Ctx& ctx, const Value& self, const CallArgs& a) {
  if (a.positional.size() < 2) fail("replace() requires at least two arguments");
  const Value& old_s = a.positional[0];
  const Value& new_s = a.positional[1];
  if (!old_s.is_string() || !new_s.is_string()) fail("replace() arguments must be strings");
  const Value* count = arg(a, 2);
  if (!count) count = a.kw("count");
  if (count && count->kind() != Kind::kInt && !count->is_none())
    fail("replace() count argument must be a number or null");
  std::optional<std::int64_t> n;
  if (count && count->kind() == Kind::kInt) n = count->as_int();
  return str_replace(ctx, self, old_s, new_s, n);
}

// --- Python str methods the reference lacks ---

std::optional<Value> python_string_method(Interpreter& interp, const Value& self, std::string_view name, CallArgs& a) {
  Ctx& ctx = interp.ctx();
  const std::string_view s = bytes_of(self);
  auto string_arg = [&](std::size_t i) -> std::string_view {
    const Value* v = arg(a, i);
    if (!v || !v->is_string()) fail(std::string(name) + "() argument must be a string");
    return bytes_of(*v);
  };
  // Offsets are in code points, as Python counts.
  auto code_points_before = [&](std::size_t byte) {
    return static_cast<std::int64_t>(unicode::code_point_count(s.substr(0, byte)));
  };
  if (name == "find" || name == "rfind") {
    const std::string_view needle = string_arg(0);
    const std::size_t at = name == "find" ? s.find(needle) : s.rfind(needle);
    return Value::integer(at == std::string_view::npos ? -1 : code_points_before(at));
  }
  if (name == "count") {
    const std::string_view needle = string_arg(0);
    if (needle.empty()) return Value::integer(static_cast<std::int64_t>(unicode::code_point_count(s)) + 1);
    std::int64_t n = 0;
    for (std::size_t at = s.find(needle); at != std::string_view::npos; at = s.find(needle, at + needle.size())) ++n;
    return Value::integer(n);
  }
  if (name == "join") {
    const Value* items = arg(a, 0);
    if (!items || !items->is_list()) fail("join() argument must be a list");
    StrBuilder out(ctx);
    const auto& list = list_of(*items).items;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) fail(std::string("join() expects strings, got ") + type_name(list[i]));
      if (i > 0) out.add(self);
      out.add(list[i]);
    }
    return out.finish();
  }
  if (name == "splitlines") {
    std::vector<Value> lines;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size();) {
      const unicode::Decoded d = unicode::decode(s, i);
      const bool crlf = d.cp == '\r' && i + 1 < s.size() && s[i + 1] == '\n';
      const bool brk = d.cp == '\n' || d.cp == '\r' || d.cp == 0x0B || d.cp == 0x0C || d.cp == 0x1C || d.cp == 0x1D ||
                       d.cp == 0x1E || d.cp == 0x85 || d.cp == 0x2028 || d.cp == 0x2029;
      if (brk) {
        lines.push_back(substring(self, start, i - start));
        i += crlf ? 2 : d.len;
        start = i;
      } else {
        i += d.len;
      }
    }
    if (start < s.size()) lines.push_back(substring(self, start, s.size() - start));
    ctx.check_items(lines.size());
    return make_list(std::move(lines));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const std::string_view affix = string_arg(0);
    if (name == "removeprefix" && s.substr(0, affix.size()) == affix)
      return substring(self, affix.size(), s.size() - affix.size());
    if (name == "removesuffix" && affix.size() <= s.size() && s.substr(s.size() - affix.size()) == affix) {
      return substring(self, 0, s.size() - affix.size());
    }
    return self;
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha" || name == "isalnum") {
    if (s.empty()) return Value::boolean(false);
    for (std::size_t i = 0; i < s.size();) {
      const unicode::Decoded d = unicode::decode(s, i);
      const bool digit = d.cp >= '0' && d.cp <= '9';
      const bool alpha = (d.cp >= 'a' && d.cp <= 'z') || (d.cp >= 'A' && d.cp <= 'Z') ||
                         (d.cp >= 0x80 && !unicode::is_js_space(d.cp) &&
                          unicode::to_lower(s.substr(i, d.len)) != unicode::to_upper(s.substr(i, d.len)));
      const bool ok = name == "isdigit"   ? digit
                      : name == "isspace" ? unicode::is_js_space(d.cp)
                      : name == "isalpha" ? alpha
                                          : (alpha || digit);
      if (!ok) return Value::boolean(false);
      i += d.len;
    }
    return Value::boolean(true);
  }
  if (name == "islower" || name == "isupper") {
    const std::string lower = unicode::to_lower(s), upper = unicode::to_upper(s);
    const bool cased = lower != upper;
    return Value::boolean(cased && (name == "islower" ? std::string_view(lower) == s : std::string_view(upper) == s));
  }
  return std::nullopt;
}

Value dict_items(const Value& self) {
  std::vector<Value> items;
  for (const auto& [k, v] : dict_of(self).entries) items.push_back(make_list({k, v}));
  return make_list(std::move(items));
}

Value dictsort(const Value& self, const CallArgs& a) {
  const Value* cs = arg(a, 0);
  if (!cs) cs = a.kw("case_sensitive");
  if (cs && cs->kind() != Kind::kBool) fail("case_sensitive must be a boolean");
  const Value* by = arg(a, 1);
  if (!by) by = a.kw("by");
  if (by && !by->is_string()) fail("by must be a string");
  const std::string_view by_what = by ? bytes_of(*by) : "key";
  if (by_what != "key" && by_what != "value") fail("by must be either 'key' or 'value'");
  const Value* reverse = arg(a, 2);
  if (!reverse) reverse = a.kw("reverse");
  if (reverse && reverse->kind() != Kind::kBool) fail("reverse must be a boolean");
  const bool case_sensitive = cs && cs->as_bool();
  const bool rev = reverse && reverse->as_bool();
  const std::size_t index = by_what == "key" ? 0 : 1;
  std::vector<Value> items = list_of(dict_items(self)).items;
  sort_values(items, [&](const Value& x, const Value& y) {
    const int r = compare_values(list_of(x).items[index], list_of(y).items[index], case_sensitive);
    return rev ? -r : r;
  });
  return make_list(std::move(items));
}

Value call_dict_method(const Value& self, std::string_view name, const CallArgs& a) {
  if (name == "get") {
    const Value* key = arg(a, 0);
    if (!key || !key->is_string())
      fail(std::string("Object key must be a string: got ") + (key ? type_name(*key) : "UndefinedValue"));
    if (const Value* v = dict_of(self).find(bytes_of(*key))) return *v;
    const Value* def = arg(a, 1);
    return def ? *def : Value::none();
  }
  if (name == "items") return dict_items(self);
  if (name == "keys") {
    std::vector<Value> keys;
    for (const auto& [k, v] : dict_of(self).entries) keys.push_back(k);
    return make_list(std::move(keys));
  }
  if (name == "values") {
    std::vector<Value> values;
    for (const auto& [k, v] : dict_of(self).entries) values.push_back(v);
    return make_list(std::move(values));
  }
  return dictsort(self, a);
}

Value call_string_method(Ctx& ctx, const Value& self, std::string_view name, const CallArgs& a) {
  if (name == "upper") return str_upper(ctx, self);
  if (name == "lower") return str_lower(ctx, self);
  if (name == "strip") return str_strip(self, Strip::kBoth);
  if (name == "lstrip") return str_strip(self, Strip::kStart);
  if (name == "rstrip") return str_strip(self, Strip::kEnd);
  if (name == "title") return str_title(ctx, self);
  if (name == "capitalize") return str_capitalize(ctx, self);
  if (name == "startswith") return affix_test(self, a, true, "startswith");
  if (name == "endswith") return affix_test(self, a, false, "endswith");
  if (name == "split") return split_method(ctx, self, a);
  return replace_method(ctx, self, a);
}

// A method taken without calling it (`s.upper`), called later.
class BoundMethod final : public Callable {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  Value call(Interpreter& interp, Scope&, CallArgs& args) const override {
    if (self_.is_string()) return call_string_method(interp.ctx(), self_, name_, args);
    return call_dict_method(self_, name_, args);
  }
  std::string describe() const override { return "method " + name_; }

 private:
  Value self_;
  std::string name_;
};

}  // namespace

Value builtin_member(const Value& obj, std::string_view name) {
  if (obj.is_string()) {
    if (name == "length") return Value::integer(str_length(obj));
    if (is_ref_string_method(name)) return make_callable(std::make_shared<BoundMethod>(obj, std::string(name)));
  } else if (obj.is_list()) {
    if (name == "length") return Value::integer(static_cast<std::int64_t>(list_of(obj).items.size()));
  } else if (obj.is_dict()) {
    if (is_ref_dict_method(name)) return make_callable(std::make_shared<BoundMethod>(obj, std::string(name)));
  }
  return Value();
}

std::optional<Value> call_method(Interpreter& interp, const Value& obj, std::string_view name, CallArgs& args) {
  if (obj.is_string()) {
    if (is_ref_string_method(name)) return call_string_method(interp.ctx(), obj, name, args);
    return python_string_method(interp, obj, name, args);
  }
  if (obj.is_dict() && is_ref_dict_method(name)) return call_dict_method(obj, name, args);
  return std::nullopt;
}

}  // namespace pagedchat::jinja::detail
