#include "engine/text/jinja/string_ops.h"

#include <string>
#include <string_view>

#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

namespace {

// A string of the same length as `source` whose ranges are those of `source` (ASCII-only edits).
Value same_layout(Ctx& ctx, std::string bytes, const StrView& source) {
  StrBuilder out(ctx);
  std::size_t pos = 0;
  source.for_each_range([&](std::size_t b, std::size_t e) {
    out.add_text(std::string_view(bytes).substr(pos, b - pos), false);
    out.add_text(std::string_view(bytes).substr(b, e - b), true);
    pos = e;
  });
  out.add_text(std::string_view(bytes).substr(pos), false);
  return out.finish();
}

Value map_case(Ctx& ctx, const Value& s, std::string (*fn)(std::string_view)) {
  const StrView v = view_of(s);
  const std::string_view bytes = v.bytes();
  ctx.charge_bytes(bytes.size());
  std::string whole = fn(bytes);
  ctx.check_string_size(whole.size());
  if (!v.any_data()) return make_string(whole, false);
  if (v.all_data()) return make_string(whole, true);
  // Map the data and template pieces apart; keep their ranges when that gives the same text.
  StrBuilder out(ctx);
  std::size_t pos = 0;
  v.for_each_range([&](std::size_t b, std::size_t e) {
    out.add_text(fn(bytes.substr(pos, b - pos)), false);
    out.add_text(fn(bytes.substr(b, e - b)), true);
    pos = e;
  });
  out.add_text(fn(bytes.substr(pos)), false);
  if (out.bytes() == whole) return out.finish();
  return make_string(whole, true);
}

}  // namespace

Value str_upper(Ctx& ctx, const Value& s) { return map_case(ctx, s, &unicode::to_upper); }
Value str_lower(Ctx& ctx, const Value& s) { return map_case(ctx, s, &unicode::to_lower); }

Value str_title(Ctx& ctx, const Value& s) {
  const StrView v = view_of(s);
  std::string bytes(v.bytes());
  ctx.charge_bytes(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const bool boundary = i == 0 || !unicode::is_word_byte(static_cast<unsigned char>(bytes[i - 1]));
    if (boundary && c >= 'a' && c <= 'z') bytes[i] = static_cast<char>(c - 'a' + 'A');
  }
  return same_layout(ctx, std::move(bytes), v);
}

Value str_capitalize(Ctx& ctx, const Value& s) {
  const StrView v = view_of(s);
  const std::string_view bytes = v.bytes();
  if (bytes.empty()) return s;
  const unicode::Decoded d = unicode::decode(bytes, 0);
  // charAt(0) is a UTF-16 unit: a character past U+FFFF is half a pair there, and stays as it is.
  if (d.cp >= 0x10000) return s;
  bool first_data = false;
  for_each_data_range(v.buf, v.off, d.len, [&](std::size_t, std::size_t) { first_data = true; });
  StrBuilder out(ctx);
  out.add_text(unicode::to_upper(bytes.substr(0, d.len)), first_data);
  out.add(substring(s, d.len, bytes.size() - d.len));
  return out.finish();
}

Value str_strip(const Value& s, Strip which) {
  const std::string_view bytes = bytes_of(s);
  const std::size_t b = which == Strip::kEnd ? 0 : unicode::js_trim_start(bytes);
  const std::size_t e = which == Strip::kStart ? bytes.size() : std::max(b, unicode::js_trim_end(bytes));
  return substring(s, b, e - b);
}

Value str_strip_chars(const Value& s, const Value& chars, Strip which) {
  const std::string_view bytes = bytes_of(s);
  const std::string_view set = bytes_of(chars);
  auto in_set = [&](std::size_t at, std::size_t len) {
    const std::string_view cp = bytes.substr(at, len);
    for (std::size_t i = 0; i < set.size();) {
      const std::size_t l = unicode::decode(set, i).len;
      if (set.substr(i, l) == cp) return true;
      i += l;
    }
    return false;
  };
  std::size_t b = 0, e = bytes.size();
  if (which != Strip::kEnd) {
    while (b < e) {
      const std::size_t l = unicode::decode(bytes, b).len;
      if (!in_set(b, l)) break;
      b += l;
    }
  }
  if (which != Strip::kStart) {
    while (e > b) {
      const std::size_t l = unicode::length_before(bytes, e);
      if (!in_set(e - l, l)) break;
      e -= l;
    }
  }
  return substring(s, b, e - b);
}

Value str_split(Ctx& ctx, const Value& s, const std::optional<Value>& sep, std::int64_t maxsplit) {
  const std::string_view bytes = bytes_of(s);
  ctx.charge_bytes(bytes.size());
  std::vector<Value> parts;
  if (!sep) {
    // text = trimStart(); each /\S+/ run, and with maxsplit the rest of the text after the last one kept.
    std::size_t i = unicode::js_trim_start(bytes);
    while (i < bytes.size()) {
      std::size_t j = i;
      while (j < bytes.size() && unicode::js_space_at(bytes, j) == 0) j += unicode::decode(bytes, j).len;
      if (maxsplit != -1 && static_cast<std::int64_t>(parts.size()) >= maxsplit) {
        parts.push_back(substring(s, i, bytes.size() - i));
        break;
      }
      parts.push_back(substring(s, i, j - i));
      i = j;
      while (std::size_t w = unicode::js_space_at(bytes, i)) i += w;
      ctx.check_items(parts.size());
    }
    return make_list(std::move(parts));
  }
  const std::string_view needle = bytes_of(*sep);
  if (needle.empty()) fail("empty separator");
  std::vector<std::size_t> starts{0};  // where each piece starts; pieces end at the next separator
  std::vector<std::size_t> ends;
  for (std::size_t at = bytes.find(needle); at != std::string_view::npos; at = bytes.find(needle, at + needle.size())) {
    ends.push_back(at);
    starts.push_back(at + needle.size());
    ctx.check_items(starts.size());
  }
  ends.push_back(bytes.size());
  const auto n = static_cast<std::int64_t>(starts.size());
  std::int64_t keep = n;  // pieces kept apart; the rest is re-joined (it is the original text)
  if (maxsplit != -1 && n > maxsplit) keep = maxsplit >= 0 ? maxsplit : std::max<std::int64_t>(n + maxsplit, 0);
  for (std::int64_t k = 0; k < keep; ++k) parts.push_back(substring(s, starts[k], ends[k] - starts[k]));
  if (keep < n) parts.push_back(substring(s, starts[keep], bytes.size() - starts[keep]));
  return make_list(std::move(parts));
}

Value str_replace(Ctx& ctx, const Value& s, const Value& old_s, const Value& new_s, std::optional<std::int64_t> count) {
  if (count && *count == 0) return s;
  std::int64_t remaining = (!count || *count < 0) ? -1 : *count;  // -1: all
  const StrView v = view_of(s);
  const std::string_view bytes = v.bytes();
  const std::string_view needle = bytes_of(old_s);
  ctx.charge_bytes(bytes.size());
  StrBuilder out(ctx);
  std::size_t copied = 0;
  if (needle.empty()) {
    // (?=) with the u flag: before every code point and at the end.
    std::size_t i = 0;
    while (remaining != 0) {
      out.add(StrView{v.buf, v.off + copied, i - copied});
      copied = i;
      out.add(new_s);
      if (remaining > 0) --remaining;
      if (i >= bytes.size()) break;
      i += unicode::decode(bytes, i).len;
    }
  } else {
    for (std::size_t at = bytes.find(needle); at != std::string_view::npos && remaining != 0;
         at = bytes.find(needle, at + needle.size())) {
      out.add(StrView{v.buf, v.off + copied, at - copied});
      out.add(new_s);
      copied = at + needle.size();
      if (remaining > 0) --remaining;
    }
  }
  out.add(StrView{v.buf, v.off + copied, bytes.size() - copied});
  return out.finish();
}

std::int64_t str_length(const Value& s) { return static_cast<std::int64_t>(unicode::utf16_length(bytes_of(s))); }

std::vector<Value> str_code_points(Ctx& ctx, const Value& s) {
  const std::string_view bytes = bytes_of(s);
  ctx.charge_bytes(bytes.size());
  std::vector<Value> out;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t len = unicode::decode(bytes, i).len;
    out.push_back(substring(s, i, len));
    i += len;
  }
  ctx.check_items(out.size());
  return out;
}

}  // namespace pagedchat::jinja::detail
