#include "engine/text/bpe/byte_level.h"

#include <array>

#include "engine/text/utf8.h"

namespace pagedchat::bpe {

namespace {
bool stands_for_itself(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); }

struct Tables {
  std::array<std::string, 256> to_chars;
  std::array<char32_t, 256> to_cp{};
  std::array<int, 512> from_cp{};  // every mapped code point is below U+0144
  Tables() {
    from_cp.fill(-1);
    unsigned extra = 0;
    for (unsigned b = 0; b < 256; ++b) {
      const char32_t cp = stands_for_itself(b) ? char32_t(b) : char32_t(256 + extra++);
      to_cp[b] = cp;
      utf8::append(to_chars[b], cp);
      from_cp[cp] = int(b);
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}
}  // namespace

const std::string& byte_to_chars(unsigned char b) { return tables().to_chars[b]; }

void append_byte_level(std::string& out, std::string_view bytes) {
  const Tables& t = tables();
  for (unsigned char b : bytes) out += t.to_chars[b];
}

std::optional<unsigned char> char_to_byte(char32_t c) {
  if (c >= 512) return std::nullopt;
  const int b = tables().from_cp[c];
  if (b < 0) return std::nullopt;
  return static_cast<unsigned char>(b);
}

std::optional<std::string> from_byte_level(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8::char_len(s, i);
    if (!n) return std::nullopt;
    const auto b = char_to_byte(utf8::decode(s, i, n));
    if (!b) return std::nullopt;
    out += char(*b);
    i += n;
  }
  return out;
}

}  // namespace pagedchat::bpe
