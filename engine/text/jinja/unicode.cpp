#include "engine/text/jinja/unicode.h"

#include <unicode/ucasemap.h>
#include <unicode/ucol.h>
#include <unicode/utypes.h>

#include <memory>
#include <stdexcept>

namespace pagedchat::jinja::unicode {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

Decoded decode(std::string_view s, std::size_t i) {
  const auto c0 = static_cast<unsigned char>(s[i]);
  if (c0 < 0x80) return {c0, 1};
  std::size_t need = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    need = 1, cp = c0 & 0x1F, min = 0x80;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    need = 2, cp = c0 & 0x0F, min = 0x800;
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    need = 3, cp = c0 & 0x07, min = 0x10000;
  } else {
    return {kReplacement, 1};
  }
  if (i + need >= s.size()) return {kReplacement, 1};  // truncated sequence
  for (std::size_t k = 1; k <= need; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (!is_continuation(c)) return {kReplacement, 1};
    cp = (cp << 6) | (c & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kReplacement, 1};
  return {cp, static_cast<std::uint8_t>(need + 1)};
}

std::size_t length_before(std::string_view s, std::size_t i) {
  // A valid sequence ending at i starts at most 3 continuation bytes back.
  for (std::size_t back = 2; back <= 4 && back <= i; ++back) {
    const std::size_t j = i - back;
    if (is_continuation(static_cast<unsigned char>(s[j]))) continue;
    if (decode(s, j).len == back) return back;
    break;
  }
  return 1;
}

void encode(char32_t cp, std::string& out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacement;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_js_space(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_js_line_terminator(char32_t cp) { return cp == 0x0A || cp == 0x0D || cp == 0x2028 || cp == 0x2029; }

std::size_t js_space_at(std::string_view s, std::size_t i) {
  if (i >= s.size()) return 0;
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return (c == ' ' || (c >= 0x09 && c <= 0x0D)) ? 1 : 0;
  const Decoded d = decode(s, i);
  return is_js_space(d.cp) && d.cp != kReplacement ? d.len : 0;
}

std::size_t js_space_before(std::string_view s, std::size_t i) {
  if (i == 0 || i > s.size()) return 0;
  const auto c = static_cast<unsigned char>(s[i - 1]);
  if (c < 0x80) return (c == ' ' || (c >= 0x09 && c <= 0x0D)) ? 1 : 0;
  const std::size_t len = length_before(s, i);
  const Decoded d = decode(s, i - len);
  return d.len == len && is_js_space(d.cp) ? len : 0;
}

std::size_t js_trim_start(std::string_view s) {
  std::size_t i = 0;
  while (std::size_t w = js_space_at(s, i)) i += w;
  return i;
}

std::size_t js_trim_end(std::string_view s) {
  std::size_t i = s.size();
  while (std::size_t w = js_space_before(s, i)) i -= w;
  return i;
}

std::size_t utf16_length(std::string_view s) {
  std::size_t units = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i, ++units;
      continue;
    }
    const Decoded d = decode(s, i);
    units += d.cp >= 0x10000 ? 2 : 1;
    i += d.len;
  }
  return units;
}

std::size_t code_point_count(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    i += static_cast<unsigned char>(s[i]) < 0x80 ? 1 : decode(s, i).len;
  }
  return n;
}

UnitAt utf16_unit_at(std::string_view s, std::size_t unit) {
  std::size_t units = 0;
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = decode(s, i);
    const std::size_t w = d.cp >= 0x10000 ? 2 : 1;
    if (unit < units + w) return {i, d.len, w == 2};
    units += w;
    i += d.len;
  }
  return {s.size(), 0, false};
}

int compare_utf16(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const Decoded x = decode(a, i);
    const Decoded y = decode(b, j);
    if (x.cp != y.cp) {
      // A code point past U+FFFF is compared by its high surrogate (0xD800..0xDBFF) against a BMP one.
      const bool xs = x.cp >= 0x10000, ys = y.cp >= 0x10000;
      char32_t kx = x.cp, ky = y.cp;
      if (xs != ys) {
        if (xs) kx = 0xD800 + ((x.cp - 0x10000) >> 10);
        if (ys) ky = 0xD800 + ((y.cp - 0x10000) >> 10);
        if (kx == ky) return xs ? 1 : -1;  // cannot happen (BMP values there are surrogates); kept total
      }
      return kx < ky ? -1 : 1;
    }
    i += x.len;
    j += y.len;
  }
  if (i < a.size()) return 1;
  if (j < b.size()) return -1;
  return 0;
}

namespace {

struct CollatorCloser {
  void operator()(UCollator* c) const { ucol_close(c); }
};
struct CaseMapCloser {
  void operator()(UCaseMap* c) const { ucasemap_close(c); }
};

UCollator* root_collator() {
  thread_local std::unique_ptr<UCollator, CollatorCloser> collator = [] {
    UErrorCode status = U_ZERO_ERROR;
    UCollator* c = ucol_open("", &status);
    if (U_FAILURE(status)) throw std::runtime_error("ICU: cannot open the root collator");
    return std::unique_ptr<UCollator, CollatorCloser>(c);
  }();
  return collator.get();
}

UCaseMap* root_case_map() {
  thread_local std::unique_ptr<UCaseMap, CaseMapCloser> map = [] {
    UErrorCode status = U_ZERO_ERROR;
    UCaseMap* m = ucasemap_open("", 0, &status);
    if (U_FAILURE(status)) throw std::runtime_error("ICU: cannot open a case map");
    return std::unique_ptr<UCaseMap, CaseMapCloser>(m);
  }();
  return map.get();
}

bool is_ascii(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

using CaseFn = int32_t (*)(const UCaseMap*, char*, int32_t, const char*, int32_t, UErrorCode*);

std::string map_case(std::string_view s, CaseFn fn) {
  if (s.size() > 0x3FFFFFFF) throw std::length_error("string too long for case mapping");
  std::string out(s.size() + s.size() / 2 + 16, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    UErrorCode status = U_ZERO_ERROR;
    const int32_t n = fn(root_case_map(), out.data(), static_cast<int32_t>(out.size()), s.data(),
                         static_cast<int32_t>(s.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<std::size_t>(n) + 1, '\0');
      continue;
    }
    if (U_FAILURE(status)) return std::string(s);  // cannot happen for valid input; keep the text
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
  return std::string(s);
}

}  // namespace

int locale_compare(std::string_view a, std::string_view b) {
  UErrorCode status = U_ZERO_ERROR;
  const UCollationResult r = ucol_strcollUTF8(root_collator(), a.data(), static_cast<int32_t>(a.size()), b.data(),
                                              static_cast<int32_t>(b.size()), &status);
  if (U_FAILURE(status)) return compare_utf16(a, b);
  return r == UCOL_LESS ? -1 : r == UCOL_GREATER ? 1 : 0;
}

std::string to_upper(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
  }
  return map_case(s, &ucasemap_utf8ToUpper);
}

std::string to_lower(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  return map_case(s, &ucasemap_utf8ToLower);
}

}  // namespace pagedchat::jinja::unicode
