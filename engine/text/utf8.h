// UTF-8 helpers shared by the tokenizers and the streaming detokenizer (no Unicode tables here:
// character properties come from ICU, see engine/text/bpe/unicode.h).
//
// Invalid input is repaired the way the WHATWG Encoding Standard's UTF-8 decoder (and so
// TextDecoder, Python's errors="replace" and ICU) does it: each maximal subpart of an ill-formed
// sequence becomes one U+FFFD. That rule is streaming-safe: repairing a byte string piece by
// piece, holding back an incomplete tail, gives the same text as repairing it whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pagedchat::utf8 {

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  ///< U+FFFD

/// Length of the well-formed character at `s[i]` (1..4), or 0 when the bytes there do not start a
/// well-formed character. When the string ends inside a well-formed prefix of a character,
/// returns 0 and sets `*incomplete` (if given) to true.
std::size_t char_len(std::string_view s, std::size_t i, bool* incomplete = nullptr);

/// Length of the maximal subpart at `s[i]` (>= 1) for a position where char_len() is 0.
std::size_t maximal_subpart(std::string_view s, std::size_t i);

/// True when `s` is well-formed UTF-8.
bool is_valid(std::string_view s);

/// `s` with every maximal ill-formed subpart replaced by U+FFFD (valid input comes back as is).
std::string repair(std::string_view s);

/// The number of leading bytes of `s` that can be emitted now: every complete character and every
/// certainly-invalid subpart, but not a trailing well-formed prefix that more bytes could complete.
std::size_t stable_prefix(std::string_view s);

/// Decodes the well-formed character at s[i] (char_len(s, i) must be > 0).
char32_t decode(std::string_view s, std::size_t i, std::size_t len);
/// Appends code point `c` as UTF-8.
void append(std::string& out, char32_t c);

}  // namespace pagedchat::utf8
