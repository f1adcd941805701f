// BpeTokenizer: a BPE vocabulary with its text pipeline — normalizer, pre-tokenizer, BpeModel,
// decoder — behind the Tokenizer interface. Byte-level vocabularies (GPT-2, Llama 3, Qwen: a
// ByteLevel pre-tokenizer and decoder) and sentencepiece-style ones (Metaspace or a Replace("▁")
// normalizer, byte_fallback; Llama 2, Mistral, Gemma as tokenizer.json) are the same code with a
// different pipeline. Built by the tokenizer.json loader (tokenizer_json.h) and the GGUF "gpt2"
// loader (engine/loader/gguf/gguf_tokenizer.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/text/bpe/bpe_model.h"
#include "engine/text/bpe/pipeline.h"
#include "engine/text/tokenizer.h"

namespace pagedchat::bpe {

/// How a token decodes and whether it is control (llama.cpp token types; HF added tokens).
enum class TokenAttr : unsigned char {
  kNormal,       ///< through the decoder
  kControl,      ///< "" unless with_special (then its text); HF special added tokens, GGUF CONTROL/UNKNOWN
  kUserDefined,  ///< its text verbatim; HF non-special added tokens, GGUF USER_DEFINED
  kUnused,       ///< "" (GGUF UNUSED / BYTE in a byte-level vocabulary; ids no one owns)
};

/// Everything a BpeTokenizer is made of.
struct BpeConfig {
  std::string path;                ///< names the source in errors and in Tokenizer::path()
  std::vector<std::string> vocab;  ///< the model's tokens by id ("" = an id the model does not own)
  /// Every id's vocabulary string, when it differs from `vocab` (GGUF: control and user-defined
  /// tokens are not the model's, but have a string); empty = `vocab` + the added tokens' contents.
  std::vector<std::string> pieces;
  std::vector<std::pair<std::string, std::string>> merges;  ///< in rank order
  std::string merges_where;                                 ///< names the merges in errors ("'file': model.merges")
  BpeModelOptions model;
  std::optional<Normalizer> normalizer;
  std::optional<PreTokenizer> pre_tokenizer;
  std::optional<Decoder> decoder;
  std::vector<AddedToken> added;  ///< split off before the model sees the text
  /// Per-id attributes (empty: added special tokens are control, other added tokens user-defined,
  /// the rest normal); sized to the vocabulary otherwise.
  std::vector<TokenAttr> attrs;
  int bos_id = -1;
  int eos_id = -1;
  bool add_bos = false;
  bool clean_spaces = false;  ///< clean_up_tokenization_spaces (reported, not applied)
  std::vector<int> eos_ids;   ///< further end-of-generation ids (eos_id is added first)
};

class BpeTokenizer final : public Tokenizer {
 public:
  /// Builds the tokenizer; throws std::runtime_error (from BpeModel) for merges that name tokens
  /// outside the vocabulary, and for special ids outside it.
  explicit BpeTokenizer(BpeConfig config);

  std::string id_to_piece(int id) const override;
  std::string token_text(int id) const override;
  std::optional<int> piece_to_id(std::string_view piece) const override;
  bool is_control(int id) const override;
  int vocab_size() const override { return int(pieces_.size()); }
  std::string kind() const override { return "bpe"; }
  const BpeModel& model() const { return model_; }

 protected:
  std::string normalize(std::string_view segment) const override;
  void encode_normalized(std::string_view text, const Segment& seg, std::vector<int>& out) const override;
  std::string decode_bytes_impl(const std::vector<int>& ids, bool with_special) const override;

 private:
  BpeModel model_;
  std::optional<Normalizer> normalizer_;
  std::optional<PreTokenizer> pre_tokenizer_;
  std::optional<Decoder> decoder_;
  std::vector<std::string> pieces_;  // id -> vocabulary string (model token or added content)
  std::vector<TokenAttr> attrs_;
};

}  // namespace pagedchat::bpe
