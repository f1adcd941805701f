// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
// Tests (`x is name`): the reference's Environment.TESTS — boolean, callable, odd, even, false,
// true, none, string, number, integer, iterable (lists and strings; not tuples, not dicts),
// mapping (dicts; not namespaces), sequence (lists, dicts, strings), lower, upper, defined,
// undefined, equalto / eq (strict ===: 1 is eq 1.0, "1" is not eq 1; an argument is required) —
// and Python Jinja tests the reference lacks: float, divisibleby, ne, lt, le, gt, ge, lessthan,
// greaterthan, in, sameas (with Python Jinja's argument syntax, `x is divisibleby(3)`, `x is eq 3`).
#include <cmath>
#include <string_view>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/serialize.h"
#include "engine/text/jinja/strings.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

namespace {

using Kind = Value::Kind;

const Value& need_arg(std::string_view test, const std::vector<Value>& args) {
  if (args.empty()) fail("test '" + std::string(test) + "' needs an argument");
  return args[0];
}

}  // namespace

bool run_test(Ctx& ctx, std::string_view name, const Value& x, const std::vector<Value>& args) {
  // --- the reference's tests ---
  if (name == "boolean") return x.kind() == Kind::kBool;
  if (name == "callable") return x.kind() == Kind::kCallable;
  if (name == "odd" || name == "even") {
    if (x.kind() != Kind::kInt) fail("cannot " + std::string(name) + " on " + type_name(x));
    const bool odd = x.as_int() % 2 != 0;
    return name == "odd" ? odd : !odd;
  }
  if (name == "false") return x.kind() == Kind::kBool && !x.as_bool();
  if (name == "true") return x.kind() == Kind::kBool && x.as_bool();
  if (name == "none") return x.is_none();
  if (name == "string") return x.is_string();
  if (name == "number") return is_number(x);
  if (name == "integer") return x.kind() == Kind::kInt;
  if (name == "iterable") return (x.is_list() && !list_of(x).tuple) || x.is_string();
  if (name == "mapping") return x.is_dict();
  if (name == "sequence") return x.is_list() || x.is_dict() || x.is_string();
  if (name == "lower" || name == "upper") {
    if (!x.is_string()) return false;
    const std::string_view s = bytes_of(x);
    return std::string_view(name == "lower" ? unicode::to_lower(s) : unicode::to_upper(s)) == s;
  }
  if (name == "defined") return !x.is_undefined();
  if (name == "undefined") return x.is_undefined();
  // The reference reads its second argument's value: without one (a bare `x is eq`) it fails.
  if (name == "equalto" || name == "eq") return strict_equals(x, need_arg(name, args));
  // --- Python Jinja's, which the reference lacks ---
  if (name == "float") return x.kind() == Kind::kFloat;
  if (name == "divisibleby") {
    const Value& n = need_arg(name, args);
    if (x.kind() == Kind::kInt && n.kind() == Kind::kInt) {
      if (n.as_int() == 0) fail("divisibleby(0)");
      return n.as_int() == -1 || x.as_int() % n.as_int() == 0;
    }
    if (!is_number(x) || !is_number(n)) fail("divisibleby needs numbers");
    return std::fmod(x.as_float(), n.as_float()) == 0;
  }
  if (name == "ne") return !strict_equals(x, need_arg(name, args));
  if (name == "lt" || name == "lessthan") return compare_values(x, need_arg(name, args), true) < 0;
  if (name == "le") return compare_values(x, need_arg(name, args), true) <= 0;
  if (name == "gt" || name == "greaterthan") return compare_values(x, need_arg(name, args), true) > 0;
  if (name == "ge") return compare_values(x, need_arg(name, args), true) >= 0;
  if (name == "in") return truthy(binary_op(ctx, BinOp::kIn, x, need_arg(name, args)));
  if (name == "sameas") return strict_equals(x, need_arg(name, args));
  fail("Unknown test: " + std::string(name));
}

}  // namespace pagedchat::jinja::detail
