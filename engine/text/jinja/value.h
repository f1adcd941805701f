// A value of the Jinja interpreter (engine/text/jinja): what a template reads from its context and
// computes. Part of the public API (jinja.h): callers build the context of a render with it.
//
// Kinds follow @huggingface/jinja 0.5.11, the reference renderer: undefined, none, bool, integer
// (int64 here; JavaScript numbers there), float (double), string (UTF-8 here), list (a tuple is a
// list with a flag), dict (insertion-ordered, string keys), namespace (what namespace() makes) and
// callable (macros, built-in functions).
//
// A Value is a handle: lists, dicts and strings are shared between copies, as objects are in
// Python and JavaScript (== on lists and dicts compares identity, as the reference does). Building
// a context (push_back, set) mutates that shared storage; never mutate a value while a render
// reads it. Values built by the caller may be shared by concurrent renders.
//
// Data: every string carries the byte ranges of it that came from caller-supplied data (message
// contents, tool definitions, ...), as opposed to template text and trusted values (bos_token,
// add_generation_prompt, ...). Scalars carry one flag. The render result keeps those ranges
// (TemplatedText), so a tokenizer can refuse to read special tokens out of data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/templated_text.h"

namespace pagedchat::jinja {

namespace detail {
struct HeapObject;
struct ValueAccess;
}  // namespace detail

class Value {
 public:
  enum class Kind : std::uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kNamespace,
    kCallable
  };

  /// Undefined (what a missing variable or key gives).
  Value() = default;
  static Value none(bool is_data = false);
  static Value boolean(bool b, bool is_data = false);
  static Value integer(std::int64_t i, bool is_data = false);
  static Value number(double d, bool is_data = false);
  /// A string; `is_data` marks all of its bytes as data.
  static Value string(std::string_view s, bool is_data);
  /// A string with the given data ranges (sorted, non-overlapping, inside `t.text`).
  static Value string(const TemplatedText& t);
  static Value list(std::vector<Value> items = {});
  /// A tuple: a list the reference treats apart in a few places (`is iterable` is false for it,
  /// tojson and printing refuse it, a for loop cannot unpack it).
  static Value tuple(std::vector<Value> items);
  /// An empty dict; fill it with set().
  static Value dict();

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  /// True for a scalar (none, bool, number) that came from data; for a string, when any byte is data.
  bool is_data() const;

  /// The scalar of a bool / int / float value. Throws std::logic_error for another kind.
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_float() const;
  /// The bytes of a string value (valid while this value lives). Throws std::logic_error otherwise.
  std::string_view as_string() const;
  /// A string value with its data ranges (offsets relative to the string).
  TemplatedText as_templated_text() const;

  /// Number of items of a list, entries of a dict or namespace; 0 otherwise.
  std::size_t size() const;
  /// Item `i` of a list (i < size()). Throws std::out_of_range.
  const Value& at(std::size_t i) const;
  /// The value under `key` of a dict or namespace, undefined when absent (or not a dict).
  Value get(std::string_view key) const;
  /// Key / value of entry `i` of a dict or namespace, in insertion order (i < size()).
  std::string_view key_at(std::size_t i) const;
  const Value& value_at(std::size_t i) const;

  /// Appends to a list. Throws std::logic_error for another kind, std::length_error when lists
  /// would nest deeper than 512 levels.
  void push_back(Value v);
  /// Sets `key` of a dict (an existing key keeps its place); `key_is_data` marks the key's bytes
  /// as data (keys of data objects are data too). Throws like push_back.
  void set(std::string_view key, Value v, bool key_is_data = false);

 private:
  friend struct detail::ValueAccess;
  Kind kind_ = Kind::kUndefined;
  bool data_ = false;  // scalars only
  union {
    std::int64_t i_ = 0;
    double d_;
    bool b_;
  };
  std::size_t off_ = 0;  // strings: the bytes [off_, off_ + len_) of the buffer
  std::size_t len_ = 0;
  std::shared_ptr<detail::HeapObject> obj_;
};

}  // namespace pagedchat::jinja
