// Tokenizer: a sentencepiece model (SentencePieceProcessor) plus the incremental detokenizer the
// engine streams with.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece { class SentencePieceProcessor; }

namespace pagedchat {

class Tokenizer {
 public:
  /// Loads a sentencepiece `.model` file. Throws std::runtime_error naming the file when it is
  /// missing or not a sentencepiece model.
  explicit Tokenizer(const std::string& model_path);
  /// Loads a serialized sentencepiece ModelProto (e.g. built from a GGUF vocabulary); `name`
  /// names its source in errors. Throws std::runtime_error when the proto is rejected.
  static std::unique_ptr<Tokenizer> from_serialized_proto(const std::string& proto, const std::string& name);
  ~Tokenizer();

  /// Token ids of `text`, with BOS prepended when `add_bos` (llama2.c/Llama models expect it).
  std::vector<int> encode(std::string_view text, bool add_bos = true) const;
  /// Text of `ids` (control tokens such as BOS/EOS decode to nothing; byte-fallback pieces to
  /// their bytes; an incomplete UTF-8 sequence at the end decodes to U+FFFD).
  std::string decode(const std::vector<int>& ids) const;
  /// The piece string of one id (e.g. "▁time", "<0x0A>"); for display and tests.
  std::string id_to_piece(int id) const;

  int vocab_size() const;
  int bos_id() const;
  int eos_id() const;
  const std::string& path() const { return path_; }

 private:
  Tokenizer() = default;
  std::string path_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

/// Turns a growing token sequence into text deltas that never split a UTF-8 character
/// (the prefix/read-offset scheme of vLLM's detokenizer_utils and Hugging Face TGI).
/// Usage: construct with the prompt ids, then call `add_token` per generated id; concatenating
/// every returned delta plus `flush()` equals decode(output ids) as continuation of the prompt.
class IncrementalDetokenizer {
 public:
  IncrementalDetokenizer(const Tokenizer& tokenizer, const std::vector<int>& prompt_ids);
  /// Appends one generated id; returns the newly complete text (may be empty while a multi-byte
  /// character is still incomplete).
  std::string add_token(int id);
  /// Returns text still held back (an incomplete sequence at the very end, as U+FFFD).
  std::string flush();
  /// All text emitted so far.
  const std::string& text() const { return text_; }

 private:
  const Tokenizer& tokenizer_;
  std::vector<int> ids_;   // prompt tail + output ids
  size_t prefix_offset_ = 0;
  size_t read_offset_ = 0;
  std::string text_;
};

}  // namespace pagedchat
