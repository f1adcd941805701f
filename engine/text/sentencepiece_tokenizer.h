// SentencePieceTokenizer: a sentencepiece model (libsentencepiece's SentencePieceProcessor), from a
// `.model` file or from a serialized ModelProto (GGUF "llama" vocabularies, see
// engine/loader/gguf/gguf_tokenizer.h).
//
// Encoding: the base class splits off control and user-defined pieces (sentencepiece itself
// never matches control pieces in text), then each segment is encoded by libsentencepiece — so
// every segment gets the dummy-prefix "▁" when the model adds one, as llama.cpp's SPM tokenizer
// (is_prev_special) and HF's Llama tokenizers (Prepend normalizer per segment) do.
// Decoding is done here, piece by piece, so that decode_bytes can give raw bytes: byte pieces
// ("<0xE5>") become their byte, "▁" a space, the leading space of the first visible piece is
// dropped when the model adds a dummy prefix (sentencepiece's Decode), control and unknown
// pieces give "" unless with_special, user-defined pieces their text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace pagedchat {

/// What a sentencepiece model does not say about itself (GGUF metadata supplies it).
struct SentencePieceOptions {
  bool add_bos = true;         ///< the add-BOS default (GGUF tokenizer.ggml.add_bos_token)
  std::vector<int> extra_eos;  ///< further end-of-generation ids (GGUF eot/eom), inside the vocabulary
  /// Per-token rstrip / lstrip attributes (llama.cpp sets them by model name, e.g. Phi-3):
  /// pairs of (id, lstrip, rstrip) applied to the matching added tokens.
  struct Strip {
    int id;
    bool lstrip;
    bool rstrip;
  };
  std::vector<Strip> strips;
};

class SentencePieceTokenizer final : public Tokenizer {
 public:
  /// Loads a sentencepiece `.model` file. Throws std::runtime_error naming the file when it is
  /// missing or not a sentencepiece model.
  static std::unique_ptr<SentencePieceTokenizer> load_file(const std::string& model_path);
  /// Loads a serialized ModelProto; `name` names its source in errors. Throws std::runtime_error
  /// when libsentencepiece rejects it.
  static std::unique_ptr<SentencePieceTokenizer> from_serialized_proto(const std::string& proto,
                                                                       const std::string& name,
                                                                       const SentencePieceOptions& options = {});
  ~SentencePieceTokenizer() override;

  std::string id_to_piece(int id) const override;
  std::string token_text(int id) const override;
  std::optional<int> piece_to_id(std::string_view piece) const override;
  bool is_control(int id) const override;
  int vocab_size() const override;
  std::string kind() const override { return "sentencepiece"; }
  /// The processor, for code that needs sentencepiece itself (the GGUF writer).
  const sentencepiece::SentencePieceProcessor& processor() const { return *sp_; }

 protected:
  void encode_normalized(std::string_view text, const Segment& seg, std::vector<int>& out) const override;
  std::string decode_bytes_impl(const std::vector<int>& ids, bool with_special) const override;

 private:
  SentencePieceTokenizer(std::string path, std::unique_ptr<sentencepiece::SentencePieceProcessor> sp,
                         const SentencePieceOptions& options);
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  enum class Kind : unsigned char { kNormal, kControl, kUnknown, kByte, kUserDefined, kUnused };
  std::vector<Kind> kinds_;
  std::vector<std::string> pieces_;
  bool strips_dummy_prefix_ = true;
};

}  // namespace pagedchat
