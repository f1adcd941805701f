// Internal: the shared objects behind Value handles (lists, dicts, namespaces, callables) and the
// accessor the interpreter uses to reach a Value's representation. Strings live in strings.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/text/jinja/value.h"

namespace pagedchat::jinja::detail {

/// Values nest at most this deep (lists in dicts in lists ...): printing, comparing and destroying
/// them recurses, so the bound keeps the stack safe.
constexpr std::uint32_t kMaxValueDepth = 512;

struct HeapObject {
  virtual ~HeapObject() = default;
};

struct ListObj final : HeapObject {
  std::vector<Value> items;
  bool tuple = false;
  std::uint32_t depth = 1;  ///< 1 + the deepest item's depth
};

/// A dict or namespace: string keys in insertion order.
struct DictObj final : HeapObject {
  std::vector<std::pair<Value, Value>> entries;        ///< key (a string value, with its data ranges), value
  std::unordered_map<std::string, std::size_t> index;  ///< key -> entry, kept once there are many entries
  std::uint32_t depth = 1;

  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  /// Sets `key` (a string value); an existing key keeps its place. Returns false when the result
  /// would nest deeper than kMaxValueDepth (nothing is changed then).
  bool set(const Value& key, Value value);
  void clear();
};

/// Arguments of a call: positional ones, then keyword ones in the order written.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  const Value* kw(std::string_view name) const {
    for (const auto& [k, v] : keyword) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

class Interpreter;
struct Scope;

/// A macro, a caller() block, a built-in function or a bound method.
struct Callable : HeapObject {
  /// `caller` is the scope of the call expression (macros see the caller's variables, as in the
  /// reference). Throws Failure or Error.
  virtual Value call(Interpreter& interp, Scope& caller, CallArgs& args) const = 0;
  virtual std::string describe() const = 0;
};

/// Nesting depth of a value: 0 for scalars and strings.
std::uint32_t depth_of(const Value& v);

/// The interpreter's access to a Value's representation.
struct ValueAccess {
  static const std::shared_ptr<HeapObject>& obj(const Value& v) { return v.obj_; }
  static std::size_t off(const Value& v) { return v.off_; }
  static std::size_t len(const Value& v) { return v.len_; }
  static Value make(Value::Kind kind, std::shared_ptr<HeapObject> obj, std::size_t off = 0, std::size_t len = 0) {
    Value v;
    v.kind_ = kind;
    v.obj_ = std::move(obj);
    v.off_ = off;
    v.len_ = len;
    return v;
  }
  static Value with_data(Value v, bool data) {
    v.data_ = data;
    return v;
  }
  static bool scalar_data(const Value& v) { return v.data_; }
};

inline ListObj& list_of(const Value& v) { return static_cast<ListObj&>(*ValueAccess::obj(v)); }
inline DictObj& dict_of(const Value& v) { return static_cast<DictObj&>(*ValueAccess::obj(v)); }
inline const Callable& callable_of(const Value& v) { return static_cast<const Callable&>(*ValueAccess::obj(v)); }

/// A new list (or tuple); throws Failure when it would nest deeper than kMaxValueDepth.
Value make_list(std::vector<Value> items, bool tuple = false);
/// A new empty dict or namespace.
Value make_dict(Value::Kind kind = Value::Kind::kDict);
/// Sets a key of a dict made by the interpreter; throws Failure when nesting too deep.
void dict_set(const Value& dict, const Value& key, Value value);
/// A callable value.
Value make_callable(std::shared_ptr<Callable> c);

}  // namespace pagedchat::jinja::detail
