// The vocabulary of a model as GGUF tokenizer.ggml.* metadata, for the GGUF writer: a
// sentencepiece vocabulary (tokenizer.ggml.model "llama"), or a byte-level BPE one ("gpt2":
// tokens, token_type, merges, pre, special ids), read back from wherever the tokenizer came from —
// a sentencepiece .model, a GGUF file, or a Hugging Face tokenizer.json folder.
//
// For a tokenizer.json the rules are those of llama.cpp b4747's convert_hf_to_gguf.py
// (Model.get_vocab_base, does_token_look_special, LlamaModel.set_vocab) and gguf-py's SpecialVocab,
// re-implemented from reading them: ids the vocabulary lacks become "[PADi]" UNUSED tokens up to
// the model's rows; an added token is CONTROL when it is special or looks special ("<|...|>",
// "<｜...｜>", "<pad>", "<mask>", "<2mass>", "[@BOS@]", "<unused...>"), else USER_DEFINED with "▁"
// written as " "; every other token NORMAL; merges as "left right"; special ids from
// tokenizer_config.json's {bos,eos,unk,sep,pad,cls,mask}_token looked up among the added tokens,
// then config.json's *_token_id for the ones still unset; add_bos_token / add_eos_token only when
// tokenizer_config.json says so. llama.cpp names the pre-tokenizer by hashing a tokenization
// (get_vocab_base_pre); here it is named from tokenizer.json's pre-tokenizer expression (see
// hf_bpe_pre_name), and one this code cannot name is refused.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

/// A byte-level BPE vocabulary as GGUF stores it (tokenizer.ggml.model "gpt2").
struct BpeVocab {
  std::vector<std::string> tokens;  ///< by id: byte-level strings ("Ġthe"), added tokens' text, "[PADi]"
  std::vector<int32_t> types;       ///< llama.cpp token types: 1 normal, 3 control, 4 user-defined, 5 unused
  std::vector<std::string> merges;  ///< "left right", in rank order
  std::string pre;                  ///< tokenizer.ggml.pre ("llama-bpe", "qwen2", ...)
  /// Further tokenizer.ggml.* keys (bos_token_id, eos_token_id, padding_token_id, add_bos_token,
  /// ...), written in this order as given.
  std::vector<std::pair<std::string, GgufValue>> extra;
};

/// The sentencepiece vocabulary of `tokenizer`, read from its source file (a sentencepiece .model
/// or a GGUF "llama" vocabulary) through sentencepiece's API. Throws std::runtime_error naming
/// the source for another kind of tokenizer or an unreadable file.
SpmVocab vocab_of(const Tokenizer& tokenizer);

/// Either kind of vocabulary.
using GgufVocab = std::variant<SpmVocab, BpeVocab>;

/// The vocabulary of `tokenizer`, read again from its source (tokenizer.path()): sentencepiece
/// .model -> SpmVocab (vocab_from_sentencepiece); GGUF "llama" -> SpmVocab, GGUF "gpt2" ->
/// bpe_vocab_from_gguf; tokenizer.json -> bpe_vocab_from_hf with `n_vocab` rows. Throws
/// std::runtime_error naming the source for anything else.
GgufVocab gguf_vocab_of(const Tokenizer& tokenizer, int n_vocab);

/// tokenizer.ggml.* of a "gpt2" GGUF file, kept as they are (tokens, token_type — all normal when
/// absent —, merges, pre — "default" when absent —, every *_token_id and add_*_token key).
/// Throws std::runtime_error naming the file and the key.
BpeVocab bpe_vocab_from_gguf(const GgufFile& f);

/// The GGUF vocabulary of a Hugging Face tokenizer.json (a byte-level BPE model) with the
/// tokenizer_config.json and config.json of its folder when present, padded to `n_vocab` ids (the
/// model's embedding rows, config.json vocab_size), by the rules in the header comment. Throws
/// std::runtime_error naming the file: not byte-level BPE (sentencepiece-style tokenizer.json:
/// convert from tokenizer.model), ids at or past n_vocab, a pre-tokenizer with no llama.cpp name.
BpeVocab bpe_vocab_from_hf(const std::string& tokenizer_json, int n_vocab);

/// llama.cpp's tokenizer.ggml.pre for a tokenizer.json pre-tokenizer: Split(Llama 3 expression)
/// + ByteLevel -> "llama-bpe" when the BPE model has ignore_merges, else "smaug-bpe";
/// Split(Qwen2 expression: single digits) + ByteLevel -> "qwen2"; ByteLevel(use_regex) alone ->
/// "gpt-2". "" for anything else. `pre_tokenizer_json` is the JSON text of the "pre_tokenizer" value.
std::string hf_bpe_pre_name(const std::string& pre_tokenizer_json, bool ignore_merges);

/// Writes `v` as tokenizer.ggml.* keys.
void put_gguf_vocab(GgufMetaWriter& meta, const GgufVocab& v);

/// Number of tokens of `v`.
std::size_t gguf_vocab_size(const GgufVocab& v);

}  // namespace pagedchat
