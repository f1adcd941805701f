#include "engine/text/utf8.h"

namespace pagedchat::utf8 {

namespace {
// Table 3-7 of the Unicode Standard (well-formed UTF-8 byte sequences): the allowed range of the
// second byte depends on the first.
bool second_ok(unsigned char b0, unsigned char b1) {
  if (b0 == 0xE0) return b1 >= 0xA0 && b1 <= 0xBF;
  if (b0 == 0xED) return b1 >= 0x80 && b1 <= 0x9F;
  if (b0 == 0xF0) return b1 >= 0x90 && b1 <= 0xBF;
  if (b0 == 0xF4) return b1 >= 0x80 && b1 <= 0x8F;
  return b1 >= 0x80 && b1 <= 0xBF;
}
std::size_t expected_len(unsigned char b0) {
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return 2;
  if (b0 >= 0xE0 && b0 <= 0xEF) return 3;
  if (b0 >= 0xF0 && b0 <= 0xF4) return 4;
  return 0;
}
bool cont(unsigned char b) { return b >= 0x80 && b <= 0xBF; }
}  // namespace

std::size_t char_len(std::string_view s, std::size_t i, bool* incomplete) {
  if (incomplete) *incomplete = false;
  const auto b0 = static_cast<unsigned char>(s[i]);
  const std::size_t n = expected_len(b0);
  if (n <= 1) return n;
  for (std::size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) {
      if (incomplete) *incomplete = true;
      return 0;
    }
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? !second_ok(b0, b) : !cont(b)) return 0;
  }
  return n;
}

std::size_t maximal_subpart(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const std::size_t n = expected_len(b0);
  if (n <= 1) return 1;
  std::size_t k = 1;
  for (; k < n && i + k < s.size(); ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? !second_ok(b0, b) : !cont(b)) break;
  }
  return k;
}

bool is_valid(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = char_len(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

std::string repair(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0, run = 0;  // [run, i) is valid and not yet copied
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = char_len(s, i);
    if (n) {
      i += n;
      continue;
    }
    out.append(s.substr(run, i - run));
    out.append(kReplacement);
    i += maximal_subpart(s, i);
    run = i;
  }
  if (run == 0) return std::string(s);
  out.append(s.substr(run));
  return out;
}

std::size_t stable_prefix(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    bool incomplete = false;
    const std::size_t n = char_len(s, i, &incomplete);
    if (incomplete) return i;
    i += n ? n : maximal_subpart(s, i);
  }
  return s.size();
}

char32_t decode(std::string_view s, std::size_t i, std::size_t len) {
  const auto b = [&](std::size_t k) { return char32_t(static_cast<unsigned char>(s[i + k])); };
  switch (len) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

void append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

}  // namespace pagedchat::utf8
