#include "engine/text/jinja/strings.h"

#include <utility>

namespace pagedchat::jinja::detail {

namespace {

void push_range(std::vector<ByteRange>& data, ByteRange r) {
  if (r.begin >= r.end) return;
  if (!data.empty() && data.back().end == r.begin) {
    data.back().end = r.end;
  } else {
    data.push_back(r);
  }
}

}  // namespace

void StrBuf::append(std::string_view s, bool is_data) {
  const std::size_t begin = bytes.size();
  bytes.append(s);
  if (is_data) push_range(data, {begin, bytes.size()});
}

void StrBuf::append_from(const StrBuf& src, std::size_t off, std::size_t len) {
  if (len == 0) return;
  const std::size_t base = bytes.size();
  if (&src == this) {
    // Reserve first so the source bytes do not move while they are copied; collect the ranges
    // before pushing onto the same vector.
    bytes.reserve(base + len);
    bytes.append(bytes.data() + off, len);
    std::vector<ByteRange> moved;
    for_each_data_range(this, off, len, [&](std::size_t b, std::size_t e) { moved.push_back({base + b, base + e}); });
    for (const ByteRange& r : moved) push_range(data, r);
    return;
  }
  bytes.append(src.bytes, off, len);
  for_each_data_range(&src, off, len, [&](std::size_t b, std::size_t e) { push_range(data, {base + b, base + e}); });
}

void StrBuf::truncate(std::size_t size) {
  if (size >= bytes.size()) return;
  bytes.resize(size);
  while (!data.empty() && data.back().begin >= size) data.pop_back();
  if (!data.empty() && data.back().end > size) data.back().end = size;
}

bool StrView::any_data() const {
  bool any = false;
  for_each_range([&](std::size_t, std::size_t) { any = true; });
  return any;
}

bool StrView::all_data() const {
  std::size_t covered = 0;
  for_each_range([&](std::size_t b, std::size_t e) { covered += e - b; });
  return covered == len;
}

Value make_string(std::string_view s, bool is_data) {
  if (s.empty()) return ValueAccess::make(Value::Kind::kString, nullptr);
  auto buf = std::make_shared<StrBuf>();
  buf->append(s, is_data);
  const std::size_t n = s.size();
  return ValueAccess::make(Value::Kind::kString, std::move(buf), 0, n);
}

Value substring(const Value& s, std::size_t off, std::size_t len) {
  if (len == 0) return ValueAccess::make(Value::Kind::kString, nullptr);
  return ValueAccess::make(Value::Kind::kString, ValueAccess::obj(s), ValueAccess::off(s) + off, len);
}

Value concat(Ctx& ctx, const Value& a, const Value& b) {
  const StrView va = view_of(a), vb = view_of(b);
  if (vb.len == 0) return a;
  if (va.len == 0) return b;
  ctx.check_string_size(va.len + vb.len);
  auto* abuf = const_cast<StrBuf*>(va.buf);
  if (abuf->appendable && va.off + va.len == abuf->bytes.size()) {
    ctx.charge_bytes(vb.len);
    abuf->append_from(*vb.buf, vb.off, vb.len);
    return ValueAccess::make(Value::Kind::kString, ValueAccess::obj(a), va.off, va.len + vb.len);
  }
  StrBuilder out(ctx);
  out.add(va);
  out.add(vb);
  return out.finish();
}

StrBuilder::StrBuilder(Ctx& ctx) : ctx_(&ctx), buf_(std::make_shared<StrBuf>()) { buf_->appendable = true; }

void StrBuilder::reserve_more(std::size_t n) {
  ctx_->check_string_size(buf_->bytes.size() + n);
  ctx_->charge_bytes(n);
}

void StrBuilder::add(const Value& s) { add(view_of(s)); }

void StrBuilder::add(const StrView& v) {
  if (v.len == 0) return;
  reserve_more(v.len);
  buf_->append_from(*v.buf, v.off, v.len);
}

void StrBuilder::add_text(std::string_view s, bool is_data) {
  if (s.empty()) return;
  reserve_more(s.size());
  buf_->append(s, is_data);
}

Value StrBuilder::finish() {
  auto done = std::move(buf_);
  buf_ = std::make_shared<StrBuf>();
  buf_->appendable = true;
  const std::size_t n = done->bytes.size();
  if (n == 0) return ValueAccess::make(Value::Kind::kString, nullptr);
  return ValueAccess::make(Value::Kind::kString, std::move(done), 0, n);
}

TemplatedText StrBuilder::take() {
  TemplatedText t;
  t.text = std::move(buf_->bytes);
  t.data = std::move(buf_->data);
  buf_ = std::make_shared<StrBuf>();
  buf_->appendable = true;
  return t;
}

}  // namespace pagedchat::jinja::detail
