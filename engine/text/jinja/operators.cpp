// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
#include "engine/text/jinja/operators.h"

#include <cmath>
#include <limits>

#include "engine/text/jinja/js_number.h"
#include "engine/text/jinja/objects.h"
#include "engine/text/jinja/serialize.h"
#include "engine/text/jinja/strings.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

using Kind = Value::Kind;

const char* type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return "UndefinedValue";
    case Kind::kNone:
      return "NullValue";
    case Kind::kBool:
      return "BooleanValue";
    case Kind::kInt:
      return "IntegerValue";
    case Kind::kFloat:
      return "FloatValue";
    case Kind::kString:
      return "StringValue";
    case Kind::kList:
      return list_of(v).tuple ? "TupleValue" : "ArrayValue";
    case Kind::kDict:
      return "ObjectValue";
    case Kind::kNamespace:
      return "NamespaceValue";
    case Kind::kCallable:
      return "FunctionValue";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int() != 0;
    case Kind::kFloat: {
      const double d = v.as_float();
      return d != 0 && !std::isnan(d);
    }
    case Kind::kString:
      return ValueAccess::len(v) != 0;
    case Kind::kList:
      return !list_of(v).items.empty();
    case Kind::kDict:
      return !dict_of(v).entries.empty();
    case Kind::kNamespace:
    case Kind::kCallable:
      return true;
  }
  return false;
}

bool raw_truthy(const Value& v) {
  if (v.kind() == Kind::kList || v.kind() == Kind::kDict) return true;
  return truthy(v);
}

bool is_number(const Value& v) { return v.kind() == Kind::kInt || v.kind() == Kind::kFloat; }
bool is_numeric_like(const Value& v) { return is_number(v) || v.kind() == Kind::kBool; }

double numeric_value(const Value& v) {
  if (v.kind() == Kind::kBool) return v.as_bool() ? 1 : 0;
  return v.as_float();
}

namespace {

// The JavaScript type of a value's underlying .value.
enum class JsType { kUndefined, kNumber, kString, kBoolean, kObject };

JsType js_type(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return JsType::kUndefined;  // NullValue holds undefined in the reference
    case Kind::kInt:
    case Kind::kFloat:
      return JsType::kNumber;
    case Kind::kString:
      return JsType::kString;
    case Kind::kBool:
      return JsType::kBoolean;
    default:
      return JsType::kObject;
  }
}

bool numbers_equal(const Value& a, const Value& b) {
  if (a.kind() == Kind::kInt && b.kind() == Kind::kInt) return a.as_int() == b.as_int();
  return a.as_float() == b.as_float();
}

bool same_object(const Value& a, const Value& b) { return ValueAccess::obj(a) == ValueAccess::obj(b); }

// ToPrimitive of an object operand of ==: a list's items joined with ",", a dict "[object Map]".
// Callables have no primitive worth comparing (their source text in JavaScript).
std::optional<std::string> object_primitive(const Value& v) {
  if (v.kind() == Kind::kList) {
    Ctx scratch{Limits{}, 0};
    return std::string(bytes_of(raw_string(scratch, v)));
  }
  if (v.kind() == Kind::kDict || v.kind() == Kind::kNamespace) return std::string("[object Map]");
  return std::nullopt;
}

}  // namespace

bool loose_equals(const Value& a, const Value& b) {
  const JsType ta = js_type(a), tb = js_type(b);
  if (ta == tb) {
    switch (ta) {
      case JsType::kUndefined:
        return true;
      case JsType::kNumber:
        return numbers_equal(a, b);
      case JsType::kString:
        return bytes_of(a) == bytes_of(b);
      case JsType::kBoolean:
        return a.as_bool() == b.as_bool();
      case JsType::kObject:
        return same_object(a, b);
    }
  }
  if (ta == JsType::kUndefined || tb == JsType::kUndefined) return false;
  // Reduce both sides to a number or a string, as IsLooselyEqual does.
  auto reduce = [](const Value& v, JsType t, double& num, std::string& str) -> int {  // 0 number, 1 string, -1 none
    switch (t) {
      case JsType::kNumber:
        num = v.as_float();
        return 0;
      case JsType::kBoolean:
        num = v.as_bool() ? 1 : 0;
        return 0;
      case JsType::kString:
        str = std::string(bytes_of(v));
        return 1;
      case JsType::kObject: {
        const auto p = object_primitive(v);
        if (!p) return -1;
        str = *p;
        return 1;
      }
      default:
        return -1;
    }
  };
  double an = 0, bn = 0;
  std::string as, bs;
  const int ka = reduce(a, ta, an, as), kb = reduce(b, tb, bn, bs);
  if (ka < 0 || kb < 0) return false;
  // A boolean became a number; an object became a string (its ToPrimitive).
  if (ka == 1 && kb == 1) return as == bs;
  if (ka == 0 && kb == 0) return an == bn;
  if (ka == 1) an = js::to_number(as);
  if (kb == 1) bn = js::to_number(bs);
  return an == bn;
}

bool strict_equals(const Value& a, const Value& b) {
  const JsType ta = js_type(a), tb = js_type(b);
  if (ta != tb) return false;
  switch (ta) {
    case JsType::kUndefined:
      return true;
    case JsType::kNumber:
      return numbers_equal(a, b);
    case JsType::kString:
      return bytes_of(a) == bytes_of(b);
    case JsType::kBoolean:
      return a.as_bool() == b.as_bool();
    case JsType::kObject:
      return same_object(a, b);
  }
  return false;
}

bool same_value_zero(const Value& a, const Value& b) {
  if (a.kind() == Kind::kFloat && b.kind() == Kind::kFloat && std::isnan(a.as_float()) && std::isnan(b.as_float())) {
    return true;
  }
  return strict_equals(a, b);
}

int compare_values(const Value& a, const Value& b, bool case_sensitive) {
  const bool an = a.kind() == Kind::kNone, bn = b.kind() == Kind::kNone;
  if (an && bn) return 0;
  if (an || bn) fail(std::string("Cannot compare ") + type_name(a) + " with " + type_name(b));
  const bool au = a.kind() == Kind::kUndefined, bu = b.kind() == Kind::kUndefined;
  if (au && bu) return 0;
  if (au || bu) fail(std::string("Cannot compare ") + type_name(a) + " with " + type_name(b));
  if (is_numeric_like(a) && is_numeric_like(b)) {
    if (a.kind() == Kind::kInt && b.kind() == Kind::kInt) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    const double x = numeric_value(a), y = numeric_value(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (std::string_view(type_name(a)) != type_name(b)) {
    fail(std::string("Cannot compare different types: ") + type_name(a) + " and " + type_name(b));
  }
  if (a.kind() == Kind::kString) {
    if (case_sensitive) return unicode::compare_utf16(bytes_of(a), bytes_of(b));
    return unicode::compare_utf16(unicode::to_lower(bytes_of(a)), unicode::to_lower(bytes_of(b)));
  }
  fail(std::string("Cannot compare type: ") + type_name(a));
}

namespace {

bool any_data(const Value& a, const Value& b) { return ValueAccess::scalar_data(a) || ValueAccess::scalar_data(b); }

[[noreturn]] void overflow() { fail("integer overflow (the result does not fit 64 bits)"); }

Value int_result(std::int64_t v, bool data) { return Value::integer(v, data); }

// Integer ** for a non-negative exponent, exact or an overflow error.
std::int64_t int_pow(std::int64_t base, std::int64_t exp) {
  std::int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) overflow();
    }
    exp >>= 1;
    // base^2 is a factor of the result when bits remain, so its overflow is the result's.
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
  }
  return result;
}

Value concat_raw(Ctx& ctx, const Value& left, const Value& right) {
  if (left.is_string() && right.is_string()) return concat(ctx, left, right);
  return concat(ctx, raw_string(ctx, left), raw_string(ctx, right));
}

}  // namespace

Value binary_op(Ctx& ctx, BinOp op, const Value& left, const Value& right) {
  if (op == BinOp::kEq) return Value::boolean(loose_equals(left, right));
  if (op == BinOp::kNe) return Value::boolean(!loose_equals(left, right));
  const char* sym = binop_text(op);
  if (left.is_undefined() || right.is_undefined()) {
    if (right.is_undefined() && (op == BinOp::kIn || op == BinOp::kNotIn)) return Value::boolean(op == BinOp::kNotIn);
    fail(std::string("Cannot perform operation ") + sym + " on undefined values");
  }
  if (left.is_none() || right.is_none()) fail("Cannot perform operation on null values");
  if (op == BinOp::kConcat) return concat_raw(ctx, left, right);
  const bool data = any_data(left, right);
  if (op == BinOp::kPow && is_numeric_like(left) && is_numeric_like(right)) {
    const double a = numeric_value(left), b = numeric_value(right);
    if (a == 0 && b < 0) fail("0.0 cannot be raised to a negative power");
    const bool is_float = left.kind() == Kind::kFloat || right.kind() == Kind::kFloat || b < 0;
    if (!is_float) {
      const auto ia = left.kind() == Kind::kBool ? std::int64_t(left.as_bool()) : left.as_int();
      const auto ib = right.kind() == Kind::kBool ? std::int64_t(right.as_bool()) : right.as_int();
      return int_result(int_pow(ia, ib), data);
    }
    const double r = std::pow(a, b);
    if (!std::isfinite(r)) fail("Exponentiation result is not a finite real number");
    return Value::number(r, data);
  }
  if (is_number(left) && is_number(right)) {
    const bool both_int = left.kind() == Kind::kInt && right.kind() == Kind::kInt;
    if (both_int) {
      const std::int64_t a = left.as_int(), b = right.as_int();
      std::int64_t r = 0;
      switch (op) {
        case BinOp::kAdd:
          if (__builtin_add_overflow(a, b, &r)) overflow();
          return int_result(r, data);
        case BinOp::kSub:
          if (__builtin_sub_overflow(a, b, &r)) overflow();
          return int_result(r, data);
        case BinOp::kMul:
          if (__builtin_mul_overflow(a, b, &r)) overflow();
          return int_result(r, data);
        case BinOp::kDiv:
          return Value::number(static_cast<double>(a) / static_cast<double>(b), data);
        case BinOp::kFloorDiv: {
          if (b == 0) fail("integer division by zero");
          if (a == std::numeric_limits<std::int64_t>::min() && b == -1) overflow();
          std::int64_t q = a / b;
          if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
          return int_result(q, data);
        }
        case BinOp::kMod:
          if (b == 0) fail("integer modulo by zero");
          if (b == -1) return int_result(0, data);
          return int_result(a % b, data);
        case BinOp::kLt:
          return Value::boolean(a < b);
        case BinOp::kGt:
          return Value::boolean(a > b);
        case BinOp::kLe:
          return Value::boolean(a <= b);
        case BinOp::kGe:
          return Value::boolean(a >= b);
        default:
          break;
      }
    } else {
      const double a = left.as_float(), b = right.as_float();
      switch (op) {
        case BinOp::kAdd:
          return Value::number(a + b, data);
        case BinOp::kSub:
          return Value::number(a - b, data);
        case BinOp::kMul:
          return Value::number(a * b, data);
        case BinOp::kDiv:
          return Value::number(a / b, data);
        case BinOp::kFloorDiv:
          return Value::number(std::floor(a / b), data);
        case BinOp::kMod:
          return Value::number(std::fmod(a, b), data);
        case BinOp::kLt:
          return Value::boolean(a < b);
        case BinOp::kGt:
          return Value::boolean(a > b);
        case BinOp::kLe:
          return Value::boolean(a <= b);
        case BinOp::kGe:
          return Value::boolean(a >= b);
        default:
          break;
      }
    }
  } else if (left.is_list() && right.is_list()) {
    if (op == BinOp::kAdd) {
      const auto& l = list_of(left).items;
      const auto& r = list_of(right).items;
      ctx.check_items(l.size() + r.size());
      ctx.charge_items(l.size() + r.size());
      std::vector<Value> items;
      items.reserve(l.size() + r.size());
      items.insert(items.end(), l.begin(), l.end());
      items.insert(items.end(), r.begin(), r.end());
      return make_list(std::move(items));
    }
  } else if (right.is_list()) {
    if (op == BinOp::kIn || op == BinOp::kNotIn) {
      const auto& items = list_of(right).items;
      ctx.charge_items(items.size());
      bool member = false;
      for (const Value& item : items) {
        if (strict_equals(item, left)) {
          member = true;
          break;
        }
      }
      return Value::boolean(op == BinOp::kIn ? member : !member);
    }
  }
  if ((left.is_string() || right.is_string()) && op == BinOp::kAdd) return concat_raw(ctx, left, right);
  if (left.is_string() && right.is_string() && (op == BinOp::kIn || op == BinOp::kNotIn)) {
    ctx.charge_bytes(ValueAccess::len(right));
    const bool found = bytes_of(right).find(bytes_of(left)) != std::string_view::npos;
    return Value::boolean(op == BinOp::kIn ? found : !found);
  }
  if (left.is_string() && right.is_dict() && (op == BinOp::kIn || op == BinOp::kNotIn)) {
    const bool found = dict_of(right).find(bytes_of(left)) != nullptr;
    return Value::boolean(op == BinOp::kIn ? found : !found);
  }
  fail(std::string("Unknown operator \"") + sym + "\" between " + type_name(left) + " and " + type_name(right));
}

Value unary_op(UnOp op, const Value& v) {
  if (op == UnOp::kNot) return Value::boolean(!truthy(v));
  const bool neg = op == UnOp::kNeg;
  const bool data = ValueAccess::scalar_data(v);
  switch (v.kind()) {
    case Kind::kFloat:
      return Value::number(neg ? -v.as_float() : v.as_float(), data);
    case Kind::kInt:
      if (neg && v.as_int() == std::numeric_limits<std::int64_t>::min()) overflow();
      return Value::integer(neg ? -v.as_int() : v.as_int(), data);
    case Kind::kBool:
      return Value::integer(neg ? -std::int64_t(v.as_bool()) : std::int64_t(v.as_bool()), data);
    default:
      fail(std::string("Unknown operator \"") + (neg ? "-" : "+") + "\" for " + type_name(v));
  }
}

}  // namespace pagedchat::jinja::detail
