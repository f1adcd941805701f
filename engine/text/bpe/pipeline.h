// The text pipeline around a BpeModel, as Hugging Face tokenizers defines it in tokenizer.json:
// normalizers, pre-tokenizers and decoders. The GGUF loader builds the same objects for llama.cpp's
// pre-tokenizer types. Semantics follow HF tokenizers (Rust) — normalizers/, pre_tokenizers/,
// decoders/, tokenizer/pattern.rs (SplitDelimiterBehavior) — and, where it documents them,
// transformers.js (@lenml/tokenizers 3.7.2), which the tests compare against.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/bpe/regex.h"
#include "engine/text/bpe/unicode.h"

namespace pagedchat::bpe {

/// A Split / Replace pattern: a literal string or a regular expression.
struct Pattern {
  std::string literal;                 ///< used when `regex` is null
  std::shared_ptr<const Regex> regex;  ///< PCRE2 (see regex.h)
  /// The matches of the pattern in `s`, as [begin, end) byte offsets, left to right.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view s) const;
};

/// What happens to the delimiters a Split finds (HF SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/// Normalizers: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Replace(pattern, content),
/// Prepend(prepend; not on empty text), Strip(strip_left, strip_right; Unicode whitespace), Sequence.
struct Normalizer {
  enum class Type { kNFC, kNFD, kNFKC, kNFKD, kLowercase, kStripAccents, kReplace, kPrepend, kStrip, kSequence };
  Type type = Type::kSequence;
  Pattern pattern;                   // Replace
  std::string content;               // Replace: the replacement; Prepend: the prefix
  bool left = false, right = false;  // Strip
  std::vector<Normalizer> children;  // Sequence
  std::string apply(std::string text) const;
};

/// Pre-tokenizers: Split(pattern, behavior, invert), ByteLevel(add_prefix_space, use_regex: the
/// GPT-2 expression, Isolated; then bytes -> GPT-2 characters), Metaspace(replacement,
/// prepend_scheme, split: on the replacement, MergedWithNext), Digits(individual_digits:
/// Isolated, else Contiguous, on Unicode numerics), Punctuation(behavior), Whitespace
/// (\w+|[^\w\s]+), WhitespaceSplit (on Unicode whitespace, removed), Sequence.
struct PreTokenizer {
  enum class Type { kSplit, kByteLevel, kMetaspace, kDigits, kPunctuation, kWhitespace, kWhitespaceSplit, kSequence };
  enum class Prepend { kAlways, kFirst, kNever };
  Type type = Type::kSequence;
  Pattern pattern;                                    // Split
  SplitBehavior behavior = SplitBehavior::kIsolated;  // Split, Punctuation
  bool invert = false;                                // Split
  bool add_prefix_space = false;                      // ByteLevel
  bool use_regex = true;                              // ByteLevel
  std::string replacement = "\xE2\x96\x81";           // Metaspace ("▁")
  Prepend prepend = Prepend::kAlways;                 // Metaspace
  bool split = true;                                  // Metaspace
  bool individual_digits = false;                     // Digits
  std::vector<PreTokenizer> children;                 // Sequence
  /// Splits each of `pieces` further (in place). `at_start`: the first piece begins the input.
  void apply(std::vector<std::string>& pieces, bool at_start) const;
};

/// Decoders, over the token strings of a sequence: ByteLevel (GPT-2 characters -> bytes; added
/// tokens are left alone, as transformers.js does), ByteFallback ("<0xAB>" -> the byte),
/// Fuse (join all), Strip(content, start, stop), Replace(pattern, content), Metaspace
/// (replacement -> ' ', leading space of the first token dropped unless prepend_scheme is never),
/// Sequence. The output strings are bytes (ByteLevel and ByteFallback may leave partial UTF-8).
struct Decoder {
  enum class Type { kByteLevel, kByteFallback, kFuse, kStrip, kReplace, kMetaspace, kSequence };
  Type type = Type::kSequence;
  Pattern pattern;                           // Replace
  std::string content;                       // Replace: replacement; Strip: the character stripped
  int start = 0, stop = 0;                   // Strip
  std::string replacement = "\xE2\x96\x81";  // Metaspace
  bool strip_first_space = true;             // Metaspace: prepend_scheme != never
  std::vector<Decoder> children;             // Sequence

  struct Token {
    std::string text;
    bool added = false;  ///< an added token (kept verbatim by ByteLevel)
  };
  /// Applies the decoder to `tokens`. `alone`: decoding one token for display (token_text), so
  /// the position-dependent steps (Strip, Metaspace's first-token space) are skipped.
  void apply(std::vector<Token>& tokens, bool alone) const;
};

/// Splits `s` by `matches` (sorted, non-overlapping byte ranges) the way HF's
/// NormalizedString::split does with `behavior` (and `invert`: the matches are the kept parts),
/// appending the non-empty pieces to `out`.
void split_by(std::string_view s, const std::vector<std::pair<std::size_t, std::size_t>>& matches,
              SplitBehavior behavior, bool invert, std::vector<std::string>& out);

/// The GPT-2 pre-tokenizer expression ByteLevel(use_regex) uses (HF pre_tokenizers/byte_level.rs).
extern const char* const kGpt2Pattern;

}  // namespace pagedchat::bpe
