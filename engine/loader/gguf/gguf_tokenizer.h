// GGUF vocabularies: a "llama" (sentencepiece) vocabulary stored as tokenizer.ggml.* metadata
// becomes a sentencepiece ModelProto (SentencePieceTokenizer), a "gpt2" (byte-level BPE) one a
// BpeTokenizer with llama.cpp's pre-tokenizer for tokenizer.ggml.pre (gguf_bpe_pre.h); and a
// sentencepiece model becomes the same metadata for the GGUF writer.
//
// Format source: llama.cpp's gguf-py constants (tokenizer.ggml.model, .tokens, .scores,
// .token_type, .bos_token_id, .eos_token_id, .unknown_token_id, .padding_token_id,
// .add_bos_token, .add_space_prefix, .remove_extra_whitespaces, .merges, .pre, .eot_token_id,
// .eom_token_id, tokenizer.chat_template) and its llama-vocab.cpp (token types 1 normal,
// 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte — the values of sentencepiece's
// ModelProto.SentencePiece.Type; which types are matched in text and how each decodes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/text/bpe/bpe_tokenizer.h"
#include "engine/text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace pagedchat {

class GgufFile;

/// A sentencepiece vocabulary as GGUF stores it.
struct SpmVocab {
  std::vector<std::string> pieces;                      ///< token text, "▁" for spaces, "<0x0A>" for byte tokens
  std::vector<float> scores;                            ///< BPE merge priority (higher merges first); same size
  std::vector<int> types;                               ///< 1..6 as above; same size
  int unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;  ///< -1 = none
  bool add_bos = true;                                  ///< tokenizer.ggml.add_bos_token
  bool add_space_prefix = true;                         ///< sentencepiece's add_dummy_prefix
  bool remove_extra_whitespaces = false;
};

/// Reads tokenizer.ggml.* from `f`. tokenizer.ggml.model must be "llama" (others, e.g. "gpt2",
/// are refused by name); tokens are required, non-empty UTF-8; scores (float32) and token_type
/// (int32) are optional but must match the token count; special ids must lie inside the vocabulary
/// (a uint32 -1 means none). Throws std::runtime_error naming the file and the key.
SpmVocab read_gguf_vocab(const GgufFile& f);

/// The serialized sentencepiece ModelProto for `v`: BPE (llama.cpp's "llama" vocabularies merge by
/// score as sentencepiece BPE does), byte_fallback when byte tokens exist, the "identity"
/// normalizer with add_dummy_prefix = add_space_prefix and remove_extra_whitespaces as given
/// (llama.cpp never collapses whitespace unless the file says so).
std::string build_sentencepiece_proto(const SpmVocab& v);

/// The BPE tokenizer of a "gpt2" vocabulary: tokens (non-empty UTF-8), token_type (1..6; absent:
/// all normal), merges (required; "left right", both tokens of the vocabulary, and so is their
/// concatenation), pre (one of gguf_bpe_pre_names(); absent = "default"), special ids inside the
/// vocabulary (bos, eos, eot, eom, unk, pad), add_bos_token (absent: the pre type's default).
/// Only NORMAL tokens are the BPE model's: control (CONTROL, UNKNOWN) and USER_DEFINED tokens
/// are added tokens (llama.cpp's special-token partition), UNUSED and BYTE tokens decode to "".
/// tokenizer.ggml.model "gemma4" (Gemma 4) is BPE over SentencePiece-style text instead: spaces
/// become "▁", only newline runs split the text, BYTE tokens are the <0xAB> byte fallback, BOS
/// always added. Throws std::runtime_error naming the file and the key.
bpe::BpeConfig read_gguf_bpe(const GgufFile& f);

/// The engine tokenizer for `f`'s vocabulary: tokenizer.ggml.model "llama" -> sentencepiece
/// (read_gguf_vocab + build_sentencepiece_proto; add_bos_token, eot/eom ids, llama.cpp's
/// per-model strip attributes), "gpt2" and "gemma4" -> BPE (read_gguf_bpe); "bert", "t5", "rwkv", "none" and
/// unknown models are refused by name. std::runtime_error naming the file and the key.
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& f);

/// tokenizer.chat_template (Jinja text), or "" when absent; std::runtime_error when not UTF-8.
std::string read_gguf_chat_template(const GgufFile& f);

/// The vocabulary of a loaded sentencepiece model (IdToPiece, GetScore, IsUnknown/IsControl/
/// IsByte/IsUnused; user-defined pieces and the normalizer flags from its ModelProto). Throws
/// std::runtime_error when it is not a BPE model (GGUF "llama" vocabularies are BPE), naming `name`.
SpmVocab vocab_from_sentencepiece(const sentencepiece::SentencePieceProcessor& sp, const std::string& name);

}  // namespace pagedchat
