// GPT-2's reversible byte <-> character map (OpenAI gpt-2 encoder.py bytes_to_unicode, used by HF
// tokenizers' ByteLevel and llama.cpp's unicode_byte_to_utf8): the printable bytes '!'..'~',
// 0xA1..0xAC and 0xAE..0xFF stand for themselves; the other 68 bytes (0x00..0x20, 0x7F..0xA0,
// 0xAD), in increasing order, become U+0100, U+0101, ... So ' ' is "Ġ" (U+0120), '\n' is "Ċ".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pagedchat::bpe {

/// The UTF-8 of the character that stands for byte `b`.
const std::string& byte_to_chars(unsigned char b);
/// Appends the byte-level form of `bytes` to `out`.
void append_byte_level(std::string& out, std::string_view bytes);
/// The byte that code point `c` stands for, if it is one of the 256.
std::optional<unsigned char> char_to_byte(char32_t c);
/// The bytes a byte-level string stands for; nullopt when a character is not in the map.
std::optional<std::string> from_byte_level(std::string_view s);

}  // namespace pagedchat::bpe
