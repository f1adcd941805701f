#include "engine/text/bpe/unicode.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <stdexcept>

#include "engine/text/utf8.h"

namespace pagedchat::bpe {

namespace {
bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}
const icu::Normalizer2* instance(NormalForm form) {
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case NormalForm::kNFC:
      n = icu::Normalizer2::getNFCInstance(err);
      break;
    case NormalForm::kNFD:
      n = icu::Normalizer2::getNFDInstance(err);
      break;
    case NormalForm::kNFKC:
      n = icu::Normalizer2::getNFKCInstance(err);
      break;
    case NormalForm::kNFKD:
      n = icu::Normalizer2::getNFKDInstance(err);
      break;
  }
  if (U_FAILURE(err) || !n) throw std::runtime_error(std::string("ICU normalizer unavailable: ") + u_errorName(err));
  return n;
}
}  // namespace

std::string normalize(std::string_view text, NormalForm form) {
  if (is_ascii(text)) return std::string(text);  // ASCII is invariant under every form
  const icu::Normalizer2* n = instance(form);
  const icu::UnicodeString src = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), int32_t(text.size())));
  UErrorCode err = U_ZERO_ERROR;
  if (n->isNormalized(src, err) && U_SUCCESS(err)) return std::string(text);
  err = U_ZERO_ERROR;
  const icu::UnicodeString dst = n->normalize(src, err);
  if (U_FAILURE(err)) throw std::runtime_error(std::string("ICU normalization failed: ") + u_errorName(err));
  std::string out;
  dst.toUTF8String(out);
  return out;
}

std::string lowercase(std::string_view text) {
  if (is_ascii(text)) {
    std::string out(text);
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
  }
  icu::UnicodeString s = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), int32_t(text.size())));
  s.toLower(icu::Locale::getRoot());
  std::string out;
  s.toUTF8String(out);
  return out;
}

std::string strip_accents(std::string_view text) {
  const std::string nfd = normalize(text, NormalForm::kNFD);
  std::string out;
  out.reserve(nfd.size());
  for (std::size_t i = 0; i < nfd.size();) {
    const std::size_t n = std::max<std::size_t>(1, utf8::char_len(nfd, i));
    const char32_t c = n > 1 || static_cast<unsigned char>(nfd[i]) < 0x80 ? utf8::decode(nfd, i, n) : 0xFFFD;
    const int8_t cat = u_charType(UChar32(c));
    if (cat != U_NON_SPACING_MARK && cat != U_ENCLOSING_MARK && cat != U_COMBINING_SPACING_MARK) out.append(nfd, i, n);
    i += n;
  }
  return out;
}

bool is_whitespace(char32_t c) { return u_isUWhiteSpace(UChar32(c)); }

bool is_numeric(char32_t c) {
  const int8_t t = u_charType(UChar32(c));
  return t == U_DECIMAL_DIGIT_NUMBER || t == U_LETTER_NUMBER || t == U_OTHER_NUMBER;
}

bool is_punctuation(char32_t c) {
  if (c < 0x80)
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return u_ispunct(UChar32(c));
}

}  // namespace pagedchat::bpe
