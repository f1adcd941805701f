// Internal: string values with data ranges.
//
// A string value is a view [off, off + len) of a shared buffer that holds bytes and the sorted,
// merged byte ranges of them that are data. Slicing, strip and split make views (no copy).
// Buffers made during a render are appendable: concatenating onto a value that ends where its
// buffer ends appends in place (other views of the buffer keep their own length and never see
// the new bytes), so `ns.text = ns.text + piece` in a loop is linear, not quadratic. Buffers of
// the caller's context and of template literals are never appended to (they may be shared by
// concurrent renders).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/jinja/objects.h"
#include "engine/text/jinja/runtime.h"
#include "engine/text/templated_text.h"

namespace pagedchat::jinja::detail {

struct StrBuf final : HeapObject {
  std::string bytes;
  std::vector<ByteRange> data;
  bool appendable = false;

  /// Appends bytes, all data or none.
  void append(std::string_view s, bool is_data);
  /// Appends src.bytes[off, off + len) with its data ranges (`src` may be this buffer).
  void append_from(const StrBuf& src, std::size_t off, std::size_t len);
  /// Drops everything from byte `size` on.
  void truncate(std::size_t size);
};

/// The data ranges of buf[off, off + len), relative to `off`, in order: f(begin, end).
template <class F>
void for_each_data_range(const StrBuf* buf, std::size_t off, std::size_t len, F&& f) {
  if (buf == nullptr || len == 0) return;
  const auto& d = buf->data;
  auto it = std::upper_bound(d.begin(), d.end(), off, [](std::size_t pos, const ByteRange& r) { return pos < r.end; });
  for (; it != d.end() && it->begin < off + len; ++it) {
    f(std::max(it->begin, off) - off, std::min(it->end, off + len) - off);
  }
}

/// The parts of a string value.
struct StrView {
  const StrBuf* buf = nullptr;
  std::size_t off = 0;
  std::size_t len = 0;

  std::string_view bytes() const { return buf ? std::string_view(buf->bytes).substr(off, len) : std::string_view(); }
  bool any_data() const;
  bool all_data() const;
  template <class F>
  void for_each_range(F&& f) const {
    for_each_data_range(buf, off, len, f);
  }
};

/// The view of a string value (`v` must be a string).
inline StrView view_of(const Value& v) {
  return {static_cast<const StrBuf*>(ValueAccess::obj(v).get()), ValueAccess::off(v), ValueAccess::len(v)};
}
inline std::string_view bytes_of(const Value& v) { return view_of(v).bytes(); }

/// A string value over a new, non-appendable buffer (template literals, built-in names).
Value make_string(std::string_view s, bool is_data);
/// The bytes [off, off + len) of string `s` (byte offsets inside it), sharing its buffer.
Value substring(const Value& s, std::size_t off, std::size_t len);
/// a + b for two strings; appends in place when `a` ends its appendable buffer.
Value concat(Ctx& ctx, const Value& a, const Value& b);

/// Builds a new string (or the render output) with data ranges, under the render's limits.
class StrBuilder {
 public:
  explicit StrBuilder(Ctx& ctx);
  /// Appends a string value with its ranges.
  void add(const Value& s);
  void add(const StrView& v);
  /// Appends bytes, all data or none.
  void add_text(std::string_view s, bool is_data = false);
  std::size_t size() const { return buf_->bytes.size(); }
  std::string_view bytes() const { return buf_->bytes; }
  void truncate(std::size_t size) { buf_->truncate(size); }
  /// The string built so far, as an (appendable) value; the builder starts over afterwards.
  Value finish();
  /// The text built so far with its ranges; the builder starts over afterwards.
  TemplatedText take();

 private:
  void reserve_more(std::size_t n);
  Ctx* ctx_;
  std::shared_ptr<StrBuf> buf_;
};

}  // namespace pagedchat::jinja::detail
