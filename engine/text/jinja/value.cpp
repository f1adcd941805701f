#include "engine/text/jinja/value.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/text/jinja/jinja.h"
#include "engine/text/jinja/objects.h"
#include "engine/text/jinja/strings.h"

namespace pagedchat::jinja {

using detail::DictObj;
using detail::ListObj;
using detail::ValueAccess;

namespace detail {

namespace {
constexpr std::size_t kIndexFrom = 16;  // dicts with more entries keep a hash index
}

const Value* DictObj::find(std::string_view key) const { return const_cast<DictObj*>(this)->find(key); }

Value* DictObj::find(std::string_view key) {
  if (!index.empty()) {
    const auto it = index.find(std::string(key));
    return it == index.end() ? nullptr : &entries[it->second].second;
  }
  for (auto& [k, v] : entries) {
    if (bytes_of(k) == key) return &v;
  }
  return nullptr;
}

bool DictObj::set(const Value& key, Value value) {
  const std::uint32_t d = depth_of(value);
  if (d + 1 > kMaxValueDepth) return false;
  depth = std::max(depth, d + 1);
  if (Value* existing = find(bytes_of(key))) {
    *existing = std::move(value);
    return true;
  }
  entries.emplace_back(key, std::move(value));
  if (!index.empty()) {
    index.emplace(std::string(bytes_of(key)), entries.size() - 1);
  } else if (entries.size() > kIndexFrom) {
    for (std::size_t i = 0; i < entries.size(); ++i) index.emplace(std::string(bytes_of(entries[i].first)), i);
  }
  return true;
}

void DictObj::clear() {
  // Move out first: destroying the values may drop the last reference to this object.
  auto old = std::move(entries);
  entries.clear();
  index.clear();
}

std::uint32_t depth_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kList:
      return list_of(v).depth;
    case Value::Kind::kDict:
    case Value::Kind::kNamespace:
      return dict_of(v).depth;
    default:
      return 0;
  }
}

Value make_list(std::vector<Value> items, bool tuple) {
  std::uint32_t d = 0;
  for (const Value& item : items) d = std::max(d, depth_of(item));
  if (d + 1 > kMaxValueDepth) fail_limit("values nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
  auto obj = std::make_shared<ListObj>();
  obj->items = std::move(items);
  obj->tuple = tuple;
  obj->depth = d + 1;
  return ValueAccess::make(Value::Kind::kList, std::move(obj));
}

Value make_dict(Value::Kind kind) { return ValueAccess::make(kind, std::make_shared<DictObj>()); }

void dict_set(const Value& dict, const Value& key, Value value) {
  if (!dict_of(dict).set(key, std::move(value))) {
    fail_limit("values nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
  }
}

Value make_callable(std::shared_ptr<Callable> c) { return ValueAccess::make(Value::Kind::kCallable, std::move(c)); }

}  // namespace detail

// --- public Value ---

Value Value::none(bool is_data) {
  Value v;
  v.kind_ = Kind::kNone;
  v.data_ = is_data;
  return v;
}

Value Value::boolean(bool b, bool is_data) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  v.data_ = is_data;
  return v;
}

Value Value::integer(std::int64_t i, bool is_data) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  v.data_ = is_data;
  return v;
}

Value Value::number(double d, bool is_data) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.d_ = d;
  v.data_ = is_data;
  return v;
}

Value Value::string(std::string_view s, bool is_data) { return detail::make_string(s, is_data); }

Value Value::string(const TemplatedText& t) {
  if (t.text.empty()) return detail::make_string("", false);
  auto buf = std::make_shared<detail::StrBuf>();
  buf->bytes = t.text;
  for (const ByteRange& r : t.data) {
    const ByteRange clipped{std::min(r.begin, t.text.size()), std::min(r.end, t.text.size())};
    if (clipped.begin >= clipped.end) continue;
    if (!buf->data.empty() && clipped.begin < buf->data.back().end) {
      throw std::invalid_argument("Value::string: data ranges must be sorted and non-overlapping");
    }
    if (!buf->data.empty() && buf->data.back().end == clipped.begin) {
      buf->data.back().end = clipped.end;
    } else {
      buf->data.push_back(clipped);
    }
  }
  const std::size_t n = t.text.size();
  return ValueAccess::make(Kind::kString, std::move(buf), 0, n);
}

Value Value::list(std::vector<Value> items) {
  std::uint32_t d = 0;
  for (const Value& item : items) d = std::max(d, detail::depth_of(item));
  if (d + 1 > detail::kMaxValueDepth) throw std::length_error("Value::list: values nested deeper than 512 levels");
  return detail::make_list(std::move(items), false);
}

Value Value::tuple(std::vector<Value> items) {
  Value v = list(std::move(items));
  detail::list_of(v).tuple = true;
  return v;
}

Value Value::dict() { return detail::make_dict(Kind::kDict); }

bool Value::is_data() const {
  if (kind_ == Kind::kString) return detail::view_of(*this).any_data();
  return data_;
}

bool Value::as_bool() const {
  if (kind_ != Kind::kBool) throw std::logic_error("Value::as_bool: not a bool");
  return b_;
}

std::int64_t Value::as_int() const {
  if (kind_ != Kind::kInt) throw std::logic_error("Value::as_int: not an integer");
  return i_;
}

double Value::as_float() const {
  if (kind_ == Kind::kInt) return static_cast<double>(i_);
  if (kind_ != Kind::kFloat) throw std::logic_error("Value::as_float: not a number");
  return d_;
}

std::string_view Value::as_string() const {
  if (kind_ != Kind::kString) throw std::logic_error("Value::as_string: not a string");
  return detail::bytes_of(*this);
}

TemplatedText Value::as_templated_text() const {
  const detail::StrView v = detail::view_of(*this);
  if (kind_ != Kind::kString) throw std::logic_error("Value::as_templated_text: not a string");
  TemplatedText t;
  t.text.assign(v.bytes());
  v.for_each_range([&](std::size_t b, std::size_t e) { t.data.push_back({b, e}); });
  return t;
}

std::size_t Value::size() const {
  switch (kind_) {
    case Kind::kList:
      return detail::list_of(*this).items.size();
    case Kind::kDict:
    case Kind::kNamespace:
      return detail::dict_of(*this).entries.size();
    default:
      return 0;
  }
}

const Value& Value::at(std::size_t i) const {
  if (kind_ != Kind::kList || i >= detail::list_of(*this).items.size()) throw std::out_of_range("Value::at");
  return detail::list_of(*this).items[i];
}

Value Value::get(std::string_view key) const {
  if (kind_ != Kind::kDict && kind_ != Kind::kNamespace) return Value();
  const Value* v = detail::dict_of(*this).find(key);
  return v ? *v : Value();
}

std::string_view Value::key_at(std::size_t i) const {
  if ((kind_ != Kind::kDict && kind_ != Kind::kNamespace) || i >= size()) throw std::out_of_range("Value::key_at");
  return detail::bytes_of(detail::dict_of(*this).entries[i].first);
}

const Value& Value::value_at(std::size_t i) const {
  if ((kind_ != Kind::kDict && kind_ != Kind::kNamespace) || i >= size()) throw std::out_of_range("Value::value_at");
  return detail::dict_of(*this).entries[i].second;
}

void Value::push_back(Value v) {
  if (kind_ != Kind::kList) throw std::logic_error("Value::push_back: not a list");
  ListObj& l = detail::list_of(*this);
  const std::uint32_t d = detail::depth_of(v);
  if (d + 1 > detail::kMaxValueDepth) throw std::length_error("Value::push_back: values nested deeper than 512 levels");
  l.depth = std::max(l.depth, d + 1);
  l.items.push_back(std::move(v));
}

void Value::set(std::string_view key, Value v, bool key_is_data) {
  if (kind_ != Kind::kDict) throw std::logic_error("Value::set: not a dict");
  if (!detail::dict_of(*this).set(detail::make_string(key, key_is_data), std::move(v))) {
    throw std::length_error("Value::set: values nested deeper than 512 levels");
  }
}

// --- JSON ---

namespace {

// "0".."4294967294" written canonically: JavaScript orders such object keys first, ascending.
bool array_index_key(std::string_view k, std::uint64_t& out) {
  if (k.empty() || k.size() > 10 || (k.size() > 1 && k[0] == '0')) return false;
  std::uint64_t v = 0;
  for (const char c : k) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v >= 4294967295ULL) return false;
  out = v;
  return true;
}

template <class Json>
Value from_json(const Json& j, bool is_data, int depth) {
  if (depth > static_cast<int>(detail::kMaxValueDepth) - 1) {
    throw std::invalid_argument("value_from_json: JSON nested deeper than 512 levels");
  }
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return Value::none(is_data);
    case nlohmann::json::value_t::boolean:
      return Value::boolean(j.template get<bool>(), is_data);
    case nlohmann::json::value_t::number_integer:
      return Value::integer(j.template get<std::int64_t>(), is_data);
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Value::integer(static_cast<std::int64_t>(u), is_data);
      }
      return Value::number(static_cast<double>(u), is_data);
    }
    case nlohmann::json::value_t::number_float: {
      const double d = j.template get<double>();
      // JavaScript has one number type: an integral value is an IntegerValue to the reference.
      if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18) {
        return Value::integer(static_cast<std::int64_t>(d), is_data);
      }
      return Value::number(d, is_data);
    }
    case nlohmann::json::value_t::string:
      return Value::string(j.template get_ref<const std::string&>(), is_data);
    case nlohmann::json::value_t::binary:
      throw std::invalid_argument("value_from_json: binary JSON values are not supported");
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(from_json(item, is_data, depth + 1));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      std::vector<std::tuple<std::uint64_t, const std::string*, const Json*>> indexed;
      std::vector<std::pair<const std::string*, const Json*>> named;
      for (auto it = j.begin(); it != j.end(); ++it) {
        std::uint64_t idx = 0;
        if (array_index_key(it.key(), idx)) {
          indexed.emplace_back(idx, &it.key(), &it.value());
        } else {
          named.emplace_back(&it.key(), &it.value());
        }
      }
      std::sort(indexed.begin(), indexed.end(),
                [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
      Value dict = Value::dict();
      for (const auto& [idx, key, value] : indexed) dict.set(*key, from_json(*value, is_data, depth + 1), is_data);
      for (const auto& [key, value] : named) dict.set(*key, from_json(*value, is_data, depth + 1), is_data);
      return dict;
    }
  }
  return Value();
}

}  // namespace

Value value_from_json(const nlohmann::json& j, bool is_data) { return from_json(j, is_data, 0); }
Value value_from_json(const nlohmann::ordered_json& j, bool is_data) { return from_json(j, is_data, 0); }

}  // namespace pagedchat::jinja
