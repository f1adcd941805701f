// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
// Member access and slicing, as the reference's evaluateMemberExpression and
// evaluateSliceExpression: dict keys then dict methods, list and string indices (negative from the
// end; a string index is a UTF-16 unit), the `length` property, lenient access on anything else,
// and [start:stop:step] slices of lists and strings (strings by code point).
#include <algorithm>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/interpreter.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

using Kind = Value::Kind;

Value member_lookup(Ctx& ctx, const Value& obj, const Value& prop) {
  (void)ctx;
  switch (obj.kind()) {
    case Kind::kDict:
    case Kind::kNamespace: {
      if (!prop.is_string()) fail(std::string("Cannot access property with non-string: got ") + type_name(prop));
      if (const Value* v = dict_of(obj).find(bytes_of(prop))) return *v;
      if (obj.kind() == Kind::kDict) return builtin_member(obj, bytes_of(prop));
      return Value();
    }
    case Kind::kList:
    case Kind::kString: {
      if (prop.kind() == Kind::kInt) {
        const std::int64_t i = prop.as_int();
        if (obj.is_list()) {
          const auto& items = list_of(obj).items;
          const std::int64_t n = static_cast<std::int64_t>(items.size());
          const std::int64_t at = i < 0 ? n + i : i;
          return at >= 0 && at < n ? items[static_cast<std::size_t>(at)] : Value();
        }
        // String.prototype.at: a UTF-16 unit; half of a surrogate pair prints as U+FFFD.
        const StrView v = view_of(obj);
        const std::string_view bytes = v.bytes();
        const std::int64_t n = static_cast<std::int64_t>(unicode::utf16_length(bytes));
        const std::int64_t at = i < 0 ? n + i : i;
        if (at < 0 || at >= n) return Value();
        const unicode::UnitAt u = unicode::utf16_unit_at(bytes, static_cast<std::size_t>(at));
        if (!u.half) return substring(obj, u.offset, u.len);
        bool data = false;
        for_each_data_range(v.buf, v.off + u.offset, u.len, [&](std::size_t, std::size_t) { data = true; });
        return make_string("\xEF\xBF\xBD", data);
      }
      if (prop.is_string()) return builtin_member(obj, bytes_of(prop));
      fail(std::string("Cannot access property with non-string/non-number: got ") + type_name(prop));
    }
    default:
      if (!prop.is_string()) fail(std::string("Cannot access property with non-string: got ") + type_name(prop));
      return Value();
  }
}

Value Interpreter::eval_member(const Member& m, Scope& s) {
  const Value obj = eval(*m.object, s);
  if (m.computed && m.property->type == NodeType::kSlice)
    return eval_slice(obj, static_cast<const Slice&>(*m.property), s);
  Value prop;
  if (m.computed) {
    prop = eval(*m.property, s);
  } else if (m.property->type == NodeType::kIntLit) {
    prop = eval(*m.property, s);
  } else {
    prop = make_string(static_cast<const Ident&>(*m.property).name, false);
  }
  return member_lookup(ctx_, obj, prop);
}

namespace {

// The reference's slice(): the indices [start, stop) with `step` of a sequence of `len` items.
std::vector<std::size_t> slice_indices(std::int64_t len, const Value& start_v, const Value& stop_v,
                                       const Value& step_v) {
  const std::int64_t step = step_v.is_undefined() ? 1 : step_v.as_int();
  const int direction = step > 0 ? 1 : step < 0 ? -1 : 0;
  std::int64_t start = 0, stop = 0;
  if (direction >= 0) {
    start = start_v.is_undefined() ? 0 : start_v.as_int();
    start = start < 0 ? std::max<std::int64_t>(len + std::max(start, -len - 1), 0) : std::min(start, len);
    stop = stop_v.is_undefined() ? len : stop_v.as_int();
    stop = stop < 0 ? std::max<std::int64_t>(len + std::max(stop, -len - 1), 0) : std::min(stop, len);
  } else {
    start = start_v.is_undefined() ? len - 1 : start_v.as_int();
    start = start < 0 ? std::max<std::int64_t>(len + std::max(start, -len - 2), -1) : std::min(start, len - 1);
    stop = stop_v.is_undefined() ? -1 : stop_v.as_int();
    stop = stop < -1 ? std::max<std::int64_t>(len + std::max(stop, -len - 2), -1) : std::min(stop, len - 1);
  }
  std::vector<std::size_t> out;
  if (direction == 0) return out;
  if (direction > 0) {
    for (std::int64_t i = start; i < stop; i += step) {
      out.push_back(static_cast<std::size_t>(i));
      if (step >= stop - i) break;  // the next i reaches stop (stepping could overflow)
    }
  } else {
    for (std::int64_t i = start; i > stop; i += step) {
      out.push_back(static_cast<std::size_t>(i));
      if (step <= stop - i) break;
    }
  }
  return out;
}

}  // namespace

Value Interpreter::eval_slice(const Value& obj, const Slice& sl, Scope& s) {
  if (!obj.is_list() && !obj.is_string()) fail("Slice object must be an array or string");
  const Value start = sl.start ? eval(*sl.start, s) : Value();
  const Value stop = sl.stop ? eval(*sl.stop, s) : Value();
  const Value step = sl.step ? eval(*sl.step, s) : Value();
  if (!(start.kind() == Kind::kInt || start.is_undefined())) fail("Slice start must be numeric or undefined");
  if (!(stop.kind() == Kind::kInt || stop.is_undefined())) fail("Slice stop must be numeric or undefined");
  if (!(step.kind() == Kind::kInt || step.is_undefined())) fail("Slice step must be numeric or undefined");
  if (obj.is_list()) {
    const auto& items = list_of(obj).items;
    const auto idx = slice_indices(static_cast<std::int64_t>(items.size()), start, stop, step);
    ctx_.charge_items(idx.size());
    std::vector<Value> out;
    out.reserve(idx.size());
    for (const std::size_t i : idx) out.push_back(items[i]);
    return make_list(std::move(out));
  }
  // Strings slice by code points (the reference slices Array.from(string)).
  const StrView v = view_of(obj);
  const std::string_view bytes = v.bytes();
  std::vector<std::size_t> offsets;  // byte offset of each code point, plus the end
  offsets.reserve(bytes.size() + 1);
  for (std::size_t i = 0; i < bytes.size(); i += unicode::decode(bytes, i).len) offsets.push_back(i);
  offsets.push_back(bytes.size());
  ctx_.charge_bytes(bytes.size());
  const std::int64_t count = static_cast<std::int64_t>(offsets.size()) - 1;
  const auto idx = slice_indices(count, start, stop, step);
  if (idx.empty()) return make_string("", false);
  const bool contiguous = step.is_undefined() || step.as_int() == 1;
  if (contiguous) return substring(obj, offsets[idx.front()], offsets[idx.back() + 1] - offsets[idx.front()]);
  StrBuilder out(ctx_);
  for (const std::size_t i : idx) out.add(StrView{v.buf, v.off + offsets[i], offsets[i + 1] - offsets[i]});
  return out.finish();
}

}  // namespace pagedchat::jinja::detail
