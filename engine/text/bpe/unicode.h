// Unicode services for the BPE pipeline, all from ICU (no hand-written tables): normalization
// forms, lowercasing, and the character classes Hugging Face tokenizers' pre-tokenizers and
// normalizers test (Rust's char::is_whitespace, char::is_numeric, tokenizers' is_punc,
// unicode_normalization's is_combining_mark).
#pragma once

#include <string>
#include <string_view>

namespace pagedchat::bpe {

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };

/// `text` (valid UTF-8) in normalization form `form`. Throws std::runtime_error if ICU fails.
std::string normalize(std::string_view text, NormalForm form);
/// Full Unicode lowercase mapping, locale-independent (Rust str::to_lowercase, JS toLowerCase).
std::string lowercase(std::string_view text);
/// `text` in NFD without combining marks (HF StripAccents after NFD).
std::string strip_accents(std::string_view text);

bool is_whitespace(char32_t c);   ///< Unicode White_Space (Rust char::is_whitespace)
bool is_numeric(char32_t c);      ///< general category Nd, Nl or No (Rust char::is_numeric)
bool is_punctuation(char32_t c);  ///< ASCII punctuation or general category P* (HF is_punc)

}  // namespace pagedchat::bpe
