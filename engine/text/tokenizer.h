// Tokenizer: the one interface the engine, the CLI and the app tokenize through, with two
// implementations — sentencepiece models (engine/text/sentencepiece_tokenizer.h) and BPE
// vocabularies, byte-level (GPT-2, Llama 3, Qwen) or sentencepiece-style (engine/text/bpe/) — and
// the streaming detokenizer. load_tokenizer() picks the implementation from the file.
//
// What the base class does for every implementation: it splits the input on added tokens (special
// and user-defined tokens; longest match at the leftmost position), honouring Hugging Face's
// lstrip / rstrip / single_word / normalized flags and llama.cpp's token attributes; control
// ("special") tokens are matched only where the caller allows it, non-special added tokens (e.g.
// Qwen's "<think>") always — as llama.cpp's llama_tokenize(parse_special=false) and HF
// tokenizers (split_special_tokens) do. The text between added tokens goes to the
// implementation's encoder, segment by segment. Decoding works on raw bytes (decode_bytes) and
// repairs UTF-8 once at the end (decode).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/templated_text.h"

namespace pagedchat {

namespace detail {
struct AddedTokenTrie;
}

/// A token the base class matches in the text before the model sees it: a Hugging Face added
/// token (tokenizer.json "added_tokens") or a GGUF token of type CONTROL / USER_DEFINED / UNKNOWN.
struct AddedToken {
  int id = -1;
  std::string content;       ///< the exact text matched (UTF-8, non-empty)
  bool special = false;      ///< a control token: matched only where special tokens are parsed
  bool lstrip = false;       ///< swallows the whitespace on its left (HF lstrip, llama.cpp LSTRIP)
  bool rstrip = false;       ///< swallows the whitespace on its right
  bool single_word = false;  ///< matched only when not inside a word (HF single_word)
  bool normalized = false;   ///< matched in the normalized text instead of the raw text (HF)
};

class Tokenizer {
 public:
  virtual ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  /// Token ids of plain `text`: special-token strings in it are tokenized as the characters they
  /// are, so it never yields a control token (non-special added tokens are still matched). BOS is
  /// prepended when `add_bos` and the vocabulary has one. Invalid UTF-8 in `text` is read as
  /// U+FFFD (one per maximal ill-formed subpart).
  std::vector<int> encode(std::string_view text, bool add_bos = false) const;
  /// Token ids of a prompt a chat template wrote: control tokens are matched only outside
  /// `t.data` (a control token string inside a message stays text); no BOS is added.
  std::vector<int> encode_templated(const TemplatedText& t) const;
  /// Token ids of `text` with control tokens matched anywhere (HF add_special_tokens=false
  /// encoding of text that contains special tokens; llama.cpp parse_special=true).
  std::vector<int> encode_with_special_tokens(std::string_view text, bool add_bos = false) const;

  /// Text of `ids`: control tokens give "" unless `with_special`; invalid or incomplete UTF-8 in
  /// the decoded bytes becomes U+FFFD. Throws std::out_of_range for an id outside the vocabulary.
  std::string decode(const std::vector<int>& ids, bool with_special = false) const;
  /// The raw bytes of `ids` (byte-level and byte-fallback tokens may yield partial UTF-8; no
  /// repair). Throws std::out_of_range for an id outside the vocabulary.
  std::string decode_bytes(const std::vector<int>& ids, bool with_special = false) const;

  /// The vocabulary string of `id` ("▁time", "Ġtime", "<0x0A>", "<|eot_id|>"); "" when out of range.
  virtual std::string id_to_piece(int id) const = 0;
  /// What `id` decodes to on its own, as bytes ("▁" -> " ", byte-level characters -> their bytes,
  /// "<0x0A>" -> "\n"; may be partial UTF-8); control tokens give their text. For logprobs.
  virtual std::string token_text(int id) const = 0;
  /// The id of vocabulary string `piece`, if there is one.
  virtual std::optional<int> piece_to_id(std::string_view piece) const = 0;
  /// True for control tokens (BOS, EOS, <|eot_id|>, ...; unknown tokens of sentencepiece and
  /// GGUF vocabularies too): skipped by decode unless with_special.
  virtual bool is_control(int id) const = 0;
  virtual int vocab_size() const = 0;
  int bos_id() const { return bos_id_; }  ///< -1 = none
  int eos_id() const { return eos_id_; }  ///< -1 = none
  /// The vocabulary's own add-BOS default: GGUF tokenizer.ggml.add_bos_token, else llama.cpp
  /// b4747's default for the vocabulary type / pre-tokenizer; tokenizer.json's TemplateProcessing,
  /// overridden by tokenizer_config.json add_bos_token; sentencepiece .model files: true.
  bool add_bos() const { return add_bos_; }
  /// Every end-of-generation id the vocabulary declares (GGUF tokenizer.ggml.eos/eot/eom_token_id;
  /// tokenizer_config.json eos_token), deduplicated, eos_id() first.
  std::vector<int> eos_ids() const { return eos_ids_; }
  /// Whether the vocabulary asks for Hugging Face's clean_up_tokenization_spaces on decode
  /// (tokenizer_config.json; GGUF: llama.cpp b4747's clean_spaces default for the pre-tokenizer
  /// type). decode() never applies it: it is lossy (" ," -> ","), so callers that want it do it.
  bool clean_up_tokenization_spaces() const { return clean_spaces_; }
  /// "sentencepiece" or "bpe".
  virtual std::string kind() const = 0;
  /// The file (or folder) the tokenizer came from.
  const std::string& path() const { return path_; }
  /// The tokens the base class splits out before the model sees the text.
  const std::vector<AddedToken>& added_tokens() const { return added_; }

 protected:
  explicit Tokenizer(std::string path);

  /// Where a segment of text between added tokens lies in the caller's input.
  struct Segment {
    bool at_start = false;  ///< the segment begins at byte 0 of the input (HF Metaspace "first")
  };
  /// The implementation's normalizer for one segment (identity by default).
  virtual std::string normalize(std::string_view segment) const { return std::string(segment); }
  /// Appends the ids of normalized, valid UTF-8 `text` (non-empty, no added token in it) to `out`.
  virtual void encode_normalized(std::string_view text, const Segment& seg, std::vector<int>& out) const = 0;
  /// The bytes of `ids` (all inside the vocabulary) in the implementation's decoding.
  virtual std::string decode_bytes_impl(const std::vector<int>& ids, bool with_special) const = 0;

  /// Installs the added tokens (ids must be inside the vocabulary; empty contents are ignored).
  void set_added_tokens(std::vector<AddedToken> tokens);
  /// The added token with this id, or null.
  const AddedToken* added_token(int id) const;

  std::string path_;
  int bos_id_ = -1;
  int eos_id_ = -1;
  bool add_bos_ = false;
  bool clean_spaces_ = false;
  std::vector<int> eos_ids_;

 private:
  /// Encodes `text`; a control token at [b, e) is matched when `allow(b, e)`.
  template <typename Allow>
  void encode_split(std::string_view text, Allow allow, std::vector<int>& out) const;
  void encode_segment(std::string_view raw, bool at_start, bool allow_special, std::vector<int>& out) const;

  std::vector<AddedToken> added_;
  std::vector<int> added_index_;  // id -> index in added_, or -1 (sized lazily to the largest id)
  std::shared_ptr<const detail::AddedTokenTrie> raw_matcher_, normalized_matcher_;
};

/// Loads the tokenizer at `path`: a sentencepiece `.model`, a GGUF file (vocabulary-only files
/// too; "llama" vocabularies through sentencepiece, "gpt2" through BPE), a Hugging Face
/// tokenizer.json (with the tokenizer_config.json beside it, if any), a Hugging Face folder
/// (tokenizer.json preferred, else tokenizer.model) or a llama2.c folder (tokenizer.model /
/// tok*.model). Throws std::runtime_error naming the file and what is wrong with it.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

/// Turns a growing token sequence into text deltas that never split a UTF-8 character. It works
/// on decode_bytes(): the new bytes of each token are held until they form complete characters,
/// so a Korean syllable or an emoji split over several byte-level tokens is never shown half and
/// no U+FFFD appears for a sequence that completes later; a byte sequence that can no longer
/// become valid becomes U+FFFD as soon as that is certain. A few tokens of left context (the
/// prompt's tail, then earlier output) are decoded with each token so that position-dependent
/// decoding (sentencepiece's leading space) matches the whole decode.
/// Usage: construct with the prompt ids, then call `add_token` per generated id; concatenating
/// every returned delta plus `flush()` equals decode(prompt + output ids) minus decode(prompt).
class IncrementalDetokenizer {
 public:
  IncrementalDetokenizer(const Tokenizer& tokenizer, const std::vector<int>& prompt_ids);
  /// Appends one generated id; returns the newly complete text (may be empty while a multi-byte
  /// character is still incomplete).
  std::string add_token(int id);
  /// Returns what is still held back (an incomplete sequence at the very end, as U+FFFD).
  std::string flush();
  /// All text emitted so far.
  const std::string& text() const { return text_; }

 private:
  const Tokenizer& tokenizer_;
  std::vector<int> context_;  // the last few ids (left context for the next decode)
  std::string pending_;       // decoded bytes not yet emitted
  std::string text_;
};

}  // namespace pagedchat
