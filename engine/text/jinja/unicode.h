// Unicode helpers for the Jinja interpreter: strings are UTF-8 here, while the reference renderer
// (@huggingface/jinja, JavaScript) works on UTF-16 strings. These functions give the JavaScript
// answers on UTF-8 bytes: whitespace as JavaScript's \s and String.prototype.trim see it, lengths
// in UTF-16 code units, comparison in UTF-16 code-unit order, toUpperCase/toLowerCase (ICU's root
// locale, which V8 uses too) and localeCompare (ICU's root collation).
//
// Malformed UTF-8 never fails: each byte that does not start a valid sequence decodes as one
// U+FFFD of length 1 (and counts as one UTF-16 unit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pagedchat::jinja::unicode {

/// One decoded code point: `cp` (U+FFFD for a malformed byte) and its length in bytes (1..4).
struct Decoded {
  char32_t cp;
  std::uint8_t len;
};

/// Decodes the code point starting at byte `i` (< s.size()).
Decoded decode(std::string_view s, std::size_t i);
/// Length in bytes of the code point that ends just before byte `i` (> 0), following decode().
std::size_t length_before(std::string_view s, std::size_t i);
/// Appends `cp` as UTF-8 (surrogates and values past U+10FFFF become U+FFFD).
void encode(char32_t cp, std::string& out);

/// JavaScript's WhiteSpace or LineTerminator (what \s, trim() and split() use): TAB, LF, VT, FF,
/// CR, SPACE, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF.
bool is_js_space(char32_t cp);
/// JavaScript's LineTerminator: LF, CR, U+2028, U+2029 (where a multiline ^ matches after).
bool is_js_line_terminator(char32_t cp);
/// Byte length of the whitespace code point at `i`, or 0 when `i` is at the end or not at one.
std::size_t js_space_at(std::string_view s, std::size_t i);
/// Byte length of the whitespace code point ending at `i`, or 0.
std::size_t js_space_before(std::string_view s, std::size_t i);
/// [first, last) of `s` without leading / trailing JavaScript whitespace (String.prototype.trim).
std::size_t js_trim_start(std::string_view s);
std::size_t js_trim_end(std::string_view s);

/// String.prototype.length: UTF-16 code units (a code point past U+FFFF counts 2).
std::size_t utf16_length(std::string_view s);
/// Number of code points (what Array.from(string) yields).
std::size_t code_point_count(std::string_view s);
/// The code point containing UTF-16 unit `unit` (0-based, < utf16_length): its byte offset and
/// length, and whether `unit` is one half of a surrogate pair (then JavaScript would yield a lone
/// surrogate for s[unit]).
struct UnitAt {
  std::size_t offset;
  std::size_t len;
  bool half;
};
UnitAt utf16_unit_at(std::string_view s, std::size_t unit);

/// a < b as JavaScript compares strings (UTF-16 code units): -1, 0 or 1.
int compare_utf16(std::string_view a, std::string_view b);
/// String.prototype.localeCompare in the root locale (ICU collator): <0, 0 or >0.
int locale_compare(std::string_view a, std::string_view b);

/// String.prototype.toUpperCase / toLowerCase (full Unicode case mapping, root locale: 'ß' ->
/// "SS", final sigma). ASCII-only input takes a fast path with the same result.
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);

/// True for bytes that are ASCII [A-Za-z0-9_] (JavaScript's \w without the u flag).
inline bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
inline bool is_digit_byte(unsigned char c) { return c >= '0' && c <= '9'; }

}  // namespace pagedchat::jinja::unicode
